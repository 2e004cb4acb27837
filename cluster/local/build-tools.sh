#!/usr/bin/env bash
# Builds the tools the tests, the demo and the package need, from the Go module proxy only
# (no release tarballs, no Docker):
#   envtest     kube-apiserver, kubectl, kube-controller-manager, etcd (envtest, controlplane.sh)
#   crossplane  Crossplane core and its RBAC manager, the Crossplane CLI, crane (a local OCI
#               registry) and function-patch-and-transform (the example Compositions' function),
#               plus Crossplane's own CRDs in crossplane-crds/ and the function's package
#               directory in function-patch-and-transform-package/ beside bin/
#   lint        golangci-lint
#   monitoring  promtool (checks examples/monitoring's PrometheusRule), built without Prometheus's
#               service-discovery plugins (tag remove_all_sd), which promtool's rule checks never use;
#               dashboardpng (hack/dashboardpng, a module of its own: renders the dashboard with
#               Prometheus's engine), stamped with a hash of its sources so an edit rebuilds it;
#               and the prometheus-operator CRDs (ServiceMonitor, PodMonitor, PrometheusRule) in
#               prometheus-operator-crds/ beside bin/, generated with controller-gen from the
#               operator's API module (it publishes its CRDs as YAML only in its root module, which
#               the module proxy does not serve), so examples/monitoring validates offline
#
# The binaries live outside the checkout so that a fresh clone on the same machine (CI)
# reuses them; each carries a version stamp, so a rebuild happens only when a version here
# changes. Everything missing is built in one run sharing one Go build cache (the tools share
# most of their dependencies), thrown away afterwards because it grows to several GB. Each
# step says how long it took.
#
#   cluster/local/build-tools.sh [envtest|crossplane|lint|monitoring|all]...  # default envtest;
#                                                                             # prints the bin dir last
#
# Environment: PROVIDER_PROXMOX_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox),
# K8S_VERSION, ETCD_VERSION, XP_CORE_VERSION, XP_CLI_VERSION, GCR_VERSION, FN_PAT_VERSION,
# GOLANGCI_LINT_VERSION, PROMETHEUS_VERSION, PROMETHEUS_OPERATOR_VERSION, CONTROLLER_TOOLS_VERSION.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-1.35.4}
ETCD_VERSION=${ETCD_VERSION:-3.6.16}
# Core v2.4.2 needs crossplane-runtime v2.4.2, which the module proxy does not serve.
XP_CORE_VERSION=${XP_CORE_VERSION:-2.4.0}
# The CLI lives in github.com/crossplane/cli/v2 since Crossplane v2.3.
XP_CLI_VERSION=${XP_CLI_VERSION:-2.5.0}
# go-containerregistry: crane here, and the library cluster/images/provider-proxmox uses.
GCR_VERSION=${GCR_VERSION:-0.22.1}
# v0.10.8 is the newest tag, but the module proxy serves v0.10.7 at most.
FN_PAT_VERSION=${FN_PAT_VERSION:-0.10.7}
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-2.15.0}
# The Go module version of Prometheus (v0.316.0 is Prometheus 3.16.0's module tag).
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-0.316.0}
# github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring, the operator's API types.
PROMETHEUS_OPERATOR_VERSION=${PROMETHEUS_OPERATOR_VERSION:-0.95.2}
# controller-gen, as go.mod's tool directive pins it for make generate.
CONTROLLER_TOOLS_VERSION=${CONTROLLER_TOOLS_VERSION:-0.20.0}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DASHBOARDPNG_DIR=$ROOT/hack/dashboardpng
CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
BIN=$CACHE_DIR/bin
K8S_BINARIES=(kube-apiserver kubectl kube-controller-manager)

log() { echo "[build-tools] $*" >&2; }

# timed DESCRIPTION CMD...: runs CMD and says how long it took.
timed() {
	local what=$1 start=$SECONDS
	shift
	log "building $what"
	"$@"
	log "built $what in $((SECONDS - start))s"
}

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
	# One throwaway build cache for every tool of this run (see the header).
	export CGO_ENABLED=0 GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -buildvcs=false"
	export GOCACHE=$WORK/gocache
}

new_module() { # DIR MODULE-PATH [GO-VERSION]; go.mod body on stdin
	mkdir -p "$1"
	{ printf 'module %s\n\ngo %s\n\n' "$2" "${3:-1.25.0}"; cat; } >"$1/go.mod"
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
	(cd "$WORK/k8s" && timed "kubernetes v$K8S_VERSION: ${K8S_BINARIES[*]}" \
		go build -trimpath -ldflags "$(k8s_ldflags)" -o "$WORK/out/" "${pkgs[@]}")
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
	(cd "$WORK/etcd" && timed "etcd $v" go build -trimpath -ldflags "-s -w" -o "$WORK/out/etcd" go.etcd.io/etcd/server/v3)
	install_binary etcd "$ETCD_VERSION"
}

