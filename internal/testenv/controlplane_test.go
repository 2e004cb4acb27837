package testenv_test

import (
	"context"
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
