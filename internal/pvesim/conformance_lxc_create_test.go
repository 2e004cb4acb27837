package pvesim_test

import (
	"net/http"
	"strings"
	"testing"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// create_vm checks the ostemplate's volume name synchronously; whether the file is there
// is only found by the vzcreate worker.
func TestLXCCreateOSTemplateChecks(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddVolume("pve", "local:iso/debian-12.iso"); err != nil {
		t.Fatal(err)
	}
	h := tokenHeader()
	cases := []struct {
		reason  string
		params  []string
		message string // prefix of the 500's message
	}{
		{
			// pve-container src/PVE/API2/LXC.pm, create_vm: check_volume_access($rpcenv, ..., $ostemplate, 'vztmpl');
			// pve-storage src/PVE/Storage.pm, check_volume_access: "unable to use volume $volid - content type needs to be '$type'\n".
			reason:  "an ISO is not a container template",
			params:  []string{"ostemplate", "local:iso/debian-12.iso"},
			message: "unable to use volume local:iso/debian-12.iso - content type needs to be 'vztmpl'\n",
		},
		{
			// pve-container src/PVE/API2/LXC.pm, create_vm: $content_type = $restore ? 'backup' : 'vztmpl'.
			reason:  "a restore wants a backup archive, the file need not exist for this check",
			params:  []string{"ostemplate", "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst", "restore", "1"},
			message: "unable to use volume local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst - content type needs to be 'backup'\n",
		},
		{
			// pve-storage src/PVE/Storage.pm, check_volume_access -> parse_volname -> storage_config:
			// "storage '$storeid' does not exist\n".
			reason:  "the template's storage must exist",
			params:  []string{"ostemplate", "nope:vztmpl/x.tar.zst"},
			message: "storage 'nope' does not exist\n",
		},
		{
			// pve-storage src/PVE/Storage.pm, check_volume_access: a path (no volume ID) is for
			// root@pam only; an API token of root@pam is another user. PVE's die has no "\n", so
			// Perl appends " at ... line N.": only the text's start is fixed.
			reason:  "a filesystem path is refused to an API token",
			params:  []string{"ostemplate", "/var/lib/vz/template/cache/x.tar.zst"},
			message: "Only root can pass arbitrary filesystem paths.",
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			body := form(append([]string{"vmid", "210", "rootfs", "local-lvm:4"}, tc.params...)...)
			res := rawCall(t, sim, http.MethodPost, "/nodes/pve/lxc", "application/x-www-form-urlencoded", body, h)
			if res.Status != http.StatusInternalServerError || !strings.HasPrefix(res.message(), tc.message) {
				t.Errorf("%s: POST lxc = %d %q, want 500 %q", tc.reason, res.Status, res.message(), tc.message)
			}
			if _, ok := sim.Guest(210); ok {
				t.Errorf("%s: a refused create must not reserve the VMID", tc.reason)
			}
		})
	}
}

func TestLXCCreateMissingTemplateFailsTheTask(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	const missing = "local:vztmpl/missing.tar.zst"
	// pve-container src/PVE/API2/LXC.pm, create_vm: the request only checks the volume name
	// (check_volume_access) and forks vzcreate, so go-proxmox gets a UPID.
	task, err := c.NodeRef("pve").NewContainer(ctx, 211, ctOpt("ostemplate", missing), ctOpt("rootfs", "local-lvm:4"))
	if err != nil {
		t.Fatalf("a missing template is no request error: %v", err)
	}
	// pve-container src/PVE/LXC/Create.pm, restore_archive -> pve-storage src/PVE/Storage.pm,
	// abs_filesystem_path: "can't find file '$volid'\n"; create_vm's worker dies "$emsg $err"
	// with $emsg "unable to create CT $vmid -".
	want := "unable to create CT 211 - can't find file '" + missing + "'"
	if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("task: %v, want a failure %q", err, want)
	}
	if task.ExitStatus != want {
		t.Errorf("exitstatus %q, want %q", task.ExitStatus, want)
	}
	// pve-container src/PVE/API2/LXC.pm, create_vm: the disks were created before the archive
	// was read; on error destroy_disks frees them and destroy_config removes the config.
	if _, ok := sim.Guest(211); ok {
		t.Error("the failed create must remove the config")
	}
	var content []map[string]any
	if err := c.Get(ctx, "/nodes/pve/storage/local-lvm/content", &content); err != nil || len(content) != 0 {
		t.Errorf("volumes left: %v %v", err, content)
	}
}
