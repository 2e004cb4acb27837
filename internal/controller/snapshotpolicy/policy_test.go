package snapshotpolicy

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// world is one test's namespace on the API server, with a clock and the
// policy's reconciler.
type world struct {
	kube  client.Client
	ns    string
	clock *clocktesting.FakePassiveClock
}

func newWorld(t *testing.T, start string) *world {
	t.Helper()
	env.Require(t)
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	kube, err := client.New(env.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "policy-"}}
	if err := kube.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return &world{kube: kube, ns: ns.Name, clock: clocktesting.NewFakePassiveClock(at(start))}
}

// reconciler is a fresh one each call: nothing survives in memory between
// reconciles, as after a provider restart.
func (w *world) reconcile(t *testing.T, p *v1alpha1.VirtualMachineSnapshotPolicy) {
	t.Helper()
	r := NewReconciler(w.kube, w.clock, event.NewNopRecorder())
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: types.NamespacedName{Namespace: p.Namespace, Name: p.Name}}); err != nil {
		t.Fatalf("Reconcile at %s: %v", w.clock.Now().UTC().Format(time.RFC3339), err)
	}
	err := w.kube.Get(context.Background(), client.ObjectKeyFromObject(p), p)
	if client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func (w *world) set(now string) { w.clock.SetTime(at(now)) }

// vm stores a VirtualMachine admission accepts, with labels.
func (w *world) vm(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	vm := &v1alpha1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name, Labels: labels},
		Spec:       v1alpha1.VirtualMachineSpec{Name: name, NodeName: "pve", Template: &v1alpha1.VirtualMachineCloneSpec{Name: "debian-12"}},
	}
	if err := w.kube.Create(context.Background(), vm); err != nil {
		t.Fatal(err)
	}
}

func (w *world) policy(t *testing.T, name string, mod func(*v1alpha1.VirtualMachineSnapshotPolicySpec)) *v1alpha1.VirtualMachineSnapshotPolicy {
	t.Helper()
	p := &v1alpha1.VirtualMachineSnapshotPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: v1alpha1.VirtualMachineSnapshotPolicySpec{
			SnapshotSchedule: "*/10 * * * *",
			LabelSelector:    metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"db", "web"}}}},
		},
	}
	if mod != nil {
		mod(&p.Spec)
	}
	if err := w.kube.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshots lists the VirtualMachineSnapshots in the namespace as
// "<vm>@<scheduled-at>".
func (w *world) snapshots(t *testing.T) []string {
	t.Helper()
	l := &v1alpha1.VirtualMachineSnapshotList{}
	if err := w.kube.List(context.Background(), l, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(l.Items))
	for _, s := range l.Items {
		out = append(out, s.Spec.VirtualMachineName+"@"+strings.TrimSuffix(s.Annotations[AnnotationScheduledAt], ":00Z"))
	}
	sort.Strings(out)
	return out
}

