package e2ereal

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/test/pveconformance"
)

// rawVM creates a small stopped VM of this run in the pool, outside the
// provider, and destroys it when the test ends.
func rawVM(t *testing.T, purpose string) int {
	t.Helper()
	vmid, err := tg.AllocVMID(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := pveconformance.Params("vmid", strconv.Itoa(vmid), "name", tg.GuestName(purpose), "pool", tg.Pool(), "memory", "512",
		"scsi0", tg.Storage()+":1", "description", "before")
	runTask(t, http.MethodPost, "/nodes/"+url.PathEscape(tg.Node())+"/qemu", p)
	t.Cleanup(func() {
		runTaskQuiet(t, http.MethodDelete, guestPath("qemu", vmid, ""), pveconformance.Params("purge", "1"))
	})
	return vmid
}

func runTask(t *testing.T, method, path string, p url.Values) {
	t.Helper()
	res, err := tg.Raw(t.Context(), method, path, p)
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("%s %s: %v %s", method, path, err, res.Text)
	}
	if exit, err := tg.WaitTask(t.Context(), tg.Node(), res.UPID()); err != nil || exit != "OK" {
		t.Fatalf("%s %s: task %q %v", method, path, exit, err)
	}
}

// runTaskQuiet is runTask for cleanups (t.Context is done then), where
// the guest may be gone; the package's final Cleanup catches what it misses.
func runTaskQuiet(t *testing.T, method, path string, p url.Values) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := tg.Raw(ctx, method, path, p)
	if err == nil && res.Status == http.StatusOK {
		if _, err := tg.WaitTask(ctx, tg.Node(), res.UPID()); err != nil {
			t.Logf("cleanup %s %s: %v", method, path, err)
		}
	}
}

// A VirtualMachineSnapshot of a guest is taken, rolled back to on the
// rollback annotation (the guest's config as it was), and removed with the
// resource.
func TestSnapshotAndRollback(t *testing.T) {
	require(t)
	vmid := rawVM(t, "snap")
	snap := &v1alpha1.VirtualMachineSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap", Namespace: h.Namespace(t, "e2e-real-")},
		Spec: v1alpha1.VirtualMachineSnapshotSpec{
			ResourceSpec: v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			VMID:         ptrTo(int32(vmid)), //nolint:gosec // a VMID of the range, at most 999999999
			NodeName:     tg.Node(), SnapshotName: "e2e", Description: "e2e-real",
		}}
	if err := h.Kube.Create(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, snap, "Ready", wait, func() bool { return providertest.ReadyAndSynced(snap) })
	if res, err := tg.Raw(t.Context(), http.MethodPut, guestPath("qemu", vmid, "/config"), pveconformance.Params("description", "after")); err != nil || res.Status != http.StatusOK {
		t.Fatalf("change the description: %v %s", err, res.Text)
	}
	snap.Annotations = map[string]string{v1alpha1.AnnotationRollback: "first"}
	if err := h.Kube.Update(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, snap, "rolled back", wait, func() bool {
		r := snap.Status.Rollback
		return r != nil && r.Token == "first" && r.Task != nil && r.Task.ExitStatus == "OK"
	})
	var cfg struct {
		Description string `json:"description"`
	}
	raw(t, guestPath("qemu", vmid, "/config"), &cfg)
	if strings.TrimSpace(cfg.Description) != "before" {
		t.Errorf("description after the rollback: %q", cfg.Description)
	}
	h.DeleteAndWait(t, snap, wait)
	var snaps []map[string]any
	raw(t, guestPath("qemu", vmid, "/snapshot"), &snaps)
	for _, s := range snaps {
		if s["name"] == "e2e" {
			t.Error("the snapshot survived its resource")
		}
	}
}

// A StorageDownloadURL puts the file on the content storage and removes it
// with the resource.
func TestStorageDownloadURL(t *testing.T) {
	require(t)
	src := tg.Config().DownloadURL
	if src == "" {
		t.Skipf("needs a URL the node can download a small .iso from: set %s", pveconformance.EnvDownloadURL)
	}
	file := pveconformance.Prefix + tg.RunID() + "-e2e.iso"
	d := &v1alpha1.StorageDownloadURL{ObjectMeta: metav1.ObjectMeta{Name: "iso", Namespace: h.Namespace(t, "e2e-real-")},
		Spec: v1alpha1.StorageDownloadURLSpec{
			ResourceSpec:       v1alpha1.ResourceSpec{ConnectionRef: &v1alpha1.ConnectionReference{Name: connName}},
			DownloadParameters: v1alpha1.DownloadParameters{Content: "iso", Filename: file, Node: tg.Node(), Storage: tg.ContentStorage(), URL: src},
		}}
	if err := h.Kube.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	h.WaitFor(t, d, "Ready", wait, func() bool { return providertest.ReadyAndSynced(d) })
	volid := tg.ContentStorage() + ":iso/" + file
	volPath := "/nodes/" + url.PathEscape(tg.Node()) + "/storage/" + url.PathEscape(tg.ContentStorage()) + "/content/" + url.PathEscape(volid)
	if res, err := tg.Raw(t.Context(), http.MethodGet, volPath, nil); err != nil || res.Status != http.StatusOK {
		t.Fatalf("%s not on the storage: %v %s", volid, err, res.StatusLine)
	}
	h.DeleteAndWait(t, d, wait)
	providertest.Eventually(t, wait, time.Second, func() bool {
		res, err := tg.Raw(t.Context(), http.MethodGet, volPath, nil)
		return err == nil && res.Status != http.StatusOK
	}, func() string { return volid + " survived its resource" })
}

func ptrTo[T any](v T) *T { return &v }
