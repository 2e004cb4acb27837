package proxmox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImportedLXCSpec(t *testing.T) {
	cases := map[string]struct {
		reason string
		cfg    GuestConfig
		want   LXCSpec
	}{
		"Typical": {
			reason: "Hostname, hardware, features, volumes and NICs (with their tag and addresses) are read.",
			cfg: current(map[string]string{"hostname": "web-ct", "cores": "2", "memory": "1024", "swap": "512",
				"features": "keyctl=1,nesting=1", "rootfs": "local-lvm:vm-200-disk-0,size=8G",
				"mp0":    "local-lvm:vm-200-disk-1,mp=/srv/data,backup=1,size=4G",
				"net0":   "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,ip=192.0.2.20/24,gw=192.0.2.1,tag=20,type=veth",
				"net1":   "name=eth1,bridge=vmbr1,hwaddr=BC:24:11:00:00:02,ip=dhcp,ip6=auto,type=veth",
				"ostype": "debian", "arch": "amd64", "unprivileged": "1"}),
			want: LXCSpec{Config: map[string]any{"hostname": "web-ct", "cores": int64(2), "memory": int64(1024), "swap": int64(512)},
				Features: map[string]any{"nesting": true, "keyctl": true, "fuse": false},
				RootFS:   &LXCVolume{Storage: "local-lvm", SizeGB: 8},
				Mounts:   []LXCVolume{{Storage: "local-lvm", SizeGB: 4, Path: "/srv/data"}},
				NICs: []LXCNIC{{Options: map[string]any{"name": "eth0", "bridge": "vmbr0", "tag": int64(20), "ip": "192.0.2.20/24", "gw": "192.0.2.1"}},
					{Options: map[string]any{"name": "eth1", "bridge": "vmbr1", "ip": "dhcp", "ip6": "auto"}}}},
		},
		"BindMountEndsTheMounts": {
			reason: "A bind mount cannot be a spec's disk: it and what follows are left out.",
			cfg: current(map[string]string{"rootfs": "local-lvm:vm-1-disk-0,size=2G", "mp0": "/srv/host,mp=/data",
				"mp1": "local-lvm:vm-1-disk-1,mp=/x,size=1G"}),
			want: LXCSpec{Config: map[string]any{}, RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 2}},
		},
		"OddSizesAndGaps": {
			reason: "A root filesystem of a fraction of a GiB takes its mount points along; NICs after a gap are left out.",
			cfg: current(map[string]string{"rootfs": "local-lvm:vm-1-disk-0,size=1536M", "mp0": "local-lvm:vm-1-disk-1,mp=/x,size=1G",
				"net0": "name=eth0,bridge=vmbr0", "net2": "name=eth2,bridge=vmbr2"}),
			want: LXCSpec{Config: map[string]any{}, NICs: []LXCNIC{{Options: map[string]any{"name": "eth0", "bridge": "vmbr0"}}}},
		},
		"PendingWins": {
			reason: "What the container will have after its next restart is what a spec must ask for.",
			cfg:    GuestConfig{"cores": {Value: "2", HasValue: true, Pending: "4", HasPending: true}},
			want:   LXCSpec{Config: map[string]any{"cores": int64(4)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ImportedLXCSpec(tc.cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nImportedLXCSpec(): -want, +got:\n%s", tc.reason, diff)
			}
			if p := DiffLXC(got, tc.cfg); !p.Empty() || len(p.Refused) > 0 {
				t.Errorf("%s\nDiffLXC(ImportedLXCSpec(cfg), cfg) = %+v, want nothing to change", tc.reason, p)
			}
		})
	}
}
