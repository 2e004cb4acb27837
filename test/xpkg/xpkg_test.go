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

package xpkg

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubemox/provider-proxmox/cluster/images/provider-proxmox/recipe"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const testVersion = "v0.0.0-xpkgtest"

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

// built is what TestMain builds once: cmd/provider for linux/amd64 the way
// `make xpkg` does (same flags, so the two share Go's build cache).
var built struct {
	root   string // the module root
	dir    string // scratch space for the package's files
	binary string
}

func TestMain(m *testing.M) { os.Exit(runPackage(m)) }

func runPackage(m *testing.M) int {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "provider-proxmox-xpkg-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	built.root, built.dir, built.binary = root, dir, filepath.Join(dir, "provider")
	// A cold cross-build of the provider takes minutes on two busy cores.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if err := recipe.BuildBinary(ctx, recipe.Binary{
		Go: "go", ModuleRoot: root, Platform: amd64, Version: testVersion, Output: built.binary,
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func runtimeImage(t *testing.T) v1.Image {
	t.Helper()
	img, err := recipe.RuntimeImage(recipe.Runtime{
		Binary: built.binary, CABundle: recipe.CABundlePath, Platform: amd64,
		Version: testVersion, Revision: "0123456789abcdef0123456789abcdef01234567",
	})
	if err != nil {
		t.Fatalf("RuntimeImage: %v", err)
	}
	return img
}

// imageFacts are the parts of an image config Crossplane's runtime and `xpkg push`
// rely on.
type imageFacts struct {
	OS, Architecture string
	Entrypoint       []string
	User             string
	Labels           map[string]string
}

func factsOf(t *testing.T, img v1.Image) imageFacts {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatalf("cannot read the image config: %v", err)
	}
	return imageFacts{
		OS: cf.OS, Architecture: cf.Architecture, Entrypoint: cf.Config.Entrypoint,
		User: cf.Config.User, Labels: cf.Config.Labels,
	}
}

var wantFacts = imageFacts{
	OS: "linux", Architecture: "amd64",
	Entrypoint: []string{"/usr/local/bin/crossplane-provider"},
	User:       "65532:65532",
	Labels: map[string]string{
		"org.opencontainers.image.source":      "https://github.com/kubemox/provider-proxmox",
		"org.opencontainers.image.title":       "provider-proxmox",
		"org.opencontainers.image.licenses":    "Apache-2.0",
		"org.opencontainers.image.version":     testVersion,
		"org.opencontainers.image.revision":    "0123456789abcdef0123456789abcdef01234567",
		"org.opencontainers.image.description": "Crossplane provider for Proxmox VE",
	},
}

func TestRuntimeImageConfig(t *testing.T) {
	if diff := cmp.Diff(wantFacts, factsOf(t, runtimeImage(t))); diff != "" {
		t.Errorf("runtime image config (-want +got):\n%s", diff)
	}
}

// entry is a file of an image's flattened filesystem.
type entry struct {
	mode int64
	uid  int
	body []byte
}

func filesOf(t *testing.T, img v1.Image) map[string]entry {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]entry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatalf("cannot read the image's filesystem: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("cannot read %s: %v", h.Name, err)
		}
		files[strings.TrimSuffix(h.Name, "/")] = entry{mode: h.Mode, uid: h.Uid, body: body}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRuntimeImageFiles(t *testing.T) {
	files := filesOf(t, runtimeImage(t))
	cases := map[string]struct {
		reason  string
		path    string
		mode    int64
		uid     int
		body    []byte // compared when set
		contain string // looked for when set
	}{
		"Binary": {
			reason: "the entrypoint is the binary built for the image, executable by anyone",
			path:   "usr/local/bin/crossplane-provider", mode: 0o755, body: mustRead(t, built.binary),
		},
		"CABundle": {
			reason: "Go reads the system trust store from this path to verify a Proxmox API certificate",
			path:   "etc/ssl/certs/ca-certificates.crt", mode: 0o644, body: mustRead(t, recipe.CABundlePath),
		},
		"User": {
			reason: "the non-root user the image runs as has an /etc/passwd entry",
			path:   "etc/passwd", mode: 0o644, contain: "nonroot:x:65532:65532:nonroot:/home/nonroot:",
		},
		"Group": {
			reason: "and a group",
			path:   "etc/group", mode: 0o644, contain: "nonroot:x:65532:",
		},
		"Home": {
			reason: "the user's home (the working directory) is its own",
			path:   "home/nonroot", mode: 0o700, uid: 65532,
		},
		"Tmp": {
			reason: "/tmp is writable by the non-root user, as in distroless",
			path:   "tmp", mode: 0o1777,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := files[tc.path]
			if !ok {
				t.Fatalf("%s\n%s is not in the image", tc.reason, tc.path)
			}
			if got.mode != tc.mode || got.uid != tc.uid {
				t.Errorf("%s\n%s: mode %o uid %d, want mode %o uid %d", tc.reason, tc.path, got.mode, got.uid, tc.mode, tc.uid)
			}
			if tc.body != nil && !bytes.Equal(got.body, tc.body) {
				t.Errorf("%s\n%s: %d bytes differ from the %d bytes it was made from", tc.reason, tc.path, len(got.body), len(tc.body))
			}
			if tc.contain != "" && !strings.Contains(string(got.body), tc.contain) {
				t.Errorf("%s\n%s = %q, want a line %q", tc.reason, tc.path, got.body, tc.contain)
			}
		})
	}
}

