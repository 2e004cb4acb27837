#!/usr/bin/env bash
# Real Crossplane on the local control plane, without Docker or kubelet: Crossplane core v2.4.0
# (package runtime External: it installs packages but runs no pods), its RBAC manager, and an
# OCI registry on loopback. Packages are pushed and installed as a user would; what a pod
# runtime would do for them is done here instead:
#   - a provider revision gets the ServiceAccount and the (never running) Deployment the
#     Deployment runtime would create, so Crossplane's RBAC manager binds the revision's
#     ClusterRole to that ServiceAccount; the provider binary then runs locally with a token
#     of it, so it has exactly the permissions Crossplane grants, never cluster admin;
#   - a function runs as a local process serving gRPC over mutual TLS with a certificate
#     signed by Crossplane's root CA, and its revision's endpoint points at it.
#
#   cluster/local/crossplane.sh up                 # control plane + core + RBAC manager + registry;
#                                                  # last line: the admin kubeconfig
#   cluster/local/crossplane.sh package            # make xpkg for this machine; last line: its path
#   cluster/local/crossplane.sh install-provider XPKG
#                                                  # push, install, runtime stand-in, RBAC binding;
#                                                  # last line: the provider ServiceAccount's kubeconfig
#   cluster/local/crossplane.sh start-provider [FLAGS...]
#                                                  # runs the package's provider binary with that
#                                                  # kubeconfig
#   cluster/local/crossplane.sh install-function [NAME PACKAGE-DIR BINARY]
#                                                  # default: function-patch-and-transform
#   cluster/local/crossplane.sh env                # KEY=VALUE lines: kubeconfigs, registry, logs
#   cluster/local/crossplane.sh down               # stops everything and deletes the state
#
# Tools from `cluster/local/build-tools.sh envtest crossplane`. Everything listens on 127.0.0.1
# (core's metrics and probes on free ports). Each step says how long it took.
#
# Environment: CROSSPLANE_DIR (state, default ${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-xp),
# PROVIDER_PROXMOX_CACHE (as in build-tools.sh), OWNER_PID (as in controlplane.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
BIN=$CACHE_DIR/bin
STATE=${CROSSPLANE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-xp}
XP_NS=crossplane-system
# The TLS Secret external revisions name (their runtime's certificate): the one the local
# functions serve with.
RUNTIME_TLS_SECRET=external-runtime-tls
PROVIDER=provider-proxmox
ARCH=$(go env GOARCH)
# What make xpkg builds into the package, kept beside it.
PROVIDER_BINARY=$STATE/output/bin/linux_$ARCH/provider

LOG_TAG=crossplane
# shellcheck source=cluster/local/lib.sh
. "$(dirname "$0")/lib.sh"

require_tools() {
	command -v openssl >/dev/null || die "openssl not found (Debian: apt-get install openssl)"
	local b
	for b in kubectl crossplane-core crossplane-rbac-manager crossplane crane function-patch-and-transform; do
		[ -x "$BIN/$b" ] || die "$BIN/$b missing: run 'cluster/local/build-tools.sh envtest crossplane' (make tools)"
	done
	[ -d "$CACHE_DIR/crossplane-crds" ] || die "$CACHE_DIR/crossplane-crds missing: run 'make tools'"
}

load_env() {
	[ -f "$STATE/env" ] || die "Crossplane is not running: cluster/local/crossplane.sh up"
	# shellcheck source=/dev/null
	. "$STATE/env"
	export KUBECONFIG=$ADMIN_KUBECONFIG
}

# Crossplane's kinds are always named in full below: our ProviderConfigUsage is in kubectl's
# category "provider", so `kubectl get provider` may list usages instead of packages.
kc() { "$BIN/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" "$@"; }

# ------------------------------------------------------------------ up
start_controlplane() {
	# No watchdog of its own (OWNER_PID unset): this script's down stops it.
	ADMIN_KUBECONFIG=$(OWNER_PID='' CONTROLPLANE_DIR=$STATE/cp CONTROLPLANE_BIN=$BIN "$ROOT/cluster/local/controlplane.sh" up | tail -n 1)
	export KUBECONFIG=$ADMIN_KUBECONFIG # crossplane-core reads it (controller-runtime GetConfig)
}

