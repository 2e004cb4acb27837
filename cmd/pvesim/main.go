// Command pvesim serves a simulated Proxmox VE API over HTTPS for demos and manual tests.
// It prints the endpoint and a ready-to-apply ProxmoxConnection on start.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type config struct {
	nodes, sharedStorage, caOut, stateFile, connName, connNamespace                       string
	listen, users, tokens, templates, ctTemplates, ostemplates, isos, durations, tlsHosts listFlag
	resourcesLag, agentDelay, authFailDelay                                               time.Duration
	seed                                                                                  uint64
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("pvesim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&c.listen, "listen", "address to serve HTTPS on (repeatable: every address serves the same cluster, as each node's pveproxy does; default 127.0.0.1:8006)")
	fs.StringVar(&c.nodes, "nodes", "pve", "comma-separated node names")
	fs.StringVar(&c.sharedStorage, "shared-storage", "", "name of a shared storage present on every node (enables cross-node clones)")
	fs.Var(&c.users, "user", "USER@REALM:PASSWORD (repeatable)")
	fs.Var(&c.tokens, "token", "USER@REALM!ID=SECRET (repeatable)")
	fs.Var(&c.templates, "template", "VMID:NAME@NODE, a cloud-init-ready VM template (repeatable)")
	fs.Var(&c.ctTemplates, "ct-template", "VMID:NAME@NODE, a container template (repeatable)")
	fs.Var(&c.ostemplates, "ostemplate", "VOLID@NODE, a container template volume such as local:vztmpl/debian-12.tar.zst (repeatable)")
	fs.Var(&c.isos, "iso", "VOLID@NODE, an ISO volume such as local:iso/debian.iso (repeatable)")
	fs.Var(&c.durations, "task-duration", "task run time: DURATION for all, or TYPE=DURATION such as qmclone=2s (repeatable, comma-separated)")
	fs.Var(&c.tlsHosts, "tls-host", "extra DNS name or IP for the serving certificate (repeatable)")
	fs.DurationVar(&c.resourcesLag, "resources-lag", 0, "lag of status/name/uptime/template in /cluster/resources (PVE ~10s)")
	fs.DurationVar(&c.agentDelay, "agent-start-delay", 0, "time after a start before the guest agent answers")
	fs.DurationVar(&c.authFailDelay, "auth-fail-delay", 0, "delay of every 401 (PVE uses 3s)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the fault dice and task run-time spread (0 picks one; GET /_sim/state shows it)")
	fs.StringVar(&c.caOut, "ca-out", "", "write the CA certificate (PEM) to this file")
	fs.StringVar(&c.stateFile, "state", "", "persist guests, volumes, users and tokens in this JSON file")
	fs.StringVar(&c.connName, "connection-name", "pvesim", "name of the printed ProxmoxConnection")
	fs.StringVar(&c.connNamespace, "secret-namespace", "default", "namespace of the printed credentials Secret")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if len(c.listen) == 0 {
		c.listen = listFlag{"127.0.0.1:8006"}
	}
	return c, nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pvesim:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	sim, err := start(args, stdout, stderr)
	if err != nil {
		return err
	}
	defer sim.Close()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	return nil
}

// start parses the flags, starts and seeds the simulator and prints how to connect.
func start(args []string, stdout, stderr io.Writer) (*pvesim.Server, error) {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return nil, err
	}
	durations, err := parseDurations(c.durations)
	if err != nil {
		return nil, err
	}
	sim, err := pvesim.Start(pvesim.Options{
		Nodes: splitComma(c.nodes), SharedStorage: c.sharedStorage, TaskDurations: durations,
		ResourcesLag: c.resourcesLag, AgentStartDelay: c.agentDelay, AuthFailDelay: c.authFailDelay,
		Listen: c.listen[0], ExtraListen: c.listen[1:], StateFile: c.stateFile, TLSHosts: c.tlsHosts, Seed: c.seed,
	})
	if err != nil {
		return nil, err
	}
	if len(c.users) == 0 && len(c.tokens) == 0 {
		c.users = listFlag{"root@pam:pvesim"}
	}
	if err := seed(sim, c); err != nil {
		sim.Close()
		return nil, err
	}
	sim.SaveBaseline()
	if c.caOut != "" {
		if err := os.WriteFile(c.caOut, sim.CAPEM(), 0o600); err != nil {
			sim.Close()
			return nil, errors.Wrap(err, "cannot write --ca-out")
		}
	}
	fmt.Fprintf(stdout, "pvesim: serving Proxmox VE API at %s (admin API under %s/_sim/)\n", sim.APIURL(), sim.URL())
	for _, u := range sim.URLs()[1:] {
		fmt.Fprintf(stdout, "pvesim: and at %s/api2/json\n", u)
	}
	fmt.Fprintln(stdout)
	fmt.Fprint(stdout, connectionYAML(c, sim))
	return sim, nil
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseDurations(values []string) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	for _, v := range values {
		for _, item := range splitComma(v) {
			typ, ds, hasType := strings.Cut(item, "=")
			if !hasType {
				typ, ds = "", item
			}
			d, err := time.ParseDuration(ds)
			if err != nil {
				return nil, errors.Wrapf(err, "invalid --task-duration %q", item)
			}
			out[typ] = d
		}
	}
	return out, nil
}

