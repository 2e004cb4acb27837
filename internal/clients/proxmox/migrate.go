package proxmox

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Migration is a move of a guest to another node of its cluster.
type Migration struct {
	Target string
	// Online migrates a running VM live; a stopped VM always moves offline.
	// For a container it means a restart migration (PVE cannot move a
	// running container live).
	Online bool
	// TargetStorage maps every local volume to this storage on the target
	// ("" keeps the storage IDs, which must then exist there).
	TargetStorage string
	// ShutdownTimeoutSeconds bounds a container's shutdown in a restart
	// migration (0: PVE's default).
	ShutdownTimeoutSeconds int
}

// params are the migrate request's parameters: a live VM migration always
// allows its local disks to move along (PVE refuses a live migration of
// attached local disks without with-local-disks; the flag is harmless for
// shared ones). Containers name the same things differently.
func (m Migration) params(t GuestType) map[string]string {
	p := map[string]string{"target": m.Target}
	switch t {
	case LXC:
		if m.Online {
			p["restart"] = "1"
			if m.ShutdownTimeoutSeconds > 0 {
				p["timeout"] = strconv.Itoa(m.ShutdownTimeoutSeconds)
			}
		}
		if m.TargetStorage != "" {
			p["target-storage"] = m.TargetStorage
		}
	default:
		if m.Online {
			p["online"] = "1"
			p["with-local-disks"] = "1"
		}
		if m.TargetStorage != "" {
			p["targetstorage"] = m.TargetStorage
		}
	}
	return p
}

// MigrateGuest starts the migration of a guest to m.Target and returns the
// UPID: qmigrate or vzmigrate, or hamigrate for an HA resource, whose task
// only hands the request to the HA manager (the guest moves later).
func (c *Client) MigrateGuest(ctx context.Context, ref GuestRef, m Migration) (string, error) {
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.path("/migrate"), m.params(ref.Type), &raw); err != nil {
		return "", errors.Wrapf(err, "cannot migrate %s to node %s", ref, m.Target)
	}
	return c.startedTask(raw)
}
