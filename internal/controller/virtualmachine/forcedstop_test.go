package virtualmachine

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Deleting a running VM shuts it down with forceStop. When the shutdown
// fails (here: the agent is configured but not up, so guest-shutdown fails)
// PVE stops the VM hard with a plain Perl warn in the task log and the task
// ends OK, not WARNINGS (qemu-server src/PVE/QemuServer.pm, _do_vm_stop;
// pve-common src/PVE/RESTEnvironment.pm, warn). The provider still says the
// stop was forced, from the log.
func TestDeleteReportsForcedStopFromTheTaskLog(t *testing.T) {
	f := newFixture(t, pvesim.Options{AgentStartDelay: time.Hour})
	cr := shutDownForDelete(t, f, owned(t, f, "stubborn", true, map[string]string{"agent": "1"}))
	if lt := cr.Status.LastTask; lt.Status != guest.TaskStopped || lt.ExitStatus != "OK" {
		t.Errorf("last task = %+v, want stopped with PVE's OK", lt)
	}
	msg := f.log.Message(string(guest.ReasonForcedStop))
	if !strings.Contains(msg, "VM quit/powerdown failed - terminating now with SIGTERM") {
		t.Errorf("ForcedStop event %q (events %v), want PVE's log line", msg, f.log.Reasons())
	}
}

// A shutdown the guest obeyed says nothing about a forced stop.
func TestDeleteGracefulShutdownIsNotReportedForced(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	shutDownForDelete(t, f, owned(t, f, "gentle", true, nil))
	if f.log.Has(string(guest.ReasonForcedStop)) {
		t.Errorf("a graceful shutdown was reported forced: %q", f.log.Message(string(guest.ReasonForcedStop)))
	}
}

// shutDownForDelete deletes cr, whose VM runs: Observe and Delete start the
// shutdown, then once its task ended Observe follows it to its end.
func shutDownForDelete(t *testing.T, f *fixture, cr *v1alpha1.VirtualMachine) *v1alpha1.VirtualMachine {
	t.Helper()
	now := metav1.Now()
	cr.DeletionTimestamp = &now
	ctx := context.Background()
	e := f.external()
	if _, err := e.Observe(ctx, cr); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if _, err := e.Delete(ctx, cr); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if lt := cr.Status.LastTask; lt == nil || lt.Type != "qmshutdown" {
		t.Fatalf("last task = %+v, want qmshutdown", lt)
	}
	eventually(t, "the shutdown ends", func() bool {
		ts, err := f.cl.TaskStatus(ctx, cr.Status.LastTask.UPID)
		return err == nil && !ts.Running
	})
	if _, err := f.external().Observe(ctx, cr); err != nil {
		t.Fatalf("Observe after the shutdown: %v", err)
	}
	return cr
}
