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

package kubemox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubemox/provider-proxmox/internal/migrate"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	setupWait = 3 * time.Minute
	rootUser  = "root@pam"
	// operatorNS/operatorName are kubemox's Deployment as its manifests
	// name it.
	operatorNS   = "kubemox-system"
	operatorName = "kubemox-controller-manager"
	providerName = "provider-proxmox"
)

// guestSeed is one guest the kubemox objects name.
type guestSeed struct {
	vmid int
	node string
	kind string
	cfg  map[string]string
	// matches says the kubemox spec agrees with the guest, so full
	// management writes the marker and nothing else; obj is the resource
	// the marker names.
	matches bool
	obj     string
}

// run is the scenario's shared state.
type run struct {
	t          *testing.T
	xp         *testenv.Crossplane
	kube       client.Client
	sim        *pvesim.Server
	bin        string
	kubeconfig string
	dir        string
	password   string
	guests     []guestSeed
	// before are the guests' configs and states once seeded.
	before map[int]string
	// certPEM and keyPEM are the custom certificate of node pve1.
	certPEM, keyPEM string
}

func TestMigrateFromKubemoxOnRealCrossplane(t *testing.T) {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		t.Skip(testenv.SkipEnvVar + "=1: integration tests against a real API server are disabled")
	}
	ctrllog.SetLogger(logr.Discard())
	r := &run{t: t, dir: filepath.Join(t.TempDir(), "export"), password: "s3cret-" + rand.Text()[:8]}
	r.startStack()
	r.seedSimulator()
	r.installKubemox()

	r.step("plan refuses two guests of one name and a wrong password, saying why", r.planRefuses)
	r.step("plan is clean once a human renamed one guest and fixed the password; export", r.planAndExport)
	r.step("apply refuses while kubemox's operator runs, and changes nothing", r.applyRefusesOperator)
	r.step("apply --dry-run prints the calls and makes none", r.applyDryRun)
	r.step("apply deletes kubemox and asks for the package", r.applyUntilPackage)
	r.step("install the package under safe-start and start the provider", r.installProvider)
	r.step("apply SIGKILLed while applying the export, then run again to the end", r.applyKilledAndResumed)
	r.step("every resource Ready and observing; no guest changed, only reads", r.checkObserving)
	r.step("a second apply changes nothing", r.secondApplyNoop)
	r.step("apply --manage: one marker write per matching guest, nothing else", r.manage)
}

func (r *run) step(name string, f func(t *testing.T)) {
	start := time.Now()
	ok := r.t.Run(name, f)
	r.t.Logf("step %q took %s", name, time.Since(start).Round(100*time.Millisecond))
	if !ok {
		r.t.FailNow()
	}
}

// cli runs kubemox-migrate and returns its output and exit code.
func (r *run) cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(r.bin, append(args, "--kubeconfig", r.kubeconfig)...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kubemox-migrate %v: %v", args, err)
	}
	t.Logf("$ kubemox-migrate %s  (exit %d)\n%s", strings.Join(args, " "), code, out)
	return string(out), code
}

// planRefuses: two guests named legacy on pve2, and the lab connection's
// wrong password, are reported; nothing else is.
func (r *run) planRefuses(t *testing.T) {
	out, code := r.cli(t, "plan")
	if code != 2 {
		t.Fatalf("plan exit code %d, want 2 (needs a human)", code)
	}
	for _, want := range []string{
		`VirtualMachine legacy -> VirtualMachine default/legacy`,
		`2 guests named "legacy" on node pve2 (VMIDs 130, 131)`,
		`ProxmoxConnection lab -> ProxmoxConnection lab`,
		`does not authenticate`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q", want)
		}
	}
	if n := strings.Count(out, "! NEEDS A HUMAN:"); n != 2 {
		t.Errorf("plan reports %d items needing a human, want 2 (legacy, lab)", n)
	}
	if strings.Contains(out, r.password) {
		t.Errorf("plan printed the connection's password")
	}
}

