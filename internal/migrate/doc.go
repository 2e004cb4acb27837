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

// Package migrate moves a cluster from kubemox v0.6.6 to provider-proxmox
// without touching a guest: it reads every kubemox object, resolves each
// guest's VMID through its connection (plan), writes our manifests in
// Observe mode (export), and swaps the CRDs in the only safe order (apply).
// cmd/kubemox-migrate is its command line.
package migrate