func timeOf(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// The schedule runs from status: nothing before the first slot, one run per
// slot however many reconciles (each by a fresh reconciler, as after a
// restart), and one run for all the slots missed while down.
func TestScheduleDrivenFromStatus(t *testing.T) {
	w := newWorld(t, "2026-01-05T10:03:00Z")
	w.vm(t, "db", map[string]string{"tier": "db"})
	w.vm(t, "web", map[string]string{"tier": "web"})
	w.vm(t, "scratch", map[string]string{"tier": "test"})
	p := w.policy(t, "tenminutely", nil)

	type state struct {
		Snapshots  []string
		Last, Next string
		Taken      int64
	}
	steps := []struct {
		reason, now string
		want        state
	}{
		{"before the first slot nothing is taken", "2026-01-05T10:03:00Z",
			state{Snapshots: []string{}, Next: "2026-01-05T10:10:00Z"}},
		{"the slot takes one snapshot of each selected VM", "2026-01-05T10:10:00Z",
			state{Snapshots: []string{"db@2026-01-05T10:10", "web@2026-01-05T10:10"}, Last: "2026-01-05T10:10:00Z", Next: "2026-01-05T10:20:00Z", Taken: 2}},
		{"a second reconcile in the same slot takes nothing", "2026-01-05T10:10:30Z",
			state{Snapshots: []string{"db@2026-01-05T10:10", "web@2026-01-05T10:10"}, Last: "2026-01-05T10:10:00Z", Next: "2026-01-05T10:20:00Z", Taken: 2}},
		{"three slots missed while down: one run, for the latest", "2026-01-05T10:47:00Z",
			state{Snapshots: []string{"db@2026-01-05T10:10", "db@2026-01-05T10:40", "web@2026-01-05T10:10", "web@2026-01-05T10:40"}, Last: "2026-01-05T10:40:00Z", Next: "2026-01-05T10:50:00Z", Taken: 4}},
		{"after the catch-up run, nothing until the next slot", "2026-01-05T10:49:59Z",
			state{Snapshots: []string{"db@2026-01-05T10:10", "db@2026-01-05T10:40", "web@2026-01-05T10:10", "web@2026-01-05T10:40"}, Last: "2026-01-05T10:40:00Z", Next: "2026-01-05T10:50:00Z", Taken: 4}},
	}
	for _, s := range steps {
		w.set(s.now)
		w.reconcile(t, p)
		got := state{Snapshots: w.snapshots(t), Last: timeOf(p.Status.LastRunTime), Next: timeOf(p.Status.NextRunTime), Taken: p.Status.SnapshotsTaken}
		if d := cmp.Diff(s.want, got); d != "" {
			t.Fatalf("at %s, %s (-want +got):\n%s", s.now, s.reason, d)
		}
	}
	l := &v1alpha1.VirtualMachineSnapshotList{}
	if err := w.kube.List(context.Background(), l, client.InNamespace(w.ns), client.MatchingLabels{v1alpha1.LabelSnapshotPolicy: p.Name}); err != nil || len(l.Items) != 4 {
		t.Errorf("snapshots labelled with the policy: %d (%v), want 4", len(l.Items), err)
	}
	for _, s := range l.Items {
		if !v1alpha1.ValidSnapshotName(s.Spec.SnapshotName) {
			t.Errorf("snapshot name %q is not one PVE takes", s.Spec.SnapshotName)
		}
	}
}

// Retention prunes the oldest beyond keepLast per VM and counts them.
func TestRetentionPrunesTheOldest(t *testing.T) {
	w := newWorld(t, "2026-01-05T09:55:00Z")
	w.vm(t, "db", map[string]string{"tier": "db"})
	p := w.policy(t, "keep2", func(s *v1alpha1.VirtualMachineSnapshotPolicySpec) {
		s.Retention = &v1alpha1.SnapshotRetention{KeepLast: ptr.To[int32](2)}
	})
	w.reconcile(t, p)
	for _, now := range []string{"2026-01-05T10:00:00Z", "2026-01-05T10:10:00Z", "2026-01-05T10:20:00Z", "2026-01-05T10:30:00Z"} {
		w.set(now)
		w.reconcile(t, p)
	}
	if d := cmp.Diff([]string{"db@2026-01-05T10:20", "db@2026-01-05T10:30"}, w.snapshots(t)); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	if p.Status.SnapshotsTaken != 4 || p.Status.SnapshotsPruned != 2 {
		t.Errorf("taken %d pruned %d, want 4 and 2", p.Status.SnapshotsTaken, p.Status.SnapshotsPruned)
	}
}

// Suspending stops the schedule and keeps the snapshots; a resumed policy
// starts from the next slot without making up the ones it skipped.
func TestSuspendStopsAndKeeps(t *testing.T) {
	w := newWorld(t, "2026-01-05T09:55:00Z")
	w.vm(t, "db", map[string]string{"tier": "db"})
	p := w.policy(t, "pausable", nil)
	w.reconcile(t, p)
	w.set("2026-01-05T10:00:00Z")
	w.reconcile(t, p)
	p.Spec.Suspend = true
	if err := w.kube.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	w.set("2026-01-05T10:30:00Z")
	w.reconcile(t, p)
	if c := p.Status.GetCondition(xpv2.TypeReady); c.Reason != v1alpha1.ReasonSuspended || p.Status.NextRunTime != nil {
		t.Errorf("suspended: Ready %s, next %v; want Suspended and no next run", c.Reason, p.Status.NextRunTime)
	}
	if d := cmp.Diff([]string{"db@2026-01-05T10:00"}, w.snapshots(t)); d != "" {
		t.Errorf("while suspended (-want +got):\n%s", d)
	}
	p.Spec.Suspend = false
	if err := w.kube.Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	w.set("2026-01-05T10:35:00Z")
	w.reconcile(t, p)
	if got := timeOf(p.Status.NextRunTime); got != "2026-01-05T10:40:00Z" {
		t.Errorf("resumed: next %s, want 10:40 (the skipped slots are not made up)", got)
	}
	if n := len(w.snapshots(t)); n != 1 {
		t.Errorf("resumed: %d snapshots, want still 1", n)
	}
}

// Deleting a policy keeps its snapshots unless snapshotDeletionPolicy is
// Delete.
func TestDeletingThePolicy(t *testing.T) {
	cases := map[string]struct {
		reason string
		policy v1alpha1.SnapshotDeletionPolicy
		want   int
	}{
		"Retain": {reason: "the default keeps what the policy made", policy: v1alpha1.SnapshotDeletionRetain, want: 1},
		"Delete": {reason: "Delete removes the snapshots before the policy goes", policy: v1alpha1.SnapshotDeletionDelete, want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "2026-01-05T09:55:00Z")
			w.vm(t, "db", map[string]string{"tier": "db"})
			p := w.policy(t, "goes", func(s *v1alpha1.VirtualMachineSnapshotPolicySpec) { s.SnapshotDeletionPolicy = tc.policy })
			w.reconcile(t, p)
			w.set("2026-01-05T10:00:00Z")
			w.reconcile(t, p)
			if err := w.kube.Delete(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			w.reconcile(t, p)
			if n := len(w.snapshots(t)); n != tc.want {
				t.Errorf("%s: %d snapshots after the policy's deletion, want %d", tc.reason, n, tc.want)
			}
			err := w.kube.Get(context.Background(), client.ObjectKeyFromObject(p), &v1alpha1.VirtualMachineSnapshotPolicy{})
			if client.IgnoreNotFound(err) != nil || err == nil {
				t.Errorf("%s: the policy is still there (%v)", tc.reason, err)
			}
		})
	}
}