// planAndExport: a human renames the other legacy guest and corrects the
// lab connection's password; plan is then clean and export writes the
// manifests. From here on, the simulator must see only reads.
func (r *run) planAndExport(t *testing.T) {
	ctx := context.Background()
	if err := r.sim.SetGuestConfig(131, "name", "legacy-old"); err != nil {
		t.Fatal(err)
	}
	lab := &unstructured.Unstructured{}
	lab.SetAPIVersion("proxmox.alperen.cloud/v1alpha1")
	lab.SetKind("ProxmoxConnection")
	if err := r.kube.Get(ctx, client.ObjectKey{Name: "lab"}, lab); err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(lab.Object, r.password, "spec", "password")
	if err := r.kube.Update(ctx, lab); err != nil {
		t.Fatal(err)
	}
	r.before = r.guestStates()
	r.sim.ResetCounters()

	out, code := r.cli(t, "plan")
	if code != 0 || !strings.Contains(out, "plan is clean") {
		t.Fatalf("plan exit code %d, want a clean plan", code)
	}
	for _, want := range []string{
		"VirtualMachine web -> VirtualMachine default/web: observe VMID 101 on node pve1",
		"VirtualMachine app-1 -> VirtualMachine default/app-1: observe VMID 111 on node pve2, adopted by VirtualMachineSet app",
		"+ Secret default/db-cloudinit (keys password)",
		"+ Secret default/pve-credentials (keys password)",
		"+ Secret default/pve1-cert-tls (keys tls.crt, tls.key)",
		"VirtualMachineSnapshot team-b/web-nightly -> VirtualMachineSnapshot team-b/web-nightly: observe snapshot nightly of VMID 101 (vmid form",
		"VirtualMachineSnapshotPolicy default/nightly -> VirtualMachineSnapshotPolicy default/nightly: suspended",
		"VirtualMachineSnapshot default/nightly-20261201 -> VirtualMachineSnapshot default/nightly-20261201: observe snapshot auto_20261201 of VMID 101",
		"StorageDownloadURL debian-iso -> StorageDownloadURL default/debian-iso: observe file local:iso/debian-12.iso",
		"CustomCertificate pve1-cert -> CustomCertificate default/pve1-cert: observe node pve1's custom certificate",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plan output lacks %q", want)
		}
	}
	if _, code = r.cli(t, "export", "--dir", r.dir); code != 0 {
		t.Fatalf("export exit code %d", code)
	}
	raw := readDir(t, r.dir)
	for _, want := range []string{`crossplane.io/external-name: "101"`, "- Observe", "suspend: true", "vmid: 101",
		"crossplane.io/external-name: local:iso/debian-12.iso", "crossplane.io/external-name: pve1", "crossplane.io/external-name: nightly"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the export lacks %q", want)
		}
	}
}

// applyRefusesOperator: kubemox's Deployment has a replica; apply stops
// before touching anything.
func (r *run) applyRefusesOperator(t *testing.T) {
	out, code := r.cli(t, "apply", "--dir", r.dir)
	if code != 2 || !strings.Contains(out, "Deployment kubemox-system/kubemox-controller-manager has 1 replicas") {
		t.Fatalf("apply with kubemox running: exit %d, want 2 and the Deployment named", code)
	}
	r.checkKubemoxIntact(t)
	// The human scales kubemox down, as docs/guides/migration-from-kubemox.md says.
	d := &appsv1.Deployment{}
	if err := r.kube.Get(context.Background(), client.ObjectKey{Namespace: operatorNS, Name: operatorName}, d); err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](0)
	if err := r.kube.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// checkKubemoxIntact: every kubemox CRD is there, and the VM web still has
// its finalizer.
func (r *run) checkKubemoxIntact(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for _, k := range kubemoxKinds {
		if err := r.kube.Get(ctx, client.ObjectKey{Name: k.plural + ".proxmox.alperen.cloud"}, &apiextensionsv1.CustomResourceDefinition{}); err != nil {
			t.Errorf("kubemox CRD %s: %v", k.plural, err)
		}
	}
	web := kubemoxObject("VirtualMachine", "", "web", nil)
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(web), web); err != nil || len(web.GetFinalizers()) != 1 {
		t.Errorf("kubemox VM web: err %v, finalizers %v; want it untouched", err, web.GetFinalizers())
	}
}

