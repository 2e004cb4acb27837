package proxmox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestDiffLXC(t *testing.T) {
	swap := int64(0)
	cases := map[string]struct {
		reason string
		spec   LXCSpec
		cfg    GuestConfig
		want   LXCPlan
	}{
		"Converged": {
			reason: "A container matching the spec needs nothing, whatever the formatting of its values.",
			spec: LXCSpec{Config: map[string]any{"hostname": "web", "cores": int32(2), "memory": int64(1024), "swap": &swap},
				RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 8}, NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr0", "ip": "dhcp"}}}, Features: map[string]any{"nesting": true}},
			cfg: cfgOf(map[string]string{"hostname": "web", "cores": "2", "memory": "1024", "swap": "0", "rootfs": "local-lvm:vm-101-disk-0,size=8G",
				"net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:00:01,ip=dhcp,type=veth", "features": "nesting=1"}),
			want: LXCPlan{Set: map[string]string{}},
		},
		"NICKeepsMACAndFirewall": {
			reason: "A NIC change applies bridge, VLAN and address, keeping the MAC, type and firewall.",
			spec:   LXCSpec{NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr1", "tag": int32(10), "ip": "192.0.2.5/24", "gw": "192.0.2.1"}}}},
			cfg:    cfgOf(map[string]string{"net0": "name=eth0,bridge=vmbr0,firewall=1,hwaddr=BC:24:11:00:00:01,ip=dhcp,type=veth"}),
			want: LXCPlan{Set: map[string]string{"net0": "name=eth0,bridge=vmbr1,firewall=1,hwaddr=BC:24:11:00:00:01,ip=192.0.2.5/24,type=veth,gw=192.0.2.1,tag=10"},
				Fields: []string{"net0"}},
		},
		"UntagWhenNoVLAN": {
			reason: "A NIC without a VLAN in the spec loses the tag PVE has.",
			spec:   LXCSpec{NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr0"}}}},
			cfg:    cfgOf(map[string]string{"net0": "name=eth0,bridge=vmbr0,tag=5,type=veth"}),
			want:   LXCPlan{Set: map[string]string{"net0": "name=eth0,bridge=vmbr0,type=veth"}, Fields: []string{"net0"}},
		},
		"NewNIC": {
			reason: "A NIC PVE lacks is added, named after its position.",
			spec:   LXCSpec{NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr0"}}, {Options: map[string]any{"bridge": "vmbr1", "ip6": "auto"}}}},
			cfg:    cfgOf(map[string]string{"net0": "name=eth0,bridge=vmbr0"}),
			want:   LXCPlan{Set: map[string]string{"net1": "name=eth1,bridge=vmbr1,ip6=auto"}, Fields: []string{"net1"}},
		},
		"Volumes": {
			reason: "The root filesystem grows, a new mount point is added, a moved path is set, a shrink and a storage move are refused.",
			spec: LXCSpec{RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 16}, Mounts: []LXCVolume{
				{Storage: "local-lvm", SizeGB: 4, Path: "/srv"}, {Storage: "local-lvm", SizeGB: 2, Path: "/data"},
				{Storage: "ceph", SizeGB: 1, Path: "/logs"}, {Storage: "local-lvm", SizeGB: 1, Path: "/new"}}},
			cfg: cfgOf(map[string]string{"rootfs": "local-lvm:vm-101-disk-0,size=8G", "mp0": "local-lvm:vm-101-disk-1,mp=/old,size=4G",
				"mp1": "local-lvm:vm-101-disk-2,mp=/data,size=8G", "mp2": "local-lvm:vm-101-disk-3,mp=/logs,size=1G"}),
			want: LXCPlan{
				Set:     map[string]string{"mp0": "local-lvm:vm-101-disk-1,mp=/srv,size=4G", "mp3": "local-lvm:1,mp=/new"},
				Resizes: []Resize{{Disk: "rootfs", Size: "16G"}},
				Refused: []string{
					`volume mp1 is 8G, the spec asks for 2G: volumes are never shrunk`,
					`volume mp2 is on storage "local-lvm", the spec asks for "ceph": volumes are not moved automatically`,
				},
				Fields: []string{"rootfs", "mp0", "mp3"},
			},
		},
		"FeaturesOffDeletesKey": {
			reason: "Turning every managed feature off deletes the key rather than writing it empty.",
			spec:   LXCSpec{Features: map[string]any{}},
			cfg:    cfgOf(map[string]string{"features": "nesting=1"}),
			want:   LXCPlan{Set: map[string]string{}, Delete: []string{"features"}, Fields: []string{"features"}},
		},
		"FeaturesKeepOthers": {
			reason: "Flags the spec does not manage (mount=nfs) stay.",
			spec:   LXCSpec{Features: map[string]any{"keyctl": true}},
			cfg:    cfgOf(map[string]string{"features": "mount=nfs,nesting=1"}),
			want:   LXCPlan{Set: map[string]string{"features": "mount=nfs,keyctl=1"}, Fields: []string{"features"}},
		},
		"UnprivilegedNeverSent": {
			// pve-container src/PVE/LXC/Config.pm, update_pct_config: "unable to modify read-only option: 'unprivileged'".
			reason: "unprivileged is fixed at creation: a different value in the template or additionalConfig is refused, never sent.",
			spec:   LXCSpec{Config: map[string]any{"cores": int32(2)}, Unprivileged: ptrTo(false), AdditionalConfig: map[string]string{"unprivileged": "0"}},
			cfg:    cfgOf(map[string]string{"cores": "1", "unprivileged": "1"}),
			want: LXCPlan{Set: map[string]string{"cores": "2"}, Fields: []string{"cores"}, Refused: []string{
				"additionalConfig.unprivileged is false but the container was created with unprivileged 1: Proxmox VE sets it only " +
					"when a container is created (read-only option), so it is not changed; recreate the container to change it",
				"template.unprivileged is false but the container was created with unprivileged 1: Proxmox VE sets it only " +
					"when a container is created (read-only option), so it is not changed; recreate the container to change it",
			}},
		},
		"UnprivilegedMatching": {
			reason: "An unprivileged value matching the container (absent means 0) needs nothing.",
			spec:   LXCSpec{Unprivileged: ptrTo(false), AdditionalConfig: map[string]string{"unprivileged": "0"}},
			cfg:    cfgOf(map[string]string{"cores": "1"}),
			want:   LXCPlan{Set: map[string]string{}},
		},
		"AbsentKeysReadAsPVEDefaults": {
			reason: "As the VM diff: a key the config lacks has PVE's schema default (swap 512, memory 512, onboot 0), so asking for it writes nothing.",
			spec:   LXCSpec{Config: map[string]any{"swap": ptrTo[int64](512), "memory": int64(512), "onboot": ptrTo(false)}},
			cfg:    cfgOf(map[string]string{"hostname": "web"}),
			want:   LXCPlan{Set: map[string]string{}},
		},
		"AbsentKeyWithoutDefault": {
			reason: "A key whose absence no value says (nameserver: the host's) is written when the spec names it.",
			spec:   LXCSpec{Config: map[string]any{"nameserver": []string{"192.0.2.53"}, "searchdomain": []string{"example.org"}}},
			cfg:    cfgOf(map[string]string{"hostname": "web"}),
			want: LXCPlan{Set: map[string]string{"nameserver": "192.0.2.53", "searchdomain": "example.org"},
				Fields: []string{"nameserver", "searchdomain"}},
		},
		"TagsOnbootAndDNS": {
			reason: "Tags compare as a set whatever PVE's separator; onboot and the DNS lists are applied when they drift.",
			spec: LXCSpec{Config: map[string]any{"tags": []string{"web", "prod"}, "onboot": ptrTo(true),
				"nameserver": []string{"192.0.2.53", "192.0.2.54"}, "searchdomain": []string{"example.org"}}},
			cfg: cfgOf(map[string]string{"tags": "prod;web", "onboot": "0", "nameserver": "192.0.2.53", "searchdomain": "example.org"}),
			want: LXCPlan{Set: map[string]string{"onboot": "1", "nameserver": "192.0.2.53 192.0.2.54"},
				Fields: []string{"nameserver", "onboot"}},
		},
		"PendingValueCounts": {
			reason: "A value PVE holds pending is not sent again.",
			spec:   LXCSpec{Config: map[string]any{"memory": int64(2048)}},
			cfg:    GuestConfig{"memory": {Value: "1024", HasValue: true, Pending: "2048", HasPending: true}},
			want:   LXCPlan{Set: map[string]string{}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := DiffLXC(tc.spec, tc.cfg)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nDiffLXC(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestLXCCreateParams(t *testing.T) {
	swap := int64(512)
	spec := LXCSpec{Config: map[string]any{"hostname": "web", "cores": int32(2), "memory": int64(1024), "swap": &swap}, RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 8},
		Mounts: []LXCVolume{{Storage: "local-lvm", SizeGB: 2, Path: "/srv"}}, NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr0", "tag": int32(7), "ip": "dhcp"}}},
		Features: map[string]any{"nesting": true, "fuse": true}, AdditionalConfig: map[string]string{"onboot": "1"}}
	got := spec.CreateParams(LXCCreate{OSTemplate: "local:vztmpl/debian.tar.zst", Password: "hunter22", SSHKeys: []string{"ssh-ed25519 AAA a", "ssh-ed25519 BBB b"}, Description: "d"})
	want := map[string]string{
		"hostname": "web", "cores": "2", "memory": "1024", "swap": "512", "onboot": "1", "ostemplate": "local:vztmpl/debian.tar.zst",
		"unprivileged": "0", "password": "hunter22", "description": "d", "ssh-public-keys": "ssh-ed25519 AAA a\nssh-ed25519 BBB b",
		"rootfs": "local-lvm:8", "mp0": "local-lvm:2,mp=/srv", "net0": "name=eth0,bridge=vmbr0,ip=dhcp,tag=7", "features": "nesting=1,fuse=1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CreateParams: -want, +got:\n%s", diff)
	}
}

func TestOCIImageVolID(t *testing.T) {
	cases := map[string]struct{ storage, ref, want string }{
		"DockerHub":    {"local", "docker.io/library/nginx:1.27", "local:vztmpl/nginx_1.27.tar"},
		"RegistryPort": {"nfs", "registry.example:5000/team/app:v1.2-rc", "nfs:vztmpl/app_v1.2-rc.tar"},
		"NoHost":       {"local", "alpine:3.22", "local:vztmpl/alpine_3.22.tar"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := OCIImageVolID(tc.storage, tc.ref); got != tc.want {
				t.Errorf("OCIImageVolID(%q, %q) = %q, want %q", tc.storage, tc.ref, got, tc.want)
			}
		})
	}
}

// The simulator's answers, read through the client: the pulled file is
// where OCIImageVolID says, the interfaces of a running container carry its
// addresses, a linked clone takes the hostname, and the file is deleted.
func TestLXCAgainstSimulator(t *testing.T) {
	srv := startSim(t, pvesim.Options{})
	c, _ := simClient(t, srv, useToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	upid, err := c.PullOCIImage(ctx, "pve", "local", "docker.io/library/nginx:1.27")
	if err != nil {
		t.Fatal(err)
	}
	waitSimTask(ctx, t, c, upid)
	volid := OCIImageVolID("local", "docker.io/library/nginx:1.27")
	if ok, err := c.HasTemplateVolume(ctx, "pve", "local", volid); err != nil || !ok {
		t.Fatalf("HasTemplateVolume(%s) = %v, %v; want true", volid, ok, err)
	}
	ref := GuestRef{Type: LXC, Node: "pve", VMID: 150}
	upid, err = c.CreateGuest(ctx, ref, LXCSpec{NICs: []LXCNIC{{Options: map[string]any{"bridge": "vmbr0", "ip": "192.0.2.9/24"}}}, RootFS: &LXCVolume{Storage: "local-lvm", SizeGB: 2}}.
		CreateParams(LXCCreate{OSTemplate: volid, Unprivileged: true}))
	if err != nil {
		t.Fatal(err)
	}
	waitSimTask(ctx, t, c, upid)
	upid, err = c.StartGuest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	waitSimTask(ctx, t, c, upid)
	ifs, err := c.ContainerInterfaces(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if got := FirstIPv4(ifs); got != "192.0.2.9" {
		t.Errorf("FirstIPv4 = %q, want 192.0.2.9 (interfaces %+v)", got, ifs)
	}
	for _, a := range UsableAddresses(ifs) {
		if strings.HasPrefix(a, "127.") || strings.HasPrefix(a, "fe80:") || a == "::1" {
			t.Errorf("UsableAddresses kept %s", a)
		}
	}
	upid, err = c.DeleteVolume(ctx, "pve", "local", volid)
	if err != nil {
		t.Fatal(err)
	}
	waitSimTask(ctx, t, c, upid)
	if ok, _ := c.HasTemplateVolume(ctx, "pve", "local", volid); ok {
		t.Error("the volume is still there after DeleteVolume")
	}
}

func waitSimTask(ctx context.Context, t *testing.T, c *Client, upid string) {
	t.Helper()
	for ctx.Err() == nil {
		ts, err := c.TaskStatus(ctx, upid)
		if err != nil {
			t.Fatal(err)
		}
		if !ts.Running {
			if ts.Failed() {
				t.Fatalf("task %s failed: %s", upid, ts.ExitStatus)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s did not end", upid)
}
