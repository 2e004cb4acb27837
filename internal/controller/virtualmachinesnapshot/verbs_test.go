package virtualmachinesnapshot

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// observed is the part of an observation the tables compare.
type observed struct {
	Exists, UpToDate bool
	ReadyReason      xpv2.ConditionReason
}

func TestObserve(t *testing.T) {
	cases := map[string]struct {
		reason string
		sim    pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot
		want   observed
		err    error
	}{
		"InTheMaking": {
			reason: "a snapshot PVE is still taking (snapstate prepare) exists, is not Ready and is left alone",
			sim:    pvesim.Options{TaskDurations: map[string]time.Duration{"qmsnapshot": 5 * time.Second}},
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				if _, err := f.cl.CreateSnapshot(context.Background(), f.ref, "pre-upgrade", pve.SnapshotOptions{Description: "old words"}); err != nil {
					t.Fatal(err)
				}
				f.waitListed(t, "pre-upgrade")
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: xpv2.ReasonCreating},
		},
		"NotTakenYet": {
			reason: "a snapshot not on the guest is absent, so Create runs",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			want: observed{Exists: false},
		},
		"Taken": {
			reason: "the snapshot with the spec's description is up to date and Ready",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "before upgrade")
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: xpv2.ReasonAvailable},
		},
		"DescriptionChanged": {
			reason: "a description that differs is to be updated",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "old words")
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			want: observed{Exists: true, UpToDate: false, ReadyReason: xpv2.ReasonAvailable},
		},
		"NewRollbackToken": {
			reason: "a rollback token not taken yet is to be carried out",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "before upgrade")
				return f.snapshotOf(t, "pre-upgrade", vmName, withToken("one"))
			},
			want: observed{Exists: true, UpToDate: false, ReadyReason: xpv2.ReasonAvailable},
		},
		"RollbackTokenTaken": {
			reason: "the same token again does nothing",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "before upgrade")
				cr := f.snapshotOf(t, "pre-upgrade", vmName, withToken("one"))
				cr.Status.Rollback = &v1alpha1.SnapshotRollback{Token: "one", Task: &v1alpha1.TaskStatus{Status: guest.TaskStopped, ExitStatus: "OK"}}
				return cr
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: xpv2.ReasonAvailable},
		},
		"GuestDestroyed": {
			reason: "a guest destroyed after the resource saw it is reported gone, not retried",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				cr := f.snapshotOf(t, "pre-upgrade", vmName)
				cr.Status.VMID = guestID
				f.destroyGuest(t)
				return cr
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: v1alpha1.ReasonVirtualMachineGone},
		},
		"VirtualMachineDeleted": {
			reason: "a VirtualMachine deleted after the resource saw its guest is reported gone",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				cr := f.snapshotOf(t, "pre-upgrade", "deleted-vm")
				cr.Status.VMID = guestID
				return cr
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: v1alpha1.ReasonVirtualMachineGone},
		},
		"VirtualMachineNeverSeen": {
			reason: "a VirtualMachine that does not exist, never seen, is an error naming it",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				return f.snapshotOf(t, "pre-upgrade", "nosuch")
			},
			err: ErrGuestNotFound,
		},
		"VirtualMachineWithoutGuest": {
			reason: "a VirtualMachine with no VMID yet is waited for",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.storeVM(t, "young", 0)
				return f.snapshotOf(t, "pre-upgrade", "young")
			},
			err: ErrNoGuestYet,
		},
		"UnmanagedGuest": {
			reason: "a guest named by vmid and nodeName is observed the same way",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "nightly", "before upgrade")
				return f.snapshotOf(t, "nightly", "", func(cr *v1alpha1.VirtualMachineSnapshot) {
					id := int32(guestID)
					cr.Spec.VMID, cr.Spec.NodeName = &id, testNode
				})
			},
			want: observed{Exists: true, UpToDate: true, ReadyReason: xpv2.ReasonAvailable},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			obs, err := f.external(t, cr).Observe(context.Background(), cr)
			if d := cmp.Diff(tc.err, err, cmpopts.EquateErrors()); d != "" {
				t.Fatalf("%s: Observe error (-want +got):\n%s", tc.reason, d)
			}
			if tc.err != nil {
				return
			}
			got := observed{Exists: obs.ResourceExists, UpToDate: obs.ResourceUpToDate}
			if obs.ResourceExists {
				got.ReadyReason = cr.GetCondition(xpv2.TypeReady).Reason
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s: Observe (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}

func withToken(token string) func(*v1alpha1.VirtualMachineSnapshot) {
	return func(cr *v1alpha1.VirtualMachineSnapshot) {
		meta.AddAnnotations(cr, map[string]string{v1alpha1.AnnotationRollback: token})
	}
}

// destroyGuest stops and destroys the guest through the API.
func (f *fixture) destroyGuest(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	upid, err := f.cl.StopGuest(ctx, f.ref)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(t, upid)
	if upid, err = f.cl.DeleteGuest(ctx, f.ref, true); err != nil {
		t.Fatal(err)
	}
	f.wait(t, upid)
}

// Each verb case runs Observe then the verb once, as the managed reconciler
// does, and checks PVE and the resource afterwards.
func TestVerbs(t *testing.T) {
	type result struct {
		Snapshots   []string
		Description string
		Rollbacks   int
		Token       string
		Events      []string
	}
	cases := map[string]struct {
		reason string
		sim    pvesim.Options
		setup  func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot
		verb   func(ctx context.Context, e *external, cr *v1alpha1.VirtualMachineSnapshot) error
		want   result
	}{
		"CreateTakesTheSnapshot": {
			reason: "Create starts qmsnapshot under the external name with the description",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			verb: create,
			want: result{Snapshots: []string{"pre-upgrade"}, Description: "before upgrade", Events: []string{"Snapshotting"}},
		},
		"CreateOnALockedGuest": {
			reason: "PVE checks the lock inside its task: the task fails and nothing is taken",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				if err := f.sim.SetGuestConfig(guestID, "lock", "backup"); err != nil {
					t.Fatal(err)
				}
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			verb: create,
			want: result{Snapshots: []string{}, Events: []string{"Snapshotting"}},
		},
		"DerivedName": {
			reason: "without snapshotName the name derives from metadata.name (dots are not allowed by PVE)",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				return f.snapshotOf(t, "v1.2", vmName)
			},
			verb: create,
			want: result{Snapshots: []string{"v1_2"}, Description: "before upgrade", Events: []string{"Snapshotting"}},
		},
		"UpdateDescription": {
			reason: "a changed description is applied in place",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "old words")
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			verb: update,
			want: result{Snapshots: []string{"pre-upgrade"}, Description: "before upgrade", Events: []string{"DescriptionChanged"}},
		},
		"UpdateRollsBack": {
			reason: "a new token is recorded and the guest rolled back once",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "before upgrade")
				return f.snapshotOf(t, "pre-upgrade", vmName, withToken("t1"))
			},
			verb: update,
			want: result{Snapshots: []string{"pre-upgrade"}, Description: "before upgrade", Rollbacks: 1, Token: "t1", Events: []string{"RollingBack"}},
		},
		"RollbackOfALockedGuestWaits": {
			reason: "PVE's lock gives the token back, to be tried on the next poll",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "pre-upgrade", "before upgrade")
				if err := f.sim.SetGuestConfig(guestID, "lock", "backup"); err != nil {
					t.Fatal(err)
				}
				return f.snapshotOf(t, "pre-upgrade", vmName, withToken("t1"))
			},
			verb: update,
			want: result{Snapshots: []string{"pre-upgrade"}, Description: "before upgrade", Events: []string{}},
		},
		"DeleteKeepsTheGuest": {
			reason: "Delete removes the snapshot and nothing else",
			setup: func(t *testing.T, f *fixture) *v1alpha1.VirtualMachineSnapshot {
				f.take(t, "other", "")
				f.take(t, "pre-upgrade", "before upgrade")
				return f.snapshotOf(t, "pre-upgrade", vmName)
			},
			verb: del,
			want: result{Snapshots: []string{"other"}, Events: []string{"SnapshotDeleting"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.sim)
			cr := tc.setup(t, f)
			ctx := context.Background()
			e := f.external(t, cr)
			if _, err := e.Observe(ctx, cr); err != nil {
				t.Fatalf("Observe: %v", err)
			}
			if err := tc.verb(ctx, e, cr); err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			f.waitTasks(t, cr)
			got := result{Snapshots: f.snapshots(t), Rollbacks: f.rollbacks(t), Events: f.log.Reasons()}
			if snaps, _ := f.cl.Snapshots(ctx, f.ref); len(snaps) > 0 {
				got.Description = snaps[len(snaps)-1].Description
			}
			if cr.Status.Rollback != nil {
				got.Token = cr.Status.Rollback.Token
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, d)
			}
			if g, _ := f.sim.Guest(guestID); g.VMID != guestID {
				t.Errorf("%s: the guest is gone", tc.reason)
			}
		})
	}
}

