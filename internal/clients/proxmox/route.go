package proxmox

import "strings"

// UnknownRoute replaces the segments of a request path the route grammar
// does not know, from the first one on: a segment PVE added in a release
// after this grammar was written (or a path that is not PVE's) is never
// copied into a metric label, since it could be a name or an id.
const UnknownRoute = "{unknown}"

// routeGrammar is the part of PVE's API path tree (pve-manager's
// PVE::API2) the provider's metrics tell apart. A segment "{name}" stands
// for any value at that place (a node, a VMID, a storage, a volume, a task
// id...); "a|b" lists static alternatives. Each pattern's prefixes are
// routes too. Subtrees not listed here (ceph, disks, sdn, ...) are kept to
// their first static segment and the rest becomes UnknownRoute.
var routeGrammar = []string{
	"/version",
	"/nodes/{node}/qemu|lxc/{vmid}/config|pending|clone|resize|move_disk|move_volume|migrate|remote_migrate|template|unlink|feature|interfaces|rrd|rrddata|sendkey|monitor|vncproxy|termproxy|vncwebsocket|spiceproxy|mtunnel|mtunnelwebsocket|dbus-vmstate",
	"/nodes/{node}/qemu|lxc/{vmid}/status/current|start|stop|reset|shutdown|reboot|suspend|resume",
	"/nodes/{node}/qemu|lxc/{vmid}/cloudinit/dump",
	"/nodes/{node}/qemu|lxc/{vmid}/agent/" + agentCommands,
	"/nodes/{node}/qemu|lxc/{vmid}/snapshot/{snapname}/config|rollback",
	"/nodes/{node}/qemu|lxc/{vmid}/firewall/rules/{pos}",
	"/nodes/{node}/qemu|lxc/{vmid}/firewall/aliases/{name}",
	"/nodes/{node}/qemu|lxc/{vmid}/firewall/ipset/{name}/{cidr}",
	"/nodes/{node}/qemu|lxc/{vmid}/firewall/options|log|refs",
	"/nodes/{node}/tasks/{upid}/log|status",
	"/nodes/{node}/storage/{storage}/content/{volume}",
	"/nodes/{node}/storage/{storage}/status|rrd|rrddata|upload|download-url|oci-registry-pull|import-metadata|prunebackups",
	"/nodes/{node}/storage/{storage}/file-restore/list|download",
	"/nodes/{node}/network/{iface}",
	"/nodes/{node}/services/{service}/state|start|stop|restart|reload",
	"/nodes/{node}/" + nodeSubtrees,
	"/cluster/" + clusterSubtrees,
	"/cluster/backup/{id}/included_volumes",
	"/cluster/sdn/vnets",
	"/nodes/{node}/certificates/info|custom",
	"/cluster/ha/resources/{sid}/migrate|relocate",
	"/cluster/ha/groups/{group}",
	"/cluster/ha/status/current|manager_status",
	"/access/users/{userid}/token/{tokenid}",
	"/access/users/{userid}/tfa|unlock-tfa",
	"/access/groups/{groupid}",
	"/access/roles/{roleid}",
	"/access/domains/{realm}/sync",
	"/access/tfa/{userid}/{id}",
	"/access/ticket|vncticket|password|permissions|acl|openid",
	"/pools/{poolid}",
	"/storage/{storage}",
}

const (
	agentCommands = "fsfreeze-freeze|fsfreeze-status|fsfreeze-thaw|fstrim|get-fsinfo|get-host-name|" +
		"get-memory-block-info|get-memory-blocks|get-osinfo|get-time|get-timezone|get-users|get-vcpus|info|" +
		"network-get-interfaces|ping|shutdown|suspend-disk|suspend-hybrid|suspend-ram|set-user-password|" +
		"exec|exec-status|file-read|file-write"
	nodeSubtrees = "status|version|time|dns|hosts|syslog|journal|rrd|rrddata|netstat|execute|wakeonlan|report|" +
		"subscription|config|aplinfo|query-oci-repo-tags|query-url-metadata|startall|stopall|suspendall|migrateall|vzdump|" +
		"termproxy|vncshell|vncwebsocket|spiceshell|capabilities|hardware|scan|apt|disks|ceph|certificates|" +
		"replication|firewall|sdn"
	clusterSubtrees = "resources|nextid|status|tasks|options|log|config|replication|metrics|notifications|firewall|" +
		"backup|backup-info|ha|acme|ceph|jobs|mapping|bulk-action|sdn"
)

// routes is routeGrammar as a tree; read-only once built.
var routes = newRouteTree(routeGrammar)

// routeNode is one place in the path tree: static segments lead to their
// own node; any other segment is the parameter, when this place has one.
type routeNode struct {
	static map[string]*routeNode
	param  string // "{node}", or "" when only static segments may follow
	next   *routeNode
}

func newRouteTree(patterns []string) *routeNode {
	root := &routeNode{}
	for _, p := range patterns {
		root.add(strings.Split(strings.Trim(p, "/"), "/"))
	}
	return root
}

// add inserts the pattern segments segs below n.
func (n *routeNode) add(segs []string) {
	if len(segs) == 0 {
		return
	}
	seg := segs[0]
	if strings.HasPrefix(seg, "{") {
		if n.next == nil {
			n.param, n.next = seg, &routeNode{}
		}
		n.next.add(segs[1:])
		return
	}
	for _, word := range strings.Split(seg, "|") {
		child, ok := n.static[word]
		if !ok {
			if n.static == nil {
				n.static = map[string]*routeNode{}
			}
			child = &routeNode{}
			n.static[word] = child
		}
		child.add(segs[1:])
	}
}

// RouteTemplate maps a request's URL path (as sent, escaped; with or
// without the /api2/json prefix) to its route template by PVE's path
// grammar: /api2/json/nodes/pve1/qemu/100/config becomes
// /nodes/{node}/qemu/{vmid}/config. No name or id in the path survives.
func RouteTemplate(escapedPath string) string {
	p := strings.TrimPrefix(escapedPath, apiPath)
	var b strings.Builder
	n := routes
	for _, seg := range strings.Split(p, "/") {
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		if child, ok := n.static[seg]; ok {
			b.WriteString(seg)
			n = child
			continue
		}
		if n.next == nil {
			b.WriteString(UnknownRoute)
			break
		}
		b.WriteString(n.param)
		n = n.next
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}
