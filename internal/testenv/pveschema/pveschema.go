// Package pveschema gives tests the official Proxmox VE API schema (apidata.json), which the
// project does not ship (it is AGPL): PVE_API_SCHEMA names the file. Where it is absent (a
// fresh clone with no ../shared beside it) the tests that need it skip with one line saying
// how to enable them, so a user's `make test` passes; where it must be present (.ci/run sets
// PVE_API_SCHEMA_REQUIRED=1) its absence fails them instead, so CI cannot pass by skipping.
//
// Tests that use it are named ...PVESchema: .ci/run's schema-absent phase runs exactly those
// (go test -run 'PVESchema$') from a copy without the schema and checks that they skip.
package pveschema

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

const (
	// EnvVar names the schema file.
	EnvVar = "PVE_API_SCHEMA"
	// RequiredEnvVar set to 1 makes a missing schema a test failure instead of a skip.
	RequiredEnvVar = "PVE_API_SCHEMA_REQUIRED"
)

// Read returns the schema file's content. A schema that is not configured or not there skips
// t (fails it when RequiredEnvVar is 1); one that is there but unreadable fails t.
func Read(t testing.TB) []byte {
	t.Helper()
	path := os.Getenv(EnvVar)
	var data []byte
	err := errors.New(EnvVar + " is not set")
	if path != "" {
		data, err = os.ReadFile(path)
	}
	switch {
	case err == nil:
		return data
	case path != "" && !errors.Is(err, fs.ErrNotExist):
		t.Fatalf("read the PVE API schema %s: %v", path, err)
	case os.Getenv(RequiredEnvVar) == "1":
		t.Fatalf("%s=1 but the PVE API schema is missing (%v): point %s at PVE's apidata.json", RequiredEnvVar, err, EnvVar)
	default:
		t.Skipf("no PVE API schema (%v): set %s to PVE's apidata.json (make test uses ../shared/pve-api/apidata.json) to run this check", err, EnvVar)
	}
	return nil
}
