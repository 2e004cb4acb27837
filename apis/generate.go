//go:build generate

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

// Generated CRDs are removed first so a renamed or deleted kind leaves no stale
// file behind; both generators are deterministic, so running this twice
// yields no diff.

//go:generate rm -rf ../package/crds
//go:generate go run -tags generate sigs.k8s.io/controller-tools/cmd/controller-gen object:headerFile=../hack/boilerplate.go.txt paths=./... crd:crdVersions=v1 output:artifacts:config=../package/crds

// The package ships ProxmoxConnection as an MRD that is always Active (see
// hack/mrdgen), generated from its CRD so the two never disagree.
//go:generate go run ../hack/mrdgen --crds ../package/crds --out ../package/mrds
// The API reference (docs/reference), generated from the CRDs so it shows what the
// API server enforces.
//go:generate go run ../hack/crdref --crds ../package/crds --out ../docs/reference
// The managed resources' accessors over their embedded ResourceSpec.
//go:generate go run ../hack/managedgen --dir ./v1alpha1 --header-file=../hack/boilerplate.go.txt

//go:generate go run -tags generate github.com/crossplane/crossplane-tools/cmd/angryjet generate-methodsets --header-file=../hack/boilerplate.go.txt ./...

package apis

import (
	_ "github.com/crossplane/crossplane-tools/cmd/angryjet" //nolint:typecheck
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"     //nolint:typecheck
)
