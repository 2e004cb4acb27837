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

package promqlref

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	cases := map[string]struct {
		reason  string
		expr    string
		want    Refs
		wantErr bool
	}{
		"QuantileOfRate": {
			reason: "The histogram's bucket series, its matcher and every grouping label are found; functions, numbers and the Grafana interval are not metrics.",
			expr:   `histogram_quantile(0.95, sum by (connection, route, le) (rate(proxmox_request_duration_seconds_bucket{connection=~"$connection"}[$__rate_interval])))`,
			want: Refs{
				Selectors: []Selector{{Metric: "proxmox_request_duration_seconds_bucket", Labels: []string{"connection"}}},
				Grouping:  []string{"connection", "le", "route"},
			},
		},
		"BinaryOperators": {
			reason: "Both sides of an arithmetic expression are selectors; time() is a function.",
			expr:   `time() - proxmox_snapshot_policy_next_run_timestamp_seconds > 15 * 60 and on (name) x{a="1",b!~"c"}`,
			want: Refs{
				Selectors: []Selector{{Metric: "proxmox_snapshot_policy_next_run_timestamp_seconds"}, {Metric: "x", Labels: []string{"a", "b"}}},
				Grouping:  []string{"name"},
			},
		},
		"AggregationWithoutClause": {
			reason: "An aggregation called like a function is not a metric.",
			expr:   `sum(crossplane_managed_resource_ready) offset 5m`,
			want:   Refs{Selectors: []Selector{{Metric: "crossplane_managed_resource_ready"}}},
		},
		"UnknownFunction": {
			reason:  "A function the extractor does not know could take a label name as a string: refuse it rather than miss it.",
			expr:    `label_replace(up, "a", "$1", "b", "(.*)")`,
			wantErr: true,
		},
		"SelectorWithoutName": {
			reason:  "A selector by __name__ alone names no metric the extractor can check.",
			expr:    `{__name__=~"proxmox_.*"}`,
			wantErr: true,
		},
		"VariableOutsideString": {
			reason:  "A Grafana variable other than an interval, outside a string, is refused.",
			expr:    `sum by ($label) (up)`,
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(tc.expr)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nParse(...): error %v, want error %v", tc.reason, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" && !tc.wantErr {
				t.Errorf("%s\nParse(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
