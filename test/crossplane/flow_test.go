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

package crossplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// What the examples in examples/composition ask for.
const (
	claimNS     = "team-a"
	claimName   = "dev-vm"
	claimSecret = "dev-vm-connection"
	claimNode   = "lowtower"
	xrNS        = "team-b"
	xrName      = "build-vm"
	xrSecret    = "build-vm-connection"
	xrNode      = "pve"
	// connName is the connection both Compositions use by default.
	connName = "default"
)

// The simulator's token and what rotating it brings.
const (
	credNS    = "kubemox"
	credName  = "proxmox-credentials"
	tokenID   = "root@pam!kubemox"
	tokenKey  = providertest.TokenSecretKey
	rotatedID = "root@pam!kubemox-rotated"
	// rotatedKey holds the new token's secret beside the old one, so the
	// connection switches token ID and secret in one update.
	rotatedKey    = "token-rotated"
	firstSecret   = "first-token-secret"
	rotatedSecret = "rotated-token-secret"
)

var (
	exampleDir = filepath.Join("..", "..", "examples", "composition")
	xrdGVK     = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1", Kind: "CompositeResourceDefinition"}
	claimGVK   = schema.GroupVersionKind{Group: "compute.example.org", Version: "v1alpha1", Kind: "VirtualMachineClaim"}
	claimXRGVK = schema.GroupVersionKind{Group: "compute.example.org", Version: "v1alpha1", Kind: "XVirtualMachine"}
	xrGVK      = schema.GroupVersionKind{Group: "compute.example.org", Version: "v1alpha1", Kind: "VirtualServer"}
)

// size is what the Compositions' sizes mean in Proxmox VE.
type size struct {
	name                   string
	sockets, cores, memory string
}

var (
	small  = size{name: "small", sockets: "1", cores: "2", memory: "2048"}
	medium = size{name: "medium", sockets: "1", cores: "4", memory: "8192"}
	large  = size{name: "large", sockets: "2", cores: "4", memory: "16384"}
)

// flow is the story a team lives through, phase after phase.
type flow struct {
	*suite
	// claimVM and xrVM are what the Compositions made, and their VMIDs.
	claimVM, xrVM     *v1alpha1.VirtualMachine
	claimVMID, xrVMID int
	// oldTokenUses counts requests with the first token once the connection
	// had switched to the rotated one.
	oldTokenUses int
}

func (f *flow) connectionReady(t *testing.T) {
	h := &providertest.Harness{Kube: f.kube, Sim: f.sim}
	if err := h.CreateTokenConnection(context.Background(), connName, tokenID, credNS, credName, firstSecret); err != nil {
		t.Fatal(err)
	}
	f.waitConnection(t, func(*v1alpha1.ProxmoxConnection) bool { return true })
}

// waitConnection waits until the connection is Ready for its current spec
// and cond holds.
func (f *flow) waitConnection(t *testing.T, cond func(*v1alpha1.ProxmoxConnection) bool) *v1alpha1.ProxmoxConnection {
	t.Helper()
	pc := &v1alpha1.ProxmoxConnection{}
	f.eventually(t, flowWait, "ProxmoxConnection "+connName+" Ready", func() (bool, string) {
		if err := f.kube.Get(context.Background(), types.NamespacedName{Name: connName}, pc); err != nil {
			return false, err.Error()
		}
		c := pc.Status.GetCondition(xpv2.TypeReady)
		return c.Status == corev1.ConditionTrue && c.ObservedGeneration == pc.Generation && cond(pc), fmt.Sprintf("%+v", pc.Status)
	})
	return pc
}

func (f *flow) claimReady(t *testing.T) {
	f.applyFile(t, filepath.Join(exampleDir, "claim", "definition.yaml"))
	f.applyFile(t, filepath.Join(exampleDir, "claim", "composition.yaml"))
	xrd := object(xrdGVK, "", "xvirtualmachines.compute.example.org")
	f.waitCondition(t, setupWait, xrd, "Established")
	f.waitCondition(t, setupWait, xrd, "Offered")

	f.applyFile(t, filepath.Join(exampleDir, "claim", "claim.yaml"))
	f.waitCondition(t, flowWait, object(claimGVK, claimNS, claimName), "Ready")
	f.claimVM = f.readyVM(t, claimNS, claimName)
	f.claimVMID = int(f.claimVM.Status.VMID)
	f.waitGuest(t, f.claimVMID, small)
	f.waitConnectionSecret(t, claimSecret, f.claimVM, claimNode)
}

