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

package proxmox

import (
	"fmt"
	"strconv"
	"strings"
)

// LXCVolume is the root filesystem or a mount point (Path set).
type LXCVolume struct {
	Storage string
	SizeGB  int
	Path    string
}

// options are the volume's options by key of LXCVolumeFields.
func (v LXCVolume) options() map[string]any { return map[string]any{sizeKey: v.SizeGB} }

// LXCNIC is one container interface (netN): its options by key of
// LXCNICFields, as the API holds them. Options left unset are not managed,
// except the name, which defaults to ethN, and the tag: unset is untagged.
type LXCNIC struct {
	Options map[string]any
}

// LXCSpec is what a Container asks of an LXC guest, in the provider's terms;
// this package turns it into PVE keys. Zero values mean "not managed".
type LXCSpec struct {
	// Config are the scalar keys by PVE key (LXCFields), as the API holds
	// them; Encode drops those left unset.
	Config map[string]any
	RootFS *LXCVolume
	Mounts []LXCVolume // mp0, mp1, ...
	NICs   []LXCNIC    // net0, net1, ...
	// Features are the flags by key of LXCFeatureFields, as the API holds
	// them (nil: features not managed; a flag left out or false is off).
	Features map[string]any
	// Unprivileged is what the spec says of unprivileged (nil: nothing). PVE
	// fixes it when the container is created, so it is compared, never set.
	Unprivileged *bool
	// AdditionalConfig are raw PVE keys the user manages directly.
	AdditionalConfig map[string]string
}

// LXCCreate is what only a creation from a template archive sets.
type LXCCreate struct {
	OSTemplate   string
	Unprivileged bool
	// Password of root; it never reads back from PVE.
	Password    string
	SSHKeys     []string
	Description string
}

// managedKeys renders the keys of s compared verbatim (modulo formatting).
func (s LXCSpec) managedKeys() map[string]string {
	k := encodeConfig(LXCFields, s.Config)
	for key, v := range s.AdditionalConfig {
		k[key] = v
	}
	return k
}

// CreateParams renders s and c as the parameters of POST /nodes/{node}/lxc.
// The container is created stopped; unprivileged is always sent, since PVE
// releases disagree on its default.
func (s LXCSpec) CreateParams(c LXCCreate) map[string]string {
	p := s.managedKeys()
	p["ostemplate"] = c.OSTemplate
	p["unprivileged"] = pveBool(c.Unprivileged)
	setNonEmpty(p, "password", c.Password)
	setNonEmpty(p, "description", c.Description)
	if len(c.SSHKeys) > 0 {
		p["ssh-public-keys"] = strings.Join(c.SSHKeys, "\n")
	}
	if s.RootFS != nil {
		p["rootfs"] = fmt.Sprintf("%s:%d", s.RootFS.Storage, s.RootFS.SizeGB)
	}
	for i, m := range s.Mounts {
		p["mp"+strconv.Itoa(i)] = newMountValue(m)
	}
	for i, n := range s.NICs {
		p["net"+strconv.Itoa(i)], _ = lxcNICValue(n, i, "")
	}
	if s.Features != nil {
		p["features"], _ = featuresValue(s.Features, "")
	}
	return p
}

func newMountValue(m LXCVolume) string {
	return fmt.Sprintf("%s:%d,mp=%s", m.Storage, m.SizeGB, m.Path)
}

// LXCPlan is what it takes to make a container match an LXCSpec.
type LXCPlan struct {
	// Set are keys changed with PUT config, which also allocates new mount
	// points synchronously.
	Set map[string]string
	// Delete are keys removed with the same PUT (features with no flag
	// left).
	Delete []string
	// Resizes grow the root filesystem or a mount point (async).
	Resizes []Resize
	// Refused are changes not made (shrinking, moving a volume), each a
	// sentence naming the field.
	Refused []string
	// Fields names what drifted, for events.
	Fields []string
}

// Empty reports whether the plan changes nothing (refusals aside).
func (p LXCPlan) Empty() bool { return len(p.Set) == 0 && len(p.Delete) == 0 && len(p.Resizes) == 0 }

