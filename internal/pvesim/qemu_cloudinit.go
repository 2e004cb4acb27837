package pvesim

import (
	"fmt"
	"net/url"
	"strings"
)

// Cloud-init under /nodes/{node}/qemu/{vmid}/cloudinit: the pending view, regenerating the
// drive, and dumping the generated user, network and meta data (qemu-server
// src/PVE/API2/Qemu.pm, cloudinit_pending, cloudinit_update, cloudinit_generated_config_dump).

// handleCloudinitGet lists cloud-init keys as qemu-server's cloudinit_pending does:
// "value" is what the drive was generated from, "pending" the config's newer value. Config
// values carry their schema type (ciupgrade is 0/1), while generated values come from the
// config's unvalidated [special:cloudinit] section and are always strings. These keys never
// appear in /pending.
func handleCloudinitGet(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	cur := ciKeys(g.Config)
	current := func(k string) any { return typedValue(qemuParamTypes, k, cur[k]) }
	generated := func(k, v string) any {
		if k == "cipassword" {
			return "**********"
		}
		return v
	}
	out := []map[string]any{}
	for _, k := range sortedKeys(cur) {
		item := map[string]any{"key": k}
		old, had := g.CIApplied[k]
		switch {
		case !had:
			item["pending"] = current(k)
		case old != cur[k]:
			item["value"], item["pending"] = generated(k, old), current(k)
		default:
			item["value"] = current(k)
		}
		out = append(out, item)
	}
	for _, k := range sortedKeys(g.CIApplied) {
		if _, still := cur[k]; !still {
			out = append(out, map[string]any{"key": k, "delete": 1})
		}
	}
	return out, nil
}

func handleCloudinitRegenerate(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	if err := checkLock(g, r); err != nil {
		return nil, err
	}
	g.CIApplied = ciKeys(g.Config)
	s.markDirty()
	return nil, nil
}

func handleCloudinitDump(s *Server, r *request) (any, error) {
	g, err := s.qemuGuest(r)
	if err != nil {
		return nil, err
	}
	cfg := g.Config
	switch r.str("type") {
	case "user":
		var b strings.Builder
		b.WriteString("#cloud-config\n")
		fmt.Fprintf(&b, "hostname: %s\nmanage_etc_hosts: true\nfqdn: %s\n", g.name(), g.name())
		if u := cfg["ciuser"]; u != "" {
			fmt.Fprintf(&b, "user: %s\n", u)
		}
		if cfg["cipassword"] != "" {
			b.WriteString("password: **********\n")
		}
		if keys := cfg["sshkeys"]; keys != "" {
			dec, _ := url.PathUnescape(keys)
			b.WriteString("ssh_authorized_keys:\n")
			for _, k := range strings.Split(strings.TrimSpace(dec), "\n") {
				fmt.Fprintf(&b, "  - %s\n", k)
			}
		}
		b.WriteString("chpasswd:\n  expire: False\n")
		fmt.Fprintf(&b, "package_upgrade: %s\n", map[bool]string{true: "true", false: "false"}[cfg["ciupgrade"] != "0"])
		return b.String(), nil
	case "network":
		return "version: 1\nconfig:\n    - type: physical\n      name: eth0\n      subnets:\n      - type: dhcp4\n", nil
	}
	return fmt.Sprintf("instance-id: %s\n", g.digest()), nil
}
