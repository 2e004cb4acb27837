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
