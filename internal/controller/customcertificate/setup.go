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

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
	"github.com/kubemox/provider-proxmox/internal/controller/polling"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
	"github.com/kubemox/provider-proxmox/internal/controller/statusmetrics"
)

// Setup adds the CustomCertificate controller to mgr. A change of a TLS
// Secret a resource names (seen through secretWatch, the Secret watch every
// controller shares: values never enter the provider's memory unasked)
// reconciles that resource at once, so a renewed certificate is uploaded at
// once.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, secretWatch *secrets.Watch, poll polling.Policy) error {
	recorder := guest.Recorder(mgr, o, guest.ControllerName(v1alpha1.CustomCertificateGroupVersionKind))
	c := &connector{
		kube: mgr.GetClient(), fresh: mgr.GetAPIReader(), clients: clients, record: recorder,
		usage: resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
	}
	if err := statusmetrics.Setup(mgr, o, statusmetrics.CertificateExpiries(clients.Metrics())); err != nil {
		return err
	}
	return guest.SetupManaged(mgr, o, clients, recorder, guest.ManagedKind[*v1alpha1.CustomCertificate]{
		GVK:       v1alpha1.CustomCertificateGroupVersionKind,
		Polling:   poll,
		Object:    &v1alpha1.CustomCertificate{},
		List:      &v1alpha1.CustomCertificateList{},
		Connector: c,
		Watch: func(b *builder.Builder) *builder.Builder {
			return b.WatchesRawSource(secretWatch.Source(namingSecret(mgr.GetClient())))
		},
	})
}

// namingSecret maps a Secret to the CustomCertificates of its namespace that
// take their certificate from it.
func namingSecret(kube client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		l := &v1alpha1.CustomCertificateList{}
		if err := kube.List(ctx, l, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, cc := range l.Items {
			if secretOf(&cc) == o.GetName() {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: cc.Namespace, Name: cc.Name}})
			}
		}
		return out
	}
}

// secretOf is the Secret a CustomCertificate takes its certificate from, or "".
func secretOf(cc *v1alpha1.CustomCertificate) string {
	switch {
	case cc.Spec.TLSSecretRef != nil:
		return cc.Spec.TLSSecretRef.Name
	case cc.Spec.CertManagerSpec != nil:
		return cc.Spec.CertManagerSpec.SecretName
	default:
		return ""
	}
}
