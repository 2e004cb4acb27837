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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// TypeInlinePrivateKey is the warning condition of a resource that holds a
// private key in its spec.
const TypeInlinePrivateKey xpv2.ConditionType = "InlinePrivateKey"

// ErrForeignCertificate is a node's custom certificate this resource did not
// upload, which Proxmox VE replaces only with force.
var ErrForeignCertificate = errors.New("already has a custom certificate this resource did not upload")

// ErrNotAKeyPair is a private key that does not belong to the certificate:
// nothing is uploaded.
var ErrNotAKeyPair = errors.New("are not a key pair")

// ErrUntrusted is a node serving a certificate the connection does not
// trust (after pveproxy restarted to serve a new one, say).
var ErrUntrusted = errors.New("does not trust")

// Events.
const (
	reasonUploaded     event.Reason = "Uploaded"
	reasonInlineKey    event.Reason = "InlinePrivateKey"
	reasonRemoved      event.Reason = "Removed"
	reasonKeptOnDelete event.Reason = "DeletionProtection"
)

type connector struct {
	kube    client.Client
	fresh   client.Reader // Secrets are read from the API server, never cached
	usage   guest.UsageTracker
	clients *pve.Cache
	record  event.Recorder
}

// Connect implements managed.TypedExternalConnector.
func (c *connector) Connect(ctx context.Context, cr *v1alpha1.CustomCertificate) (managed.TypedExternalClient[*v1alpha1.CustomCertificate], error) {
	cl, connection, err := guest.Connect(ctx, guest.Readers{Kube: c.kube, Fresh: c.fresh}, c.usage, c.clients, cr)
	if err != nil {
		return nil, err
	}
	return guest.Explained[*v1alpha1.CustomCertificate]{TypedExternalClient: &external{kube: c.kube, fresh: c.fresh, cl: cl, connection: connection, record: c.record}}, nil
}

// external manages one node's custom certificate for one reconcile.
type external struct {
	kube       client.Client
	fresh      client.Reader
	cl         proxmox
	connection string
	record     event.Recorder
	want       certificate
}

// Disconnect implements managed.TypedExternalClient.
func (e *external) Disconnect(context.Context) error { return nil }

// Observe compares the fingerprint of the node's custom certificate with
// the wanted one.
func (e *external) Observe(ctx context.Context, cr *v1alpha1.CustomCertificate) (managed.ExternalObservation, error) {
	e.warnInlineKey(cr)
	node := cr.Spec.Node()
	if meta.WasDeleted(cr) && cr.Spec.DeletionProtection {
		e.record.Event(cr, event.Normal(reasonKeptOnDelete, "deletionProtection: the custom certificate stays on node "+node))
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	infos, err := e.cl.Certificates(ctx, node)
	if err != nil {
		return managed.ExternalObservation{}, e.explainTLS(err, node)
	}
	custom, found := customOf(infos)
	if !found {
		return managed.ExternalObservation{ResourceExists: false}, nil
	}
	adopted := false
	if meta.GetExternalName(cr) == "" {
		if adopted, err = e.adopt(ctx, cr, custom.Fingerprint); err != nil || !adopted {
			return managed.ExternalObservation{ResourceExists: false}, err
		}
	}
	cr.Status.Fingerprint, cr.Status.Subject = custom.Fingerprint, custom.Subject
	if custom.NotAfter > 0 {
		t := metav1.NewTime(time.Unix(custom.NotAfter, 0))
		cr.Status.NotAfter = &t
	}
	if meta.WasDeleted(cr) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	want, err := wanted(ctx, e.kube, e.fresh, cr)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	e.want = want
	fp, err := pve.Fingerprint(want.ChainPEM)
	if err != nil {
		return managed.ExternalObservation{}, errors.Wrap(err, "the certificate to upload is not a PEM certificate")
	}
	cr.SetConditions(xpv2.Available())
	// An adoption set the external name: ResourceLateInitialized has the
	// reconciler save it.
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: fp == custom.Fingerprint, ResourceLateInitialized: adopted}, nil
}

// adopt takes the node's custom certificate as this resource's when it is
// the very certificate the resource would upload (the same fingerprint): a
// resource applied again on a rebuilt management cluster, or after an
// orphaning delete, has no external name yet and must not upload it again
// (nor fail because PVE refuses to replace it without force). A different
// certificate is left to Create, which refuses it without force.
func (e *external) adopt(ctx context.Context, cr *v1alpha1.CustomCertificate, present string) (bool, error) {
	if meta.WasDeleted(cr) {
		return false, nil
	}
	want, err := wanted(ctx, e.kube, e.fresh, cr)
	if err != nil {
		return false, err
	}
	fp, err := pve.Fingerprint(want.ChainPEM)
	if err != nil || fp != present {
		return false, nil //nolint:nilerr // not a PEM certificate: Create reports it
	}
	meta.SetExternalName(cr, cr.Spec.Node())
	cr.Status.SecretResourceVersion = want.SecretResourceVersion
	e.record.Event(cr, event.Normal(guest.ReasonAdopted, "adopted the custom certificate of node "+cr.Spec.Node()+": its fingerprint is the one this resource would upload"))
	return true, nil
}