# The runtime's version variable, so `crossplane --version` and core's logs say what they are.
xp_ldflags() { echo "-s -w -X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v$1"; }

xp_crds_ok() { [ "$(cat "$CACHE_DIR/crossplane-crds/.version" 2>/dev/null)" = "$XP_CORE_VERSION" ]; }

# The wrapper module core is built from; crossplane/v2 replaces its apis module with ./apis, so
# that module is pinned to the same tag.
xpcore_module() {
	[ -f "$WORK/xpcore/go.mod" ] && return 0
	local v=v$XP_CORE_VERSION
	new_module "$WORK/xpcore" local/xpcore-tools 1.26.0 <<EOF
require (
	github.com/crossplane/crossplane/v2 $v
	github.com/crossplane/crossplane/apis/v2 $v
	github.com/crossplane/crossplane-runtime/v2 $v
)
EOF
}

xpcore_dir() { (cd "$WORK/xpcore" && go list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2); }

build_crossplane_core() {
	stamp_ok crossplane-core "$XP_CORE_VERSION" && xp_crds_ok && return 0
	local v=v$XP_CORE_VERSION dir
	xpcore_module
	(cd "$WORK/xpcore" && timed "crossplane core $v" go build -trimpath -ldflags "$(xp_ldflags "$XP_CORE_VERSION")" \
		-o "$WORK/out/crossplane-core" github.com/crossplane/crossplane/v2/cmd/crossplane)
	install_binary crossplane-core "$XP_CORE_VERSION"
	# Crossplane's own CRDs: `crossplane core init` installs them, and `crossplane resource
	# validate` checks Compositions and XRDs against them offline.
	dir=$(xpcore_dir)
	rm -rf "$CACHE_DIR/crossplane-crds"
	cp -r "$dir/cluster/crds" "$CACHE_DIR/crossplane-crds"
	chmod -R u+w "$CACHE_DIR/crossplane-crds"
	echo "$XP_CORE_VERSION" >"$CACHE_DIR/crossplane-crds/.version"
}

# Core's `rbac start` (the RBAC manager) always serves metrics on :8080, with no flag to move
# it: a second stack on the machine, or a composition function (function-sdk-go takes :8080
# too when it is free), would make it exit. crossplane-rbac-manager is the same command built
# from a copy of core's module with one file patched to add --metrics-bind-address (default
# :8080 as upstream); its controllers, and so the permissions it grants providers, are
# untouched. (go build -overlay refuses files in the module cache, hence the copy.)
build_crossplane_rbac_manager() {
	stamp_ok crossplane-rbac-manager "$XP_CORE_VERSION" && return 0
	local v=v$XP_CORE_VERSION dir=$WORK/xprbac rbac
	xpcore_module
	mkdir -p "$dir"
	cp -r "$(xpcore_dir)" "$dir/crossplane"
	chmod -R u+w "$dir/crossplane"
	rbac=$dir/crossplane/cmd/crossplane/rbac/rbac.go
	sed -i -e 's|^\t"sigs.k8s.io/controller-runtime/pkg/cache"$|&\n\tmetricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"|' \
		-e 's|^\tLeaderElection      bool .*|&\n\tMetricsBindAddress string `default:":8080" help:"Address the metrics endpoint binds to; 0 disables it." name:"metrics-bind-address"`|' \
		-e 's|^\t\tLeaderElectionResourceLock: resourcelock.LeasesResourceLock,$|&\n\t\tMetrics: metricsserver.Options{BindAddress: c.MetricsBindAddress},|' \
		"$rbac"
	# Three insertions, or the upstream file changed under this version and the patch is stale.
	[ "$(grep -c 'metricsserver\|MetricsBindAddress' "$rbac")" = 3 ] ||
		{ log "cannot add --metrics-bind-address to $rbac (did $v change it?)"; return 1; }
	new_module "$dir" local/xprbac-tools 1.26.0 <<EOF
require (
	github.com/crossplane/crossplane/v2 $v
	github.com/crossplane/crossplane/apis/v2 $v
	github.com/crossplane/crossplane-runtime/v2 $v
)

replace github.com/crossplane/crossplane/v2 => ./crossplane
EOF
	(cd "$dir" && timed "crossplane RBAC manager $v" go build -trimpath -ldflags "$(xp_ldflags "$XP_CORE_VERSION")" \
		-o "$WORK/out/crossplane-rbac-manager" github.com/crossplane/crossplane/v2/cmd/crossplane)
	install_binary crossplane-rbac-manager "$XP_CORE_VERSION"
}

