package proxmox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func current(kv map[string]string) GuestConfig {
	cfg := GuestConfig{}
	for k, v := range kv {
		cfg[k] = PendingEntry{Value: v, HasValue: true}
	}
	return cfg
}

func TestImportedSpec(t *testing.T) {
	cases := map[string]struct {
		reason string
		cfg    GuestConfig
		want   VMSpec
	}{
		"Typical": {
			reason: "Hardware, NICs and whole-GiB disks are read; the CD-ROM, the cloud-init drive and EFI state are not.",
			cfg: current(map[string]string{"name": "web-01", "cores": "2", "sockets": "1", "memory": "4096",
				"scsi0": "local-lvm:vm-100-disk-0,iothread=1,size=32G", "ide2": "local:iso/debian.iso,media=cdrom",
				"ide3": "local-lvm:vm-100-cloudinit,media=cdrom", "efidisk0": "local-lvm:vm-100-disk-1,size=4M",
				"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1", "net1": "e1000=BC:24:11:00:00:02,bridge=vmbr1"}),
			want: VMSpec{Config: map[string]any{"name": "web-01", "cores": int64(2), "sockets": int64(1), "memory": int64(4096)},
				Disks: map[string]VMDisk{"scsi0": {Storage: "local-lvm", SizeGB: 32}},
				NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"macaddr": "BC:24:11:00:00:01", "bridge": "vmbr0", "firewall": true}},
					{Model: "e1000", Options: map[string]any{"macaddr": "BC:24:11:00:00:02", "bridge": "vmbr1"}}}},
		},
		"MemoryPropertyString": {
			reason: "PVE 9's memory property string reads as its current size.",
			cfg:    current(map[string]string{"memory": "current=2048", "virtio0": "ceph:vm-1-disk-0,size=1T"}),
			want:   VMSpec{Config: map[string]any{"memory": int64(2048)}, Disks: map[string]VMDisk{"virtio0": {Storage: "ceph", SizeGB: 1024}}},
		},
		"OddSizesAndGaps": {
			reason: "A disk of a fraction of a GiB and NICs after a gap are left out rather than changed later.",
			cfg:    current(map[string]string{"scsi0": "local-lvm:vm-1-disk-0,size=1536M", "net0": "virtio,bridge=vmbr0", "net2": "virtio,bridge=vmbr2"}),
			want:   VMSpec{Config: map[string]any{}, NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr0"}}}},
		},
		"PendingWins": {
			reason: "What the guest will have after its next boot is what a spec must ask for.",
			cfg:    GuestConfig{"cores": {Value: "2", HasValue: true, Pending: "4", HasPending: true}},
			want:   VMSpec{Config: map[string]any{"cores": int64(4)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ImportedSpec(tc.cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nImportedSpec(): -want, +got:\n%s", tc.reason, diff)
			}
			if p := Diff(got, tc.cfg); !p.Empty() || len(p.Refused) > 0 {
				t.Errorf("%s\nDiff(ImportedSpec(cfg), cfg) = %+v, want nothing to change", tc.reason, p)
			}
		})
	}
}
