#!/usr/bin/env bash
# A real, local Kubernetes control plane without Docker or kubelet: etcd, kube-apiserver and a
# kube-controller-manager running only the garbage-collector and namespace controllers (envtest
# has neither, so tests relying on owner references or namespace deletion use this instead).
#
#   cluster/local/controlplane.sh up          # starts (or reuses) it; last line: kubeconfig path
#   cluster/local/controlplane.sh kubeconfig  # prints the kubeconfig path of a running one
#   cluster/local/controlplane.sh down        # stops everything and deletes its state
#
# Binaries come from build-tools.sh (run first, or `make tools`). Listens on 127.0.0.1 only, on
# free ports unless ETCD_PORT / API_PORT are set. TLS is verified: the script makes its own CA,
# a serving certificate for 127.0.0.1 and a system:masters client certificate with openssl.
#
# Environment: CONTROLPLANE_DIR (state, default ${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-cp),
# PROVIDER_PROXMOX_CACHE (as in build-tools.sh) or CONTROLPLANE_BIN (the binaries' dir),
# ETCD_PORT, API_PORT, OWNER_PID (a pid: stop everything once that process is gone).
set -euo pipefail

CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
BIN=${CONTROLPLANE_BIN:-$CACHE_DIR/bin}
STATE=${CONTROLPLANE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-cp}
PKI=$STATE/pki
KUBECONFIG_FILE=$STATE/kubeconfig
COMPONENTS=(etcd kube-apiserver kube-controller-manager) # start order; stopped in reverse

LOG_TAG=controlplane
# shellcheck source=cluster/local/lib.sh
. "$(dirname "$0")/lib.sh"

require_tools() {
	command -v openssl >/dev/null || die "openssl not found (Debian: apt-get install openssl)"
	local b
	for b in etcd kube-apiserver kube-controller-manager kubectl; do
		[ -x "$BIN/$b" ] || die "$BIN/$b missing: run 'make tools' (cluster/local/build-tools.sh)"
	done
}

# ------------------------------------------------------------------ certificates
sign_cert() { # NAME SUBJECT EXTENSIONS
	openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$1.key" -subj "$2" -out "$PKI/$1.csr" 2>/dev/null
	printf '%s\n' "$3" >"$PKI/$1.ext"
	openssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 365 -extfile "$PKI/$1.ext" -out "$PKI/$1.crt" 2>/dev/null
	rm -f "$PKI/$1.csr" "$PKI/$1.ext"
}

make_pki() {
	[ -f "$PKI/admin.crt" ] && return 0
	mkdir -p "$PKI"
	chmod 700 "$PKI"
	openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -days 365 \
		-subj "/CN=provider-proxmox-local-ca" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	sign_cert apiserver "/CN=kube-apiserver" \
		"subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth"
	sign_cert admin "/O=system:masters/CN=admin" \
		"keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
	openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
	openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
}

b64() { base64 -w0 <"$1"; }

write_kubeconfig() {
	umask 077
	cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: provider-proxmox-local
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$PKI/admin.crt")
    client-key-data: $(b64 "$PKI/admin.key")
contexts:
- name: provider-proxmox-local
  context: {cluster: provider-proxmox-local, user: admin}
current-context: provider-proxmox-local
EOF
}

# ------------------------------------------------------------------ components
kc() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

start_etcd() {
	rm -rf "$STATE/etcd" # a failed attempt may have bootstrapped a member with other peer URLs
	start_bg etcd "$BIN/etcd" --name local --data-dir "$STATE/etcd" --unsafe-no-fsync \
		--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
		--initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT"
	wait_running etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
}

start_apiserver() {
	start_bg kube-apiserver "$BIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
		--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
		--client-ca-file "$PKI/ca.crt" --authorization-mode RBAC \
		--service-cluster-ip-range 10.0.0.0/24 --service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key"
	wait_running kube-apiserver 90 kc get --raw /readyz
}

# start_listening NAME START PORT_VAR...: runs START; when NAME exited because another process took
# one of its ports in the moment since free_port chose it, chooses new ports for the PORT_VARs and
# tries again (three attempts). Any other failure stops everything with the component's log.
start_listening() {
	local name=$1 start=$2 attempt var
	shift 2
	for attempt in 1 2 3; do
		"$start" && return 0
		! running "$name" && lost_port_race "$name" || break
		log "$name lost a port to another process (attempt $attempt); choosing new ports"
		for var in "$@"; do printf -v "$var" '%s' "$(free_port)"; done
		save_ports
		write_kubeconfig
	done
	fail_with_log "$name"
}

# --secure-port 0: nothing scrapes it, and it saves a port and the delegated authn/authz setup.
start_controller_manager() {
	start_bg kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$KUBECONFIG_FILE" \
		--secure-port 0 --leader-elect=false \
		--controllers garbage-collector-controller,namespace-controller
	sleep 1
	running kube-controller-manager || fail_with_log kube-controller-manager
}

fail_with_log() {
	log "$1 did not start"
	tail_log "$1"
	stop_all
	exit 1
}

stop_all() {
	local i
	for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do stop_bg "${COMPONENTS[i]}"; done
}

all_running() {
	local c
	for c in "${COMPONENTS[@]}"; do running "$c" || return 1; done
}

choose_ports() {
	ETCD_PORT=${ETCD_PORT:-$(free_port)}
	ETCD_PEER_PORT=${ETCD_PEER_PORT:-$(free_port)}
	API_PORT=${API_PORT:-$(free_port)}
	save_ports
}

save_ports() {
	printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPI_PORT=%s\n' "$ETCD_PORT" "$ETCD_PEER_PORT" "$API_PORT" >"$STATE/ports"
}

# ------------------------------------------------------------------ commands
cmd_up() {
	require_tools
	if all_running && kc get --raw /readyz >/dev/null 2>&1; then
		log "already running"
		echo "$KUBECONFIG_FILE"
		return 0
	fi
	cmd_down # a half-started or crashed instance: start from scratch
	mkdir -p "$STATE/logs" "$STATE/etcd"
	chmod 700 "$STATE"
	watch_owner "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
	choose_ports
	make_pki
	write_kubeconfig
	local start=$SECONDS
	start_listening etcd start_etcd ETCD_PORT ETCD_PEER_PORT
	start_listening kube-apiserver start_apiserver API_PORT
	start_controller_manager
	log "up in $((SECONDS - start))s: API https://127.0.0.1:$API_PORT, logs in $STATE/logs"
	echo "$KUBECONFIG_FILE"
}

cmd_down() {
	[ -d "$STATE" ] || return 0
	stop_owner_watch
	stop_all
	rm -rf "$STATE"
}

cmd_kubeconfig() {
	all_running || die "control plane not running: cluster/local/controlplane.sh up"
	echo "$KUBECONFIG_FILE"
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
kubeconfig) cmd_kubeconfig ;;
*)
	sed -n '2,15p' "$0" >&2
	exit 2
	;;
esac
