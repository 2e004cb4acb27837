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

package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const (
	vmNode       = "pve"
	templateID   = 9000
	templateName = "debian-12"
	vmNamespace  = "memcheck"
	// connectionName is the ProxmoxConnection createConnection makes.
	connectionName = "memcheck"
	// vmWait bounds the convergence of all VMs on a busy 2-core machine.
	vmWait = 20 * time.Minute
)

// createVMs clones n VirtualMachines from a simulator template, each
// writing its connection details to a Secret, and waits until every one is
// Ready and Synced and every Secret exists.
func createVMs(ctx context.Context, kube client.Client, sim *pvesim.Server, n int) error {
	if err := sim.AddTemplate(vmNode, templateID, templateName); err != nil {
		return errors.Wrap(err, "cannot add the template")
	}
	for i := range n {
		if err := kube.Create(ctx, cloneVM(i)); err != nil {
			return errors.Wrapf(err, "cannot create VirtualMachine %d", i)
		}
	}
	deadline := time.Now().Add(vmWait)
	last := ""
	for {
		ready, secrets, err := countConverged(ctx, kube)
		if err != nil {
			return err
		}
		if ready == n && secrets >= n {
			return checkDetails(ctx, kube, cloneVM(0).Name+"-conn")
		}
		if progress := fmt.Sprintf("%d/%d Ready, %d connection Secrets", ready, n, secrets); progress != last {
			fmt.Printf("  %s\n", progress)
			last = progress
		}
		if time.Now().After(deadline) {
			return errors.Errorf("after %s: %s", vmWait, last)
		}
		time.Sleep(2 * time.Second)
	}
}

func cloneVM(i int) *v1alpha1.VirtualMachine {
	name := fmt.Sprintf("vm-%04d", i)
	return &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: vmNamespace, Name: name},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{
				ConnectionRef:                    &v1alpha1.ConnectionReference{Name: connectionName},
				WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: name + "-conn"},
			},
			Name: name, NodeName: vmNode,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{
				Cores: 2, Socket: 1, Memory: 2048,
			}},
		},
	}
}

// countConverged counts Ready and Synced VMs and their connection Secrets
// (a full list from this program's own client, before the big Secrets
// exist; the provider's requests are the ones recorded).
func countConverged(ctx context.Context, kube client.Client) (ready, secrets int, err error) {
	vms := &v1alpha1.VirtualMachineList{}
	if err := kube.List(ctx, vms, client.InNamespace(vmNamespace)); err != nil {
		return 0, 0, err
	}
	for i := range vms.Items {
		vm := &vms.Items[i]
		if vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionTrue {
			ready++
		}
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := kube.List(ctx, l, client.InNamespace(vmNamespace)); err != nil {
		return 0, 0, err
	}
	for _, s := range l.Items {
		if len(s.Name) > 5 && s.Name[len(s.Name)-5:] == "-conn" {
			secrets++
		}
	}
	return ready, secrets, nil
}

// checkDetails makes sure a connection Secret carries the VM's details, so
// the measurement includes real publishing, not empty Secrets.
func checkDetails(ctx context.Context, kube client.Client, name string) error {
	s := &corev1.Secret{}
	if err := kube.Get(ctx, client.ObjectKey{Namespace: vmNamespace, Name: name}, s); err != nil {
		return errors.Wrapf(err, "cannot read connection Secret %s", name)
	}
	for _, k := range []string{"vmid", "node", "name"} {
		if len(s.Data[k]) == 0 {
			return errors.Errorf("connection Secret %s has no %q", name, k)
		}
	}
	return nil
}
