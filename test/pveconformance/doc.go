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
// (QEMU create, clone, config, snapshots, agent and go-proxmox's traps;
// the go-proxmox LXC lifecycle, LXC create, config and texts; storage,
// download-url, OCI pulls, pools and certificates through go-proxmox;
// tasks and warnings, migration and its preconditions, locks, storage
// import, network, SDN); a case that needs what only the simulator can
// stage (a task slowed down to be seen running, a guest with host devices
// or a backup lock, a shared storage, an HA resource, an agent that starts
// answering, a short config-lock timeout, storage content types, URLs and
// faults it serves) asks tcase.requireSim and skips on a real target
// saying why. What stays in internal/pvesim is its own machinery (admin
// API, persistence, listeners, holds, faults, fuzz, benchmarks, the schema
// and route checks). A new case follows the same recipe: tg := target(t,
// opts) (opts apply to the simulator only), tg.raw / tg.data / tg.mustTask
// for the wire, tg.goClient() where what go-proxmox makes of an answer
// matters, VMIDs from tg.vmid(), names from tg.GuestName, "pool" tg.Pool()
// on every guest it creates, covers(tg, ...) naming the endpoints and
// parameters it exercises, and a comment citing the PVE sub behind each
// expectation; expected texts carrying a node or VMID are built from
// tg.Node() and the allocated VMID.
package pveconformance
