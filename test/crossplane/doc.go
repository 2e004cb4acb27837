/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package crossplane runs the provider end to end on real Crossplane: core
// v2.4.0 and its RBAC manager on the local control plane
// (cluster/local/crossplane.sh), the provider's package pushed to a registry
// on loopback and installed with `crossplane xpkg install`, the provider
// binary running with exactly the permissions Crossplane grants its
// revision, function-patch-and-transform serving Compositions over mutual
// TLS, and the simulator standing in for Proxmox VE. The test walks a team
// through a claim and a namespaced XR: create, resize, rotate the token,
// delete.
package crossplane
