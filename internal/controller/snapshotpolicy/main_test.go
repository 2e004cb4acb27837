package snapshotpolicy

import (
	"os"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/testenv"
)

var env *testenv.Env

// The policy tests run on a real API server (envtest): it decides label
// selection, name collisions and deletion. No controller runs there; each
// test calls Reconcile itself with a clock it moves.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m, &env)) }
