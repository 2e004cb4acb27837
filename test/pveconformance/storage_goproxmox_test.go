package pveconformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	proxmox "github.com/luthermonson/go-proxmox"

	"github.com/kubemox/provider-proxmox/internal/pveraw"
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

// download-url through go-proxmox (pve-storage src/PVE/API2/Storage/Status.pm
// download_url, Content.pm index and delete; PVE/API2/Storage/Status.pm
// index for the storage list): storages decode with numbers for their
// flags, content filters the list; the download is a task of type
// download with the file name as its id, the volume listed when it ends
// with format iso and a size; an iso named otherwise is 400 errors.filename
// "wrong file extension" (the $ISO_EXT_RE_0 check); DELETE content is a
// task, or null with delay once done.
func TestStorageDownloadURLWithGoProxmox(t *testing.T) {
	tg := target(t, pvesim.Options{TaskDurations: map[string]time.Duration{"download": 150 * time.Millisecond}})
	covers(tg, "GET /nodes/{node}/storage content", "POST /nodes/{node}/storage/{storage}/download-url content filename url",
		"GET /nodes/{node}/storage/{storage}/content")
	dl := tg.Config().DownloadURL
	if dl == "" {
		t.Skipf("needs a file the node can download: set %s", EnvDownloadURL)
	}
	ctx := tg.ctx()
	node := tg.goNode()
	store := node.StorageRef(tg.ContentStorage())
	storages, err := node.Storages(ctx)
	if err != nil || len(storages) == 0 {
		t.Fatalf("storages: %v %+v", err, storages)
	}
	for _, st := range storages {
		if st.Name == tg.ContentStorage() && (st.Active != 1 || st.Enabled != 1 || st.Total == 0) {
			t.Errorf("storage entry %+v", st)
		}
	}
	var onlyTmpl []map[string]any
	if err := tg.goClient().Get(ctx, "/nodes/"+tg.Node()+"/storage?content=vztmpl", &onlyTmpl); err != nil ||
		!slices.ContainsFunc(onlyTmpl, func(s map[string]any) bool { return s["storage"] == tg.ContentStorage() }) || slices.ContainsFunc(onlyTmpl, func(s map[string]any) bool {
		return s["storage"] == tg.Storage() && s["storage"] != tg.ContentStorage() && !strings.Contains(s["content"].(string), "vztmpl")
	}) {
		t.Errorf("content filter: %v %v", err, onlyTmpl)
	}

	name := Prefix + tg.RunID() + "-gop.iso"
	volid := tg.ContentStorage() + ":iso/" + name
	task, err := store.DownloadURL(ctx, "iso", name, dl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.removeFile(volid) })
	if task.Type != "download" || task.ID != name {
		t.Errorf("task %s", task.UPID)
	}
	if _, ok := tg.Sim(); ok { // a real download of a small file may end before the list is read
		if content, err := store.GetContent(ctx); err != nil || slices.Contains(volids(content), volid) {
			t.Errorf("the volume must appear only when the task ends: %v %v", err, volids(content))
		}
	}
	tg.goMust("download", task, nil)
	content, err := store.GetContent(ctx)
	i := slices.Index(volids(content), volid)
	if err != nil || i < 0 || content[i].Format != "iso" || content[i].Size == 0 {
		t.Fatalf("content after the download: %v %v", err, volids(content))
	}
	if _, err := store.DownloadURL(ctx, "iso", Prefix+tg.RunID()+".qcow2", dl); err == nil || !strings.Contains(err.Error(), "wrong file extension") {
		t.Errorf("extension check: %v", err)
	}
	task, err = store.DeleteContent(ctx, volid)
	tg.goMust("delete content", task, err)
	if content, _ = store.GetContent(ctx); slices.Contains(volids(content), volid) {
		t.Errorf("deleted volume still listed: %v", volids(content))
	}

	sim := tg.requireSim("downloads from URLs only the simulator serves (a checksum it accepts, a URL that fails) and injects a fault")
	upid, err := node.StorageDownloadURL(ctx, &proxmox.StorageDownloadURLOptions{Storage: "local", Content: "vztmpl",
		Filename: "alpine-3.22.tar.xz", URL: "https://images.example/alpine.tar.xz", Checksum: "abc", ChecksumAlgorithm: "sha256"})
	if err != nil {
		t.Fatal(err)
	}
	tg.goMust("vztmpl download", proxmox.NewTask(proxmox.UPID(upid), tg.goClient()), nil)
	if _, err := store.VzTmpl(ctx, "alpine-3.22.tar.xz"); err != nil {
		t.Errorf("vztmpl info: %v", err)
	}
	if _, err := node.StorageRef("local-lvm").DownloadURL(ctx, "iso", "a.iso", "https://x.example/a.iso"); err == nil || !strings.Contains(err.Error(), "not a file based storage") {
		t.Errorf("download to lvmthin: %v", err)
	}
	task, err = store.DownloadURL(ctx, "iso", "broken.iso", "https://x.example/fail/broken.iso")
	if err != nil {
		t.Fatal(err)
	}
	if exit := tg.goTaskFailure(task); !strings.Contains(exit, "download failed") {
		t.Errorf("failing URL: %q", exit)
	}
	sim.SetFaults(pvesim.Faults{Rules: []pvesim.FaultRule{{Method: "POST", PathPattern: "/nodes/*/storage/*/download-url",
		TaskFailureRate: 1, TaskFailureMessage: "download failed: connection timed out"}}})
	task, err = store.DownloadURL(ctx, "iso", "other.iso", "https://x.example/other.iso")
	if err != nil {
		t.Fatal(err)
	}
	tg.goTaskFailure(task)
	sim.SetFaults(pvesim.Faults{})
	content, _ = store.GetContent(ctx)
	if slices.Contains(volids(content), "local:iso/broken.iso") || slices.Contains(volids(content), "local:iso/other.iso") {
		t.Errorf("failed downloads must leave no volume: %v", volids(content))
	}
	res := tg.raw(http.MethodDelete, tg.storagePath("local", "/content/local:vztmpl/alpine-3.22.tar.xz"), Params("delay", "5"))
	if res.Status != http.StatusOK || string(res.Body["data"]) != "null" {
		t.Errorf("delete with delay answers null when done: %s %s", res.StatusLine, res.Text)
	}
}