// readyVM is a composed VirtualMachine, once Ready with a VMID.
func (f *flow) readyVM(t *testing.T, ns, name string) *v1alpha1.VirtualMachine {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{}
	f.eventually(t, flowWait, fmt.Sprintf("VirtualMachine %s/%s Ready", ns, name), func() (bool, string) {
		if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, vm); err != nil {
			return false, err.Error()
		}
		return vm.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue && vm.Status.VMID != 0, fmt.Sprintf("%+v", vm.Status)
	})
	return vm
}

// waitGuest waits until the simulator's VM has a size's sockets, cores and
// memory applied, nothing pending.
func (f *flow) waitGuest(t *testing.T, vmid int, sz size) {
	t.Helper()
	f.eventually(t, flowWait, fmt.Sprintf("VM %d in the simulator %s", vmid, sz.name), func() (bool, string) {
		g, ok := f.sim.Guest(vmid)
		if !ok {
			return false, "no such guest"
		}
		c := g.Config
		return c["sockets"] == sz.sockets && c["cores"] == sz.cores && c["memory"] == sz.memory && len(g.Pending) == 0,
			fmt.Sprintf("sockets %s cores %s memory %s pending %v", c["sockets"], c["cores"], c["memory"], g.Pending)
	})
}

// waitConnectionSecret waits until a Secret beside vm holds the VM's vmid,
// node and IP address.
func (f *flow) waitConnectionSecret(t *testing.T, name string, vm *v1alpha1.VirtualMachine, node string) {
	t.Helper()
	f.eventually(t, flowWait, fmt.Sprintf("Secret %s/%s with the VM's vmid, node and ipAddress", vm.Namespace, name), func() (bool, string) {
		if err := f.kube.Get(context.Background(), client.ObjectKeyFromObject(vm), vm); err != nil {
			return false, err.Error()
		}
		want := map[string]string{"vmid": strconv.Itoa(int(vm.Status.VMID)), "node": node, "ipAddress": vm.Status.Status.IPAddress}
		s := &corev1.Secret{}
		if err := f.kube.Get(context.Background(), types.NamespacedName{Namespace: vm.Namespace, Name: name}, s); err != nil {
			return false, err.Error()
		}
		got := map[string]string{}
		for k := range want {
			got[k] = string(s.Data[k])
		}
		return want["ipAddress"] != "" && fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("got %v, want %v", got, want)
	})
}

func (f *flow) claimResized(t *testing.T) {
	f.resize(t, object(claimGVK, claimNS, claimName), medium)
	f.waitGuest(t, f.claimVMID, medium)
}

// resize changes a claim's or XR's size.
func (f *flow) resize(t *testing.T, o *unstructured.Unstructured, sz size) {
	t.Helper()
	f.mergePatch(t, o, fmt.Sprintf(`{"spec": {"size": %q}}`, sz.name))
}

// tokenRotated rotates the way an operator does without an outage: a new
// token in Proxmox VE, its secret added to the Secret, the connection
// switched to it in one update, then the old token revoked and its secret
// dropped. While the old token still works, a request with it would be
// counted, so "never used after the switch" can fail.
func (f *flow) tokenRotated(t *testing.T) {
	f.sim.AddToken(rotatedID, rotatedSecret)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credNS, Name: credName}}
	f.mergePatch(t, sec, fmt.Sprintf(`{"stringData": {%q: %q}}`, rotatedKey, rotatedSecret))
	// Merge patches: the provider writes the connection's status and
	// finalizers meanwhile, and the switch must be one write.
	f.mergePatch(t, &v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}},
		fmt.Sprintf(`{"spec": {"tokenID": %q, "secretFrom": {"key": %q}}}`, rotatedID, rotatedKey))
	f.waitConnection(t, observedSecret(sec))
	f.oldTokenUses = f.sim.Counters().ByCredential[tokenID]

	f.sim.RemoveToken(tokenID)
	f.mergePatch(t, sec, fmt.Sprintf(`{"data": {%q: null}}`, tokenKey))
	f.waitConnection(t, observedSecret(sec))

	rotatedBefore := f.sim.Counters().ByCredential[rotatedID]
	f.resize(t, object(claimGVK, claimNS, claimName), large)
	f.waitGuest(t, f.claimVMID, large)
	f.waitConnectionSecret(t, claimSecret, f.readyVM(t, claimNS, claimName), claimNode)

	c := f.sim.Counters()
	if used := c.ByCredential[tokenID] - f.oldTokenUses; used != 0 {
		t.Errorf("%d requests used the old token after the connection switched to the new one", used)
	}
	if c.ByCredential[rotatedID] <= rotatedBefore {
		t.Errorf("the resize reached the VM without a request with the new token (%d before, %d after)", rotatedBefore, c.ByCredential[rotatedID])
	}
	t.Logf("requests by token: %v", c.ByCredential)
}

