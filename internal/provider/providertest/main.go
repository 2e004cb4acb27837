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
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// Main is the TestMain body of an integration package sharing one API
// server (stored in *env) and one provider for all its tests. setup runs
// once the provider's caches synced (keep the Harness there); after, when
// not nil, runs once the provider stopped and returns the final exit code
// from the tests' one. Any full Secret list or watch the provider sent fails
// the run. With SKIP_INTEGRATION=1 the tests run with *env nil, so those
// calling env.Require skip.
func Main(m *testing.M, pkg string, env **testenv.Env, o Options, setup func(context.Context, *Harness) error, after func(h *Harness, code int) int) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, pkg+": integration tests disabled by", testenv.SkipEnvVar)
		*env = nil
		return m.Run()
	}
	start := testenv.Start
	if o.GarbageCollector {
		start = func(...string) (*testenv.Env, error) { return testenv.StartControlPlaneWithCRDs() }
	}
	started, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	*env = started
	defer func() { _ = started.Stop() }()

	ctx, cancel := context.WithCancel(context.Background())
	h, err := Start(ctx, started.Config, o)
	if err == nil {
		err = setup(ctx, h)
	}
	if err != nil {
		cancel()
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	code := m.Run()
	cancel()
	h.Stop()
	if bad := h.Requests.FullSecretListsOrWatches(); len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: full Secret lists or watches reached the API server: %v\n", bad)
		code = 1
	}
	if after != nil {
		code = after(h, code)
	}
	return code
}

// Namespace creates a namespace named from prefix for one test's objects.
// envtest runs no namespace controller, so it is left behind.
func (h *Harness) Namespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	if err := h.Kube.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return ns.Name
}

// Eventually polls cond every interval (first at once) until it holds,
// failing t with failure's message once timeout has passed: the polling is
// apimachinery's wait.PollUntilContextTimeout; what is added is the test's
// failure message, which the library's error cannot carry. It polls under a
// context of its own, not t.Context(): the testing package cancels that one
// before the Cleanup functions run, where waits for deletions happen.
func Eventually(t testing.TB, timeout, interval time.Duration, cond func() bool, failure func() string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatal(failure())
	}
}
