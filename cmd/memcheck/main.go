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

// Command memcheck measures how the provider's memory grows with the Secrets
// in the cluster. It starts a real API server (envtest), the simulator and
// the provider in this process, makes a connection read its token from a
// Secret, and measures the heap after GC with no other Secret, then after
// creating many large Secrets (by default 10,000 of 10 KiB, each also
// carrying kubectl's last-applied-configuration annotation with its data).
// The provider watches Secret metadata only, with annotations and managed
// fields dropped, so the growth should be a small per-Secret constant, with
// nothing proportional to the Secret's size.
//
// With -crds N it then installs N unrelated CRDs, each with an OpenAPI schema
// of about -crd-schema bytes, and measures again: the provider's CRD gate
// watches every CRD in the cluster, and its cache must hold them without
// their schemas.
//
// With -vms N it first creates N VirtualMachines cloned from a simulator
// template, each publishing connection details to a Secret, and waits until
// all are Ready and their Secrets exist: publishing must not start a Secret
// informer either. Every Secret list or watch the provider sends is
// recorded; the run fails if one asked for whole Secrets.
//
//	go run ./cmd/memcheck [-secrets 10000] [-size 10240] [-vms 500] [-crds 1000] [-compare-full]
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

type options struct {
	secrets     int
	size        int
	annotate    bool
	concurrency int
	compareFull bool
	vms         int
	rate        int
	crds        int
	crdSchema   int
}

func main() {
	var o options
	flag.IntVar(&o.secrets, "secrets", 10000, "number of Secrets to create")
	flag.IntVar(&o.size, "size", 10*1024, "bytes of data per Secret")
	flag.BoolVar(&o.annotate, "last-applied", true, "also store the data in kubectl's last-applied-configuration annotation, as kubectl apply does")
	flag.IntVar(&o.concurrency, "concurrency", 8, "concurrent Secret creations")
	flag.IntVar(&o.vms, "vms", 0, "VirtualMachines to clone first, each publishing connection details")
	flag.IntVar(&o.rate, "reconcile-rate", 100, "the provider's max reconcile rate (reconciles per second and concurrent reconciles), raised so -vms converges quickly")
	flag.IntVar(&o.crds, "crds", 0, "unrelated CRDs to install after the Secrets, measuring the CRD gate's cache")
	flag.IntVar(&o.crdSchema, "crd-schema", 20*1024, "approximate bytes of OpenAPI schema per unrelated CRD")
	flag.BoolVar(&o.compareFull, "compare-full", false, "afterwards, start a full Secret informer (what a cached Secret read would start) and report its cost for comparison")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "memcheck:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	env, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	kube, err := providertest.NewClient(env.Config)
	if err != nil {
		return err
	}
	sim, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		return err
	}
	defer sim.Close()

	requests := &providertest.RequestLog{}
	pcfg := rest.CopyConfig(env.Config)
	pcfg.Wrap(requests.Wrap)
	p, err := provider.New(pcfg, provider.Options{PollInterval: time.Minute, MaxReconcileRate: o.rate, EnableManagementPolicies: true})
	if err != nil {
		return err
	}
	go func() { _ = p.Start(ctx) }()

	if err := createConnection(ctx, kube, sim); err != nil {
		return err
	}
	if o.vms > 0 {
		start := time.Now()
		if err := createVMs(ctx, kube, sim, o.vms); err != nil {
			return err
		}
		fmt.Printf("%d VirtualMachines cloned, Ready, connection Secrets written in %s\n", o.vms, time.Since(start).Round(time.Second))
	}

	before := measure()
	fmt.Printf("provider with 1 credential Secret, %d VMs and their %d connection Secrets: heap %s, RSS %s\n",
		o.vms, o.vms, mib(before.heap), mib(before.rss))

	start := time.Now()
	if err := createSecrets(ctx, kube, o); err != nil {
		return err
	}
	fmt.Printf("created %d Secrets of %d bytes in %s\n", o.secrets, o.size, time.Since(start).Round(time.Second))
	if err := waitForWatch(ctx, p, o.secrets+1+o.vms); err != nil {
		return err
	}

	after := measure()
	fmt.Printf("provider with %d more Secrets:     heap %s, RSS %s\n", o.secrets, mib(after.heap), mib(after.rss))
	growth := int64(after.heap) - int64(before.heap)
	fmt.Printf("heap growth %s (%.2fx), %d bytes per Secret for %d bytes of data each\n",
		mibSigned(growth), float64(after.heap)/float64(before.heap), growth/int64(o.secrets), o.size)

	fmt.Printf("heap ratio %.2fx, RSS ratio %.2fx\n", float64(after.heap)/float64(before.heap), float64(after.rss)/float64(before.rss))

	if err := checkSecretRequests(requests); err != nil {
		return err
	}
	if o.crds > 0 {
		if err := measureCRDs(ctx, kube, p, o, after); err != nil {
			return err
		}
	}
	if o.compareFull {
		return compareFullInformer(ctx, env.Config, after)
	}
	return nil
}

// checkSecretRequests fails when the provider listed or watched Secrets with
// their data; it also needs to have seen the provider's metadata-only watch,
// or the recorder saw nothing.
func checkSecretRequests(requests *providertest.RequestLog) error {
	full := requests.FullSecretListsOrWatches()
	meta := requests.MetadataListsOrWatches()
	fmt.Printf("provider Secret lists/watches: %d metadata-only, %d full\n", meta, len(full))
	if len(full) > 0 {
		return fmt.Errorf("the provider listed or watched whole Secrets: %v", full)
	}
	if meta == 0 {
		return fmt.Errorf("no Secret list or watch recorded: the recorder does not see the provider's requests")
	}
	return nil
}

