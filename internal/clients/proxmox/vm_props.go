package proxmox

import (
	"strconv"
	"strings"
)

// PropString is a PVE property string ("virtio=AA:BB,bridge=vmbr0,firewall=1"
// or "local-lvm:vm-100-disk-0,size=32G"): ordered key/value pairs, where one
// element may be a bare value (no "="), the value of the format's default key.
//
// The grammar is pve-common's parse_property_string (PVE/JSONSchema.pm): the
// string is split on every comma (PVE knows no quoting, and its
// print_property_string refuses a value with a comma), a part of only
// whitespace is skipped, "key=value" needs a key and a value, and a part
// without "=" is the default key's value wherever it stands.
type PropString struct {
	keys   []string
	values map[string]string
}

// ParsePropString splits a property string. A string PVE accepts reads as
// parse_property_string reads it, the default key's value kept under ""; a
// string PVE refuses (a duplicate key, "k=", "=v") is read as best it can be,
// the last of duplicates winning, so the client never fails on PVE's output.
func ParsePropString(s string) PropString {
	p := PropString{values: map[string]string{}}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		switch {
		case ok && k == "":
			// "=value" names no key: PVE refuses it; keeping it under the
			// bare value's key would render as something else.
			continue
		case !ok:
			// A bare element is the default key's value (a volume for
			// disks); keep it under "" so it renders back in place.
			k, v = "", part
		}
		p.Set(k, v)
	}
	return p
}

// Get returns k's value ("" for the bare first element) and whether k is present.
func (p PropString) Get(k string) (string, bool) {
	v, ok := p.values[k]
	return v, ok
}

// Set gives k the value v, keeping k's place or appending it when new.
func (p *PropString) Set(k, v string) {
	if _, ok := p.values[k]; !ok {
		p.keys = append(p.keys, k)
	}
	p.values[k] = v
}

// Del removes k and its value.
func (p *PropString) Del(k string) {
	if _, ok := p.values[k]; !ok {
		return
	}
	delete(p.values, k)
	for i, key := range p.keys {
		if key == k {
			p.keys = append(p.keys[:i], p.keys[i+1:]...)
			return
		}
	}
}

func (p PropString) String() string {
	parts := make([]string, 0, len(p.keys))
	for _, k := range p.keys {
		if k == "" {
			parts = append(parts, p.values[k])
			continue
		}
		parts = append(parts, k+"="+p.values[k])
	}
	return strings.Join(parts, ",")
}

// nicModels are the NIC models PVE accepts as the first key of netN.
var nicModels = map[string]bool{
	"e1000": true, "e1000-82540em": true, "e1000-82544gc": true, "e1000-82545em": true, "e1000e": true,
	"i82551": true, "i82557b": true, "i82559er": true, "ne2k_isa": true, "ne2k_pci": true, "pcnet": true,
	"rtl8139": true, "virtio": true, "vmxnet3": true,
}

// nicModel returns the model of a netN value, the MAC PVE assigned and the
// key holding them ("virtio=BC:24:11:00:00:01,bridge=vmbr0" → "virtio",
// "BC:24:...", "virtio"; a bare "virtio,bridge=..." → "virtio", "", "").
func nicModel(p PropString) (model, mac, key string) {
	for _, k := range p.keys {
		if nicModels[k] {
			return k, p.values[k], k
		}
	}
	if v, ok := p.Get(""); ok && nicModels[v] {
		return v, "", ""
	}
	if m, ok := p.Get("model"); ok {
		mac, _ := p.Get("macaddr")
		return m, mac, "model"
	}
	return "", "", ""
}

// diskStorage returns the storage of a disk value's volume
// ("local-lvm:vm-100-disk-0" → "local-lvm").
func diskStorage(p PropString) string {
	vol, ok := p.Get("")
	if !ok {
		vol, _ = p.Get("file")
	}
	st, _, _ := strings.Cut(vol, ":")
	return st
}

// sizeBytes parses PVE sizes ("32G", "512M", "1T", "10240K", plain bytes).
func sizeBytes(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K', 'k':
		mult = 1 << 10
	case 'M', 'm':
		mult = 1 << 20
	case 'G', 'g':
		mult = 1 << 30
	case 'T', 't':
		mult = 1 << 40
	}
	if mult != 1 {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	// !(b < maxSize) also refuses NaN; "Inf", "1e19G" would not fit.
	if b := f * float64(mult); err != nil || f < 0 || !(b < maxSize) {
		return 0, false
	}
	return int64(f * float64(mult)), true
}

// maxSize is the first byte count an int64 cannot hold (2^63).
const maxSize = float64(1 << 63)
