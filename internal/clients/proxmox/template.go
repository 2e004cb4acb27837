package proxmox

import (
	"context"
	"encoding/json"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// ConvertToTemplate starts converting the stopped VM ref into a template
// and returns the task's UPID. PVE refuses a running VM, and one with
// snapshots, before any task.
func (c *Client) ConvertToTemplate(ctx context.Context, ref GuestRef) (string, error) {
	var raw json.RawMessage
	if err := c.API().Post(ctx, ref.path("/template"), nil, &raw); err != nil {
		return "", errors.Wrapf(err, "cannot convert %s to a template", ref.Named())
	}
	return c.startedTask(raw)
}
