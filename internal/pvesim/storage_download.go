package pvesim

import (
	"crypto/md5"  //nolint:gosec // PVE offers md5 as a checksum algorithm
	"crypto/sha1" //nolint:gosec // PVE offers sha1 as a checksum algorithm
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// The download-url worker, what a node learns about a URL before downloading
// it, and files seeded with a given size (a file someone downloaded outside
// the provider).

// handleDownloadURL is pve-storage API2/Storage/Status.pm download_url: the
// storage, content type and extension are refused at once; compression and
// an existing file only inside the worker (its $worker and pve-common
// PVE::Tools::download_file_from_url), so those fail the task.
func handleDownloadURL(s *Server, r *request) (any, error) {
	st, volid, err := s.downloadTarget(r)
	if err != nil {
		return nil, err
	}
	d := &download{st: st, volid: volid, url: r.str("url"), content: r.str("content"), compression: r.str("compression"),
		checksum: r.str("checksum"), algorithm: r.str("checksum-algorithm")}
	_, name, _ := splitVolID(volid)
	return s.startTask(r, taskDef{Type: "download", ID: encodeTaskText(volumeBase(name)), Node: r.node(),
		Begin:  func(t *task) error { return s.beginDownload(d, t) },
		Finish: func(t *task) error { return s.finishDownload(d, t) },
	}), nil
}

// download is one download-url worker's parameters and what its start found.
type download struct {
	st                               *storage
	volid, url, content              string
	compression, checksum, algorithm string
	// haveIt is set when the file already there has the checksum asked for.
	haveIt bool
}

// decompressors are the compressions pve-storage's decompressor_info knows
// for an iso (Storage.pm).
var decompressors = map[string]bool{"gz": true, "lzo": true, "zst": true, "bz2": true}

// beginDownload is the worker's start: the compression check of download_url's
// $worker, then download_file_from_url's refusal to replace an existing file
// (or its check of that file's checksum when one was given).
func (s *Server) beginDownload(d *download, t *task) error {
	if d.compression != "" {
		if d.content != "iso" {
			return fmt.Errorf("decompression not supported for %s", d.content)
		}
		if !decompressors[d.compression] {
			return errors.New("no decompression method found")
		}
	}
	dest := volumePath(d.st, d.volid)
	t.logf("downloading %s to %s", d.url, dest)
	v, exists := d.st.Volumes[d.volid]
	if !exists {
		return nil
	}
	if d.checksum == "" {
		return fmt.Errorf("refusing to override existing file '%s'", dest)
	}
	got := existingFileChecksum(d.algorithm, v)
	if !strings.EqualFold(got, d.checksum) {
		t.logf("calculating checksum of existing file...")
		return fmt.Errorf("checksum mismatch: got '%s' != expect '%s', aborting", got, d.checksum)
	}
	t.logf("calculating checksum of existing file...OK, got correct file already, no need to download")
	d.haveIt = true
	return nil
}

// finishDownload creates the volume, unless the file was there already or
// the URL asks for a simulated failure. The checksum of a downloaded file is
// not verified: the simulator downloads no bytes.
func (s *Server) finishDownload(d *download, t *task) error {
	if d.haveIt {
		return nil
	}
	if u, err := url.Parse(d.url); err == nil && strings.Contains(u.Path, "fail") {
		return fmt.Errorf("download failed: 404 Not Found")
	}
	content := contentOf(d.volid)
	d.st.addVolume(&volume{VolID: d.volid, Format: fileFormat(d.volid, content), Size: downloadSize(d.url),
		CTime: time.Now().Unix(), Content: content})
	t.logf("download of '%s' to '%s' finished", d.url, volumePath(d.st, d.volid))
	s.markDirty()
	return nil
}

// existingFileChecksum stands for the checksum of a stored file's bytes,
// which the simulator does not keep: a digest of its volume id and size.
func existingFileChecksum(algorithm string, v *volume) string {
	newHash := map[string]func() hash.Hash{
		"md5": md5.New, "sha1": sha1.New, "sha224": sha256.New224, "sha256": sha256.New,
		"sha384": sha512.New384, "sha512": sha512.New,
	}[algorithm]
	if newHash == nil {
		newHash = sha256.New
	}
	h := newHash()
	fmt.Fprintf(h, "%s:%d", v.VolID, v.Size)
	return hex.EncodeToString(h.Sum(nil))
}

// handleQueryURLMetadata answers as pve-manager does from a HEAD request:
// the file name (from the URL's path here), its size and MIME type. The size
// is the one a download of the URL gives; a URL whose path asks for a
// failure answers like a server saying 404.
func handleQueryURLMetadata(s *Server, r *request) (any, error) {
	if err := s.checkNode(r.node()); err != nil {
		return nil, err
	}
	rawURL := r.str("url")
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errInternal("invalid URL '%s'", rawURL)
	}
	if strings.Contains(u.Path, "fail") {
		return nil, errInternal("invalid server response: '404 Not Found'")
	}
	return map[string]any{
		"filename": path.Base(u.Path), "size": downloadSize(rawURL), "mimetype": "application/octet-stream",
	}, nil
}

