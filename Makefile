# provider-proxmox
SHELL := /bin/bash
GO ?= go
BIN := bin
# Expensive tool builds (kube-apiserver, etcd, ...) live outside the checkout so a fresh
# clone on the same machine reuses them.
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/provider-proxmox
PVE_API_SCHEMA ?= $(abspath ../shared/pve-api/apidata.json)
export PVE_API_SCHEMA
# kube-apiserver, etcd, kubectl, kube-controller-manager built by `make tools`; envtest and
# cluster/local/controlplane.sh use them.
TOOLS_BIN := $(CACHE_DIR)/bin
export PROVIDER_PROXMOX_CACHE := $(CACHE_DIR)

.PHONY: e2e-real bench all build xpkg xpkg-ca-bundle xpkg-push generate check-generate test fuzz lint fmt vet tools controlplane-up controlplane-down clean demo demo-down demo-crossplane demo-crossplane-down dashboard-png

# The version stamped into the provider and labelling its image: the git tag on HEAD, else a
# Go-style pseudo-version of the commit (v0.0.0-yyyymmddhhmmss-abcdefabcdef); -dirty when
# tracked files differ from the commit.
ifeq ($(origin VERSION),undefined)
VERSION := $(shell git describe --tags --exact-match 2>/dev/null || \
	{ TZ=UTC git log -1 --format=v0.0.0-%cd-%h --abbrev=12 --date=format-local:%Y%m%d%H%M%S 2>/dev/null || echo v0.0.0-unversioned; })$(if $(shell git status --porcelain --untracked-files=no 2>/dev/null),-dirty)
endif
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X github.com/kubemox/provider-proxmox/internal/version.Version=$(VERSION)

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/provider ./cmd/provider
	$(GO) build -o $(BIN)/pvesim ./cmd/pvesim

# The Crossplane package, built without Docker by cluster/images/provider-proxmox: for each of
# PLATFORMS, cmd/provider cross-built with CGO_ENABLED=0, a distroless-like runtime image around
# it (_output/images/provider-proxmox-ARCH.tar, `docker load`-able) and `crossplane xpkg build`
# of package/ and examples/ with that image: _output/xpkg/provider-proxmox-ARCH.xpkg.
PLATFORMS ?= linux/amd64 linux/arm64
OUTPUT := _output
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
XPKG_FILES = $(foreach p,$(PLATFORMS),$(OUTPUT)/xpkg/provider-proxmox-$(lastword $(subst /, ,$(p))).xpkg)

