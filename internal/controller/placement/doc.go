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

// Package placement picks the node a new guest is created on when its spec
// names allowed nodes rather than one: the VirtualMachine and Container
// controllers for one guest, the VirtualMachineSet controller for each new
// replica, spread across the nodes.
//
// A node is eligible when it is allowed, PVE lists it online in
// /cluster/resources, and the guest's template can be cloned there: the
// template is on that node, or PVE's clone may target it (a cross-node
// clone needs shared storage, qemu-server src/PVE/API2/Qemu.pm clone_vm and
// pve-container src/PVE/API2/LXC.pm clone_vm). Among the eligible nodes the
// one with the most free memory (maxmem - mem) wins; with a spread, the
// ones holding the fewest of the set's VMs come first. The decision is made
// once, before anything is created; the figures changing later move
// nothing.
package placement
