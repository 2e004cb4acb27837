package pvesim_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// downloadOutcome is how a download-url request ended: the answer, and for a
// started task its exit status and log.
type downloadOutcome struct {
	res        rawResponse
	exitStatus string
	log        []string
}

// postDownload sends download-url to storage local of node pve and waits for
// the task it starts.
func postDownload(t *testing.T, sim *pvesim.Server, kv ...string) downloadOutcome {
	t.Helper()
	res := rawCall(t, sim, http.MethodPost, "/nodes/pve/storage/local/download-url", "application/x-www-form-urlencoded", form(kv...), tokenHeader())
	out := downloadOutcome{res: res}
	if res.Status != http.StatusOK {
		return out
	}
	var upid string
	if err := jsonUnmarshal(res.Body["data"], &upid); err != nil {
		t.Fatalf("download-url answered %s, want a UPID", res.Text)
	}
	c := tokenClient(t, sim)
	task := proxmox.NewTask(proxmox.UPID(upid), c)
	err := waitTask(t, c, task)
	var failed *proxmox.TaskFailedError
	switch {
	case errors.As(err, &failed):
		out.exitStatus = failed.ExitStatus
	case err != nil:
		t.Fatalf("waiting for %s: %v", upid, err)
	default:
		out.exitStatus = "OK"
	}
	lines, err := task.Log(testCtx(t), 0, 50)
	if err != nil {
		t.Fatalf("task log: %v", err)
	}
	for i := 0; i < len(lines); i++ {
		out.log = append(out.log, lines[i])
	}
	return out
}

// checksum and checksum-algorithm each `requires` the other in download_url's
// schema (pve-storage src/PVE/API2/Storage/Status.pm, download_url); pve-common
// src/PVE/JSONSchema.pm check_object reports the absent one: a 400 "Parameter
// verification failed." whose errors map names it with "missing property
// required by '<given>'". No task starts.
func TestDownloadURLChecksumRequiresItsAlgorithm(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	cases := map[string]struct {
		reason string
		params []string
		want   map[string]string
	}{
		"ChecksumAlone": {
			reason: "checksum requires checksum-algorithm (JSONSchema.pm check_object).",
			params: []string{"checksum", "0123abcd"},
			want:   map[string]string{"checksum-algorithm": "missing property required by 'checksum'"},
		},
		"AlgorithmAlone": {
			reason: "checksum-algorithm requires checksum (JSONSchema.pm check_object).",
			params: []string{"checksum-algorithm", "sha256"},
			want:   map[string]string{"checksum": "missing property required by 'checksum-algorithm'"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			kv := append([]string{"content", "iso", "filename", "a.iso", "url", "https://x.example/a.iso"}, tc.params...)
			out := postDownload(t, sim, kv...)
			if out.res.Status != http.StatusBadRequest || out.res.message() != "Parameter verification failed.\n" {
				t.Fatalf("%s\nanswer %d %q, want 400 Parameter verification failed.", tc.reason, out.res.Status, out.res.message())
			}
			got := out.res.errors()
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s\nerrors[%q] = %q, want %q (all: %v)", tc.reason, k, got[k], v, got)
				}
			}
		})
	}
}

// pve-common src/PVE/Tools.pm download_file_from_url prints "downloading $url
// to $dest", then, when $dest exists: without a checksum dies "refusing to
// override existing file '$dest'" (download_url sets no allow_overwrite); with
// one it hashes the file there: the same checksum ends the task OK without a
// download, another dies "checksum mismatch: got '...' != expect '...', aborting".
// The file is never replaced. $dest is get_iso_dir's path plus the file name
// (pve-storage src/PVE/API2/Storage/Status.pm, download_url).
func TestDownloadURLOntoAnExistingFile(t *testing.T) {
	const (
		volid = "local:iso/debian-12.iso"
		dest  = "/var/lib/vz/template/iso/debian-12.iso"
		url   = "https://cdimage.example/debian-12.iso"
	)
	cases := map[string]struct {
		reason   string
		checksum func(sim *pvesim.Server) string
		want     string
	}{
		"NoChecksum": {
			reason: "download_file_from_url: die \"refusing to override existing file '$dest'\".",
			want:   "refusing to override existing file '" + dest + "'",
		},
		"SameChecksum": {
			reason:   "download_file_from_url: \"OK, got correct file already, no need to download\".",
			checksum: func(sim *pvesim.Server) string { return sim.ExistingFileChecksum("pve", volid, "sha256") },
			want:     "OK",
		},
		"OtherChecksum": {
			reason:   "download_file_from_url: die \"checksum mismatch: got '...' != expect '...', aborting\".",
			checksum: func(*pvesim.Server) string { return "0123abcd" },
			want:     "checksum mismatch: got '",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sim := startSim(t, pvesim.Options{})
			if err := sim.AddFile("pve", volid, 12345); err != nil {
				t.Fatal(err)
			}
			kv := []string{"content", "iso", "filename", "debian-12.iso", "url", url}
			if tc.checksum != nil {
				kv = append(kv, "checksum", tc.checksum(sim), "checksum-algorithm", "sha256")
			}
			out := postDownload(t, sim, kv...)
			if out.res.Status != http.StatusOK {
				t.Fatalf("%s\nanswer %d %q, want a UPID: the file is found by the worker", tc.reason, out.res.Status, out.res.Text)
			}
			if !strings.HasPrefix(out.exitStatus, tc.want) {
				t.Errorf("%s\nexit status %q, want %q...", tc.reason, out.exitStatus, tc.want)
			}
			if tc.checksum != nil && tc.want != "OK" && !strings.HasSuffix(out.exitStatus, "' != expect '0123abcd', aborting") {
				t.Errorf("%s\nexit status %q, want it to end \"!= expect '0123abcd', aborting\"", tc.reason, out.exitStatus)
			}
			if len(out.log) == 0 || out.log[0] != "downloading "+url+" to "+dest {
				t.Errorf("%s\nlog %q, want it to start with \"downloading %s to %s\"", tc.reason, out.log, url, dest)
			}
			content, err := tokenClient(t, sim).NodeRef("pve").StorageRef("local").GetContent(testCtx(t))
			if err != nil || len(content) != 1 || content[0].Size != 12345 {
				t.Errorf("%s\ncontent %v %+v, want the file there before, untouched", tc.reason, err, content)
			}
		})
	}
}
