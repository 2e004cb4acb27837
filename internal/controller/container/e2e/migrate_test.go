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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// Changing spec.nodeName moves the running container with PVE's restart
// migration: same VMID, same resource, running on the target afterwards,
// events at start and end, status.lastMigration and the Migrated condition
// say how it went.
func TestNodeNameChangeMigratesTheContainer(t *testing.T) {
	p := require(t)
	ns := p.Namespace(t, "ct-")
	cr := newContainer(ns, "mover", func(tpl *v1alpha1.ContainerTemplate) { tpl.OSTemplate = archive })
	create(t, p, cr)
	cr = waitReady(t, p, ns, cr.Name)
	vmid := providertest.VMIDOf(t, cr)

	patch := []byte(`{"spec":{"nodeName":"othernode"}}`)
	if err := p.Kube.Patch(context.Background(), cr, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	p.WaitEvent(t, ns, cr.Name, "Migrating", wait)
	p.WaitEvent(t, ns, cr.Name, "Migrated", wait)
	cr = waitContainer(t, p, ns, cr.Name, "migrated, running and Ready", func(c *v1alpha1.Container) bool {
		lm := c.Status.LastMigration
		return ready(c) && lm != nil && lm.Result == v1alpha1.MigrationSucceeded && c.Status.Status.Node == "othernode" &&
			c.Status.Status.State == "running"
	})
	if g, _ := p.Sim.Guest(vmid); g.Node != "othernode" || g.Status != "running" {
		t.Errorf("container %d on %s, %s; want running on othernode", vmid, g.Node, g.Status)
	}
	if got := providertest.VMIDOf(t, cr); got != vmid {
		t.Errorf("VMID changed from %d to %d", vmid, got)
	}
	if c := cr.GetCondition(v1alpha1.TypeMigrated); c.Status != corev1.ConditionTrue || !cr.Status.LastMigration.Online {
		t.Errorf("Migrated condition %+v, lastMigration %+v (want a restart migration)", c, cr.Status.LastMigration)
	}
	if cr.Status.RequestedNode != "othernode" {
		t.Errorf("requestedNode %q", cr.Status.RequestedNode)
	}
	p.DeleteAndWait(t, cr, wait)
	if _, ok := p.Sim.Guest(vmid); ok {
		t.Error("the container survived the deletion on its new node")
	}
}
