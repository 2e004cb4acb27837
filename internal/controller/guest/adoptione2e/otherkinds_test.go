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

package adoptione2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// sideEffectRe matches the requests that make something in Proxmox VE
// other than a guest: a download, a snapshot, a certificate upload.
var sideEffectRe = regexp.MustCompile(`^POST /nodes/[^/]+/(storage/[^/]+/download-url|(qemu|lxc)/\d+/snapshot|certificates/custom)$`)

// sideEffects are the download, snapshot and upload requests the simulator
// logged.
func sideEffects() []string {
	var out []string
	for _, r := range sim.RequestLog() {
		if line := r.Method + " " + r.Path; sideEffectRe.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// otherKinds are the manifests of the kinds that are not guests: a
// download, a snapshot of an unmanaged guest, the node's certificate from a
// TLS Secret, and an import of a guest (fully managed, so the import's
// VirtualMachine marks it).
func otherKinds(ns, crt, key string, snapVMID, importVMID int) []client.Object {
	conn := v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}}
	snapID := int32(snapVMID) //nolint:gosec // a simulator VMID
	return []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}},
		&v1alpha1.StorageDownloadURL{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "iso"}, Spec: v1alpha1.StorageDownloadURLSpec{
			ResourceSpec: conn, DownloadParameters: v1alpha1.DownloadParameters{
				Content: "iso", Filename: ns + ".iso", Node: node, Storage: "local", URL: "https://cdimage.example/" + ns + ".iso",
			}}},
		&v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "snap"}, Spec: v1alpha1.VirtualMachineSnapshotSpec{
			ResourceSpec: conn, VMID: &snapID, NodeName: node, SnapshotName: "before-upgrade", Description: "kept across clusters",
		}},
		&v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cert"}, Spec: v1alpha1.CustomCertificateSpec{
			ResourceSpec: conn, NodeName: node, TLSSecretRef: &v1alpha1.SecretName{Name: "pve-tls"},
		}},
		&v1alpha1.GuestImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "import"}, Spec: v1alpha1.GuestImportSpec{
			ConnectionRef: &v1alpha1.ConnectionReference{Name: connName},
			Selector: v1alpha1.GuestSelector{
				VMIDRanges: []v1alpha1.VMIDRange{{From: int64(importVMID), To: int64(importVMID)}},
				Types:      []v1alpha1.ImportGuestType{v1alpha1.ImportGuestQEMU},
			},
			ManagementPolicies: xpv2.ManagementPolicies{xpv2.ManagementActionAll},
		}},
	}
}

// readyKinds reports whether the download, the snapshot and the
// certificate of ns are Ready and Synced in c.
func (c *cluster) readyKinds(ns string) bool {
	for _, o := range []struct {
		name string
		obj  interface {
			client.Object
			providertest.Conditioned
		}
	}{{"iso", &v1alpha1.StorageDownloadURL{}}, {"snap", &v1alpha1.VirtualMachineSnapshot{}}, {"cert", &v1alpha1.CustomCertificate{}}} {
		if err := c.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: o.name}, o.obj); err != nil || !providertest.ReadyAndSynced(o.obj) {
			return false
		}
	}
	return true
}

// importOf is the GuestImport of ns in c.
func (c *cluster) importOf(ns string) *v1alpha1.GuestImport {
	gi := &v1alpha1.GuestImport{}
	_ = c.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "import"}, gi)
	return gi
}

// TestRebuiltClusterKeepsOtherKinds applies the kinds that are not guests
// on a rebuilt management cluster: the download, the snapshot and the
// certificate the first cluster made are found (by file size and format,
// snapshot name, fingerprint) and nothing is downloaded, snapshotted or
// uploaded again; the import skips the guest the first cluster's import
// marked instead of importing it a second time.
func TestRebuiltClusterKeepsOtherKinds(t *testing.T) {
	first.require(t)
	ns := fmt.Sprintf("kinds-%d", time.Now().UnixNano()%1000000)
	snapVMID := providertest.FreeVMID(t, sim, 700)
	importVMID := snapVMID + 1
	for _, id := range []int{snapVMID, importVMID} {
		if err := sim.AddGuest(pvesim.GuestSeed{Node: node, VMID: id, Config: map[string]string{
			"name": fmt.Sprintf("%s-%d", ns, id), "memory": "512", "cores": "1", "scsi0": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=4G", id),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	crt, key := providertest.SelfSignedPair(t, node+".example")

	pa := first.start(t)
	for _, o := range otherKinds(ns, crt, key, snapVMID, importVMID) {
		if err := first.kube.Create(context.Background(), o); err != nil {
			t.Fatalf("create %s on the first cluster: %v", o.GetName(), err)
		}
	}
	pa.WaitFor(t, "download, snapshot and certificate Ready on the first cluster", wait, func() bool { return first.readyKinds(ns) })
	pa.WaitFor(t, "the imported guest marked by the first cluster", wait, func() bool {
		g, _ := sim.Guest(importVMID)
		return strings.Contains(g.Config["description"], "crossplane: "+ns+"/") && strings.Contains(g.Config["description"], "cluster="+first.id)
	})
	pa.Kill(t)
	if made := sideEffects(); len(made) != 3 {
		t.Fatalf("the first cluster sent %v, want one download, one snapshot and one upload", made)
	}

	sim.ResetCounters()
	pb := second.start(t)
	for _, o := range otherKinds(ns, crt, key, snapVMID, importVMID) {
		if err := second.kube.Create(context.Background(), o); err != nil {
			t.Fatalf("create %s on the second cluster: %v", o.GetName(), err)
		}
	}
	pb.WaitFor(t, "download, snapshot and certificate Ready on the second cluster", wait, func() bool { return second.readyKinds(ns) })
	pb.WaitFor(t, "the second cluster's import run", wait, func() bool { return second.importOf(ns).Status.LastRun != nil })
	time.Sleep(6 * time.Second) // a poll more: nothing may be sent late

	if made := sideEffects(); len(made) > 0 {
		t.Errorf("the rebuilt cluster sent %v, want no download, snapshot or upload", made)
	}
	gi := second.importOf(ns)
	if gi.Status.Skipped != 1 || gi.Status.Imported != 0 {
		t.Errorf("the import on the rebuilt cluster: %d imported, %d skipped (%+v), want the marked guest skipped", gi.Status.Imported, gi.Status.Skipped, gi.Status.Guests)
	}
	vms := &v1alpha1.VirtualMachineList{}
	if err := second.kube.List(context.Background(), vms, client.InNamespace(ns)); err != nil || len(vms.Items) > 0 {
		t.Errorf("the rebuilt cluster's import made VirtualMachines %v (%v)", vms.Items, err)
	}
	if _, configs := writes(); len(configs) > 0 {
		t.Errorf("the rebuilt cluster wrote guest configs %v, want none", configs)
	}
}
