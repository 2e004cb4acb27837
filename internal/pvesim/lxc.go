package pvesim

import (
	"net/http"
	"strconv"
)

// LXC containers as pve-container serves them under /nodes/{node}/lxc: the routes,
// helpers every container endpoint shares, and destroy_vm (pve-container src/PVE/API2/LXC.pm).

func registerLXCRoutes(r *router) {
	base := "/nodes/{node}/lxc"
	vm := base + "/{vmid}"
	nv := func(extra ...ParamSpec) []ParamSpec { return append([]ParamSpec{pNode(), pVMID()}, extra...) }
	snap := pString("snapname").req().pattern(`[a-zA-Z][a-zA-Z0-9_\-]*`)
	r.handle(RouteSpec{Method: http.MethodGet, Path: base, Params: []ParamSpec{pNode()}}, handleLXCList)
	r.handle(RouteSpec{Method: http.MethodPost, Path: base, Params: lxcCreateParams()}, handleLXCCreate)
	r.handle(RouteSpec{Method: http.MethodDelete, Path: vm, Params: nv(pBool("destroy-unreferenced-disks"), pBool("force"), pBool("purge"))}, handleLXCDelete)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/config", Params: nv(pBool("current"), pString("snapshot"))}, handleLXCConfigGet)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/config", Params: lxcUpdateParams()}, handleLXCConfigPut)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/pending", Params: nv()}, handleLXCPending)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/clone", Params: nv(
		pInt("newid").req().min(100).max(999999999), pNumber("bwlimit").min(0), pString("description"), pBool("full"),
		pString("hostname"), pString("pool"), pString("snapname"), pString("storage"), optionalTargetNode(),
	)}, handleLXCClone)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/status/current", Params: nv()}, handleLXCStatus)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/start", Params: nv(pBool("debug"), pBool("skiplock"))}, handleLXCStart)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/stop", Params: nv(pBool("overrule-shutdown"), pBool("skiplock"))}, handleLXCStop)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/shutdown", Params: nv(pBool("forceStop"), pInt("timeout").min(0))}, handleLXCShutdown)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/status/reboot", Params: nv(pInt("timeout").min(0))}, handleLXCReboot)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/resize", Params: nv(
		ParamSpec{Name: "disk", Type: TypeString, Required: true, Enum: lxcDiskEnum()},
		pString("size").req().pattern(`\+?\d+(\.\d+)?[KMGT]?`), pString("digest"),
	)}, handleLXCResize)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/snapshot", Params: nv()}, handleLXCSnapshotList)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/snapshot", Params: nv(snap, pString("description"))}, handleLXCSnapshotCreate)
	r.handle(RouteSpec{Method: http.MethodDelete, Path: vm + "/snapshot/{snapname}", Params: nv(snap, pBool("force"))}, handleLXCSnapshotDelete)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/snapshot/{snapname}/rollback", Params: nv(snap, pBool("start"))}, handleLXCRollback)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/snapshot/{snapname}/config", Params: nv(snap)}, handleLXCSnapshotConfigGet)
	r.handle(RouteSpec{Method: http.MethodPut, Path: vm + "/snapshot/{snapname}/config", Params: nv(snap, pString("description"))}, handleLXCSnapshotConfigPut)
	r.handle(RouteSpec{Method: http.MethodPost, Path: vm + "/template", Params: nv()}, handleLXCTemplate)
	r.handle(RouteSpec{Method: http.MethodGet, Path: vm + "/interfaces", Params: nv()}, handleLXCInterfaces)
	registerLXCMigrateRoutes(r, vm, nv)
}

// optionalTargetNode is the optional target parameter in pve-node format (clone, migrate, storage).
func optionalTargetNode() ParamSpec {
	p := pNode()
	p.Name, p.Required = "target", false
	return p
}

func (s *Server) lxcGuest(r *request) (*guest, error) {
	return s.guestOn(KindLXC, r.node(), r.vmid())
}

// lxcCheckDigest fails a request whose digest no longer matches the config.
func lxcCheckDigest(g *guest, r *request) error {
	if r.has("digest") && r.str("digest") != g.digest() {
		return errInternal("detected modified configuration - file changed by other user? Try again.")
	}
	return nil
}

// lxcVMIDUsedErr is PVE::Cluster::check_vmid_unused's message.
func lxcVMIDUsedErr(g *guest) error {
	typ := "VM"
	if g.Kind == KindLXC {
		typ = "CT"
	}
	return errInternal("%s %d already exists on node '%s'", typ, g.VMID, g.Node)
}

func handleLXCDelete(s *Server, r *request) (any, error) {
	g, err := s.lxcGuest(r)
	if err != nil {
		return nil, err
	}
	if g.Config["protection"] == "1" {
		return nil, errInternal("can't remove CT %d - protection mode enabled", g.VMID)
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	if g.HAManaged && !r.bool("purge") {
		return nil, errInternal("unable to remove CT %d - used in HA resources and purge parameter not set.", g.VMID)
	}
	if g.running() && !r.bool("force") {
		return nil, errInternal("unable to destroy CT %d - container is running", g.VMID)
	}
	unreferenced := r.bool("destroy-unreferenced-disks")
	return s.startTask(r, taskDef{Type: "vzdestroy", ID: strconv.Itoa(g.VMID), Node: g.Node,
		Begin: func(t *task) error {
			if g.running() {
				// A plain warn: it is only logged, the task still ends OK.
				t.logf("forced to stop CT %d before destroying!", g.VMID)
				s.setStatus(g, StatusStopped)
			}
			g.Config["lock"] = "destroyed"
			return nil
		},
		Finish: func(*task) error {
			s.freeGuestVolumes(g)
			if unreferenced {
				s.freeOwnedVolumes(g.Node, g.VMID)
			}
			s.removeGuest(g)
			return nil
		},
		OnFail: func() { delete(g.Config, "lock") },
	}), nil
}
