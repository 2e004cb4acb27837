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

package crossplane

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// setupWait bounds the package manager's and the RBAC manager's work.
	setupWait = 2 * time.Minute
	// flowWait bounds one change travelling claim -> XR -> VirtualMachine ->
	// simulator and back; generous for a busy 2-core machine, and garbage
	// collection alone takes 10-20 s here.
	flowWait = 4 * time.Minute

	functionName = "function-patch-and-transform"
	crossplaneNS = "crossplane-system"
	providerName = "provider-proxmox"
)

var (
	providerGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Provider"}
	functionGVK = schema.GroupVersionKind{Group: "pkg.crossplane.io", Version: "v1", Kind: "Function"}
	crdGVK      = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	mrdGVK      = schema.GroupVersionKind{Group: "apiextensions.crossplane.io", Version: "v1alpha1", Kind: "ManagedResourceDefinition"}
)

// ourCRDs are every kind the package ships; all must be served after the
// install and the activation policy.
var ourCRDs = []string{
	"proxmoxconnections.proxmox.alperen.cloud",
	"providerconfigusages.proxmox.alperen.cloud",
	"virtualmachines.proxmox.alperen.cloud",
	"containers.proxmox.alperen.cloud",
	"customcertificates.proxmox.alperen.cloud",
	"storagedownloadurls.proxmox.alperen.cloud",
	"virtualmachinetemplates.proxmox.alperen.cloud",
	"virtualmachinesnapshots.proxmox.alperen.cloud",
	"virtualmachinesnapshotpolicies.proxmox.alperen.cloud",
	"virtualmachinesets.proxmox.alperen.cloud",
	"guestimports.proxmox.alperen.cloud",
}

// suite is the stack one run builds, shared by its phases.
type suite struct {
	t         *testing.T
	durations []string

	xp       *testenv.Crossplane
	kube     client.Client
	sim      *pvesim.Server
	revision string
	// providerKubeconfig authenticates as the revision's ServiceAccount.
	providerKubeconfig string
	// clusterID is the identity given to the provider with --cluster-id.
	clusterID string
}

// forbiddenLine matches the API server's refusal as the provider logs it.
var forbiddenLine = regexp.MustCompile(`(?i)is forbidden|forbidden:`)

func TestProviderOnRealCrossplane(t *testing.T) {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		t.Skip(testenv.SkipEnvVar + "=1: integration tests against a real API server are disabled")
	}
	// The test's client logs the API server's warnings through
	// controller-runtime's logger; nothing here needs them.
	ctrllog.SetLogger(logr.Discard())
	s := &suite{t: t}
	t.Cleanup(func() {
		t.Logf("phase durations:\n%s", strings.Join(s.durations, "\n"))
	})

	s.phase("start the control plane, Crossplane, its RBAC manager and a registry", s.startCrossplane)
	s.phase("make xpkg; crossplane xpkg push and install the provider", s.installProvider)
	s.phase("the provider's ServiceAccount has only Crossplane's grant", s.checkProviderIdentity)
	s.phase("start the simulator, and the provider while VirtualMachine is not served", s.startProvider)
	s.phase("activate the managed kinds with examples/activation", s.activate)
	s.phase("install function-patch-and-transform over mutual TLS", s.installFunction)

	f := &flow{suite: s}
	s.phase("1 a ProxmoxConnection reading a token from a Secret is Ready", f.connectionReady)
	s.phase("2 a claim in a team namespace is Ready with its VM and Secret", f.claimReady)
	s.phase("3 the claim's size changes and the VM follows", f.claimResized)
	s.phase("4 the token rotates; the old one is never used again", f.tokenRotated)
	s.phase("5 a namespaced XR is Ready with its VM and composed Secret", f.namespacedXRReady)
	s.phase("6 deleting the claim and the XR destroys both VMs", f.deleted)
	s.phase("the provider needed no permission Crossplane does not grant", s.checkNoForbidden)
	s.phase("the provider marks guests with the cluster identity it was given", s.checkClusterIdentity)
}

