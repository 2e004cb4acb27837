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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/feature"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/dependents"
	"github.com/kubemox/provider-proxmox/internal/controller/mrstate"
)

// ControllerName is the name of the CustomCertificate controller.
func ControllerName() string { return managed.ControllerName(v1alpha1.CustomCertificateGroupKind) }

// Setup adds the CustomCertificate controller to mgr. A change of a TLS
// Secret a resource names (seen through the metadata-only Secret watch the
// connection controller shares: values never enter the cache) reconciles
// that resource at once, so a renewed certificate is uploaded at once.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache) error {
	name := ControllerName()
	//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
	recorder := event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)
	c := &connector{
		kube: mgr.GetClient(), fresh: mgr.GetAPIReader(), clients: clients, record: recorder,
		usage: resource.NewProviderConfigUsageTracker(mgr.GetClient(), &v1alpha1.ProviderConfigUsage{}),
	}
	poll := o.PollInterval
	if poll <= 0 {
		poll = time.Minute
	}
	opts := []managed.ReconcilerOption{
		managed.WithTypedExternalConnector[*v1alpha1.CustomCertificate](c),
		// The external name is the node, set by Create.
		managed.WithInitializers(),
		managed.WithLogger(o.Logger.WithValues("controller", name)),
		managed.WithPollInterval(poll),
		managed.WithRecorder(recorder),
	}
	if o.Features != nil && o.Features.Enabled(feature.EnableBetaManagementPolicies) {
		opts = append(opts, managed.WithManagementPolicies())
	}
	if o.MetricOptions != nil && o.MetricOptions.MRMetrics != nil {
		opts = append(opts, managed.WithMetricRecorder(o.MetricOptions.MRMetrics))
	}
	r := managed.NewReconciler(mgr, resource.ManagedKind(v1alpha1.CustomCertificateGroupVersionKind), opts...)
	if err := mrstate.Setup(mgr, o, &v1alpha1.CustomCertificateList{}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.CustomCertificate{}, builder.WithPredicates(resource.DesiredStateChanged())).
		WatchesMetadata(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(namingSecret(mgr.GetClient())))
	if err := dependents.Watch(mgr, b, &v1alpha1.CustomCertificateList{}, clients); err != nil {
		return errors.Wrap(err, "cannot watch ProxmoxConnection client changes")
	}
	return b.Complete(ratelimiter.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
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
