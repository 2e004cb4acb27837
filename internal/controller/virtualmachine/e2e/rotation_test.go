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

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const pendingEndpoint = "GET /nodes/{node}/qemu/{vmid}/pending"

// When the connection's credential rotates, every VirtualMachine using it
// re-observes through the new client at once (well before its poll
// interval), and no request uses the old secret afterwards.
func TestRotationReobservesEveryVM(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	const n = 5
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("rot-%d", i)
		hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: cloneSpec(name)})
	}
	for i := 0; i < n; i++ {
		hs.waitReady(t, ns, fmt.Sprintf("rot-%d", i))
	}
	ctx := context.Background()
	oldFP, newFP := pvesim.CredentialFingerprint(currentSecret), pvesim.CredentialFingerprint(currentSecret+"-rotated")

	// Let the creation's quick polls settle into the (long) poll interval.
	time.Sleep(notReadyPollSettle)
	hs.Sim.ResetCounters()
	start := time.Now()
	hs.Sim.AddToken(tokenID, currentSecret+"-rotated") // the old secret stops working in PVE
	sec := &corev1.Secret{}
	if err := hs.Kube.Get(ctx, types.NamespacedName{Namespace: credNS, Name: credName}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = nil
	sec.StringData = map[string]string{"token": currentSecret + "-rotated"}
	if err := hs.Kube.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	currentSecret += "-rotated"
	rv := sec.ResourceVersion
	waitConnection(t, func(pc *v1alpha1.ProxmoxConnection) bool {
		return pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			len(pc.Status.ObservedSecrets) > 0 && pc.Status.ObservedSecrets[0].ResourceVersion == rv
	})
	rotated := hs.Sim.Counters().ByCredentialSecret[oldFP]

	// Every VM reads its config with the new secret within a few seconds,
	// far less than the poll interval.
	deadline := time.Now().Add(poll / 2)
	for {
		c := hs.Sim.Counters()
		if c.ByEndpoint[pendingEndpoint] >= n && c.ByCredentialSecret[newFP] >= n {
			t.Logf("%d config reads (%d requests with the new secret) %s after the rotation", c.ByEndpoint[pendingEndpoint], c.ByCredentialSecret[newFP], time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s only %d config reads, %d requests with the new secret; want >= %d each", poll/2, c.ByEndpoint[pendingEndpoint], c.ByCredentialSecret[newFP], n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	if after := hs.Sim.Counters().ByCredentialSecret[oldFP]; after != rotated {
		t.Errorf("%d requests used the old secret after the connection picked up the rotation", after-rotated)
	}
	for i := 0; i < n; i++ {
		hs.waitReady(t, ns, fmt.Sprintf("rot-%d", i))
	}
}

// notReadyPollSettle lets resources that just became Ready drop to the
// long poll interval.
const notReadyPollSettle = 4 * time.Second

func waitConnection(t *testing.T, cond func(*v1alpha1.ProxmoxConnection) bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		pc := &v1alpha1.ProxmoxConnection{}
		if err := h.Kube.Get(context.Background(), types.NamespacedName{Name: connName}, pc); err == nil && cond(pc) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %s did not pick up the rotation after %s", connName, wait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