// seed adds identities, templates and volumes; seeds already present in a --state file are kept.
func seed(sim *pvesim.Server, c *config) error {
	for _, u := range c.users {
		id, pw, ok := strings.Cut(u, ":")
		if !ok || !strings.Contains(id, "@") {
			return errors.Errorf("invalid --user %q, want USER@REALM:PASSWORD", u)
		}
		sim.AddUser(id, pw)
	}
	for _, t := range c.tokens {
		id, secret, ok := strings.Cut(t, "=")
		if !ok || !strings.Contains(id, "!") {
			return errors.Errorf("invalid --token, want USER@REALM!ID=SECRET")
		}
		sim.AddToken(id, secret)
	}
	for _, v := range append(append([]string{}, c.ostemplates...), c.isos...) {
		volid, node, err := splitAtNode(v)
		if err != nil {
			return err
		}
		if err := sim.AddVolume(node, volid); err != nil {
			return errors.Wrapf(err, "cannot add volume %q", v)
		}
	}
	for _, v := range c.templates {
		if err := seedTemplate(sim, v, false); err != nil {
			return err
		}
	}
	for _, v := range c.ctTemplates {
		if err := seedTemplate(sim, v, true); err != nil {
			return err
		}
	}
	return nil
}

func splitAtNode(v string) (string, string, error) {
	i := strings.LastIndex(v, "@")
	if i <= 0 || i == len(v)-1 {
		return "", "", errors.Errorf("invalid value %q, want ...@NODE", v)
	}
	return v[:i], v[i+1:], nil
}

// seedTemplate parses VMID:NAME@NODE and adds a VM or container template.
func seedTemplate(sim *pvesim.Server, v string, container bool) error {
	rest, node, err := splitAtNode(v)
	if err != nil {
		return err
	}
	ids, name, ok := strings.Cut(rest, ":")
	vmid, convErr := strconv.Atoi(ids)
	if !ok || convErr != nil {
		return errors.Errorf("invalid template %q, want VMID:NAME@NODE", v)
	}
	if _, exists := sim.Guest(vmid); exists {
		return nil
	}
	if !container {
		return errors.Wrapf(sim.AddTemplate(node, vmid, name), "cannot add template %q", v)
	}
	return errors.Wrapf(sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: node, VMID: vmid, Template: true, Config: map[string]string{
		"hostname": name, "ostype": "debian", "arch": "amd64", "cores": "1", "memory": "512", "swap": "512",
		"rootfs": "local-lvm:4", "net0": "name=eth0,bridge=vmbr0,ip=dhcp", "unprivileged": "1",
	}}), "cannot add container template %q", v)
}

// connectionYAML is a Secret plus a ProxmoxConnection that trusts the simulator's CA,
// using the first token if any, else the first user.
func connectionYAML(c *config, sim *pvesim.Server) string {
	var b strings.Builder
	secretName := c.connName + "-credentials"
	var spec string
	if len(c.tokens) > 0 {
		id, secret, _ := strings.Cut(c.tokens[0], "=")
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\nstringData:\n  secret: %q\n---\n", secretName, c.connNamespace, secret)
		spec = fmt.Sprintf("  tokenID: %q\n  secretFrom:\n    name: %s\n    namespace: %s\n    key: secret\n", id, secretName, c.connNamespace)
	} else {
		id, pw, _ := strings.Cut(c.users[0], ":")
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\nstringData:\n  password: %q\n---\n", secretName, c.connNamespace, pw)
		spec = fmt.Sprintf("  username: %q\n  passwordFrom:\n    name: %s\n    namespace: %s\n    key: password\n", id, secretName, c.connNamespace)
	}
	fmt.Fprintf(&b, "apiVersion: proxmox.alperen.cloud/v1alpha1\nkind: ProxmoxConnection\nmetadata:\n  name: %s\nspec:\n  endpoint: %s\n%s", c.connName, sim.URL(), endpointsYAML(sim.URLs()[1:]))
	fmt.Fprintf(&b, "%s  caBundle: |\n", spec)
	for _, line := range strings.Split(strings.TrimRight(string(sim.CAPEM()), "\n"), "\n") {
		fmt.Fprintf(&b, "    %s\n", line)
	}
	return b.String()
}

// endpointsYAML lists the other listeners as the connection's endpoints.
func endpointsYAML(more []string) string {
	if len(more) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("  endpoints:\n")
	for _, u := range more {
		fmt.Fprintf(&b, "  - %s\n", u)
	}
	return b.String()
}
