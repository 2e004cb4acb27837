package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// guestExists reports whether vmid has a config on the target's node.
func (c *tcase) guestExists(kind string, vmid int) bool {
	c.t.Helper()
	return c.raw(http.MethodGet, c.guestPath(kind, vmid, "/config"), nil).Status == http.StatusOK
}

// create_vm checks the ostemplate's volume name synchronously (none of
// these checks reads the file); whether the file is there is only found by
// the vzcreate worker.
func TestLXCCreateOSTemplateChecks(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate rootfs")
	iso := tg.ContentStorage() + ":iso/" + Prefix + "debian-12.iso"
	vztmpl := tg.ContentStorage() + ":vztmpl/" + Prefix + "debian-12-standard_12.7-1_amd64.tar.zst"
	cases := []struct {
		reason    string
		params    []string
		message   string // prefix of the 500's message
		tokenOnly bool
	}{
		{
			// pve-container src/PVE/API2/LXC.pm, create_vm: check_volume_access($rpcenv, ..., $ostemplate, 'vztmpl');
			// pve-storage src/PVE/Storage.pm, check_volume_access: "unable to use volume $volid - content type needs to be '$type'\n".
			reason:  "an ISO is not a container template",
			params:  []string{"ostemplate", iso},
			message: "unable to use volume " + iso + " - content type needs to be 'vztmpl'\n",
		},
		{
			// pve-container src/PVE/API2/LXC.pm, create_vm: $content_type = $restore ? 'backup' : 'vztmpl'.
			reason:  "a restore wants a backup archive, the file need not exist for this check",
			params:  []string{"ostemplate", vztmpl, "restore", "1"},
			message: "unable to use volume " + vztmpl + " - content type needs to be 'backup'\n",
		},
		{
			// pve-storage src/PVE/Storage.pm, check_volume_access -> parse_volname -> storage_config:
			// "storage '$storeid' does not exist\n".
			reason:  "the template's storage must exist",
			params:  []string{"ostemplate", "pvecfnope:vztmpl/x.tar.zst"},
			message: "storage 'pvecfnope' does not exist\n",
		},
		{
			// pve-storage src/PVE/Storage.pm, check_volume_access: a path (no volume ID) is for
			// root@pam only; an API token of root@pam is another user. PVE's die has no "\n", so
			// Perl appends " at ... line N.": only the text's start is fixed.
			reason:    "a filesystem path is refused to an API token",
			params:    []string{"ostemplate", "/var/lib/vz/template/cache/x.tar.zst"},
			message:   "Only root can pass arbitrary filesystem paths.",
			tokenOnly: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			tg := tg.in(t)
			if tc.tokenOnly && tg.Config().TokenID == "" {
				t.Skip("needs an API token: root@pam's password may pass a path")
			}
			id := tg.vmid()
			res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/lxc", Params(append([]string{"vmid", strconv.Itoa(id),
				"hostname", tg.GuestName("tmplcheck"), "pool", tg.Pool(), "rootfs", tg.Storage() + ":4"}, tc.params...)...))
			if res.Status != http.StatusInternalServerError || !strings.HasPrefix(res.Message(), tc.message) {
				t.Errorf("%s: POST lxc = %s %q, want 500 %q", tc.reason, res.StatusLine, res.Message(), tc.message)
			}
			if tg.guestExists("lxc", id) {
				t.Cleanup(func() { tg.destroy("lxc", id) })
				t.Errorf("%s: a refused create must not reserve the VMID", tc.reason)
			}
		})
	}
}

// A missing template file fails the task, not the request.
func TestLXCCreateMissingTemplateFailsTheTask(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/lxc vmid ostemplate rootfs")
	missing := tg.ContentStorage() + ":vztmpl/" + Prefix + tg.RunID() + "-missing.tar.zst"
	id := tg.vmid()
	// pve-container src/PVE/API2/LXC.pm, create_vm: the request only checks the volume name
	// (check_volume_access) and forks vzcreate, so it answers a UPID.
	res := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/lxc", Params("vmid", strconv.Itoa(id),
		"hostname", tg.GuestName("missingtmpl"), "pool", tg.Pool(), "ostemplate", missing, "rootfs", tg.Storage()+":4"))
	if res.Status != http.StatusOK {
		t.Fatalf("a missing template is no request error: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() { tg.destroy("lxc", id) })
	// pve-container src/PVE/LXC/Create.pm, restore_archive -> pve-storage src/PVE/Storage.pm,
	// abs_filesystem_path: "can't find file '$volid'\n"; create_vm's worker dies "$emsg $err"
	// with $emsg "unable to create CT $vmid -".
	want := "unable to create CT " + strconv.Itoa(id) + " - can't find file '" + missing + "'"
	if exit := tg.task(res.UPID()); exit != want {
		t.Errorf("exitstatus %q, want %q", exit, want)
	}
	// pve-container src/PVE/API2/LXC.pm, create_vm: the disks were created before the archive
	// was read; on error destroy_disks frees them and destroy_config removes the config.
	if tg.guestExists("lxc", id) {
		t.Error("the failed create must remove the config")
	}
	var content []map[string]any
	tg.data(tg.storagePath(tg.Storage(), "/content"), nil, &content)
	for _, v := range content {
		if s, _ := v["volid"].(string); strings.Contains(s, "-"+strconv.Itoa(id)+"-disk-") {
			t.Errorf("volume left: %v", v)
		}
	}
}
