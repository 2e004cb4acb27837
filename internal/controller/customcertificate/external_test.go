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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testcert"
)

func pair(t *testing.T) (string, string) {
	t.Helper()
	return testcert.Pair(t, testcert.EC(t))
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
	if diff := cmp.Diff(ErrUntrusted, err, cmpopts.EquateErrors()); diff != "" {
		t.Fatalf("Observe after the restart: -want, +got:\n%s", diff)
	}
}

// customFingerprint is the fingerprint of the node's custom certificate, ""
// for none.
func customFingerprint(t *testing.T, e *external) string {
	t.Helper()
	infos, err := e.cl.Certificates(context.Background(), "pve")
	if err != nil {
		t.Fatal(err)
	}
	custom, _ := customOf(infos)
	return custom.Fingerprint
}

// Proxmox VE before 9.1.10 stores a key that does not belong to the
// certificate, and later ones still take a key of another type (pve-manager
// PVE/CertHelpers.pm set_cert_files loads both into OpenSSL, which checks a
// key only against a certificate of its own type); pveproxy then serves
// nothing. The provider checks the pair first: nothing is uploaded and the
// error names the source, never the key.
func TestKeyNotOfTheCertificateIsNotUploaded(t *testing.T) {
	crt, _ := pair(t)
	_, otherEC := pair(t)
	rsaCrt, _ := testcert.Pair(t, testcert.RSA(t))
	cases := map[string]struct {
		reason   string
		crt, key string
	}{
		"KeyOfAnotherCertificate": {
			reason: "An EC key of another EC certificate (refused by PVE 9.1.10 and later only).",
			crt:    crt, key: otherEC,
		},
		"KeyOfAnotherType": {
			reason: "An EC key for an RSA certificate (taken by every PVE).",
			crt:    rsaCrt, key: otherEC,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, _ := newExternal(t)
			_, err := e.Create(context.Background(), inlineCC(tc.crt, tc.key, true))
			if diff := cmp.Diff(ErrNotAKeyPair, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("%s\nCreate: -want, +got:\n%s", tc.reason, diff)
			}
			if err != nil && strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("%s\nthe error shows the key: %v", tc.reason, err)
			}
			if fp := customFingerprint(t, e); fp != "" {
				t.Errorf("%s\nnode has custom certificate %s, want none uploaded", tc.reason, fp)
			}
		})
	}
}

// A custom certificate the resource did not upload is replaced only with
// force (pve-manager PVE/CertHelpers.pm set_cert_files dies "Custom
// certificate file exists but force flag is not set."): without it the error
// says what to set and the node keeps its certificate; with it the upload
// replaces it and Observe (which compares fingerprints, PVE's info listing
// san entries as bare values) finds it up to date.
func TestExistingCustomCertificateNeedsForce(t *testing.T) {
	ctx := context.Background()
	e, _ := newExternal(t)
	foreign, foreignKey := pair(t)
	if err := e.cl.UploadCertificate(ctx, "pve", foreign, foreignKey, false, false); err != nil {
		t.Fatal(err)
	}
	foreignFP, _ := pve.Fingerprint(foreign)
	crt, key := pair(t)
	cr := inlineCC(crt, key, false)
	_, err := e.Create(ctx, cr)
	if diff := cmp.Diff(ErrForeignCertificate, err, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("Create without force: -want, +got:\n%s", diff)
	}
	if fp := customFingerprint(t, e); fp != foreignFP {
		t.Errorf("node's custom certificate %s, want the one there before (%s)", fp, foreignFP)
	}
	cr.Spec.ProxmoxCertSpec.Force = true
	if _, err := e.Create(ctx, cr); err != nil {
		t.Fatalf("Create with force: %v", err)
	}
	obs, err := e.Observe(ctx, cr)
	want, _ := pve.Fingerprint(crt)
	if err != nil || !obs.ResourceUpToDate || cr.Status.Fingerprint != want || cr.Status.Subject == "" {
		t.Errorf("Observe after the forced upload: %+v %v, fingerprint %q subject %q; want up to date with %q", obs, err, cr.Status.Fingerprint, cr.Status.Subject, want)
	}
}
