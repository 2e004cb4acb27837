package pvesim

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ParamType is a PVE JSON-schema scalar type.
type ParamType string

// The scalar types PVE's parameter checker knows.
const (
	TypeString  ParamType = "string"
	TypeInteger ParamType = "integer"
	TypeNumber  ParamType = "number"
	TypeBoolean ParamType = "boolean"
)

// ParamSpec declares one parameter of a route. Indexed parameters (net0, scsi5, ...)
// are declared once with Indexed set; the schema calls them "net[n]".
type ParamSpec struct {
	Name     string
	Type     ParamType
	Required bool
	Enum     []string
	Min      *float64
	Max      *float64
	// Format, when set, makes the value a property string ("virtio,bridge=vmbr0").
	Format *PropFormat
	// Indexed parameters accept Name followed by an index in [IndexMin, IndexMax].
	Indexed  bool
	IndexMin int
	IndexMax int
	// Pattern, when set, must match the whole value.
	Pattern *regexp.Regexp
	// FormatError, when set, marks Pattern as a named PVE format (dns-name, pve-node) and
	// is its error text; a plain schema pattern fails with PVE's regex message.
	FormatError string
	// Requires names a parameter that must be given with this one (the schema's
	// `requires`, e.g. download-url's checksum and checksum-algorithm).
	Requires string
}

// SchemaName is the parameter's name as PVE's schema writes it ("net[n]" for indexed ones).
func (p ParamSpec) SchemaName() string {
	if p.Indexed {
		return p.Name + "[n]"
	}
	return p.Name
}

// RouteSpec declares one API route: its method, path template and parameters.
// Path parameters ({node}, {vmid}) appear in Params like PVE's schema has them.
type RouteSpec struct {
	Method string
	Path   string
	Params []ParamSpec
	// NoAuth routes are reachable without credentials (POST /access/ticket).
	NoAuth bool
	// NoToken routes refuse API tokens (PVE's allowtoken=0).
	NoToken bool
}

// RouteSpecs returns the declared spec of every route the simulator serves.
func RouteSpecs() []RouteSpec {
	table := routeTable()
	out := make([]RouteSpec, 0, len(table))
	for _, r := range table {
		out = append(out, r.spec)
	}
	return out
}

// Parameter builders used by the route table.

func fptr(v float64) *float64 { return &v }

func pString(name string) ParamSpec { return ParamSpec{Name: name, Type: TypeString} }
func pBool(name string) ParamSpec   { return ParamSpec{Name: name, Type: TypeBoolean} }
func pNumber(name string) ParamSpec { return ParamSpec{Name: name, Type: TypeNumber} }
func pInt(name string) ParamSpec    { return ParamSpec{Name: name, Type: TypeInteger} }

func pEnum(name string, values ...string) ParamSpec {
	return ParamSpec{Name: name, Type: TypeString, Enum: values}
}

func pProp(name string, f *PropFormat) ParamSpec {
	return ParamSpec{Name: name, Type: TypeString, Format: f}
}

func (p ParamSpec) req() ParamSpec { p.Required = true; return p }

func (p ParamSpec) requires(name string) ParamSpec { p.Requires = name; return p }

func (p ParamSpec) min(v float64) ParamSpec { p.Min = fptr(v); return p }

func (p ParamSpec) max(v float64) ParamSpec { p.Max = fptr(v); return p }

func (p ParamSpec) indexed(lo, hi int) ParamSpec { //nolint:unparam // written as PVE's schema writes the range (net[n], n in 0..31); every range starts at 0 today
	p.Indexed, p.IndexMin, p.IndexMax = true, lo, hi
	return p
}

func (p ParamSpec) pattern(re string) ParamSpec {
	p.Pattern = regexp.MustCompile("^(?:" + re + ")$")
	return p
}

// format is pattern for PVE's named formats, which fail with their own message.
func (p ParamSpec) format(re, msg string) ParamSpec {
	p = p.pattern(re)
	p.FormatError = msg
	return p
}

const reDNSName = `([a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?\.)*[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?`

func pDNSName(name string) ParamSpec {
	return pString(name).format(reDNSName, "value does not look like a valid DNS name")
}

func pNode() ParamSpec {
	return pString("node").req().format(`[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?`, "value does not look like a valid node name")
}
func pVMID() ParamSpec { return pInt("vmid").req().min(100).max(999999999) }

// pTargetNode is the optional target parameter in pve-node format (clone, migrate, storage).
func pTargetNode() ParamSpec {
	p := pNode()
	p.Name, p.Required = "target", false
	return p
}

// paramSet is a route's parameters compiled for lookup.
type paramSet struct {
	exact   map[string]*ParamSpec
	indexed map[string]*ParamSpec
}

func compileParams(specs []ParamSpec) *paramSet {
	ps := &paramSet{exact: map[string]*ParamSpec{}, indexed: map[string]*ParamSpec{}}
	for i := range specs {
		p := &specs[i]
		if p.Indexed {
			ps.indexed[p.Name] = p
		} else {
			ps.exact[p.Name] = p
		}
	}
	return ps
}

