package pvesim

import (
	"strings"
	"testing"
)

// TestRouteTableServesEachRow checks that a concrete request for every row of the route
// table reaches that row's handler, so the row found by searching for a URL is the one
// that serves it: no other row's literal segment or parameter takes its requests.
// The path parameters are PVE's: the rows' templates are the API tree pve-manager
// mounts (PVE/API2.pm, sub-paths from PVE/API2/Nodes.pm, qemu-server PVE/API2/Qemu.pm,
// pve-container src/PVE/API2/LXC.pm), `{sid}` is pve-ha-manager src/PVE/API2/HA/Resources.pm's
// resource id (`vm:100`), and the UPID has the fields pve-common src/PVE/Tools.pm sub
// upid_encode writes.
func TestRouteTableServesEachRow(t *testing.T) {
	table := routeTable()
	rt := newRouter(table)
	values := map[string]string{"node": "pve", "vmid": "100", "storage": "local", "snapname": "snap1",
		"upid": "UPID:pve:00000001:00000002:00000003:qmstart:100:root@pam:", "poolid": "pool1", "sid": "vm:100"}
	for i := range table {
		row := &table[i]
		t.Run(row.endpoint, func(t *testing.T) {
			var segs []string
			for _, seg := range splitPath(row.spec.Path) {
				switch {
				case strings.HasSuffix(seg, "+}"):
					segs = append(segs, "iso", "debian.iso")
				case strings.HasPrefix(seg, "{"):
					v, ok := values[strings.Trim(seg, "{}")]
					if !ok {
						t.Fatalf("no test value for path parameter %s", seg)
					}
					segs = append(segs, v)
				default:
					segs = append(segs, seg)
				}
			}
			n, _ := rt.match(segs)
			if n == nil || n.routes[row.spec.Method] != row {
				t.Errorf("%s /%s does not reach the row of %s", row.spec.Method, strings.Join(segs, "/"), row.endpoint)
			}
		})
	}
}
