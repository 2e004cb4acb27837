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

// Package guesttest holds what the guest kinds' tests share.
package guesttest

import (
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
)

// EventLog is an event.Recorder keeping every event; tests assert on their
// reasons and messages.
type EventLog struct {
	mu     sync.Mutex
	events []event.Event
}

// Event implements event.Recorder.
func (l *EventLog) Event(_ runtime.Object, e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

// WithAnnotations implements event.Recorder.
func (l *EventLog) WithAnnotations(...string) event.Recorder { return l }

// Has reports whether an event of reason was recorded.
func (l *EventLog) Has(reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if string(e.Reason) == reason {
			return true
		}
	}
	return false
}

// Reasons lists the recorded events' reasons in order.
func (l *EventLog) Reasons() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.events))
	for _, e := range l.events {
		out = append(out, string(e.Reason))
	}
	return out
}

// Mentions reports whether any event's message contains s.
func (l *EventLog) Mentions(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}
