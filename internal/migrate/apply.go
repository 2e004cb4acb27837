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

package migrate

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// fieldOwner is the server-side apply field manager of every object apply
// writes.
const fieldOwner = "kubemox-migrate"

// activationPolicyName is the ManagedResourceActivationPolicy apply
// creates to activate our kinds under safe-start.
const activationPolicyName = "kubemox-migrate"

// ErrInstallPackage says kubemox is gone and Crossplane runs, but our
// package is not installed yet: install it and run apply again.
var ErrInstallPackage = errors.New("kubemox's CRDs are deleted; install the provider-proxmox package now (it declares safe-start, " +
	"so nothing of it is served before activation), then run apply again to continue")

// ErrOperatorRunning refuses to touch kubemox objects while kubemox runs.
var ErrOperatorRunning = errors.New("kubemox's operator is running")

// ApplyOptions shape apply.
type ApplyOptions struct {
	// Dir is the export directory.
	Dir string
	// Operator is kubemox's Deployment, namespace/name.
	Operator string
	// CRDDir holds our CRDs, applied when Crossplane is not installed.
	CRDDir string
	// StateNamespace holds the progress ConfigMap.
	StateNamespace string
	// Manage switches every resource to full management at the end.
	Manage bool
	DryRun bool
	// Wait bounds each wait (CRDs gone, kinds served, resources Ready).
	Wait time.Duration
	Out  io.Writer
}

// applier runs apply's steps. newClient gives a client with a fresh REST
// mapping: after the CRDs swap scope, a cached mapping would send
// namespaced objects to cluster-scoped URLs.
type applier struct {
	opts      ApplyOptions
	newClient func() (client.Client, error)
	kube      client.Client
	calls     *calls
	progress  *progress
	objects   []*unstructured.Unstructured
}

// Apply migrates the cluster to the exported manifests, continuing from
// the progress ConfigMap.
func Apply(ctx context.Context, newClient func() (client.Client, error), o ApplyOptions) error {
	kube, err := newClient()
	if err != nil {
		return err
	}
	a := &applier{opts: o, newClient: newClient, kube: kube, calls: &calls{out: o.Out, dryRun: o.DryRun}}
	if a.objects, err = ReadExport(o.Dir); err != nil {
		return err
	}
	if a.progress, err = loadProgress(ctx, kube, o.StateNamespace); err != nil {
		return err
	}
	steps := []struct {
		name string
		run  func(context.Context) error
	}{
		{stepFinalizers, a.removeFinalizers},
		{stepCRDs, a.deleteKubemoxCRDs},
		{stepServed, a.serveOurKinds},
		{stepApplied, a.applyExport},
		{stepReady, a.waitReady},
	}
	if o.Manage {
		steps = append(steps, struct {
			name string
			run  func(context.Context) error
		}{stepManaged, a.manage})
	}
	ran := 0
	for _, s := range steps {
		if a.progress.isDone(s.name) {
			continue
		}
		ran++
		fmt.Fprintf(o.Out, "== step %s\n", s.name)
		if err := s.run(ctx); err != nil {
			return errors.Wrapf(err, "step %s", s.name)
		}
		if err := a.progress.record(ctx, a.calls, s.name); err != nil {
			return err
		}
	}
	switch {
	case ran == 0:
		fmt.Fprintln(o.Out, "nothing to do: every step is recorded as done in the progress ConfigMap")
	case !o.Manage:
		fmt.Fprintf(o.Out, "every resource is Ready in Observe mode; to manage them fully run:\n  kubemox-migrate apply --dir %s --manage\n", o.Dir)
	}
	return nil
}

// checkOperator refuses while kubemox's operator Deployment (or any
// Deployment running a kubemox image) has replicas.
func (a *applier) checkOperator(ctx context.Context) error {
	ns, name, ok := strings.Cut(a.opts.Operator, "/")
	if !ok {
		return errors.Errorf("--operator %q is not namespace/name", a.opts.Operator)
	}
	deps := &appsv1.DeploymentList{}
	if err := a.kube.List(ctx, deps); err != nil {
		return errors.Wrap(err, "cannot list Deployments to check that kubemox is stopped")
	}
	for _, d := range deps.Items {
		named := d.Namespace == ns && d.Name == name
		if (named || runsKubemox(&d)) && running(&d) {
			return errors.Wrapf(ErrOperatorRunning, "Deployment %s/%s has %d replicas: scale it to 0 (kubectl -n %s scale deployment %s --replicas=0) and run apply again",
				d.Namespace, d.Name, replicas(&d), d.Namespace, d.Name)
		}
	}
	return nil
}

