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
	"regexp"
	"strings"
)

// PVE's migration workers (pve-guest-common's AbstractMigrate) stamp each
// line with the time, end a failed migration with "migration aborted" as
// the exit status, and log the reason once, on the line before:
// "ERROR: migration aborted (duration 00:00:01): <reason>". When the reason
// is a volume scan's "... - check log", the problems are the scan's
// warnings, each starting "can't migrate" (qemu-server's
// scan_local_volumes, pve-container's phase1).

// reLogStamp is AbstractMigrate's "%F %H:%M:%S " at the start of a line.
var reLogStamp = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d `)

// reMigrationAbort is AbstractMigrate's last log line of a failed migration.
var reMigrationAbort = regexp.MustCompile(`^ERROR: migration aborted \(duration [0-9:]+\): (.+)$`)

// unstamped is a log line without AbstractMigrate's time stamp.
func unstamped(line string) string {
	return strings.TrimSpace(reLogStamp.ReplaceAllString(strings.TrimSpace(line), ""))
}

// migrationCause is the reason a migration task ended "migration aborted",
// with the scan's problems when the reason points to the log; "" for any
// other task, or when the log lacks the abort line.
func migrationCause(exit string, lines []string) string {
	if strings.TrimSpace(exit) != "migration aborted" {
		return ""
	}
	reason := ""
	var problems []string
	for _, line := range lines {
		l := unstamped(line)
		if m := reMigrationAbort.FindStringSubmatch(l); m != nil {
			reason = m[1]
			continue
		}
		if strings.HasPrefix(l, "can't migrate ") {
			problems = append(problems, l)
		}
	}
	if reason == "" {
		return ""
	}
	if strings.HasSuffix(reason, "check log") && len(problems) > 0 {
		return reason + ": " + strings.Join(problems, "; ")
	}
	return reason
}
