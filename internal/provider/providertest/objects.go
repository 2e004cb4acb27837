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

package providertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// TokenSecretKey is the key of the Secret CreateTokenConnection writes.
const TokenSecretKey = "token"

// CreateTokenConnection creates a ProxmoxConnection named name to the
// simulator (its CA trusted) that authenticates with API token tokenID,
// whose secret it reads from Secret secretNS/secretName, and creates that
// Secret (and its namespace). Objects that exist already are kept.
func (h *Harness) CreateTokenConnection(ctx context.Context, name, tokenID, secretNS, secretName, secret string) error {
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: secretNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: secretNS, Name: secretName}, StringData: map[string]string{TokenSecretKey: secret}},
		&v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProxmoxConnectionSpec{
			Endpoint: h.Sim.URL(), TokenID: tokenID, CABundle: string(h.Sim.CAPEM()),
			SecretFrom: &v1alpha1.SecretKeySelector{Name: secretName, Namespace: secretNS, Key: TokenSecretKey},
		}},
	} {
		if err := h.Kube.Create(ctx, o); err != nil && !kerrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// WaitConnectionReady waits until the ProxmoxConnection name is Ready.
func (h *Harness) WaitConnectionReady(ctx context.Context, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pc := &v1alpha1.ProxmoxConnection{}
		if err := h.Kube.Get(ctx, types.NamespacedName{Name: name}, pc); err == nil &&
			pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("ProxmoxConnection %s not Ready after %s", name, timeout)
}

// WaitFor reads obj (by its name and namespace) until cond, which looks at
// obj, holds; it fails t after timeout, saying what was awaited.
func (h *Harness) WaitFor(t testing.TB, obj client.Object, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	var err error
	Eventually(t, timeout, 250*time.Millisecond, func() bool {
		err = h.Kube.Get(context.Background(), key, obj)
		return err == nil && cond()
	}, func() string {
		return fmt.Sprintf("%T %s: not %s after %s; last error %v; now %+v", obj, key, what, timeout, err, obj)
	})
}

// WaitGone waits until obj no longer exists, failing t after timeout.
func (h *Harness) WaitGone(t testing.TB, obj client.Object, timeout time.Duration) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	var err error
	Eventually(t, timeout, 250*time.Millisecond, func() bool {
		err = h.Kube.Get(context.Background(), key, obj)
		return kerrors.IsNotFound(err)
	}, func() string {
		return fmt.Sprintf("%T %s still exists after %s (err %v)", obj, key, timeout, err)
	})
}
