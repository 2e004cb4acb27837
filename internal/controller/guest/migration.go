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

package guest

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// Migration events.
const (
	ReasonMigrating        event.Reason = "Migrating"
	ReasonMigrated         event.Reason = "Migrated"
	ReasonMigrationFailed  event.Reason = "MigrationFailed"
	ReasonMigrationSkipped event.Reason = "MigrationSkipped"
)

// HAMigrationWait bounds how long PVE's HA manager may take to move a guest
// after its hamigrate task handed the request over.
const HAMigrationWait = 10 * time.Minute

// MigrationDecision is what Observe decides about a guest's spec.nodeName.
type MigrationDecision int

// Migration decisions.
const (
	// NoMigration: none asked, one under way, or a failed one waiting for a
	// change of the spec.
	NoMigration MigrationDecision = iota
	// MigrateNow: start the migration.
	MigrateNow
	// StopThenMigrate: the Offline policy on a running guest; once it is
	// stopped, the migration starts.
	StopThenMigrate
)

// Placement decides and records migrations for one guest resource. A move is
// asked for by a change of spec.nodeName against status.requestedNode, never
// by comparing nodeName with where the guest runs: HA and moves made outside
// the provider are followed, not undone.
type Placement struct {
	Record   event.Recorder
	Object   resource.Managed
	Status   *v1alpha1.GuestPlacement
	LastTask *v1alpha1.TaskStatus
	SpecNode string
	Policy   v1alpha1.MigrationPolicy
	// Noun names the guest in events ("VM", "container").
	Noun string
	// LiveMode names the migration of a running guest in events: "online"
	// (the default) for a VM, "restart" for a container, which PVE shuts
	// down, moves and starts again.
	LiveMode string
}

// Migrator asks PVE whether a guest can migrate, and starts the migration.
type Migrator interface {
	MigrationPrecondition(ctx context.Context, ref pve.GuestRef, target string) (pve.MigrationPrecondition, error)
	MigrateGuest(ctx context.Context, ref pve.GuestRef, m pve.Migration) (string, error)
}

// Migrate starts the move of the guest at ref to spec.nodeName (m.Target)
// and records it in last and the placement. It first asks PVE's migration
// preconditions, so what PVE would refuse (the target not allowed, local
// devices, a local CD/DVD) is said on the Migrated condition before any
// task runs, naming the blockers and the target. A refusal, there or by the
// migrate request (a storage missing on the target, say), is not retried
// until the spec changes; a lock is retried quietly at the next reconcile.
// The error is only for preconditions PVE could not answer.
func (p Placement) Migrate(ctx context.Context, cl Migrator, last **v1alpha1.TaskStatus, ref pve.GuestRef, m pve.Migration) error {
	blockers, err := migrationBlockers(ctx, cl, ref, m)
	switch {
	case pve.IsLocked(err):
		return nil
	case err != nil:
		return err
	case len(blockers) > 0:
		p.Refused(ref.Node, m.Online, errors.Errorf("Proxmox VE refuses it before any task runs: %s", strings.Join(blockers, "; ")), time.Now())
		return nil
	}
	upid, err := cl.MigrateGuest(ctx, ref, m)
	if err != nil {
		if !pve.IsLocked(err) {
			p.Refused(ref.Node, m.Online, err, time.Now())
		}
		return nil
	}
	RecordTask(last, upid)
	p.Started(ref.Node, m.Online, upid, time.Now())
	return nil
}

// migrationBlockers are what PVE's preconditions say would stop m; none when
// PVE has no precondition endpoint (the migrate request then decides).
func migrationBlockers(ctx context.Context, cl Migrator, ref pve.GuestRef, m pve.Migration) ([]string, error) {
	pre, err := cl.MigrationPrecondition(ctx, ref, m.Target)
	if errors.Is(err, pve.ErrNoPrecondition) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return pre.Blockers(ref.Type, m), nil
}

// Observe follows a migration under way, given the node the guest runs on
// now, then decides whether the spec asks for one.
func (p Placement) Observe(node string, running bool, now time.Time) MigrationDecision {
	p.follow(node, now)
	return p.decide(node, running)
}

func (p Placement) follow(node string, now time.Time) {
	lm := p.Status.LastMigration
	if lm == nil || lm.Result != v1alpha1.MigrationRunning {
		return
	}
	ours := p.LastTask != nil && p.LastTask.UPID == lm.UPID
	switch {
	case node == lm.To:
		p.finish(lm, v1alpha1.MigrationSucceeded, "", now)
		p.Status.RequestedNode = lm.To
		p.Record.Event(p.Object, event.Normal(ReasonMigrated, fmt.Sprintf("migrated the %s from %s to %s", p.Noun, lm.From, lm.To)))
	case ours && LastTaskFailed(p.LastTask):
		p.fail(lm, p.LastTask.ExitStatus, now)
	case ours && p.LastTask.Status == TaskStopped && lm.StartTime != nil && now.Sub(lm.StartTime.Time) > HAMigrationWait:
		p.fail(lm, fmt.Sprintf("Proxmox VE's HA manager did not move the %s to %s within %s", p.Noun, lm.To, HAMigrationWait), now)
	}
}

