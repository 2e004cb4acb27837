package proxmox

import (
	"reflect"
	"testing"
)

func cfgOf(kv map[string]string) GuestConfig {
	g := GuestConfig{}
	for k, v := range kv {
		g[k] = PendingEntry{Value: v, HasValue: true}
	}
	return g
}

func TestDiff(t *testing.T) {
	cases := map[string]struct {
		spec        VMSpec
		cfg         GuestConfig
		wantSet     map[string]string
		wantNew     map[string]string
		wantResizes []Resize
		wantRefused int
	}{
		"converged": {
			spec: VMSpec{Config: map[string]any{"name": "web", "cores": int32(2), "memory": int64(4096)}, NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr0"}}},
				Disks: map[string]VMDisk{"scsi0": {Storage: "local-lvm", SizeGB: 60}}},
			cfg: cfgOf(map[string]string{"name": "web", "cores": "2", "memory": "4096",
				"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1", "scsi0": "local-lvm:vm-100-disk-0,size=60G"}),
			wantSet: map[string]string{}, wantNew: map[string]string{},
		},
		"absent booleans read as PVE's defaults": {
			spec: VMSpec{CloudInit: &VMCloudInit{Config: map[string]any{"ciuser": "debian", "ciupgrade": ptrTo(true)}}},
			cfg:  cfgOf(map[string]string{"ciuser": "debian"}),
			// qemu-server's schema: ciupgrade defaults to 1, so a config
			// without it already upgrades packages.
			wantSet: map[string]string{}, wantNew: map[string]string{},
		},
		"absent ciupgrade is not false": {
			spec:    VMSpec{CloudInit: &VMCloudInit{Config: map[string]any{"ciuser": "debian", "ciupgrade": ptrTo(false)}}},
			cfg:     cfgOf(map[string]string{"ciuser": "debian"}),
			wantSet: map[string]string{"ciupgrade": "0"}, wantNew: map[string]string{},
		},
		"drifted cores and bridge keep MAC and firewall": {
			spec:    VMSpec{Config: map[string]any{"cores": int32(4)}, NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr1"}}}},
			cfg:     cfgOf(map[string]string{"cores": "2", "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1"}),
			wantSet: map[string]string{"cores": "4", "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr1,firewall=1"},
			wantNew: map[string]string{},
		},
		"model change moves the MAC": {
			spec:    VMSpec{NICs: []VMNIC{{Model: "e1000", Options: map[string]any{"bridge": "vmbr0"}}}},
			cfg:     cfgOf(map[string]string{"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0"}),
			wantSet: map[string]string{"net0": "e1000=BC:24:11:00:00:01,bridge=vmbr0"},
			wantNew: map[string]string{},
		},
		"pending value counts": {
			spec:    VMSpec{Config: map[string]any{"cores": int32(4)}},
			cfg:     GuestConfig{"cores": {Value: "2", HasValue: true, Pending: "4", HasPending: true}},
			wantSet: map[string]string{}, wantNew: map[string]string{},
		},
		"grow, add, refuse shrink and move": {
			spec: VMSpec{Disks: map[string]VMDisk{
				"scsi0": {Storage: "local-lvm", SizeGB: 60}, "scsi1": {Storage: "local-lvm", SizeGB: 10},
				"scsi2": {Storage: "local-lvm", SizeGB: 5}, "virtio0": {Storage: "ceph", SizeGB: 8}}},
			cfg: cfgOf(map[string]string{"scsi0": "local-lvm:vm-100-disk-0,size=32G", "scsi2": "local-lvm:vm-100-disk-2,size=8G",
				"virtio0": "local-lvm:vm-100-disk-3,size=8G"}),
			wantSet:     map[string]string{},
			wantNew:     map[string]string{"scsi1": "local-lvm:10"},
			wantResizes: []Resize{{Disk: "scsi0", Size: "60G"}},
			wantRefused: 2,
		},
		"new fields: tags as a set, onboot and numa absent read as false, cpu type and balloon": {
			spec: VMSpec{Config: map[string]any{"tags": []string{"web", "prod"}, "onboot": ptrTo(false), "numa": ptrTo(false),
				"cpu": "host", "balloon": ptrTo[int64](0)}},
			cfg:     cfgOf(map[string]string{"tags": "prod;web", "cpu": "host,flags=+aes"}),
			wantSet: map[string]string{"balloon": "0"}, wantNew: map[string]string{},
		},
		"new fields drifted": {
			spec:    VMSpec{Config: map[string]any{"tags": []string{"web"}, "onboot": ptrTo(true), "numa": ptrTo(true), "cpu": "x86-64-v2-AES"}},
			cfg:     cfgOf(map[string]string{"tags": "db", "onboot": "0", "cpu": "kvm64"}),
			wantSet: map[string]string{"tags": "web", "onboot": "1", "numa": "1", "cpu": "x86-64-v2-AES"},
			wantNew: map[string]string{},
		},
		"NIC tag, firewall, MAC and MTU": {
			spec: VMSpec{NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr0", "tag": int32(20),
				"firewall": ptrTo(true), "macaddr": "BC:24:11:AA:BB:CC", "mtu": int32(1400)}}}},
			cfg:     cfgOf(map[string]string{"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,queues=2"}),
			wantSet: map[string]string{"net0": "virtio=BC:24:11:AA:BB:CC,tag=20,firewall=1,mtu=1400,bridge=vmbr0,queues=2"},
			wantNew: map[string]string{},
		},
		"NIC options already as asked, firewall absent reads as false": {
			spec:    VMSpec{NICs: []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr0", "tag": int32(20), "firewall": ptrTo(false)}}}},
			cfg:     cfgOf(map[string]string{"net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=20"}),
			wantSet: map[string]string{}, wantNew: map[string]string{},
		},
		"memory as property string, sshkeys encoded": {
			spec:    VMSpec{Config: map[string]any{"memory": int64(2048)}, CloudInit: &VMCloudInit{Config: map[string]any{"sshkeys": []string{"ssh-ed25519 AAAA me@x"}}}},
			cfg:     cfgOf(map[string]string{"memory": "current=2048", "sshkeys": "ssh-ed25519%20AAAA%20me%40x"}),
			wantSet: map[string]string{}, wantNew: map[string]string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := Diff(tc.spec, tc.cfg)
			if !reflect.DeepEqual(p.Set, tc.wantSet) {
				t.Errorf("Set = %v, want %v", p.Set, tc.wantSet)
			}
			if !reflect.DeepEqual(p.NewDisks, tc.wantNew) {
				t.Errorf("NewDisks = %v, want %v", p.NewDisks, tc.wantNew)
			}
			if !reflect.DeepEqual(p.Resizes, tc.wantResizes) {
				t.Errorf("Resizes = %v, want %v", p.Resizes, tc.wantResizes)
			}
			if len(p.Refused) != tc.wantRefused {
				t.Errorf("Refused = %v, want %d", p.Refused, tc.wantRefused)
			}
		})
	}
}

