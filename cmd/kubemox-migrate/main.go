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

// Command kubemox-migrate moves a cluster from kubemox v0.6.6 to
// provider-proxmox without touching a guest:
//
//	kubemox-migrate plan   [--namespace NS] [--mapping FILE]
//	kubemox-migrate export --dir DIR [--keep-inline]
//	kubemox-migrate apply  --dir DIR [--operator NS/NAME] [--manage] [--dry-run]
//
// Exit status: 0 done (plan: clean); 1 error; 2 the plan needs a human or
// kubemox's operator still runs; 3 kubemox is gone and our package must be
// installed before apply continues.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/internal/migrate"
)

const (
	exitError          = 1
	exitNeedsHuman     = 2
	exitInstallPackage = 3
)

const usage = `usage: kubemox-migrate plan|export|apply [flags]
  plan    print what happens to every kubemox object; exit 2 when something needs a human
  export  write provider-proxmox manifests (Observe mode) and Secrets into --dir
  apply   stop-checked, finalizer-free swap of kubemox's CRDs for ours, then apply --dir`

// flags are every subcommand's flags; each uses those it needs.
type flags struct {
	kubeconfig, namespace, mapping, secretNamespace, dir string
	operator, crds, stateNamespace                       string
	keepInline, manage, dryRun                           bool
	wait                                                 time.Duration
}

func parse(cmd string, args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("kubemox-migrate "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&f.namespace, "namespace", "default", "namespace the cluster-scoped kubemox objects land in")
	fs.StringVar(&f.mapping, "mapping", "", "YAML file mapping kinds or labels to namespaces (default, kinds, labels)")
	fs.StringVar(&f.secretNamespace, "secret-namespace", "", "namespace of the Secrets holding ProxmoxConnections' inline credentials (default: --namespace)")
	fs.BoolVar(&f.keepInline, "keep-inline", false, "leave inline credentials in the specs instead of moving them into Secrets")
	fs.StringVar(&f.dir, "dir", "", "export directory (export writes it, apply reads it)")
	fs.StringVar(&f.operator, "operator", "kubemox-system/kubemox-controller-manager", "kubemox's operator Deployment, namespace/name; apply refuses while it has replicas")
	fs.StringVar(&f.crds, "crds", "package/crds", "provider-proxmox's CRDs, applied by apply when Crossplane is not installed")
	fs.StringVar(&f.stateNamespace, "state-namespace", "default", "namespace of the ConfigMap recording apply's progress")
	fs.BoolVar(&f.manage, "manage", false, "apply: finally switch every resource to full management (managementPolicies [\"*\"])")
	fs.BoolVar(&f.dryRun, "dry-run", false, "apply: print every API call it would make, make none")
	fs.DurationVar(&f.wait, "wait", 10*time.Minute, "apply: bound of each wait (CRDs deleted, kinds served, resources Ready)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.secretNamespace == "" {
		f.secretNamespace = f.namespace
	}
	if (cmd == "export" || cmd == "apply") && f.dir == "" {
		return nil, errors.New("--dir is required")
	}
	return f, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitError
	}
	f, err := parse(args[0], args[1:], stderr)
	if err != nil {
		fmt.Fprintln(stderr, "kubemox-migrate:", err)
		return exitError
	}
	newClient := func() (client.Client, error) { return kubeClient(f.kubeconfig) }
	switch args[0] {
	case "plan", "export":
		err = planOrExport(ctx, args[0], f, newClient, stdout)
	case "apply":
		err = migrate.Apply(ctx, newClient, migrate.ApplyOptions{
			Dir: f.dir, Operator: f.operator, CRDDir: f.crds, StateNamespace: f.stateNamespace,
			Manage: f.manage, DryRun: f.dryRun, Wait: f.wait, Out: stdout,
		})
	default:
		fmt.Fprintln(stderr, usage)
		return exitError
	}
	return exitCode(err, stderr)
}

func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "kubemox-migrate:", err)
	switch {
	case errors.Is(err, migrate.ErrNotClean), errors.Is(err, migrate.ErrOperatorRunning):
		return exitNeedsHuman
	case errors.Is(err, migrate.ErrInstallPackage):
		return exitInstallPackage
	}
	return exitError
}

// planOrExport prints the plan and, for export, writes the manifests.
func planOrExport(ctx context.Context, cmd string, f *flags, newClient func() (client.Client, error), stdout io.Writer) error {
	mapping, err := migrate.LoadMapping(f.mapping, f.namespace)
	if err != nil {
		return err
	}
	kube, err := newClient()
	if err != nil {
		return err
	}
	plan, err := migrate.BuildPlan(ctx, kube, migrate.Options{Mapping: mapping, SecretNamespace: f.secretNamespace, KeepInline: f.keepInline})
	if err != nil {
		return err
	}
	plan.Print(stdout)
	if cmd == "plan" {
		if !plan.Clean() {
			return migrate.ErrNotClean
		}
		return nil
	}
	files, err := migrate.Export(plan, f.dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d files to %s\n", len(files), f.dir)
	return nil
}

// kubeClient is an uncached client with a fresh REST mapping.
func kubeClient(kubeconfig string) (client.Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("cannot load kubeconfig: %w", err)
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("cannot create a Kubernetes client: %w", err)
	}
	return c, nil
}
