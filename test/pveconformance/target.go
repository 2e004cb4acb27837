package pveconformance

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Prefix starts the name of every guest and file the suite creates; the
// cleanup subcommand removes only guests so named, in the VMID range.
const Prefix = "pvecf-"

// The simulator target's fixed names and credentials.
const (
	simNode           = "pve"
	simStorage        = "local-lvm"
	simContentStorage = "local"
	simPool           = "pvecf"
	simUser           = "root@pam"
	simPassword       = "conformance-password"
	simTokenID        = "root@pam!conformance"
	simTokenSecret    = "5f1a1c5e-0000-4000-8000-00000000cf01"
	simTemplateVMID   = 9000
	simCTTemplate     = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
	simVMIDFirst      = 100
	simVMIDLast       = 8999
)

// ErrNoCredential is returned for a client the target has no credential for.
var ErrNoCredential = errors.New("the target has no credential of this kind")

// A Target is a Proxmox VE the suite runs against: the simulator (Sim
// reports it) or a real cluster the environment names. Its names (node,
// storages, pool, VMID range) are where the suite may create things.
type Target struct {
	cfg     Config
	apiURL  string
	base    http.RoundTripper
	wrap    func(http.RoundTripper) http.RoundTripper
	sim     *pvesim.Server
	runID   string
	vmids   *allocator
	session *ticketCache
}

// NewSimTarget starts a simulator with opts (Nodes default to ["pve"]) and
// attaches to it (AttachSim). Close closes the simulator.
func NewSimTarget(ctx context.Context, opts pvesim.Options) (*Target, error) {
	if len(opts.Nodes) == 0 {
		opts.Nodes = []string{simNode}
	}
	sim, err := pvesim.Start(opts)
	if err != nil {
		return nil, fmt.Errorf("start the simulator: %w", err)
	}
	tg, err := AttachSim(ctx, sim, opts.Nodes)
	if err != nil {
		sim.Close()
		return nil, err
	}
	return tg, nil
}

// AttachSim makes a running simulator (whose nodes are nodes) a target and
// seeds what the suite needs: root@pam with a password and a token, a pool,
// a QEMU template and a container template.
func AttachSim(ctx context.Context, sim *pvesim.Server, nodes []string) (*Target, error) {
	if len(nodes) == 0 {
		nodes = []string{simNode}
	}
	sim.AddUser(simUser, simPassword)
	sim.AddToken(simTokenID, simTokenSecret)
	cfg := Config{
		Endpoint: sim.URL(), Username: simUser, Password: simPassword, TokenID: simTokenID, TokenSecret: simTokenSecret,
		Node: nodes[0], Storage: simStorage, ContentStorage: simContentStorage, Pool: simPool,
		VMIDs: VMIDRange{First: simVMIDFirst, Last: simVMIDLast}, TemplateVMID: simTemplateVMID, CTTemplate: simCTTemplate,
	}
	if len(nodes) > 1 {
		cfg.MigrateNode = nodes[1]
	}
	cfg.CertNode = cfg.Node
	cfg.DownloadURL = "https://cdimage.example/" + Prefix + "download.iso"
	cfg.OCIReference = "docker.io/library/busybox:latest"
	cfg.ImageURL = "https://cloud.example/" + Prefix + "image.qcow2"
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sim.CAPEM())
	tg := newTarget(cfg, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12})
	tg.sim = sim
	if err := tg.seedSim(ctx); err != nil {
		return nil, err
	}
	return tg, nil
}

// CAPEM is the PEM of the CA the target's certificate chains to: the
// simulator's, or PVE_CA_FILE's; nil when the system roots (or
// PVE_INSECURE) apply.
func (tg *Target) CAPEM() ([]byte, error) {
	if tg.sim != nil {
		return tg.sim.CAPEM(), nil
	}
	if tg.cfg.CAFile == "" {
		return nil, nil
	}
	return os.ReadFile(tg.cfg.CAFile)
}

func (tg *Target) seedSim(ctx context.Context) error {
	if err := tg.sim.AddTemplate(tg.cfg.Node, tg.cfg.TemplateVMID, Prefix+"template"); err != nil {
		return fmt.Errorf("seed the template: %w", err)
	}
	if err := tg.sim.AddFile(tg.cfg.Node, tg.cfg.CTTemplate, 120<<20); err != nil {
		return fmt.Errorf("seed the container template: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := tg.Raw(ctx, http.MethodPost, "/pools", Params("poolid", tg.cfg.Pool))
	if err != nil {
		return fmt.Errorf("create pool %s: %w", tg.cfg.Pool, err)
	}
	if res.Status != http.StatusOK {
		return fmt.Errorf("create pool %s: %s %s", tg.cfg.Pool, res.StatusLine, res.Text)
	}
	return nil
}

// NewRealTarget connects to the real cluster cfg names. It sends nothing;
// CheckRange is the guard to call before creating anything.
func NewRealTarget(cfg Config) (*Target, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.Insecure} //nolint:gosec // PVE_INSECURE=1 is the tester's explicit choice
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s=%s holds no PEM certificate", EnvCAFile, cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	return newTarget(cfg, tc), nil
}

func newTarget(cfg Config, tc *tls.Config) *Target {
	cfg.Endpoint = strings.TrimSuffix(strings.TrimSuffix(cfg.Endpoint, "/"), "/api2/json")
	return &Target{
		cfg: cfg, apiURL: cfg.Endpoint + "/api2/json",
		base:  &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: 16, ForceAttemptHTTP2: true},
		wrap:  func(rt http.RoundTripper) http.RoundTripper { return rt },
		runID: newRunID(), vmids: newAllocator(cfg.VMIDs), session: &ticketCache{},
	}
}