// removeFile deletes a volume this run made, if it is still there.
func (c *tcase) removeFile(volid string) {
	ctx, cancel := cleanupCtx()
	defer cancel()
	if c.HasFile(ctx, volid) {
		_ = c.deleteVolume(ctx, c.Node(), c.ContentStorage(), volid)
	}
}

// oci-registry-pull (pve-storage src/PVE/API2/Storage/Status.pm
// oci_registry_pull) stores the image as <filename>.tar in a task
// ociregistrypull whose id is that file name; a second pull onto it fails
// at once, "refusing to override existing file '<file>'"; a reference
// must match the schema's pattern; the file is a container template.
func TestOCIRegistryPullCreatesTemplate(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /nodes/{node}/storage/{storage}/oci-registry-pull reference filename")
	ref := tg.Config().OCIReference
	if ref == "" {
		t.Skipf("needs an image the node can pull: set %s", EnvOCIReference)
	}
	ctx := tg.ctx()
	store := tg.goNode().StorageRef(tg.ContentStorage())
	file := Prefix + tg.RunID() + "-oci"
	volid := tg.ContentStorage() + ":vztmpl/" + file + ".tar"
	task, err := store.OCIRegistryPull(ctx, ref, file)
	t.Cleanup(func() { tg.removeFile(volid) })
	tg.goMust("oci pull", task, err)
	if task.Type != "ociregistrypull" || task.ID != file+".tar" {
		t.Errorf("task %s", task.UPID)
	}
	if _, err := store.OCIRegistryPull(ctx, ref, file); err == nil || !strings.Contains(err.Error(), "refusing to override existing file '"+file+".tar'") {
		t.Errorf("second pull: %v", err)
	}
	if _, err := store.OCIRegistryPull(ctx, "not a reference!", file+"-bad"); !proxmox.IsBadRequest(err) {
		t.Errorf("a malformed reference: %v", err)
	}
	id := tg.vmid()
	task, err = tg.goNode().NewContainer(ctx, id, ctOpt("ostemplate", volid), ctOpt("rootfs", tg.Storage()+":1"), ctOpt("pool", tg.Pool()), ctOpt("hostname", tg.GuestName("oci")))
	t.Cleanup(func() { tg.destroy("lxc", id) })
	tg.goMust("create from the OCI image", task, err)
}