func create(ctx context.Context, e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
	_, err := e.Create(ctx, cr)
	return err
}

func update(ctx context.Context, e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
	_, err := e.Update(ctx, cr)
	return err
}

func del(ctx context.Context, e *external, cr *v1alpha1.VirtualMachineSnapshot) error {
	_, err := e.Delete(ctx, cr)
	return err
}

// waitTasks waits for the tasks a verb left on cr.
func (f *fixture) waitTasks(t *testing.T, cr *v1alpha1.VirtualMachineSnapshot) {
	t.Helper()
	if upid := cr.GetAnnotations()[guest.AnnotationCreateTask]; upid != "" {
		f.wait(t, upid)
	}
	if lt := cr.Status.LastTask; lt != nil {
		f.wait(t, lt.UPID)
	}
	if rb := cr.Status.Rollback; rb != nil && rb.Task != nil && rb.Task.UPID != "" {
		f.wait(t, rb.Task.UPID)
	}
}

// A token rolls back once however many reconciles see it; a new token rolls
// back again.
func TestRollbackOncePerToken(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	ctx := context.Background()
	f.take(t, "pre-upgrade", "before upgrade")
	if err := f.sim.SetGuestConfig(guestID, "cores", "8"); err != nil {
		t.Fatal(err)
	}
	cr := f.snapshotOf(t, "pre-upgrade", vmName, withToken("first"))
	for range 3 {
		f.reconcile(t, cr)
	}
	if n := f.rollbacks(t); n != 1 {
		t.Fatalf("rollbacks after three reconciles of one token = %d, want 1", n)
	}
	if g, _ := f.sim.Guest(guestID); g.Config["cores"] != "2" {
		t.Errorf("cores after the rollback = %q, want the snapshot's 2", g.Config["cores"])
	}
	if rb := cr.Status.Rollback; rb == nil || rb.Task == nil || rb.Task.ExitStatus != "OK" {
		t.Errorf("status.rollback = %+v, want token first with task OK", rb)
	}
	meta.AddAnnotations(cr, map[string]string{v1alpha1.AnnotationRollback: "second"})
	if err := f.kube.Update(ctx, cr); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, cr)
	f.reconcile(t, cr)
	if n := f.rollbacks(t); n != 2 {
		t.Errorf("rollbacks after a second token = %d, want 2", n)
	}
}

