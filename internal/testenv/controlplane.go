package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// controlPlaneBinaries are what cluster/local/controlplane.sh runs.
var controlPlaneBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kubectl"}

// The script waits up to 90s for the API server; leave it room on a loaded machine.
const controlPlaneTimeout = 3 * time.Minute

// StartControlPlane runs cluster/local/controlplane.sh in a private state directory: a real
// API server plus the garbage-collector and namespace controllers, which envtest lacks. It
// installs no CRDs. Stop tears it down.
func StartControlPlane() (*Env, error) {
	s, out, err := startScript("controlplane.sh", "CONTROLPLANE_DIR", "provider-proxmox-cp-", controlPlaneBinaries)
	if err != nil {
		return nil, err
	}
	return s.envFor(out.lastLine())
}

// StartControlPlaneWithCRDs is StartControlPlane with the repository's
// package/crds installed and established.
func StartControlPlaneWithCRDs() (*Env, error) {
	env, err := StartControlPlane()
	if err != nil {
		return nil, err
	}
	dir, err := DefaultCRDDir()
	if err == nil {
		_, err = envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{dir}, ErrorIfPathMissing: true})
	}
	if err != nil {
		_ = env.Stop()
		return nil, errors.Wrap(err, "cannot install the CRDs")
	}
	return env, nil
}

// A localScript is one of cluster/local's scripts with its own state directory.
type localScript struct {
	path  string
	env   []string
	state string
}

// startScript checks the binaries, then runs `name up` with its state in a new temporary
// directory named by stateVar.
func startScript(name, stateVar, statePrefix string, binaries []string) (*localScript, scriptOutput, error) {
	assets, err := BinaryAssetsDir()
	if err != nil {
		return nil, scriptOutput{}, err
	}
	if err := checkBinaries(assets, binaries); err != nil {
		return nil, scriptOutput{}, err
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, scriptOutput{}, err
	}
	state, err := os.MkdirTemp("", statePrefix)
	if err != nil {
		return nil, scriptOutput{}, errors.Wrap(err, "cannot create a state directory")
	}
	s := &localScript{
		path: filepath.Join(root, "cluster", "local", name),
		// OWNER_PID: the script tears the instance down once this process is gone, even
		// after a test timeout's panic skipped every cleanup.
		env:   append(os.Environ(), "OWNER_PID="+strconv.Itoa(os.Getpid()), stateVar+"="+state, "CONTROLPLANE_BIN="+assets, "PROVIDER_PROXMOX_CACHE="+cacheDir(assets)),
		state: state,
	}
	out, err := s.run(controlPlaneTimeout, "up")
	if err != nil {
		_, _ = s.run(controlPlaneTimeout, "down")
		return nil, out, err
	}
	return s, out, nil
}

// cacheDir is the tool cache holding the binaries' dir (build-tools.sh's layout: bin/ beside
// crossplane-crds/ and the function package).
func cacheDir(assets string) string {
	if dir := os.Getenv("PROVIDER_PROXMOX_CACHE"); dir != "" {
		return dir
	}
	return filepath.Dir(assets)
}

// envFor is an Env for the kubeconfig the script printed; Stop runs `down`.
func (s *localScript) envFor(kubeconfig string) (*Env, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		_, _ = s.run(controlPlaneTimeout, "down")
		return nil, errors.Wrapf(err, "cannot load the kubeconfig %q printed by %s", kubeconfig, s.path)
	}
	stop := func() error {
		_, err := s.run(controlPlaneTimeout, "down")
		return err
	}
	return &Env{Config: cfg, stop: stop}, nil
}

// scriptOutput is what a script printed: results on stdout, progress on stderr.
type scriptOutput struct {
	Stdout, Stderr string
}

func (o scriptOutput) lastLine() string {
	lines := strings.Split(strings.TrimSpace(o.Stdout), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func (s *localScript) run(timeout time.Duration, args ...string) (scriptOutput, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, s.path, args...)
	cmd.Env = s.env
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	out := scriptOutput{Stdout: stdout.String(), Stderr: stderr.String()}
	if err != nil {
		return out, errors.Wrapf(err, "%s %s failed: %s", s.path, strings.Join(args, " "), strings.TrimSpace(out.Stderr))
	}
	return out, nil
}