build_crossplane_cli() {
	stamp_ok crossplane "$XP_CLI_VERSION" && return 0
	local v=v$XP_CLI_VERSION
	new_module "$WORK/xpcli" local/xpcli-tools 1.26.0 <<EOF
require github.com/crossplane/cli/v2 $v
EOF
	(cd "$WORK/xpcli" && timed "crossplane CLI $v" go build -trimpath -ldflags "$(xp_ldflags "$XP_CLI_VERSION")" \
		-o "$WORK/out/crossplane" github.com/crossplane/cli/v2/cmd/crossplane)
	install_binary crossplane "$XP_CLI_VERSION"
}

build_crane() {
	stamp_ok crane "$GCR_VERSION" && return 0
	new_module "$WORK/crane" local/crane-tools <<EOF
require github.com/google/go-containerregistry v$GCR_VERSION
EOF
	(cd "$WORK/crane" && timed "crane v$GCR_VERSION" go build -trimpath -ldflags "-s -w" \
		-o "$WORK/out/crane" github.com/google/go-containerregistry/cmd/crane)
	install_binary crane "$GCR_VERSION"
}

fn_pat_package_ok() { [ "$(cat "$CACHE_DIR/function-patch-and-transform-package/.version" 2>/dev/null)" = "$FN_PAT_VERSION" ]; }

build_function_patch_and_transform() {
	stamp_ok function-patch-and-transform "$FN_PAT_VERSION" && fn_pat_package_ok && return 0
	local dir
	new_module "$WORK/fnpat" local/fnpat-tools 1.26.0 <<EOF
require github.com/crossplane-contrib/function-patch-and-transform v$FN_PAT_VERSION
EOF
	if ! stamp_ok function-patch-and-transform "$FN_PAT_VERSION"; then
		(cd "$WORK/fnpat" && timed "function-patch-and-transform v$FN_PAT_VERSION" go build -trimpath -ldflags "-s -w" \
			-o "$WORK/out/function-patch-and-transform" github.com/crossplane-contrib/function-patch-and-transform)
		install_binary function-patch-and-transform "$FN_PAT_VERSION"
	fi
	# Its package directory (meta and input CRD): the local Crossplane installs the function
	# from a package built from it (cluster/local/crossplane.sh).
	dir=$(cd "$WORK/fnpat" && go list -m -f '{{.Dir}}' github.com/crossplane-contrib/function-patch-and-transform)
	rm -rf "$CACHE_DIR/function-patch-and-transform-package"
	cp -r "$dir/package" "$CACHE_DIR/function-patch-and-transform-package"
	chmod -R u+w "$CACHE_DIR/function-patch-and-transform-package"
	echo "$FN_PAT_VERSION" >"$CACHE_DIR/function-patch-and-transform-package/.version"
}

