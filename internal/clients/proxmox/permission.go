package proxmox

import (
	"net/http"
	"regexp"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/luthermonson/go-proxmox"
)

// rePermissionCheck reads raise_perm_exc's "Permission check failed (<path>,
// <privileges>)"; privileges may be several ("VM.Config.Disk|VM.Config.CDROM").
var rePermissionCheck = regexp.MustCompile(`Permission check failed \((/[^,()]*), ([^()]+)\)`)

// ExplainPermission puts the privilege and path PVE reports missing at the
// head of a 403's error ("missing Proxmox VE privilege VM.Allocate on
// /vms/100: ..."), so the condition says what to grant and where. Any other
// error is returned as it is.
func ExplainPermission(err error) error {
	if err == nil {
		return nil
	}
	apiErr, ok := proxmox.AsAPIError(err)
	if !ok || apiErr.StatusCode != http.StatusForbidden {
		return err
	}
	m := rePermissionCheck.FindStringSubmatch(apiErr.Message)
	if m == nil {
		return err
	}
	return errors.Wrapf(err, "missing Proxmox VE privilege %s on %s (grant a role holding it on that path to the connection's user or token)", m[2], m[1])
}
