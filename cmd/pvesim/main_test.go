package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStartSeedsAndPrintsAConnection(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	sim, err := start([]string{
		"--listen", "127.0.0.1:0", "--nodes", "pve,lowtower", "--token", "root@pam!kubemox=s3cret", "--user", "root@pam:pw",
		"--template", "9000:debian-12@pve", "--ct-template", "9100:debian-ct@lowtower",
		"--ostemplate", "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst@pve", "--iso", "local:iso/debian.iso@pve",
		"--task-duration", "50ms,qmclone=2s", "--ca-out", filepath.Join(dir, "ca.pem"), "--state", filepath.Join(dir, "state.json"),
	}, &out, io.Discard)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer sim.Close()
	text := out.String()
	for _, want := range []string{"apiVersion: proxmox.alperen.cloud/v1alpha1", "kind: ProxmoxConnection", "endpoint: " + sim.URL(),
		`tokenID: "root@pam!kubemox"`, "secretFrom:", "caBundle: |", "    -----BEGIN CERTIFICATE-----", `secret: "s3cret"`} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil || !bytes.Equal(ca, sim.CAPEM()) {
		t.Fatalf("--ca-out: %v", err)
	}
	if g, ok := sim.Guest(9000); !ok || !g.Template || g.Kind != "qemu" || g.Node != "pve" {
		t.Fatalf("VM template: %+v", g)
	}
	if g, ok := sim.Guest(9100); !ok || !g.Template || g.Kind != "lxc" || g.Node != "lowtower" {
		t.Fatalf("container template: %+v", g)
	}
}

func TestRepeatedListenServesOneClusterAndListsEndpoints(t *testing.T) {
	var out bytes.Buffer
	sim, err := start([]string{"--listen", "127.0.0.1:0", "--listen", "127.0.0.1:0", "--user", "root@pam:pw"}, &out, io.Discard)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer sim.Close()
	urls := sim.URLs()
	if len(urls) != 2 || urls[0] == urls[1] {
		t.Fatalf("URLs = %v, want two listeners", urls)
	}
	text := out.String()
	for _, want := range []string{"endpoint: " + urls[0], "endpoints:\n  - " + urls[1] + "\n", "and at " + urls[1] + "/api2/json"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}

func TestParseDurationsAndBadFlags(t *testing.T) {
	d, err := parseDurations([]string{"2s", "qmclone=5s,qmstart=1s"})
	if err != nil || d[""] != 2*time.Second || d["qmclone"] != 5*time.Second || d["qmstart"] != time.Second {
		t.Fatalf("durations: %v %v", d, err)
	}
	if _, err := parseDurations([]string{"qmclone=soon"}); err == nil {
		t.Fatal("want an error for a bad duration")
	}
	for _, args := range [][]string{
		{"--listen", "127.0.0.1:0", "--user", "nobody"},
		{"--listen", "127.0.0.1:0", "--token", "root@pam-no-id=x"},
		{"--listen", "127.0.0.1:0", "--template", "abc:name@pve"},
		{"--listen", "127.0.0.1:0", "--template", "9000:name@nowhere"},
	} {
		if sim, err := start(args, io.Discard, io.Discard); err == nil {
			sim.Close()
			t.Errorf("%v: want an error", args)
		}
	}
}
