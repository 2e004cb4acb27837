package proxmox

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Blockers decides as PVE's migrate dialog does (pve-manager
// www/manager6/window/Migrate.js, checkQemuPreconditions and checkLxcPreconditions).
func TestMigrationBlockers(t *testing.T) {
	allowedB := map[string]NodeBlockers{"b": {}}
	cases := map[string]struct {
		reason string
		typ    GuestType
		p      MigrationPrecondition
		m      Migration
		want   []string
	}{
		"Allowed": {reason: "qemu-server lists an allowed node in not_allowed_nodes too, with nothing set: no blocker.",
			typ: QEMU, p: MigrationPrecondition{Allowed: []string{"b"}, NotAllowed: allowedB}, m: Migration{Target: "b"}},
		"NotANode": {reason: "A target that is neither allowed nor refused is not another node of the cluster.",
			typ: LXC, p: MigrationPrecondition{Allowed: []string{"b"}}, m: Migration{Target: "z"},
			want: []string{"node z is not another node of the cluster (allowed: b)"}},
		"StoragesMissing": {reason: "Storages the target lacks block it unless a target storage takes the local volumes.",
			typ: QEMU, p: MigrationPrecondition{NotAllowed: map[string]NodeBlockers{"b": {UnavailableStorages: []string{"fast", "nfs"}}},
				LocalDisks: []LocalDisk{{VolID: "fast:vm-1-disk-0"}}}, m: Migration{Target: "b"},
			want: []string{"storages fast, nfs are not available on node b"}},
		"LocalStorageMappedAway": {reason: "With a target storage only the shared (non-local) storage still blocks.",
			typ: QEMU, p: MigrationPrecondition{NotAllowed: map[string]NodeBlockers{"b": {UnavailableStorages: []string{"fast", "nfs"}}},
				LocalDisks: []LocalDisk{{VolID: "fast:vm-1-disk-0"}}}, m: Migration{Target: "b", TargetStorage: "local-lvm"},
			want: []string{"storages nfs are not available on node b"}},
		"MappedAndHA": {reason: "Missing mappings and HA affinity rules block a node.",
			typ: LXC, p: MigrationPrecondition{NotAllowed: map[string]NodeBlockers{"b": {UnavailableResources: []string{"hostpci0"}, BlockingHAResources: []string{"vm:7 (resource-affinity)"}}}},
			m:    Migration{Target: "b"},
			want: []string{"mapped resources hostpci0 are not available on node b", "HA resources vm:7 (resource-affinity) keep it off node b"}},
		"LocalResources": {reason: "Unmapped local resources block (force is root@pam's and never sent); mapped ones do not offline.",
			typ: QEMU, p: MigrationPrecondition{Allowed: []string{"b"}, LocalResources: []string{"hostpci0", "usb0"},
				Mapped: map[string]MappedResource{"usb0": {Name: "stick"}}}, m: Migration{Target: "b"},
			want: []string{"the VM uses local resources hostpci0 (Proxmox VE moves them only with force, which only root@pam may use and the provider does not send)"}},
		"MappedLive": {reason: "A running VM moving live may not take mapped devices that cannot migrate live.",
			typ: QEMU, p: MigrationPrecondition{Running: true, Allowed: []string{"b"}, LocalResources: []string{"hostpci0"},
				Mapped: map[string]MappedResource{"hostpci0": {Name: "gpu"}, "hostpci1": {Name: "nic", LiveMigration: true}}}, m: Migration{Target: "b", Online: true},
			want: []string{"the running VM uses mapped resources that cannot migrate live: hostpci0"}},
		"LocalCDROM": {reason: "A local CD/DVD blocks; a cloud-init drive and a local disk do not.",
			typ: QEMU, p: MigrationPrecondition{Allowed: []string{"b"}, LocalDisks: []LocalDisk{{VolID: "local:iso/x.iso", CDROM: true},
				{VolID: "local-lvm:vm-1-cloudinit", CDROM: true, CloudInit: true}, {VolID: "local-lvm:vm-1-disk-0"}}}, m: Migration{Target: "b"},
			want: []string{"the VM has a local CD/DVD: local:iso/x.iso"}},
		"ContainerIgnoresQemuFields": {reason: "pve-container answers only nodes; nothing else is read for a container.",
			typ: LXC, p: MigrationPrecondition{Allowed: []string{"b"}, LocalResources: []string{"hostpci0"}}, m: Migration{Target: "b"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.Blockers(tc.typ, tc.m)); diff != "" {
				t.Errorf("%s\nblockers: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// The client reads both precondition answers from the simulator (qemu-server's keys with
// underscores, pve-container's with dashes) into what Blockers decides on.
func TestMigrationPreconditionAgainstSimulator(t *testing.T) {
	srv := startSim(t, pvesim.Options{Nodes: []string{"pve", "other"}})
	if err := srv.AddVolume("pve", "local:iso/debian.iso"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []pvesim.GuestSeed{
		{Node: "pve", VMID: 180, Running: true, Config: map[string]string{"name": "vm", "scsi0": "local-lvm:2", "hostpci0": "0000:01:00.0", "ide2": "local:iso/debian.iso,media=cdrom"}},
		{Kind: pvesim.KindLXC, Node: "pve", VMID: 181, Config: map[string]string{"hostname": "ct", "rootfs": "local-lvm:2"}},
	} {
		if err := srv.AddGuest(g); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := simClient(t, srv, useToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	vm, err := c.MigrationPrecondition(ctx, GuestRef{Type: QEMU, Node: "pve", VMID: 180}, "other")
	if err != nil {
		t.Fatal(err)
	}
	want := MigrationPrecondition{Running: true, Allowed: []string{"other"}, NotAllowed: map[string]NodeBlockers{"other": {}},
		LocalDisks:     []LocalDisk{{VolID: "local-lvm:vm-180-disk-0"}, {VolID: "local:iso/debian.iso", CDROM: true}},
		LocalResources: []string{"hostpci0"}, Mapped: map[string]MappedResource{}}
	if diff := cmp.Diff(want, vm); diff != "" {
		t.Errorf("VM preconditions: -want, +got:\n%s", diff)
	}
	if got := vm.Blockers(QEMU, Migration{Target: "other", Online: true}); len(got) != 2 {
		t.Errorf("VM blockers %q, want the local resource and the local CD/DVD", got)
	}

	ct, err := c.MigrationPrecondition(ctx, GuestRef{Type: LXC, Node: "pve", VMID: 181}, "other")
	if err != nil {
		t.Fatal(err)
	}
	wantCT := MigrationPrecondition{Allowed: []string{"other"}, NotAllowed: map[string]NodeBlockers{}, Mapped: map[string]MappedResource{}}
	if diff := cmp.Diff(wantCT, ct); diff != "" {
		t.Errorf("container preconditions: -want, +got:\n%s", diff)
	}
}
