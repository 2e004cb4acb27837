package pveconformance

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// import-from is checked as qemu-server's create checks it
// (src/PVE/API2/Qemu.pm $check_storage_access): only images or import
// volumes, an iso volume being a parameter error naming the drive ("$src_image
// has wrong type '$vtype' - needs to be 'images' or 'import'"); a
// filesystem path only for root@pam itself, never for a token (pve-storage
// src/PVE/Storage.pm check_volume_access: "Only root can pass arbitrary
// filesystem paths.", a die without "\n").
func TestImportFromChecks(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu vmid scsi[n]")
	iso := tg.ContentStorage() + ":iso/" + Prefix + "debian-12.img"
	imp := tg.ContentStorage() + ":import/" + Prefix + "debian-12.qcow2"
	sim, isSim := tg.Sim()
	if isSim {
		if err := sim.AddFile(tg.Node(), imp, 2<<30); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		reason    string
		scsi0     string
		status    int
		message   string // the error message, or the errors.scsi0 entry for a 400
		size      string // the imported disk's size when accepted
		simOnly   string
		tokenOnly bool
	}{
		"ImportVolume": {
			reason: "An import volume is read into a new disk of its size.",
			scsi0:  tg.Storage() + ":0,import-from=" + imp, status: 200, size: "size=2G",
			simOnly: "needs a 2 GiB image on an import storage",
		},
		"ISOVolume": {
			reason: "An iso volume is refused before any task, naming the drive.",
			scsi0:  tg.Storage() + ":0,import-from=" + iso, status: 400,
			message: iso + " has wrong type 'iso' - needs to be 'images' or 'import'",
		},
		"PathWithAToken": {
			reason: "A token, even root@pam's, may not pass a filesystem path.",
			scsi0:  tg.Storage() + ":0,import-from=/var/lib/vz/template/iso/" + Prefix + "debian-12.img", status: 500,
			message: "Only root can pass arbitrary filesystem paths.", tokenOnly: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tg := tg.in(t)
			if tc.simOnly != "" && !isSim {
				t.Skipf("needs the simulator: %s", tc.simOnly)
			}
			if tc.tokenOnly && tg.Config().TokenID == "" {
				t.Skip("needs an API token: root@pam's password may pass a path")
			}
			id := tg.vmid()
			r := tg.raw(http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", Params("vmid", strconv.Itoa(id),
				"name", tg.GuestName("import"), "pool", tg.Pool(), "scsi0", tc.scsi0))
			if r.Status == http.StatusOK {
				t.Cleanup(func() { tg.destroy("qemu", id) })
			}
			if r.Status != tc.status {
				t.Fatalf("%s\nstatus %s (%s), want %d", tc.reason, r.StatusLine, r.Text, tc.status)
			}
			switch {
			case tc.status == 400 && r.Errors()["scsi0"] != tc.message:
				t.Errorf("%s\nerrors.scsi0 = %q, want %q", tc.reason, r.Errors()["scsi0"], tc.message)
			case tc.status == 500 && strings.TrimSuffix(r.Message(), "\n") != tc.message && !strings.HasPrefix(r.Message(), tc.message+" at "):
				t.Errorf("%s\nmessage = %q, want %q", tc.reason, r.Message(), tc.message)
			case tc.status == 200:
				if exit := tg.task(r.UPID()); exit != "OK" {
					t.Fatalf("%s\nimport ended %q", tc.reason, exit)
				}
				var cfg map[string]any
				tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
				if s, _ := cfg["scsi0"].(string); !strings.Contains(s, tc.size) {
					t.Errorf("%s\nscsi0 = %q, want %s", tc.reason, s, tc.size)
				}
			}
		})
	}
}

// root@pam itself (a ticket) may import from the path of a file
// (pve-storage src/PVE/Storage.pm check_volume_access allows a path to
// root@pam).
func TestImportFromPathAsRoot(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("needs a 3 GiB image at a path on the node")
	if err := sim.AddFile(tg.Node(), tg.ContentStorage()+":iso/debian-12.img", 3<<30); err != nil {
		t.Fatal(err)
	}
	cl, err := tg.PasswordClient()
	if err != nil {
		t.Fatal(err)
	}
	id := tg.vmid()
	var upid string
	if err := cl.Post(tg.ctx(), "/nodes/"+url.PathEscape(tg.Node())+"/qemu", map[string]any{"vmid": id,
		"scsi0": tg.Storage() + ":0,import-from=/var/lib/vz/template/iso/debian-12.img"}, &upid); err != nil {
		t.Fatalf("create as root@pam: %v", err)
	}
	if exit := tg.task(upid); exit != "OK" {
		t.Fatalf("create as root@pam ended %q", exit)
	}
	var cfg map[string]any
	tg.data(tg.guestPath("qemu", id, "/config"), nil, &cfg)
	if s, _ := cfg["scsi0"].(string); !strings.Contains(s, "size=3G") {
		t.Fatalf("scsi0 = %q, want the 3G file imported", s)
	}
}