func (p Placement) decide(node string, running bool) MigrationDecision {
	st, target, lm := p.Status, p.SpecNode, p.Status.LastMigration
	switch {
	case target == "" || target == st.RequestedNode:
		return NoMigration
	case st.RequestedNode == "" || node == target:
		// First sight (nothing was asked before), or already there.
		st.RequestedNode = target
		return NoMigration
	case p.Underway():
		return NoMigration
	case lm != nil && lm.Result == v1alpha1.MigrationFailed && lm.To == target && lm.ObservedGeneration == p.Object.GetGeneration():
		return NoMigration
	case p.Policy == v1alpha1.MigrationPolicyNever:
		st.RequestedNode = target
		p.Record.Event(p.Object, event.Normal(ReasonMigrationSkipped, fmt.Sprintf(
			"nodeName changed to %s, but migrationPolicy is Never: the %s stays on %s", target, p.Noun, node)))
		return NoMigration
	case p.Policy == v1alpha1.MigrationPolicyOffline && running:
		return StopThenMigrate
	default:
		return MigrateNow
	}
}

// Underway reports whether a migration the provider started has not
// arrived nor failed yet (an HA resource may wait for the HA manager after
// its hamigrate task ended).
func (p Placement) Underway() bool {
	lm := p.Status.LastMigration
	return lm != nil && lm.Result == v1alpha1.MigrationRunning
}

// Started records a migration to spec.nodeName that PVE accepted as task upid.
func (p Placement) Started(from string, online bool, upid string, now time.Time) {
	t := metav1.NewTime(now)
	p.Status.LastMigration = &v1alpha1.MigrationStatus{From: from, To: p.SpecNode, Online: online, UPID: upid,
		Result: v1alpha1.MigrationRunning, ObservedGeneration: p.Object.GetGeneration(), StartTime: &t}
	mode := "offline"
	if online {
		mode = p.LiveMode
		if mode == "" {
			mode = "online"
		}
	}
	p.Record.Event(p.Object, event.Normal(ReasonMigrating, fmt.Sprintf("migrating the %s from %s to %s (%s)", p.Noun, from, p.SpecNode, mode)))
	p.Object.SetConditions(xpv2.Condition{Type: v1alpha1.TypeMigrated, Status: corev1.ConditionUnknown, Reason: v1alpha1.ReasonMigrating,
		Message: fmt.Sprintf("migrating from %s to %s", from, p.SpecNode), LastTransitionTime: t, ObservedGeneration: p.Object.GetGeneration()})
}

// Refused records a migration PVE refused outright (not a failed task).
func (p Placement) Refused(from string, online bool, err error, now time.Time) {
	t := metav1.NewTime(now)
	lm := &v1alpha1.MigrationStatus{From: from, To: p.SpecNode, Online: online, Result: v1alpha1.MigrationRunning,
		ObservedGeneration: p.Object.GetGeneration(), StartTime: &t}
	p.Status.LastMigration = lm
	p.fail(lm, err.Error(), now)
}

func (p Placement) finish(lm *v1alpha1.MigrationStatus, result, message string, now time.Time) {
	t := metav1.NewTime(now)
	lm.Result, lm.Message, lm.CompletionTime = result, message, &t
	c := xpv2.Condition{Type: v1alpha1.TypeMigrated, Status: corev1.ConditionTrue, Reason: v1alpha1.ReasonMigrated,
		Message: fmt.Sprintf("migrated from %s to %s", lm.From, lm.To), LastTransitionTime: t, ObservedGeneration: p.Object.GetGeneration()}
	if result == v1alpha1.MigrationFailed {
		c.Status, c.Reason = corev1.ConditionFalse, v1alpha1.ReasonMigrationFailed
		c.Message = fmt.Sprintf("migration from %s to %s failed, the %s stays on %s: %s", lm.From, lm.To, p.Noun, lm.From, message)
	}
	p.Object.SetConditions(c)
}

func (p Placement) fail(lm *v1alpha1.MigrationStatus, reason string, now time.Time) {
	p.finish(lm, v1alpha1.MigrationFailed, reason, now)
	p.Record.Event(p.Object, event.Warning(ReasonMigrationFailed, errors.Errorf(
		"migration from %s to %s failed, the %s stays on %s: %s", lm.From, lm.To, p.Noun, lm.From, reason)))
}