# core init: Crossplane's CRDs, its root CA and client certificate, the lock object. Retried: on
# a fresh API server a CRD just created may not be served yet.
init_core() {
	kc create namespace "$XP_NS" >/dev/null
	# The package fetcher reads the pull secrets of Crossplane's ServiceAccount.
	kc -n "$XP_NS" create serviceaccount crossplane >/dev/null
	local i
	for i in 1 2 3 4 5 6; do
		POD_NAMESPACE=$XP_NS "$BIN/crossplane-core" core init --enable-webhooks=false \
			--cr-ds-path "$CACHE_DIR/crossplane-crds" --tlsca-secret-name crossplane-root-ca \
			--tls-client-secret-name crossplane-tls-client >"$STATE/logs/core-init.log" 2>&1 && return 0
		sleep "$i"
	done
	tail_log core-init
	return 1
}

secret_key_to_file() { # SECRET KEY FILE
	kc -n "$XP_NS" get secret "$1" -o "jsonpath={.data.${2//./\\.}}" | base64 -d >"$3"
}

# Crossplane's client certificate (it calls functions with it) and a serving certificate for
# local functions, signed by Crossplane's root CA and valid for 127.0.0.1.
make_certificates() {
	local k tls=$STATE/xp/tls-client fn=$STATE/xp/fn-tls
	mkdir -p "$tls" "$fn"
	chmod 700 "$STATE/xp"
	for k in ca.crt tls.crt tls.key; do secret_key_to_file crossplane-tls-client "$k" "$tls/$k"; done
	secret_key_to_file crossplane-root-ca tls.crt "$fn/ca.crt"
	secret_key_to_file crossplane-root-ca tls.key "$fn/ca.key"
	openssl req -new -newkey rsa:2048 -nodes -keyout "$fn/tls.key" -subj /CN=local-function -out "$fn/tls.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$fn/ext.cnf"
	openssl x509 -req -in "$fn/tls.csr" -CA "$fn/ca.crt" -CAkey "$fn/ca.key" -CAcreateserial \
		-days 30 -extfile "$fn/ext.cnf" -out "$fn/tls.crt" 2>/dev/null
	rm -f "$fn/ca.key" "$fn/tls.csr" "$fn/ext.cnf" "$fn/ca.srl"
	kc -n "$XP_NS" create secret generic "$RUNTIME_TLS_SECRET" --from-file="$fn/" >/dev/null
}

start_registry() {
	REGISTRY=127.0.0.1:$(free_port)
	start_bg registry "$BIN/crane" registry serve --address "$REGISTRY"
	wait_running registry 30 "$BIN/crane" catalog "$REGISTRY" || { tail_log registry; return 1; }
}

start_core() {
	local health
	health=$(free_port)
	POD_NAMESPACE=$XP_NS start_bg crossplane "$BIN/crossplane-core" core start --debug \
		--package-runtime External --enable-webhooks=false --xpkg-cache-dir "$STATE/xp/cache" \
		--tls-client-certs-dir "$STATE/xp/tls-client" --tls-client-secret-name crossplane-tls-client \
		--metrics-port "$(free_port)" --health-probe-port "$health" --webhook-port "$(free_port)"
	wait_running crossplane 60 curl -fsS "http://127.0.0.1:$health/healthz" || { tail_log crossplane; return 1; }
}

# The RBAC manager gives each provider revision its ClusterRoles and binds the 'system' one to
# the ServiceAccount of the revision's Deployment.
start_rbac_manager() {
	start_bg rbac-manager "$BIN/crossplane-rbac-manager" rbac start --debug --metrics-bind-address 0
	sleep 1
	running rbac-manager || { tail_log rbac-manager; return 1; }
}

write_env() {
	cat >"$STATE/env" <<EOF
ADMIN_KUBECONFIG=$ADMIN_KUBECONFIG
REGISTRY=$REGISTRY
PROVIDER_KUBECONFIG=$STATE/provider.kubeconfig
LOGS=$STATE/logs
EOF
}