xpkg: xpkg-ca-bundle
	@cluster/local/build-tools.sh crossplane >/dev/null
	@set -e; for platform in $(PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		$(GO) run ./cluster/images/provider-proxmox --platform $$platform --version $(VERSION) --revision $(REVISION) \
			--go $(GO) --ca-bundle $(CA_BUNDLE) --crossplane $(TOOLS_BIN)/crossplane \
			--binary $(OUTPUT)/bin/$${os}_$${arch}/provider \
			--runtime-tarball $(OUTPUT)/images/provider-proxmox-$$arch.tar \
			--xpkg $(OUTPUT)/xpkg/provider-proxmox-$$arch.xpkg; \
	done

# The runtime image trusts the build machine's CA bundle; Debian's ca-certificates provides it.
xpkg-ca-bundle:
	@[ -s $(CA_BUNDLE) ] || { echo "xpkg: $(CA_BUNDLE) is missing: installing Debian's ca-certificates (apt-get) for the runtime image's CA bundle"; \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates; }

# Pushes the packages of PLATFORMS as REGISTRY:TAG; several become one image index, one entry
# per platform. Example: make xpkg-push REGISTRY=127.0.0.1:5000/provider-proxmox TAG=v0.1.0
TAG ?= $(VERSION)
xpkg-push: xpkg
	@[ -n "$(REGISTRY)" ] || { echo "xpkg-push: set REGISTRY, e.g. REGISTRY=127.0.0.1:5000/provider-proxmox"; exit 1; }
	$(TOOLS_BIN)/crossplane xpkg push -f "$$(echo $(XPKG_FILES) | tr " " ,)" $(REGISTRY):$(TAG)

generate:
	$(GO) generate -tags generate ./apis/...

# Fails when checked-in generated code differs from what `make generate` produces.
check-generate: generate
	@git diff --exit-code -- apis package/crds package/mrds docs/reference || { echo "generated code is stale: run make generate and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- apis package/crds package/mrds docs/reference); \
	if [ -n "$$untracked" ]; then echo "generated files not committed:"; echo "$$untracked"; exit 1; fi

# hack/dashboardpng is a module of its own (Prometheus's k8s.io pins): ./... does not reach it.
vet:
	$(GO) vet ./...
	cd hack/dashboardpng && $(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Static checks: go vet, gofmt, a tidy go.mod, then golangci-lint with .golangci.yml
# (golangci-lint is built once into the tools cache: ~5 minutes cold on a busy 2-core machine,
# instant after; its analysis cache makes a warm run take seconds). Runs sharing that cache (two
# checkouts on one machine) wait for each other instead of failing.
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@bin=$$(cluster/local/build-tools.sh lint) && "$$bin/golangci-lint" run --allow-serial-runners ./...

# Integration packages each run one real API server and mostly wait on the simulator's tasks and
# the provider's polls (the VirtualMachine e2e package: 47 CPU seconds in 268 s), so three run at
# once: 8m38s instead of 23m40s on a 2-core machine. TEST_PARALLEL=1 runs them one by one.
# SKIP_INTEGRATION=1 skips them, and the minutes-long tools build with them. test/xpkg builds the
# runtime image, CA bundle included.
TEST_PARALLEL ?= 3
# The packages on real Crossplane (test/crossplane, test/kubemox) cross-build the provider with
# CGO_ENABLED=0 for its image: about 2 minutes each with a warm build cache, but more than go
# test's default 10-minute budget on a cold cache with the machine busy (seen at load 23), so the
# budget per package is 30 minutes; CI's own limit stays the outer bound.
TEST_TIMEOUT ?= 30m
# PVE_ENDPOINT is emptied so the conformance and e2e-real packages run on the simulator even in a
# shell set up for `make e2e-real`.
test: xpkg-ca-bundle $(if $(filter 1,$(SKIP_INTEGRATION)),,tools)
	PVE_ENDPOINT= KUBEBUILDER_ASSETS=$(TOOLS_BIN) $(GO) test -count=1 -p $(TEST_PARALLEL) -timeout $(TEST_TIMEOUT) ./...

# The conformance suite (test/pveconformance) and the provider's end-to-end suite (test/e2ereal)
# against a real Proxmox VE 9.x: PVE_ENDPOINT, credentials, PVE_NODE, PVE_STORAGE, PVE_VMID_RANGE
# and PVE_POOL as docs/guides/simulator-and-conformance.md ("Conformance suite and make e2e-real
# against a real cluster") says.
# One package at a time: each refuses to start unless the VMID range is empty, and removes what it
# made at the end (`go run ./cmd/pve-conformance cleanup` after an interrupted run). `make test` runs
# both against the simulator.
e2e-real: tools
	@[ -n "$$PVE_ENDPOINT" ] || { echo "e2e-real: PVE_ENDPOINT is not set: see docs/guides/simulator-and-conformance.md"; exit 1; }
	KUBEBUILDER_ASSETS=$(TOOLS_BIN) $(GO) test -count=1 -p 1 -timeout 90m -v ./test/pveconformance/ ./test/e2ereal/

# The benchmark programs (cmd/bench; not part of `make test`): each starts an API server, the
# simulator (clones 2-5 s, create and start 1 s, /cluster/resources 5 s behind) and the provider
# binary, and prints its figures with the settings that produced them. Sized to finish in minutes
# on a busy 2-core machine; docs/guides/performance.md gives the full-size commands. Fails
# only on a correctness failure (duplicate or leaked VM, resource not Ready, revoked credential
# still sent), never on a timing.
BENCH = KUBEBUILDER_ASSETS=$(TOOLS_BIN) $(GO) run ./cmd/bench
bench: tools fuzz
	$(BENCH) -vms 100 -poll 20s -steady-intervals 2 convergence
	$(BENCH) -managed 200 -secrets 2000 -crds 200 -max-reconcile-rate 20 memory
	$(BENCH) -rotation-vms 200 -max-reconcile-rate 100 rotation
	$(BENCH) -cycles 30 -kills 4 -poll 20s -max-reconcile-rate 20 soak
	$(BENCH) -down-vms 200 -down-after 3m down

# Fuzzes every fuzz target for FUZZTIME (default 30s) each; `make test` runs their seed corpora
# (and any crasher kept under testdata/fuzz) as ordinary tests.
fuzz:
	FUZZTIME=$(or $(FUZZTIME),30s) GO=$(GO) hack/fuzz.sh

# Builds the control-plane binaries, the Crossplane tools (core and its RBAC manager, CLI, crane,
# function-patch-and-transform) and promtool (test/monitoring) once per version: minutes cold,
# instant when cached.
tools:
	cluster/local/build-tools.sh envtest crossplane monitoring

# A local etcd + kube-apiserver + kube-controller-manager (garbage collector, namespaces);
# the last line printed is the kubeconfig path.
controlplane-up: tools
	cluster/local/controlplane.sh up

controlplane-down:
	cluster/local/controlplane.sh down

clean:
	rm -rf $(BIN) $(OUTPUT)

# The main job: simulator + local control plane + provider, the seed's VM sample applied and
# Ready; left running (stop with `make demo-down`).
demo:
	cluster/local/demo.sh up

# Stops both demos.
demo-down:
	cluster/local/demo.sh down

# Real Crossplane (core, RBAC manager, a local registry), the package pushed and installed with
# `crossplane xpkg`, the provider running as its revision's ServiceAccount, a claim Ready; left
# running (stop with `make demo-crossplane-down` or `make demo-down`).
demo-crossplane:
	cluster/local/demo.sh crossplane

demo-crossplane-down:
	cluster/local/demo.sh crossplane-down

# docs/images/dashboard.png, the README's picture of examples/monitoring/dashboard.json, from a
# few minutes of activity on the demo (reused when running, else started and stopped): its
# /metrics scraped, every panel's PromQL evaluated by Prometheus's engine (hack/dashboardpng).
# FIXTURE=1 also refreshes test/monitoring's recording.
dashboard-png:
	cluster/local/dashboard-png.sh
