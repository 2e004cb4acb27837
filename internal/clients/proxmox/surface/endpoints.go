package surface

import "strings"

// Parameter sets the client renders from a guest's spec (vm_spec.go,
// lxc_spec.go). Keys a user adds through additionalConfig are theirs and not
// listed, except those the provider's own tests send.
const (
	qemuSpecParams = "name description cores sockets memory hostpci[n] scsihw boot scsi[n] virtio[n] sata[n] ide[n] net[n] " +
		"ciuser cipassword sshkeys searchdomain nameserver ciupgrade ipconfig[n] cicustom tags onboot agent cpu numa balloon"
	lxcSpecParams = "hostname description cores memory swap rootfs mp[n] net[n] features tags onboot nameserver searchdomain"
)

// endpoints is the client layer's surface (internal/clients/proxmox: the
// paths it builds and the parameters it sends). Add an entry when the
// client starts sending a new request or parameter (its tests say which),
// and a conformance case for it in test/pveconformance.
var endpoints = join(
	[]Endpoint{
		ep("GET /version"),
		ep("POST /access/ticket", "username password"),
		ep("GET /cluster/resources", "type"),
		ep("GET /cluster/nextid", "vmid"),
		ep("GET /cluster/sdn/vnets"),
		ep("GET /cluster/ha/resources", "type"),
		ep("POST /cluster/ha/resources", "sid state max_restart max_relocate failback"),
		ep("PUT /cluster/ha/resources/{sid}", "state max_restart max_relocate failback"),
		ep("DELETE /cluster/ha/resources/{sid}"),
		ep("GET /nodes"),
		ep("GET /nodes/{node}/network", "type"),
		ep("GET /nodes/{node}/storage"),
		ep("GET /nodes/{node}/storage/{storage}/status"),
		ep("GET /nodes/{node}/storage/{storage}/content", "content"),
		ep("GET /nodes/{node}/storage/{storage}/content/{volume}"),
		ep("DELETE /nodes/{node}/storage/{storage}/content/{volume}"),
		ep("POST /nodes/{node}/storage/{storage}/download-url", "content filename url checksum checksum-algorithm compression verify-certificates"),
		ep("POST /nodes/{node}/storage/{storage}/oci-registry-pull", "reference"),
		ep("GET /nodes/{node}/query-url-metadata", "url verify-certificates"),
		ep("GET /nodes/{node}/certificates/info"),
		ep("POST /nodes/{node}/certificates/custom", "certificates key force restart"),
		ep("DELETE /nodes/{node}/certificates/custom", "restart"),
		ep("GET /nodes/{node}/tasks", "vmid source limit"),
		ep("GET /nodes/{node}/tasks/{upid}/status"),
		ep("GET /nodes/{node}/tasks/{upid}/log", "start limit"),
		ep("POST /nodes/{node}/qemu", "vmid "+qemuSpecParams),
		ep("POST /nodes/{node}/lxc", "vmid ostemplate unprivileged password ssh-public-keys "+lxcSpecParams),
		ep("PUT /nodes/{node}/qemu/{vmid}/config", "delete "+qemuSpecParams),
		ep("POST /nodes/{node}/qemu/{vmid}/config", "delete "+qemuSpecParams),
		ep("PUT /nodes/{node}/lxc/{vmid}/config", "delete "+lxcSpecParams),
		ep("POST /nodes/{node}/qemu/{vmid}/clone", "newid full name description target storage pool"),
		ep("POST /nodes/{node}/lxc/{vmid}/clone", "newid full hostname description target storage pool"),
		ep("POST /nodes/{node}/qemu/{vmid}/migrate", "target online with-local-disks targetstorage"),
		ep("POST /nodes/{node}/lxc/{vmid}/migrate", "target restart timeout target-storage"),
		ep("GET /nodes/{node}/qemu/{vmid}/migrate", "target"),
		ep("GET /nodes/{node}/lxc/{vmid}/migrate", "target"),
		ep("GET /nodes/{node}/qemu/{vmid}/cloudinit"),
		ep("GET /nodes/{node}/qemu/{vmid}/agent/network-get-interfaces"),
		ep("GET /nodes/{node}/qemu/{vmid}/agent/get-osinfo"),
		ep("GET /nodes/{node}/lxc/{vmid}/interfaces"),
		ep("POST /nodes/{node}/qemu/{vmid}/snapshot", "snapname description vmstate"),
		ep("POST /nodes/{node}/lxc/{vmid}/snapshot", "snapname description"),
	},
	bothTypes(
		ep("GET /nodes/{node}/{type}/{vmid}/pending"),
		ep("GET /nodes/{node}/{type}/{vmid}/status/current"),
		ep("POST /nodes/{node}/{type}/{vmid}/status/start"),
		ep("POST /nodes/{node}/{type}/{vmid}/status/stop"),
		ep("POST /nodes/{node}/{type}/{vmid}/status/shutdown", "forceStop timeout"),
		ep("POST /nodes/{node}/{type}/{vmid}/status/reboot", "timeout"),
		ep("PUT /nodes/{node}/{type}/{vmid}/resize", "disk size"),
		ep("DELETE /nodes/{node}/{type}/{vmid}", "purge destroy-unreferenced-disks"),
		ep("POST /nodes/{node}/{type}/{vmid}/template"),
		ep("GET /nodes/{node}/{type}/{vmid}/snapshot"),
		ep("DELETE /nodes/{node}/{type}/{vmid}/snapshot/{snapname}"),
		ep("POST /nodes/{node}/{type}/{vmid}/snapshot/{snapname}/rollback"),
		ep("PUT /nodes/{node}/{type}/{vmid}/snapshot/{snapname}/config", "description"),
	),
)

// ep builds an endpoint from "METHOD /route" and space-separated params.
func ep(key string, params ...string) Endpoint {
	method, route, _ := strings.Cut(key, " ")
	return Endpoint{Method: method, Route: route, Params: strings.Fields(strings.Join(params, " "))}
}

// bothTypes instantiates routes written with {type} for qemu and lxc.
func bothTypes(es ...Endpoint) []Endpoint {
	out := make([]Endpoint, 0, 2*len(es))
	for _, e := range es {
		for _, t := range []string{"qemu", "lxc"} {
			c := e
			c.Route = strings.Replace(e.Route, "{type}", t, 1)
			out = append(out, c)
		}
	}
	return out
}

func join(lists ...[]Endpoint) []Endpoint {
	var out []Endpoint
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