stack_running() {
	local c
	for c in registry crossplane rbac-manager; do running "$c" || return 1; done
	[ -f "$STATE/env" ] && load_env && kc get --raw /readyz >/dev/null 2>&1
}

cmd_up() {
	require_tools
	if stack_running; then
		log "already running"
		echo "$ADMIN_KUBECONFIG"
		return 0
	fi
	cmd_down # a half-started or crashed instance: start from scratch
	mkdir -p "$STATE/logs" "$STATE/xp/cache"
	chmod 700 "$STATE"
	watch_owner "$ROOT/cluster/local/crossplane.sh"
	local start=$SECONDS
	step "starting etcd, kube-apiserver and kube-controller-manager" start_controlplane
	step "crossplane core init (Crossplane's CRDs and certificates)" init_core
	make_certificates
	step "starting a registry (crane registry serve)" start_registry
	step "starting Crossplane core (package runtime External)" start_core
	step "starting the RBAC manager" start_rbac_manager
	write_env
	log "up in $((SECONDS - start))s: registry $REGISTRY, logs in $STATE/logs"
	echo "$ADMIN_KUBECONFIG"
}

# ------------------------------------------------------------------ packages
# package: the provider's package for this machine's architecture (make xpkg, into the state
# directory so no other build's _output is touched). Its runtime image goes unused, as the
# External runtime runs none; start-provider runs the binary inside it as a local process.
cmd_package() {
	[ -d "$STATE" ] || die "Crossplane is not running: cluster/local/crossplane.sh up"
	step "building the provider's package (make xpkg PLATFORMS=linux/$ARCH)" \
		make -s -C "$ROOT" xpkg PLATFORMS="linux/$ARCH" OUTPUT="$STATE/output" >&2
	echo "$STATE/output/xpkg/$PROVIDER-$ARCH.xpkg"
}

# push_package XPKG REPOSITORY: pushes under a tag naming its content; prints the reference.
push_package() {
	local ref
	ref=$REGISTRY/$2:dev-$(sha256sum "$1" | cut -c1-12)
	"$BIN/crossplane" xpkg push -f "$1" "$ref" >&2
	echo "$ref"
}

# install_package KIND NAME REF: `crossplane xpkg install`, or a new package for an installed one.
install_package() {
	if kc get "$1s.pkg.crossplane.io" "$2" >/dev/null 2>&1; then
		kc patch "$1s.pkg.crossplane.io" "$2" --type merge -p "{\"spec\":{\"package\":\"$3\"}}" >/dev/null
	else
		"$BIN/crossplane" xpkg install "$1" "$3" "$2" >&2
	fi
}

# current_revision KIND NAME REF: the package's revision for REF, once the package manager
# made it.
current_revision() {
	local rev
	rev=$(kc get "$1s.pkg.crossplane.io" "$2" -o 'jsonpath={.status.currentRevision}')
	[ -n "$rev" ] && [ "$(kc get "${1}revisions.pkg.crossplane.io" "$rev" -o 'jsonpath={.spec.image}')" = "$3" ] && echo "$rev"
}

wait_revision() { # KIND NAME REF
	local rev=""
	for _ in $(seq 1 120); do
		rev=$(current_revision "$@" 2>/dev/null) && break
		sleep 0.5
	done
	[ -n "$rev" ] || { log "no $1 revision for $3"; kc get "$1s.pkg.crossplane.io" "$2" -o yaml >&2; return 1; }
	echo "$rev"
}

# The External runtime leaves a revision's TLS Secret (and a function's endpoint) unset; the
# revision is not healthy without them.
patch_revision() { # KIND REVISION [ENDPOINT]
	local p="{\"status\":{\"tlsServerSecretName\":\"$RUNTIME_TLS_SECRET\"${3:+,\"endpoint\":\"$3\"}}}"
	kc patch "${1}revisions.pkg.crossplane.io" "$2" --subresource=status --type merge -p "$p" >/dev/null
	kc wait --for=condition=RevisionHealthy "${1}revisions.pkg.crossplane.io/$2" --timeout=120s >/dev/null
}

