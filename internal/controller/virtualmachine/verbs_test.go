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

package virtualmachine

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// ownedVMID is where the verb tables seed the resource's guest.
const ownedVMID = 700

// verbWant is what one verb must leave behind.
type verbWant struct {
	// err is our own error the verb returns, compared with errors.Is; nil
	// (with pveText "") means no error.
	err error
	// pveText is part of Proxmox VE's own message the error must carry.
	pveText string
	// secret must appear in no error and no event message.
	secret string
	// events must all be recorded; noEvents must not.
	events, noEvents []string
	// ready is the Ready condition's status ("" = not checked), readyMsg a
	// substring of its message.
	ready    corev1.ConditionStatus
	readyMsg string
	// pve checks the simulator (and the resource) afterwards.
	pve func(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine)
}

func (w verbWant) check(t *testing.T, reason string, f *fixture, cr *v1alpha1.VirtualMachine, err error) {
	t.Helper()
	guesttest.Want{Reason: reason, Err: w.err, PVEText: w.pveText, Events: w.events, NoEvents: w.noEvents, Secret: w.secret,
		Ready: w.ready, ReadyMsg: w.readyMsg}.Check(t, f.log, cr, err)
	if w.pve != nil {
		w.pve(t, f, cr)
	}
}

// owned stores cloneVM(name) as a resource we created, Ready and in sync,
// and seeds its guest at ownedVMID matching the spec and carrying its
// marker; cfg overrides the guest's config ("" removes a key).
func owned(t *testing.T, f *fixture, name string, running bool, cfg map[string]string) *v1alpha1.VirtualMachine {
	t.Helper()
	cr := cloneVM(name)
	return ownedAs(t, f, cr, running, cfg)
}

func ownedAs(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine, running bool, cfg map[string]string) *v1alpha1.VirtualMachine {
	t.Helper()
	meta.SetExternalName(cr, strconv.Itoa(ownedVMID))
	meta.SetExternalCreateSucceeded(cr, time.Now())
	f.store(t, cr, true)
	cr.Status.VMID = ownedVMID
	cr.SetConditions(xpv2.Available().WithObservedGeneration(1), xpv2.ReconcileSuccess().WithObservedGeneration(1))
	base := map[string]string{
		"name": cr.Spec.Name, "cores": "4", "sockets": "1", "memory": "4096", "scsi0": "local-lvm:20",
		"net0": "virtio,bridge=vmbr0", "description": guest.MarkerOf(cr).String(),
	}
	guesttest.Seed(t, f.sim, pvesim.GuestSeed{Kind: "qemu", Node: testNode, VMID: ownedVMID, Config: base, Running: running}, cfg)
	return cr
}

// guest returns the simulator's guest at vmid, failing the test without it.
func (f *fixture) guest(t *testing.T, vmid int) pvesim.GuestView {
	t.Helper()
	return guesttest.Guest(t, f.sim, vmid)
}

// storedExternalName is the external name in the (fake) API server.
func (f *fixture) storedExternalName(t *testing.T, cr *v1alpha1.VirtualMachine) string {
	t.Helper()
	return guesttest.StoredExternalName(t, f.kube, cr)
}

func faultOn(method, pattern, message string) pvesim.Faults {
	return pvesim.Faults{Rules: []pvesim.FaultRule{{Method: method, PathPattern: pattern, ErrorRate: 1, Message: message}}}
}

// onlyTemplate checks nothing but the template exists.
func onlyTemplate(t *testing.T, f *fixture, _ *v1alpha1.VirtualMachine) {
	t.Helper()
	if n := len(f.sim.Guests()); n != 1 {
		t.Errorf("guests = %d, want the template only", n)
	}
}

// observed is what the Update and Delete tables need of the Observe before
// the verb, as one reconcile runs it.
type observed struct {
	Exists, UpToDate bool
	Err              error
}

// writes lists the requests other than reads PVE received.
func writes(f *fixture) []string {
	var out []string
	for ep, n := range f.sim.Counters().ByEndpoint {
		if !strings.HasPrefix(ep, "GET ") {
			out = append(out, ep+"="+strconv.Itoa(n))
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// eventually polls cond for a while; PVE's own follow-up tasks (the start
// after a reboot) run after the verb returned.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Errorf("not %s after 20s", what)
	}
}
