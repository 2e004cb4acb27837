/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package recipe builds the provider's Crossplane package without Docker: a
// distroless-like runtime image assembled with go-containerregistry (the binary, a
// CA bundle, a non-root user, labels, the platform), written as a `docker save`
// tarball, then `crossplane xpkg build` around it. `make xpkg` runs it through
// cluster/images/provider-proxmox; the Dockerfile beside it builds the same image
// with Docker.
package recipe

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Where things are in the runtime image, and who runs the provider.
const (
	EntrypointPath = "/usr/local/bin/crossplane-provider"
	CABundlePath   = "/etc/ssl/certs/ca-certificates.crt"
	NonRootUID     = 65532
	NonRootUser    = "65532:65532"
)

// OCI labels every runtime image carries besides its version and revision.
const (
	Source   = "https://github.com/kubemox/provider-proxmox"
	Title    = "provider-proxmox"
	Licenses = "Apache-2.0"
)

// epoch is every file's and the image's timestamp, so one binary always gives the
// same image digest.
var epoch = time.Unix(0, 0).UTC()

// Runtime describes the runtime image of one platform.
type Runtime struct {
	// Binary is the provider built for Platform with CGO_ENABLED=0: the image has
	// no C library.
	Binary string
	// CABundle is a PEM file installed as the image's system trust store, which
	// Go reads to verify a Proxmox API certificate signed by a public CA.
	CABundle string
	Platform v1.Platform
	// Version and Revision (the git commit) label the image.
	Version  string
	Revision string
}

// RuntimeImage assembles the runtime image: a base layer (the non-root user, the
// CA bundle, /tmp) and a layer holding the binary as the entrypoint.
func RuntimeImage(r Runtime) (v1.Image, error) {
	bin, err := readStaticBinary(r.Binary, r.Platform)
	if err != nil {
		return nil, err
	}
	cas, err := readCABundle(r.CABundle)
	if err != nil {
		return nil, err
	}
	base, err := layer(baseFiles(cas))
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the base layer")
	}
	provider, err := layer(binaryFiles(bin))
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the binary layer")
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Created:      v1.Time{Time: epoch},
		OS:           r.Platform.OS,
		Architecture: r.Platform.Architecture,
		Variant:      r.Platform.Variant,
		Config: v1.Config{
			Entrypoint: []string{EntrypointPath},
			User:       NonRootUser,
			WorkingDir: "/home/nonroot",
			Env:        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Labels:     labels(r),
		},
	})
	if err != nil {
		return nil, errors.Wrap(err, "cannot set the image config")
	}
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: history("non-root user 65532, CA bundle, /tmp")},
		mutate.Addendum{Layer: provider, History: history("provider binary " + r.Version)})
	return img, errors.Wrap(err, "cannot add the layers")
}

// WriteRuntimeTarball writes img to path as a `docker save` archive tagged tag, the
// form `crossplane xpkg build --embed-runtime-image-tarball` and `docker load` read.
func WriteRuntimeTarball(path string, tag name.Tag, img v1.Image) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // a build output directory
		return errors.Wrapf(err, "cannot create the directory of %s", path)
	}
	return errors.Wrapf(tarball.WriteToFile(path, tag, img), "cannot write %s", path)
}

func labels(r Runtime) map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.title":       Title,
		"org.opencontainers.image.licenses":    Licenses,
		"org.opencontainers.image.version":     r.Version,
		"org.opencontainers.image.revision":    r.Revision,
		"org.opencontainers.image.description": "Crossplane provider for Proxmox VE",
	}
}

func history(createdBy string) v1.History {
	return v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "cluster/images/provider-proxmox: " + createdBy}
}

// elfMachines are the ELF machine types of the platforms the package is built for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// readStaticBinary reads a Linux executable for p that needs no dynamic loader:
// a binary built with cgo, or for another platform, would not start in the image.
func readStaticBinary(path string, p v1.Platform) ([]byte, error) {
	want, ok := elfMachines[p.Architecture]
	if p.OS != "linux" || !ok {
		return nil, errors.Errorf("unsupported platform %s (linux/amd64 or linux/arm64)", p.String())
	}
	b, err := os.ReadFile(path) //nolint:gosec // the binary the caller built
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the provider binary")
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, errors.Wrapf(err, "%s is not a Linux executable", path)
	}
	if f.Machine != want {
		return nil, errors.Errorf("%s is built for %s, not for %s", path, f.Machine, p.String())
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return nil, errors.Errorf("%s is dynamically linked: build it with CGO_ENABLED=0", path)
		}
	}
	return b, nil
}

// readCABundle reads a PEM bundle holding at least one certificate, so an empty
// or truncated file never becomes the image's trust store.
func readCABundle(path string) ([]byte, error) {
	b, err := os.ReadFile(path) //nolint:gosec // the bundle the caller names
	if err != nil {
		return nil, errors.Wrap(err, "cannot read the CA bundle (Debian: apt-get install ca-certificates)")
	}
	if !x509.NewCertPool().AppendCertsFromPEM(b) {
		return nil, errors.Errorf("%s holds no PEM certificate", path)
	}
	return b, nil
}

// file is one entry of a layer, owned by uid (and the group of the same id).
type file struct {
	path  string
	mode  int64
	uid   int
	isDir bool
	body  []byte
}

func dir(path string, mode int64) file { return file{path: path, mode: mode, isDir: true} }

func baseFiles(caBundle []byte) []file {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	home := dir("home/nonroot/", 0o700)
	home.uid = NonRootUID
	return []file{
		dir("etc/", 0o755),
		{path: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{path: "etc/group", mode: 0o644, body: []byte(group)},
		dir("etc/ssl/", 0o755),
		dir("etc/ssl/certs/", 0o755),
		{path: CABundlePath[1:], mode: 0o644, body: caBundle},
		dir("home/", 0o755),
		home,
		dir("tmp/", 0o1777),
	}
}

func binaryFiles(bin []byte) []file {
	return []file{
		dir("usr/", 0o755),
		dir("usr/local/", 0o755),
		dir("usr/local/bin/", 0o755),
		{path: EntrypointPath[1:], mode: 0o755, body: bin},
	}
}

// layer writes files into an uncompressed tar; go-containerregistry compresses it.
func layer(files []file) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name: f.path, Mode: f.mode, Uid: f.uid, Gid: f.uid,
			ModTime: epoch, Format: tar.FormatPAX, Typeflag: tar.TypeReg, Size: int64(len(f.body)),
		}
		if f.isDir {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, errors.Wrapf(err, "cannot add %s", f.path)
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, errors.Wrapf(err, "cannot add %s", f.path)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, errors.Wrap(err, "cannot finish the layer")
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}
