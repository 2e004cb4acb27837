package proxmox

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubemox/provider-proxmox/internal/testenv/pveschema"
)

func TestRouteTemplate(t *testing.T) {
	cases := map[string]struct {
		reason string
		path   string
		want   string
	}{
		"Version":              {"a static route stays", "/api2/json/version", "/version"},
		"NoPrefix":             {"the /api2/json prefix is optional", "/version", "/version"},
		"Root":                 {"the API root", "/api2/json", "/"},
		"Nodes":                {"a collection", "/api2/json/nodes", "/nodes"},
		"Node":                 {"a node's name is a parameter", "/api2/json/nodes/pve-01", "/nodes/{node}"},
		"GuestConfig":          {"node and VMID become parameters", "/api2/json/nodes/pve/qemu/100/config", "/nodes/{node}/qemu/{vmid}/config"},
		"NodeNamedLikeARoute":  {"a node named like a static word is still a node", "/api2/json/nodes/config/qemu/config/config", "/nodes/{node}/qemu/{vmid}/config"},
		"TrailingSlash":        {"empty segments are ignored", "/api2/json/nodes/pve/qemu/100/pending/", "/nodes/{node}/qemu/{vmid}/pending"},
		"Clone":                {"the clone of a template", "/api2/json/nodes/lowtower/qemu/9000/clone", "/nodes/{node}/qemu/{vmid}/clone"},
		"CreateGuest":          {"a create posts to the collection", "/api2/json/nodes/pve/qemu", "/nodes/{node}/qemu"},
		"DeleteGuest":          {"a guest itself", "/api2/json/nodes/pve/qemu/104", "/nodes/{node}/qemu/{vmid}"},
		"PowerAction":          {"status actions are static", "/api2/json/nodes/pve/qemu/100/status/shutdown", "/nodes/{node}/qemu/{vmid}/status/shutdown"},
		"Container":            {"lxc shares the guest grammar", "/api2/json/nodes/pve/lxc/200/status/current", "/nodes/{node}/lxc/{vmid}/status/current"},
		"Agent":                {"guest agent commands", "/api2/json/nodes/pve/qemu/100/agent/network-get-interfaces", "/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces"},
		"Snapshot":             {"a snapshot's name is a parameter", "/api2/json/nodes/pve/qemu/100/snapshot/before-upgrade/rollback", "/nodes/{node}/qemu/{vmid}/snapshot/{snapname}/rollback"},
		"TaskStatus":           {"a UPID is a parameter", "/api2/json/nodes/pve/tasks/" + url.PathEscape("UPID:pve:0000A1B2:0001C3D4:65F0A0B0:qmclone:101:root@pam!kubemox:") + "/status", "/nodes/{node}/tasks/{upid}/status"},
		"TaskList":             {"the task list", "/api2/json/nodes/pve/tasks", "/nodes/{node}/tasks"},
		"StorageVolume":        {"a volume id with an escaped slash is one segment", "/api2/json/nodes/pve/storage/local/content/" + url.PathEscape("local:iso/secret-plan.iso"), "/nodes/{node}/storage/{storage}/content/{volume}"},
		"DownloadURL":          {"a storage action", "/api2/json/nodes/pve/storage/nfs-isos/download-url", "/nodes/{node}/storage/{storage}/download-url"},
		"ClusterResources":     {"cluster routes are static", "/api2/json/cluster/resources", "/cluster/resources"},
		"ClusterNextID":        {"the next free VMID", "/api2/json/cluster/nextid", "/cluster/nextid"},
		"Ticket":               {"the login", "/api2/json/access/ticket", "/access/ticket"},
		"Token":                {"user and token ids are parameters", "/api2/json/access/users/" + url.PathEscape("alice@pve") + "/token/ci", "/access/users/{userid}/token/{tokenid}"},
		"Pool":                 {"a pool id is a parameter", "/api2/json/pools/team-a", "/pools/{poolid}"},
		"StorageDefinition":    {"a storage definition", "/api2/json/storage/local-lvm", "/storage/{storage}"},
		"UnknownTop":           {"a top-level segment PVE does not have collapses", "/api2/json/vm-secret-name", "/" + UnknownRoute},
		"UnknownGuestSubtree":  {"a guest subresource this grammar does not know collapses with the rest", "/api2/json/nodes/pve/qemu/100/brand-new/web-01/7", "/nodes/{node}/qemu/{vmid}/" + UnknownRoute},
		"UnknownNodeSubtree":   {"a node subtree the grammar lists only by name keeps its name", "/api2/json/nodes/pve/disks/lvm/vg-data", "/nodes/{node}/disks/" + UnknownRoute},
		"UnknownAfterLeaf":     {"segments below a leaf collapse", "/api2/json/version/web-01", "/version/" + UnknownRoute},
		"NotAPIPath":           {"a path outside the API collapses", "/pve2/js/pvemanagerlib.js", "/" + UnknownRoute},
		"ExtjsPrefix":          {"another API format is not the API root", "/api2/extjs/nodes/pve/qemu/100/config", "/" + UnknownRoute},
		"EscapedSlashInStatic": {"an escaped slash never matches a static word", "/api2/json/cluster/" + url.PathEscape("resources/x"), "/cluster/" + UnknownRoute},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RouteTemplate(tc.path)); diff != "" {
				t.Errorf("%s\nRouteTemplate(%q): -want +got:\n%s", tc.reason, tc.path, diff)
			}
		})
	}
}

// TestRouteTemplateOverPVESchema templates every path of PVE's API schema
// with its parameters filled with values that must not leak: no value may
// survive, and where the grammar knows the path the template is the
// schema's own path.
func TestRouteTemplateOverPVESchema(t *testing.T) {
	paths := schemaPaths(t)
	param := regexp.MustCompile(`\{[^}]+\}`)
	known := 0
	for _, p := range paths {
		n := 0
		filled := param.ReplaceAllStringFunc(p, func(string) string {
			n++
			return url.PathEscape("leak-" + strings.Repeat("x", n) + ":id/" + "7")
		})
		got := RouteTemplate("/api2/json" + filled)
		if strings.Contains(got, "leak") || strings.Contains(got, "7") {
			t.Errorf("RouteTemplate(%q) = %q: a parameter value leaked", filled, got)
		}
		if !strings.Contains(got, UnknownRoute) {
			known++
			if got != p {
				t.Errorf("RouteTemplate(%q) = %q, want the schema's %q", filled, got, p)
			}
		}
	}
	t.Logf("%d of %d schema paths templated exactly; the rest collapse below a known prefix", known, len(paths))
}

// schemaPaths lists every path of PVE's API schema (pveschema.Read: skips t
// without it).
func schemaPaths(t *testing.T) []string {
	t.Helper()
	data := pveschema.Read(t)
	type node struct {
		Path     string `json:"path"`
		Children []node `json:"children"`
	}
	var roots []node
	if err := json.Unmarshal(data, &roots); err != nil {
		t.Fatalf("decode PVE API schema: %v", err)
	}
	var out []string
	var walk func([]node)
	walk = func(ns []node) {
		for _, n := range ns {
			out = append(out, n.Path)
			walk(n.Children)
		}
	}
	walk(roots)
	return out
}
