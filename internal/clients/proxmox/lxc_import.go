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
	"strconv"
	"strings"
)

// ImportedLXCSpec describes a container's configuration as it is, for a
// resource that imports it: DiffLXC(ImportedLXCSpec(cfg), cfg) is empty, so
// taking the container under full management later writes nothing but what
// the spec is then changed to. Only what reads back unchanged is included:
// the keys of LXCFields the container sets, the features flags, the root
// filesystem and the mount points from mp0 on without a gap (storage
// volumes of whole GiB; a bind mount ends the list), and the NICs from net0
// on without a gap (name, bridge, tag, addresses). What a spec leaves out is
// left alone.
func ImportedLXCSpec(cfg GuestConfig) LXCSpec {
	s := LXCSpec{Config: importedConfig(LXCFields, cfg)}
	if f, ok := cfg.Effective("features"); ok {
		ps := ParsePropString(f)
		s.Features = map[string]any{}
		for k := range LXCFeatureFields {
			v, _ := ps.Get(k)
			s.Features[k] = LXCFeatureFields.Decode(k, v)
		}
	}
	s.RootFS, s.Mounts = importedVolumes(cfg)
	s.NICs = importedLXCNICs(cfg)
	return s
}

// importedVolumes reads the root filesystem and the mount points after it
// (none without an importable root filesystem: a spec's first disk is it).
func importedVolumes(cfg GuestConfig) (*LXCVolume, []LXCVolume) {
	root, ok := importedVolume(cfg, "rootfs")
	if !ok {
		return nil, nil
	}
	var mounts []LXCVolume
	for i := 0; ; i++ {
		m, ok := importedVolume(cfg, "mp"+strconv.Itoa(i))
		if !ok || m.Path == "" {
			return &root, mounts
		}
		mounts = append(mounts, m)
	}
}

// importedVolume reads one storage volume of whole GiB; a bind or device
// mount point is not one.
func importedVolume(cfg GuestConfig, key string) (LXCVolume, bool) {
	v, ok := cfg.Effective(key)
	if !ok {
		return LXCVolume{}, false
	}
	ps := ParsePropString(v)
	st := diskStorage(ps)
	if st == "" || strings.HasPrefix(st, "/") {
		return LXCVolume{}, false
	}
	sizeText, _ := ps.Get(sizeKey)
	gib, ok := LXCVolumeFields.Decode(sizeKey, sizeText).(int64)
	if !ok || gib <= 0 {
		return LXCVolume{}, false
	}
	path, _ := ps.Get("mp")
	return LXCVolume{Storage: st, SizeGB: int(gib), Path: path}, true
}

// importedLXCNICs reads net0, net1, ... up to the first gap or interface
// without a bridge (a spec's interfaces always name one) or with a tag that
// is not a number.
func importedLXCNICs(cfg GuestConfig) []LXCNIC {
	var nics []LXCNIC
	for i := 0; ; i++ {
		v, ok := cfg.Effective("net" + strconv.Itoa(i))
		if !ok {
			return nics
		}
		ps := ParsePropString(v)
		n := LXCNIC{Options: map[string]any{}}
		for key := range LXCNICFields {
			if v, ok := ps.Get(key); ok {
				n.Options[key] = LXCNICFields.Decode(key, v)
			}
		}
		if bridge, _ := n.Options["bridge"].(string); bridge == "" || n.Options["tag"] == int64(0) {
			return nics
		}
		nics = append(nics, n)
	}
}
