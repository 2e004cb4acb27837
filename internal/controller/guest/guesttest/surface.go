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

	"github.com/kubemox/provider-proxmox/internal/clients/proxmox/surface"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// FieldsDeclaredInSurface fails t for every field whose key one of routes
// does not declare in the client's surface, the list the conformance
// suite's coverage test works from: a kind's new row is told at once to
// declare its key and add a conformance case, rather than when a simulator
// test first sends it.
func FieldsDeclaredInSurface(t *testing.T, routes []string, fields guest.Fields) {
	t.Helper()
	for _, route := range routes {
		e, ok := surface.Lookup(route)
		if !ok {
			t.Fatalf("the surface has no %s", route)
		}
		for _, f := range fields {
			if !e.Has(f.Key) {
				t.Errorf("spec field %s sends %s, which internal/clients/proxmox/surface does not declare for %s: declare it and add a case in test/pveconformance", f.Path, f.Key, route)
			}
		}
	}
}
