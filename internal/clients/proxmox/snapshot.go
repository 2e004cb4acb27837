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

package proxmox

import (
	"context"
	"encoding/json"
	"net/url"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// Snapshot is one entry of a guest's GET /snapshot, PVE's "current"
// pseudo-entry excluded.
type Snapshot struct {
	Name        string
	Description string
	Parent      string
	// SnapTime is when PVE took it; zero while the snapshot is being made.
	SnapTime time.Time
	VMState  bool
	// SnapState is "prepare" or "delete" while a task works on it.
	SnapState string
}

type wireSnapshot struct {
	Name        wireText `json:"name"`
	Description wireText `json:"description"`
	Parent      wireText `json:"parent"`
	SnapTime    wireInt  `json:"snaptime"`
	VMState     wireText `json:"vmstate"`
	SnapState   wireText `json:"snapstate"`
}

// currentSnapshot is the name of the pseudo-entry PVE ends every snapshot
// list with ("You are here!").
const currentSnapshot = "current"

func (r GuestRef) snapshotPath(name, suffix string) string {
	return r.path("/snapshot/" + url.PathEscape(name) + suffix)
}

// Snapshots lists the guest's snapshots (GET /snapshot).
func (c *Client) Snapshots(ctx context.Context, ref GuestRef) ([]Snapshot, error) {
	var raw []wireSnapshot
	if err := c.API().Get(ctx, ref.path("/snapshot"), &raw); err != nil {
		return nil, errors.Wrapf(err, "cannot list snapshots of %s guest %s", ref.Type, ref)
	}
	out := make([]Snapshot, 0, len(raw))
	for _, w := range raw {
		if string(w.Name) == currentSnapshot {
			continue
		}
		s := Snapshot{Name: string(w.Name), Description: string(w.Description), Parent: string(w.Parent),
			VMState: boolText(string(w.VMState)), SnapState: string(w.SnapState)}
		if w.SnapTime > 0 {
			s.SnapTime = time.Unix(int64(w.SnapTime), 0)
		}
		out = append(out, s)
	}
	return out, nil
}

// SnapshotOptions are the parameters of POST /snapshot.
type SnapshotOptions struct {
	Description string
	// VMState saves the RAM of a running QEMU guest (QEMU only: PVE's LXC
	// endpoint has no such parameter).
	VMState bool
}

// CreateSnapshot starts taking snapshot name of the guest and returns the
// task's UPID.
func (c *Client) CreateSnapshot(ctx context.Context, ref GuestRef, name string, o SnapshotOptions) (string, error) {
	p := map[string]string{"snapname": name}
	setIf(p, "description", o.Description)
	if o.VMState && ref.Type == QEMU {
		p["vmstate"] = pveBool(true)
	}
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.path("/snapshot"), p, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot snapshot %s guest %s as %q", ref.Type, ref, name)
	}
	return c.startedTask(raw)
}

// DeleteSnapshot starts deleting snapshot name and returns the UPID.
func (c *Client) DeleteSnapshot(ctx context.Context, ref GuestRef, name string) (string, error) {
	var raw json.RawMessage
	if err := c.API().Delete(ctx, ref.snapshotPath(name, ""), &raw); err != nil {
		return "", errors.Wrapf(err, "cannot delete snapshot %q of %s guest %s", name, ref.Type, ref)
	}
	return c.startedTask(raw)
}

// RollbackSnapshot starts rolling the guest back to snapshot name and
// returns the UPID. PVE stops a running guest first and starts it again only
// from a snapshot with RAM; it is not asked to start it otherwise: the
// guest's own resource decides its power state.
func (c *Client) RollbackSnapshot(ctx context.Context, ref GuestRef, name string) (string, error) {
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.snapshotPath(name, "/rollback"), nil, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot roll %s guest %s back to snapshot %q", ref.Type, ref, name)
	}
	return c.startedTask(raw)
}

// SetSnapshotDescription changes a snapshot's description (PUT
// /snapshot/{name}/config, synchronous).
func (c *Client) SetSnapshotDescription(ctx context.Context, ref GuestRef, name, description string) error {
	if err := c.API().Put(ctx, ref.snapshotPath(name, "/config"), map[string]string{"description": description}, nil); err != nil {
		return errors.Wrapf(err, "cannot set the description of snapshot %q of %s guest %s", name, ref.Type, ref)
	}
	return nil
}
