package proxmox

import (
	"slices"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A guest this client creates is in every listing ClusterResourcesSinceCreates
// serves after the create was sent: a resource applied again right after its
// orphaning looks for its guest by name in it, and a read sent before the
// clone would make it create a second guest. CachedClusterResources keeps
// serving the earlier read.
func TestSimClusterResourcesSinceCreates(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	if err := srv.AddTemplate("pve", 9000, "tmpl"); err != nil {
		t.Fatal(err)
	}
	c, w := simClient(t, srv, useToken)
	if _, err := c.ClusterResourcesSinceCreates(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	src := GuestRef{Type: QEMU, Node: "pve", VMID: 9000}
	if _, err := c.CloneGuest(t.Context(), src, CloneOptions{NewID: 101, Name: "web", Full: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CachedClusterResources(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := w.count("GET /cluster/resources"); got != 1 {
		t.Errorf("CachedClusterResources within maxAge read again after a create (%d reads, want 1)", got)
	}
	rows, err := c.ClusterResourcesSinceCreates(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got := w.count("GET /cluster/resources"); got != 2 {
		t.Errorf("the listing read before the clone was served after it (%d reads, want 2)", got)
	}
	if !slices.ContainsFunc(rows, func(r Resource) bool { return r.VMID == 101 && r.Name == "web" }) {
		t.Errorf("the listing after the clone lacks guest 101: %+v", rows)
	}
}
