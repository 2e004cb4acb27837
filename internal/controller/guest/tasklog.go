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
	"context"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// TaskFailure is PVE's reason for the failed task last, for kinds whose
// task exit statuses rarely name a cause (a download's "download failed"):
// the exit status followed by the log's last lines before it whenever they
// add to it, scrubbed of secrets and bounded as failureText is (both are
// describeFailure). Without the log (PVE does not answer) it is the exit
// status alone.
func TaskFailure(ctx context.Context, cl TaskLogReader, last *v1alpha1.TaskStatus, secrets ...string) string {
	return describeFailure(ctx, cl, last.UPID, last.ExitStatus, true, secrets)
}
