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
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// taskLog is one task's log as PVE returns it; reads counts the calls.
type taskLog struct {
	lines []string
	err   error
	reads int
}

func (l *taskLog) TaskLog(context.Context, string) ([]string, error) {
	l.reads++
	return l.lines, l.err
}

func TestFailureText(t *testing.T) {
	long := strings.Repeat("é", MaxTaskMessage)
	cases := map[string]struct {
		reason    string
		exit      string
		log       *taskLog
		secrets   []string
		want      string
		wantReads int
	}{
		"WholeReason": {
			reason: "An exit status that names its cause is all there is to say: the log is not read.",
			exit:   "unable to create VM 100 - volume local:iso/missing.iso does not exist",
			log:    &taskLog{lines: []string{"TASK ERROR: unable to create VM 100 - volume local:iso/missing.iso does not exist"}},
			want:   "unable to create VM 100 - volume local:iso/missing.iso does not exist",
		},
		"CauseInTheLog": {
			reason: "QEMU's exit code says nothing: the lines logged before it do.",
			exit:   "start failed: QEMU exited with code 1",
			log: &taskLog{lines: []string{"generating cloud-init ISO", "bridge 'vmbr9' does not exist",
				"kvm: network script /var/lib/qemu-server/pve-bridge failed with status 512", "TASK ERROR: start failed: QEMU exited with code 1"}},
			want:      "start failed: QEMU exited with code 1 (task log: generating cloud-init ISO; bridge 'vmbr9' does not exist; kvm: network script /var/lib/qemu-server/pve-bridge failed with status 512)",
			wantReads: 1,
		},
		"MigrationAborted": {
			reason: "PVE's migrations end with \"migration aborted\" and log why once, on AbstractMigrate's abort line.",
			exit:   "migration aborted",
			log: &taskLog{lines: []string{"ERROR: migration aborted (duration 00:00:00): lxc live migration is currently not implemented",
				"TASK ERROR: migration aborted"}},
			want:      "migration aborted (task log: lxc live migration is currently not implemented)",
			wantReads: 1,
		},
		"MigrationAbortedInPrepare": {
			reason: "AbstractMigrate stamps its lines (pve-guest-common AbstractMigrate.pm, $msg2text); a refusal in QemuMigrate's prepare is on the abort line.",
			exit:   "migration aborted",
			log: &taskLog{lines: []string{"2026-12-04 15:00:00 ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: hostpci0",
				"TASK ERROR: migration aborted"}},
			want:      "migration aborted (task log: can't migrate VM which uses local devices: hostpci0)",
			wantReads: 1,
		},
		"MigrationScanProblems": {
			reason: "A failed volume scan says \"check log\": the problems are the scan's warnings, further up than the last lines (qemu-server QemuMigrate.pm, scan_local_volumes).",
			exit:   "migration aborted",
			log: &taskLog{lines: []string{"2026-12-04 15:00:00 starting migration of VM 100 to node 'b' (10.0.0.2)",
				"2026-12-04 15:00:00 found local disk 'local:iso/x.iso' (attached)",
				"2026-12-04 15:00:00 can't migrate local disk '/dev/sdb': local file/device",
				"2026-12-04 15:00:00 can't migrate local disk 'local:iso/x.iso': local cdrom image",
				"2026-12-04 15:00:00 ERROR: Problem found while scanning volumes - can't migrate VM - check log",
				"2026-12-04 15:00:00 aborting phase 1 - cleanup resources",
				"2026-12-04 15:00:00 ERROR: migration aborted (duration 00:00:00): Problem found while scanning volumes - can't migrate VM - check log",
				"TASK ERROR: migration aborted"}},
			want: "migration aborted (task log: Problem found while scanning volumes - can't migrate VM - check log: " +
				"can't migrate local disk '/dev/sdb': local file/device; can't migrate local disk 'local:iso/x.iso': local cdrom image)",
			wantReads: 1,
		},
		"LogAddsNothing": {
			reason:    "A log holding only the error line adds nothing.",
			exit:      "command 'qemu-img convert' failed: exit code 1",
			log:       &taskLog{lines: []string{"TASK ERROR: command 'qemu-img convert' failed: exit code 1"}},
			want:      "command 'qemu-img convert' failed: exit code 1",
			wantReads: 1,
		},
		"LogUnreadable": {
			reason:    "A log that cannot be read leaves the exit status alone.",
			exit:      "unexpected status",
			log:       &taskLog{err: errors.New("connection refused")},
			want:      "unexpected status",
			wantReads: 1,
		},
		"SecretsHidden": {
			reason:  "The resource's secrets and any key=value credential never reach a message.",
			exit:    "400 Parameter verification failed. cicustom: bad value user=s3cr3t-pw cipassword=hunter2",
			log:     &taskLog{},
			secrets: []string{"s3cr3t-pw"},
			want:    "400 Parameter verification failed. cicustom: bad value user=[redacted] cipassword=[redacted]",
		},
		"Bounded": {
			reason: "A long reason is cut on a rune boundary and says so.",
			exit:   long,
			log:    &taskLog{},
			want:   long[:MaxTaskMessage-len(" [truncated]")] + " [truncated]",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := failureText(context.Background(), tc.log, "UPID:pve:00000001:00000001:00000001:qmstart:100:root@pam:", tc.exit, tc.secrets)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nfailureText(...): -want, +got:\n%s", tc.reason, diff)
			}
			if len(got) > MaxTaskMessage {
				t.Errorf("%d bytes, over the %d bound", len(got), MaxTaskMessage)
			}
			if tc.log.reads != tc.wantReads {
				t.Errorf("%s\nlog read %d times, want %d", tc.reason, tc.log.reads, tc.wantReads)
			}
		})
	}
}