var (
	reUnsafeFilename = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)
	reISOExt         = regexp.MustCompile(`(?i)[^/]+\.(?:iso|img)$`)
	// PVE 9 also accepts plain .tar templates (OCI archives).
	reVztmplExt = regexp.MustCompile(`(?i)[^/]+\.(?:tar|tar\.(?:gz|xz|zst|bz2))$`)
	reImportExt = regexp.MustCompile(`^[a-zA-Z0-9_.-]+\.(ova|qcow2|raw|vmdk)$`)
)

func normalizeContentFilename(name string) string {
	name = strings.TrimRight(name, "\n")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return reUnsafeFilename.ReplaceAllString(name, "_")
}

// downloadTarget checks a download's storage, content type and file extension as
// pve-storage's download_url does, in its order, and returns the volume id to create.
func (s *Server) downloadTarget(r *request) (*storage, string, error) {
	st, err := s.nodeStorage(r.node(), r.str("storage"))
	if err != nil {
		return nil, "", err
	}
	if st.Path == "" {
		return nil, "", errInternal("can't upload to storage type '%s', not a file based storage!", st.Type)
	}
	content := r.str("content")
	if !st.supports(content) {
		return nil, "", errInternal("storage '%s' is not configured for content-type '%s'", st.ID, content)
	}
	name := normalizeContentFilename(r.str("filename"))
	switch content {
	case "iso":
		if !reISOExt.MatchString(name) {
			return nil, "", errParam("filename", "wrong file extension")
		}
	case "vztmpl":
		if !reVztmplExt.MatchString(name) {
			return nil, "", errParam("filename", "wrong file extension")
		}
	case "import":
		if !reImportExt.MatchString(name) {
			return nil, "", errParam("filename", "invalid filename or wrong extension")
		}
	}
	return st, st.ID + ":" + content + "/" + name, nil
}

// downloadSize is a stable pseudo size so repeated runs list the same numbers.
func downloadSize(rawURL string) int64 {
	var h int64
	for _, c := range rawURL {
		h = h*31 + int64(c)
	}
	if h < 0 {
		h = -h
	}
	return 64*mib + h%(512*mib)
}

// fileFormat is the format pve-storage reports for a file volume.
func fileFormat(volid, content string) string {
	lower := strings.ToLower(volid)
	switch content {
	case "iso":
		return "iso"
	case "vztmpl":
		switch {
		case strings.HasSuffix(lower, ".tar.gz"):
			return "tgz"
		case strings.HasSuffix(lower, ".tar.xz"):
			return "txz"
		case strings.HasSuffix(lower, ".tar.bz2"):
			return "tbz2"
		case strings.HasSuffix(lower, ".tar"):
			return "tar"
		}
		return "tzst"
	case "import":
		if i := strings.LastIndex(lower, "."); i >= 0 {
			return lower[i+1:]
		}
	}
	return "raw"
}

func volumeBase(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}