func runsKubemox(d *appsv1.Deployment) bool {
	for _, c := range d.Spec.Template.Spec.Containers {
		if strings.Contains(c.Image, "kubemox") && !strings.Contains(c.Image, "provider-proxmox") {
			return true
		}
	}
	return false
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}

func running(d *appsv1.Deployment) bool { return replicas(d) > 0 || d.Status.Replicas > 0 }

// removeFinalizers checks that kubemox is stopped and that the export has
// a replacement for every kubemox object, then removes kubemox's
// finalizers so deleting the CRDs neither hangs nor reaches a guest.
func (a *applier) removeFinalizers(ctx context.Context) error {
	if err := a.checkOperator(ctx); err != nil {
		return err
	}
	inv, err := Discover(ctx, a.kube)
	if err != nil {
		return err
	}
	if len(inv.OurMRDs) > 0 && len(inv.CRDs) > 0 {
		return errors.New("provider-proxmox's package is installed while kubemox's CRDs remain; see plan")
	}
	if err := a.checkExportCovers(inv); err != nil {
		return err
	}
	for _, s := range inv.Objects {
		if len(s.Obj.GetFinalizers()) == 0 {
			continue
		}
		obj := s.Obj
		what := fmt.Sprintf("PATCH %s: remove finalizers %v", s.Ref(), obj.GetFinalizers())
		if err := a.calls.do(what, func() error {
			patch := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))
			return client.IgnoreNotFound(a.kube.Patch(ctx, obj, patch))
		}); err != nil {
			return errors.Wrapf(err, "cannot remove the finalizers of %s", s.Ref())
		}
	}
	return nil
}

// checkExportCovers refuses when a kubemox object has no manifest in the
// export: deleting its CRD would lose it.
func (a *applier) checkExportCovers(inv *Inventory) error {
	have := map[string]bool{}
	for _, o := range a.objects {
		have[o.GetAnnotations()[AnnotationSource]] = true
	}
	var missing []string
	for _, s := range inv.Objects {
		if !have[s.Kind.Name+"/"+s.Obj.GetNamespace()+"/"+s.Obj.GetName()] {
			missing = append(missing, s.Ref())
		}
	}
	if len(missing) > 0 {
		return errors.Errorf("the export has no manifest for %s: run plan and export again", strings.Join(missing, ", "))
	}
	return nil
}