# The runtime reports whether the package's process is healthy; nothing does under the External
# runtime, so the package never becomes Healthy. The stand-in says so once the process answers.
mark_runtime_healthy() { # KIND REVISION
	local types i=0 t op=add path=/status/conditions/-
	types=$(kc get "${1}revisions.pkg.crossplane.io" "$2" -o 'jsonpath={range .status.conditions[*]}{.type}{"\n"}{end}')
	for t in $types; do
		[ "$t" = RuntimeHealthy ] && op=replace path=/status/conditions/$i
		i=$((i + 1))
	done
	kc patch "${1}revisions.pkg.crossplane.io" "$2" --subresource=status --type json -p "[{\"op\": \"$op\", \"path\": \"$path\",
		\"value\": {\"type\": \"RuntimeHealthy\", \"status\": \"True\", \"reason\": \"HealthyPackageRevision\",
		\"lastTransitionTime\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\"}}]" >/dev/null
}

# ------------------------------------------------------------------ provider
# What the Deployment runtime creates for a provider revision, minus the pod: a ServiceAccount
# named after the revision and a Deployment controlled by the revision that names it. The
# RBAC manager binds the revision's ClusterRole to the ServiceAccount of such Deployments.
runtime_standin() { # REVISION
	local uid
	uid=$(kc get providerrevisions.pkg.crossplane.io "$1" -o 'jsonpath={.metadata.uid}')
	kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata:
  name: $1
  namespace: $XP_NS
  ownerReferences:
  - {apiVersion: pkg.crossplane.io/v1, kind: ProviderRevision, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $1
  namespace: $XP_NS
  ownerReferences:
  - {apiVersion: pkg.crossplane.io/v1, kind: ProviderRevision, name: $1, uid: $uid, controller: true, blockOwnerDeletion: true}
spec:
  replicas: 0 # nothing runs pods here: the provider runs as a local process
  selector: {matchLabels: {pkg.crossplane.io/revision: $1}}
  template:
    metadata: {labels: {pkg.crossplane.io/revision: $1}}
    spec:
      serviceAccountName: $1
      containers: [{name: package-runtime, image: $2}]
EOF
}

# granted REVISION: the RBAC manager has bound the revision's system ClusterRole to its
# ServiceAccount, and that role names every kind the revision defines (its two controllers, for
# the binding and the roles, work independently).
granted() {
	local refs resources r
	[ "$(kc get clusterrolebinding "crossplane:provider:$1:system" -o 'jsonpath={.subjects[*].name}' 2>/dev/null)" = "$1" ] || return 1
	refs=$(kc get providerrevisions.pkg.crossplane.io "$1" -o 'jsonpath={.status.objectRefs[*].name}')
	[ -n "$refs" ] || return 1
	resources=" $(kc get clusterrole "crossplane:provider:$1:system" -o 'jsonpath={.rules[*].resources[*]}' 2>/dev/null) "
	for r in $refs; do
		case $resources in *" ${r%%.*} "*) ;; *) return 1 ;; esac
	done
}

# A kubeconfig authenticating as the revision's ServiceAccount (a TokenRequest token).
write_provider_kubeconfig() { # REVISION
	local token server ca
	token=$(kc -n "$XP_NS" create token "$1" --duration 24h)
	server=$(kc config view --raw --minify -o 'jsonpath={.clusters[0].cluster.server}')
	ca=$(kc config view --raw --minify -o 'jsonpath={.clusters[0].cluster.certificate-authority-data}')
	umask 077
	cat >"$PROVIDER_KUBECONFIG" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "$server", certificate-authority-data: $ca}
users:
- name: $XP_NS/$1
  user: {token: $token}
contexts:
- name: $1
  context: {cluster: local, user: $XP_NS/$1}
current-context: $1
EOF
}