// An unparsable schedule is reported on Ready and nothing runs.
func TestInvalidSchedule(t *testing.T) {
	w := newWorld(t, "2026-01-05T09:55:00Z")
	p := w.policy(t, "broken", func(s *v1alpha1.VirtualMachineSnapshotPolicySpec) { s.SnapshotSchedule = "every tuesday" })
	w.reconcile(t, p)
	c := p.Status.GetCondition(xpv2.TypeReady)
	if c.Reason != v1alpha1.ReasonInvalidSchedule || !strings.Contains(c.Message, "snapshotSchedule") {
		t.Errorf("Ready = %s %q, want InvalidSchedule naming snapshotSchedule", c.Reason, c.Message)
	}
}

// A VM whose snapshot cannot be created gets a condition of its own, the
// others are snapshotted, and the condition goes once it succeeds. A
// terminating namespace refuses new objects (envtest runs no namespace
// controller, so it stays terminating).
func TestPerVMFailureConditions(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, "2026-01-05T09:55:00Z")
	w.vm(t, "db", map[string]string{"tier": "db"})
	doomed := newWorld(t, "2026-01-05T09:55:00Z")
	doomed.vm(t, "web", map[string]string{"tier": "web"})
	if err := w.kube.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: doomed.ns}}); err != nil {
		t.Fatal(err)
	}
	p := w.policy(t, "spread", func(s *v1alpha1.VirtualMachineSnapshotPolicySpec) {
		s.NamespaceSelector.Namespaces = []string{w.ns, doomed.ns}
	})
	w.reconcile(t, p)
	w.set("2026-01-05T10:00:00Z")
	w.reconcile(t, p)
	failed := xpv2.ConditionType(v1alpha1.ConditionTypeSnapshotPrefix + doomed.ns + "/web")
	if c := p.Status.GetCondition(failed); c.Status != corev1.ConditionFalse || c.Reason != v1alpha1.ReasonSnapshotFailed || !strings.Contains(c.Message, "web") {
		t.Errorf("condition %s = %s %s %q, want False SnapshotFailed naming the VM", failed, c.Status, c.Reason, c.Message)
	}
	if c := p.Status.GetCondition(xpv2.ConditionType(v1alpha1.ConditionTypeSnapshotPrefix + w.ns + "/db")); c.Status != corev1.ConditionUnknown {
		t.Errorf("the VM that was snapshotted has a condition: %+v", c)
	}
	if d := cmp.Diff([]string{"db@2026-01-05T10:00"}, w.snapshots(t)); d != "" {
		t.Errorf("the healthy VM's snapshots (-want +got):\n%s", d)
	}
	if p.Status.SnapshotsTaken != 1 {
		t.Errorf("taken = %d, want 1", p.Status.SnapshotsTaken)
	}
	p.Spec.NamespaceSelector.Namespaces = []string{w.ns}
	if err := w.kube.Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	w.reconcile(t, p)
	w.set("2026-01-05T10:10:00Z")
	w.reconcile(t, p)
	if c := p.Status.GetCondition(failed); c.Status != corev1.ConditionUnknown {
		t.Errorf("after a run without the failing VM its condition is still there: %+v", c)
	}
}
