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

// parsePropertyString parses PVE's "default,key=value,key2=\"quoted,value\"" syntax and
// checks keys, types and enums against f. Aliased keys are stored under their target.
func parsePropertyString(f *PropFormat, s string) (map[string]string, error) {
	parts, err := splitPropertyString(s)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, part := range parts {
		key, value, hasEq := strings.Cut(part, "=")
		if !hasEq {
			if f.DefaultKey == "" {
				return nil, &propError{key: part, msg: "property is not defined in schema and the schema does not allow additional properties"}
			}
			key, value = f.DefaultKey, part
		}
		if err := storeProperty(f, out, key, unquote(value)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

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
		return &propError{key: key, msg: "duplicate key in comma-separated list property"}
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

// splitPropertyString splits on commas outside double quotes.
func splitPropertyString(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote = !inQuote
			cur.WriteByte(c)
		case c == '\\' && inQuote && i+1 < len(s):
			cur.WriteByte(c)
			i++
			cur.WriteByte(s[i])
		case c == ',' && !inQuote:
			if cur.Len() > 0 {
				parts = append(parts, cur.String())
			}
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, &propError{key: "value", msg: "unterminated quoted string"}
	}
	if cur.Len() > 0 {
		parts = append(parts, cur.String())
	}
	return parts, nil
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		inner := v[1 : len(v)-1]
		return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(inner)
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
