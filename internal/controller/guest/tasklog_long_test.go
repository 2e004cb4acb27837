package guest

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A failure's cause is logged just before its TASK ERROR line, however long
// the log (a download's progress runs to thousands of lines): PVE answers a
// log read at most limit lines from start (pve-manager PVE/API2/Tasks.pm,
// read_task_log; pve-common src/PVE/Tools.pm, dump_logfile), so the
// provider must read the end, not the first page.
func TestTaskFailureFindsTheCauseAtTheEndOfALongLog(t *testing.T) {
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{"pve"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken("root@pam!t", "s3cret")
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), TokenID: "root@pam!t", Secret: "s3cret", CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Retire)
	if err := sim.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 760, Config: map[string]string{"name": "g"}}); err != nil {
		t.Fatal(err)
	}
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: http.MethodPost, PathPattern: "/nodes/*/qemu/*/status/start",
		TaskFailureRate: 1, TaskFailureMessage: "start failed: QEMU exited with code 1"}}})
	ctx := context.Background()
	upid, err := cl.StartGuest(ctx, pve.GuestRef{Type: pve.QEMU, Node: "pve", VMID: 760})
	if err != nil {
		t.Fatalf("StartGuest: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for ts, err := cl.TaskStatus(ctx, upid); err != nil || ts.Running; ts, err = cl.TaskStatus(ctx, upid) {
		if time.Now().After(deadline) {
			t.Fatalf("the start task did not end: %+v %v", ts, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	lines := make([]string, 0, 2001)
	for i := range 2000 {
		lines = append(lines, fmt.Sprintf("progress %d", i))
	}
	if err := sim.AppendTaskLog(upid, append(lines, "bridge 'vmbr9' does not exist")...); err != nil {
		t.Fatal(err)
	}
	got := TaskFailure(ctx, cl, &v1alpha1.TaskStatus{UPID: upid, ExitStatus: "start failed: QEMU exited with code 1"})
	if !strings.Contains(got, "bridge 'vmbr9' does not exist") {
		t.Errorf("TaskFailure = %q, want the cause logged before TASK ERROR", got)
	}
}