func TestRuntimeImageIsReproducible(t *testing.T) {
	first, err := runtimeImage(t).Digest()
	if err != nil {
		t.Fatal(err)
	}
	second, err := runtimeImage(t).Digest()
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two builds from one binary differ: %s and %s", first, second)
	}
}

func TestRuntimeImageRefusesWhatWouldNotRun(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "empty.crt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		reason   string
		platform v1.Platform
		caBundle string
		wantErr  string
	}{
		"BinaryOfAnotherArchitecture": {
			reason:   "an amd64 binary in an arm64 image would not start",
			platform: v1.Platform{OS: "linux", Architecture: "arm64"}, caBundle: recipe.CABundlePath,
			wantErr: "not for linux/arm64",
		},
		"UnsupportedPlatform": {
			reason:   "the image is distroless Linux",
			platform: v1.Platform{OS: "windows", Architecture: "amd64"}, caBundle: recipe.CABundlePath,
			wantErr: "unsupported platform windows/amd64",
		},
		"CABundleWithoutCertificates": {
			reason:   "an empty trust store would fail every TLS handshake with a public-CA certificate",
			platform: amd64, caBundle: notPEM,
			wantErr: "holds no PEM certificate",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := recipe.RuntimeImage(recipe.Runtime{
				Binary: built.binary, CABundle: tc.caBundle, Platform: tc.platform, Version: testVersion,
			})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s\nRuntimeImage() error = %v, want one containing %q", tc.reason, err, tc.wantErr)
			}
		})
	}
}

