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

package pvesim_test

import (
	"strings"
	"testing"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A node without skopeo accepts the pull (the check is the worker's), then
// the task fails with the command and the system's reason, and no file is
// left behind; another node of the same cluster pulls.
func TestOCIRegistryPullWithoutSkopeo(t *testing.T) {
	sim := startSim(t, pvesim.Options{Nodes: []string{"pve", "bare"}, NodesWithoutSkopeo: []string{"bare"}})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	bare := c.NodeRef("bare").StorageRef("local")

	task, err := bare.OCIRegistryPull(ctx, "docker.io/library/alpine:3.22", "")
	if err != nil {
		t.Fatalf("the request itself is accepted: %v", err)
	}
	err = waitTask(t, c, task)
	if !proxmox.IsTaskFailed(err) || !strings.Contains(task.ExitStatus, "skopeo copy docker://docker.io/library/alpine:3.22") ||
		!strings.Contains(task.ExitStatus, "No such file or directory") {
		t.Fatalf("the task must fail naming skopeo: %v (exit status %q)", err, task.ExitStatus)
	}
	content, err := bare.GetContent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hasVolume(content, "local:vztmpl/alpine_3.22.tar") {
		t.Fatal("a failed pull must leave no file")
	}
	task, err = c.NodeRef("pve").StorageRef("local").OCIRegistryPull(ctx, "docker.io/library/alpine:3.22", "")
	mustWait(t, c, "pull on a node with skopeo", task, err)
}
