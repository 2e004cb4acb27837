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

package providertest

import (
	"testing"
	"time"
)

// The examples' tests wait for their objects to be gone in Cleanup functions,
// after the testing package has cancelled t.Context(): a wait there must still
// poll until its condition holds rather than give up at the first miss.
func TestEventuallyPollsInsideCleanup(t *testing.T) {
	polls := 0
	t.Run("cleanup waits", func(t *testing.T) {
		t.Cleanup(func() {
			Eventually(t, 5*time.Second, 10*time.Millisecond, func() bool {
				polls++
				return polls == 3
			}, func() string { return "the condition never held" })
		})
	})
	if polls != 3 {
		t.Errorf("Eventually polled %d times in a Cleanup, want 3", polls)
	}
}
