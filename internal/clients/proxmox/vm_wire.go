package proxmox

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// The loose-JSON decoders of the wire layer, the only ones: PVE types its
// output loosely (a config's memory is "2048" one release and 2048 another,
// booleans are 0/1, true/false or "1"), and fields come and go with a
// guest's state.

// wireText decodes any JSON scalar into its text; a boolean reads as PVE's
// "1" or "0"; null, absent, objects and arrays read as "".
type wireText string

func (s *wireText) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*s = ""
	case b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = wireText(v)
	case bytes.Equal(b, []byte("true")):
		*s = "1"
	case bytes.Equal(b, []byte("false")):
		*s = "0"
	case b[0] == '{' || b[0] == '[':
		*s = ""
	default:
		// Numbers (and anything else) are kept as written, so 1700000000
		// never turns into 1.7e+09.
		*s = wireText(b)
	}
	return nil
}

// wireInt decodes a JSON number or a numeric string; anything else is zero.
type wireInt int64

func (i *wireInt) UnmarshalJSON(b []byte) error {
	var s wireText
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		*i = 0
		return nil
	}
	if n, err := strconv.ParseInt(string(s), 10, 64); err == nil {
		*i = wireInt(n)
		return nil
	}
	if f, err := strconv.ParseFloat(string(s), 64); err == nil {
		*i = wireInt(int64(f))
		return nil
	}
	*i = 0
	return nil
}

// wholeNumber reads a decimal text that must be a whole number ("101",
// "101.0"); "" is zero.
func wholeNumber(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int(f)) {
		return 0, errors.Errorf("%q is not an integer", s)
	}
	return int(f), nil
}

// decodeUPID reads the data of an async endpoint: a UPID string, or null
// when PVE finished the work without a task (e.g. background_delay).
func decodeUPID(raw json.RawMessage) (string, error) {
	var s wireText
	if err := s.UnmarshalJSON(raw); err != nil {
		return "", errors.Wrap(err, "cannot decode task id")
	}
	return string(s), nil
}

// boolText reports whether a PVE boolean rendered as text is true.
func boolText(s string) bool {
	s = strings.TrimSpace(s)
	return s == "1" || strings.EqualFold(s, "true") || strings.EqualFold(s, "yes") || strings.EqualFold(s, "on")
}

// pveBool renders a Go bool the way PVE's boolean parameters accept it.
func pveBool(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