// lookup finds the spec for a concrete parameter name such as "net3".
func (ps *paramSet) lookup(name string) *ParamSpec {
	if p, ok := ps.exact[name]; ok {
		return p
	}
	keyPrefix, idx, ok := splitIndexed(name)
	if !ok {
		return nil
	}
	p, found := ps.indexed[keyPrefix]
	if !found || idx < p.IndexMin || idx > p.IndexMax {
		return nil
	}
	return p
}

// splitIndexed splits "scsi12" into ("scsi", 12).
func splitIndexed(name string) (string, int, bool) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i == 0 || i == len(name) || len(name)-i > 4 {
		return "", 0, false
	}
	if len(name)-i > 1 && name[i] == '0' {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil {
		return "", 0, false
	}
	return name[:i], n, true
}

const (
	msgMissing = "property is missing and it is not optional"
	msgUnknown = "property is not defined in schema and the schema does not allow additional properties"
)

// validate checks raw parameters against the set as PVE's JSONSchema does, returning the
// normalised values (booleans and numbers in canonical form) or the per-parameter errors.
func (ps *paramSet) validate(raw map[string]string) (map[string]string, map[string]string) {
	out := make(map[string]string, len(raw))
	errs := map[string]string{}
	for name, value := range raw {
		spec := ps.lookup(name)
		if spec == nil {
			errs[name] = msgUnknown
			continue
		}
		norm, msg := checkValue(spec, name, value)
		if msg != "" {
			errs[name] = msg
			continue
		}
		out[name] = norm
	}
	addMissingRequired(ps, raw, errs)
	for name, spec := range ps.exact {
		if spec.Required {
			if _, ok := raw[name]; !ok {
				errs[name] = msgMissing
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// addMissingRequired is pve-common JSONSchema.pm check_object's `requires` rule: a
// given parameter whose schema requires another that is absent is an error on the
// absent one ("missing property required by 'checksum'").
func addMissingRequired(ps *paramSet, raw, errs map[string]string) {
	for name := range raw {
		spec := ps.lookup(name)
		if spec == nil || spec.Requires == "" {
			continue
		}
		if _, ok := raw[spec.Requires]; !ok && errs[spec.Requires] == "" {
			errs[spec.Requires] = fmt.Sprintf("missing property required by '%s'", name)
		}
	}
}

var (
	reInteger = regexp.MustCompile(`^-?\d+$`)
	reNumber  = regexp.MustCompile(`^[+-]?(\d+\.\d*|\d*\.\d+|\d+)([eE][+-]?\d+)?$`)
)

// checkValue type-checks one value and returns its normalised form or an error text.
func checkValue(spec *ParamSpec, name, value string) (string, string) {
	norm, msg := checkScalar(spec.Type, value)
	if msg != "" {
		return "", msg
	}
	if len(spec.Enum) > 0 && !contains(spec.Enum, norm) {
		return "", fmt.Sprintf("value '%s' does not have a value in the enumeration '%s'", value, strings.Join(spec.Enum, ", "))
	}
	if spec.Type == TypeInteger || spec.Type == TypeNumber {
		if msg := checkRange(spec, norm); msg != "" {
			return "", msg
		}
	}
	if spec.Pattern != nil && !spec.Pattern.MatchString(norm) {
		if spec.FormatError != "" {
			return "", "invalid format - " + spec.FormatError
		}
		return "", "value does not match the regex pattern"
	}
	if spec.Format != nil {
		_, err := parsePropertyString(spec.Format, value)
		var die dieError
		switch {
		case errors.As(err, &die):
			return "", "invalid format - " + die.Error()
		case err != nil:
			return "", fmt.Sprintf("invalid format - format error\n%s.%s", name, err.Error())
		}
	}
	return norm, ""
}

func checkScalar(t ParamType, value string) (string, string) {
	switch t {
	case TypeBoolean:
		if value == "1" || value == "0" {
			return value, ""
		}
		return "", fmt.Sprintf("type check ('boolean') failed - got '%s'", value)
	case TypeInteger:
		if !reInteger.MatchString(value) {
			return "", fmt.Sprintf("type check ('integer') failed - got '%s'", value)
		}
	case TypeNumber:
		if !reNumber.MatchString(value) {
			return "", fmt.Sprintf("type check ('number') failed - got '%s'", value)
		}
	case TypeString:
		// Any value is a string; the caller checks enums, patterns and formats.
	}
	return value, ""
}

func checkRange(spec *ParamSpec, value string) string {
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Sprintf("type check ('%s') failed - got '%s'", spec.Type, value)
	}
	if spec.Min != nil && v < *spec.Min {
		return fmt.Sprintf("value must have a minimum value of %s", formatBound(*spec.Min))
	}
	if spec.Max != nil && v > *spec.Max {
		return fmt.Sprintf("value must have a maximum value of %s", formatBound(*spec.Max))
	}
	return ""
}

func formatBound(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func (e *propError) Error() string { return e.key + ": " + e.msg }
