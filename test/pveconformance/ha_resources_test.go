package pveconformance

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// HA resources (pve-ha-manager src/PVE/API2/HA/Resources.pm over src/PVE/HA/Config.pm):
// create stores only the options given and GET answers them with sid, type and the
// resources.cfg digest (api_copy_config); a bare VMID is parsed to its sid (parse_sid); a
// sid defined twice, an unknown guest, a wrong type, a stale digest and deleting a sid not
// configured are refused with PVE's texts; destroying the guest without purge is refused
// (qemu-server PVE/API2/Qemu.pm destroy_vm: "used in HA resources and purge parameter not set").
// Numbers are compared as text: the section's values may come back as strings.
func TestHAResourceLifecycle(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /cluster/ha/resources sid state max_restart max_relocate failback", "GET /cluster/ha/resources/{sid}",
		"PUT /cluster/ha/resources/{sid} state max_restart max_relocate failback digest delete", "GET /cluster/ha/resources type",
		"DELETE /cluster/ha/resources/{sid}")
	id := tg.createVM("ha")
	sid := "vm:" + itoa(id)
	if res := tg.raw(http.MethodPost, "/cluster/ha/resources", Params("sid", itoa(id), "state", "stopped", "max_restart", "2", "max_relocate", "0", "failback", "0")); res.Status != http.StatusOK {
		t.Fatalf("create: %s %s", res.StatusLine, res.Text)
	}
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		_, _ = tg.Raw(ctx, http.MethodDelete, "/cluster/ha/resources/"+sid, nil)
	})
	var got map[string]any
	tg.data("/cluster/ha/resources/"+sid, nil, &got)
	if got["sid"] != sid || got["type"] != "vm" || got["state"] != "stopped" || fmt.Sprint(got["max_restart"]) != "2" || fmt.Sprint(got["max_relocate"]) != "0" || fmt.Sprint(got["failback"]) != "0" || got["comment"] != nil || got["digest"] == nil {
		t.Fatalf("read after create: %v", got)
	}
	refusals := []struct {
		reason, method, path string
		params               []string
		want                 string
	}{
		{"A sid defined twice is refused", http.MethodPost, "/cluster/ha/resources", []string{"sid", sid},
			"create resource failed: resource ID '" + sid + "' already defined\n"},
		{"A guest of the other type is not a CT", http.MethodPost, "/cluster/ha/resources", []string{"sid", "ct:" + itoa(id)},
			"resource 'ct:" + itoa(id) + "' - guest with ID " + itoa(id) + " is not a CT\n"},
		{"A stale digest is refused", http.MethodPut, "/cluster/ha/resources/" + sid, []string{"max_relocate", "3", "digest", "0000000000000000000000000000000000000000"},
			"update resources config failed: detected modified configuration - file changed by other user? Try again.\n"},
		{"The guest cannot be destroyed without purge", http.MethodDelete, tg.guestPath("qemu", id, ""), nil,
			"unable to remove VM " + itoa(id) + " - used in HA resources and purge parameter not set.\n"},
	}
	for _, rc := range refusals {
		t.Run(rc.reason, func(t *testing.T) {
			res := tg.in(t).raw(rc.method, rc.path, Params(rc.params...))
			if res.Status != http.StatusInternalServerError || res.Message() != rc.want {
				t.Errorf("%s %s: %s %q, want 500 %q", rc.method, rc.path, res.StatusLine, res.Message(), rc.want)
			}
		})
	}
	if res := tg.raw(http.MethodPut, "/cluster/ha/resources/"+sid, Params("state", "started", "max_restart", "4", "failback", "1",
		"max_relocate", "3", "digest", got["digest"].(string), "delete", "comment")); res.Status != http.StatusOK {
		t.Fatalf("update: %s %s", res.StatusLine, res.Text)
	}
	var list []map[string]any
	tg.data("/cluster/ha/resources", Params("type", "vm"), &list)
	var row map[string]any
	for _, r := range list {
		if r["sid"] == sid {
			row = r
		}
	}
	if row == nil || fmt.Sprint(row["max_relocate"]) != "3" || fmt.Sprint(row["max_restart"]) != "4" || row["state"] != "started" || fmt.Sprint(row["failback"]) != "1" {
		t.Fatalf("listed after update: %v", row)
	}
	if res := tg.raw(http.MethodDelete, "/cluster/ha/resources/"+sid, nil); res.Status != http.StatusOK {
		t.Fatalf("delete: %s %s", res.StatusLine, res.Text)
	}
	res := tg.raw(http.MethodDelete, "/cluster/ha/resources/"+sid, nil)
	if want := "cannot delete service '" + sid + "', not HA managed!\n"; res.Message() != want {
		t.Errorf("second delete: %s %q, want %q", res.StatusLine, res.Message(), want)
	}
	res = tg.raw(http.MethodGet, "/cluster/ha/resources/"+sid, nil)
	if want := "no such resource '" + sid + "'\n"; res.Message() != want {
		t.Errorf("read after delete: %s %q, want %q", res.StatusLine, res.Message(), want)
	}
}
