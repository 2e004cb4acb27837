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

// Package providertest runs the whole provider in-process for integration
// tests: the manager built by provider.New against a test API server, a
// simulated Proxmox VE, every log line at debug level captured, and every
// Secret list or watch the provider sends to the API server recorded.
//
//	var env *testenv.Env
//	var h *providertest.Harness
//
//	func TestMain(m *testing.M) { ... env, _ = testenv.Start(); h, _ = providertest.Start(ctx, env.Config, providertest.Options{}) ...}
//
// At the end of a package, h.Requests.FullSecretListsOrWatches() must be
// empty: the provider holds no Secret informer.
package providertest

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// syncTimeout bounds the wait for the provider's caches on a busy machine.
const syncTimeout = 60 * time.Second

// Options configure a Harness.
type Options struct {
	// Provider options; Logger is replaced by the capturing logger. A zero
	// PollInterval becomes 10s, so periodic work happens within a test.
	Provider provider.Options
	// Sim configures the simulator.
	Sim pvesim.Options
	// GarbageCollector runs the package's tests on cluster/local's control
	// plane, whose kube-controller-manager collects the dependents of deleted
	// owners (envtest has no garbage collector); it starts in about 15 s.
	GarbageCollector bool
}

// A Harness is a running provider with its simulator.
type Harness struct {
	// Kube is an uncached client for the test's own reads and writes.
	Kube     client.Client
	Provider *provider.Provider
	Sim      *pvesim.Server
	// Logs holds everything the provider logged, at debug level.
	Logs *SyncBuffer
	// Requests records the provider's Secret lists and watches.
	Requests *RequestLog

	done chan struct{}
}

// Start starts the simulator and the provider against cfg, and waits for the
// provider's caches to sync. The provider stops when ctx is cancelled; call
// Stop afterwards. Start also makes the capturing logger controller-runtime's
// and klog's global logger, so it should run once per test binary.
func Start(ctx context.Context, cfg *rest.Config, o Options) (*Harness, error) {
	kube, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	sim, err := pvesim.Start(o.Sim)
	if err != nil {
		return nil, errors.Wrap(err, "cannot start the simulator")
	}

	logs := &SyncBuffer{}
	zl := zap.New(zap.UseDevMode(true), zap.WriteTo(logs))
	ctrl.SetLogger(zl)
	klog.SetLogger(zl)

	requests := &RequestLog{}
	pcfg := rest.CopyConfig(cfg)
	pcfg.Wrap(requests.wrap)

	po := o.Provider
	po.Logger = zl
	if po.PollInterval == 0 {
		po.PollInterval = 10 * time.Second
	}
	p, err := provider.New(ctx, pcfg, po)
	if err != nil {
		sim.Close()
		return nil, errors.Wrap(err, "cannot build the provider")
	}
	h := &Harness{Kube: kube, Provider: p, Sim: sim, Logs: logs, Requests: requests, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		if err := p.Start(ctx); err != nil {
			zl.Error(err, "provider stopped")
		}
	}()
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !p.GetCache().WaitForCacheSync(syncCtx) {
		return nil, errors.New("the provider's caches did not sync")
	}
	// Controllers start once the CRD gate has seen their kinds served.
	if err := p.Controllers.Wait(syncCtx); err != nil {
		return nil, errors.Wrap(err, "the provider's controllers did not start")
	}
	return h, nil
}

// Stop waits for the provider to stop (cancel Start's context first) and
// closes the simulator.
func (h *Harness) Stop() {
	<-h.done
	h.Sim.Close()
}

// NewClient returns an uncached client knowing this provider's types and
// CRDs.
func NewClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apis.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	return c, errors.Wrap(err, "cannot create a Kubernetes client")
}

// SyncBuffer is an io.Writer safe for the provider's concurrent logging.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// RequestLog records the provider's Secret collection requests (lists and
// watches), telling metadata-only ones from full ones, and its reads of
// single Secrets.
type RequestLog struct {
	mu   sync.Mutex
	full []string
	meta int
	gets map[string]int // by "namespace/name"
}

var (
	// secretCollection matches a list or watch of Secrets, cluster-wide or
	// in a namespace; a get by name has one more path segment.
	secretCollection = regexp.MustCompile(`^/api/v1/(namespaces/[^/]+/)?secrets/?$`)
	// secretByName matches a read of one Secret.
	secretByName = regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/secrets/([^/]+)$`)
)

// Wrap returns rt with l recording its Secret lists and watches, for
// programs that build the provider themselves (rest.Config.Wrap(l.Wrap)).
func (l *RequestLog) Wrap(rt http.RoundTripper) http.RoundTripper { return l.wrap(rt) }

func (l *RequestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if m := secretByName.FindStringSubmatch(req.URL.Path); req.Method == http.MethodGet && m != nil {
			l.countGet(m[1] + "/" + m[2])
		}
		if req.Method == http.MethodGet && secretCollection.MatchString(req.URL.Path) {
			l.mu.Lock()
			// The metadata client asks for PartialObjectMetadata in every
			// content type it accepts.
			if strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
				l.meta++
			} else {
				l.full = append(l.full, req.URL.String())
			}
			l.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (l *RequestLog) countGet(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gets == nil {
		l.gets = map[string]int{}
	}
	l.gets[key]++
}

// SecretGets counts the reads of Secret namespace/name by name.
func (l *RequestLog) SecretGets(namespace, name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gets[namespace+"/"+name]
}

// FullSecretListsOrWatches returns the URLs of Secret lists and watches that
// asked for whole Secrets, data included.
func (l *RequestLog) FullSecretListsOrWatches() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.full...)
}

// MetadataListsOrWatches counts metadata-only Secret lists and watches; more
// than zero shows the recorder sees the provider's requests.
func (l *RequestLog) MetadataListsOrWatches() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.meta
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
