#!/usr/bin/env bash
# Builds the real control-plane binaries used by envtest (KUBEBUILDER_ASSETS) and by
# controlplane.sh: kube-apiserver, kubectl, kube-controller-manager and etcd, from the Go
# module proxy only (no release tarballs, no Docker).
#
# The binaries live outside the checkout so that a fresh clone on the same machine (CI)
# reuses them; each carries a version stamp, so a rebuild happens only when a version here
# changes. A cold build takes several minutes and a multi-GB build cache, which is thrown
# away afterwards.
#
#   cluster/local/build-tools.sh        # prints the bin dir as its last line
#
# Environment: PROVIDER_PROXMOX_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox),
# K8S_VERSION, ETCD_VERSION.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.35.4}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
BIN=$CACHE_DIR/bin
K8S_BINARIES=(kube-apiserver kubectl kube-controller-manager)

log() { echo "[build-tools] $*" >&2; }

stamp_ok() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$2" ]; }

k8s_ok() {
	local b
	for b in "${K8S_BINARIES[@]}"; do stamp_ok "$b" "$K8S_VERSION" || return 1; done
}

# Install a freshly built binary under its final name only once complete, so an
# interrupted build never leaves a half-written binary with a valid stamp.
install_binary() { # NAME VERSION
	mv -f "$WORK/out/$1" "$BIN/$1"
	echo "$2" >"$BIN/.$1.version"
}

go_env() {
	# A throwaway build cache: the k8s build fills several GB we never reuse.
	export CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"
	export GOCACHE=$WORK/gocache
}

new_module() { # DIR MODULE-PATH; go.mod body on stdin
	mkdir -p "$1"
	{ printf 'module %s\n\ngo 1.25.0\n\n' "$2"; cat; } >"$1/go.mod"
}

# k8s.io/kubernetes requires its staging modules as v0.0.0 with replace => ./staging/...;
# outside its own repository each must be mapped to the published v0.X.Y.
k8s_staging_replaces() {
	local gomod staging_version="v0.${K8S_VERSION#*.}"
	gomod=$(cd "$WORK" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
		sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
	[ -f "$gomod" ] || { log "cannot download k8s.io/kubernetes@v$K8S_VERSION"; return 1; }
	sed -n '/^replace (/,/^)/p' "$gomod" | awk -v sv="$staging_version" '/=>/{print "\t" $1 " => " $1 " " sv}'
}

k8s_ldflags() {
	local minor=${K8S_VERSION#*.} ld="-s -w" p
	minor=${minor%%.*}
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld="$ld -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$ld"
}

build_k8s() {
	k8s_ok && return 0
	local replaces pkgs=() b
	replaces=$(k8s_staging_replaces)
	new_module "$WORK/k8s" local/k8s-tools <<EOF
require k8s.io/kubernetes v$K8S_VERSION

replace (
$replaces
)
EOF
	for b in "${K8S_BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
	log "building kubernetes v$K8S_VERSION: ${K8S_BINARIES[*]}"
	(cd "$WORK/k8s" && go build -trimpath -ldflags "$(k8s_ldflags)" -o "$WORK/out/" "${pkgs[@]}")
	for b in "${K8S_BINARIES[@]}"; do install_binary "$b" "$K8S_VERSION"; done
}

build_etcd() {
	stamp_ok etcd "$ETCD_VERSION" && return 0
	local v=v$ETCD_VERSION
	# etcd's server module replaces its siblings with relative paths; pin them to the same tag.
	new_module "$WORK/etcd" local/etcd-tools <<EOF
require (
	go.etcd.io/etcd/server/v3 $v
	go.etcd.io/etcd/api/v3 $v
	go.etcd.io/etcd/client/pkg/v3 $v
	go.etcd.io/etcd/client/v3 $v
	go.etcd.io/etcd/pkg/v3 $v
)
EOF
	log "building etcd $v"
	(cd "$WORK/etcd" && go build -trimpath -ldflags "-s -w" -o "$WORK/out/etcd" go.etcd.io/etcd/server/v3)
	install_binary etcd "$ETCD_VERSION"
}

main() {
	mkdir -p "$BIN"
	# Two concurrent callers (a developer's make test and CI) must not build twice into one dir.
	exec 9>"$CACHE_DIR/.build.lock"
	flock 9
	if ! k8s_ok || ! stamp_ok etcd "$ETCD_VERSION"; then
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/provider-proxmox-tools.XXXXXX")
		trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
		mkdir -p "$WORK/out"
		go_env
		local start=$SECONDS
		build_k8s
		build_etcd
		log "built in $((SECONDS - start))s"
	fi
	echo "$BIN"
}

main "$@"
