package pveconformance

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// The guards a real run relies on, staged on the simulator: CheckRange
// refuses a range holding anything, naming a foreign guest as never touched
// and a prefixed one as cleanup's; Cleanup removes the prefixed guests
// (running ones stopped first) and files, and leaves the foreign guest.
func TestRangeGuardAndCleanup(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("it stages a foreign guest inside the range")
	if err := tg.CheckRange(tg.ctx()); err != nil {
		t.Fatalf("empty range refused: %v", err)
	}
	ours := tg.createVM("leftover")
	tg.mustTask("POST", tg.guestPath("qemu", ours, "/status/start"), nil)
	foreign := tg.vmid()
	if err := sim.AddGuest(pvesim.GuestSeed{Node: tg.Node(), VMID: foreign, Config: map[string]string{"name": "someone-else", "scsi0": tg.Storage() + ":1"}}); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddFile(tg.Node(), tg.ContentStorage()+":iso/"+Prefix+"left.iso", 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := sim.AddFile(tg.Node(), tg.ContentStorage()+":iso/theirs.iso", 1<<20); err != nil {
		t.Fatal(err)
	}
	err := tg.CheckRange(tg.ctx())
	if !errors.Is(err, ErrRangeNotEmpty) || !strings.Contains(err.Error(), strconv.Itoa(foreign)+` (qemu "someone-else"`) ||
		!strings.Contains(err.Error(), "never touched") || !strings.Contains(err.Error(), "pve-conformance cleanup") {
		t.Fatalf("guard: %v", err)
	}
	var removed []string
	if err := tg.Cleanup(tg.ctx(), func(s string) { removed = append(removed, s) }); err != nil {
		t.Fatal(err)
	}
	if _, ok := sim.Guest(ours); ok {
		t.Errorf("cleanup left guest %d: %v", ours, removed)
	}
	if _, ok := sim.Guest(foreign); !ok {
		t.Errorf("cleanup removed the foreign guest %d", foreign)
	}
	if sim.HasVolume(tg.Node(), tg.ContentStorage()+":iso/"+Prefix+"left.iso") || !sim.HasVolume(tg.Node(), tg.ContentStorage()+":iso/theirs.iso") {
		t.Errorf("cleanup of files: %v", removed)
	}
}

// ConfigFromEnv: no endpoint is the simulator; an endpoint without the
// names the guards need is refused, naming every missing variable.
func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if _, isReal, err := ConfigFromEnv(get); isReal || err != nil {
		t.Fatalf("no endpoint: real=%v err=%v", isReal, err)
	}
	env[EnvEndpoint] = "https://pve.lab:8006"
	env[EnvTokenID], env[EnvTokenSecret] = "u@pve!t", "s"
	_, _, err := ConfigFromEnv(get)
	for _, v := range []string{EnvNode, EnvStorage, EnvPool, EnvVMIDRange} {
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("missing %s not named: %v", v, err)
		}
	}
	env[EnvNode], env[EnvStorage], env[EnvPool], env[EnvVMIDRange] = "pve1", "local-lvm", "ci", "9900-9949"
	cfg, isReal, err := ConfigFromEnv(get)
	if err != nil || !isReal || cfg.VMIDs != (VMIDRange{9900, 9949}) || cfg.ContentStorage != "local" {
		t.Fatalf("complete: %+v %v %v", cfg, isReal, err)
	}
	env[EnvVMIDRange] = "50-60"
	if _, _, err := ConfigFromEnv(get); err == nil {
		t.Error("a range below 100 must be refused")
	}
}
