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

package container

import (
	"context"
	"strconv"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// What a user sees when Proxmox VE refuses a container the way pve-container
// does (the simulator's conformance tests cite where).

// A template file that is not there is only found by PVE's vzcreate task:
// the first Create starts it, the next one reports the task's cause.
func TestCreateFromAMissingTemplateReportsTheTaskCause(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	const missing = "local:vztmpl/none.tar.zst"
	cr := newContainer("noarchive", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = missing })
	f.store(t, cr, true)
	_, err := f.external().Create(context.Background(), cr)
	guesttest.Want{Events: []string{"Creating"}}.Check(t, f.log, cr, err)
	vmid := guesttest.VMIDOf(t, cr)
	if ts := waitTask(t, f, cr.GetAnnotations()[guest.AnnotationCreateTask]); !ts.Failed() {
		t.Fatalf("create task %+v: want a failure", ts)
	}
	if _, ok := f.sim.Guest(vmid); ok {
		t.Fatal("PVE removes the config of a failed create")
	}

	// The next reconcile: Observe finds no container, Create reports why.
	e := f.external()
	obs, err := e.Observe(context.Background(), cr)
	if err != nil || obs.ResourceExists {
		t.Fatalf("Observe after the failed create: exists %v, err %v", obs.ResourceExists, err)
	}
	_, err = e.Create(context.Background(), cr)
	want := "Proxmox VE task vzcreate failed: unable to create CT " + strconv.Itoa(vmid) + " - can't find file '" + missing + "'"
	guesttest.Want{PVEText: want}.Check(t, f.log, cr, err)
}

// A volume of the wrong content type is refused before anything starts.
func TestCreateFromAnISOIsRefused(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	const iso = "local:iso/debian-12.iso"
	if err := f.sim.AddVolume(testNode, iso); err != nil {
		t.Fatal(err)
	}
	cr := newContainer("fromiso", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = iso })
	f.store(t, cr, true)
	_, err := f.external().Create(context.Background(), cr)
	guesttest.Want{PVEText: "unable to use volume " + iso + " - content type needs to be 'vztmpl'", NoEvents: []string{"Creating"}}.Check(t, f.log, cr, err)
	if len(f.sim.Guests()) != 1 { // the fixture's template only
		t.Errorf("guests %+v: the refused create must leave nothing", f.sim.Guests())
	}
}

// unprivileged is fixed when a container is created: a spec asking for
// another value is explained on the resource, and never sent to PVE (which
// would answer every write with "unable to modify read-only option").
func TestUnprivilegedChangeIsExplained(t *testing.T) {
	cases := map[string]struct {
		reason string
		change func(cr *v1alpha1.Container)
		want   verbWant
	}{
		"TemplateField": {
			reason: "template.unprivileged false on an unprivileged container is refused with a sentence naming the field.",
			change: func(cr *v1alpha1.Container) { cr.Spec.Template.Unprivileged = ptr.To(false) },
			want:   verbWant{err: guest.ErrChangeRefused, noEvents: []string{"Configured", "DriftCorrected"}},
		},
		"AdditionalConfig": {
			reason: "additionalConfig.unprivileged is refused the same way.",
			change: func(cr *v1alpha1.Container) { cr.Spec.AdditionalConfig = map[string]string{"unprivileged": "0"} },
			want:   verbWant{err: guest.ErrChangeRefused, noEvents: []string{"Configured", "DriftCorrected"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := newContainer("unpriv", fromOSTemplate)
			tc.change(cr)
			cr.Generation = 2
			cr = owned(t, f, cr, false, nil)
			e, upToDate := observed(t, f, cr)
			if upToDate {
				t.Fatalf("%s: a refused change must not look up to date", tc.reason)
			}
			_, err := e.Update(context.Background(), cr)
			tc.want.check(t, tc.reason, f, cr, err)
			if g := f.ct(t, ownedVMID); g.Config["unprivileged"] != "1" {
				t.Errorf("%s: unprivileged = %q, want it left at 1", tc.reason, g.Config["unprivileged"])
			}
		})
	}
}
