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

// Package version holds the provider's version, stamped at link time.
package version

// Version is set by `make xpkg` (and `make build`) with
// -ldflags "-X github.com/kubemox/provider-proxmox/internal/version.Version=…";
// a plain `go build` leaves this marker so a binary of unknown origin says so.
var Version = "v0.0.0-unversioned"
