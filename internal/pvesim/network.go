package pvesim

import (
	"fmt"
	"slices"
)

// defaultBridge is the bridge every node of a fresh cluster has, as a PVE install makes it.
const defaultBridge = "vmbr0"

// nodeUplink is the physical port a node's default bridge uses.
const nodeUplink = "eno1"

// handleNetworkList lists a node's interfaces: its uplink, its Linux bridges and, for the
// types that include SDN (pve-manager PVE/API2/Network.pm, index), the VNets.
func handleNetworkList(s *Server, r *request) (any, error) {
	node := r.node()
	if err := s.checkNode(node); err != nil {
		return nil, err
	}
	want := r.str("type")
	out := []map[string]any{}
	if want == "" || want == "eth" || want == "include_sdn" {
		out = append(out, map[string]any{"iface": nodeUplink, "type": "eth", "active": 1, "exists": 1, "families": []string{"inet"}, "method": "manual", "priority": 1})
	}
	if slices.Contains([]string{"", "bridge", "any_bridge", "any_local_bridge", "include_sdn"}, want) {
		out = append(out, s.bridgeRows(node)...)
	}
	if slices.Contains([]string{"any_bridge", "include_sdn", "vnet"}, want) {
		out = append(out, s.st.localVNets()...)
	}
	return out, nil
}

// bridgeRows are the network listing's rows for a node's Linux bridges.
func (s *Server) bridgeRows(node string) []map[string]any {
	out := make([]map[string]any, 0, len(s.st.bridges[node]))
	for i, b := range s.st.bridges[node] {
		row := map[string]any{"iface": b, "type": "bridge", "active": 1, "autostart": 1, "families": []string{"inet"},
			"method": "manual", "bridge_stp": "off", "bridge_fd": "0", "priority": 2 + i}
		if b == defaultBridge {
			row["bridge_ports"] = nodeUplink
		}
		out = append(out, row)
	}
	return out
}

// AddBridge adds a Linux bridge to a node's network.
func (s *Server) AddBridge(node, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkNode(node); err != nil {
		return err
	}
	if !slices.Contains(s.st.bridges[node], name) {
		s.st.bridges[node] = append(s.st.bridges[node], name)
	}
	return nil
}

// missingBridge names the first bridge a VM's NICs use that its node lacks, or "".
func (s *Server) missingBridge(g *guest) (string, string) {
	for _, k := range sortedKeys(g.Config) {
		keyPrefix, _, ok := splitIndexed(k)
		if !ok || keyPrefix != "net" {
			continue
		}
		m, err := parsePropertyString(qemuNetFormat, g.Config[k])
		if err != nil {
			continue
		}
		if b := m["bridge"]; b != "" && !slices.Contains(s.st.bridges[g.Node], b) && !s.st.isVNet(b) {
			return k, b
		}
	}
	return "", ""
}

// failStartOnMissingBridge fails a start as QEMU does when pve-bridge cannot plug a NIC:
// the cause is in the log, the exit status only says QEMU exited.
func (s *Server) failStartOnMissingBridge(g *guest, t *task) error {
	key, bridge := s.missingBridge(g)
	if bridge == "" {
		return nil
	}
	_, idx, _ := splitIndexed(key)
	t.logf("bridge '%s' does not exist", bridge)
	t.logf("kvm: -netdev type=tap,id=%s,ifname=tap%di%d,script=/usr/libexec/qemu-server/pve-bridge,downscript=/usr/libexec/qemu-server/pve-bridgedown,vhost=on: network script /usr/libexec/qemu-server/pve-bridge failed with status 512", key, g.VMID, idx)
	return fmt.Errorf("start failed: QEMU exited with code 1")
}