// Pools through go-proxmox (pve-manager PVE/API2/Pool.pm create_pool,
// read_pool, update_pool, delete_pool): a second pool of one name is
// refused "pool '<id>' already exists"; a missing pool is not found; a
// guest in a pool is moved only with allow-move ("VM N belongs already to
// pool '<pool>' and 'allow-move' is not set"), the guest then listed in
// the new pool and /cluster/resources; a pool with members is not deleted
// ("pool '<id>' is not empty (contains VM N)").
func TestPoolsWithGoProxmox(t *testing.T) {
	tg := target(t, pvesim.Options{})
	covers(tg, "POST /pools poolid comment", "GET /pools/{poolid}", "PUT /pools/{poolid} vms allow-move", "DELETE /pools/{poolid}", "GET /pools")
	ctx := tg.ctx()
	c := tg.goClient()
	id := tg.createCT("pooled")
	dev, prod := Prefix+tg.RunID()+"-dev", Prefix+tg.RunID()+"-prod"
	for _, name := range []string{dev, prod} {
		t.Cleanup(func() {
			ctx, cancel := cleanupCtx()
			defer cancel()
			// Back into the run's pool first: the guest's cleanup finds it there.
			_, _ = tg.Raw(ctx, http.MethodPut, "/pools/"+tg.Pool(), Params("vms", itoa(id), "allow-move", "1"))
			_, _ = tg.Raw(ctx, http.MethodDelete, "/pools/"+name, nil)
		})
	}
	if err := c.NewPool(ctx, dev, "development"); err != nil {
		if ae := tg.apiErr(err); ae.StatusCode == http.StatusForbidden && tg.IsReal() {
			t.Skipf("creating pools needs Pool.Allocate on /pool (not in the suite's minimal role): %v", err)
		}
		t.Fatal(err)
	}
	if err := c.NewPool(ctx, dev, ""); err == nil || !strings.Contains(err.Error(), "pool '"+dev+"' already exists") {
		t.Errorf("duplicate pool: %v", err)
	}
	if err := c.NewPool(ctx, prod, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Pool(ctx, Prefix+tg.RunID()+"-nope"); !proxmox.IsNotFound(err) {
		t.Errorf("missing pool: %v", err)
	}
	devPool, err := c.Pool(ctx, dev)
	if err != nil || devPool.Comment != "development" {
		t.Fatalf("pool: %v %+v", err, devPool)
	}
	if err := devPool.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: itoa(id)}); err == nil ||
		!strings.Contains(err.Error(), "VM "+itoa(id)+" belongs already to pool '"+tg.Pool()+"'") {
		t.Errorf("move without allow-move: %v", err)
	}
	if err := devPool.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: itoa(id), AllowMove: true}); err != nil {
		t.Fatalf("allow-move: %v", err)
	}
	devPool, err = c.Pool(ctx, dev)
	if err != nil || len(devPool.Members) != 1 || devPool.Members[0].ID != "lxc/"+itoa(id) {
		t.Errorf("members: %v %+v", err, devPool)
	}
	cl, err := c.Cluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := cl.Resources(ctx, "vm")
	if i := slices.IndexFunc(rs, func(r *proxmox.ClusterResource) bool { return r.ID == "lxc/"+itoa(id) }); err != nil || i < 0 || rs[i].Pool != dev {
		t.Errorf("pool in cluster resources: %v", err)
	}
	if err := devPool.Delete(ctx); err == nil || !strings.Contains(err.Error(), "pool '"+dev+"' is not empty (contains VM "+itoa(id)+")") {
		t.Errorf("delete a non-empty pool: %v", err)
	}
	old, err := devPool.GetDeprecated(ctx) //nolint:staticcheck // SA1019: PVE still serves the deprecated pool read, and go-proxmox still calls it
	if err != nil || len(old.Members) != 1 {
		t.Errorf("deprecated read: %v %+v", err, old)
	}
	if err := devPool.Update(ctx, &proxmox.PoolUpdateOption{VirtualMachines: itoa(id), Delete: true}); err != nil {
		t.Fatal(err)
	}
	prodPool, err := c.Pool(ctx, prod)
	if err != nil {
		t.Fatal(err)
	}
	if err := prodPool.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	pools, err := c.Pools(ctx)
	if err != nil || slices.ContainsFunc(pools, func(p *proxmox.Pool) bool { return p.PoolID == prod }) || !slices.ContainsFunc(pools, func(p *proxmox.Pool) bool { return p.PoolID == dev }) {
		t.Errorf("pools: %v %+v", err, pools)
	}
}