func (r *run) applyDryRun(t *testing.T) {
	out, code := r.cli(t, "apply", "--dir", r.dir, "--dry-run")
	if code != 0 {
		t.Fatalf("apply --dry-run exit code %d", code)
	}
	for _, want := range []string{"would PATCH VirtualMachine web: remove finalizers", "would DELETE CustomResourceDefinition virtualmachines.proxmox.alperen.cloud"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q", want)
		}
	}
	r.checkKubemoxIntact(t)
	if err := r.kube.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "kubemox-migrate"}, &corev1.ConfigMap{}); !kerrors.IsNotFound(err) {
		t.Errorf("the dry run wrote the progress ConfigMap (err %v)", err)
	}
}

// applyUntilPackage: apply removes the finalizers and deletes kubemox's
// CRDs (their objects go with them), then asks for the package.
func (r *run) applyUntilPackage(t *testing.T) {
	out, code := r.cli(t, "apply", "--dir", r.dir, "--wait", "3m")
	if code != 3 || !strings.Contains(out, "install the provider-proxmox package now") {
		t.Fatalf("apply without our package: exit %d, want 3 asking for the package", code)
	}
	for _, k := range kubemoxKinds {
		err := r.kube.Get(context.Background(), client.ObjectKey{Name: k.plural + ".proxmox.alperen.cloud"}, &apiextensionsv1.CustomResourceDefinition{})
		if !kerrors.IsNotFound(err) {
			t.Errorf("kubemox CRD %s still there (err %v)", k.plural, err)
		}
	}
}

// installProvider installs our package as a user does (safe-start: the
// managed kinds wait for activation) and runs the provider.
func (r *run) installProvider(t *testing.T) {
	xpkg, progress, err := r.xp.Run("package")
	t.Log(progress)
	if err != nil {
		t.Fatal(err)
	}
	if _, progress, err = r.xp.Run("install-provider", xpkg); err != nil {
		t.Fatalf("%v\n%s", err, progress)
	}
	if _, progress, err := r.xp.Run("start-provider", "--poll=20s", "--metrics-bind-address=0"); err != nil {
		t.Fatalf("%v\n%s", err, progress)
	}
	p := &unstructured.Unstructured{}
	p.SetAPIVersion("pkg.crossplane.io/v1")
	p.SetKind("Provider")
	p.SetName(providerName)
	eventually(t, setupWait, "Provider Healthy", func() (bool, string) {
		if err := r.kube.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			return false, err.Error()
		}
		return condition(p, "Healthy") == "True", fmt.Sprint(p.Object["status"])
	})
}

// applyKilledAndResumed SIGKILLs apply once it has begun applying the
// export, and runs it again: it continues from its progress ConfigMap.
func (r *run) applyKilledAndResumed(t *testing.T) {
	p := providertest.StartProcess(t, r.bin, r.kubeconfig, "apply", "--dir", r.dir, "--kubeconfig", r.kubeconfig, "--wait", "5m")
	// Polled tightly: applying the export takes well under a second.
	deadline := time.Now().Add(setupWait)
	for !strings.Contains(p.Logs(), "APPLY ProxmoxConnection pve") {
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("apply never began applying the export:\n%s", p.Tail())
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.Kill(t)
	t.Logf("SIGKILLed apply after it printed:\n%s", p.Logs())
	out, code := r.cli(t, "apply", "--dir", r.dir, "--wait", "5m")
	if code != 0 {
		t.Fatalf("apply after the kill: exit %d", code)
	}
	for _, notAgain := range []string{"== step finalizers-removed", "== step kubemox-crds-deleted"} {
		if strings.Contains(out, notAgain) {
			t.Errorf("the resumed apply ran %q again", notAgain)
		}
	}
	if !strings.Contains(out, "kubemox-migrate apply --dir "+r.dir+" --manage") {
		t.Errorf("apply did not print the command switching to full management")
	}
}

// ourObjects are the exported objects of our group, read back.
func (r *run) ourObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := migrate.ReadExport(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetAPIVersion() == "proxmox.alperen.cloud/v1alpha1" {
			out = append(out, o)
		}
	}
	return out
}

