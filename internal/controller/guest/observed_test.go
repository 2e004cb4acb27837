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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestObserved(t *testing.T) {
	type obs struct{ N int }
	cases := map[string]struct {
		reason  string
		observe []int // the observations made, in order
		want    *obs
		wantErr error
	}{
		"NoObserve": {
			reason:  "A verb run without an Observe before it gets ErrNotObserved, not a nil observation.",
			wantErr: ErrNotObserved,
		},
		"LastObserveWins": {
			reason:  "Each Observe starts afresh: the verbs read the last one's observation only.",
			observe: []int{1, 2},
			want:    &obs{N: 2},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var o Observed[obs]
			for _, n := range tc.observe {
				o.Begin().N = n
			}
			got, err := o.Last()
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("\n%s\nLast(): -want error, +got error:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("\n%s\nLast(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
