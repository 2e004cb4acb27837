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

package providertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// BuildProvider builds cmd/provider into dir and returns the binary's path,
// for tests whose behaviour is the process's (start-up, crashes).
func BuildProvider(dir string) (string, error) {
	binary := filepath.Join(dir, "provider")
	build := exec.Command("go", "build", "-o", binary, "github.com/kubemox/provider-proxmox/cmd/provider")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return binary, errors.Wrap(build.Run(), "cannot build the provider")
}

// WriteKubeconfig writes a kubeconfig reaching the API server cfg points at
// with cfg's credentials.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["env"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	c.AuthInfos["env"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	c.Contexts["env"] = &clientcmdapi.Context{Cluster: "env", AuthInfo: "env"}
	c.CurrentContext = "env"
	return errors.Wrap(clientcmd.WriteToFile(*c, path), "cannot write the kubeconfig")
}

// A Process is one run of the provider binary.
type Process struct {
	cmd  *exec.Cmd
	logs *SyncBuffer
	done chan struct{}
}

// StartProcess runs binary with args against the API server kubeconfig
// reaches. The process is SIGKILLed when the test ends.
func StartProcess(t *testing.T, binary, kubeconfig string, args ...string) *Process {
	t.Helper()
	p := &Process{logs: &SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	// Killed with the test binary too, when a timeout's panic skips the cleanup.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start provider: %v", err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.Kill(t) })
	return p
}

// Kill SIGKILLs the provider: no deferred cleanup, no graceful shutdown.
func (p *Process) Kill(t *testing.T) {
	t.Helper()
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Errorf("provider did not die after SIGKILL")
	}
}

// Signal sends sig to the provider (SIGSTOP and SIGCONT freeze and resume
// it); nothing once it has exited.
func (p *Process) Signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if p.Exited() {
		return
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !p.Exited() {
		t.Fatalf("signal %v to the provider: %v", sig, err)
	}
}

// Exited tells whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitCode is the process's exit code, or -1 while it runs.
func (p *Process) ExitCode() int {
	if !p.Exited() {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// Tail returns the last few KB the process printed.
func (p *Process) Tail() string {
	s := p.logs.String()
	if len(s) > 4000 {
		s = s[len(s)-4000:]
	}
	return s
}

// Logs returns everything the process printed.
func (p *Process) Logs() string { return p.logs.String() }

// A BinaryEnv is what tests of the provider process need: one API server,
// the provider binary, and a kubeconfig reaching the API server.
type BinaryEnv struct {
	Env        *testenv.Env
	Binary     string
	Kubeconfig string
}

// BinaryMain is a TestMain body for tests of the provider process: it builds
// the provider, starts one API server with the CRDs in crdDirs (none given:
// package/crds), writes a kubeconfig, runs the tests and cleans up. With
// SKIP_INTEGRATION=1 it runs the tests with e.Env nil (Env.Require skips).
func BinaryMain(m *testing.M, e *BinaryEnv, crdDirs ...string) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintln(os.Stderr, "integration tests disabled by", testenv.SkipEnvVar)
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "provider-binary-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if e.Binary, err = BuildProvider(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if e.Env, err = testenv.Start(crdDirs...); err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer func() { _ = e.Env.Stop() }()
	e.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := WriteKubeconfig(e.Env.Config, e.Kubeconfig); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