// mergePatch applies a JSON merge patch to o, which then holds the result.
func (f *flow) mergePatch(t *testing.T, o client.Object, patch string) {
	t.Helper()
	if err := f.kube.Patch(context.Background(), o, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatalf("patch %T %s: %v", o, o.GetName(), err)
	}
}

// observedSecret holds once the connection read sec at its current version.
func observedSecret(sec *corev1.Secret) func(*v1alpha1.ProxmoxConnection) bool {
	return func(pc *v1alpha1.ProxmoxConnection) bool {
		return len(pc.Status.ObservedSecrets) == 1 && pc.Status.ObservedSecrets[0].ResourceVersion == sec.ResourceVersion
	}
}

func (f *flow) namespacedXRReady(t *testing.T) {
	f.applyFile(t, filepath.Join(exampleDir, "namespaced", "definition.yaml"))
	f.applyFile(t, filepath.Join(exampleDir, "namespaced", "composition.yaml"))
	f.waitCondition(t, setupWait, object(xrdGVK, "", "virtualservers.compute.example.org"), "Established")

	f.applyFile(t, filepath.Join(exampleDir, "namespaced", "virtualserver.yaml"))
	xr := object(xrGVK, xrNS, xrName)
	f.waitCondition(t, flowWait, xr, "Ready")
	f.xrVM = f.readyVM(t, xrNS, xrName)
	f.xrVMID = int(f.xrVM.Status.VMID)
	if f.xrVMID == f.claimVMID {
		t.Fatalf("the XR's VM is the claim's VM %d", f.xrVMID)
	}
	f.waitGuest(t, f.xrVMID, medium)
	f.waitConnectionSecret(t, xrSecret, f.xrVM, xrNode)

	f.resize(t, xr, small)
	f.waitGuest(t, f.xrVMID, small)
}

func (f *flow) deleted(t *testing.T) {
	ctx := context.Background()
	claim := object(claimGVK, claimNS, claimName)
	if err := f.get(claim); err != nil {
		t.Fatal(err)
	}
	xrRef, _, _ := unstructured.NestedString(claim.Object, "spec", "resourceRef", "name")
	if err := f.kube.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	f.waitGone(t, flowWait, claim)
	f.waitGone(t, flowWait, object(claimXRGVK, "", xrRef))
	f.waitGone(t, flowWait, f.claimVM)
	f.waitNoGuest(t, f.claimVMID)
	f.waitGone(t, flowWait, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: claimNS, Name: claimSecret}})

	xr := object(xrGVK, xrNS, xrName)
	if err := f.kube.Delete(ctx, xr); err != nil {
		t.Fatal(err)
	}
	f.waitGone(t, flowWait, xr)
	f.waitGone(t, flowWait, f.xrVM)
	f.waitNoGuest(t, f.xrVMID)
	f.waitGone(t, flowWait, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: xrNS, Name: xrSecret}})

	for _, ns := range []string{claimNS, xrNS} {
		l := &v1alpha1.VirtualMachineList{}
		if err := f.kube.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 0 {
			t.Errorf("%d VirtualMachines left in %s", len(l.Items), ns)
		}
	}
	if g := f.sim.Guests(); len(g) != 2 {
		t.Errorf("the simulator holds %d guests, want only the two templates", len(g))
	}
}

// waitNoGuest waits until the simulator no longer has the VM.
func (f *flow) waitNoGuest(t *testing.T, vmid int) {
	t.Helper()
	f.eventually(t, flowWait, fmt.Sprintf("VM %d destroyed in the simulator", vmid), func() (bool, string) {
		g, ok := f.sim.Guest(vmid)
		return !ok, fmt.Sprintf("%s, lock %q", g.Status, g.Lock)
	})
}
