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

// Package connection reconciles ProxmoxConnections: it reads their
// credentials, verifies them against Proxmox VE, publishes a verified client
// in the shared client cache, reports Ready on the connection, and accounts
// for the managed resources using it.
//
// This controller is the only writer of a ProxmoxConnection's status, and the
// only reader of the Secrets the connections reference.
package connection

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/gated"
	"github.com/kubemox/provider-proxmox/internal/controller/ratelimit"
	"github.com/kubemox/provider-proxmox/internal/controller/secrets"
)

const (
	// reconcileTimeout bounds one reconcile, including a login to Proxmox VE
	// that may be slowed down by PVE's delay on failed authentication.
	reconcileTimeout = 2 * time.Minute

	// failureRequeue bounds how long a connection that is not Ready waits
	// for its next check when no watch event arrives first.
	failureRequeue = 30 * time.Second

	errGetConnection   = "cannot get ProxmoxConnection"
	errPatchStatus     = "cannot patch ProxmoxConnection status"
	errIndexSecretRefs = "cannot index ProxmoxConnections by the Secrets they reference"
)

// ControllerName is the name of the ProxmoxConnection controller.
func ControllerName() string {
	return providerconfig.ControllerName(v1alpha1.ProxmoxConnectionKind)
}

// Setup adds the ProxmoxConnection controller to the manager. Clients it
// verifies are stored in clients, where managed-resource controllers find
// them by connection name. A change of a Secret a connection references,
// seen by secretWatch, reconciles that connection at once.
func Setup(mgr ctrl.Manager, o controller.Options, clients *pve.Cache, secretWatch *secrets.Watch) error {
	name := ControllerName()

	if err := gated.IndexField(mgr, &v1alpha1.ProxmoxConnection{}, IndexSecretRefs, secretRefKeys); err != nil {
		return errors.Wrap(err, errIndexSecretRefs)
	}

	r := NewReconciler(mgr.GetClient(), mgr.GetAPIReader(), clients,
		WithLogger(o.Logger.WithValues("controller", name)),
		//nolint:staticcheck // crossplane-runtime's event recorder needs the legacy recorder interface.
		WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name), o.EventFilterFunctions...)),
		WithPollInterval(o.PollInterval),
	)

	return ctrl.NewControllerManagedBy(mgr).
		Named(name).
		WithOptions(o.ForControllerRuntime()).
		For(&v1alpha1.ProxmoxConnection{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(secretWatch.Source(connectionsReferencingSecret(mgr.GetClient(), o.Logger))).
		Watches(&v1alpha1.ProviderConfigUsage{}, handler.EnqueueRequestsFromMapFunc(connectionOfUsage)).
		WatchesRawSource(source.Channel(r.endpointEvents, &handler.EnqueueRequestForObject{})).
		Complete(ratelimit.NewReconciler(name, errors.WithSilentRequeueOnConflict(r), o.GlobalRateLimiter))
}

// A Reconciler reconciles ProxmoxConnections.
type Reconciler struct {
	kube    client.Client
	secrets client.Reader
	clients *pve.Cache

	newClient func(pve.Config) (*pve.Client, error)
	poll      time.Duration

	// endpointEvents asks for a reconcile of a connection whose client saw
	// an endpoint go down or come back, so its status (and the
	// re-verification after a failover) does not wait for the next poll.
	endpointEvents chan ctrlevent.GenericEvent

	log    logging.Logger
	record event.Recorder
}

// A ReconcilerOption configures a Reconciler.
type ReconcilerOption func(*Reconciler)

// WithLogger sets the logger. Credentials are never logged.
func WithLogger(l logging.Logger) ReconcilerOption {
	return func(r *Reconciler) { r.log = l }
}

// WithRecorder sets the event recorder.
func WithRecorder(er event.Recorder) ReconcilerOption {
	return func(r *Reconciler) { r.record = er }
}

// WithPollInterval sets how often a Ready connection is verified again.
func WithPollInterval(d time.Duration) ReconcilerOption {
	return func(r *Reconciler) {
		if d > 0 {
			r.poll = d
		}
	}
}

// WithClientFactory replaces how Proxmox VE clients are built.
func WithClientFactory(fn func(pve.Config) (*pve.Client, error)) ReconcilerOption {
	return func(r *Reconciler) { r.newClient = fn }
}

// NewReconciler returns a ProxmoxConnection reconciler. kube reads and writes
// connections and usages; secretReader must read Secrets from the API
// server directly, never through an informer cache.
func NewReconciler(kube client.Client, secretReader client.Reader, clients *pve.Cache, o ...ReconcilerOption) *Reconciler {
	r := &Reconciler{
		kube:      kube,
		secrets:   secretReader,
		clients:   clients,
		newClient: pve.New,
		poll:      time.Minute,

		endpointEvents: make(chan ctrlevent.GenericEvent, endpointEventBuffer),
		log:            logging.NewNopLogger(),
		record:         event.NewNopRecorder(),
	}
	for _, fn := range o {
		fn(r)
	}
	return r
}

// Reconcile verifies one ProxmoxConnection and publishes its client.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()

	pc := &v1alpha1.ProxmoxConnection{}
	if err := r.kube.Get(ctx, req.NamespacedName, pc); err != nil {
		if kerrors.IsNotFound(err) {
			// Gone without our finalizer (or after it was removed): make sure
			// no client built from it remains usable, and that its series
			// leave the metrics.
			r.clients.Remove(req.Name)
			r.clients.Metrics().ForgetConnection(req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, errors.Wrap(err, errGetConnection)
	}
	log := r.log.WithValues("connection", pc.GetName(), "generation", pc.GetGeneration())

	users, err := r.countUsers(ctx, pc.GetName())
	if err != nil {
		return reconcile.Result{}, err
	}

	if meta.WasDeleted(pc) {
		return requeueOnConflict(reconcile.Result{}, r.reconcileDeletion(ctx, log, pc, users))
	}
	if err := r.ensureFinalizer(ctx, pc); err != nil {
		return requeueOnConflict(reconcile.Result{}, err)
	}

	orig := pc.DeepCopy()
	pc.SetUsers(users)
	result := r.verify(ctx, log, pc)
	if err := r.patchStatus(ctx, orig, pc); err != nil {
		return requeueOnConflict(reconcile.Result{}, err)
	}
	r.recordReadyTransition(orig, pc)
	r.clients.Metrics().SetConnectionReady(pc.GetName(), pc.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue)
	r.clients.Metrics().SetEndpoints(pc.GetName(), endpointsByHealth(pc.Status.Endpoints), endpointHealths())
	return result, nil
}

// verify resolves the connection's credentials, makes sure a client built
// from exactly those credentials has completed an authenticated call, and
// records the outcome in pc's status. Only a verified client is left in the
// cache: managed resources see ErrNotReady otherwise and retry shortly,
// rather than sending requests with a credential known to be bad.
func (r *Reconciler) verify(ctx context.Context, log logging.Logger, pc *v1alpha1.ProxmoxConnection) reconcile.Result {
	creds, observed, err := r.resolveCredentials(ctx, pc.Spec)
	pc.Status.ObservedSecrets = observed
	if err != nil {
		r.clients.Fail(pc.GetName(), err.Error())
		pc.Status.Endpoints = nil // no client, so no health to report
		pc.Status.SetConditions(notReady(pc, reasonOf(err), err.Error()))
		log.Debug("Cannot resolve credentials", "error", err)
		return reconcile.Result{RequeueAfter: r.retryAfter()}
	}

	fp := fingerprint(pc.GetGeneration(), allEndpoints(pc.Spec), observed)
	cl, fresh, err := r.clientFor(pc, creds, fp)
	if err != nil {
		r.clients.Fail(pc.GetName(), creds.redact(err.Error()))
		pc.Status.Endpoints = nil
		pc.Status.SetConditions(notReady(pc, configReason(pc.Spec), creds.redact(err.Error())))
		log.Debug("Cannot build Proxmox VE client", "error", creds.redact(err.Error()))
		return reconcile.Result{RequeueAfter: r.retryAfter()}
	}

	version, err := r.check(ctx, cl)
	if err != nil {
		if fresh {
			cl.Retire()
		}
		// A client that no longer authenticates must not keep serving
		// managed resources: retire it together with its old credential.
		msg := creds.redact(err.Error())
		r.clients.Fail(pc.GetName(), msg)
		pc.Status.Endpoints = endpointStatus(pc.Status.Endpoints, cl.Endpoints(), creds.redact)
		pc.Status.SetConditions(notReady(pc, failureReason(err), msg))
		log.Debug("Cannot verify Proxmox VE credentials", "error", msg)
		return reconcile.Result{RequeueAfter: r.retryAfter()}
	}

	if fresh {
		// Store retires the client built from the previous fingerprint, so
		// no new request goes out with a rotated-away credential.
		r.clients.Store(pc.GetName(), fp, cl)
	}
	pc.Status.Version = version
	pc.Status.Endpoints = endpointStatus(pc.Status.Endpoints, cl.Endpoints(), creds.redact)
	pc.Status.SetConditions(readyCondition(pc))
	return reconcile.Result{RequeueAfter: r.poll}
}

// check proves that cl reaches Proxmox VE with its credential. When the
// managed resources' own requests succeeded within the last poll interval
// they already prove it, and no request is made; otherwise one is.
//
// While an endpoint is down a request is always made: it goes to a healthy
// endpoint (verifying the credential there after a failover), or, with a
// single endpoint, finds out whether that one answers again.
func (r *Reconciler) check(ctx context.Context, cl *pve.Client) (string, error) {
	if version, ok := cl.VerifiedWithin(r.poll); ok && allHealthy(cl.Endpoints()) {
		return version, nil
	}
	return cl.Verify(ctx)
}

func allHealthy(eps []pve.EndpointState) bool {
	for _, e := range eps {
		if !e.Healthy {
			return false
		}
	}
	return true
}

// retryAfter is how soon a connection that is not Ready is verified again:
// the poll interval, at most failureRequeue.
func (r *Reconciler) retryAfter() time.Duration {
	return min(r.poll, failureRequeue)
}

// clientFor returns the cached client when it was built from fingerprint fp,
// and otherwise a new, unverified and not yet cached one (fresh=true).
func (r *Reconciler) clientFor(pc *v1alpha1.ProxmoxConnection, creds credentials, fp string) (cl *pve.Client, fresh bool, err error) {
	if r.clients.Fingerprint(pc.GetName()) == fp {
		if cached, err := r.clients.Get(pc.GetName()); err == nil {
			return cached, false, nil
		}
	}
	cfg := clientConfig(pc.Spec, creds)
	cfg.Metrics = r.clients.Metrics().Connection(pc.GetName())
	cfg.Fence = r.clients.Fence()
	cfg.OnEndpointChange = r.endpointChanged(pc.GetName())
	cl, err = r.newClient(cfg)
	return cl, true, err
}

// allEndpoints is the connection's endpoint followed by its endpoints, as
// written in the spec.
func allEndpoints(spec v1alpha1.ProxmoxConnectionSpec) []string {
	return append([]string{spec.Endpoint}, spec.Endpoints...)
}

// configReason explains why no client could be built from spec: most often
// an endpoint that is not a host, host:port or https URL.
func configReason(spec v1alpha1.ProxmoxConnectionSpec) xpv2.ConditionReason {
	if _, err := pve.NormalizeEndpoints(spec.Endpoint, spec.Endpoints); err != nil {
		return v1alpha1.ReasonInvalidEndpoint
	}
	return xpv2.ReasonUnavailable
}

func clientConfig(spec v1alpha1.ProxmoxConnectionSpec, creds credentials) pve.Config {
	return pve.Config{
		Endpoint:              spec.Endpoint,
		Endpoints:             spec.Endpoints,
		Username:              spec.Username,
		Password:              creds.password,
		TokenID:               spec.TokenID,
		Secret:                creds.secret,
		CAPEM:                 creds.ca,
		InsecureSkipVerify:    spec.InsecureSkipVerify,
		MaxConcurrentRequests: int(spec.MaxConcurrentRequests),
	}
}

// patchStatus writes pc's status with a merge patch against orig, the
// object as read. A merge patch only carries fields that differ from orig, so
// one computed from a stale read (the cache lagging our own previous write)
// could leave a changed field unwritten; the optimistic lock turns that into
// a conflict, and the caller reconciles again from a fresh read.
func (r *Reconciler) patchStatus(ctx context.Context, orig, pc *v1alpha1.ProxmoxConnection) error {
	err := r.kube.Status().Patch(ctx, pc, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
	// NotFound: the connection was deleted while we reconciled it; its
	// delete event tidies up.
	return errors.Wrap(resource.IgnoreNotFound(err), errPatchStatus)
}

// requeueOnConflict asks for a quick retry, without logging an error, when
// err is a write conflict: the object changed since it was read.
func requeueOnConflict(result reconcile.Result, err error) (reconcile.Result, error) {
	if kerrors.IsConflict(errors.Cause(err)) {
		return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // SA1019: the rate-limited retry is what a conflict wants; RequeueAfter would retry at a fixed interval
	}
	return result, err
}
