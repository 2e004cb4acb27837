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

package composition

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// The binaries cluster/local/build-tools.sh builds into the tool cache (`make tools`).
const (
	crossplaneCLI       = "crossplane"
	crossplaneCore      = "crossplane-core"
	patchAndTransformFn = "function-patch-and-transform"
)

// A loaded 2-core machine can take a few seconds to start the function.
const fnStartTimeout = 60 * time.Second

// renderer is what every test renders with: the tool binaries and the one
// function-patch-and-transform process of the package. Nil when integration
// tests are disabled.
var renderer *renderTools

type renderTools struct {
	// cli is the Crossplane CLI, core the Crossplane binary whose reconciler
	// renders (--crossplane-binary).
	cli, core string
	// fnTarget is the gRPC target of the running function, for the
	// Development runtime; fnLog the file its output goes to.
	fnTarget, fnLog string
}

func TestMain(m *testing.M) { os.Exit(runPackage(m)) }

// runPackage starts the function, runs the tests and stops the function.
// Missing binaries fail the package: CI builds them (`make tools`) before the
// tests run.
func runPackage(m *testing.M) int {
	if os.Getenv(testenv.SkipEnvVar) == "1" {
		fmt.Fprintf(os.Stderr, "composition: %s=1: render tests, which need the Crossplane tools, are disabled\n", testenv.SkipEnvVar)
		return m.Run()
	}
	bin, err := testenv.BinaryAssetsDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "composition: %v\n", err)
		return 1
	}
	if err := checkExecutables(bin, crossplaneCLI, crossplaneCore, patchAndTransformFn); err != nil {
		fmt.Fprintf(os.Stderr, "composition: %v\n", err)
		return 1
	}
	sockDir, err := os.MkdirTemp("", "composition-fn")
	if err != nil {
		fmt.Fprintf(os.Stderr, "composition: cannot create the function's socket directory: %v\n", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(sockDir) }()
	fnLog := filepath.Join(sockDir, "fn.log")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, target, err := startFunction(ctx, filepath.Join(bin, patchAndTransformFn), filepath.Join(sockDir, "fn.sock"), fnLog)
	if err != nil {
		fmt.Fprintf(os.Stderr, "composition: %v\n", err)
		return 1
	}
	defer stop()
	renderer = &renderTools{
		cli:      filepath.Join(bin, crossplaneCLI),
		core:     filepath.Join(bin, crossplaneCore),
		fnTarget: target,
		fnLog:    fnLog,
	}
	return m.Run()
}

// requireRenderer skips t when integration tests are disabled.
func requireRenderer(t *testing.T) *renderTools {
	t.Helper()
	if renderer == nil {
		t.Skipf("%s=1: render tests, which need the Crossplane tools, are disabled", testenv.SkipEnvVar)
	}
	return renderer
}

func checkExecutables(dir string, names ...string) error {
	for _, name := range names {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			return errors.Errorf("%s not found in %s: run `make tools` to build the Crossplane tools "+
				"(or set %s=1 to skip integration tests)", name, dir, testenv.SkipEnvVar)
		}
	}
	return nil
}

// startFunction runs function-patch-and-transform without TLS on a Unix
// socket (no port another process could take), its output going to logFile,
// and waits until it accepts connections. It returns how to stop it and its
// gRPC target.
func startFunction(ctx context.Context, binary, socket, logFile string) (stop func(), target string, err error) {
	log, err := os.Create(logFile)
	if err != nil {
		return nil, "", errors.Wrap(err, "cannot create the function's log")
	}
	defer func() { _ = log.Close() }() // the process holds its own descriptor
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, binary, "--insecure", "--network", "unix", "--address", socket)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, "", errors.Wrapf(err, "cannot start %s", binary)
	}
	// exited is closed once the process is gone, whoever stopped it.
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	stop = func() {
		cancel() // kills the process
		<-exited
	}
	if err := waitForSocket(ctx, socket, exited); err != nil {
		stop()
		return nil, "", errors.Wrapf(err, "%s did not start serving on %s (exit: %v)", binary, socket, waitErr)
	}
	return stop, "unix://" + socket, nil
}

func waitForSocket(ctx context.Context, socket string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, fnStartTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "unix", socket)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-exited:
			return errors.New("the function exited")
		case <-ctx.Done():
			return errors.Wrapf(err, "no connection within %s", fnStartTimeout)
		case <-tick.C:
		}
	}
}
