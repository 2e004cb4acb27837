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

package recipe

import (
	"context"
	"os"
	"os/exec"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// VersionVariable is the variable the linker stamps with the provider's version.
const VersionVariable = "github.com/kubemox/provider-proxmox/internal/version.Version"

// Binary is one build of cmd/provider for the runtime image.
type Binary struct {
	// Go is the go command; ModuleRoot the provider's checkout.
	Go         string
	ModuleRoot string
	Platform   v1.Platform
	Version    string
	// Output is the binary to write.
	Output string
}

// BuildBinary cross-builds cmd/provider with CGO_ENABLED=0 (the image has no C
// library), without local paths (-trimpath) or symbol tables (-s -w), with the
// version stamped in.
func BuildBinary(ctx context.Context, b Binary) error {
	args := []string{
		"build", "-trimpath", "-ldflags", "-s -w -X " + VersionVariable + "=" + b.Version,
		"-o", b.Output, "./cmd/provider",
	}
	cmd := exec.CommandContext(ctx, b.Go, args...) //nolint:gosec // the go command the caller names
	cmd.Dir = b.ModuleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+b.Platform.OS, "GOARCH="+b.Platform.Architecture)
	out, err := cmd.CombinedOutput()
	return errors.Wrapf(err, "%s %s for %s: %s", b.Go, strings.Join(args, " "), b.Platform.String(), out)
}
