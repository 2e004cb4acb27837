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

package customcertificate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func pair(t *testing.T) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "pve.example"},
		DNSNames: []string{"pve.example"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

func newExternal(t *testing.T) (*external, *pvesim.Server) {
	t.Helper()
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{"pve"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken("root@pam!t", "s")
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), TokenID: "root@pam!t", Secret: "s", CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatal(err)
	}
	return &external{cl: cl, connection: "c", record: event.NewNopRecorder()}, sim
}

func inlineCC(crt, key string, restart bool) *v1alpha1.CustomCertificate {
	return &v1alpha1.CustomCertificate{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cc"}, Spec: v1alpha1.CustomCertificateSpec{
		NodeName: "pve", ProxmoxCertSpec: &v1alpha1.ProxmoxCertSpec{Certificate: crt, PrivateKey: key, RestartProxy: restart}}}
}

// The verbs against the simulator: absent, created (external name = node),
// up to date, a new certificate not up to date and updated, deleted.
func TestVerbs(t *testing.T) {
	ctx := context.Background()
	e, _ := newExternal(t)
	crt, key := pair(t)
	cr := inlineCC(crt, key, false)

	obs, err := e.Observe(ctx, cr)
	if diff := cmp.Diff(managed.ExternalObservation{}, obs); diff != "" || err != nil {
		t.Fatalf("Observe before create: -want, +got:\n%s (%v)", diff, err)
	}
	if _, err := e.Create(ctx, cr); err != nil || meta.GetExternalName(cr) != "pve" {
		t.Fatalf("Create: %v, external name %q", err, meta.GetExternalName(cr))
	}
	obs, err = e.Observe(ctx, cr)
	if err != nil || !obs.ResourceExists || !obs.ResourceUpToDate {
		t.Fatalf("Observe after create: %+v, %v", obs, err)
	}
	next, nextKey := pair(t)
	cr.Spec.ProxmoxCertSpec.Certificate, cr.Spec.ProxmoxCertSpec.PrivateKey = next, nextKey
	if obs, err = e.Observe(ctx, cr); err != nil || obs.ResourceUpToDate {
		t.Fatalf("Observe with a new certificate: %+v, %v; want not up to date", obs, err)
	}
	if _, err := e.Update(ctx, cr); err != nil {
		t.Fatalf("Update: %v", err)
	}
	want, _ := pve.Fingerprint(next)
	if obs, err = e.Observe(ctx, cr); err != nil || !obs.ResourceUpToDate || cr.Status.Fingerprint != want {
		t.Fatalf("after Update: %+v, %v, fingerprint %q", obs, err, cr.Status.Fingerprint)
	}
	if _, err := e.Delete(ctx, cr); err != nil {
		t.Fatal(err)
	}
	if obs, err = e.Observe(ctx, cr); err != nil || obs.ResourceExists {
		t.Fatalf("after Delete: %+v, %v", obs, err)
	}
}

// With restartProxy the node serves the new certificate at once; a
// connection that does not trust it is named with what to do.
func TestRestartNamesTheUntrustingConnection(t *testing.T) {
	ctx := context.Background()
	e, _ := newExternal(t)
	crt, key := pair(t)
	cr := inlineCC(crt, key, true)
	if _, err := e.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	_, err := e.Observe(ctx, cr)
	if err == nil || !strings.Contains(err.Error(), `ProxmoxConnection "c" does not trust`) || !strings.Contains(err.Error(), "caBundle") {
		t.Fatalf("Observe after the restart: %v; want the connection named with the caBundle advice", err)
	}
}
