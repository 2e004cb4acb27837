package pvesim_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testcert"
)

func volids(list []*proxmox.StorageContent) []string {
	out := make([]string, 0, len(list))
	for _, c := range list {
		out = append(out, c.Volid)
	}
	return out
}

func hasVolume(list []*proxmox.StorageContent, volid string) bool {
	for _, v := range volids(list) {
		if v == volid {
			return true
		}
	}
	return false
}

func TestStorageDownloadURLWithGoProxmox(t *testing.T) {
	sim := startSim(t, pvesim.Options{TaskDurations: map[string]time.Duration{"download": 150 * time.Millisecond}})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	node := c.NodeRef("pve")
	local := node.StorageRef("local")

	storages, err := node.Storages(ctx)
	if err != nil || len(storages) != 2 {
		t.Fatalf("storages: %v %+v", err, storages)
	}
	for _, st := range storages {
		if st.Active != 1 || st.Enabled != 1 || st.Total == 0 || st.Shared != 0 {
			t.Fatalf("storage entry %+v", st)
		}
	}
	var onlyTmpl []map[string]any
	if err := c.Get(ctx, "/nodes/pve/storage?content=vztmpl", &onlyTmpl); err != nil || len(onlyTmpl) != 1 || onlyTmpl[0]["storage"] != "local" {
		t.Fatalf("content filter: %v %v", err, onlyTmpl)
	}

	task, err := local.DownloadURL(ctx, "iso", "debian-12.iso", "https://cdimage.example/debian-12.iso")
	if err != nil {
		t.Fatal(err)
	}
	if task.Type != "download" || task.ID != "debian-12.iso" {
		t.Fatalf("task %s", task.UPID)
	}
	content, err := local.GetContent(ctx)
	if err != nil || hasVolume(content, "local:iso/debian-12.iso") {
		t.Fatalf("the volume must appear only when the task ends: %v %v", err, volids(content))
	}
	if err := waitTask(t, c, task); err != nil {
		t.Fatal(err)
	}
	content, err = local.GetContent(ctx)
	if err != nil || !hasVolume(content, "local:iso/debian-12.iso") || content[0].Format != "iso" || content[0].Size == 0 {
		t.Fatalf("content after download: %v %+v", err, content)
	}

	upid, err := node.StorageDownloadURL(ctx, &proxmox.StorageDownloadURLOptions{Storage: "local", Content: "vztmpl",
		Filename: "alpine-3.22.tar.xz", URL: "https://images.example/alpine.tar.xz", Checksum: "abc", ChecksumAlgorithm: "sha256"})
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, proxmox.NewTask(proxmox.UPID(upid), c)); err != nil {
		t.Fatal(err)
	}
	if _, err := local.VzTmpl(ctx, "alpine-3.22.tar.xz"); err != nil {
		t.Fatalf("vztmpl info: %v", err)
	}

	if _, err := local.DownloadURL(ctx, "iso", "debian.qcow2", "https://x.example/a.iso"); err == nil || !strings.Contains(err.Error(), "wrong file extension") {
		t.Fatalf("extension check: %v", err)
	}
	if _, err := node.StorageRef("local-lvm").DownloadURL(ctx, "iso", "a.iso", "https://x.example/a.iso"); err == nil ||
		!strings.Contains(err.Error(), "not a file based storage") {
		t.Fatalf("lvmthin target: %v", err)
	}

	task, err = local.DownloadURL(ctx, "iso", "broken.iso", "https://x.example/fail/broken.iso")
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) || !strings.Contains(err.Error(), "download failed") {
		t.Fatalf("failing URL: %v", err)
	}
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "POST", PathPattern: "/nodes/*/storage/*/download-url",
		TaskFailureRate: 1, TaskFailureMessage: "download failed: connection timed out"}}})
	task, err = local.DownloadURL(ctx, "iso", "other.iso", "https://x.example/other.iso")
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTask(t, c, task); !proxmox.IsTaskFailed(err) {
		t.Fatalf("fault must fail the task: %v", err)
	}
	sim.SetFaults(pvesim.Faults{})
	content, _ = local.GetContent(ctx)
	if hasVolume(content, "local:iso/broken.iso") || hasVolume(content, "local:iso/other.iso") {
		t.Fatalf("failed downloads must leave no volume: %v", volids(content))
	}

	task, err = local.DeleteContent(ctx, "local:iso/debian-12.iso")
	mustWait(t, c, "delete content", task, err)
	res := rawCall(t, sim, http.MethodDelete, "/nodes/pve/storage/local/content/local:vztmpl/alpine-3.22.tar.xz?delay=5", "", "", tokenHeader())
	if res.Status != 200 || string(res.Body["data"]) != "null" {
		t.Fatalf("delete with delay answers null when done: %d %s", res.Status, res.Text)
	}
	if content, _ = local.GetContent(ctx); len(content) != 0 {
		t.Fatalf("content left: %v", volids(content))
	}
}

