package pvesim

import "testing"

// TestLXCDHCPLeasesDiffer checks that every container on dhcp gets its own
// address: PVE's containers take whatever the DHCP server hands out, which
// is one address per guest, and the provider reports it as the guest's
// ipAddress (VMIDs 100 and 101 both got 10.10.0.101 before). The address is read
// as PVE serves it: pve-container src/PVE/API2/LXC.pm, get_interfaces.
func TestLXCDHCPLeasesDiffer(t *testing.T) {
	seen := map[string]int{}
	for vmid := 100; vmid < 65536; vmid++ {
		ip := lxcIPv4("dhcp", vmid, 0)
		if other, dup := seen[ip]; dup {
			t.Fatalf("VMIDs %d and %d both lease %s", other, vmid, ip)
		}
		seen[ip] = vmid
	}
	if got, want := lxcIPv4("dhcp", 101, 1), "10.11.0.101/24"; got != want {
		t.Errorf("lease of net1 of CT 101: got %s, want %s", got, want)
	}
	if got, want := lxcIPv4("192.0.2.7/24", 101, 0), "192.0.2.7/24"; got != want {
		t.Errorf("a static address is reported as configured: got %s, want %s", got, want)
	}
}
