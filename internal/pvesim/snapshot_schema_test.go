package pvesim_test

import (
	"net/http"
	"testing"
)

// snapshotRoutes are the QEMU snapshot routes whose snapname PVE checks
// against pve-snapshot-name before any handler runs.
var snapshotRoutes = []struct{ method, path string }{
	{http.MethodPost, "/nodes/{node}/qemu/{vmid}/snapshot"},
	{http.MethodDelete, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}"},
	{http.MethodGet, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config"},
	{http.MethodPut, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/config"},
	{http.MethodPost, "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback"},
}

// The simulator's snapshot-name check is PVE's schema for snapname on every
// snapshot route: format pve-configid, at most 40 characters (pve-common
// src/PVE/JSONSchema.pm, standard option pve-snapshot-name; qemu-server src/PVE/API2/Qemu.pm, snapshot).
func TestSnapshotNameRulesMatchPVESchema(t *testing.T) {
	idx := loadSchemaRaw(t)
	for _, r := range snapshotRoutes {
		node, ok := idx[r.path]
		if !ok {
			t.Errorf("%s not in the schema", r.path)
			continue
		}
		p := node.Info[r.method].Parameters.Properties["snapname"]
		if p.Format != "pve-configid" || p.MaxLength != 40 {
			t.Errorf("%s %s snapname: format %v maxLength %v; the simulator checks pve-configid and 40", r.method, r.path, p.Format, p.MaxLength)
		}
	}
}

type rawSchemaNode struct {
	Path string `json:"path"`
	Info map[string]struct {
		Parameters struct {
			Properties map[string]struct {
				Format    any `json:"format"`
				MaxLength int `json:"maxLength"`
			} `json:"properties"`
		} `json:"parameters"`
	} `json:"info"`
	Children []rawSchemaNode `json:"children"`
}

// loadSchemaRaw indexes the schema by path with the parameter fields this
// file needs (format, maxLength), which loadSchema does not keep.
func loadSchemaRaw(t *testing.T) map[string]rawSchemaNode {
	return loadSchemaIndex(t, func(n rawSchemaNode) (string, []rawSchemaNode) { return n.Path, n.Children })
}
