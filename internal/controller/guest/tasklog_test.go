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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// logLines is a TaskLogReader over fixed lines; nil lines fail the read.
type logLines []string

func (l logLines) TaskLog(context.Context, string) ([]string, error) {
	if l == nil {
		return nil, errors.New("no log")
	}
	return l, nil
}

func TestTaskFailure(t *testing.T) {
	cases := map[string]struct {
		reason string
		lines  []string
		exit   string
		want   string
	}{
		"ContextBeforeTheError": {
			reason: "The log lines before PVE's TASK ERROR line tell what the exit status leaves out.",
			lines:  []string{"downloading https://x/a.iso to /var/lib/vz/template/iso/a.iso", "HTTP request sent, awaiting response... 404 Not Found", "TASK ERROR: download failed"},
			exit:   "download failed",
			want:   "download failed (task log: downloading https://x/a.iso to /var/lib/vz/template/iso/a.iso; HTTP request sent, awaiting response... 404 Not Found)",
		},
		"OnlyTheLastLines": {
			reason: "At most three lines of context are kept, the last ones.",
			lines:  []string{"one", "two", "three", "four", "TASK ERROR: boom"},
			exit:   "boom",
			want:   "boom (task log: two; three; four)",
		},
		"NothingToAdd": {
			reason: "A log that only repeats the exit status adds nothing.",
			lines:  []string{"", "checksum mismatch", "TASK ERROR: checksum mismatch"},
			exit:   "checksum mismatch",
			want:   "checksum mismatch",
		},
		"NoLog": {
			reason: "Without a log the exit status is the reason.",
			exit:   "unexpected status",
			want:   "unexpected status",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			last := &v1alpha1.TaskStatus{UPID: "UPID:pve:1:2:3:download:a:root@pam:", ExitStatus: tc.exit}
			if got := TaskFailure(context.Background(), logLines(tc.lines), last); got != tc.want {
				t.Errorf("%s\nTaskFailure() = %q, want %q", tc.reason, got, tc.want)
			}
		})
	}
}

func TestFollowLaterCreateTask(t *testing.T) {
	const (
		older       = "UPID:pve:00001000:00100000:65000000:download:a.iso:root@pam:"
		sameSecond  = "UPID:pve:00001001:00100007:65000000:imgdel:local:root@pam:"
		laterSecond = "UPID:pve:00001002:0010000E:65000001:download:a.iso:root@pam:"
	)
	cases := map[string]struct {
		reason     string
		annotation string
		last       string
		want       bool
	}{
		"NothingRecorded":      {reason: "The first create task is followed.", annotation: older, want: true},
		"LaterCreateAttempt":   {reason: "A create task started after the last task (a retry) is followed.", annotation: laterSecond, last: sameSecond, want: true},
		"AlreadyFollowed":      {reason: "The task already recorded is not recorded again.", annotation: older, last: older},
		"OlderThanTheLastTask": {reason: "A task started later in the same second (by process start) is newer than the create task.", annotation: older, last: sameSecond},
		"NoCreateTask":         {reason: "Without an annotation nothing changes.", last: older},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := &metav1.ObjectMeta{}
			if tc.annotation != "" {
				o.SetAnnotations(map[string]string{AnnotationCreateTask: tc.annotation})
			}
			var last *v1alpha1.TaskStatus
			if tc.last != "" {
				last = &v1alpha1.TaskStatus{UPID: tc.last, Status: TaskStopped}
			}
			got := FollowLaterCreateTask(o, &last)
			if got != tc.want || (got && last.UPID != tc.annotation) {
				t.Errorf("%s\nFollowLaterCreateTask() = %v, last %+v; want %v", tc.reason, got, last, tc.want)
			}
		})
	}
}

// Both ways a task failure reaches a user (TaskFailure for kinds that always quote the
// log, failureText for guests) hide a password or token that PVE echoed in the exit
// status or the log.
func TestTaskFailureScrubsSecrets(t *testing.T) {
	const (
		upid   = "UPID:pve:1:2:3:download:a:root@pam:"
		secret = "tok-3c2f9a"
	)
	cases := map[string]struct {
		reason string
		lines  []string
		exit   string
		leaks  []string
	}{
		"ResourceSecretInTheExitStatus": {
			reason: "A secret the resource holds is hidden wherever PVE echoes it.",
			exit:   "command 'qm set 100 --cipassword " + secret + "' failed: exit code 1",
			leaks:  []string{secret},
		},
		"KeyValueCredentialInTheLog": {
			reason: "A key=value credential PVE logs is hidden whatever its value.",
			lines:  []string{"run: qm set 100 --cicustom x cipassword=hunter2-pw", "TASK ERROR: command failed: exit code 1"},
			exit:   "command failed: exit code 1",
			leaks:  []string{"hunter2-pw"},
		},
		"APITokenInTheLog": {
			reason: "An API token header echoed in the log is hidden.",
			lines:  []string{"Authorization: PVEAPIToken=root@pam!ci=0b5e-77aa", "TASK ERROR: unexpected status"},
			exit:   "unexpected status",
			leaks:  []string{"0b5e-77aa"},
		},
		"URLPasswordInTheLog": {
			reason: "A download task logs its URL: the password in it is hidden.",
			lines:  []string{"downloading https://mirror:s3cr3t-pw@example.org/a.iso to /var/lib/vz/template/iso/a.iso", "TASK ERROR: download failed: exit code 8"},
			exit:   "download failed: exit code 8",
			leaks:  []string{"s3cr3t-pw"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			last := &v1alpha1.TaskStatus{UPID: upid, ExitStatus: tc.exit}
			texts := map[string]string{
				"TaskFailure": TaskFailure(context.Background(), logLines(tc.lines), last, secret),
				"failureText": failureText(context.Background(), logLines(tc.lines), upid, tc.exit, []string{secret}),
			}
			for path, text := range texts {
				if !strings.Contains(text, "[redacted]") {
					t.Errorf("%s\n%s: %q hides nothing", tc.reason, path, text)
				}
				for _, leak := range tc.leaks {
					if strings.Contains(text, leak) {
						t.Errorf("%s\n%s leaks %q: %q", tc.reason, path, leak, text)
					}
				}
			}
		})
	}
}
