package pveconformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Cleanup removes what the suite made on the target, also after an
// interrupted run: every guest in the VMID range whose name starts with
// Prefix (stopped first, then destroyed with purge), and every file on the
// content storage whose name starts with Prefix. Nothing else is touched.
// report is told each removal.
func (tg *Target) Cleanup(ctx context.Context, report func(string)) error {
	guests, err := tg.GuestsInRange(ctx)
	if err != nil {
		return err
	}
	var failed []string
	for _, g := range guests {
		if !strings.HasPrefix(g.Name, Prefix) {
			continue
		}
		if err := tg.destroyGuest(ctx, g); err != nil {
			failed = append(failed, err.Error())
			continue
		}
		report(fmt.Sprintf("removed %s %d (%s) from %s", g.Type, g.VMID, g.Name, g.Node))
	}
	files, err := tg.prefixedFiles(ctx)
	if err != nil {
		failed = append(failed, err.Error())
	}
	for _, volid := range files {
		if err := tg.deleteVolume(ctx, tg.cfg.Node, tg.cfg.ContentStorage, volid); err != nil {
			failed = append(failed, err.Error())
			continue
		}
		report("removed " + volid)
	}
	if len(failed) > 0 {
		return fmt.Errorf("cleanup incomplete: %s", strings.Join(failed, "; "))
	}
	return nil
}

// destroyGuest stops a guest if it runs and destroys it with its disks.
func (tg *Target) destroyGuest(ctx context.Context, g Guest) error {
	base := "/nodes/" + url.PathEscape(g.Node) + "/" + g.Type + "/" + strconv.Itoa(g.VMID)
	if g.Status == "running" {
		if err := tg.runTask(ctx, g.Node, http.MethodPost, base+"/status/stop", nil); err != nil {
			return fmt.Errorf("stop %d: %w", g.VMID, err)
		}
	}
	if err := tg.runTask(ctx, g.Node, http.MethodDelete, base, Params("purge", "1", "destroy-unreferenced-disks", "1")); err != nil {
		return fmt.Errorf("destroy %d: %w", g.VMID, err)
	}
	return nil
}

// runTask sends a task-starting request and waits for the task to end OK
// (or with warnings).
func (tg *Target) runTask(ctx context.Context, node, method, path string, params url.Values) error {
	res, err := tg.Raw(ctx, method, path, params)
	if err != nil {
		return err
	}
	if res.Status != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, path, res.StatusLine)
	}
	if upid := res.UPID(); upid != "" {
		exit, err := tg.WaitTask(ctx, node, upid)
		if err != nil {
			return err
		}
		if exit != "OK" && !strings.HasPrefix(exit, "WARNINGS") {
			return fmt.Errorf("%s %s: task ended %q", method, path, exit)
		}
	}
	return nil
}

// prefixedFiles lists the content storage's volumes named with Prefix.
func (tg *Target) prefixedFiles(ctx context.Context) ([]string, error) {
	path := "/nodes/" + url.PathEscape(tg.cfg.Node) + "/storage/" + url.PathEscape(tg.cfg.ContentStorage) + "/content"
	res, err := tg.Raw(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	var vols []struct {
		VolID string `json:"volid"`
	}
	if res.Status != http.StatusOK || res.Data(&vols) != nil {
		return nil, fmt.Errorf("list %s: %s", tg.cfg.ContentStorage, res.StatusLine)
	}
	var out []string
	for _, v := range vols {
		if _, name, ok := strings.Cut(v.VolID, "/"); ok && strings.HasPrefix(name, Prefix) {
			out = append(out, v.VolID)
		}
	}
	return out, nil
}

func (tg *Target) deleteVolume(ctx context.Context, node, storage, volid string) error {
	path := "/nodes/" + url.PathEscape(node) + "/storage/" + url.PathEscape(storage) + "/content/" + url.PathEscape(volid)
	return tg.runTask(ctx, node, http.MethodDelete, path, nil)
}

// HasFile reports whether volid is on the content storage of the target's node.
func (tg *Target) HasFile(ctx context.Context, volid string) bool {
	path := "/nodes/" + url.PathEscape(tg.cfg.Node) + "/storage/" + url.PathEscape(tg.cfg.ContentStorage) + "/content/" + url.PathEscape(volid)
	res, err := tg.Raw(ctx, http.MethodGet, path, nil)
	return err == nil && res.Status == http.StatusOK
}