func (r *run) checkObserving(t *testing.T) { r.checkObservingWith(t, r.xp.Config) }

// checkObservingWith checks, with a client of cfg, that every exported
// resource is Ready in Observe mode and that Proxmox VE saw only reads.
func (r *run) checkObservingWith(t *testing.T, cfg *rest.Config) {
	ctx := context.Background()
	// A client with a fresh REST mapping: the kinds changed scope.
	kube, err := providertest.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.kube = kube
	for _, o := range r.ourObjects(t) {
		if err := r.kube.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
			continue
		}
		policies, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "managementPolicies")
		switch o.GetKind() {
		case "VirtualMachineSnapshotPolicy":
			if s, _, _ := unstructured.NestedBool(o.Object, "spec", "suspend"); !s {
				t.Errorf("policy %s is not suspended", o.GetName())
			}
		case "ProxmoxConnection":
			if condition(o, "Ready") != "True" {
				t.Errorf("connection %s not Ready", o.GetName())
			}
		default:
			if condition(o, "Ready") != "True" || fmt.Sprint(policies) != "[Observe]" {
				t.Errorf("%s %s/%s: Ready %s, policies %v; want Ready in Observe mode", o.GetKind(), o.GetNamespace(), o.GetName(), condition(o, "Ready"), policies)
			}
		}
	}
	for _, k := range kubemoxKinds {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.kube.Get(ctx, client.ObjectKey{Name: k.plural + ".proxmox.alperen.cloud"}, crd); err != nil {
			t.Errorf("CRD %s: %v", k.plural, err)
			continue
		}
		ours := len(crd.OwnerReferences) > 0 || crd.Annotations[migrate.AnnotationCRDSource] != ""
		if !ours || (k.kind != "ProxmoxConnection" && crd.Spec.Scope != apiextensionsv1.NamespaceScoped) {
			t.Errorf("CRD %s is not ours (scope %s, owners %v)", crd.Name, crd.Spec.Scope, crd.OwnerReferences)
		}
	}
	r.checkNoKubemoxObjectLeft(t)
	r.checkGuestsUnchanged(t)
	r.checkOnlyReads(t)
}

// checkNoKubemoxObjectLeft: every object of our group carries the export's
// source annotation, and none a kubemox finalizer.
func (r *run) checkNoKubemoxObjectLeft(t *testing.T) {
	for _, k := range kubemoxKinds {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("proxmox.alperen.cloud/v1alpha1")
		list.SetKind(k.kind + "List")
		if err := r.kube.List(context.Background(), list); err != nil {
			t.Errorf("list %s: %v", k.kind, err)
			continue
		}
		for _, o := range list.Items {
			if o.GetAnnotations()[migrate.AnnotationSource] == "" {
				t.Errorf("%s %s/%s was not made from the export", k.kind, o.GetNamespace(), o.GetName())
			}
			for _, f := range o.GetFinalizers() {
				if f == k.finalizer {
					t.Errorf("%s %s/%s still has kubemox's finalizer", k.kind, o.GetNamespace(), o.GetName())
				}
			}
		}
	}
}

// guestStates are the seeded guests' configs and power states.
func (r *run) guestStates() map[int]string {
	out := map[int]string{}
	for _, g := range r.sim.Guests() {
		out[g.VMID] = fmt.Sprintf("%s %v snapshots %v", g.Status, g.Config, g.Snapshots)
	}
	return out
}

