package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/client-go/tools/clientcmd"
)

// controlPlaneBinaries are what cluster/local/controlplane.sh runs.
var controlPlaneBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// The script waits up to 90s for the API server; leave it room on a loaded machine.
const controlPlaneTimeout = 3 * time.Minute

// StartControlPlane runs cluster/local/controlplane.sh in a private state directory: a real
// API server plus the garbage-collector and namespace controllers, which envtest lacks. It
// installs no CRDs. Stop tears it down.
func StartControlPlane() (*Env, error) {
	assets, err := BinaryAssetsDir()
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(assets, controlPlaneBinaries); err != nil {
		return nil, err
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	state, err := os.MkdirTemp("", "provider-proxmox-cp-")
	if err != nil {
		return nil, errors.Wrap(err, "cannot create the control plane's state directory")
	}
	script := controlPlaneScript{
		path: filepath.Join(root, "cluster", "local", "controlplane.sh"),
		env:  append(os.Environ(), "CONTROLPLANE_DIR="+state, "CONTROLPLANE_BIN="+assets),
	}
	out, err := script.run("up")
	if err != nil {
		_, _ = script.run("down")
		return nil, err
	}
	kubeconfig := lastLine(out)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		_, _ = script.run("down")
		return nil, errors.Wrapf(err, "cannot load the kubeconfig %q printed by %s", kubeconfig, script.path)
	}
	stop := func() error {
		_, err := script.run("down")
		return err
	}
	return &Env{Config: cfg, stop: stop}, nil
}

type controlPlaneScript struct {
	path string
	env  []string
}

func (s controlPlaneScript) run(command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), controlPlaneTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.path, command)
	cmd.Env = s.env
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", errors.Wrapf(err, "%s %s failed: %s", s.path, command, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
