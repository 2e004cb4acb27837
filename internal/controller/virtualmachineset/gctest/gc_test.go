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

// Package gctest runs a VirtualMachineSet on a control plane with a garbage
// collector: deleting the set deletes its VMs, and their guests; orphaning
// keeps them.
package gctest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	wait         = 120 * time.Second
	node         = "pve"
	templateName = "debian-12"
	connName     = "gc"
	tokenID      = "root@pam!gc"
	secret       = "gc-secret-canary"
)

var (
	env *testenv.Env
	h   *providertest.Harness
)

func TestMain(m *testing.M) {
	o := providertest.Options{
		Provider:         provider.Options{PollInterval: 10 * time.Second, MaxReconcileRate: 10, EnableManagementPolicies: true},
		Sim:              pvesim.Options{Nodes: []string{node}},
		GarbageCollector: true,
	}
	os.Exit(providertest.Main(m, "virtualmachineset gc", &env, o, func(ctx context.Context, p *providertest.Harness) error {
		p.Sim.AddToken(tokenID, secret)
		if err := p.Sim.AddTemplate(node, 9000, templateName); err != nil {
			return err
		}
		if err := p.CreateTokenConnection(ctx, connName, tokenID, "kube-system", "gc-token", secret); err != nil {
			return err
		}
		h = p
		return nil
	}, nil))
}

func TestDeletingTheSet(t *testing.T) {
	env.Require(t)
	cases := map[string]struct {
		reason   string
		orphan   bool
		wantKept bool
	}{
		"Cascade": {reason: "Background propagation deletes the VMs, and with them their guests."},
		"Orphan":  {reason: "--cascade=orphan keeps the VMs and their guests.", orphan: true, wantKept: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := h.Namespace(t, "gc-")
			set := &v1alpha1.VirtualMachineSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}, Spec: v1alpha1.VirtualMachineSetSpec{
				Replicas: 2, NodeName: node, ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
				Template: v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 512}},
			}}
			if err := h.Kube.Create(ctx, set); err != nil {
				t.Fatal(err)
			}
			vmids := make([]int, 0, 2)
			for i := range 2 {
				vm := waitReady(t, ns, "web-"+strconv.Itoa(i))
				vmid, _ := strconv.Atoi(meta.GetExternalName(vm))
				vmids = append(vmids, vmid)
			}
			policy := metav1.DeletePropagationBackground
			if tc.orphan {
				policy = metav1.DeletePropagationOrphan
			}
			if err := h.Kube.Delete(ctx, set, client.PropagationPolicy(policy)); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(wait)
			for i, vmid := range vmids {
				name := "web-" + strconv.Itoa(i)
				for {
					vm := &v1alpha1.VirtualMachine{}
					err := h.Kube.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, vm)
					_, guestExists := h.Sim.Guest(vmid)
					gone := kerrors.IsNotFound(err) && !guestExists
					kept := err == nil && !meta.WasDeleted(vm) && guestExists && len(vm.OwnerReferences) == 0
					if (tc.wantKept && kept) || (!tc.wantKept && gone) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s\n%s: resource err %v, guest %d exists %v", tc.reason, name, err, vmid, guestExists)
					}
					time.Sleep(250 * time.Millisecond)
				}
			}
		})
	}
}

func waitReady(t *testing.T, ns, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		vm := &v1alpha1.VirtualMachine{}
		err := h.Kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, vm)
		if err == nil && vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			return vm
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not Ready: %v %+v", name, err, vm.Status.Conditions)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