func (r *run) checkGuestsUnchanged(t *testing.T) {
	t.Helper()
	now := r.guestStates()
	if len(now) != len(r.before) {
		t.Errorf("%d guests now, %d before the migration", len(now), len(r.before))
	}
	for vmid, was := range r.before {
		if now[vmid] != was {
			t.Errorf("guest %d changed:\nbefore %s\nafter  %s", vmid, was, now[vmid])
		}
	}
}

// checkOnlyReads: since the counters were reset, Proxmox VE saw reads and
// logins only.
func (r *run) checkOnlyReads(t *testing.T) {
	t.Helper()
	reads := 0
	for _, req := range r.sim.RequestLog() {
		if req.Method == http.MethodGet || (req.Method == http.MethodPost && req.Path == "/access/ticket") {
			reads++
			continue
		}
		t.Errorf("Proxmox VE got a write during the migration: %s %s", req.Method, req.Path)
	}
	t.Logf("Proxmox VE saw %d reads and logins during the migration, and no write; counters %v", reads, r.sim.Counters().ByEndpoint)
}

func (r *run) secondApplyNoop(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{}
	if err := r.kube.Get(ctx, client.ObjectKey{Namespace: "default", Name: "kubemox-migrate"}, cm); err != nil {
		t.Fatal(err)
	}
	out, code := r.cli(t, "apply", "--dir", r.dir)
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Fatalf("second apply: exit %d, want 0 and nothing to do", code)
	}
	after := &corev1.ConfigMap{}
	if err := r.kube.Get(ctx, client.ObjectKeyFromObject(cm), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != cm.ResourceVersion {
		t.Errorf("the second apply wrote its progress again")
	}
	r.checkGuestsUnchanged(t)
	r.checkOnlyReads(t)
}

// manage switches to full management: each guest whose spec matched gets
// exactly one write, the marker in its description, and Proxmox VE
// nothing else.
func (r *run) manage(t *testing.T) {
	r.sim.ResetCounters()
	configs := map[int]map[string]string{}
	for _, g := range r.sim.Guests() {
		configs[g.VMID] = g.Config
	}
	if _, code := r.cli(t, "apply", "--dir", r.dir, "--manage"); code != 0 {
		t.Fatalf("apply --manage: exit %d", code)
	}
	for _, g := range r.guests {
		if !g.matches {
			continue
		}
		marker := "crossplane: default/" + g.obj + " uid="
		eventually(t, setupWait, fmt.Sprintf("guest %d marked %q", g.vmid, marker), func() (bool, string) {
			v, _ := r.sim.Guest(g.vmid)
			return strings.Contains(v.Config["description"], marker), fmt.Sprint(v.Config)
		})
	}
	// Two polls more: anything else the provider wanted to write, it would
	// have by now.
	time.Sleep(45 * time.Second)
	writes := map[int][]string{}
	for _, req := range r.sim.RequestLog() {
		if req.Method == http.MethodGet || (req.Method == http.MethodPost && req.Path == "/access/ticket") {
			continue
		}
		vmid := vmidIn(req.Path)
		if vmid == 0 {
			t.Errorf("full management wrote outside any guest: %s %s", req.Method, req.Path)
			continue
		}
		writes[vmid] = append(writes[vmid], req.Method+" "+req.Path)
	}
	for _, g := range r.guests {
		w := writes[g.vmid]
		if g.matches && (len(w) != 1 || !strings.HasSuffix(w[0], "/config")) {
			t.Errorf("guest %d (spec matched): writes %v, want exactly one config write (the marker)", g.vmid, w)
		}
		if v, _ := r.sim.Guest(g.vmid); g.matches && !sameBut(configs[g.vmid], v.Config, "description") {
			t.Errorf("guest %d (spec matched): config changed beyond its description:\nbefore %v\nafter  %v", g.vmid, configs[g.vmid], v.Config)
		}
		if !g.matches {
			t.Logf("guest %d (spec differs from the guest, or not migrated): writes %v", g.vmid, w)
		}
	}
	out, code := r.cli(t, "apply", "--dir", r.dir, "--manage")
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("apply --manage again: exit %d, want nothing to do", code)
	}
}
