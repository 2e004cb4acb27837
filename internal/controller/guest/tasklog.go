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
	"strings"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// TaskLogReader reads the end of a task's log.
type TaskLogReader interface {
	TaskLog(ctx context.Context, upid string, n int) ([]string, error)
}

const (
	// failureLogLines is how much of a failed task's log is read.
	failureLogLines = 20
	// failureContextLines is how many log lines before the error are kept.
	failureContextLines = 2
)

// TaskFailure is PVE's reason for the failed task last: its exit status
// with what the log said just before it, when that adds to it. Without the
// log (PVE does not answer) it is the exit status alone.
func TaskFailure(ctx context.Context, cl TaskLogReader, last *v1alpha1.TaskStatus) string {
	lines, err := cl.TaskLog(ctx, last.UPID, failureLogLines)
	if err != nil {
		return last.ExitStatus
	}
	return FailureFromLog(lines, last.ExitStatus)
}

// FailureFromLog joins a task's exit status with the last log lines before
// it that say something the exit status does not ("TASK ..." lines and
// blank ones are PVE's framing).
func FailureFromLog(lines []string, exit string) string {
	var said []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "TASK ") || strings.Contains(exit, l) {
			continue
		}
		said = append(said, l)
	}
	if len(said) > failureContextLines {
		said = said[len(said)-failureContextLines:]
	}
	if len(said) == 0 {
		return exit
	}
	return exit + " (log: " + strings.Join(said, "; ") + ")"
}
