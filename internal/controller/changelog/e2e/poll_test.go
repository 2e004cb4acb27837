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
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pxmetrics "github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// A VirtualMachine annotated crossplane.io/poll-interval: 5s is checked
// about every 5s although the provider polls every 20s: the next checks
// proxmox_next_check_seconds records for VirtualMachines fall between the
// 3s of a resource with work under way and the 18s to 22s of the provider's
// interval with 10% jitter, its status.nextCheckTime is seconds ahead, and
// drift made in Proxmox VE is corrected within seconds.
func TestPollIntervalAnnotation(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "poll-")
	vm := &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "often",
		Annotations: map[string]string{meta.AnnotationKeyPollInterval: "5s"}},
		Spec: v1alpha1.VirtualMachineSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			Name:         "often", NodeName: node,
			Template: &v1alpha1.VirtualMachineCloneSpec{Name: templateName, VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Memory: 1024}},
		}}
	if err := hs.Kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
	hs.WaitFor(t, vm, "Ready and Synced", wait, func() bool { return providertest.ReadyAndSynced(vm) })

	before := checksBetween(t, v1alpha1.VirtualMachineKind, 3, 10)
	time.Sleep(16 * time.Second)
	if n := checksBetween(t, v1alpha1.VirtualMachineKind, 3, 10) - before; n < 2 {
		t.Errorf("%d VirtualMachine checks scheduled 3s to 10s ahead over 16s, want at least 2 (every 5s)", n)
	}

	// status.nextCheckTime (kubectl get -o wide: NEXT-CHECK) says so.
	if err := hs.Kube.Get(context.Background(), client.ObjectKeyFromObject(vm), vm); err != nil {
		t.Fatal(err)
	}
	if next := vm.Status.NextCheckTime; next == nil || time.Until(next.Time) > 6*time.Second {
		t.Errorf("status.nextCheckTime %v, want within 6s of now (%s)", next, time.Now().Format(time.RFC3339))
	}

	vmid := providertest.VMIDOf(t, vm)
	if err := hs.Sim.SetGuestConfig(vmid, "cores", "3"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	providertest.Eventually(t, 12*time.Second, 250*time.Millisecond, func() bool {
		g, _ := hs.Sim.Guest(vmid)
		return g.Config["cores"] == "1"
	}, func() string { return "drift not corrected within 12s, under the provider's 20s poll" })
	t.Logf("drift corrected after %s", time.Since(start).Round(time.Second))
}

// checksBetween is how many next checks of kind were scheduled more than lo
// and at most hi seconds ahead (proxmox_next_check_seconds; lo and hi are
// bucket bounds).
func checksBetween(t *testing.T, kind string, lo, hi float64) uint64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != pxmetrics.NextCheckSeconds {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelOf(m, pxmetrics.LabelKind) == kind {
				return cumulative(t, m, hi) - cumulative(t, m, lo)
			}
		}
	}
	return 0
}

func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func cumulative(t *testing.T, m *dto.Metric, le float64) uint64 {
	t.Helper()
	for _, b := range m.GetHistogram().GetBucket() {
		if b.GetUpperBound() == le {
			return b.GetCumulativeCount()
		}
	}
	t.Fatalf("no bucket with upper bound %v", le)
	return 0
}