// checkClusterIdentity shows the provider logged the identity --cluster-id
// gave it (the one its markers carry).
func (s *suite) checkClusterIdentity(t *testing.T) {
	logs, err := os.ReadFile(s.xp.LogPath("provider"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(logs), "\n") {
		if strings.Contains(line, "Management cluster identity") && strings.Contains(line, s.clusterID) {
			return
		}
	}
	t.Fatalf("the provider did not log the management cluster identity %s it was given", s.clusterID)
}

func (s *suite) startCrossplane(t *testing.T) {
	xp, err := testenv.StartCrossplane()
	if err != nil {
		t.Fatal(err)
	}
	s.xp = xp
	s.t.Cleanup(func() {
		if s.t.Failed() {
			s.t.Log(s.logTails())
		}
		start := time.Now()
		if err := xp.Stop(); err != nil {
			s.t.Errorf("stop Crossplane: %v", err)
		}
		s.t.Logf("teardown took %s", time.Since(start).Round(100*time.Millisecond))
	})
	t.Logf("crossplane.sh up:\n%s", xp.Progress)
	if s.kube, err = providertest.NewClient(xp.Config); err != nil {
		t.Fatal(err)
	}
}

// installProvider builds our package, pushes it to the local registry and
// installs it with `crossplane xpkg install`; the script stands in for the
// Deployment runtime so the RBAC manager binds the revision's ClusterRole.
func (s *suite) installProvider(t *testing.T) {
	xpkg, progress, err := s.xp.Run("package")
	t.Log(progress)
	if err != nil {
		t.Fatal(err)
	}
	s.providerKubeconfig, progress, err = s.xp.Run("install-provider", xpkg)
	t.Log(progress)
	if err != nil {
		t.Fatal(err)
	}
	p := object(providerGVK, "", providerName)
	s.waitCondition(t, setupWait, p, "Installed")
	s.revision, _, _ = unstructured.NestedString(p.Object, "status", "currentRevision")
	if s.revision == "" {
		t.Fatalf("Provider %s has no current revision: %s", providerName, conditionsOf(p))
	}
}

// activate applies the activation policy a user applies
// (examples/activation); the package manager then creates the managed kinds'
// CRDs from their ManagedResourceDefinitions, and the running provider
// starts their controllers (the VMs' readiness in the next phases shows it
// did).
func (s *suite) activate(t *testing.T) {
	s.applyFile(t, filepath.Join("..", "..", "examples", "activation", "policy.yaml"))
	for _, name := range ourCRDs {
		s.waitCondition(t, setupWait, object(crdGVK, "", name), "Established")
	}
	mrds := &unstructured.UnstructuredList{}
	mrds.SetGroupVersionKind(mrdGVK.GroupVersion().WithKind(mrdGVK.Kind + "List"))
	if err := s.kube.List(context.Background(), mrds); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(mrds.Items))
	for _, m := range mrds.Items {
		names = append(names, m.GetName())
	}
	t.Logf("the package manager made these ManagedResourceDefinitions: %v; the other kinds it installed as CRDs", names)
}

// checkProviderIdentity shows the kubeconfig the provider gets is the
// revision's ServiceAccount, bound by Crossplane's RBAC manager to the
// revision's system ClusterRole and to nothing else, and that it is not
// cluster admin.
func (s *suite) checkProviderIdentity(t *testing.T) {
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", s.providerKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("who is the provider: %v", err)
	}
	sa := "system:serviceaccount:" + crossplaneNS + ":" + s.revision
	if got := review.Status.UserInfo.Username; got != sa {
		t.Fatalf("the provider authenticates as %q, want the revision's ServiceAccount %q", got, sa)
	}
	if _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); !kerrors.IsForbidden(err) {
		t.Fatalf("the provider's ServiceAccount may list namespaces (err %v): it has more than Crossplane's grant", err)
	}
	// Nor get kube-system, whose UID would identify the cluster in markers:
	// Crossplane v2 has no permission requests, so a packaged provider gets
	// its identity from --cluster-id (a DeploymentRuntimeConfig's args).
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); !kerrors.IsForbidden(err) {
		t.Fatalf("the provider's ServiceAccount may get kube-system (err %v): it has more than Crossplane's grant", err)
	}

	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := s.kube.List(ctx, bindings); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, b := range bindings.Items {
		for _, subj := range b.Subjects {
			if subj.Kind == rbacv1.ServiceAccountKind && subj.Namespace == crossplaneNS && subj.Name == s.revision {
				roles = append(roles, b.RoleRef.Name)
			}
		}
	}
	want := "crossplane:provider:" + s.revision + ":system"
	if len(roles) != 1 || roles[0] != want {
		t.Fatalf("the ServiceAccount is bound to %v, want only the RBAC manager's %s", roles, want)
	}
	role := &rbacv1.ClusterRole{}
	if err := s.kube.Get(ctx, client.ObjectKey{Name: want}, role); err != nil {
		t.Fatal(err)
	}
	rules := make([]string, 0, len(role.Rules))
	for _, r := range role.Rules {
		rules = append(rules, fmt.Sprintf("  groups %q resources %v verbs %v", r.APIGroups, r.Resources, r.Verbs))
	}
	t.Logf("the provider runs as %s with ClusterRole %s:\n%s", sa, want, strings.Join(rules, "\n"))
}

