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

package providertest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// WaitGuest polls the simulator's guest vmid until cond holds, and returns it.
func (h *Harness) WaitGuest(t testing.TB, vmid int, what string, timeout time.Duration, cond func(pvesim.GuestView) bool) pvesim.GuestView {
	t.Helper()
	var g pvesim.GuestView
	Eventually(t, timeout, 250*time.Millisecond, func() bool {
		var ok bool
		g, ok = h.Sim.Guest(vmid)
		return ok && cond(g)
	}, func() string {
		return fmt.Sprintf("guest %d: not %s after %s; config %v; pending %v", vmid, what, timeout, g.Config, g.Pending)
	})
	return g
}

// GuestEffective is a key's value after the guest's next boot: the pending
// value when there is one.
func GuestEffective(g pvesim.GuestView, key string) string {
	if v, ok := g.Pending[key]; ok {
		return v
	}
	return g.Config[key]
}

// GuestHas reports whether each key has its value after the guest's next
// boot; tags compare sorted and ;-joined, whatever separator PVE kept.
func GuestHas(g pvesim.GuestView, want map[string]string) bool {
	for k, v := range want {
		have := GuestEffective(g, k)
		if k == "tags" {
			tags := strings.FieldsFunc(have, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
			slices.Sort(tags)
			have = strings.Join(tags, ";")
		}
		if have != v {
			return false
		}
	}
	return true
}
