package pveschema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/testenv/pveschema"
)

// recorder is a testing.TB that records how Read ended t instead of ending the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, _ ...any) {
	r.skipped = format
	panic(r)
}

func (r *recorder) Fatalf(format string, _ ...any) {
	r.failed = format
	panic(r)
}

// read runs pveschema.Read with a recorder, returning it and the data.
func read(t *testing.T) (rec *recorder, data []byte) {
	rec = &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil && v != rec {
			panic(v)
		}
	}()
	return rec, pveschema.Read(rec)
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	present := filepath.Join(dir, "apidata.json")
	if err := os.WriteFile(present, []byte("[]"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "absent.json")
	cases := map[string]struct {
		reason              string
		path, required      string
		wantData            string
		wantSkip, wantFatal bool
	}{
		"Present":           {reason: "a schema that is there is read", path: present, wantData: "[]"},
		"Unset":             {reason: "no schema configured skips", wantSkip: true},
		"Missing":           {reason: "a fresh clone (no ../shared) skips", path: missing, wantSkip: true},
		"MissingRequired":   {reason: "CI must not pass by skipping", path: missing, required: "1", wantFatal: true},
		"UnsetRequired":     {reason: "CI must not pass by skipping", required: "1", wantFatal: true},
		"PresentRequired":   {reason: "required and there is read", path: present, required: "1", wantData: "[]"},
		"UnreadableIsFatal": {reason: "a directory is there but is no schema", path: dir, wantFatal: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(pveschema.EnvVar, tc.path)
			t.Setenv(pveschema.RequiredEnvVar, tc.required)
			rec, data := read(t)
			if got := rec.skipped != ""; got != tc.wantSkip {
				t.Errorf("%s: skipped = %v (%q), want %v", tc.reason, got, rec.skipped, tc.wantSkip)
			}
			if got := rec.failed != ""; got != tc.wantFatal {
				t.Errorf("%s: failed = %v (%q), want %v", tc.reason, got, rec.failed, tc.wantFatal)
			}
			if string(data) != tc.wantData {
				t.Errorf("%s: data = %q, want %q", tc.reason, data, tc.wantData)
			}
			if tc.wantSkip && !strings.Contains(rec.skipped, "set %s to PVE's apidata.json") {
				t.Errorf("%s: the skip must say how to enable the check: %q", tc.reason, rec.skipped)
			}
		})
	}
}