// A token taken whose UPID never reached status (the provider stopped after
// the token was written) is matched to PVE's task when there is one, and
// reported as not made when there is none; neither rolls back again.
func TestRollbackTokenWithoutTask(t *testing.T) {
	cases := map[string]struct {
		reason    string
		sentToPVE bool
		wantExit  string
	}{
		"TaskFound":  {reason: "the rollback PVE ran since the token is followed", sentToPVE: true, wantExit: "OK"},
		"NeverAsked": {reason: "without a rollback task the token is reported not made", wantExit: notMade},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			ctx := context.Background()
			f.take(t, "pre-upgrade", "before upgrade")
			cr := f.snapshotOf(t, "pre-upgrade", vmName, withToken("t1"))
			requested := metav1.NewTime(time.Now())
			cr.Status.Rollback = &v1alpha1.SnapshotRollback{Token: "t1", RequestedAt: &requested}
			if tc.sentToPVE {
				upid, err := f.cl.RollbackSnapshot(ctx, f.ref, "pre-upgrade")
				if err != nil {
					t.Fatal(err)
				}
				f.wait(t, upid)
			}
			for range 2 {
				e := f.external(t, cr)
				obs, err := e.Observe(ctx, cr)
				if err != nil {
					t.Fatal(err)
				}
				if !obs.ResourceUpToDate {
					t.Fatalf("%s: a taken token must not ask for another rollback", tc.reason)
				}
			}
			if got := cr.Status.Rollback.Task; got == nil || got.ExitStatus != tc.wantExit {
				t.Errorf("%s: rollback task = %+v, want exit %q", tc.reason, got, tc.wantExit)
			}
			want := 0
			if tc.sentToPVE {
				want = 1
			}
			if n := f.rollbacks(t); n != want {
				t.Errorf("%s: rollbacks = %d, want %d", tc.reason, n, want)
			}
		})
	}
}

