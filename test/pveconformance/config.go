package pveconformance

import (
	"fmt"
	"strconv"
	"strings"
)

// Environment variables naming a real Proxmox VE target. Without
// PVE_ENDPOINT the suite runs against the simulator.
const (
	EnvEndpoint       = "PVE_ENDPOINT"        // https://pve1.lab:8006
	EnvUsername       = "PVE_USERNAME"        // conformance@pve
	EnvPassword       = "PVE_PASSWORD"        // its password
	EnvTokenID        = "PVE_TOKEN_ID"        // conformance@pve!suite
	EnvTokenSecret    = "PVE_TOKEN_SECRET"    // the token's secret
	EnvNode           = "PVE_NODE"            // the node guests are created on
	EnvStorage        = "PVE_STORAGE"         // a storage holding images (disks)
	EnvContentStorage = "PVE_CONTENT_STORAGE" // a storage holding iso and vztmpl; default "local"
	EnvVMIDRange      = "PVE_VMID_RANGE"      // 9900-9949: the only VMIDs the suite may use
	EnvPool           = "PVE_POOL"            // an existing pool every guest goes into
	EnvCAFile         = "PVE_CA_FILE"         // PEM of the CA the endpoint's certificate chains to
	EnvInsecure       = "PVE_INSECURE"        // "1": skip TLS verification (lab only)
	EnvTemplateVMID   = "PVE_TEMPLATE_VMID"   // a QEMU template with a disk, for clones
	EnvCTTemplate     = "PVE_CT_TEMPLATE"     // a vztmpl volume (local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst)
	EnvMigrateNode    = "PVE_MIGRATE_NODE"    // a second node for migrations
	EnvCertNode       = "PVE_CERT_NODE"       // a node whose custom certificate the suite may replace
	EnvDownloadURL    = "PVE_DOWNLOAD_URL"    // a small .iso the node can download (download-url cases)
	EnvOCIReference   = "PVE_OCI_REFERENCE"   // an OCI image the node can pull (docker.io/library/busybox:latest)
	EnvImageURL       = "PVE_IMAGE_URL"       // a cloud image (.qcow2) the node can download (VirtualMachineTemplate)
)

// Config is a real target as the environment gives it.
type Config struct {
	Endpoint              string
	Username, Password    string
	TokenID, TokenSecret  string
	Node, Storage         string
	ContentStorage        string
	Pool                  string
	VMIDs                 VMIDRange
	CAFile                string
	Insecure              bool
	TemplateVMID          int
	CTTemplate            string
	MigrateNode, CertNode string
	DownloadURL           string
	OCIReference          string
	ImageURL              string
}

// ConfigFromEnv reads a real target's configuration; real is false when
// PVE_ENDPOINT is unset (the simulator is the target then). Missing
// settings are one error naming them all.
func ConfigFromEnv(getenv func(string) string) (cfg Config, isReal bool, err error) {
	cfg = Config{
		Endpoint: getenv(EnvEndpoint), Username: getenv(EnvUsername), Password: getenv(EnvPassword),
		TokenID: getenv(EnvTokenID), TokenSecret: getenv(EnvTokenSecret), Node: getenv(EnvNode),
		Storage: getenv(EnvStorage), ContentStorage: getenv(EnvContentStorage), Pool: getenv(EnvPool),
		CAFile: getenv(EnvCAFile), Insecure: getenv(EnvInsecure) == "1", CTTemplate: getenv(EnvCTTemplate),
		MigrateNode: getenv(EnvMigrateNode), CertNode: getenv(EnvCertNode),
		DownloadURL: getenv(EnvDownloadURL), OCIReference: getenv(EnvOCIReference), ImageURL: getenv(EnvImageURL),
	}
	if cfg.Endpoint == "" {
		return cfg, false, nil
	}
	if cfg.ContentStorage == "" {
		cfg.ContentStorage = "local"
	}
	var missing []string
	for _, kv := range [][2]string{{EnvNode, cfg.Node}, {EnvStorage, cfg.Storage}, {EnvPool, cfg.Pool}, {EnvVMIDRange, getenv(EnvVMIDRange)}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if (cfg.Username == "" || cfg.Password == "") && (cfg.TokenID == "" || cfg.TokenSecret == "") {
		missing = append(missing, EnvUsername+"+"+EnvPassword+" or "+EnvTokenID+"+"+EnvTokenSecret)
	}
	if len(missing) > 0 {
		return cfg, true, fmt.Errorf("%s is set but these are missing: %s", EnvEndpoint, strings.Join(missing, ", "))
	}
	if cfg.VMIDs, err = ParseVMIDRange(getenv(EnvVMIDRange)); err != nil {
		return cfg, true, err
	}
	if v := getenv(EnvTemplateVMID); v != "" {
		if cfg.TemplateVMID, err = strconv.Atoi(v); err != nil {
			return cfg, true, fmt.Errorf("%s=%q: %w", EnvTemplateVMID, v, err)
		}
	}
	return cfg, true, nil
}

// VMIDRange is an inclusive range of VMIDs.
type VMIDRange struct{ First, Last int }

// Contains reports whether vmid is in r.
func (r VMIDRange) Contains(vmid int) bool { return vmid >= r.First && vmid <= r.Last }

func (r VMIDRange) String() string { return fmt.Sprintf("%d-%d", r.First, r.Last) }

// ParseVMIDRange reads "first-last" (PVE's VMIDs are 100..999999999).
func ParseVMIDRange(s string) (VMIDRange, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "-")
	first, err1 := strconv.Atoi(strings.TrimSpace(a))
	last, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || first < 100 || last < first {
		return VMIDRange{}, fmt.Errorf("%s=%q: want first-last, 100 <= first <= last", EnvVMIDRange, s)
	}
	return VMIDRange{First: first, Last: last}, nil
}
