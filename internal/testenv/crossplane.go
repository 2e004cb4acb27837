package testenv

import (
	"path/filepath"
	"time"
)

// crossplaneBinaries are what cluster/local/crossplane.sh runs, besides the control plane's.
var crossplaneBinaries = append([]string{"crossplane-core", "crossplane-rbac-manager", "crossplane", "crane",
	"function-patch-and-transform"}, controlPlaneBinaries...)

// Installing a package waits for the package manager, the RBAC manager and, on a busy
// machine, several API round trips each.
const crossplaneStepTimeout = 5 * time.Minute

// Crossplane is a local control plane running Crossplane core (package runtime External),
// its RBAC manager and a package registry: cluster/local/crossplane.sh in a private state
// directory. Env.Config is cluster admin; Stop tears everything down.
type Crossplane struct {
	*Env
	// Progress is what `up` said on stderr: each step and how long it took.
	Progress string

	script *localScript
}

// StartCrossplane runs `crossplane.sh up`.
func StartCrossplane() (*Crossplane, error) {
	s, out, err := startScript("crossplane.sh", "CROSSPLANE_DIR", "provider-proxmox-xp-", crossplaneBinaries)
	if err != nil {
		return nil, err
	}
	env, err := s.envFor(out.lastLine())
	if err != nil {
		return nil, err
	}
	return &Crossplane{Env: env, Progress: out.Stderr, script: s}, nil
}

// Run runs a command of crossplane.sh (package, install-provider, start-provider,
// install-function, ...) and returns the last line it printed on stdout (a path, for the
// commands printing one) and its progress on stderr.
func (c *Crossplane) Run(args ...string) (result, progress string, err error) {
	out, err := c.script.run(crossplaneStepTimeout, args...)
	return out.lastLine(), out.Stderr, err
}

// LogPath is the log of a component the script started: crossplane, rbac-manager, registry,
// provider, fn-NAME.
func (c *Crossplane) LogPath(component string) string {
	return filepath.Join(c.script.state, "logs", component+".log")
}