func (s *suite) installFunction(t *testing.T) {
	_, progress, err := s.xp.Run("install-function")
	t.Log(progress)
	if err != nil {
		t.Fatal(err)
	}
	s.waitCondition(t, setupWait, object(functionGVK, "", functionName), "Healthy")
}

// startProvider starts the simulator in this process and the provider
// binary make xpkg put in the package, with the ServiceAccount's kubeconfig,
// before the activation policy:
// under safe-start the package manager serves no inactive kind, and the
// provider must start and stay healthy anyway.
func (s *suite) startProvider(t *testing.T) {
	vmCRD := object(crdGVK, "", "virtualmachines.proxmox.alperen.cloud")
	if err := s.get(vmCRD); !kerrors.IsNotFound(err) {
		t.Fatalf("the VirtualMachine CRD exists before any activation policy (err %v): safe-start did not hold it back", err)
	}
	// The package ships ProxmoxConnection (and its usage kind) active.
	for _, name := range []string{"proxmoxconnections.proxmox.alperen.cloud", "providerconfigusages.proxmox.alperen.cloud"} {
		s.waitCondition(t, setupWait, object(crdGVK, "", name), "Established")
	}
	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{xrNode, claimNode}})
	if err != nil {
		t.Fatal(err)
	}
	s.sim = sim
	s.t.Cleanup(sim.Close)
	sim.AddToken(tokenID, firstSecret)
	// The templates the examples clone.
	for _, tpl := range []struct {
		node, name string
		vmid       int
	}{{claimNode, "debian-12-cloudinit", 9000}, {xrNode, "ubuntu-24.04-cloudinit", 9001}} {
		if err := sim.AddTemplate(tpl.node, tpl.vmid, tpl.name); err != nil {
			t.Fatal(err)
		}
	}
	// What a DeploymentRuntimeConfig's args give the packaged provider: the
	// management cluster's identity, here the kube-system UID an operator
	// reads with kubectl.
	ns := &corev1.Namespace{}
	if err := s.kube.Get(context.Background(), client.ObjectKey{Name: "kube-system"}, ns); err != nil {
		t.Fatal(err)
	}
	s.clusterID = string(ns.UID)
	if _, progress, err := s.xp.Run("start-provider", "--debug", "--poll=20s", "--metrics-bind-address=0", "--cluster-id="+s.clusterID); err != nil {
		t.Fatalf("%v\n%s", err, progress)
	}
	// Healthy needs the runtime's word, which the script gives once the
	// provider's /readyz answers.
	s.waitCondition(t, setupWait, object(providerGVK, "", providerName), "Healthy")
}

// checkNoForbidden fails listing every request the API server refused the
// provider: a permission the provider needs beyond Crossplane's grant.
func (s *suite) checkNoForbidden(t *testing.T) {
	f, err := os.Open(s.xp.LogPath("provider"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var refused []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if forbiddenLine.MatchString(sc.Text()) {
			refused = append(refused, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(refused) > 0 {
		t.Errorf("the API server refused the provider %d times; it needs more than Crossplane grants its revision:\n%s",
			len(refused), strings.Join(refused, "\n"))
	}
}
