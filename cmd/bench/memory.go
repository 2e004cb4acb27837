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

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

const (
	secretSize      = 10 * 1024
	noiseNamespaces = 10
	crdSchemaBytes  = 20 * 1024
	// settleLimit bounds the wait for the provider's memory to stop growing
	// after a batch of objects (its watches receive them asynchronously).
	settleLimit = 3 * time.Minute
)

// memory measures the provider's resident set and heap with managed VMs,
// then with many large Secrets in other namespaces (it watches Secret
// metadata cluster-wide), then with many unrelated CRDs (the start-up gate
// watches CRDs).
func memory(ctx context.Context, s settings, managed, secrets, crds int) (err error) {
	w, p, err := openWorld(ctx, s)
	if err != nil {
		return err
	}
	defer func() { w.close(err) }()
	if err := w.tokenConnection(ctx, benchNS, "root@pam!bench", "bench-token-1"); err != nil {
		return err
	}
	fmt.Printf("memory: %d VirtualMachines, then %d Secrets of %d KiB in %d other namespaces, then %d unrelated CRDs (~%d KiB schema each); %s\n",
		managed, secrets, secretSize/1024, noiseNamespaces, crds, crdSchemaBytes/1024, s)
	start := time.Now()
	if err := w.createVMs(ctx, managed, 0); err != nil {
		return err
	}
	if _, err := w.waitAllReady(ctx, benchNS, managed, 60*time.Minute); err != nil {
		return err
	}
	fmt.Printf("  %d VMs Ready after %s\n", managed, time.Since(start).Round(time.Second))
	base, err := settle(ctx, p)
	if err != nil {
		return err
	}
	fmt.Printf("  %d managed resources:            %s\n", managed, base)

	if err := w.createSecrets(ctx, secrets); err != nil {
		return err
	}
	withSecrets, err := settle(ctx, p)
	if err != nil {
		return err
	}
	fmt.Printf("  + %d Secrets:                 %s (RSS %+.1f MiB, %.0f bytes per Secret)\n", secrets, withSecrets,
		mibDelta(withSecrets.rss, base.rss), perItem(withSecrets.rss, base.rss, secrets))

	for i := range crds {
		if err := w.kube.Create(ctx, unrelatedCRD(i)); err != nil {
			return errors.Wrapf(err, "cannot create CRD %d", i)
		}
	}
	withCRDs, err := settle(ctx, p)
	if err != nil {
		return err
	}
	fmt.Printf("  + %d CRDs:                     %s (RSS %+.1f MiB)\n", crds, withCRDs,
		mibDelta(withCRDs.rss, withSecrets.rss))
	fmt.Printf("  goal: RSS below 87 MiB and flat in the number of Secrets\n")
	ready, all, err := w.vmStates(ctx, benchNS)
	if err != nil {
		return err
	}
	if ready != all {
		return errors.Errorf("%d of %d VMs not Ready at the end", all-ready, all)
	}
	return nil
}

func perItem(after, before uint64, n int) float64 {
	if n == 0 {
		return 0
	}
	return (float64(after) - float64(before)) / float64(n)
}

func mibDelta(after, before uint64) float64 { return (float64(after) - float64(before)) / (1 << 20) }

// memSample is the provider's memory at one moment.
type memSample struct{ rss, hwm, heap uint64 }

func (m memSample) String() string {
	return fmt.Sprintf("VmRSS %s, VmHWM %s, Go heap in use %s", mib(m.rss), mib(m.hwm), mib(m.heap))
}

func sampleMemory(p *process) (memSample, error) {
	rss, hwm, err := p.memory()
	if err != nil {
		return memSample{}, err
	}
	m, err := p.scrape()
	if err != nil {
		return memSample{}, err
	}
	return memSample{rss: rss, hwm: hwm, heap: uint64(m.sum("go_memstats_heap_inuse_bytes"))}, nil
}

// settle samples every 10 s until the resident set moved less than 1 MiB
// since the previous sample, and returns that sample.
func settle(ctx context.Context, p *process) (memSample, error) {
	prev, err := sampleMemory(p)
	if err != nil {
		return memSample{}, err
	}
	deadline := time.Now().Add(settleLimit)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return memSample{}, ctx.Err()
		case <-time.After(10 * time.Second):
		}
		cur, err := sampleMemory(p)
		if err != nil {
			return memSample{}, err
		}
		if d := mibDelta(cur.rss, prev.rss); d < 1 && d > -1 {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}

// createSecrets creates n Secrets of secretSize bytes, each also carrying
// kubectl's last-applied-configuration annotation with its data, spread
// over noise namespaces, 8 at a time.
func (w *world) createSecrets(ctx context.Context, n int) error {
	for i := range noiseNamespaces {
		if err := w.namespace(ctx, fmt.Sprintf("noise-%d", i)); err != nil {
			return err
		}
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), secretSize/16+1)[:secretSize]
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				if err := w.kube.Create(ctx, bigSecret(i, data)); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

func bigSecret(i int64, data []byte) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("noise-%d", i%noiseNamespaces), Name: fmt.Sprintf("big-%05d", i)},
		Data:       map[string][]byte{"payload": data},
	}
	applied, _ := json.Marshal(map[string]any{ //nolint:errchkjson // strings and maps of strings only: Marshal cannot fail
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]string{"name": s.Name, "namespace": s.Namespace},
		"data":     map[string]string{"payload": base64.StdEncoding.EncodeToString(data)},
	})
	s.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}
	return s
}

// unrelatedCRD is a namespaced CRD of its own group whose schema holds
// string properties adding up to about crdSchemaBytes.
func unrelatedCRD(i int) *apiextensionsv1.CustomResourceDefinition {
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	description := strings.Repeat("d", 200)
	for j := 0; j*240 < crdSchemaBytes; j++ {
		props[fmt.Sprintf("field%04d", j)] = apiextensionsv1.JSONSchemaProps{Type: "string", Description: description}
	}
	group := fmt.Sprintf("bench%d.unrelated.example.org", i)
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object", Properties: props}},
				}},
			}},
		},
	}
}