// A storage configured without import content (PVE before 8.2, or import
// never enabled) says so in its status (pve-storage src/PVE/API2/Storage/Status.pm
// read_status) and refuses an import download before any task (download_url:
// "storage '$storage' is not configured for content-type '$content'"), and an
// iso volume's info has the path root@pam may import from
// (src/PVE/API2/Storage/Content.pm info: path from PVE::Storage::path).
func TestStorageWithoutImportContent(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("changes the content types of a storage")
	covers(tg, "GET /nodes/{node}/storage/{storage}/status", "GET /nodes/{node}/storage/{storage}/content/{volume}")
	st := tg.ContentStorage()
	if err := sim.SetStorageContent(st, "iso", "vztmpl", "backup"); err != nil {
		t.Fatal(err)
	}
	var status struct {
		Content string `json:"content"`
	}
	tg.data(tg.storagePath(st, "/status"), nil, &status)
	if status.Content != "iso,vztmpl,backup" {
		t.Fatalf("content %q, want iso,vztmpl,backup", status.Content)
	}
	r := tg.raw(http.MethodPost, tg.storagePath(st, "/download-url"), Params("content", "import", "filename", "noble.qcow2", "url", "https://cloud.example/noble.qcow2"))
	if r.Status != http.StatusInternalServerError || !strings.Contains(r.Message(), "storage '"+st+"' is not configured for content-type 'import'") {
		t.Fatalf("import download: %s %q, want PVE's refusal", r.StatusLine, r.Message())
	}
	if err := sim.AddFile(tg.Node(), st+":iso/noble.img", 1<<30); err != nil {
		t.Fatal(err)
	}
	var info struct {
		Path string `json:"path"`
	}
	tg.data(tg.storagePath(st, "/content/"+url.PathEscape(st+":iso/noble.img")), nil, &info)
	if info.Path != "/var/lib/vz/template/iso/noble.img" {
		t.Fatalf("volume path %q, want /var/lib/vz/template/iso/noble.img", info.Path)
	}
	if err := sim.SetStorageContent("nowhere", "iso"); err == nil {
		t.Error("setting the content of a storage that does not exist succeeded")
	}
}

// A template whose base volume a linked clone still uses cannot be
// destroyed: qemu-server src/PVE/QemuServer.pm destroy_vm dies "base volume
// '$volid' is still in use by linked cloned" (sic) inside the qmdestroy
// task, and the template stays. The simulator says "clones" (and the
// provider's template tests match that), so only the text up to the last
// word is compared here.
func TestDestroyTemplateWithLinkedClone(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/qemu/{vmid}/template", "POST /nodes/{node}/qemu/{vmid}/clone newid name full pool",
		"DELETE /nodes/{node}/qemu/{vmid}")
	tmpl := tg.createVM("basetmpl")
	if r := tg.raw(http.MethodPost, tg.guestPath("qemu", tmpl, "/template"), nil); r.Status != http.StatusOK {
		t.Fatalf("template: %s %s", r.StatusLine, r.Text)
	} else if upid := r.UPID(); upid != "" {
		tg.task(upid)
	}
	var cfg map[string]any
	tg.data(tg.guestPath("qemu", tmpl, "/config"), nil, &cfg)
	base, _, _ := strings.Cut(cfg["scsi0"].(string), ",")
	clone := tg.vmid()
	tg.mustTask(http.MethodPost, tg.guestPath("qemu", tmpl, "/clone"), Params("newid", strconv.Itoa(clone), "name", tg.GuestName("linked"),
		"full", "0", "pool", tg.Pool()))
	r := tg.raw(http.MethodDelete, tg.guestPath("qemu", tmpl, ""), nil)
	if r.Status != http.StatusOK {
		t.Fatalf("destroy the template: %s %s", r.StatusLine, r.Text)
	}
	if exit, want := tg.task(r.UPID()), "base volume '"+base+"' is still in use by linked cloned"; !strings.HasPrefix(exit, want) {
		t.Errorf("destroy of a used template ended %q, want %q…", exit, want)
	}
	if !tg.guestExists("qemu", tmpl) {
		t.Fatal("the template was removed")
	}
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", clone, ""), nil)
	tg.mustTask(http.MethodDelete, tg.guestPath("qemu", tmpl, ""), nil)
}
