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

// Package controller registers every controller of provider-proxmox with a
// manager.
package controller

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/connection"
	"github.com/kubemox/provider-proxmox/internal/controller/virtualmachine"
)

// Setup adds every controller to mgr. They share clients: the
// ProxmoxConnection controller fills it, managed-resource controllers take
// their Proxmox VE client from it.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	for _, setup := range []func(ctrl.Manager, controller.Options, *pve.Cache) error{
		connection.Setup,
		virtualmachine.Setup,
	} {
		if err := setup(mgr, o, clients); err != nil {
			return err
		}
	}
	return nil
}
