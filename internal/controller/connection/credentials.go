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

package connection

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// redacted replaces a credential wherever it shows up in a message.
const redacted = "[redacted]"

// credentials are the secret parts of a connection, resolved from the spec
// and the Secrets it references. They never leave this package except inside
// a client configuration.
type credentials struct {
	password string
	secret   string
	ca       []byte
}

// redact removes the credential values from msg. Error messages from the
// client layer are not expected to contain them; this makes sure a status
// condition, event or log line built from one cannot.
func (c credentials) redact(msg string) string {
	for _, v := range []string{c.password, c.secret} {
		if v != "" {
			msg = strings.ReplaceAll(msg, v, redacted)
		}
	}
	return msg
}

// A credentialError explains why a credential could not be resolved, with the
// Ready reason to report. Its message names the Secret and key, never a value.
type credentialError struct {
	reason xpv2.ConditionReason
	msg    string
}

func (e *credentialError) Error() string { return e.msg }

// reasonOf returns the Ready reason for an error from resolveCredentials.
func reasonOf(err error) xpv2.ConditionReason {
	var ce *credentialError
	if errors.As(err, &ce) {
		return ce.reason
	}
	return xpv2.ReasonUnavailable
}

// resolveCredentials reads every credential of spec, inline or from a
// Secret, and returns the Secrets read with their resourceVersions, also
// when a later reference fails.
func (r *Reconciler) resolveCredentials(ctx context.Context, spec v1alpha1.ProxmoxConnectionSpec) (credentials, []v1alpha1.ObservedSecret, error) {
	sr := &secretReader{kube: r.secrets, read: map[types.NamespacedName]*corev1.Secret{}}
	creds := credentials{password: spec.Password, secret: spec.Secret}
	if spec.CABundle != "" {
		creds.ca = []byte(spec.CABundle)
	}

	refs := []struct {
		field string
		ref   *v1alpha1.SecretKeySelector
		set   func(value []byte)
	}{
		{"spec.passwordFrom", spec.PasswordFrom, func(v []byte) { creds.password = string(v) }},
		{"spec.secretFrom", spec.SecretFrom, func(v []byte) { creds.secret = string(v) }},
		{"spec.caFrom", spec.CAFrom, func(v []byte) { creds.ca = v }},
	}
	for _, f := range refs {
		if f.ref == nil {
			continue
		}
		v, err := sr.value(ctx, f.field, *f.ref)
		if err != nil {
			return credentials{}, sr.observed, err
		}
		f.set(v)
	}
	return creds, sr.observed, nil
}

// A secretReader reads each referenced Secret once per reconcile, by name,
// from the API server, and remembers the resourceVersion it read.
type secretReader struct {
	kube     client.Reader
	read     map[types.NamespacedName]*corev1.Secret
	observed []v1alpha1.ObservedSecret
}

// value returns the value of ref's key. field names the spec field holding
// ref, for messages.
func (sr *secretReader) value(ctx context.Context, field string, ref v1alpha1.SecretKeySelector) ([]byte, error) {
	s, err := sr.get(ctx, field, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name})
	if err != nil {
		return nil, err
	}
	v, ok := s.Data[ref.Key]
	if !ok || len(v) == 0 {
		return nil, &credentialError{
			reason: v1alpha1.ReasonSecretKeyNotFound,
			msg:    fmt.Sprintf("key %q of Secret %s/%s (%s) is missing or empty", ref.Key, ref.Namespace, ref.Name, field),
		}
	}
	return v, nil
}

func (sr *secretReader) get(ctx context.Context, field string, nn types.NamespacedName) (*corev1.Secret, error) {
	if s, ok := sr.read[nn]; ok {
		return s, nil
	}
	s := &corev1.Secret{}
	if err := sr.kube.Get(ctx, nn, s); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, &credentialError{
				reason: v1alpha1.ReasonSecretNotFound,
				msg:    fmt.Sprintf("Secret %s/%s (%s) not found", nn.Namespace, nn.Name, field),
			}
		}
		// The API server's errors name the object, never its data.
		return nil, errors.Wrapf(err, "cannot get Secret %s/%s (%s)", nn.Namespace, nn.Name, field)
	}
	sr.read[nn] = s
	sr.observed = append(sr.observed, v1alpha1.ObservedSecret{
		Name:            nn.Name,
		Namespace:       nn.Namespace,
		ResourceVersion: s.GetResourceVersion(),
	})
	return s, nil
}

// fingerprint identifies what a client was built from: the connection's
// generation (every spec change, inline credentials included) and the
// resourceVersion of every Secret read. It holds no credential.
func fingerprint(generation int64, observed []v1alpha1.ObservedSecret) string {
	var b strings.Builder
	fmt.Fprintf(&b, "generation=%d", generation)
	for _, s := range observed {
		fmt.Fprintf(&b, ";%s/%s@%s", s.Namespace, s.Name, s.ResourceVersion)
	}
	return b.String()
}