// A custom certificate through go-proxmox (pve-manager
// PVE/API2/Certificates.pm upload_custom_cert, info, remove_custom_cert;
// PVE/CertHelpers.pm set_cert_files): info lists the CA and the node's
// certificate with a 95-character fingerprint; garbage is a 400; a key of
// another certificate is refused ("key does not match the certificate
// (chain)"); with restart pveproxy serves the new certificate on new
// connections and info lists pveproxy-ssl.pem; a second upload needs
// force ("Custom certificate file exists but force flag is not set."); a
// delete without restart leaves pveproxy serving what it loaded, with
// restart=1 its own certificate is back.
func TestCustomCertificateWithGoProxmox(t *testing.T) {
	tg := target(t, pvesim.Options{})
	sim := tg.requireSim("swaps the certificate the endpoint itself serves and reconnects at once; on a real node use TestCustomCertificateUploadInfoDelete (PVE_CERT_NODE)")
	covers(tg, "GET /nodes/{node}/certificates/info", "POST /nodes/{node}/certificates/custom certificates key restart")
	ctx := tg.ctx()
	node := tg.goNode()
	infos, err := node.GetCustomCertificates(ctx)
	if err != nil || len(*infos) != 2 || (*infos)[0].Filename != "pve-root-ca.pem" || len((*infos)[1].Fingerprint) != 95 {
		t.Fatalf("info: %v %+v", err, infos)
	}
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: "garbage", Key: "x"}); !proxmox.IsBadRequest(err) {
		t.Errorf("garbage PEM: %v", err)
	}
	certPEM, keyPEM := testcert.Pair(t, testcert.EC(t))
	_, otherKey := testcert.Pair(t, testcert.EC(t))
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: otherKey}); err == nil ||
		!strings.Contains(err.Error(), "key does not match the certificate (chain)") {
		t.Errorf("mismatched key: %v", err)
	}
	if err := node.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: keyPEM, Restart: true}); err != nil {
		t.Fatalf("upload: %v", err)
	}
	if served := servedCommonName(t, sim.URL()); served != testcert.CommonName {
		t.Errorf("served certificate %q", served)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(certPEM))
	pool.AppendCertsFromPEM(sim.CAPEM())
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	tok := tg.Config()
	n2 := proxmox.NewClient(tg.APIURL(), proxmox.WithHTTPClient(hc), proxmox.WithAPIToken(tok.TokenID, tok.TokenSecret)).NodeRef(tg.Node())
	infos, err = n2.GetCustomCertificates(ctx)
	if err != nil || len(*infos) != 3 || (*infos)[2].Filename != "pveproxy-ssl.pem" {
		t.Errorf("info with the custom certificate: %v %+v", err, infos)
	}
	if err := n2.UploadCustomCertificate(ctx, &proxmox.CustomCertificate{Certificates: certPEM, Key: keyPEM, Restart: true}); err == nil ||
		!strings.Contains(err.Error(), "force flag is not set") {
		t.Errorf("second upload without force: %v", err)
	}
	if err := n2.DeleteCustomCertificate(ctx); err != nil {
		t.Fatal(err)
	}
	if infos, err = n2.GetCustomCertificates(ctx); err != nil || len(*infos) != 2 {
		t.Errorf("info after the delete: %v %+v", err, infos)
	}
	if _, err := tg.goClient().Version(ctx); err == nil {
		t.Error("pveproxy stopped serving the custom certificate without a restart")
	}
	insecure := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}}} //nolint:gosec // the served certificate is the test's own self-signed one
	res, err := pveraw.Form(ctx, insecure, http.MethodDelete, tg.APIURL()+"/nodes/"+tg.Node()+"/certificates/custom", Params("restart", "1"),
		map[string]string{"Authorization": "PVEAPIToken=" + tok.TokenID + "=" + tok.TokenSecret})
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("delete with restart: %v %s", err, res.StatusLine)
	}
	if _, err := tg.goClient().Version(ctx); err != nil {
		t.Errorf("the simulator's own certificate is back: %v", err)
	}
}

// servedCommonName is the subject of the certificate the endpoint serves.
func servedCommonName(t *testing.T, endpoint string) string {
	t.Helper()
	d := tls.Dialer{Config: &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true}} //nolint:gosec // only the served certificate is read
	conn, err := d.DialContext(context.Background(), "tcp", strings.TrimPrefix(endpoint, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].Subject.CommonName //nolint:forcetypeassert // tls.Dialer gives a *tls.Conn
}