// DiffLXC compares s with a container's configuration (the values it will
// have after the next restart). Only what s sets is compared; a key absent
// from the configuration has PVE's default, as Diff reads it.
func DiffLXC(s LXCSpec, cfg GuestConfig) LXCPlan {
	p := LXCPlan{Set: map[string]string{}}
	keys := s.managedKeys()
	p.refuseUnprivileged(s.Unprivileged, keys, cfg)
	for _, k := range sortedKeys(keys) {
		if have, present := cfg.Effective(k); sameValue(LXCFields, k, keys[k], have, present) {
			continue
		}
		p.set(k, keys[k])
	}
	if s.Features != nil {
		have, _ := cfg.Effective("features")
		switch v, changed := featuresValue(s.Features, have); {
		case changed && v == "":
			p.Delete = append(p.Delete, "features")
			p.Fields = append(p.Fields, "features")
		case changed:
			p.set("features", v)
		}
	}
	for i, n := range s.NICs {
		k := "net" + strconv.Itoa(i)
		have, _ := cfg.Effective(k)
		if v, changed := lxcNICValue(n, i, have); changed {
			p.set(k, v)
		}
	}
	if s.RootFS != nil {
		p.diffVolume("rootfs", *s.RootFS, cfg)
	}
	for i, m := range s.Mounts {
		p.diffVolume("mp"+strconv.Itoa(i), m, cfg)
	}
	return p
}

// refuseUnprivileged refuses a change of unprivileged (from the template or
// additionalConfig, which it takes out of keys): pve-container's
// update_pct_config answers any write of it "unable to modify read-only
// option: 'unprivileged'", so sending it would only fail every reconcile.
func (p *LXCPlan) refuseUnprivileged(want *bool, keys map[string]string, cfg GuestConfig) {
	have, _ := cfg.Effective("unprivileged")
	is := boolText(have)
	if raw, ok := keys["unprivileged"]; ok {
		delete(keys, "unprivileged")
		if boolText(raw) != is {
			p.Refused = append(p.Refused, unprivilegedRefusal("additionalConfig.unprivileged", boolText(raw), is))
		}
	}
	if want != nil && *want != is {
		p.Refused = append(p.Refused, unprivilegedRefusal("template.unprivileged", *want, is))
	}
}

func unprivilegedRefusal(field string, want, is bool) string {
	return fmt.Sprintf("%s is %t but the container was created with unprivileged %s: Proxmox VE sets it only "+
		"when a container is created (read-only option), so it is not changed; recreate the container to change it",
		field, want, pveBool(is))
}

func (p *LXCPlan) set(k, v string) {
	p.Set[k] = v
	p.Fields = append(p.Fields, k)
}

// diffVolume adds a missing mount point, moves a mount point's path, grows a
// volume, and refuses to shrink or move one between storages.
func (p *LXCPlan) diffVolume(key string, want LXCVolume, cfg GuestConfig) {
	have, ok := cfg.Effective(key)
	if !ok {
		if key != "rootfs" {
			p.set(key, newMountValue(want))
		}
		return
	}
	ps := ParsePropString(have)
	if refused := storageRefusal("volume", key, ps, want.Storage); refused != "" {
		p.Refused = append(p.Refused, refused)
		return
	}
	if mp, _ := ps.Get("mp"); want.Path != "" && mp != want.Path {
		ps.Set("mp", want.Path)
		p.set(key, ps.String())
	}
	switch grow, refused := growth(LXCVolumeFields, "volume", key, want.options(), ps); {
	case grow != nil:
		p.Resizes = append(p.Resizes, *grow)
		p.Fields = append(p.Fields, key)
	case refused != "":
		p.Refused = append(p.Refused, refused)
	}
}

// lxcNICValue returns netN (index i) with the spec applied to what the
// container has (have, "" for a new interface), keeping the MAC, the type
// and every option the spec does not name.
func lxcNICValue(want LXCNIC, i int, have string) (string, bool) {
	ps := ParsePropString(have)
	changed := have == ""
	for _, k := range LXCNICFields.keys() {
		enc, set := LXCNICFields.Encode(k, want.Options[k])
		if !set && k == "name" {
			enc, set = "eth"+strconv.Itoa(i), true
		}
		cur, present := ps.Get(k)
		switch {
		case set && !LXCNICFields.Same(k, enc, cur, present):
			ps.Set(k, enc)
			changed = true
		case !set && k == "tag" && present:
			// A spec without a VLAN asks for an untagged interface.
			ps.Del(k)
			changed = true
		}
	}
	return ps.String(), changed
}

// featuresValue returns the features value with the spec's flags applied to
// what the container has, keeping the flags the spec does not manage.
func featuresValue(want map[string]any, have string) (string, bool) {
	ps := ParsePropString(have)
	changed := false
	for _, k := range LXCFeatureFields.keys() {
		enc, _ := LXCFeatureFields.Encode(k, want[k])
		on := boolText(enc)
		cur, _ := ps.Get(k)
		switch {
		case on && !boolText(cur):
			ps.Set(k, "1")
			changed = true
		case !on && boolText(cur):
			ps.Del(k)
			changed = true
		}
	}
	return ps.String(), changed
}
