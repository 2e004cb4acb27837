package testenv_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

// The control plane's kube-controller-manager must collect dependents of a deleted owner
// and empty a deleted namespace; envtest does neither, so both would time out there.
func TestControlPlaneRunsGarbageCollectorAndNamespaceController(t *testing.T) {
	env.Require(t)
	cp, err := testenv.StartControlPlane()
	if err != nil {
		t.Fatalf("StartControlPlane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gc"}}
	mustCreate(ctx, t, c, ns)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: "gc"}}
	mustCreate(ctx, t, c, owner)
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent", Namespace: "gc",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	mustCreate(ctx, t, c, dependent)

	if err := c.Delete(ctx, owner); err != nil {
		t.Fatalf("deleting the owner: %v", err)
	}
	waitGone(ctx, t, c, dependent, "the garbage collector to delete the dependent ConfigMap")

	if err := c.Delete(ctx, ns); err != nil {
		t.Fatalf("deleting the namespace: %v", err)
	}
	waitGone(ctx, t, c, ns, "the namespace controller to finish deleting the namespace")
}

func mustCreate(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

func waitGone(ctx context.Context, t *testing.T, c client.Client, obj client.Object, what string) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return kerrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// A control plane started for a process that then dies without stopping it
// (a `go test` timeout panics past every cleanup) stops by itself: its
// processes end and its state goes.
func TestControlPlaneStopsWhenItsOwnerIsGone(t *testing.T) {
	env.Require(t)
	assets, err := testenv.BinaryAssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../cluster/local/controlplane.sh")
	if err != nil {
		t.Fatal(err)
	}
	owner := exec.Command("sleep", "600")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Process.Kill() })
	state := filepath.Join(t.TempDir(), "cp")
	run := func(args ...string) []byte {
		// Not t.Context(): the cleanup's down runs after it is cancelled.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, script, args...)
		cmd.Env = append(os.Environ(), "OWNER_PID="+strconv.Itoa(owner.Process.Pid), "CONTROLPLANE_DIR="+state, "CONTROLPLANE_BIN="+assets)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("controlplane.sh %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	run("up")
	t.Cleanup(func() { run("down") })
	raw, err := os.ReadFile(filepath.Join(state, "kube-apiserver.pid"))
	if err != nil {
		t.Fatal(err)
	}
	apiserver, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}

	_ = owner.Process.Kill()
	_ = owner.Wait()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		_, statErr := os.Stat(state)
		return os.IsNotExist(statErr) && syscall.Kill(apiserver, 0) != nil, nil
	})
	if err != nil {
		t.Fatalf("kube-apiserver (pid %d) still running or %s still there a minute after its owner died", apiserver, state)
	}
}
