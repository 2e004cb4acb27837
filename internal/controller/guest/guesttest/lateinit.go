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

package guesttest

import (
	"testing"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// LateInitTable is one of a kind's field tables: its rows, the client table
// that gives their codecs, and whether the keys are a NIC's options (net0)
// rather than the guest's own.
type LateInitTable struct {
	Fields guest.Fields
	Table  pve.FieldTable
	NIC    bool
}

// LateInitFrom late-inits an empty spec of the kind from a config holding
// key=v (in net0 for a NIC option) and reports whether it set a field; when
// it did, it fails t unless the spec then asks for nothing the guest does not
// already have.
type LateInitFrom func(t *testing.T, key, v string, nic bool) bool

// EveryRowLateInits runs a subtest per row of tables: one of the samples of
// the row's codec must reach the row's spec field through lateInit. No row is
// listed by the caller: a new row is covered by being added to its table.
func EveryRowLateInits(t *testing.T, tables []LateInitTable, samples map[pve.Codec][]string, lateInit LateInitFrom) {
	t.Helper()
	for _, tb := range tables {
		for _, f := range tb.Fields {
			name := f.Path
			if tb.NIC {
				name = "network/" + name
			}
			t.Run(name, func(t *testing.T) {
				tried := samples[tb.Table[f.Key].Codec]
				for _, v := range tried {
					if lateInit(t, f.Key, v, tb.NIC) {
						return
					}
				}
				t.Errorf("no observed %s (tried %v) reached spec field %s", f.Key, tried, f.Path)
			})
		}
	}
}
