package pvesim

import "net/http"

// routeTables lists every API area's registration function. A Server builds its router
// from this list, and RouteSpecs reads the same list, so the schema conformance test
// checks exactly what is served. A new area adds its function here.
func routeTables() []func(*router) {
	return []func(*router){
		registerClusterRoutes,
		registerTaskRoutes,
		registerQemuRoutes,
		registerLXCRoutes,
		registerStorageRoutes,
		registerDownloadMetadataRoutes,
		registerPoolRoutes,
		registerCertRoutes,
		registerNetworkRoutes,
		registerSDNRoutes,
	}
}

func registerRoutes(r *router) {
	for _, f := range routeTables() {
		f(r)
	}
}

func registerClusterRoutes(r *router) {
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/version"}, handleVersion)
	r.handle(RouteSpec{Method: http.MethodPost, Path: "/access/ticket", NoAuth: true, NoToken: true, Params: []ParamSpec{
		pString("username").req(), pString("password").req(), pBool("new-format"), pString("otp"), pString("path"),
		pString("privs"), pString("realm"), pString("tfa-challenge"),
	}}, handleCreateTicket).unlocked = true
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/cluster/resources", Params: []ParamSpec{
		pEnum("type", "vm", "storage", "node", "sdn"),
	}}, handleClusterResources)
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/cluster/nextid", Params: []ParamSpec{
		pInt("vmid").min(100).max(999999999),
	}}, handleNextID)
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/cluster/status"}, handleClusterStatus)
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/nodes"}, handleNodes)
	r.handle(RouteSpec{Method: http.MethodGet, Path: "/nodes/{node}/status", Params: []ParamSpec{pNode()}}, handleNodeStatus)
}