// compareFullInformer starts what the provider avoids, an informer holding
// every Secret in full, and reports what it adds to the heap.
func compareFullInformer(ctx context.Context, cfg *rest.Config, base sample) error {
	c, err := cache.New(cfg, cache.Options{})
	if err != nil {
		return err
	}
	go func() { _ = c.Start(ctx) }()
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		return err
	}
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("full Secret informer did not sync")
	}
	full := measure()
	fmt.Printf("for comparison, a full Secret informer: heap %s, RSS %s (%s over the provider)\n",
		mib(full.heap), mib(full.rss), mibSigned(int64(full.heap)-int64(base.heap)))
	return nil
}

// createConnection makes a connection that reads its token from a Secret and
// waits until it is Ready, so the provider has done its real work once.
func createConnection(ctx context.Context, kube client.Client, sim *pvesim.Server) error {
	sim.AddToken("root@pam!memcheck", "memcheck-token")
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "memcheck"}}); err != nil {
		return err
	}
	if err := kube.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "memcheck", Name: "pve-token"},
		StringData: map[string]string{"token": "memcheck-token"},
	}); err != nil {
		return err
	}
	pc := &v1alpha1.ProxmoxConnection{
		ObjectMeta: metav1.ObjectMeta{Name: connectionName},
		Spec: v1alpha1.ProxmoxConnectionSpec{
			Endpoint:   sim.URL(),
			CABundle:   string(sim.CAPEM()),
			TokenID:    "root@pam!memcheck",
			SecretFrom: &v1alpha1.SecretKeySelector{Namespace: "memcheck", Name: "pve-token", Key: "token"},
		},
	}
	if err := kube.Create(ctx, pc); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		got := &v1alpha1.ProxmoxConnection{}
		if err := kube.Get(ctx, types.NamespacedName{Name: pc.Name}, got); err == nil &&
			got.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("connection not Ready after a minute")
}

// createSecrets creates o.secrets Secrets of o.size bytes of data each in
// namespace memcheck.
func createSecrets(ctx context.Context, kube client.Client, o options) error {
	data := bytes.Repeat([]byte("0123456789abcdef"), o.size/16+1)[:o.size]
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.concurrency)
	for range o.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(o.secrets) {
					return
				}
				if err := kube.Create(ctx, bigSecret(i, data, o.annotate)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func bigSecret(i int64, data []byte, annotate bool) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "memcheck", Name: fmt.Sprintf("big-%05d", i)},
		Data:       map[string][]byte{"payload": data},
	}
	if annotate {
		applied, _ := json.Marshal(map[string]any{ //nolint:errchkjson // strings and maps of strings only: Marshal cannot fail
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]string{"name": s.Name, "namespace": s.Namespace},
			"data":     map[string]string{"payload": base64.StdEncoding.EncodeToString(data)},
		})
		s.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}
	}
	return s
}

// waitForWatch waits until the provider's Secret metadata cache holds n
// Secrets, so the measurement includes everything the watch keeps.
func waitForWatch(ctx context.Context, p *provider.Provider, n int) error {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := p.GetCache().List(ctx, l); err != nil {
			return err
		}
		if len(l.Items) >= n {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("the provider's Secret metadata cache did not reach %d Secrets", n)
}

// measureCRDs installs o.crds unrelated CRDs and reports what the provider's
// CRD cache adds to the heap, against the schema bytes the CRDs carry.
func measureCRDs(ctx context.Context, kube client.Client, p *provider.Provider, o options, base sample) error {
	start := time.Now()
	for i := range o.crds {
		if err := kube.Create(ctx, unrelatedCRD(i, o.crdSchema)); err != nil {
			return fmt.Errorf("cannot create CRD %d: %w", i, err)
		}
	}
	fmt.Printf("created %d CRDs with ~%d bytes of schema each in %s\n", o.crds, o.crdSchema, time.Since(start).Round(time.Second))
	deadline := time.Now().Add(5 * time.Minute)
	for {
		l := &apiextensionsv1.CustomResourceDefinitionList{}
		if err := p.GetCache().List(ctx, l); err != nil {
			return err
		}
		if len(l.Items) >= o.crds {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the provider's CRD cache holds %d CRDs, want at least %d", len(l.Items), o.crds)
		}
		time.Sleep(500 * time.Millisecond)
	}
	after := measure()
	growth := int64(after.heap) - int64(base.heap)
	fmt.Printf("provider with %d more CRDs:        heap %s, RSS %s\n", o.crds, mib(after.heap), mib(after.rss))
	fmt.Printf("heap growth %s, %d bytes per CRD for ~%d bytes of schema each\n", mibSigned(growth), growth/int64(o.crds), o.crdSchema)
	return nil
}

// unrelatedCRD is a namespaced CRD of its own group whose schema holds
// string properties adding up to about schemaBytes.
func unrelatedCRD(i, schemaBytes int) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	description := strings.Repeat("d", 200)
	for j := 0; j*240 < schemaBytes; j++ {
		props[fmt.Sprintf("field%04d", j)] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: description}
	}
	group := fmt.Sprintf("bench%d.memcheck.example.org", i)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: props},
					},
				}},
			}},
		},
	}
}

type sample struct{ heap, rss uint64 }

// measure returns the live heap after collecting garbage, and the resident
// set size, of this process (which holds the provider and the simulator).
func measure() sample {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return sample{heap: ms.HeapAlloc, rss: rss()}
}

func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb uint64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return kb * 1024
		}
	}
	return 0
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func mibSigned(b int64) string { return fmt.Sprintf("%+.1f MiB", float64(b)/(1<<20)) }
