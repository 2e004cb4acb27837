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

package pvesim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// skopeoMissing fails an oci-registry-pull worker on a node without skopeo,
// as pve-storage's pull does: it runs "skopeo copy" through
// PVE::Tools::run_command, whose failed exec ends the task with the command
// line and the system's reason.
func (s *Server) skopeoMissing(node, ref, path string) error {
	if !slices.Contains(s.opts.NodesWithoutSkopeo, node) {
		return nil
	}
	cmd := fmt.Sprintf("skopeo copy docker://%s oci-archive:%s.tmp", ref, path)
	return fmt.Errorf("command '%s' failed: open3: exec of %s failed: No such file or directory", cmd, cmd)
}

// reOCIReference is pve-storage's pattern for an OCI reference with a tag.
const reOCIReference = `(?:(?:[a-zA-Z\d]|[a-zA-Z\d][a-zA-Z\d-]*[a-zA-Z\d])(?:\.(?:[a-zA-Z\d]|[a-zA-Z\d][a-zA-Z\d-]*[a-zA-Z\d]))*(?::\d+)?/)?[a-z\d]+(?:(?:[._]|__|[-]*)[a-z\d]+)*(?:/[a-z\d]+(?:(?:[._]|__|[-]*)[a-z\d]+)*)*:\w[\w.-]{0,127}`

// handleOCIPull stores "<filename or reference, normalized>.tar" as a vztmpl volume:
// pve-storage strips everything up to the last '/' and turns other unsafe characters
// into '_', so docker.io/library/nginx:latest becomes local:vztmpl/nginx_latest.tar.
func handleOCIPull(s *Server, r *request) (any, error) {
	st, err := s.nodeStorage(r.node(), r.str("storage"))
	if err != nil {
		return nil, err
	}
	if st.Path == "" {
		return nil, errInternal("can't upload to storage type '%s', not a file based storage!", st.Type)
	}
	if !st.supports("vztmpl") {
		return nil, errInternal("storage '%s' is not configured for content-type 'vztmpl'", st.ID)
	}
	ref := r.str("reference")
	src := ref
	if r.has("filename") {
		src = r.str("filename")
	}
	name := normalizeContentFilename(src) + ".tar"
	volid := st.ID + ":vztmpl/" + name
	if _, exists := st.Volumes[volid]; exists {
		return nil, errInternal("refusing to override existing file '%s'", name)
	}
	return s.startTask(r, taskDef{Type: "ociregistrypull", ID: encodeTaskText(name), Node: r.node(),
		Begin: func(t *task) error {
			t.logf("Copying blob from docker://%s", ref)
			return nil
		},
		Finish: func(t *task) error {
			if err := s.skopeoMissing(r.node(), ref, volumePath(st, volid)); err != nil {
				return err
			}
			if strings.Contains(ref, "fail") {
				return fmt.Errorf("command 'skopeo copy docker://%s oci-archive:%s.tmp' failed: exit code 1", ref, volumePath(st, volid))
			}
			st.addVolume(&volume{VolID: volid, Format: "tar", Size: downloadSize(ref), CTime: time.Now().Unix(), Content: "vztmpl"})
			t.logf("Writing manifest to image destination")
			s.markDirty()
			return nil
		},
	}), nil
}
