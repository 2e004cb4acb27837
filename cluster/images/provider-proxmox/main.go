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

// Command provider-proxmox builds the provider's Crossplane package for one
// platform without Docker: cmd/provider cross-built with CGO_ENABLED=0, the
// runtime image around it (see package recipe) written as a `docker save` tarball,
// then `crossplane xpkg build`. `make xpkg` runs it once per platform:
//
//	go run ./cluster/images/provider-proxmox --platform linux/amd64 --version v0.1.0 \
//	    --revision $(git rev-parse HEAD) --binary _output/bin/linux_amd64/provider \
//	    --crossplane ~/.cache/provider-proxmox/bin/crossplane \
//	    --runtime-tarball _output/images/provider-proxmox-amd64.tar \
//	    --xpkg _output/xpkg/provider-proxmox-amd64.xpkg
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/kubemox/provider-proxmox/cluster/images/provider-proxmox/recipe"
)

type options struct {
	binary         recipe.Binary
	runtime        recipe.Runtime
	platform       string
	runtimeTarball string
	pkg            recipe.Package
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("provider-proxmox", flag.ContinueOnError)
	fs.StringVar(&o.platform, "platform", "linux/amd64", "OS/architecture of the binary and the image")
	fs.StringVar(&o.runtime.Binary, "binary", "", "where to write the provider binary")
	fs.StringVar(&o.binary.Go, "go", "go", "the go command")
	fs.StringVar(&o.runtime.CABundle, "ca-bundle", recipe.CABundlePath, "PEM CA bundle the image trusts")
	fs.StringVar(&o.runtime.Version, "version", "", "version label and image tag")
	fs.StringVar(&o.runtime.Revision, "revision", "", "git commit label")
	fs.StringVar(&o.runtimeTarball, "runtime-tarball", "", "where to write the runtime image (docker save format)")
	fs.StringVar(&o.pkg.CLI, "crossplane", "crossplane", "the crossplane CLI")
	fs.StringVar(&o.pkg.Root, "package-root", "package", "directory of crossplane.yaml, the CRDs and the MRDs")
	fs.StringVar(&o.pkg.Examples, "examples-root", "examples", "directory of the examples the package carries")
	fs.StringVar(&o.pkg.Output, "xpkg", "", "the package file to write")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for flagName, v := range map[string]string{"binary": o.runtime.Binary, "version": o.runtime.Version,
		"runtime-tarball": o.runtimeTarball, "xpkg": o.pkg.Output} {
		if v == "" {
			return o, errors.Errorf("--%s is required", flagName)
		}
	}
	p, err := v1.ParsePlatform(o.platform)
	if err != nil {
		return o, errors.Wrapf(err, "cannot parse --platform %q", o.platform)
	}
	o.runtime.Platform = *p
	o.binary = recipe.Binary{Go: o.binary.Go, ModuleRoot: ".", Platform: *p, Version: o.runtime.Version, Output: o.runtime.Binary}
	o.pkg.RuntimeTarball = o.runtimeTarball
	return o, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "provider-proxmox image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := recipe.BuildBinary(ctx, o.binary); err != nil {
		return err
	}
	report("provider binary "+o.platform, o.binary.Output, start)

	start = time.Now()
	img, err := recipe.RuntimeImage(o.runtime)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(recipe.Title + ":" + o.runtime.Version + "-" + o.runtime.Platform.Architecture)
	if err != nil {
		return errors.Wrap(err, "cannot tag the runtime image")
	}
	if err := recipe.WriteRuntimeTarball(o.runtimeTarball, tag, img); err != nil {
		return err
	}
	report("runtime image "+tag.String(), o.runtimeTarball, start)

	start = time.Now()
	if err := recipe.BuildPackage(ctx, o.pkg); err != nil {
		return err
	}
	report("package "+o.platform, o.pkg.Output, start)
	return nil
}

// report says what was written, how large it is and how long it took.
func report(what, path string, since time.Time) {
	size := "size unknown"
	if fi, err := os.Stat(path); err == nil {
		size = fmt.Sprintf("%.1f MB", float64(fi.Size())/1e6)
	}
	fmt.Printf("%s: %s (%s) in %s\n", what, path, size, time.Since(since).Round(100*time.Millisecond))
}
