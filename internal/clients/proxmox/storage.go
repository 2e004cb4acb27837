package proxmox

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// DownloadRequest is POST /nodes/{node}/storage/{storage}/download-url: PVE
// fetches URL into the storage as <storage>:<content>/<filename>.
type DownloadRequest struct {
	Node, Storage     string
	Content, Filename string
	URL               string
	// Checksum and ChecksumAlgorithm are sent together or not at all.
	Checksum, ChecksumAlgorithm string
	// Compression decompresses an iso download (PVE refuses it for other
	// content types).
	Compression string
	// VerifyCertificate is sent when set: PVE's default is to verify, so an
	// explicit false must reach it.
	VerifyCertificate *bool
}

// VolID is the volume the download creates.
// (pve-storage's id of a file of a content type on a file-based storage).
func (d DownloadRequest) VolID() string { return d.Storage + ":" + d.Content + "/" + d.Filename }

func (d DownloadRequest) params() map[string]string {
	p := map[string]string{"content": d.Content, "filename": d.Filename, "url": d.URL}
	setIf(p, "checksum", d.Checksum)
	setIf(p, "checksum-algorithm", d.ChecksumAlgorithm)
	setIf(p, "compression", d.Compression)
	if d.VerifyCertificate != nil {
		p["verify-certificates"] = pveBool(*d.VerifyCertificate)
	}
	return p
}

// DownloadURL starts PVE's download task and returns its UPID.
func (c *Client) DownloadURL(ctx context.Context, d DownloadRequest) (string, error) {
	var raw json.RawMessage
	if err := c.API().Post(ctx, storagePath(d.Node, d.Storage, "/download-url"), d.params(), &raw); err != nil {
		return "", errors.Wrapf(err, "cannot download %s to %s on node %s", d.URL, d.VolID(), d.Node)
	}
	return c.startedTask(raw)
}

// Volume is one entry of a storage's content list.
type Volume struct {
	VolID     string
	Content   string
	Format    string
	Size      int64
	Protected bool
}

type wireVolume struct {
	VolID     wireText `json:"volid"`
	Content   wireText `json:"content"`
	Format    wireText `json:"format"`
	Size      wireInt  `json:"size"`
	Protected wireText `json:"protected"`
}

// StorageVolume looks volid up in the content list of its storage on node
// (filtered by content type); found is false when the storage holds no such
// volume. PVE keeps no checksum of a stored file: size and format are what
// it tells about it.
func (c *Client) StorageVolume(ctx context.Context, node, volid, content string) (v Volume, found bool, err error) {
	storage, _, ok := strings.Cut(volid, ":")
	if !ok {
		return Volume{}, false, errors.Errorf("malformed volume id %q: no storage", volid)
	}
	p := storagePath(node, storage, "/content")
	if content != "" {
		p += "?" + url.Values{"content": {content}}.Encode()
	}
	var raw []wireVolume
	if err := c.API().Get(ctx, p, &raw); err != nil {
		return Volume{}, false, errors.Wrapf(err, "cannot list the content of storage %s on node %s", storage, node)
	}
	for _, w := range raw {
		if string(w.VolID) == volid {
			return Volume{
				VolID: volid, Content: string(w.Content), Format: string(w.Format), Size: int64(w.Size),
				Protected: boolText(string(w.Protected)),
			}, true, nil
		}
	}
	return Volume{}, false, nil
}

func storagePath(node, storage, rest string) string {
	return "/nodes/" + url.PathEscape(node) + "/storage/" + url.PathEscape(storage) + rest
}

// IsVolumeProtected reports PVE's refusal to remove a protected volume
// ("cannot remove protected volume '<volname>' on '<storage>'", pve-storage
// src/PVE/Storage/Plugin.pm, free_image).
func IsVolumeProtected(msg string) bool {
	return strings.Contains(msg, "cannot remove protected volume")
}

type wireURLMetadata struct {
	Size wireInt `json:"size"`
}

// URLSize asks node for the size of the file at rawURL (PVE's
// query-url-metadata, a HEAD request from the node): the size a download
// gives when the server reports one, else 0.
func (c *Client) URLSize(ctx context.Context, node, rawURL string, verifyCertificate *bool) (int64, error) {
	q := url.Values{"url": {rawURL}}
	if verifyCertificate != nil {
		q.Set("verify-certificates", pveBool(*verifyCertificate))
	}
	var w wireURLMetadata
	if err := c.API().Get(ctx, "/nodes/"+url.PathEscape(node)+"/query-url-metadata?"+q.Encode(), &w); err != nil {
		return 0, errors.Wrapf(err, "cannot query the size of %s from node %s", rawURL, node)
	}
	return int64(w.Size), nil
}

type wireStorageStatus struct {
	Content wireText `json:"content"`
}

// StorageContent lists the content types storage is configured for on node
// ("images", "iso", "import", ...), from its status.
func (c *Client) StorageContent(ctx context.Context, node, storage string) ([]string, error) {
	var w wireStorageStatus
	if err := c.API().Get(ctx, storagePath(node, storage, "/status"), &w); err != nil {
		return nil, errors.Wrapf(err, "cannot read the status of storage %s on node %s", storage, node)
	}
	if w.Content == "" {
		return nil, nil
	}
	return strings.Split(string(w.Content), ","), nil
}

type wireVolumeInfo struct {
	Path wireText `json:"path"`
}

// VolumePath is the filesystem path PVE gives for volid on node (a file
// under the storage's directory, or a block device).
func (c *Client) VolumePath(ctx context.Context, node, volid string) (string, error) {
	storage, _, ok := strings.Cut(volid, ":")
	if !ok {
		return "", errors.Errorf("malformed volume id %q: no storage", volid)
	}
	var w wireVolumeInfo
	if err := c.API().Get(ctx, storagePath(node, storage, "/content/"+url.PathEscape(volid)), &w); err != nil {
		return "", errors.Wrapf(err, "cannot read volume %s on node %s", volid, node)
	}
	if w.Path == "" {
		return "", errors.Errorf("Proxmox VE gave no path for volume %s on node %s", volid, node)
	}
	return string(w.Path), nil
}

// RootUser is the one PVE user allowed to import a disk from a filesystem
// path.
const RootUser = "root@pam"

// MayImportPaths reports whether Proxmox VE lets this client's credential
// pass a filesystem path to import-from: only root@pam itself, logged in
// with its password; never an API token, not even one of root@pam
// (qemu-server's check_volume_access).
func (c *Client) MayImportPaths() bool {
	return c.session != nil && c.session.username == RootUser
}
