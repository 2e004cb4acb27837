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

// Package kubemox proves kubemox-migrate on the real-Crossplane stack
// (cluster/local/crossplane.sh): kubemox-shaped CRDs and objects of every
// kind with kubemox's finalizers, their guests in the simulator, then
// plan, export and apply as docs/guides/migration-from-kubemox.md tells a
// user, with the unhappy paths on the way (two guests of one name, a wrong
// password, kubemox's operator still running, apply SIGKILLed).
package kubemox
