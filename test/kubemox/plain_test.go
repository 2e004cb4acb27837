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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubemox/provider-proxmox/internal/migrate"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// Without Crossplane, apply installs our CRDs itself once kubemox's are
// gone, and the provider is started after that (never beside kubemox's
// CRDs, whose kinds it would otherwise take for its own).
func TestMigrateFromKubemoxWithoutCrossplane(t *testing.T) {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		t.Skip(testenv.SkipEnvVar + "=1: integration tests against a real API server are disabled")
	}
	ctrllog.SetLogger(logr.Discard())
	tmp := t.TempDir()
	env, err := testenv.Start(filepath.Join(tmp, "no-crds"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	r := &run{t: t, dir: filepath.Join(tmp, "export"), password: "pw-" + rand.Text()[:8],
		kubeconfig: filepath.Join(tmp, "kubeconfig"), bin: filepath.Join(tmp, "kubemox-migrate")}
	if err := providertest.WriteKubeconfig(env.Config, r.kubeconfig); err != nil {
		t.Fatal(err)
	}
	if r.kube, err = providertest.NewClient(env.Config); err != nil {
		t.Fatal(err)
	}
	buildCLI(t, r.bin)
	provider, err := providertest.BuildProvider(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if r.sim, err = pvesim.Start(pvesim.Options{Nodes: []string{"pve1"}, LogRequests: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.sim.Close)
	r.sim.AddUser(rootUser, r.password)
	cfg := map[string]string{"name": "web", "cores": "2", "sockets": "1", "memory": "2048", "net0": "virtio,bridge=vmbr0"}
	if err := r.sim.AddGuest(pvesim.GuestSeed{Node: "pve1", VMID: 101, Config: cfg, Running: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r.installKubemoxCRDs()
	conn := map[string]any{"name": "pve"}
	if err := createAll(ctx, r.kube,
		kubemoxObject("ProxmoxConnection", "", "pve", map[string]any{
			"endpoint": r.sim.URL(), "username": rootUser, "password": r.password, "insecureSkipVerify": true}),
		kubemoxObject("VirtualMachine", "", "web", map[string]any{"name": "web", "nodeName": "pve1", "connectionRef": conn,
			"template": map[string]any{"name": "debian-12", "cores": int64(2), "socket": int64(1), "memory": int64(2048)}}),
	); err != nil {
		t.Fatal(err)
	}
	r.before = r.guestStates()
	r.sim.ResetCounters()
	if _, code := r.cli(t, "export", "--dir", r.dir, "--namespace", "vms"); code != 0 {
		t.Fatalf("export exit code %d", code)
	}
	apply := providertest.StartProcess(t, r.bin, r.kubeconfig, "apply", "--dir", r.dir, "--crds", filepath.Join("..", "..", "package", "crds"),
		"--kubeconfig", r.kubeconfig, "--wait", "3m")
	eventually(t, 2*time.Minute, "apply installing our CRDs", func() (bool, string) {
		return strings.Contains(apply.Logs(), "start the provider now") || apply.Exited(), apply.Tail()
	})
	providertest.StartProcess(t, provider, r.kubeconfig, "--poll=5s", "--metrics-bind-address=0", "--health-probe-bind-address=")
	eventually(t, 3*time.Minute, "apply done", func() (bool, string) { return apply.Exited(), apply.Tail() })
	t.Logf("apply:\n%s", apply.Logs())
	if apply.ExitCode() != 0 {
		t.Fatalf("apply exit code %d", apply.ExitCode())
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := r.kube.Get(ctx, client.ObjectKey{Name: "virtualmachines.proxmox.alperen.cloud"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Scope != apiextensionsv1.NamespaceScoped || crd.Annotations[migrate.AnnotationCRDSource] == "" {
		t.Errorf("the VirtualMachine CRD is not ours: scope %s, annotations %v", crd.Spec.Scope, crd.Annotations)
	}
	r.checkObservingWith(t, env.Config)
}