cmd_install_provider() { # XPKG
	local xpkg=${1:?usage: install-provider XPKG} ref rev start=$SECONDS
	load_env
	ref=$(push_package "$xpkg" "$PROVIDER")
	install_package provider "$PROVIDER" "$ref"
	rev=$(wait_revision provider "$PROVIDER" "$ref")
	step "revision $rev: TLS Secret set, waiting for it to be healthy" patch_revision provider "$rev"
	runtime_standin "$rev" "$ref"
	wait_running rbac-manager 60 granted "$rev" || { log "the RBAC manager did not grant $rev its ClusterRole"; tail_log rbac-manager; return 1; }
	write_provider_kubeconfig "$rev"
	log "provider $ref installed in $((SECONDS - start))s; runs as ServiceAccount $XP_NS/$rev"
	echo "$PROVIDER_KUBECONFIG"
}

# start-provider [FLAGS...]: the provider binary of the package `package` built, as a local
# process with the revision's ServiceAccount (restarted when already running), its health probe
# on a free port (so FLAGS must not set --health-probe-bind-address); once /readyz answers, the
# revision's runtime is marked healthy. Logs in $LOGS/provider.log.
cmd_start_provider() {
	local health rev
	load_env
	[ -x "$PROVIDER_BINARY" ] || die "no provider package built: cluster/local/crossplane.sh package"
	[ -f "$PROVIDER_KUBECONFIG" ] || die "no provider installed: cluster/local/crossplane.sh install-provider XPKG"
	stop_bg provider
	health=$(free_port)
	KUBECONFIG=$PROVIDER_KUBECONFIG start_bg provider "$PROVIDER_BINARY" --health-probe-bind-address "127.0.0.1:$health" "$@"
	wait_running provider 60 curl -fsS "http://127.0.0.1:$health/readyz" || { tail_log provider; return 1; }
	rev=$(kc get providers.pkg.crossplane.io "$PROVIDER" -o 'jsonpath={.status.currentRevision}')
	mark_runtime_healthy provider "$rev"
	log "provider running as ServiceAccount $XP_NS/$rev; health probes on 127.0.0.1:$health"
}

# ------------------------------------------------------------------ functions
cmd_install_function() { # [NAME PACKAGE-DIR BINARY]
	local name=${1:-function-patch-and-transform} dir=${2:-$CACHE_DIR/function-patch-and-transform-package}
	local binary=${3:-$BIN/function-patch-and-transform} xpkg ref rev port start=$SECONDS
	load_env
	xpkg=$STATE/$name.xpkg
	"$BIN/crossplane" xpkg build --package-root "$dir" -o "$xpkg" >&2
	ref=$(push_package "$xpkg" "$name")
	install_package function "$name" "$ref"
	port=$(free_port)
	stop_bg "fn-$name"
	start_bg "fn-$name" "$binary" --debug --address "127.0.0.1:$port" --tls-certs-dir "$STATE/xp/fn-tls"
	wait_running "fn-$name" 30 port_in_use "$port" || { tail_log "fn-$name"; return 1; }
	rev=$(wait_revision function "$name" "$ref")
	patch_revision function "$rev" "127.0.0.1:$port"
	mark_runtime_healthy function "$rev"
	log "function $name installed in $((SECONDS - start))s; serves on 127.0.0.1:$port"
}

# ------------------------------------------------------------------ down
cmd_down() {
	[ -d "$STATE" ] || return 0
	local f fns=()
	for f in "$STATE"/fn-*.pid; do [ -e "$f" ] && fns+=("$(basename "$f" .pid)"); done
	stop_owner_watch
	stop_bg provider "${fns[@]}" rbac-manager crossplane registry
	CONTROLPLANE_DIR=$STATE/cp CONTROLPLANE_BIN=$BIN "$ROOT/cluster/local/controlplane.sh" down
	rm -rf "$STATE"
}

case "${1:-}" in
up) cmd_up ;;
package) cmd_package ;;
install-provider) cmd_install_provider "${2:-}" ;;
start-provider) shift && cmd_start_provider "$@" ;;
install-function) shift && cmd_install_function "$@" ;;
env) load_env && cat "$STATE/env" ;;
down) cmd_down ;;
*)
	sed -n '2,29p' "$0" >&2
	exit 2
	;;
esac