func TestOCIRegistryPullCreatesTemplate(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	local := c.NodeRef("pve").StorageRef("local")

	task, err := local.OCIRegistryPull(ctx, "docker.io/library/nginx:latest", "")
	mustWait(t, c, "oci pull", task, err)
	if task.Type != "ociregistrypull" || task.ID != "nginx_latest.tar" {
		t.Fatalf("task %s", task.UPID)
	}
	if _, err := local.OCIRegistryPull(ctx, "docker.io/library/nginx:latest", ""); err == nil ||
		!strings.Contains(err.Error(), "refusing to override existing file 'nginx_latest.tar'") {
		t.Fatalf("second pull: %v", err)
	}
	if _, err := local.OCIRegistryPull(ctx, "docker.io/library/nginx", ""); !proxmox.IsBadRequest(err) {
		t.Fatalf("a reference needs a tag: %v", err)
	}
	task, err = c.NodeRef("pve").NewContainer(ctx, 300, ctOpt("ostemplate", "local:vztmpl/nginx_latest.tar"), ctOpt("rootfs", "local-lvm:2"))
	mustWait(t, c, "create from OCI image", task, err)
}

func TestPoolsWithGoProxmox(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	if err := sim.AddGuest(pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: 100, Config: map[string]string{"hostname": "a", "rootfs": "local-lvm:2"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.NewPool(ctx, "dev", "development"); err != nil {
		t.Fatal(err)
	}
	if err := c.NewPool(ctx, "dev", ""); err == nil || !strings.Contains(err.Error(), "pool 'dev' already exists") {
		t.Fatalf("duplicate pool: %v", err)
	}
	if err := c.NewPool(ctx, "prod", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pool(ctx, "nope"); !proxmox.IsNotFound(err) {
		t.Fatalf("missing pool: %v", err)
	}
	dev, err := c.Pool(ctx, "dev")
	if err != nil || dev.Comment != "development" {
		t.Fatalf("pool: %v %+v", err, dev)
	}
	if err := dev.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: "100", Storage: "local"}); err != nil {
		t.Fatal(err)
	}
	dev, err = c.Pool(ctx, "dev")
	if err != nil || len(dev.Members) != 2 || dev.Members[0].ID != "lxc/100" || dev.Members[1].Type != "storage" {
		t.Fatalf("members: %v %+v", err, dev)
	}
	if g, _ := sim.Guest(100); g.Pool != "dev" {
		t.Fatalf("guest pool %q", g.Pool)
	}
	cl, _ := c.Cluster(ctx)
	rs, err := cl.Resources(ctx, "vm")
	if err != nil || len(rs) != 1 || rs[0].Pool != "dev" {
		t.Fatalf("pool in cluster resources: %v %+v", err, rs)
	}

	prod, err := c.Pool(ctx, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if err := prod.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: "100"}); err == nil ||
		!strings.Contains(err.Error(), "VM 100 belongs already to pool 'dev'") {
		t.Fatalf("move without allow-move: %v", err)
	}
	if err := prod.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: "100", AllowMove: true}); err != nil {
		t.Fatalf("allow-move: %v", err)
	}
	if err := prod.Delete(ctx); err == nil || !strings.Contains(err.Error(), "pool 'prod' is not empty (contains VM 100)") {
		t.Fatalf("delete non-empty pool: %v", err)
	}
	old, err := prod.GetDeprecated(ctx) //nolint:staticcheck // SA1019: the simulator still serves PVE's deprecated pool read, and go-proxmox still calls it
	if err != nil || len(old.Members) != 1 {
		t.Fatalf("deprecated read: %v %+v", err, old)
	}
	if err := prod.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: "100", Delete: true}); err != nil {
		t.Fatal(err)
	}
	if err := prod.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	pools, err := c.Pools(ctx)
	if err != nil || len(pools) != 1 || pools[0].PoolID != "dev" {
		t.Fatalf("pools: %v %+v", err, pools)
	}
}

