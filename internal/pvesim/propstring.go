package pvesim

import (
	"fmt"
	"sort"
	"strings"
)

// PVE property strings ("virtio,bridge=vmbr0,firewall=1"): their declared format, parsing
// them as pve-common's parse_property_string does (src/PVE/JSONSchema.pm), and rendering
// them back.

// PropFormat describes a property string: its keys, and the key a bare value belongs to.
type PropFormat struct {
	DefaultKey string
	Keys       map[string]PropKey
}

// PropKey is one key of a property string.
type PropKey struct {
	Type ParamType
	Enum []string
	// Alias names the key this one is stored under.
	Alias string
	// KeyAlias makes "KEY=VALUE" mean "KeyAlias=KEY,Alias=VALUE" (net0's "virtio=MAC").
	KeyAlias string
	// Format checks the value as PVE's named format of the key does,
	// returning its message ("" when valid).
	Format func(string) string
}

// propError is a property-string error: "key: message".
type propError struct{ key, msg string }

// parsePropertyString parses PVE's "default,key=value" syntax as pve-common's
// parse_property_string does: the string is split on every comma (PVE knows
// no quoting), blank parts are skipped, a part is key=value with both sides
// non-empty or a bare value of the default key. Keys, types and enums are
// checked against f; aliased keys are stored under their target.
func parsePropertyString(f *PropFormat, s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range propertyParts(s) {
		key, value, hasEq := strings.Cut(part, "=")
		switch {
		case hasEq && (key == "" || value == ""):
			return nil, errMissingKey
		case !hasEq && f.DefaultKey == "":
			return nil, &propError{key: part, msg: "property is not defined in schema and the schema does not allow additional properties"}
		case !hasEq:
			key, value = f.DefaultKey, part
		}
		if err := storeProperty(f, out, key, value); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// propertyParts splits a property string as parse_property_string does:
// on every comma, blank parts skipped.
func propertyParts(s string) []string {
	var parts []string
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) != "" {
			parts = append(parts, part)
		}
	}
	return parts
}

// dieError is a message parse_property_string dies with before any key is
// checked; check_prop reports it as "invalid format - " and the message,
// with no key (unlike check_object's per-key errors, propError).
type dieError string

func (d dieError) Error() string { return string(d) }

// errMissingKey is the die for a part with "=" that is not key=value (PVE's
// /^([^=]+)=(.+)$/ does not match): "=x", "x=".
const errMissingKey dieError = "missing key in comma-separated list property"

func storeProperty(f *PropFormat, out map[string]string, key, value string) error {
	pk, ok := f.Keys[key]
	if !ok {
		return &propError{key: key, msg: msgUnknown}
	}
	if pk.KeyAlias != "" {
		if err := storeProperty(f, out, pk.KeyAlias, key); err != nil {
			return err
		}
	}
	if pk.Alias != "" {
		return storeProperty(f, out, pk.Alias, value)
	}
	if _, dup := out[key]; dup {
		return dieError("duplicate key in comma-separated list property: " + key)
	}
	if pk.Type == TypeBoolean {
		value = parseBoolean(value)
	}
	norm, msg := checkScalar(pk.Type, value)
	if msg != "" {
		return &propError{key: key, msg: msg}
	}
	if pk.Format != nil {
		if msg := pk.Format(norm); msg != "" {
			return &propError{key: key, msg: "invalid format - " + msg}
		}
	}
	if len(pk.Enum) > 0 && !contains(pk.Enum, norm) {
		return &propError{key: key, msg: fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", value, strings.Join(pk.Enum, ", "))}
	}
	out[key] = norm
	return nil
}

// parseBoolean is pve-common's parse_boolean, which parse_property_string
// applies to a boolean key before its type check: 1, on, yes and true (any
// case) are 1; 0, off, no and false are 0; anything else stays as it is
// (and fails the check).
func parseBoolean(v string) string {
	switch strings.ToLower(v) {
	case "1", "on", "yes", "true":
		return "1"
	case "0", "off", "no", "false":
		return "0"
	}
	return v
}

// formatPropertyString renders a parsed property string back, default key first.
func formatPropertyString(defaultKey string, m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != defaultKey {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(m))
	if v, ok := m[defaultKey]; ok && defaultKey != "" {
		parts = append(parts, v)
	}
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