// newRunID is 6 hex digits: short enough for guest names (DNS labels).
func newRunID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Close stops the simulator, if the target is one.
func (tg *Target) Close() {
	if tg.sim != nil {
		tg.sim.Close()
	}
}

// Observed returns a view of tg whose requests (clients and raw) pass
// through wrap first, e.g. a test's recorder. The view shares tg's VMID
// allocator and session.
func (tg *Target) Observed(wrap func(http.RoundTripper) http.RoundTripper) *Target {
	v := *tg
	v.wrap = wrap
	return &v
}

// Sim returns the simulator when the target is one: behaviours only it can
// stage (faults, lag, a node going offline) use it, and skip otherwise.
func (tg *Target) Sim() (*pvesim.Server, bool) { return tg.sim, tg.sim != nil }

// IsReal reports whether the target is a real cluster.
func (tg *Target) IsReal() bool { return tg.sim == nil }

// Name says what the target is, for logs.
func (tg *Target) Name() string {
	if tg.sim != nil {
		return "the simulator"
	}
	return tg.cfg.Endpoint
}

// Node is the node guests are created on.
func (tg *Target) Node() string { return tg.cfg.Node }

// Storage holds guest disks (content images/rootdir).
func (tg *Target) Storage() string { return tg.cfg.Storage }

// ContentStorage holds iso and vztmpl files.
func (tg *Target) ContentStorage() string { return tg.cfg.ContentStorage }

// Pool is the pool every guest the suite creates goes into.
func (tg *Target) Pool() string { return tg.cfg.Pool }

// VMIDs is the range the suite may use.
func (tg *Target) VMIDs() VMIDRange { return tg.cfg.VMIDs }

// Config returns the target's configuration (credentials included: never log it).
func (tg *Target) Config() Config { return tg.cfg }

// RunID identifies this run in the names of what it creates.
func (tg *Target) RunID() string { return tg.runID }

// GuestName is a name (a DNS label) for a guest of this run: Prefix, the
// run id and purpose.
func (tg *Target) GuestName(purpose string) string { return Prefix + tg.runID + "-" + purpose }

// APIURL is the API base (https://host:8006/api2/json).
func (tg *Target) APIURL() string { return tg.apiURL }

// HTTPClient trusts what the target's configuration says and passes every
// request through the view's wrapper.
func (tg *Target) HTTPClient() *http.Client {
	return &http.Client{Timeout: 60 * time.Second, Transport: tg.wrap(tg.base)}
}

// TokenClient is a go-proxmox client authenticated with the API token.
func (tg *Target) TokenClient() (*proxmox.Client, error) {
	if tg.cfg.TokenID == "" {
		return nil, fmt.Errorf("token client: %w (set %s and %s)", ErrNoCredential, EnvTokenID, EnvTokenSecret)
	}
	return proxmox.NewClient(tg.apiURL, proxmox.WithHTTPClient(tg.HTTPClient()), proxmox.WithAPIToken(tg.cfg.TokenID, tg.cfg.TokenSecret)), nil
}

// PasswordClient is a go-proxmox client logging in with the password.
func (tg *Target) PasswordClient() (*proxmox.Client, error) {
	if tg.cfg.Username == "" {
		return nil, fmt.Errorf("password client: %w (set %s and %s)", ErrNoCredential, EnvUsername, EnvPassword)
	}
	return proxmox.NewClient(tg.apiURL, proxmox.WithHTTPClient(tg.HTTPClient()),
		proxmox.WithCredentials(&proxmox.Credentials{Username: tg.cfg.Username, Password: tg.cfg.Password})), nil
}

// Client is the token client when the target has a token, else the
// password client.
func (tg *Target) Client() (*proxmox.Client, error) {
	if tg.cfg.TokenID != "" {
		return tg.TokenClient()
	}
	return tg.PasswordClient()
}

// User is the identity requests are made as (root@pam on the simulator).
func (tg *Target) User() string {
	if tg.cfg.TokenID != "" {
		u, _, _ := strings.Cut(tg.cfg.TokenID, "!")
		return u
	}
	return tg.cfg.Username
}

// ticketCache holds a password login's ticket for raw requests.
type ticketCache struct {
	mu           sync.Mutex
	ticket, csrf string
	obtained     time.Time
}
