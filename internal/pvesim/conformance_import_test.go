package pvesim_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// import-from is checked as qemu-server's create checks it: only images or
// import volumes; an iso volume is a parameter error naming the drive; a
// filesystem path only for root@pam itself, never for a token.
func TestImportFromChecks(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	for _, v := range []string{"local:iso/debian-12.img", "local:import/debian-12.qcow2"} {
		if err := sim.AddFile("pve", v, 2<<30); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		reason  string
		auth    map[string]string
		scsi0   string
		status  int
		message string // the error message, or the errors.scsi0 entry for a 400
		size    string // the imported disk's size when accepted
	}{
		"ImportVolume": {
			reason: "An import volume is read into a new disk of its size.",
			auth:   tokenHeader(), scsi0: "local-lvm:0,import-from=local:import/debian-12.qcow2", status: 200, size: "size=2G",
		},
		"ISOVolume": {
			reason: "An iso volume is refused before any task, naming the drive.",
			auth:   tokenHeader(), scsi0: "local-lvm:0,import-from=local:iso/debian-12.img", status: 400,
			message: "local:iso/debian-12.img has wrong type 'iso' - needs to be 'images' or 'import'",
		},
		"PathWithAToken": {
			reason: "A token, even root@pam's, may not pass a filesystem path.",
			auth:   tokenHeader(), scsi0: "local-lvm:0,import-from=/var/lib/vz/template/iso/debian-12.img", status: 500,
			message: "Only root can pass arbitrary filesystem paths.",
		},
	}
	vmid := 800
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			vmid++
			r := rawCall(t, sim, "POST", "/nodes/pve/qemu", "application/x-www-form-urlencoded",
				form("vmid", strconv.Itoa(vmid), "scsi0", tc.scsi0), tc.auth)
			if r.Status != tc.status {
				t.Fatalf("%s\nstatus %d (%s), want %d", tc.reason, r.Status, r.Text, tc.status)
			}
			switch {
			case tc.status == 400 && r.errors()["scsi0"] != tc.message:
				t.Errorf("%s\nerrors.scsi0 = %q, want %q", tc.reason, r.errors()["scsi0"], tc.message)
			case tc.status == 500 && r.message() != tc.message+"\n" && r.message() != tc.message:
				t.Errorf("%s\nmessage = %q, want %q", tc.reason, r.message(), tc.message)
			case tc.status == 200:
				eventually(t, "the import", func() bool {
					g, ok := sim.Guest(vmid)
					return ok && g.Config["lock"] == "" && strings.Contains(g.Config["scsi0"], tc.size)
				})
			}
		})
	}
}

// root@pam itself (a ticket) may import from the path of a file.
func TestImportFromPathAsRoot(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddFile("pve", "local:iso/debian-12.img", 3<<30); err != nil {
		t.Fatal(err)
	}
	c := passwordClient(t, sim)
	task, err := c.NodeRef("pve").NewVirtualMachine(testCtx(t), 900,
		proxmox.VirtualMachineOption{Name: "scsi0", Value: "local-lvm:0,import-from=/var/lib/vz/template/iso/debian-12.img"})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("create as root@pam: %v", err)
	}
	if g, _ := sim.Guest(900); !strings.Contains(g.Config["scsi0"], "size=3G") {
		t.Fatalf("scsi0 = %q, want the 3G file imported", g.Config["scsi0"])
	}
}

// A storage configured without import content (PVE before 8.2, or import
// never enabled) says so in its status and refuses an import download, and
// an iso download's volume has the path root@pam may import from.
func TestStorageWithoutImportContent(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.SetStorageContent("local", "iso", "vztmpl", "backup"); err != nil {
		t.Fatal(err)
	}
	r := rawCall(t, sim, "GET", "/nodes/pve/storage/local/status", "", "", tokenHeader())
	var content string
	_ = json.Unmarshal(r.Body["data"], &struct {
		Content *string `json:"content"`
	}{&content})
	if r.Status != 200 || content != "iso,vztmpl,backup" {
		t.Fatalf("status %d content %q, want iso,vztmpl,backup", r.Status, content)
	}
	r = rawCall(t, sim, "POST", "/nodes/pve/storage/local/download-url", "application/x-www-form-urlencoded",
		form("content", "import", "filename", "noble.qcow2", "url", "https://cloud.example/noble.qcow2"), tokenHeader())
	if r.Status != 500 || !strings.Contains(r.message(), "storage 'local' is not configured for content-type 'import'") {
		t.Fatalf("import download: %d %q, want PVE's refusal", r.Status, r.message())
	}
	if err := sim.AddFile("pve", "local:iso/noble.img", 1<<30); err != nil {
		t.Fatal(err)
	}
	r = rawCall(t, sim, "GET", "/nodes/pve/storage/local/content/local:iso%2Fnoble.img", "", "", tokenHeader())
	var path string
	_ = json.Unmarshal(r.Body["data"], &struct {
		Path *string `json:"path"`
	}{&path})
	if path != "/var/lib/vz/template/iso/noble.img" {
		t.Fatalf("volume path %q (%s), want /var/lib/vz/template/iso/noble.img", path, r.Text)
	}
	if err := sim.SetStorageContent("nowhere", "iso"); err == nil {
		t.Error("setting the content of a storage that does not exist succeeded")
	}
}

// A template whose base volume a linked clone still uses cannot be
// destroyed: the qmdestroy task fails with pve-storage's reason.
func TestDestroyTemplateWithLinkedClone(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	if err := sim.AddTemplate("pve", 9000, "debian-12"); err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, sim)
	ctx := testCtx(t)
	tmpl := vmOf(t, c, "pve", 9000)
	_, task, err := tmpl.Clone(ctx, &proxmox.VirtualMachineCloneOptions{NewID: 101, Name: "linked", Full: proxmox.IntOrBool(false)})
	if err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("linked clone: %v", err)
	}
	task, err = tmpl.Delete(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantTaskFailure(t, c, task, "base volume 'local-lvm:base-9000-disk-0' is still in use by linked clones")
	if _, ok := sim.Guest(9000); !ok {
		t.Fatal("the template was removed")
	}
	clone := vmOf(t, c, "pve", 101)
	if task, err = clone.Delete(ctx, nil); err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("delete the clone: %v", err)
	}
	if task, err = tmpl.Delete(ctx, nil); err != nil || waitTask(t, c, task) != nil {
		t.Fatalf("delete the template once unused: %v", err)
	}
}
