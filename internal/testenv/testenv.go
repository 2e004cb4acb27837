// Package testenv runs a real kube-apiserver and etcd (controller-runtime's envtest) for
// integration tests, with the binaries built by cluster/local/build-tools.sh (`make tools`).
//
// An integration package shares one API server between its tests:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
//
//	func TestSomething(t *testing.T) {
//		env.Require(t) // skips when SKIP_INTEGRATION=1
//		c, err := client.New(env.Config, client.Options{})
//		...
//	}
//
// Missing binaries fail the package with a message saying to run `make tools`; setting
// SKIP_INTEGRATION=1 skips the integration tests instead. envtest runs no controllers (no
// garbage collector, no namespace deletion): tests relying on those use StartControlPlane.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// SkipEnvVar set to 1 skips integration tests instead of failing when the binaries are missing.
	SkipEnvVar = "SKIP_INTEGRATION"

	skipReason = SkipEnvVar + "=1: integration tests against a real API server are disabled"

	// A 2-core machine busy compiling other packages can take well over envtest's default 20s.
	startTimeout = 120 * time.Second
	stopTimeout  = 30 * time.Second
)

// envtestBinaries are what envtest starts; kubectl is optional for it.
var envtestBinaries = []string{"etcd", "kube-apiserver"}

// Env is a running API server with the requested CRDs installed.
type Env struct {
	// Config reaches the API server as a cluster admin.
	Config *rest.Config

	stop func() error
}

// Start runs etcd and kube-apiserver and installs the CRDs found in crdDirs; with no
// crdDirs it installs the repository's package/crds. A missing or empty CRD directory is
// not an error (the CRDs may not be generated yet).
func Start(crdDirs ...string) (*Env, error) {
	assets, err := BinaryAssetsDir()
	if err != nil {
		return nil, err
	}
	if err := checkBinaries(assets, envtestBinaries); err != nil {
		return nil, err
	}
	if len(crdDirs) == 0 {
		dir, err := DefaultCRDDir()
		if err != nil {
			return nil, err
		}
		crdDirs = []string{dir}
	}
	te := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        crdDirs,
		ErrorIfCRDPathMissing:    false,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	cfg, err := te.Start()
	if err != nil {
		_ = te.Stop() // etcd may be up while the API server failed
		return nil, errors.Wrapf(err, "cannot start kube-apiserver and etcd from %s", assets)
	}
	stop := func() error { return errors.Wrap(te.Stop(), "cannot stop kube-apiserver and etcd") }
	return &Env{Config: cfg, stop: stop}, nil
}

// Stop shuts the control plane down and removes its data.
func (e *Env) Stop() error {
	if e == nil || e.stop == nil {
		return nil
	}
	return e.stop()
}

// Require skips t when integration tests are disabled (Main leaves the Env nil then).
func (e *Env) Require(t testing.TB) {
	t.Helper()
	if e == nil {
		t.Skip(skipReason)
	}
}

// Main is a TestMain body: it starts one Env for the package (stored in *env), runs the
// tests and stops the Env, returning the exit code. With SKIP_INTEGRATION=1 it runs the
// tests with *env nil, so those calling env.Require skip and unit tests still run.
func Main(m *testing.M, env **Env, crdDirs ...string) int {
	if os.Getenv(SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, "testenv: "+skipReason)
		*env = nil
		return m.Run()
	}
	started, err := Start(crdDirs...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
		return 1
	}
	*env = started
	code := m.Run()
	if err := started.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testenv: %v\n", err)
	}
	return code
}

// BinaryAssetsDir is where the control-plane binaries are: $KUBEBUILDER_ASSETS when set,
// otherwise the cache build-tools.sh fills.
func BinaryAssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cache, err := toolCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "bin"), nil
}

// Tool is the path of a binary cluster/local/build-tools.sh built into the tool cache
// (crossplane, crossplane-core, crane, ...), or an error saying how to build it.
func Tool(name string) (string, error) {
	dir, err := BinaryAssetsDir()
	if err != nil {
		return "", err
	}
	if err := checkBinaries(dir, []string{name}); err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// CrossplaneCRDDir holds Crossplane's own CRDs (XRDs, Compositions, activation policies,
// ...), which build-tools.sh copies from the Crossplane core module into the tool cache.
func CrossplaneCRDDir() (string, error) {
	return cachedCRDDir("crossplane-crds", "Crossplane's CRDs")
}

// PrometheusOperatorCRDDir holds the prometheus-operator CRDs examples/monitoring uses
// (ServiceMonitor, PodMonitor, PrometheusRule), which build-tools.sh generates from the
// operator's API module into the tool cache.
func PrometheusOperatorCRDDir() (string, error) {
	return cachedCRDDir("prometheus-operator-crds", "The prometheus-operator CRDs")
}

// cachedCRDDir is the directory name in the tool cache, or an error saying how to build it.
func cachedCRDDir(name, what string) (string, error) {
	cache, err := toolCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, name)
	if _, err := os.Stat(dir); err != nil {
		return "", errors.Wrapf(err, "%s are not in %s: run `make tools` "+
			"(or set %s=1 to skip integration tests)", what, dir, SkipEnvVar)
	}
	return dir, nil
}

// toolCacheDir is where build-tools.sh keeps what it builds: $PROVIDER_PROXMOX_CACHE, or
// provider-proxmox in the user cache directory.
func toolCacheDir() (string, error) {
	if dir := os.Getenv("PROVIDER_PROXMOX_CACHE"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", errors.Wrap(err, "cannot locate the user cache directory holding the tool binaries")
	}
	return filepath.Join(cache, "provider-proxmox"), nil
}

func checkBinaries(dir string, names []string) error {
	for _, name := range names {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return errors.Errorf("%s not found in %s: run `make tools` to build the control-plane binaries "+
				"(or set %s=1 to skip integration tests)", name, dir, SkipEnvVar)
		}
	}
	return nil
}

// DefaultCRDDir is the repository's package/crds, found from the module root above the
// working directory (go test runs each package in its own directory).
func DefaultCRDDir() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "package", "crds"), nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", errors.Wrap(err, "cannot get the working directory")
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find go.mod above the working directory")
		}
		dir = parent
	}
}
