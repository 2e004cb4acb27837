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

.PHONY: all build generate check-generate test lint fmt vet tools controlplane-up controlplane-down clean demo demo-down

all: build

build:
	$(GO) build -o $(BIN)/provider ./cmd/provider
	$(GO) build -o $(BIN)/pvesim ./cmd/pvesim

generate:
	$(GO) generate -tags generate ./apis/...

# Fails when checked-in generated code differs from what `make generate` produces.
check-generate: generate
	@git diff --exit-code -- apis package/crds package/mrds || { echo "generated code is stale: run make generate and commit"; exit 1; }
	@untracked=$$(git ls-files --others --exclude-standard -- apis package/crds package/mrds); \
	if [ -n "$$untracked" ]; then echo "generated files not committed:"; echo "$$untracked"; exit 1; fi

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Integration packages each run one real API server; -p 1 keeps a 2-core machine from running
# several at once. SKIP_INTEGRATION=1 skips them, and the minutes-long tools build with them.
test: $(if $(filter 1,$(SKIP_INTEGRATION)),,tools)
	KUBEBUILDER_ASSETS=$(TOOLS_BIN) $(GO) test -count=1 -p 1 ./...

# Builds the control-plane binaries and the Crossplane tools (core, CLI, crane,
# function-patch-and-transform) once per version: minutes cold, instant when cached.
tools:
	cluster/local/build-tools.sh envtest crossplane

# A local etcd + kube-apiserver + kube-controller-manager (garbage collector, namespaces);
# the last line printed is the kubeconfig path.
controlplane-up: tools
	cluster/local/controlplane.sh up

controlplane-down:
	cluster/local/controlplane.sh down

clean:
	rm -rf $(BIN)

# The main job: simulator + local control plane + provider, the seed's VM sample applied and
# Ready; left running (stop with `make demo-down`).
demo:
	cluster/local/demo.sh up

demo-down:
	cluster/local/demo.sh down
