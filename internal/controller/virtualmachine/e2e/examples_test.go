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

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
)

// The examples of the VirtualMachineSet (on one node, and spread by
// placement), CustomCertificate and GuestImport kinds, applied as they are
// (in a namespace of the test's own), become Ready against the simulator.
func TestSetCertificateAndImportExamplesBecomeReady(t *testing.T) {
	hs := require(t)
	ns := hs.namespace(t)
	ctx := context.Background()
	// What the examples name: the template the set clones and the TLS Secret
	// of the certificate. (The import's selector may match nothing here.)
	if err := hs.Sim.AddTemplate(node, providertest.FreeVMID(t, hs.Sim, 9100), "debian-12-cloudinit"); err != nil {
		t.Fatal(err)
	}
	crt, key := providertest.SelfSignedPair(t, node+".example")
	if err := hs.Kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lowtower-tls"}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(crt), "tls.key": []byte(key)}}); err != nil {
		t.Fatal(err)
	}
	files := []string{"virtualmachineset/web.yaml", "virtualmachineset/spread.yaml", "customcertificate/tls-secret.yaml", "guestimport/prod-web.yaml"}
	applied := make([]*unstructured.Unstructured, 0, len(files))
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		u.SetNamespace(ns)
		if err := hs.Kube.Create(ctx, u); err != nil {
			t.Fatalf("apply %s: %v", f, err)
		}
		applied = append(applied, u)
	}
	for _, u := range applied {
		waitReadyCondition(t, hs, u)
	}
	// The certificate's node is shared with the other certificate tests.
	if err := hs.Kube.Delete(ctx, applied[2]); err != nil {
		t.Fatal(err)
	}
	waitFingerprint(t, hs, node, "", wait)
}

// waitReadyCondition waits for an object's Ready condition to be True.
func waitReadyCondition(t *testing.T, hs *harness, u *unstructured.Unstructured) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		err := hs.Kube.Get(context.Background(), types.NamespacedName{Namespace: u.GetNamespace(), Name: u.GetName()}, got)
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s not Ready: %v %v", u.GetKind(), u.GetName(), conds, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
