package pvesim

import "testing"

// TestPropertyStringBooleans checks pve-common's parse_property_string
// (src/PVE/JSONSchema.pm): a boolean key's value goes through
// parse_boolean before the type check, so agent's enabled=true (kubemox's
// Talos example) is enabled=1, while a top-level boolean parameter takes
// only 1 or 0 (check_type).
func TestPropertyStringBooleans(t *testing.T) {
	cases := map[string]struct {
		reason, value, want string
		wantErr             bool
	}{
		"True":  {reason: "true is parse_boolean's 1", value: "enabled=true", want: "1"},
		"YES":   {reason: "parse_boolean ignores case", value: "enabled=YES", want: "1"},
		"Off":   {reason: "off is parse_boolean's 0", value: "enabled=off", want: "0"},
		"One":   {reason: "1 stays 1", value: "1", want: "1"},
		"Maybe": {reason: "anything else fails the boolean type check", value: "enabled=maybe", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := parsePropertyString(agentFormat, tc.value)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s: parse %q: err %v, want error %v", tc.reason, tc.value, err, tc.wantErr)
			}
			if !tc.wantErr && m["enabled"] != tc.want {
				t.Errorf("%s: enabled = %q, want %q", tc.reason, m["enabled"], tc.want)
			}
		})
	}
	if _, msg := checkScalar(TypeBoolean, "true"); msg == "" {
		t.Error("a top-level boolean parameter must take only 1 or 0 (check_type)")
	}
}

// TestCicustomTakesVolumeIDs checks qemu-server's $cicustom_fmt: each part
// is format pve-volume-id (pve-storage's parse_volume_id,
// PVE/Storage/Plugin.pm), so kubemox's user=local:snippets/x.yaml is taken
// and a bare file name is refused with "unable to parse volume ID".
func TestCicustomTakesVolumeIDs(t *testing.T) {
	if _, err := parsePropertyString(cicustomFormat, "user=local:snippets/x.yaml,vendor=nas-1:snippets/v.yaml"); err != nil {
		t.Errorf("volume IDs refused: %v", err)
	}
	_, err := parsePropertyString(cicustomFormat, "user=x.yaml")
	if err == nil || err.Error() != "user: invalid format - unable to parse volume ID 'x.yaml'" {
		t.Errorf("a bare file name: got %v, want user: invalid format - unable to parse volume ID 'x.yaml'", err)
	}
}
