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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// syncedFalseSaying reports whether cr's Synced condition is False with a
// message containing text.
func syncedFalseSaying(text string) func(*v1alpha1.Container) bool {
	return func(cr *v1alpha1.Container) bool {
		c := cr.GetCondition(xpv2.TypeSynced)
		return c.Status == corev1.ConditionFalse && strings.Contains(c.Message, text)
	}
}

// What Proxmox VE refuses (as pve-container does, see the simulator's
// conformance tests) reaches the resource's Synced condition with PVE's
// words: a template file that is not there (found by the vzcreate task), a
// volume that is no container template (refused by the request), and a
// change of unprivileged after creation (refused by the provider, never
// sent).
func TestRefusalsReachSynced(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-refused-")
	const iso = "local:iso/refusal-test.iso"
	if err := p.Sim.AddVolume(node, iso); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ostemplate, message string
	}{
		{"missing-template", "local:vztmpl/none.tar.zst", "can't find file 'local:vztmpl/none.tar.zst'"},
		{"iso-template", iso, "unable to use volume " + iso + " - content type needs to be 'vztmpl'"},
	}
	for _, tc := range cases {
		create(t, p, newContainer(ns, tc.name, func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = tc.ostemplate }))
	}
	for _, tc := range cases {
		waitContainer(t, p, ns, tc.name, "Synced=False with "+tc.message, syncedFalseSaying(tc.message))
	}

	create(t, p, newContainer(ns, "privileged-later", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive }))
	cr := waitReady(t, p, ns, "privileged-later")
	cr.Spec.Template.Unprivileged = ptr.To(false)
	if err := p.Kube.Update(context.Background(), cr); err != nil {
		t.Fatalf("update: %v", err)
	}
	waitContainer(t, p, ns, "privileged-later", "Synced=False explaining unprivileged",
		syncedFalseSaying("template.unprivileged is false but the container was created with unprivileged 1"))
	for _, name := range []string{"missing-template", "iso-template", "privileged-later"} {
		c := &v1alpha1.Container{}
		c.Namespace, c.Name = ns, name
		p.DeleteAndWait(t, c, wait)
	}
}