// reconcile observes cr and updates it when not up to date, as the managed
// reconciler does, then waits for the tasks that left.
func (f *fixture) reconcile(t *testing.T, cr *v1alpha1.VirtualMachineSnapshot) {
	t.Helper()
	ctx := context.Background()
	e := f.external(t, cr)
	obs, err := e.Observe(ctx, cr)
	if err != nil {
		t.Fatal(err)
	}
	if !obs.ResourceUpToDate {
		if _, err := e.Update(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	f.waitTasks(t, cr)
}

// A guest migrated away from the node the resource knew is followed through
// PVE's listing, not reported gone; one destroyed is.
func TestGuestElsewhere(t *testing.T) {
	cases := map[string]struct {
		reason    string
		move      func(t *testing.T, f *fixture)
		wantNode  string
		wantReady xpv2.ConditionReason
	}{
		"Migrated": {
			reason: "the snapshot is observed on the guest's new node",
			move: func(t *testing.T, f *fixture) {
				if err := f.sim.MigrateGuest(guestID, otherNode); err != nil {
					t.Fatal(err)
				}
			},
			wantNode: otherNode, wantReady: xpv2.ReasonAvailable,
		},
		"Destroyed": {
			reason:    "a guest PVE no longer has is reported gone",
			move:      func(t *testing.T, f *fixture) { f.destroyGuest(t) },
			wantNode:  testNode,
			wantReady: v1alpha1.ReasonVirtualMachineGone,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			f.take(t, "nightly", "before upgrade")
			cr := f.snapshotOf(t, "nightly", "", func(cr *v1alpha1.VirtualMachineSnapshot) {
				id := int32(guestID)
				cr.Spec.VMID, cr.Spec.NodeName = &id, testNode
			})
			cr.Status.VMID, cr.Status.NodeName = guestID, testNode
			tc.move(t, f)
			obs, err := f.external(t, cr).Observe(context.Background(), cr)
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			got := []any{obs.ResourceExists, cr.Status.NodeName, cr.GetCondition(xpv2.TypeReady).Reason}
			if d := cmp.Diff([]any{true, tc.wantNode, tc.wantReady}, got); d != "" {
				t.Errorf("%s: (exists, node, Ready reason) (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}
