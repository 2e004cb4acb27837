// Package e2ereal runs the provider end to end (a real kube-apiserver, the
// provider's manager in-process) against a pveconformance.Target: a real
// Proxmox VE 9.x with `make e2e-real` (PVE_ENDPOINT and the variables of
// test/pveconformance set), else the simulator, so the same test code runs
// in `make test` and does not rot.
//
// The guards are the conformance suite's: the VMID range must be empty
// before the run (CheckRange), every guest the provider creates is given a
// VMID of the range (its external name, set before the first reconcile) and
// a name starting with the suite's prefix, and everything so named is
// removed at the end (Target.Cleanup; `go run ./cmd/pve-conformance cleanup`
// after an interrupted run). The provider has no pool field, so on a real
// cluster its guests are not put in PVE_POOL.
package e2ereal
