package pvesim

// The node list and a node's status under /nodes (pve-manager PVE/API2/Nodes.pm).

// Host figures every simulated node reports.
const (
	nodeCPUs   = 16
	nodeMemory = 64 * gib
	nodeUptime = 864000
)

func handleNodes(s *Server, _ *request) (any, error) {
	out := make([]map[string]any, 0, len(s.st.nodes))
	for _, n := range s.st.nodes {
		if s.nodeOffline(n) {
			out = append(out, map[string]any{"node": n, "id": "node/" + n, "type": "node", "status": "offline", "level": ""})
			continue
		}
		m := s.memory.get(n)
		out = append(out, map[string]any{
			"node": n, "id": "node/" + n, "type": "node", "status": "online", "cpu": 0.02, "maxcpu": nodeCPUs,
			"mem": m.Used, "maxmem": m.Total, "disk": 10 * gib, "maxdisk": 100 * gib, "uptime": nodeUptime, "level": "",
			"ssl_fingerprint": "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF",
		})
	}
	return out, nil
}

func handleNodeStatus(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	m := s.memory.get(r.node())
	return map[string]any{
		"uptime": nodeUptime, "cpu": 0.02, "wait": 0.0, "idle": 0,
		"loadavg":    []string{"0.10", "0.12", "0.09"},
		"kversion":   "Linux 6.17.2-1-pve #1 SMP PREEMPT_DYNAMIC PMX 6.17.2-1 (2025-11-05T09:00Z) x86_64",
		"pveversion": "pve-manager/" + pveVersion + "/" + pveRepoID,
		"memory":     map[string]any{"total": m.Total, "used": m.Used, "free": m.Total - m.Used, "available": m.Total - m.Used},
		"swap":       map[string]any{"total": 8 * gib, "used": 0, "free": 8 * gib},
		"rootfs":     map[string]any{"total": 100 * gib, "used": 10 * gib, "free": 90 * gib, "avail": 85 * gib},
		"ksm":        map[string]any{"shared": 0},
		"cpuinfo": map[string]any{"cpus": nodeCPUs, "cores": nodeCPUs / 2, "sockets": 1, "model": "pvesim Virtual CPU",
			"mhz": "2995.200", "hvm": "1", "user_hz": 100, "flags": "fpu vme de pse tsc msr pae mce cx8 apic sep"},
		"boot-info":      map[string]any{"mode": "efi", "secureboot": 0},
		"current-kernel": map[string]any{"sysname": "Linux", "release": "6.17.2-1-pve", "machine": "x86_64"},
	}, nil
}
