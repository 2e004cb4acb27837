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

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
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
	sr := secrets.NewReader(r.secrets)
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
		v, err := credentialValue(ctx, sr, f.field, *f.ref)
		if err != nil {
			return credentials{}, observedSecrets(sr), err
		}
		f.set(v)
	}
	return creds, observedSecrets(sr), nil
}

// credentialValue returns the value of ref's key, which must be set and
// not empty. field names the spec field holding ref, for messages.
func credentialValue(ctx context.Context, sr *secrets.Reader, field string, ref v1alpha1.SecretKeySelector) ([]byte, error) {
	k, err := sr.Key(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, ref.Key)
	switch {
	case kerrors.IsNotFound(err):
		return nil, &credentialError{
			reason: v1alpha1.ReasonSecretNotFound,
			msg:    fmt.Sprintf("Secret %s/%s (%s) not found", ref.Namespace, ref.Name, field),
		}
	case errors.Is(err, secrets.ErrKeyNotFound) || (err == nil && len(k.Value) == 0):
		return nil, &credentialError{
			reason: v1alpha1.ReasonSecretKeyNotFound,
			msg:    fmt.Sprintf("key %q of Secret %s/%s (%s) is missing or empty", ref.Key, ref.Namespace, ref.Name, field),
		}
	case err != nil:
		// The API server's errors name the object, never its data.
		return nil, errors.Wrapf(err, "cannot get Secret %s/%s (%s)", ref.Namespace, ref.Name, field)
	}
	return k.Value, nil
}

// observedSecrets lists the Secrets sr read, for status.observedSecrets.
func observedSecrets(sr *secrets.Reader) []v1alpha1.ObservedSecret {
	read := sr.Read()
	if len(read) == 0 {
		return nil // as before: inline credentials leave status.observedSecrets unset
	}
	out := make([]v1alpha1.ObservedSecret, 0, len(read))
	for _, s := range read {
		out = append(out, v1alpha1.ObservedSecret{Name: s.Name, Namespace: s.Namespace, ResourceVersion: s.ResourceVersion})
	}
	return out
}

// fingerprint identifies what a client was built from: the connection's
// generation (every spec change, inline credentials included), its
// endpoints (named even though a change of them is a new generation, so a
// client is never reused for another set of endpoints) and the
// resourceVersion of every Secret read. It holds no credential.
func fingerprint(generation int64, endpoints []string, observed []v1alpha1.ObservedSecret) string {
	var b strings.Builder
	fmt.Fprintf(&b, "generation=%d;endpoints=%s", generation, strings.Join(endpoints, ","))
	for _, s := range observed {
		fmt.Fprintf(&b, ";%s/%s@%s", s.Namespace, s.Name, s.ResourceVersion)
	}
	return b.String()
}
