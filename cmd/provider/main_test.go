/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package main

import (
	"os"
	"runtime/debug"
	"testing"
	"time"
)

func TestFlagDefaults(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := flags{
		syncPeriod: time.Hour, pollInterval: time.Minute, maxReconcileRate: 10,
		leaseDuration: time.Minute, renewDeadline: 50 * time.Second, retryPeriod: 2 * time.Second,
		enableManagementPolicies: true, metricsBindAddress: ":8080", healthProbeBindAddress: ":8081",
		changeLogsSocketPath: "/var/run/changelogs/changelogs.sock", pollJitterPercentage: 10,
	}
	if f != want {
		t.Errorf("defaults = %+v, want %+v", f, want)
	}
}

func TestFlags(t *testing.T) {
	f, err := parseFlags([]string{"--debug", "--poll=30s", "--sync=5m", "--max-reconcile-rate=3",
		"--leader-election", "--leader-election-lease-duration=15s", "--leader-election-renew-deadline=10s",
		"--leader-election-retry-period=1s", "--no-enable-management-policies", "--metrics-bind-address=0", "--health-probe-bind-address=:9000",
		"--enable-changelogs", "--changelogs-socket-path=/tmp/cl.sock", "--poll-jitter-percentage=25"})
	if err != nil {
		t.Fatal(err)
	}
	want := flags{
		debug: true, syncPeriod: 5 * time.Minute, pollInterval: 30 * time.Second, maxReconcileRate: 3,
		leaderElection: true, leaseDuration: 15 * time.Second, renewDeadline: 10 * time.Second, retryPeriod: time.Second,
		metricsBindAddress: "0", healthProbeBindAddress: ":9000",
		enableChangeLogs: true, changeLogsSocketPath: "/tmp/cl.sock", pollJitterPercentage: 25,
	}
	if f != want {
		t.Errorf("flags = %+v, want %+v", f, want)
	}
}

// Change logs are sent only when enabled, to the socket named.
func TestChangeLogsSocket(t *testing.T) {
	off := flags{changeLogsSocketPath: "/var/run/changelogs/changelogs.sock"}
	if got := off.changeLogsSocket(); got != "" {
		t.Errorf("disabled: changeLogsSocket() = %q, want none", got)
	}
	on := flags{enableChangeLogs: true, changeLogsSocketPath: "/tmp/cl.sock"}
	if got := on.changeLogsSocket(); got != "/tmp/cl.sock" {
		t.Errorf("enabled: changeLogsSocket() = %q, want /tmp/cl.sock", got)
	}
}

// The provider's GC target is 50 unless GOGC names one; Go reads GOGC itself
// at start, so a set GOGC is left alone.
func TestSetGCPercent(t *testing.T) {
	t.Setenv("GOGC", "80") // restores GOGC after the test
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if got := setGCPercent(); got != "80" {
		t.Errorf("with GOGC=80: setGCPercent() = %q, want \"80\"", got)
	}
	if was := debug.SetGCPercent(100); was != 100 {
		t.Errorf("with GOGC set, the GC target changed to %d", was)
	}

	if err := os.Unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	if got := setGCPercent(); got != "50" {
		t.Errorf("without GOGC: setGCPercent() = %q, want \"50\"", got)
	}
	if was := debug.SetGCPercent(100); was != defaultGCPercent {
		t.Errorf("without GOGC the GC target is %d, want %d", was, defaultGCPercent)
	}
}
