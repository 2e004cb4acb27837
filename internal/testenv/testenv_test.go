package testenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

var env *testenv.Env

// A CRD with a CEL rule, installed through Start's crdDirs: if the API server did not run
// CEL, TestCELRuleRejectsInvalidObject would see its invalid object accepted.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.testenv.provider-proxmox.test
spec:
  group: testenv.provider-proxmox.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.minReplicas <= self.maxReplicas
              message: minReplicas must not exceed maxReplicas
            properties:
              minReplicas: {type: integer}
              maxReplicas: {type: integer}
`

const celMessage = "minReplicas must not exceed maxReplicas"

var widgetGVK = schema.GroupVersionKind{Group: "testenv.provider-proxmox.test", Version: "v1", Kind: "Widget"}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "testenv-crds")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if err := os.WriteFile(filepath.Join(dir, "widget.yaml"), []byte(widgetCRD), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return testenv.Main(m, &env, dir)
}

func newClient(t *testing.T) client.Client {
	t.Helper()
	env.Require(t)
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestConfigMapRoundTrip(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)
	want := &corev1.ConfigMap{
		// A generated name: the package's API server outlives a run, and
		// -count=2 runs the test again against the first run's objects.
		ObjectMeta: metav1.ObjectMeta{GenerateName: "roundtrip-", Namespace: "default"},
		Data:       map[string]string{"hello": "world"},
	}
	if err := c.Create(ctx, want); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Data["hello"] != "world" || got.UID == "" {
		t.Errorf("read back data=%v uid=%q, want data hello=world and a server-assigned uid", got.Data, got.UID)
	}
}

func widget(prefix string, minReplicas, maxReplicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace("default")
	u.SetGenerateName(prefix + "-") // unique: -count=2 finds the first run's widgets
	u.Object["spec"] = map[string]any{"minReplicas": minReplicas, "maxReplicas": maxReplicas}
	return u
}

func TestCELRuleRejectsInvalidObject(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)
	if err := c.Create(ctx, widget("valid", 1, 3)); err != nil {
		t.Fatalf("creating a valid widget: %v", err)
	}
	err := c.Create(ctx, widget("invalid", 5, 2))
	if !kerrors.IsInvalid(err) {
		t.Fatalf("creating an invalid widget: got %v, want an Invalid error from the CEL rule", err)
	}
	if !strings.Contains(err.Error(), celMessage) {
		t.Errorf("error %q does not carry the rule's message %q", err, celMessage)
	}
}

func TestStartFailsWithHintWhenBinariesMissing(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	e, err := testenv.Start()
	if err == nil {
		_ = e.Stop()
		t.Fatal("Start succeeded without binaries")
	}
	if !strings.Contains(err.Error(), "make tools") {
		t.Errorf("error %q does not tell to run make tools", err)
	}
}

func TestDefaultCRDDirIsTheModulesPackageCRDs(t *testing.T) {
	dir, err := testenv.DefaultCRDDir()
	if err != nil {
		t.Fatalf("DefaultCRDDir: %v", err)
	}
	if !strings.HasSuffix(dir, filepath.Join("package", "crds")) {
		t.Errorf("DefaultCRDDir = %q, want .../package/crds", dir)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "..", "..", "go.mod"))
	if err != nil {
		t.Fatalf("no go.mod two levels above %s: %v", dir, err)
	}
	if !strings.Contains(string(gomod), "module github.com/kubemox/provider-proxmox") {
		t.Errorf("go.mod above %s is not this module's", dir)
	}
}
