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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
)

// fakeProxmox is a node holding custom (nil for none) as its custom
// certificate; it answers every request with err and records the writes.
type fakeProxmox struct {
	custom *pve.CertificateInfo
	err    error
	writes []string
}

func (f *fakeProxmox) Certificates(context.Context, string) ([]pve.CertificateInfo, error) {
	infos := []pve.CertificateInfo{{Filename: "pve-root-ca.pem"}, {Filename: "pve-ssl.pem"}}
	if f.custom != nil {
		infos = append(infos, *f.custom)
	}
	return infos, f.err
}

func (f *fakeProxmox) UploadCertificate(_ context.Context, node, _, _ string, force, _ bool) error {
	w := "upload to " + node
	if force {
		w += " with force"
	}
	f.writes = append(f.writes, w)
	return f.err
}

func (f *fakeProxmox) DeleteCertificate(_ context.Context, node string, _ bool) error {
	f.writes = append(f.writes, "delete on "+node)
	return f.err
}

// fakeResult is what one verb against the fake left behind.
type fakeResult struct {
	obs          managed.ExternalObservation
	writes       []string
	events       []string
	externalName string
	err          error
}

// fakeExternal is the client of one reconcile against node, with its event
// log.
func fakeExternal(node *fakeProxmox) (*external, *guesttest.EventLog) {
	log := &guesttest.EventLog{}
	return &external{cl: node, connection: "c", record: log}, log
}

func diffResult(want, got fakeResult) string {
	return cmp.Diff(want, got, cmp.AllowUnexported(fakeResult{}), cmpopts.EquateErrors(), cmpopts.EquateEmpty())
}

