// Package pvesim simulates the Proxmox VE 9.1 API (/api2/json) closely enough that
// go-proxmox and our provider cannot tell it from a real cluster where it matters: wire
// typing, error envelopes, tickets and API tokens, asynchronous tasks with real-format
// UPIDs, config locks, pending changes, clone/create semantics and the eventually
// consistent /cluster/resources.
//
// # In-process use
//
//	sim, err := pvesim.Start(pvesim.Options{Nodes: []string{"pve"}})
//	defer sim.Close()
//	sim.AddUser("root@pam", "secret")
//	sim.AddToken("root@pam!kubemox", "uuid-secret")
//	_ = sim.AddTemplate("pve", 9000, "debian-12")
//	client := proxmox.NewClient(sim.APIURL(), ...) // trust sim.CAPEM()
//
// Every Start generates a fresh ECDSA CA and a serving certificate for 127.0.0.1, ::1 and
// localhost; CAPEM is usable as a ProxmoxConnection caBundle.
//
// # Admin API
//
// Outside /api2, on the same listener, without PVE authentication. Answers use the
// {"data": ...} envelope; errors carry "message".
//
//   - GET  /_sim/state: {"guests": [GuestView], "tasks": [{upid,node,type,id,user,status,exitstatus}],
//     "locks": {vmid: lock}, "counters": {"byEndpoint": {"GET /nodes/{node}/qemu/{vmid}/config": n},
//     "byCredential": {"root@pam!kubemox": n}, "byCredentialSecret": {fingerprint: n}}}
//   - POST /_sim/reset: restore the baseline guests/volumes/pools, drop tasks, clear faults and counters.
//   - POST /_sim/baseline: make the current guests/volumes/pools the reset baseline.
//   - PUT  /_sim/faults: {"rules": [{"method": "POST", "pathPattern": "/nodes/*/qemu/*/clone",
//     "errorRate": 1, "status": 500, "message": "...", "latency": "250ms", "latencyRate": 0.05 (a
//     fraction of the matching requests delayed; 0 or absent: all), "taskFailureRate": 1,
//     "taskFailureMessage": "..."}], "drops": [{"method": "POST", "pathPattern": "..."}],
//     "holds": [{"method": "POST", "pathPattern": "/nodes/*/qemu/*/clone"}]}.
//     Replaces the rules and adds to the armed drops and holds, each one-shot: a drop applies
//     the next matching request, then closes the connection without an answer; a hold applies
//     it, then keeps its response back until released. A pathPattern starting with "^" is a
//     regular expression, any other a path.Match pattern over the path below /api2/json; an
//     invalid one is a 400 and arms nothing. Answers {"holds": [HoldView]}, the holds it armed.
//   - GET  /_sim/holds: [{"id": 1, "method", "pathPattern", "path": the request caught,
//     "state": "armed"|"held"|"released", "heldSince": RFC 3339}], in arming order (the
//     last 100 released ones kept). ?id=N lists one hold. ?wait=held (or armed, released)
//     first waits until a listed hold is in that state, at most ?timeout= (default 30s, at
//     most 10m), then answers the listing; 504 on timeout, 404 if the awaited id is unknown.
//     A script needs no loop: curl -fsk "$SIM/_sim/holds?id=1&wait=held&timeout=60s".
//   - POST /_sim/holds/{id}/release: sends a held response, or disarms an armed hold; answers
//     the HoldView. POST /_sim/holds/release-all does it for every hold and answers all.
//     POST /_sim/reset and Server.Close release every hold and forget them, so no handler
//     stays parked. In Go: Server.HoldResponse (Hold.Held closes when held), Server.Holds.
//   - PUT  /_sim/tokens: {"tokenid": "root@pam!kubemox", "secret": "..."} adds or rotates;
//     {"tokenid": "...", "delete": true} revokes.
//   - PUT  /_sim/users: {"userid": "root@pam", "password": "..."} adds or changes the password
//     (tickets already issued stay valid, as in PVE); {"userid": "...", "delete": true} removes.
//   - POST /_sim/guests: {"kind": "qemu"|"lxc", "node", "vmid", "config": {...}, "running", "template"}
//     seeds a guest; {"action": "template", "node", "vmid", "name"} seeds a cloud-init template;
//     {"action": "drift", "vmid", "config": {"key": "value" or "" to delete}, "status": "running"|"stopped",
//     "node": "other"} changes a guest behind the provider's back.
//   - POST /_sim/volumes: {"node": "pve", "volid": "local:iso/debian.iso"} adds a file volume.
//   - POST /_sim/vnets: {"vnet": "vnet1", "zone": "zone1", "tag": 100, "alias", "vlanaware",
//     "pending"} adds an SDN VNet (GET /cluster/sdn/vnets): applied, a bridge on every node;
//     pending: true, only in the configuration, no node's bridge yet.
//   - GET  /_sim/listeners: [{"index", "url", "up"}], Options.Listen first, then ExtraListen: several
//     pveproxies in front of one cluster state. POST /_sim/listeners/{i}/down closes listener i
//     (connecting is refused, open connections are cut; through listener i itself, once the answer
//     is sent); POST /_sim/listeners/{i}/up serves it again on the same address.
//   - POST /_sim/nodes/{node}/offline, optional body {"reason": "No route to host"|"Connection refused"}:
//     the node is unreachable from the others. Every /nodes/{node}/... request answers pveproxy's
//     "595 <reason>" with an empty body; /cluster/resources shows the node "offline" and its guests'
//     status "unknown"; /nodes and /cluster/status show it offline. POST /_sim/nodes/{node}/online
//     brings it back.
//   - PUT /_sim/nodes/{node}/memory, body {"total": bytes, "used": bytes}: the node's memory as
//     pvestatd reports it (maxmem and mem in /cluster/resources, /nodes, the node's status;
//     Options.NodeMemory at start, 64 GiB with 8 GiB used by default).
//
// # Counters
//
// ByEndpoint counts routed requests that passed authentication (POST /access/ticket,
// which needs none, included) by method and path template; a 401 is not counted.
// ByCredential and ByCredentialSecret count authenticated requests; the secret fingerprint is hex of
// sha256(secret)[:8] (CredentialFingerprint) of the token secret, or of the password the
// ticket was obtained with, so a test can tell an old secret from a rotated one.
// RejectedBySecret counts 401 answers by the fingerprint of the token secret presented
// ("ticket" for a rejected ticket, "none" without credentials): a revoked secret still
// being sent shows there. With Options.LogRequests, RequestLog keeps every counted or
// rejected request (time, method, concrete path, fingerprint) until ResetCounters.
//
// # /cluster/resources
//
// Guest status, name, uptime and template lag behind every change by Options.ResourcesLag
// (a new guest first shows status "unknown"); lock, tags, node, pool and the config-derived
// maxcpu/maxmem/maxdisk are live. Like PVE, which serves the listing from pvestatd's
// periodic snapshot, the encoded answer is cached per type filter; the copy is dropped on
// every state change, when a lagged view comes due and when a shown uptime reaches its
// next second, so what a client reads is the same as a fresh build. Each guest keeps its
// encoded row and maxima until it changes; see resources_cache.go.
//
// # Adding an API area
//
// Every route is one row of routeTable (routes.go) under its full path as PVE's schema
// writes it ("/nodes/{node}/lxc/{vmid}/migrate"), so searching for a URL finds its row and
// handler; there is no init-time registration. A row is a RouteSpec (method, path template,
// parameters; path parameters included as PVE's schema has them) plus a handlerFunc that
// runs with the state lock held. Handlers live in a file named after their API area
// (qemu_snapshot.go serves /nodes/{node}/qemu/{vmid}/snapshot). Parameters are validated from the spec before the handler runs, and
// RouteSpecs exports every spec for the schema conformance test. Asynchronous calls use
// startTask with a taskDef; guests of both kinds are *guest values in state.guests.
// Volumes are added and removed with storage.addVolume and storage.removeVolume, which
// keep the index that picks free disk names.
package pvesim
