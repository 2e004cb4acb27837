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
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

const pendingEndpoint = "GET /nodes/{node}/qemu/{vmid}/pending"

// When the connection's credential rotates, every VirtualMachine using it
// re-observes through the new client at once (well before its poll
// interval), and no request uses the old secret once the connection has
// picked the rotation up: the simulator revokes the old secret at the
// rotation, and counts what still presents it (accepted or refused).
func TestRotationReobservesEveryVM(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	const n = 5
	vmids := map[string]bool{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("rot-%d", i)
		hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: cloneSpec(name)})
	}
	for i := 0; i < n; i++ {
		vmids[strconv.Itoa(providertest.VMIDOf(t, hs.waitReady(t, ns, fmt.Sprintf("rot-%d", i))))] = true
	}
	ctx := context.Background()
	oldSecret, newSecret := currentSecret, currentSecret+"-rotated"
	oldFP, newFP := pvesim.CredentialFingerprint(oldSecret), pvesim.CredentialFingerprint(newSecret)

	// Let the creation's quick polls settle into the (long) poll interval.
	time.Sleep(notReadyPollSettle)
	hs.Sim.ResetCounters()
	start := time.Now()
	hs.Sim.AddToken(tokenID, newSecret) // the old secret stops working in PVE
	sec := &corev1.Secret{}
	if err := hs.Kube.Get(ctx, types.NamespacedName{Namespace: credNS, Name: credName}, sec); err != nil {
		t.Fatal(err)
	}
	sec.Data = nil
	sec.StringData = map[string]string{"token": newSecret}
	if err := hs.Kube.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	currentSecret = newSecret
	rv := sec.ResourceVersion
	waitConnection(t, func(pc *v1alpha1.ProxmoxConnection) bool {
		return pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			len(pc.Status.ObservedSecrets) > 0 && pc.Status.ObservedSecrets[0].ResourceVersion == rv
	})
	reconciled := time.Now()

	// Every VM reads its config with the new secret within a few seconds,
	// far less than the poll interval.
	deadline := time.Now().Add(poll / 2)
	for {
		seen := reobserved(hs.Sim.RequestLog(), newFP, vmids)
		if len(seen) == n {
			t.Logf("every VM re-observed with the new secret %s after the rotation", time.Since(start).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s only VMs %v of %v were read with the new secret", poll/2, seen, vmids)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	for _, r := range hs.Sim.RequestLog() {
		if r.Fingerprint == oldFP && r.Time.After(reconciled) {
			t.Errorf("%s %s used the old secret (refused: %v) %s after the connection picked up the rotation",
				r.Method, r.Path, r.Rejected, r.Time.Sub(reconciled).Round(time.Millisecond))
		}
	}
	for i := 0; i < n; i++ {
		hs.waitReady(t, ns, fmt.Sprintf("rot-%d", i))
	}
}

// reobserved lists the VMIDs of vmids that a request accepted with secret
// fingerprint fp named in its path.
func reobserved(log []pvesim.LoggedRequest, fp string, vmids map[string]bool) []string {
	seen := map[string]bool{}
	for _, r := range log {
		parts := strings.Split(strings.Trim(r.Path, "/"), "/")
		if r.Fingerprint != fp || r.Rejected || len(parts) < 4 || parts[2] != "qemu" || !vmids[parts[3]] {
			continue
		}
		seen[parts[3]] = true
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	return out
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