func TestCreateParams(t *testing.T) {
	up := true
	s := VMSpec{Config: map[string]any{"name": "vm", "cores": int32(2), "sockets": int32(1), "memory": int64(4096)},
		Disks:     map[string]VMDisk{"scsi0": {Storage: "local-lvm", SizeGB: 60}},
		NICs:      []VMNIC{{Model: "virtio", Options: map[string]any{"bridge": "vmbr0"}}},
		CloudInit: &VMCloudInit{Config: map[string]any{"ciuser": "ubuntu", "ciupgrade": &up}, IPConfigs: []map[string]any{{"ip": "dhcp"}}}}
	p := s.CreateParams("notes")
	want := map[string]string{"name": "vm", "cores": "2", "sockets": "1", "memory": "4096", "scsi0": "local-lvm:60",
		"net0": "virtio,bridge=vmbr0", "ciuser": "ubuntu", "ciupgrade": "1", "ipconfig0": "ip=dhcp", "ide2": "local-lvm:cloudinit",
		"description": "notes", "scsihw": "virtio-scsi-pci", "boot": "order=scsi0"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("CreateParams = %v\nwant %v", p, want)
	}
}

func TestParseUPID(t *testing.T) {
	u, err := ParseUPID("UPID:pve:000A1B2C:0055AA11:6700AABB:qmclone:100:root@pam!kubemox:")
	if err != nil || u.Node != "pve" || u.Type != "qmclone" || u.ID != "100" {
		t.Fatalf("ParseUPID = %+v, %v", u, err)
	}
	if u.PStart != 0x0055AA11 || u.StartTime != 0x6700AABB {
		t.Errorf("pstart/starttime = %x/%x, want 55aa11/6700aabb", u.PStart, u.StartTime)
	}
	if _, err := ParseUPID("UPID:pve:1:2:3:qm:1"); err == nil {
		t.Error("short UPID accepted")
	}
	if _, err := ParseUPID("UPID:pve:000A1B2C:zz:6700AABB:qmstart:100:root@pam:"); err == nil {
		t.Error("UPID with a non-hex process start accepted")
	}
}

func ptrTo[T any](v T) *T { return &v }
