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

package container

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func TestDelete(t *testing.T) {
	cases := map[string]struct {
		reason  string
		running bool
		want    verbWant
	}{
		"RunningShutsDown": {
			reason:  "A running container is shut down first.",
			running: true,
			want: verbWant{events: []string{"ShuttingDown"}, pve: func(t *testing.T, _ *fixture, cr *v1alpha1.Container) {
				if cr.Status.LastTask == nil || cr.Status.LastTask.Type != "vzshutdown" {
					t.Errorf("last task %+v, want vzshutdown", cr.Status.LastTask)
				}
			}},
		},
		"StoppedDestroyed": {
			reason: "A stopped container is destroyed with purge.",
			want: verbWant{events: []string{"Deleting"}, pve: func(t *testing.T, f *fixture, cr *v1alpha1.Container) {
				waitTask(t, f, cr.Status.LastTask.UPID)
				if _, ok := f.sim.Guest(ownedVMID); ok {
					t.Error("the container is still there")
				}
			}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, pvesim.Options{})
			cr := owned(t, f, newContainer("gone", fromOSTemplate), tc.running, nil)
			now := metav1.Now()
			cr.SetDeletionTimestamp(&now)
			e, _ := observed(t, f, cr)
			_, err := e.Delete(context.Background(), cr)
			tc.want.check(t, tc.reason, f, cr, err)
		})
	}
}
