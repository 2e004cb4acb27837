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
	"regexp"
	"strings"
	"unicode/utf8"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
)

// MaxTaskMessage bounds the PVE text (a task's exit status, with log lines
// when they add to it) that status.lastTask, a condition or an event carries.
// An event's message is cut at 1 KiB by the API server; this leaves room for
// what the provider says around it.
const MaxTaskMessage = 512

// maxLogLines is how many log lines before "TASK ERROR" a failure quotes.
const maxLogLines = 3

// reNamesNoCause matches exit statuses that say a step failed but not why
// ("start failed: QEMU exited with code 1", "command '...' failed: exit code
// 1", a task stopped from outside, PVE's migrations ending with "migration
// aborted" or "migration problems"): the cause is in the lines logged before.
var reNamesNoCause = regexp.MustCompile(`(?i)(exit(ed)? (with )?code \d+|unexpected status|^migration (aborted|problems))\s*$`)

// TaskLogReader reads a task's log.
type TaskLogReader interface {
	TaskLog(ctx context.Context, upid string) ([]string, error)
}

// failureText is what a failed task says, for status, condition and event:
// PVE's exit status (the worker's whole error on one line), followed by the
// log's last lines before it when the exit status names no cause (see
// describeFailure).
func failureText(ctx context.Context, cl TaskLogReader, upid, exit string, secrets []string) string {
	return describeFailure(ctx, cl, upid, exit, reNamesNoCause.MatchString(exit), secrets)
}

// describeFailure is the one way a task failure becomes text a user sees:
// the exit status, then (when readLog) the log's last lines before it if
// they add to it, with secrets, key=value credentials and URL passwords
// hidden, and the whole bounded by MaxTaskMessage. The Proxmox client
// already hides its own credentials; secrets are the resource's (a
// cloud-init password) that PVE may echo.
func describeFailure(ctx context.Context, cl TaskLogReader, upid, exit string, readLog bool, secrets []string) string {
	text := exit
	if readLog {
		if cause := causeFromLog(ctx, cl, upid, exit); cause != "" {
			text = exit + " (task log: " + cause + ")"
		}
	}
	return Bounded(pve.Scrub(text, secrets...), MaxTaskMessage)
}

// causeFromLog is why the task failed according to its log, or "" when the
// log cannot be read or adds nothing to exit: for PVE's migrations the
// reason AbstractMigrate logged (see migrationCause), otherwise the last
// lines logged before the task's error line.
func causeFromLog(ctx context.Context, cl TaskLogReader, upid, exit string) string {
	lines, err := cl.TaskLog(ctx, upid)
	if err != nil {
		return ""
	}
	if cause := migrationCause(exit, lines); cause != "" {
		return cause
	}
	var cause []string
	for i := len(lines) - 1; i >= 0 && len(cause) < maxLogLines; i-- {
		l := unstamped(lines[i])
		if l == "" || strings.HasPrefix(l, "TASK ") || strings.Contains(exit, l) {
			continue
		}
		cause = append([]string{l}, cause...)
	}
	return strings.Join(cause, "; ")
}

// Bounded cuts text to at most limit bytes on a rune boundary, saying so.
func Bounded(text string, limit int) string {
	const cut = " [truncated]"
	if len(text) <= limit {
		return text
	}
	end := limit - len(cut)
	for end > 0 && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[:end] + cut
}
