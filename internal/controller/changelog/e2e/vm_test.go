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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/changelog"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

const (
	create = changelogs.OperationType_OPERATION_TYPE_CREATE
	update = changelogs.OperationType_OPERATION_TYPE_UPDATE
	remove = changelogs.OperationType_OPERATION_TYPE_DELETE
)

// scratchVM is a VM made from scratch whose cloud-init password comes from
// the Secret ci (key pw), and whose connection details (that password
// among them) go to the Secret <name>-conn.
func scratchVM(ns, name string) *v1alpha1.VirtualMachine {
	return &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.VirtualMachineSpec{
		ResourceSpec: v1alpha1.ResourceSpec{
			ConnectionRef:                    &v1alpha1.ConnectionReference{Name: connName},
			WriteConnectionSecretToReference: &xpv2.LocalSecretReference{Name: name + "-conn"},
		},
		Name: name, NodeName: node,
		VMSpec: &v1alpha1.VirtualMachineScratchSpec{
			VirtualMachineHardware: v1alpha1.VirtualMachineHardware{Cores: 1, Socket: 1, Memory: 1024,
				Disk:    []v1alpha1.VirtualMachineDisk{{Storage: "local-lvm", Size: 8, Device: "scsi0"}},
				Network: []v1alpha1.VirtualMachineNetwork{{Model: "virtio", Bridge: "vmbr0"}}},
			CloudInitConfig: &v1alpha1.CloudInitConfig{User: "ops",
				PasswordFrom: &v1alpha1.OptionalSecretKeySelector{LocalSecretKeySelector: v1alpha1.LocalSecretKeySelector{Name: "ci", Key: "pw"}}},
		},
	}}
}

// A VirtualMachine created, changed and deleted makes one entry per change
// the managed reconciler makes, as crossplane-runtime formats them: kind,
// name, external name (the VMID; for the creation, which picks it, in the
// details), the operation, the resource as it was before the change, and
// for a configuration update the fields written.
// Neither the cloud-init password (a passwordFrom Secret, also published
// as a connection detail) nor the connection's token appears in any entry.
func TestVirtualMachineChangeLog(t *testing.T) {
	hs := require(t)
	ns := hs.Namespace(t, "cl-")
	ctx := context.Background()
	if err := hs.Kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ci"},
		StringData: map[string]string{"pw": cloudInitPassword}}); err != nil {
		t.Fatal(err)
	}
	vm := scratchVM(ns, "logged")
	if err := hs.Kube.Create(ctx, vm); err != nil {
		t.Fatal(err)
	}
	hs.WaitFor(t, vm, "Ready and Synced", wait, func() bool { return providertest.ReadyAndSynced(vm) })
	vmid := strconv.Itoa(providertest.VMIDOf(t, vm))

	creates := entriesOf(t, ns, vm.Name, create, 1)
	if len(creates) != 1 {
		t.Errorf("%d create entries, want 1: %v", len(creates), ops(service.of(v1alpha1.VirtualMachineKind, ns, vm.Name)))
	}
	// The create entry holds the resource as it was before the creation,
	// with no VMID yet; the VMID picked is in its additional details.
	checkEntry(t, creates[0], "")
	if got := creates[0].GetAdditionalDetails()[changelog.DetailExternalName]; got != vmid {
		t.Errorf("create entry: external name in the details %q, want the VMID %s", got, vmid)
	}

	// A spec change is written as one configuration update naming the
	// field.
	hs.WaitFor(t, vm, "updated", wait, func() bool {
		vm.Spec.VMSpec.Cores = 2
		return hs.Kube.Update(ctx, vm) == nil
	})
	configured := waitEntry(t, ns, vm.Name, "an update naming the changed fields", func(e *changelogs.ChangeLogEntry) bool {
		return e.GetOperation() == update && e.GetAdditionalDetails()[changelog.DetailFields] != ""
	})
	checkEntry(t, configured, vmid)
	if f := configured.GetAdditionalDetails()[changelog.DetailFields]; !strings.Contains(f, "cores") {
		t.Errorf("update entry names fields %q, want cores among them", f)
	}

	hs.DeleteAndWait(t, vm, wait)
	deletes := entriesOf(t, ns, vm.Name, remove, 1)
	checkEntry(t, deletes[0], vmid)

	for _, e := range service.all(t) {
		for _, secret := range []string{cloudInitPassword, tokenSecret} {
			if strings.Contains(e, secret) {
				t.Errorf("a change log entry holds a Secret's value: %.200s…", e)
			}
		}
	}
}

// checkEntry checks what every entry of the test's VM carries.
func checkEntry(t *testing.T, e *changelogs.ChangeLogEntry, vmid string) {
	t.Helper()
	if e.GetApiVersion() != v1alpha1.VirtualMachineGroupVersionKind.GroupVersion().String() || e.GetKind() != v1alpha1.VirtualMachineKind {
		t.Errorf("%s entry: apiVersion %q kind %q", e.GetOperation(), e.GetApiVersion(), e.GetKind())
	}
	if e.GetExternalName() != vmid {
		t.Errorf("%s entry: external name %q, want the VMID %s", e.GetOperation(), e.GetExternalName(), vmid)
	}
	if !strings.HasPrefix(e.GetProvider(), "provider-proxmox:") || e.GetTimestamp() == nil || e.GetErrorMessage() != "" {
		t.Errorf("%s entry: provider %q, timestamp %v, error %q", e.GetOperation(), e.GetProvider(), e.GetTimestamp(), e.GetErrorMessage())
	}
}

// entriesOf waits for at least n entries of op about the VM ns/name.
func entriesOf(t *testing.T, ns, name string, op changelogs.OperationType, n int) []*changelogs.ChangeLogEntry {
	t.Helper()
	var got []*changelogs.ChangeLogEntry
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		got = slices.DeleteFunc(service.of(v1alpha1.VirtualMachineKind, ns, name), func(e *changelogs.ChangeLogEntry) bool { return e.GetOperation() != op })
		return len(got) >= n
	}, func() string {
		return "no " + op.String() + " entry for " + ns + "/" + name + "; entries: " + opsString(service.of(v1alpha1.VirtualMachineKind, ns, name))
	})
	return got
}

// waitEntry waits for an entry about the VM ns/name that matches.
func waitEntry(t *testing.T, ns, name, what string, match func(*changelogs.ChangeLogEntry) bool) *changelogs.ChangeLogEntry {
	t.Helper()
	var found *changelogs.ChangeLogEntry
	providertest.Eventually(t, wait, 250*time.Millisecond, func() bool {
		i := slices.IndexFunc(service.of(v1alpha1.VirtualMachineKind, ns, name), match)
		if i >= 0 {
			found = service.of(v1alpha1.VirtualMachineKind, ns, name)[i]
		}
		return found != nil
	}, func() string {
		return "no entry " + what + " for " + ns + "/" + name + "; entries: " + opsString(service.of(v1alpha1.VirtualMachineKind, ns, name))
	})
	return found
}

func opsString(entries []*changelogs.ChangeLogEntry) string {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.GetOperation().String() + meta.AnnotationKeyExternalName + "=" + e.GetExternalName() + " " + mapString(e.GetAdditionalDetails()) + "; ")
	}
	return b.String()
}

func mapString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k+"="+m[k])
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}
