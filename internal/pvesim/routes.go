package pvesim

import "net/http"

// routeTables are the per-file route registrations. Each API area lives in its own file
// and adds its table from init, so new areas need no edit here.
var routeTables []func(*router)

// addRouteTable is called from init functions only.
func addRouteTable(f func(*router)) { routeTables = append(routeTables, f) }

func init() {
	addRouteTable(registerClusterRoutes)
	addRouteTable(registerTaskRoutes)
}

func registerRoutes(r *router) {
	for _, f := range routeTables {
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