// deleteKubemoxCRDs deletes every kubemox CRD and waits until they are
// gone (their objects, without finalizers, go with them).
func (a *applier) deleteKubemoxCRDs(ctx context.Context) error {
	if err := a.checkOperator(ctx); err != nil {
		return err
	}
	inv, err := Discover(ctx, a.kube)
	if err != nil {
		return err
	}
	for _, crd := range inv.CRDs {
		if err := a.calls.do("DELETE CustomResourceDefinition "+crd.Name, func() error {
			return client.IgnoreNotFound(a.kube.Delete(ctx, crd))
		}); err != nil {
			return errors.Wrapf(err, "cannot delete CRD %s", crd.Name)
		}
	}
	for _, crd := range inv.CRDs {
		if err := a.waitFor(ctx, "CRD "+crd.Name+" gone", func() (bool, error) {
			err := a.kube.Get(ctx, client.ObjectKey{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{})
			return kerrors.IsNotFound(err), client.IgnoreNotFound(err)
		}); err != nil {
			return err
		}
	}
	return nil
}

// serveOurKinds activates our kinds after kubemox's CRDs are gone: with
// Crossplane, an activation policy for our package's MRDs; without, our
// CRDs from CRDDir.
func (a *applier) serveOurKinds(ctx context.Context) error {
	inv, err := Discover(ctx, a.kube)
	if err != nil {
		return err
	}
	// A dry run has deleted nothing: it goes on as if it had.
	if len(inv.CRDs) > 0 && !a.opts.DryRun {
		return errors.New("kubemox CRDs are still installed")
	}
	switch {
	case inv.Crossplane && len(inv.OurMRDs) == 0 && !a.opts.DryRun:
		return ErrInstallPackage
	case inv.Crossplane && len(inv.OurMRDs) == 0:
		fmt.Fprintln(a.opts.Out, "would stop until the provider-proxmox package is installed (exit status 3), then:")
		err = a.activate(ctx)
	case inv.Crossplane:
		err = a.activate(ctx)
	default:
		if err = a.applyCRDs(ctx); err == nil {
			fmt.Fprintln(a.opts.Out, "kubemox's CRDs are replaced by provider-proxmox's: start the provider now; apply waits for its resources")
		}
	}
	if err != nil {
		return err
	}
	for _, crd := range a.neededCRDs() {
		if err := a.waitFor(ctx, "CRD "+crd+" Established", func() (bool, error) {
			c := &apiextensionsv1.CustomResourceDefinition{}
			if err := a.kube.Get(ctx, client.ObjectKey{Name: crd}, c); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return established(c), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

func established(c *apiextensionsv1.CustomResourceDefinition) bool {
	for _, cond := range c.Status.Conditions {
		if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// neededCRDs are the CRDs of the kinds in the export.
func (a *applier) neededCRDs() []string {
	set := map[string]bool{}
	for _, o := range a.objects {
		if k, ok := KindNamed(o.GetKind()); ok && o.GetAPIVersion() == Group+"/v1alpha1" {
			set[k.CRDName()] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// activate applies a ManagedResourceActivationPolicy for every kind of our
// group: the package manager then serves them from its MRDs.
func (a *applier) activate(ctx context.Context) error {
	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.crossplane.io/v1alpha1",
		"kind":       "ManagedResourceActivationPolicy",
		"metadata":   map[string]any{keyName: activationPolicyName},
		keySpec:      map[string]any{"activate": []any{"*." + Group}},
	}}
	return a.calls.do("APPLY ManagedResourceActivationPolicy "+activationPolicyName+" activating *."+Group, func() error {
		return errors.Wrap(a.serverSideApply(ctx, policy), "cannot apply the activation policy")
	})
}

// serverSideApply applies u, taking over fields others own: apply is
// the one writer of what it exports.
func (a *applier) serverSideApply(ctx context.Context, u *unstructured.Unstructured) error {
	return a.kube.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// applyCRDs applies our CRDs, marked as ours.
func (a *applier) applyCRDs(ctx context.Context) error {
	paths, err := filepath.Glob(filepath.Join(a.opts.CRDDir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		return errors.Errorf("no CRDs in %s (--crds): without Crossplane, apply installs provider-proxmox's CRDs from there", a.opts.CRDDir)
	}
	sort.Strings(paths)
	for _, p := range paths {
		raw, err := os.ReadFile(p) //nolint:gosec // the CRD directory the user names
		if err != nil {
			return errors.Wrapf(err, "cannot read %s", p)
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
			return errors.Wrapf(err, "cannot parse %s", p)
		}
		ann := crd.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationCRDSource] = crdSourceOurs
		crd.SetAnnotations(ann)
		if err := a.calls.do("APPLY CustomResourceDefinition "+crd.GetName(), func() error {
			return a.serverSideApply(ctx, crd)
		}); err != nil {
			return errors.Wrapf(err, "cannot apply CRD %s", crd.GetName())
		}
	}
	return nil
}

// applyExport applies every exported object (server-side, so a re-run
// after an interruption converges), creating missing namespaces.
func (a *applier) applyExport(ctx context.Context) error {
	kube, err := a.newClient()
	if err != nil {
		return err
	}
	a.kube = kube
	namespaces := map[string]bool{}
	for _, o := range a.objects {
		if ns := o.GetNamespace(); ns != "" && !namespaces[ns] {
			namespaces[ns] = true
			if err := a.ensureNamespace(ctx, ns); err != nil {
				return err
			}
		}
		obj := forApply(o)
		if err := a.calls.do("APPLY "+target(obj), func() error {
			return a.serverSideApply(ctx, obj)
		}); err != nil {
			return errors.Wrapf(err, "cannot apply %s", target(obj))
		}
	}
	return nil
}

// forApply is o as it is applied: a Secret's stringData as data, which
// server-side apply tracks.
func forApply(o *unstructured.Unstructured) *unstructured.Unstructured {
	obj := o.DeepCopy()
	if obj.GetKind() != "Secret" {
		return obj
	}
	sd, _, _ := unstructured.NestedStringMap(obj.Object, "stringData")
	data, _, _ := unstructured.NestedStringMap(obj.Object, "data")
	if data == nil {
		data = map[string]string{}
	}
	for k, v := range sd {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v))
	}
	unstructured.RemoveNestedField(obj.Object, "stringData")
	_ = unstructured.SetNestedStringMap(obj.Object, data, "data")
	return obj
}

func (a *applier) ensureNamespace(ctx context.Context, ns string) error {
	err := a.kube.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
	if !kerrors.IsNotFound(err) {
		return errors.Wrapf(err, "cannot read namespace %s", ns)
	}
	return a.calls.do("CREATE Namespace "+ns, func() error {
		err := a.kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if kerrors.IsAlreadyExists(err) {
			return nil
		}
		return errors.Wrapf(err, "cannot create namespace %s", ns)
	})
}

// watched are the exported objects whose Ready condition apply waits for:
// connections, managed resources and sets (suspended policies have no
// work to be ready for).
func (a *applier) watched() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range a.objects {
		k, ok := KindNamed(o.GetKind())
		if ok && o.GetAPIVersion() == Group+"/v1alpha1" && k.Name != "VirtualMachineSnapshotPolicy" {
			out = append(out, o)
		}
	}
	return out
}

// waitReady waits until every watched object is Ready.
func (a *applier) waitReady(ctx context.Context) error {
	for _, o := range a.watched() {
		obj := o.DeepCopy()
		if err := a.waitFor(ctx, target(obj)+" Ready", func() (bool, error) {
			if err := a.kube.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			return conditionTrue(obj, "Ready"), nil
		}); err != nil {
			return errors.Wrapf(err, "last conditions: %s", conditionsOf(obj))
		}
	}
	return nil
}

// manage widens every Observe-only resource and set to full management.
func (a *applier) manage(ctx context.Context) error {
	for _, o := range a.watched() {
		if _, ok, _ := unstructured.NestedStringSlice(o.Object, keySpec, "managementPolicies"); !ok {
			continue
		}
		obj := o.DeepCopy()
		if err := a.recordPasswordApplied(ctx, obj); err != nil {
			return err
		}
		if err := a.calls.do("PATCH "+target(obj)+": spec.managementPolicies [\"*\"]", func() error {
			patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"managementPolicies":["*"]}}`))
			return a.kube.Patch(ctx, obj, patch)
		}); err != nil {
			return errors.Wrapf(err, "cannot switch %s to full management", target(obj))
		}
	}
	return nil
}

// recordPasswordApplied tells the provider that a VM's cloud-init password
// (passwordFrom, where export moved kubemox's inline one) is already in
// Proxmox VE: kubemox wrote it from the same spec, and PVE only ever shows
// it masked. Without this, full management would write it again and reboot
// the guest to apply it. A password left inline (--keep-inline) is not
// recorded: the provider keys it on the generation, which --manage bumps.
func (a *applier) recordPasswordApplied(ctx context.Context, obj *unstructured.Unstructured) error {
	if obj.GetKind() != kindVM {
		return nil
	}
	for _, at := range passwordPaths[kindVM] {
		secret, ok, _ := unstructured.NestedString(obj.Object, append(at.path, "passwordFrom", keyName)...)
		if !ok || secret == "" {
			continue
		}
		s := &corev1.Secret{}
		if err := a.kube.Get(ctx, types.NamespacedName{Namespace: obj.GetNamespace(), Name: secret}, s); err != nil {
			return errors.Wrapf(err, "cannot read the cloud-init password Secret of %s", target(obj))
		}
		applied := map[string]any{"status": map[string]any{"cloudInitPasswordApplied": map[string]any{"secretResourceVersion": s.ResourceVersion}}}
		patch, err := json.Marshal(applied)
		if err != nil {
			return errors.Wrap(err, "cannot encode the status patch")
		}
		return errors.Wrapf(a.calls.do("PATCH "+target(obj)+" status: cloudInitPasswordApplied (kubemox applied it)", func() error {
			return a.kube.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))
		}), "cannot record the cloud-init password of %s as applied", target(obj))
	}
	return nil
}

// waitFor polls cond every second up to Wait; a dry run does not wait.
func (a *applier) waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	if a.opts.DryRun {
		fmt.Fprintf(a.opts.Out, "would wait until %s\n", what)
		return nil
	}
	deadline := time.Now().Add(a.opts.Wait)
	for {
		ok, err := cond()
		if err != nil {
			return errors.Wrapf(err, "waiting until %s", what)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Errorf("%s: not after %s", what, a.opts.Wait)
		}
		select {
		case <-ctx.Done():
			return errors.Wrapf(ctx.Err(), "waiting until %s", what)
		case <-time.After(time.Second):
		}
	}
}

func conditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

func conditionsOf(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	parts := make([]string, 0, len(conds))
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	return strings.Join(parts, "; ")
}