// TestObserveWithFake covers what Observe decides from the node's
// certificates, in milliseconds; what PVE lists is covered by TestVerbs.
func TestObserveWithFake(t *testing.T) {
	crt, key := pair(t)
	other, _ := pair(t)
	fp, _ := pve.Fingerprint(crt)
	otherFP, _ := pve.Fingerprint(other)
	errBoom := errors.New("boom")
	custom := func(fp string) *pve.CertificateInfo {
		return &pve.CertificateInfo{Filename: pve.CustomCertificateFile, Fingerprint: fp, Subject: "CN=pve"}
	}
	cases := map[string]struct {
		reason       string
		node         *fakeProxmox
		externalName string
		want         fakeResult
	}{
		"NoCustomCertificate": {
			reason: "A node serving only its own certificate has none of ours: Create runs.",
			node:   &fakeProxmox{},
			want:   fakeResult{events: []string{string(reasonInlineKey)}},
		},
		"Ours": {
			reason:       "Our certificate on the node is up to date.",
			node:         &fakeProxmox{custom: custom(fp)},
			externalName: "pve",
			want: fakeResult{obs: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true},
				events: []string{string(reasonInlineKey)}, externalName: "pve"},
		},
		"Renewed": {
			reason:       "Another certificate where ours was is replaced by Update.",
			node:         &fakeProxmox{custom: custom(otherFP)},
			externalName: "pve",
			want: fakeResult{obs: managed.ExternalObservation{ResourceExists: true},
				events: []string{string(reasonInlineKey)}, externalName: "pve"},
		},
		"AdoptedUnchanged": {
			reason: "Without an external name, the very certificate we would upload is adopted, not uploaded again.",
			node:   &fakeProxmox{custom: custom(fp)},
			want: fakeResult{obs: managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: true},
				events: []string{string(reasonInlineKey), string(guest.ReasonAdopted)}, externalName: "pve"},
		},
		"ForeignNotAdopted": {
			reason: "Without an external name, another certificate is not adopted: Create refuses it without force.",
			node:   &fakeProxmox{custom: custom(otherFP)},
			want:   fakeResult{events: []string{string(reasonInlineKey)}},
		},
		"Untrusted": {
			reason: "A node whose new certificate the connection does not trust names the connection and what to do.",
			node:   &fakeProxmox{err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}},
			want:   fakeResult{events: []string{string(reasonInlineKey)}, err: ErrUntrusted},
		},
		"ListRefused": {
			reason: "A refused listing is returned, its cause kept for errors.Is.",
			node:   &fakeProxmox{err: errBoom},
			want:   fakeResult{events: []string{string(reasonInlineKey)}, err: errBoom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e, log := fakeExternal(tc.node)
			cr := inlineCC(crt, key, false)
			meta.SetExternalName(cr, tc.externalName)
			obs, err := e.Observe(context.Background(), cr)
			got := fakeResult{obs: obs, writes: tc.node.writes, events: log.Reasons(), externalName: meta.GetExternalName(cr), err: err}
			if diff := diffResult(tc.want, got); diff != "" {
				t.Errorf("\n%s\nObserve(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCreateWithFake covers what Create checks before and after the upload.
func TestCreateWithFake(t *testing.T) {
	crt, key := pair(t)
	_, otherKey := pair(t)
	errBoom := errors.New("boom")
	present := errors.New("500 Custom certificate file exists but force flag is not set")
	cases := map[string]struct {
		reason string
		key    string
		force  bool
		answer error
		want   fakeResult
	}{
		"Uploaded": {
			reason: "The pair is uploaded without force; the external name is the node.",
			key:    key,
			want:   fakeResult{writes: []string{"upload to pve"}, events: []string{string(reasonUploaded)}, externalName: "pve"},
		},
		"Forced": {
			reason: "proxmoxCertSpec.force replaces a certificate already there.",
			key:    key, force: true,
			want: fakeResult{writes: []string{"upload to pve with force"}, events: []string{string(reasonUploaded)}, externalName: "pve"},
		},
		"NotAKeyPair": {
			reason: "A key of another certificate is refused before anything is uploaded.",
			key:    otherKey,
			want:   fakeResult{err: ErrNotAKeyPair},
		},
		"ForeignCertificate": {
			reason: "PVE's refusal to replace a custom certificate without force says to set force.",
			key:    key, answer: present,
			want: fakeResult{writes: []string{"upload to pve"}, err: ErrForeignCertificate},
		},
		"Refused": {
			reason: "Any other refusal is returned as it is, no external name set.",
			key:    key, answer: errBoom,
			want: fakeResult{writes: []string{"upload to pve"}, err: errBoom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			node := &fakeProxmox{err: tc.answer}
			e, log := fakeExternal(node)
			cr := inlineCC(crt, tc.key, false)
			cr.Spec.ProxmoxCertSpec.Force = tc.force
			_, err := e.Create(context.Background(), cr)
			got := fakeResult{writes: node.writes, events: log.Reasons(), externalName: meta.GetExternalName(cr), err: err}
			if diff := diffResult(tc.want, got); diff != "" {
				t.Errorf("\n%s\nCreate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDeleteWithFake covers Delete: the node's custom certificate removed,
// unless deletionProtection keeps it (Observe then reports it gone).
func TestDeleteWithFake(t *testing.T) {
	crt, key := pair(t)
	errBoom := errors.New("boom")
	cases := map[string]struct {
		reason string
		answer error
		want   fakeResult
	}{
		"Removed": {
			reason: "The custom certificate is removed, with an event.",
			want:   fakeResult{writes: []string{"delete on pve"}, events: []string{string(reasonRemoved)}},
		},
		"Refused": {
			reason: "A refusal is returned as it is, without an event.",
			answer: errBoom,
			want:   fakeResult{writes: []string{"delete on pve"}, err: errBoom},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			node := &fakeProxmox{err: tc.answer}
			e, log := fakeExternal(node)
			_, err := e.Delete(context.Background(), inlineCC(crt, key, false))
			got := fakeResult{writes: node.writes, events: log.Reasons(), err: err}
			if diff := diffResult(tc.want, got); diff != "" {
				t.Errorf("\n%s\nDelete(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