func TestCustomCertificateWithGoProxmox(t *testing.T) {
	sim := startSim(t, pvesim.Options{})
	ctx := testCtx(t)
	c := tokenClient(t, sim)
	node := c.NodeRef("pve")

	infos, err := node.GetCustomCertificates(ctx)
	if err != nil || len(*infos) != 2 || (*infos)[0].Filename != "pve-root-ca.pem" || len((*infos)[1].Fingerprint) != 95 {
		t.Fatalf("info: %v %+v", err, infos)
	}
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: "garbage", Key: "x"}); !proxmox.IsBadRequest(err) {
		t.Fatalf("garbage PEM: %v", err)
	}
	certPEM, keyPEM := testcert.Pair(t, testcert.EC(t))
	_, otherKey := testcert.Pair(t, testcert.EC(t))
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: otherKey}); err == nil ||
		!strings.Contains(err.Error(), "key does not match the certificate (chain)") { // pve-manager PVE/CertHelpers.pm, set_cert_files
		t.Fatalf("mismatched key: %v", err)
	}
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: keyPEM, Restart: true}); err != nil {
		t.Fatalf("upload: %v", err)
	}

	// New connections now see the custom certificate.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(certPEM))
	pool.AppendCertsFromPEM(sim.CAPEM())
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	c2 := proxmox.NewClient(sim.APIURL(), proxmox.WithHTTPClient(hc), proxmox.WithAPIToken(testTokenID, testSecret))
	conn, err := tls.Dial("tcp", strings.TrimPrefix(sim.URL(), "https://"), &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}) //nolint:gosec // we only read the served certificate
	if err != nil {
		t.Fatal(err)
	}
	served := conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	_ = conn.Close()
	if served != "pve.example" {
		t.Fatalf("served certificate %q", served)
	}
	n2 := c2.NodeRef("pve")
	infos, err = n2.GetCustomCertificates(ctx)
	if err != nil || len(*infos) != 3 || (*infos)[2].Filename != "pveproxy-ssl.pem" {
		t.Fatalf("info with custom: %v %+v", err, infos)
	}
	if err := n2.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: keyPEM, Restart: true}); err == nil ||
		!strings.Contains(err.Error(), "force flag is not set") { // pve-manager PVE/CertHelpers.pm, set_cert_files
		t.Fatalf("second upload without force: %v", err)
	}
	// Deleting the files without a restart leaves pveproxy serving what it
	// loaded; with restart=1 its own certificate is back.
	if err := n2.DeleteCustomCertificate(ctx); err != nil {
		t.Fatal(err)
	}
	infos, err = n2.GetCustomCertificates(ctx)
	if err != nil || len(*infos) != 2 {
		t.Fatalf("info after delete: %v %+v", err, infos)
	}
	if _, err := tokenClient(t, sim).Version(ctx); err == nil {
		t.Fatal("pveproxy stopped serving the custom certificate without a restart")
	}
	res := rawCallInsecure(t, sim, http.MethodDelete, "/nodes/pve/certificates/custom?restart=1")
	if res != http.StatusOK {
		t.Fatalf("delete with restart: %d", res)
	}
	if _, err := tokenClient(t, sim).Version(ctx); err != nil {
		t.Fatalf("the simulator's own certificate is back: %v", err)
	}
}

// rawCallInsecure sends a bodyless request without verifying the served certificate (rawCall
// trusts only the simulator's CA) and returns the status.
func rawCallInsecure(t *testing.T, sim *pvesim.Server, method, path string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t), method, sim.APIURL()+path, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range tokenHeader() {
		req.Header.Set(k, v)
	}
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // the served certificate is the test's own self-signed one
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
