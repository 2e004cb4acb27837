package pvesim

import (
	"fmt"
	"strconv"
	"strings"
)

// GET /nodes/{node}/lxc/{vmid}/interfaces: a running container's interfaces
// (pve-container src/PVE/API2/LXC.pm, ip).

// handleLXCInterfaces lists a running container's interfaces, loopback first. PVE's
// get_interfaces returns nothing (data null) when lxc-info finds no PID: a stopped
// container, or one that is not there.
func handleLXCInterfaces(s *Server, r *request) (any, error) {
	g, err := s.lxcGuestIfAny(r)
	if err != nil || g == nil || !g.running() {
		return nil, err
	}
	out := []map[string]any{lxcInterface("lo", "00:00:00:00:00:00", "127.0.0.1/8", "::1/128")}
	for _, k := range sortedKeys(g.Config) {
		keyPrefix, idx, ok := splitIndexed(k)
		if !ok || keyPrefix != "net" {
			continue
		}
		m, err := parsePropertyString(lxcNetFormat, g.Config[k])
		if err != nil {
			continue
		}
		name, hw := m["name"], m["hwaddr"]
		if name == "" {
			name = "eth" + strconv.Itoa(idx)
		}
		if hw == "" {
			hw = macFor(g.VMID, idx)
		}
		out = append(out, lxcInterface(name, hw, lxcIPv4(m["ip"], g.VMID, idx), lxcIPv6(m["ip6"], g.VMID, idx)))
	}
	return out, nil
}

func lxcInterface(name, hw, inet, inet6 string) map[string]any {
	addrs := []map[string]any{}
	add := func(cidr, typ string) {
		if cidr == "" {
			return
		}
		ip, prefixLen, _ := strings.Cut(cidr, "/")
		addrs = append(addrs, map[string]any{"ip-address": ip, "ip-address-type": typ, "prefix": atoiDefault(prefixLen, 0)})
	}
	add(inet, "inet")
	add(inet6, "inet6")
	m := map[string]any{"name": name, "hwaddr": hw, "hardware-address": hw, "ip-addresses": addrs}
	if inet != "" {
		m["inet"] = inet
	}
	if inet6 != "" {
		m["inet6"] = inet6
	}
	return m
}

// lxcIPv4 is the configured static address, or a deterministic lease for
// dhcp: the VMID's two low bytes, as a VM's agent reports, so every guest
// below VMID 65536 has its own address.
func lxcIPv4(ip string, vmid, idx int) string {
	switch ip {
	case "", "manual":
		return ""
	case "dhcp":
		return fmt.Sprintf("10.%d.%d.%d/24", 10+idx, (vmid>>8)&0xff, vmid&0xff)
	}
	return ip
}

func lxcIPv6(ip string, vmid, idx int) string {
	switch ip {
	case "", "manual":
		return fmt.Sprintf("fe80::be24:11ff:fe%02x:%02x%02x/64", (vmid>>8)&0xff, vmid&0xff, idx)
	case "dhcp", "auto":
		return fmt.Sprintf("fd00:%x::%x/64", idx, vmid)
	}
	return ip
}
