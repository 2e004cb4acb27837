// Package pveconformance is the conformance suite: what Proxmox VE does on
// the wire, checked against a Target, the simulator (internal/pvesim) by
// default and a real PVE 9.x when PVE_ENDPOINT and credentials are set (see
// config.go for the variables and docs/guides/simulator-and-conformance.md,
// "Conformance suite and make e2e-real against a real cluster"). Every expectation cites the PVE source it comes from:
// repository, file and sub.
//
// Targets. NewSimTarget starts a simulator seeded with root@pam (password
// and token), a pool, a QEMU template and a container template. NewRealTarget
// connects to the cluster the environment names; CheckRange refuses to run
// when its VMID range holds any guest, every guest is named GuestName (Prefix,
// the run id, a purpose) and goes into the given pool, and Cleanup (also the
// `go run ./cmd/pve-conformance cleanup` subcommand) removes every guest in
// the range named with Prefix and every Prefix file on the content storage.
// Behaviours only the simulator can stage (faults, a node offline, the
// /cluster/resources lag, timed tasks) ask Target.Sim() and skip on a real
// target saying why.
//
// Coverage. internal/clients/proxmox/surface lists every request and
// parameter the client layer sends (its simulator-backed tests fail on one
// missing there). Each case here declares what it covers with
// covers(t, tg, "METHOD /route param ..."); the declaration is checked when
// the case ends (the request was sent, with those parameters) and
// TestConformanceCoversClientSurface reads every declaration from the
// source and fails on an endpoint or parameter of the surface without one.
//
// Where the tests are. The behaviour tests of internal/pvesim moved here
// (LXC create, config and texts, snapshots, tasks and warnings, download-url,
// certificates, migration and its preconditions, locks, storage import,
// network, SDN); a case that needs what only the simulator can stage (a
// guest with host devices or a backup lock, a shared storage, an HA
// resource, a timed task, a short config-lock timeout, storage content
// types) asks tcase.requireSim and skips on a real target saying why. What
// stays in internal/pvesim: its own machinery (admin API, persistence,
// listeners, holds, faults, fuzz, benchmarks, the schema and route checks)
// and, still to move, conformance_test.go (QEMU create, clone, config,
// snapshot and agent cases), conformance_lxc_test.go (the go-proxmox LXC
// lifecycle) and conformance_storage_test.go (go-proxmox decoding of
// storage, pools and certificates): they are written on go-proxmox and the
// simulator's seeding, and move with the same recipe:
//
//	startSim(t, opts)             -> tg := target(t, opts) (opts apply to the simulator only)
//	tokenClient(t, sim)           -> tg.Client() (go-proxmox; the token, else the password)
//	rawCall(t, sim, m, p, ...)    -> tg.raw(m, p, Params(k, v, ...)); tg.data(p, params, &v) for a GET
//	waitTask / wantTaskFailure    -> tg.task(upid) returns the exit status; tg.mustTask(m, p, params)
//	sim.AddGuest(...) of a VM     -> tg.createVM(purpose, extra params...) / tg.createCT(...),
//	                                 or tg.seedGuest(sim, seed) for a simulator-only fixture
//	a literal VMID                -> tg.vmid() (a fresh id of the range)
//	sim.AddTemplate(...)          -> tg.Config().TemplateVMID (seeded on the simulator)
//	"/nodes/pve/qemu/100/config"  -> tg.guestPath("qemu", id, "/config")
//	sim.<staging>(...)            -> sim := tg.requireSim("why a real PVE cannot do it")
//	inside t.Run                  -> tg := tg.in(t)
//
// then covers(tg, ...) naming the endpoints and parameters it exercises,
// and a comment citing the PVE sub behind each expectation. A guest it
// creates outside createVM/createCT gets tg.GuestName(purpose) and
// "pool", tg.Pool(), so a real run can clean it up; expected texts carrying
// a node or VMID are built from tg.Node() and the allocated VMID.
package pveconformance
