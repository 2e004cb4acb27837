package e2ereal

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

const (
	// wait bounds the provider's reactions: generous, a real clone takes
	// tens of seconds.
	wait     = 5 * time.Minute
	connName = "e2e-real"
	credNS   = "e2e-real"
	credName = "pve-credentials"
)

// simNodes are the simulator twin's nodes: the second is the migration target.
var simNodes = []string{"pve", "other"}

var (
	env *testenv.Env
	h   *providertest.Harness
	tg  *pveconformance.Target
)

func TestMain(m *testing.M) {
	cfg, onReal, err := pveconformance.ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-real:", err)
		os.Exit(2)
	}
	o := providertest.Options{Provider: provider.Options{PollInterval: 10 * time.Second, MaxReconcileRate: 10},
		Sim: pvesim.Options{Nodes: simNodes}}
	os.Exit(providertest.Main(m, "e2e-real", &env, o, func(ctx context.Context, p *providertest.Harness) error {
		h = p
		t, err := pickTarget(ctx, p, cfg, onReal)
		if err != nil {
			return err
		}
		tg = t
		return connect(ctx, p, t)
	}, func(_ *providertest.Harness, code int) int {
		if tg == nil || !tg.IsReal() {
			return code
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := tg.Cleanup(ctx, func(s string) { fmt.Fprintln(os.Stderr, "e2e-real: cleanup:", s) }); err != nil {
			fmt.Fprintln(os.Stderr, "e2e-real:", err)
			return 1
		}
		return code
	}))
}

// pickTarget is the real cluster (after the range guard) or the harness's
// own simulator.
func pickTarget(ctx context.Context, p *providertest.Harness, cfg pveconformance.Config, onReal bool) (*pveconformance.Target, error) {
	if !onReal {
		return pveconformance.AttachSim(ctx, p.Sim, simNodes)
	}
	t, err := pveconformance.NewRealTarget(cfg)
	if err != nil {
		return nil, err
	}
	if err := t.CheckRange(ctx); err != nil {
		return nil, fmt.Errorf("refusing to run: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e-real: run %s against %s, node %s, VMIDs %s\n", t.RunID(), t.Name(), t.Node(), t.VMIDs())
	return t, nil
}

// connect creates the ProxmoxConnection to the target (its token, else its
// password, in a Secret; its CA, or insecure when the tester chose it) and
// waits for it to be Ready.
func connect(ctx context.Context, p *providertest.Harness, t *pveconformance.Target) error {
	cfg := t.Config()
	ca, err := t.CAPEM()
	if err != nil {
		return err
	}
	spec := v1alpha1.ProxmoxConnectionSpec{Endpoint: cfg.Endpoint, CABundle: string(ca), InsecureSkipVerify: cfg.Insecure}
	data := map[string]string{}
	if cfg.TokenID != "" {
		spec.TokenID = cfg.TokenID
		spec.SecretFrom = &v1alpha1.SecretKeySelector{Name: credName, Namespace: credNS, Key: "secret"}
		data["secret"] = cfg.TokenSecret
	} else {
		spec.Username = cfg.Username
		spec.PasswordFrom = &v1alpha1.SecretKeySelector{Name: credName, Namespace: credNS, Key: "password"}
		data["password"] = cfg.Password
	}
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: credNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: credNS, Name: credName}, StringData: data},
		&v1alpha1.ProxmoxConnection{ObjectMeta: metav1.ObjectMeta{Name: connName}, Spec: spec},
	} {
		if err := p.Kube.Create(ctx, o); err != nil {
			return fmt.Errorf("create %T: %w", o, err)
		}
	}
	return p.WaitConnectionReady(ctx, connName, wait)
}

// require skips without an API server (SKIP_INTEGRATION=1).
func require(t *testing.T) {
	t.Helper()
	env.Require(t)
}

// TestRealTargetConfigured says, in `make test`, why this package ran on
// the simulator; with `make e2e-real` it confirms the target is real.
func TestRealTargetConfigured(t *testing.T) {
	require(t)
	if !tg.IsReal() {
		t.Skipf("%s is not set: this package ran its simulator twin; `make e2e-real` runs it against a real PVE 9.x (docs/guides/simulator-and-conformance.md)", pveconformance.EnvEndpoint)
	}
	t.Logf("target %s, node %s, VMID range %s, run %s", tg.Name(), tg.Node(), tg.VMIDs(), tg.RunID())
}
