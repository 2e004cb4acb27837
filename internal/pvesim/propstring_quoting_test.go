package pvesim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestPropertyStringHasNoQuoting checks the split of pve-common's
// parse_property_string (src/PVE/JSONSchema.pm at commit f665029eac78,
// libpve-common-perl 9.2.1): `foreach my $part (split(/,/, $data))`, blank
// parts skipped, each part matched against /^([^=]+)=(.+)$/ or taken as the
// default key's value when it has no "=", and "missing key in
// comma-separated list property" otherwise. PVE has no quoting: a double
// quote is an ordinary character, and a comma between quotes still ends the
// part (print_property_string refuses a value with a comma instead).
func TestPropertyStringHasNoQuoting(t *testing.T) {
	cases := map[string]struct {
		reason  string
		format  *PropFormat
		value   string
		want    map[string]string
		wantErr error
		wantMsg string // PVE's text, for a per-key error
	}{
		"CommaInsideQuotesSplits": {
			reason:  "The comma between the quotes ends the part, so b\" is a second default-key value.",
			format:  scsiFormat,
			value:   `local-lvm:8,serial="a,b"`,
			wantErr: dieError("duplicate key in comma-separated list property: file"),
		},
		"QuotesAreKept": {
			reason: "A quoted value keeps its quotes: nothing strips them.",
			format: scsiFormat,
			value:  `local-lvm:8,serial="a"`,
			want:   map[string]string{"file": "local-lvm:8", "serial": `"a"`},
		},
		"QuotedEnumFails": {
			reason:  "A quoted enum value is not the enum value.",
			format:  agentFormat,
			value:   `1,type="virtio"`,
			wantMsg: `type: value '"virtio"' does not have a value in the enumeration 'virtio, isa'`,
		},
		"BlankPartsSkipped": {
			reason: "next if $part =~ /^\\s*$/: empty and blank parts are skipped.",
			format: scsiFormat,
			value:  "local-lvm:8,, ,size=8G,",
			want:   map[string]string{"file": "local-lvm:8", "size": "8G"},
		},
		"EmptyKey": {
			reason:  "=x has no key before the = and is not a bare value.",
			format:  scsiFormat,
			value:   "local-lvm:8,=x",
			wantErr: errMissingKey,
		},
		"EmptyValue": {
			reason:  "x= has no value after the =: (.+) needs one.",
			format:  scsiFormat,
			value:   "local-lvm:8,size=",
			wantErr: errMissingKey,
		},
		"EqualsInValue": {
			reason: "[^=]+ stops at the first =; the rest is the value.",
			format: scsiFormat,
			value:  "local-lvm:8,serial=a=b",
			want:   map[string]string{"file": "local-lvm:8", "serial": "a=b"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parsePropertyString(tc.format, tc.value)
			if tc.wantMsg != "" {
				if err == nil || err.Error() != tc.wantMsg {
					t.Fatalf("%s\nparse %q: error %v, want %q", tc.reason, tc.value, err, tc.wantMsg)
				}
				return
			}
			if diff := cmp.Diff(tc.wantErr, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nparse %q: -want error, +got error:\n%s", tc.reason, tc.value, diff)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\nparse %q: -want, +got:\n%s", tc.reason, tc.value, diff)
			}
		})
	}
}

// TestPropertyStringDieIsInvalidFormat checks how check_prop reports a die
// of parse_property_string (src/PVE/JSONSchema.pm, as above):
// add_error($errors, $path, "invalid format - $@"), the message alone.
func TestPropertyStringDieIsInvalidFormat(t *testing.T) {
	ps := compileParams(append(qemuConfigParams(), pNode(), pVMID()))
	_, errs := ps.validate(map[string]string{"node": "pve", "vmid": "100", "scsi0": "local-lvm:8,=x"})
	want := map[string]string{"scsi0": "invalid format - missing key in comma-separated list property"}
	if diff := cmp.Diff(want, errs); diff != "" {
		t.Errorf("a part with no key: -want, +got:\n%s", diff)
	}
}
