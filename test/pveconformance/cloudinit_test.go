package pveconformance

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// cicustom names snippet volumes by volume ID: qemu-server's
// $cicustom_fmt (src/PVE/QemuServer.pm) gives meta, network, user and
// vendor the pve-volume-id format (pve-storage src/PVE/Storage/Plugin.pm
// parse_volume_id), checked when the config is written (create_vm,
// update_vm: PVE::JSONSchema check_format); the file itself is only read
// when the cloud-init drive is generated at start
// (src/PVE/QemuServer/Cloudinit.pm), so create, PUT and POST config take it
// and read it back as sent, and a value that is no volume ID is a 400 on
// cicustom. The simulator holds the snippet too, as a real node would
// before such a guest starts.
func TestQemuCicustomSnippets(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu cicustom", "PUT /nodes/{node}/qemu/{vmid}/config cicustom",
		"POST /nodes/{node}/qemu/{vmid}/config cicustom")
	snippet := tg.ContentStorage() + ":snippets/" + Prefix + "user.yaml"
	if sim, ok := tg.Sim(); ok {
		if err := sim.AddFile(tg.Node(), snippet, 512); err != nil {
			t.Fatal(err)
		}
	}
	first := "user=" + snippet
	id := tg.createVM("cicustom", "cicustom", first)
	readBack := func(want string) {
		t.Helper()
		var cfg map[string]any
		tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
		if cfg["cicustom"] != want {
			t.Errorf("cicustom reads back %v, want %q", cfg["cicustom"], want)
		}
	}
	readBack(first)
	second := "user=" + snippet + ",vendor=" + snippet
	if res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("cicustom", second)); res.Status != http.StatusOK {
		t.Fatalf("PUT config: %s %s", res.StatusLine, res.Text)
	}
	readBack(second)
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", id, "/config"), Params("cicustom", first))
	readBack(first)
	res := tg.raw(http.MethodPut, tg.guestPath("qemu", id, "/config"), Params("cicustom", "user="+Prefix+"user.yaml"))
	if res.Status != http.StatusBadRequest || !strings.Contains(res.Errors()["cicustom"], "unable to parse volume ID") {
		t.Errorf("a user part that is no volume ID: %s %s", res.StatusLine, res.Text)
	}
}
