# provider-proxmox
SHELL := /bin/bash
GO ?= go
BIN := bin
# Expensive tool builds (kube-apiserver, etcd, ...) live outside the checkout so a fresh
# clone on the same machine reuses them.
CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/provider-proxmox
PVE_API_SCHEMA ?= $(abspath ../shared/pve-api/apidata.json)
export PVE_API_SCHEMA

.PHONY: all build generate check-generate test lint fmt vet tools clean

all: build

build:
	$(GO) build -o $(BIN)/provider ./cmd/provider
	$(GO) build -o $(BIN)/pvesim ./cmd/pvesim

generate:
	$(GO) generate -tags generate ./apis/...

# Fails when checked-in generated code differs from what `make generate` produces.
check-generate: generate
	@git diff --exit-code -- apis package/crds || { echo "generated code is stale: run make generate and commit"; exit 1; }

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test:
	$(GO) test -count=1 ./...

clean:
	rm -rf $(BIN)