build_golangci_lint() {
	stamp_ok golangci-lint "$GOLANGCI_LINT_VERSION" && return 0
	local v=v$GOLANGCI_LINT_VERSION
	new_module "$WORK/lint" local/lint-tools 1.26.0 <<EOF
require github.com/golangci/golangci-lint/v2 $v
EOF
	(cd "$WORK/lint" && timed "golangci-lint $v" go build -trimpath \
		-ldflags "-s -w -X main.version=$GOLANGCI_LINT_VERSION -X main.commit=$v -X main.date=1970-01-01T00:00:00Z" \
		-o "$WORK/out/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
	install_binary golangci-lint "$GOLANGCI_LINT_VERSION"
}

build_promtool() {
	stamp_ok promtool "$PROMETHEUS_VERSION" && return 0
	local v=v$PROMETHEUS_VERSION
	new_module "$WORK/monitoring" local/monitoring-tools 1.26.0 <<EOF
require github.com/prometheus/prometheus $v
EOF
	(cd "$WORK/monitoring" && timed "promtool $v" go build -trimpath -tags remove_all_sd \
		-ldflags "-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION" \
		-o "$WORK/out/promtool" github.com/prometheus/prometheus/cmd/promtool)
	install_binary promtool "$PROMETHEUS_VERSION"
}

po_crds_ok() {
	[ "$(cat "$CACHE_DIR/prometheus-operator-crds/.version" 2>/dev/null)" = "$PROMETHEUS_OPERATOR_VERSION/$CONTROLLER_TOOLS_VERSION" ]
}

# The operator's CRDs the examples use, generated from its v1 API types the way its own
# Makefile does (controller-gen crd), into a fresh directory moved into place when complete.
build_prometheus_operator_crds() {
	po_crds_ok && return 0
	local api=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring out=$WORK/po-crds kind
	new_module "$WORK/po" local/prometheus-operator-crds 1.26.0 <<EOF
require $api v$PROMETHEUS_OPERATOR_VERSION
EOF
	printf 'package crds\n\nimport _ "%s/v1"\n' "$api" >"$WORK/po/crds.go"
	(cd "$WORK/po" && go mod tidy &&
		timed "prometheus-operator CRDs v$PROMETHEUS_OPERATOR_VERSION" \
			go run "sigs.k8s.io/controller-tools/cmd/controller-gen@v$CONTROLLER_TOOLS_VERSION" \
			crd:crdVersions=v1,allowDangerousTypes=true paths="$api/v1" output:crd:dir="$out/all")
	mkdir -p "$out/keep"
	for kind in servicemonitors podmonitors prometheusrules; do
		mv "$out/all/monitoring.coreos.com_$kind.yaml" "$out/keep/"
	done
	echo "$PROMETHEUS_OPERATOR_VERSION/$CONTROLLER_TOOLS_VERSION" >"$out/keep/.version"
	rm -rf "$CACHE_DIR/prometheus-operator-crds"
	mv "$out/keep" "$CACHE_DIR/prometheus-operator-crds"
}

# dashboardpng's stamp: a hash of its module's files, so any edit (code or a pinned version)
# makes a rebuild.
dashboardpng_version() {
	(cd "$DASHBOARDPNG_DIR" && find . -name '*.go' ! -name '*_test.go' | LC_ALL=C sort | xargs cat go.mod go.sum | sha256sum | cut -c1-16)
}

# Built right after promtool in the same run, so the Prometheus packages they share (promql,
# tsdb, ...) compile once in the run's build cache. -mod=readonly: the checkout's go.mod and
# go.sum are the pins; a build never rewrites them.
build_dashboardpng() {
	local v
	v=$(dashboardpng_version)
	stamp_ok dashboardpng "$v" && return 0
	(cd "$DASHBOARDPNG_DIR" && timed "dashboardpng $v" go build -mod=readonly -trimpath -ldflags "-s -w" \
		-o "$WORK/out/dashboardpng" .)
	install_binary dashboardpng "$v"
}

envtest_ok() { k8s_ok && stamp_ok etcd "$ETCD_VERSION"; }
crossplane_ok() {
	stamp_ok crossplane-core "$XP_CORE_VERSION" && xp_crds_ok && stamp_ok crossplane-rbac-manager "$XP_CORE_VERSION" &&
		stamp_ok crossplane "$XP_CLI_VERSION" && stamp_ok crane "$GCR_VERSION" &&
		stamp_ok function-patch-and-transform "$FN_PAT_VERSION" && fn_pat_package_ok
}
lint_ok() { stamp_ok golangci-lint "$GOLANGCI_LINT_VERSION"; }
monitoring_ok() { stamp_ok promtool "$PROMETHEUS_VERSION" && stamp_ok dashboardpng "$(dashboardpng_version)" && po_crds_ok; }

build_set() { # SET
	case $1 in
	envtest) build_k8s; build_etcd ;;
	crossplane)
		build_crossplane_core
		build_crossplane_rbac_manager
		build_crossplane_cli
		build_crane
		build_function_patch_and_transform
		;;
	lint) build_golangci_lint ;;
	monitoring) build_promtool; build_dashboardpng; build_prometheus_operator_crds ;;
	esac
}

main() {
	local sets=("$@") set missing=()
	[ ${#sets[@]} -gt 0 ] || sets=(envtest)
	[ "${sets[*]}" != all ] || sets=(envtest crossplane lint monitoring)
	for set in "${sets[@]}"; do
		case $set in
		envtest | crossplane | lint | monitoring) "${set}_ok" || missing+=("$set") ;;
		*) log "unknown tool set $set (envtest, crossplane, lint, monitoring, all)"; return 2 ;;
		esac
	done
	mkdir -p "$BIN"
	if [ ${#missing[@]} -gt 0 ]; then
		# Two concurrent callers (a developer's make test and CI) must not build twice into one
		# dir; the second finds the stamps the first wrote and skips each tool.
		exec 9>"$CACHE_DIR/.build.lock"
		flock 9
		WORK=$(mktemp -d "${TMPDIR:-/tmp}/provider-proxmox-tools.XXXXXX")
		trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT
		mkdir -p "$WORK/out"
		go_env
		local start=$SECONDS
		for set in "${missing[@]}"; do build_set "$set"; done
		log "tool sets ${missing[*]} ready in $((SECONDS - start))s"
	fi
	echo "$BIN"
}

main "$@"
