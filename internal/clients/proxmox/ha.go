package proxmox

import (
	"context"
	"net/url"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// HA resource states (pve-ha-manager PVE::HA::Resources: "enabled" is an old alias of
// started, which the reads here report as started).
const (
	HAStarted = "started"
	HAStopped = "stopped"
)

// HAResource is a guest's entry in /etc/pve/ha/resources.cfg, with PVE's defaults filled
// in for the options the section leaves unset (state started, max_restart 1,
// max_relocate 1, failback on: PVE::HA::Config read_and_check_resources_config), so two
// values compare equal exactly when the CRM acts the same on them.
type HAResource struct {
	State       string
	MaxRestart  int
	MaxRelocate int
	Failback    bool
}

// HADefaults is the resource PVE configures when create is given no option.
func HADefaults() HAResource {
	return HAResource{State: HAStarted, MaxRestart: 1, MaxRelocate: 1, Failback: true}
}

// HASID is the HA resource ID of a guest: vm:<vmid> for QEMU, ct:<vmid> for LXC
// (PVE::HA::Tools::get_ha_resource_type).
func HASID(ref GuestRef) string {
	return haType(ref) + ":" + strconv.Itoa(ref.VMID)
}

func haType(ref GuestRef) string {
	if ref.Type == LXC {
		return "ct"
	}
	return "vm"
}

// haResourceOfRow is one row of GET /cluster/ha/resources: only the options the section
// sets, numbers possibly as strings, PVE's defaults filled in for the rest.
func haResourceOfRow(row rawRow) HAResource {
	r := HADefaults()
	if s := row.text("state"); s != "" && s != "enabled" {
		r.State = s
	}
	if _, ok := row["max_restart"]; ok {
		r.MaxRestart = int(row.int("max_restart"))
	}
	if _, ok := row["max_relocate"]; ok {
		r.MaxRelocate = int(row.int("max_relocate"))
	}
	if _, ok := row["failback"]; ok {
		r.Failback = row.text("failback") != "0"
	}
	return r
}

// haListing is the listing of the HA resources of ref's type.
func haListing(ref GuestRef) string {
	return "/cluster/ha/resources?type=" + haType(ref)
}

// HAResourceOf reads the guest's HA resource; found is false when the guest is not one.
// It lists the resources of the guest's type rather than reading the sid, because PVE
// answers an unconfigured sid with a 500 whose text is the only sign of "not there". The
// listing is the connection's shared one (at most listingTTL old, dropped by this
// client's own HA writes), so N HA guests cost one read per listingTTL, not N per poll.
func (c *Client) HAResourceOf(ctx context.Context, ref GuestRef) (res HAResource, found bool, err error) {
	rows, err := c.listingRows(ctx, haListing(ref))
	if err != nil {
		return HAResource{}, false, errors.Wrapf(err, "cannot list the HA resources of type %s", haType(ref))
	}
	sid := HASID(ref)
	for _, row := range rows {
		if row.text("sid") == sid {
			return haResourceOfRow(row), true, nil
		}
	}
	return HAResource{}, false, nil
}

// params writes every option, defaults included, so the section says exactly what the spec
// asks and a later change of PVE's defaults does not change the guest's behaviour.
func (r HAResource) params() map[string]string {
	return map[string]string{"state": r.State, "max_restart": strconv.Itoa(r.MaxRestart),
		"max_relocate": strconv.Itoa(r.MaxRelocate), "failback": pveBool(r.Failback)}
}

// CreateHAResource makes the guest an HA resource (POST /cluster/ha/resources).
func (c *Client) CreateHAResource(ctx context.Context, ref GuestRef, r HAResource) error {
	p := r.params()
	p["sid"] = HASID(ref)
	defer c.listings.drop(haListing(ref))
	if err := c.API().Post(ctx, "/cluster/ha/resources", p, nil); err != nil {
		return errors.Wrapf(err, "cannot make %s an HA resource", ref)
	}
	return nil
}

// UpdateHAResource sets every option of the guest's HA resource.
func (c *Client) UpdateHAResource(ctx context.Context, ref GuestRef, r HAResource) error {
	defer c.listings.drop(haListing(ref))
	if err := c.API().Put(ctx, haPath(ref), r.params(), nil); err != nil {
		return errors.Wrapf(err, "cannot update the HA resource of %s", ref)
	}
	return nil
}

// DeleteHAResource removes the guest from HA (and, PVE's default purge, from the HA rules
// naming it), which PVE requires before the guest can be destroyed without purge.
func (c *Client) DeleteHAResource(ctx context.Context, ref GuestRef) error {
	defer c.listings.drop(haListing(ref))
	if err := c.API().Delete(ctx, haPath(ref), nil); err != nil {
		return errors.Wrapf(err, "cannot remove %s from HA", ref)
	}
	return nil
}

func haPath(ref GuestRef) string {
	return "/cluster/ha/resources/" + url.PathEscape(HASID(ref))
}
