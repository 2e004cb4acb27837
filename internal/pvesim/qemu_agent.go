package pvesim

import (
	"fmt"
	"strings"
	"time"
)

// The QEMU guest agent under /nodes/{node}/qemu/{vmid}/agent (qemu-server
// src/PVE/API2/Qemu/Agent.pm): ping, OS info and network interfaces.

// agentEnabled reads the running config's agent property string.
func agentEnabled(g *guest) bool {
	v, ok := g.Config["agent"]
	if !ok {
		return false
	}
	m, err := parsePropertyString(agentFormat, v)
	return err == nil && m["enabled"] == "1"
}

// agentReady reproduces PVE's three agent errors, in PVE's order.
func (s *Server) agentReady(r *request) (*guest, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if !agentEnabled(g) {
		return nil, errInternal("No QEMU guest agent configured")
	}
	if !g.running() {
		return nil, errInternal("VM %d is not running", g.VMID)
	}
	if g.Paused || time.Since(g.StartedAt) < s.opts.AgentStartDelay {
		return nil, errInternal("QEMU guest agent is not running")
	}
	return g, nil
}

func handleAgentPing(s *Server, r *request) (any, error) {
	if _, err := s.agentReady(r); err != nil {
		return nil, err
	}
	return nil, nil
}

func handleAgentOSInfo(s *Server, r *request) (any, error) {
	if _, err := s.agentReady(r); err != nil {
		return nil, err
	}
	return map[string]any{"result": map[string]any{
		"id": "debian", "name": "Debian GNU/Linux", "pretty-name": "Debian GNU/Linux 12 (bookworm)",
		"version": "12 (bookworm)", "version-id": "12", "kernel-release": "6.1.0-28-amd64",
		"kernel-version": "#1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1 (2024-11-22)", "machine": "x86_64",
	}}, nil
}

// handleAgentInterfaces answers lo first, then one interface per NIC with a deterministic
// address: the ipconfigN static IP when set, else 10.0.(vmid/256).(vmid%256)/24 on the first.
func handleAgentInterfaces(s *Server, r *request) (any, error) {
	g, err := s.agentReady(r)
	if err != nil {
		return nil, err
	}
	ifaces := []map[string]any{{
		"name": "lo", "hardware-address": "00:00:00:00:00:00",
		"ip-addresses": []map[string]any{
			{"ip-address-type": "ipv4", "ip-address": "127.0.0.1", "prefix": 8},
			{"ip-address-type": "ipv6", "ip-address": "::1", "prefix": 128},
		},
		"statistics": ifaceStats(),
	}}
	for i := 0; i <= 31; i++ {
		net, ok := g.Config[fmt.Sprintf("net%d", i)]
		if !ok {
			continue
		}
		m, _ := parsePropertyString(qemuNetFormat, net)
		ip4, prefixLen := guestIPv4(g, i)
		ifaces = append(ifaces, map[string]any{
			"name": fmt.Sprintf("eth%d", i), "hardware-address": strings.ToLower(m["macaddr"]),
			"ip-addresses": []map[string]any{
				{"ip-address-type": "ipv4", "ip-address": ip4, "prefix": prefixLen},
				{"ip-address-type": "ipv6", "ip-address": fmt.Sprintf("fd00::%x:%x", g.VMID, i), "prefix": 64},
			},
			"statistics": ifaceStats(),
		})
	}
	return map[string]any{"result": ifaces}, nil
}

func ifaceStats() map[string]any {
	return map[string]any{"rx-bytes": 1024, "rx-packets": 10, "rx-errs": 0, "rx-dropped": 0,
		"tx-bytes": 2048, "tx-packets": 20, "tx-errs": 0, "tx-dropped": 0}
}

func guestIPv4(g *guest, idx int) (string, int) {
	if ipc, ok := g.Config[fmt.Sprintf("ipconfig%d", idx)]; ok {
		m, err := parsePropertyString(ipconfigFormat, ipc)
		if ip := m["ip"]; err == nil && ip != "" && ip != "dhcp" {
			addr, bits, _ := strings.Cut(ip, "/")
			return addr, atoiDefault(bits, 24)
		}
	}
	return fmt.Sprintf("10.%d.%d.%d", idx, g.VMID/256%256, g.VMID%256), 24
}
