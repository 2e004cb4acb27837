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
	"reflect"
	"strings"
)

// Field maps one API field, by its JSON name in the struct a table reads
// (fields of inlined structs included; a dotted path "ipv4.address" reads
// through a struct pointer, and finds nothing while it is nil), to a Proxmox VE configuration key;
// the client's field table (pve.QEMUFields, pve.LXCFields, ...) knows the
// key's codec, default and how a change applies.
type Field struct {
	Path string
	Key  string
}

// Fields is a kind's field table over one API struct: desired state and
// imports both come from it, so adding a field is adding a row.
type Fields []Field

// Values returns the value of each field of obj (a pointer to the struct)
// by PVE key, as the API holds it (an int32, *bool, []string, ...): the
// client's Encode renders it and tells a set field from one left out.
func (fs Fields) Values(obj any) map[string]any {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	out := make(map[string]any, len(fs))
	for _, f := range fs {
		if fv, ok := fieldByJSON(v.Elem(), f.Path); ok {
			out[f.Key] = fv.Interface()
		}
	}
	return out
}

// Fill sets the fields of obj (a pointer to the struct) from values by PVE
// key as the client decodes them (int64, bool, string, []string); a key
// with no row, or a value the field cannot hold, is left out.
func (fs Fields) Fill(obj any, values map[string]any) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	for _, f := range fs {
		val, ok := values[f.Key]
		if !ok {
			continue
		}
		if fv, ok := fieldByJSON(v.Elem(), f.Path); ok {
			assign(fv, reflect.ValueOf(val))
		}
	}
}

// LateInit sets the fields of obj (a pointer to the struct) the spec leaves
// unset (a nil pointer, an empty list, a zero) from values by PVE key, as
// Fill does, and reports whether it set any. Fields the spec sets are
// never touched.
func (fs Fields) LateInit(obj any, values map[string]any) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	changed := false
	for _, f := range fs {
		val, ok := values[f.Key]
		fv, found := fieldByJSON(v.Elem(), f.Path)
		if !ok || !found || !fv.IsZero() {
			continue
		}
		assign(fv, reflect.ValueOf(val))
		changed = changed || !fv.IsZero()
	}
	return changed
}

// fieldByJSON finds the field of struct s whose JSON name is name, looking
// into inlined (embedded) structs.
func fieldByJSON(s reflect.Value, name string) (reflect.Value, bool) {
	if head, rest, dotted := strings.Cut(name, "."); dotted {
		v, ok := fieldByJSON(s, head)
		if ok && v.Kind() == reflect.Pointer {
			v = v.Elem()
		}
		if !ok || !v.IsValid() {
			return reflect.Value{}, false
		}
		return fieldByJSON(v, rest)
	}
	if s.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	t := s.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == name {
			return s.Field(i), true
		}
		if sf.Anonymous && tag == "" {
			if fv, ok := fieldByJSON(s.Field(i), name); ok {
				return fv, true
			}
		}
	}
	return reflect.Value{}, false
}

// assign sets dst to src, converting between integer widths and allocating
// a pointer when dst is one.
func assign(dst, src reflect.Value) {
	if dst.Kind() == reflect.Pointer {
		p := reflect.New(dst.Type().Elem())
		if set(p.Elem(), src) {
			dst.Set(p)
		}
		return
	}
	set(dst, src)
}

func set(dst, src reflect.Value) bool {
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
	case src.CanInt() && dst.CanInt():
		if dst.OverflowInt(src.Int()) {
			return false
		}
		dst.SetInt(src.Int())
	default:
		return false
	}
	return true
}
