package pvesim

// GET /version: the release every simulated node reports (pve-manager PVE/API2.pm, version).

const (
	pveVersion = "9.1.1"
	pveRepoID  = "42becc1aa2c8ad2e"
)

func handleVersion(_ *Server, _ *request) (any, error) {
	return map[string]any{"version": pveVersion, "release": "9.1", "repoid": pveRepoID}, nil
}
