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
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// With LateInitialize named in its policies, a VM's unset fields take the
// guest's values (the MAC PVE gave the clone, tags added in Proxmox VE) and
// are managed from then on: the tags changed again behind the provider's
// back are put back. Under "*" the same tags are left alone.
func TestLateInitFillsUnsetFieldsFromTheGuest(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	named := cloneSpec("late")
	named.ManagementPolicies = xpv2.ManagementPolicies{xpv2.ManagementActionObserve, xpv2.ManagementActionCreate,
		xpv2.ManagementActionUpdate, xpv2.ManagementActionDelete, xpv2.ManagementActionLateInitialize}
	hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"}, Spec: named})
	hs.create(t, &v1alpha1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "all"}, Spec: cloneSpec("all")})
	late, all := hs.waitReady(t, ns, "late"), hs.waitReady(t, ns, "all")
	lateID, allID := providertest.VMIDOf(t, late), providertest.VMIDOf(t, all)

	setTags := func(v string) {
		for _, id := range []int{lateID, allID} {
			if err := hs.Sim.SetGuestConfig(id, "tags", v); err != nil {
				t.Fatal(err)
			}
		}
		// An annotation is a change of desired state: both are observed
		// now rather than at their next poll.
		for _, vm := range []*v1alpha1.VirtualMachine{late, all} {
			patch := []byte(`{"metadata":{"annotations":{"test.kubemox.io/tags":"` + v + `"}}}`)
			if err := hs.Kube.Patch(context.Background(), vm, client.RawPatch(types.MergePatchType, patch)); err != nil {
				t.Fatal(err)
			}
		}
	}
	setTags("team-a")
	late = hs.waitVM(t, ns, "late", "late-initialized", func(vm *v1alpha1.VirtualMachine) bool {
		return slices.Equal(vm.Spec.Tags, []string{"team-a"}) && vm.Spec.Template.Network[0].MACAddr != ""
	})
	since := time.Now()
	setTags("other")
	hs.WaitGuest(t, lateID, "with its late-initialized tags put back", wait, func(g pvesim.GuestView) bool {
		return providertest.GuestHas(g, map[string]string{"tags": "team-a"})
	})
	// Once the VM under "*" was observed since its tags changed, it still
	// leaves them out, and its guest keeps Proxmox VE's.
	allGuest, ok := hs.Sim.Guest(allID)
	if !ok {
		t.Fatalf("guest %d is gone", allID)
	}
	allPath := "/nodes/" + allGuest.Node + "/qemu/" + strconv.Itoa(allID) + "/"
	hs.WaitRequest(t, "reading VM "+strconv.Itoa(allID), since, wait, func(r pvesim.LoggedRequest) bool {
		return r.Method == http.MethodGet && strings.HasPrefix(r.Path, allPath)
	})
	all = hs.waitReady(t, ns, "all")
	if all.Spec.Tags != nil || all.Spec.Template.Network[0].MACAddr != "" {
		t.Errorf("a VM under * was late-initialized: tags %v, MAC %q", all.Spec.Tags, all.Spec.Template.Network[0].MACAddr)
	}
	g, ok := hs.Sim.Guest(allID)
	if !ok {
		t.Fatalf("guest %d is gone", allID)
	}
	if v := providertest.GuestEffective(g, "tags"); v != "other" {
		t.Errorf("the tags of a VM under * were changed to %q", v)
	}
	hs.delete(t, late)
	hs.delete(t, all)
	hs.waitGone(t, ns, "late")
	hs.waitGone(t, ns, "all")
}