// Create uploads the certificate to a node that has no custom one (or
// replaces one only with proxmoxCertSpec.force); its external name is the
// node.
func (e *external) Create(ctx context.Context, cr *v1alpha1.CustomCertificate) (managed.ExternalCreation, error) {
	force := cr.Spec.ProxmoxCertSpec != nil && cr.Spec.ProxmoxCertSpec.Force
	if err := e.upload(ctx, cr, force); err != nil {
		return managed.ExternalCreation{}, err
	}
	meta.SetExternalName(cr, cr.Spec.Node())
	return managed.ExternalCreation{}, nil
}

// Update replaces the node's custom certificate (a renewal, a new Secret
// revision, a changed spec).
func (e *external) Update(ctx context.Context, cr *v1alpha1.CustomCertificate) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, e.upload(ctx, cr, true)
}

func (e *external) upload(ctx context.Context, cr *v1alpha1.CustomCertificate, force bool) error {
	want := e.want
	if want.ChainPEM == "" {
		var err error
		if want, err = wanted(ctx, e.kube, e.fresh, cr); err != nil {
			return err
		}
	}
	node := cr.Spec.Node()
	if err := checkKeyPair(want); err != nil {
		return errors.Wrapf(err, "nothing was uploaded to node %s", node)
	}
	err := e.cl.UploadCertificate(ctx, node, want.ChainPEM, want.KeyPEM, force, cr.Spec.RestartsProxy())
	if pve.IsCustomCertificatePresent(err) {
		return errors.Errorf("node %s %w: "+
			"Proxmox VE replaces it only with force; set proxmoxCertSpec.force: true to replace it", node, ErrForeignCertificate)
	}
	if err != nil {
		return err
	}
	cr.Status.SecretResourceVersion = want.SecretResourceVersion
	msg := "uploaded the custom certificate to node " + node
	if want.SecretName != "" {
		msg += " from Secret " + want.SecretName + " (revision " + want.SecretResourceVersion + ")"
	}
	if cr.Spec.RestartsProxy() {
		msg += "; pveproxy restarts to serve it"
	}
	e.record.Event(cr, event.Normal(reasonUploaded, msg))
	return nil
}

// Delete removes the node's custom certificate: PVE falls back to its own.
func (e *external) Delete(ctx context.Context, cr *v1alpha1.CustomCertificate) (managed.ExternalDelete, error) {
	node := cr.Spec.Node()
	if err := e.cl.DeleteCertificate(ctx, node, cr.Spec.RestartsProxy()); err != nil {
		return managed.ExternalDelete{}, err
	}
	e.record.Event(cr, event.Normal(reasonRemoved, "removed the custom certificate of node "+node+": Proxmox VE serves its own again"))
	return managed.ExternalDelete{}, nil
}

// warnInlineKey sets the InlinePrivateKey condition, with an event when it
// first appears.
func (e *external) warnInlineKey(cr *v1alpha1.CustomCertificate) {
	inline := cr.Spec.ProxmoxCertSpec != nil && cr.Spec.ProxmoxCertSpec.PrivateKey != ""
	was := cr.GetCondition(TypeInlinePrivateKey).Status == corev1.ConditionTrue
	c := xpv2.Condition{Type: TypeInlinePrivateKey, Status: corev1.ConditionFalse, Reason: "None", LastTransitionTime: metav1.Now()}
	if inline {
		c.Status, c.Reason, c.Message = corev1.ConditionTrue, "PrivateKeyInSpec", inlineKeyWarning(cr)
		if !was {
			e.record.Event(cr, event.Warning(reasonInlineKey, errors.New(inlineKeyWarning(cr))))
		}
	}
	cr.SetConditions(c)
}

// explainTLS says what to do when the node's new certificate is not trusted
// by the connection (after a restart of pveproxy, say).
func (e *external) explainTLS(err error, node string) error {
	if pve.Classify(err) == pve.TLSVerificationFailed {
		return errors.Errorf("node %s now serves a certificate ProxmoxConnection %q %w: add its CA to the connection's caBundle: %w", node, e.connection, ErrUntrusted, err)
	}
	return err
}

// checkKeyPair makes sure the key belongs to the certificate before it is
// uploaded: Proxmox VE before 9.1.10 stores any pair, and later ones still
// take a key of another type than the certificate's, after which pveproxy
// serves nothing. The error names the source, never the key.
func checkKeyPair(want certificate) error {
	if _, err := tls.X509KeyPair([]byte(want.ChainPEM), []byte(want.KeyPEM)); err != nil {
		source := "proxmoxCertSpec.privateKey and proxmoxCertSpec.certificate"
		if want.SecretName != "" {
			source = keyPrivateKey + " and " + keyCertificate + " of Secret " + want.SecretName
		}
		return errors.Errorf("%s %w: %w", source, ErrNotAKeyPair, err)
	}
	return nil
}

func customOf(infos []pve.CertificateInfo) (pve.CertificateInfo, bool) {
	for _, i := range infos {
		if i.Filename == pve.CustomCertificateFile {
			return i, true
		}
	}
	return pve.CertificateInfo{}, false
}