func TestBinaryCarriesItsVersion(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the linux/amd64 binary cannot run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	out, err := exec.CommandContext(t.Context(), built.binary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("provider --version: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != testVersion {
		t.Errorf("provider --version = %q, want %q (stamped by the linker)", got, testVersion)
	}
}

// TestPackage writes the runtime image as `make xpkg` does and builds the package
// around it with the real Crossplane CLI.
func TestPackage(t *testing.T) {
	cli := crossplaneCLI(t)
	img := runtimeImage(t)
	runtimeTarball := filepath.Join(built.dir, "runtime.tar")
	tag, err := name.NewTag("provider-proxmox:" + testVersion + "-amd64")
	if err != nil {
		t.Fatal(err)
	}
	if err := recipe.WriteRuntimeTarball(runtimeTarball, tag, img); err != nil {
		t.Fatal(err)
	}
	assertSameImage(t, img, runtimeTarball)

	out := filepath.Join(built.dir, "provider-proxmox-amd64.xpkg")
	if err := recipe.BuildPackage(t.Context(), recipe.Package{
		CLI: cli, Root: filepath.Join(built.root, "package"), Examples: filepath.Join(built.root, "examples"),
		RuntimeTarball: runtimeTarball, Output: out,
	}); err != nil {
		t.Fatalf("BuildPackage: %v", err)
	}
	pkg, err := tarball.ImageFromPath(out, nil)
	if err != nil {
		t.Fatalf("cannot read the package: %v", err)
	}
	if diff := cmp.Diff(wantFacts, factsOf(t, pkg), ignoreXpkgLayerLabels); diff != "" {
		t.Errorf("the package's runtime config (-want +got):\n%s", diff)
	}
	files := filesOf(t, pkg)
	if _, ok := files["usr/local/bin/crossplane-provider"]; !ok {
		t.Error("the package does not carry the runtime image's binary")
	}
	assertPackageContents(t, files["package.yaml"].body)
}

// ignoreXpkgLayerLabels drops the labels `xpkg build` adds to mark its own layers.
var ignoreXpkgLayerLabels = cmp.FilterPath(func(p cmp.Path) bool {
	mi, ok := p.Last().(cmp.MapIndex)
	return ok && strings.HasPrefix(mi.Key().String(), "io.crossplane.xpkg:")
}, cmp.Ignore())

func crossplaneCLI(t *testing.T) string {
	t.Helper()
	cli, err := testenv.Tool("crossplane")
	if err != nil {
		if os.Getenv(testenv.SkipEnvVar) == "1" {
			t.Skipf("%s=1 and the Crossplane CLI is not built: %v", testenv.SkipEnvVar, err)
		}
		t.Fatal(err)
	}
	return cli
}

// assertSameImage checks that the docker-save tarball holds img, as `xpkg build
// --embed-runtime-image-tarball` reads it.
func assertSameImage(t *testing.T, img v1.Image, path string) {
	t.Helper()
	loaded, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatalf("cannot load %s as a docker save archive: %v", path, err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	got, err := loaded.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%s holds image %s, want %s", path, got, want)
	}
}

// assertPackageContents checks the package's objects: the meta with safe-start and
// the Crossplane version the tests run, the kinds that are not managed resources
// (ProxmoxConnection, the snapshot policy, VirtualMachineSet, GuestImport) as Active MRDs
// only (no CRD of the same name), the other kinds as CRDs for Crossplane to convert or keep.
func assertPackageContents(t *testing.T, packageYAML []byte) {
	t.Helper()
	objects := decodeAll(t, packageYAML)
	kinds := map[string]string{}
	for _, o := range objects {
		if o.GetKind() == "Provider" {
			assertMeta(t, o)
			continue
		}
		if prev, dup := kinds[o.GetName()]; dup {
			t.Errorf("%s is defined twice in the package (%s and %s)", o.GetName(), prev, o.GetKind())
		}
		kinds[o.GetName()] = o.GetKind()
		if o.GetKind() == "ManagedResourceDefinition" {
			if state, _, _ := unstructured.NestedString(o.Object, "spec", "state"); state != "Active" {
				t.Errorf("MRD %s has spec.state %q, want Active", o.GetName(), state)
			}
		}
	}
	want := map[string]string{
		"proxmoxconnections.proxmox.alperen.cloud":      "ManagedResourceDefinition",
		"virtualmachines.proxmox.alperen.cloud":         "CustomResourceDefinition",
		"providerconfigusages.proxmox.alperen.cloud":    "CustomResourceDefinition",
		"virtualmachinesnapshots.proxmox.alperen.cloud": "CustomResourceDefinition",
		"containers.proxmox.alperen.cloud":              "CustomResourceDefinition",
		"customcertificates.proxmox.alperen.cloud":      "CustomResourceDefinition",
		"storagedownloadurls.proxmox.alperen.cloud":     "CustomResourceDefinition",
		"virtualmachinetemplates.proxmox.alperen.cloud": "CustomResourceDefinition",
		// Not managed resources: shipped Active like ProxmoxConnection.
		"virtualmachinesnapshotpolicies.proxmox.alperen.cloud": "ManagedResourceDefinition",
		"virtualmachinesets.proxmox.alperen.cloud":             "ManagedResourceDefinition",
		"guestimports.proxmox.alperen.cloud":                   "ManagedResourceDefinition",
	}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("the package's definitions (-want +got):\n%s", diff)
	}
}

func assertMeta(t *testing.T, meta *unstructured.Unstructured) {
	t.Helper()
	capabilities, _, _ := unstructured.NestedStringSlice(meta.Object, "spec", "capabilities")
	if diff := cmp.Diff([]string{"safe-start"}, capabilities); diff != "" {
		t.Errorf("spec.capabilities (-want +got):\n%s", diff)
	}
	if v, _, _ := unstructured.NestedString(meta.Object, "spec", "crossplane", "version"); v != ">=v2.4.0-0" {
		t.Errorf("spec.crossplane.version = %q, want >=v2.4.0-0 (the tests run core v2.4.0)", v)
	}
	for _, a := range []string{"meta.crossplane.io/source", "meta.crossplane.io/license", "meta.crossplane.io/maintainer",
		"meta.crossplane.io/description", "meta.crossplane.io/readme"} {
		if meta.GetAnnotations()[a] == "" {
			t.Errorf("the package metadata lacks the annotation %s", a)
		}
	}
}

func decodeAll(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	var objects []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objects
		}
		if err != nil {
			t.Fatalf("cannot split package.yaml: %v", err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("cannot parse a package.yaml document: %v", err)
		}
		if len(u.Object) > 0 {
			objects = append(objects, u)
		}
	}
}
