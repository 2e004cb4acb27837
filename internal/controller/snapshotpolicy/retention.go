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

package snapshotpolicy

import (
	"sort"
	"time"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// pruned returns the snapshots of one VM that retention r does not keep at
// now: a snapshot is kept when it is among the keepLast newest or younger
// than keepWithin. Without either rule every snapshot is kept.
func pruned(r *v1alpha1.SnapshotRetention, snaps []v1alpha1.VirtualMachineSnapshot, now time.Time) []v1alpha1.VirtualMachineSnapshot {
	if r == nil || (r.KeepLast == nil && r.KeepWithin == nil) {
		return nil
	}
	sorted := append([]v1alpha1.VirtualMachineSnapshot(nil), snaps...)
	sort.SliceStable(sorted, func(i, j int) bool { return scheduledAt(&sorted[i]).After(scheduledAt(&sorted[j])) })
	var out []v1alpha1.VirtualMachineSnapshot
	for i := range sorted {
		keptByCount := r.KeepLast != nil && i < int(*r.KeepLast)
		keptByAge := r.KeepWithin != nil && now.Sub(scheduledAt(&sorted[i])) < r.KeepWithin.Duration
		if !keptByCount && !keptByAge {
			out = append(out, sorted[i])
		}
	}
	return out
}

// scheduledAt is the run a snapshot was taken for (its annotation), else
// when it was created.
func scheduledAt(s *v1alpha1.VirtualMachineSnapshot) time.Time {
	if t, err := time.Parse(time.RFC3339, s.GetAnnotations()[AnnotationScheduledAt]); err == nil {
		return t
	}
	return s.GetCreationTimestamp().Time
}
