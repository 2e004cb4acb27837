#!/usr/bin/env bash
# The main job on the embedded default: a simulated Proxmox VE (pvesim), a real local control
# plane (etcd + kube-apiserver + kube-controller-manager), and the provider running against
# both. It applies a ProxmoxConnection and the seed's VirtualMachine sample, waits until the
# VM is Ready and shows it, then leaves everything running for you to try kubectl on.
#
#   cluster/local/demo.sh up      # or: make demo
#   cluster/local/demo.sh down    # stops the provider, the simulator and the control plane
#
# Environment: DEMO_DIR (state and logs, default ${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo),
# PVESIM_PORT (default 18006), KEEP=1 keeps running after `up` (the default; KEEP=0 tears down).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
KUBECTL=$CACHE_DIR/bin/kubectl
STATE=${DEMO_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo}
PVESIM_PORT=${PVESIM_PORT:-18006}
KEEP=${KEEP:-1}

log() { echo "[demo] $*" >&2; }
die() { log "$*"; exit 1; }

stop_pid() { # NAME
	local f=$STATE/$1.pid pid
	pid=$(cat "$f" 2>/dev/null || true)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$f"
}

cmd_down() {
	stop_pid provider
	stop_pid pvesim
	"$ROOT/cluster/local/controlplane.sh" down || true
	rm -rf "$STATE"
	log "stopped"
}

# wait_until SECONDS DESCRIPTION CMD...: polls CMD once a second.
wait_until() {
	local secs=$1 what=$2; shift 2
	for _ in $(seq "$secs"); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 1
	done
	die "timed out after ${secs}s waiting for $what (logs in $STATE)"
}

start_pvesim() {
	log "starting pvesim on 127.0.0.1:$PVESIM_PORT (nodes pve, lowtower)"
	# The password is the simulator's own demo credential; it reaches the cluster only as a Secret.
	"$ROOT/bin/pvesim" --listen "127.0.0.1:$PVESIM_PORT" --nodes pve,lowtower \
		--user 'root@pam:demo-password' --token 'root@pam!kubemox=demo-token-secret' \
		--template '9000:debian-12-cloudinit@lowtower' --template '9001:ubuntu-24.04-cloudinit@pve' \
		--ostemplate 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst@pve' \
		--iso 'local:iso/debian-12.iso@pve' \
		--task-duration 1s --resources-lag 3s \
		--connection-name proxmox-connection-sample --secret-namespace default \
		>"$STATE/pvesim.out" 2>"$STATE/pvesim.log" &
	echo $! >"$STATE/pvesim.pid"
	wait_until 20 "pvesim" grep -q '^kind: ProxmoxConnection' "$STATE/pvesim.out"
	# The simulator prints a Secret and a ProxmoxConnection after its first line.
	sed -n '/^apiVersion:/,$p' "$STATE/pvesim.out" >"$STATE/connection.yaml"
}

start_provider() {
	log "starting the provider (logs: $STATE/provider.log)"
	KUBECONFIG=$KUBECONFIG "$ROOT/bin/provider" --poll 30s \
		--metrics-bind-address 0 --health-probe-bind-address 127.0.0.1:0 \
		>"$STATE/provider.log" 2>&1 &
	echo $! >"$STATE/provider.pid"
}

cmd_up() {
	mkdir -p "$STATE"
	(cd "$ROOT" && make -s build && cluster/local/build-tools.sh >/dev/null)
	KUBECONFIG=$("$ROOT/cluster/local/controlplane.sh" up | tail -n 1)
	export KUBECONFIG
	local kc=("$KUBECTL" --kubeconfig "$KUBECONFIG")

	"${kc[@]}" apply -f "$ROOT/package/crds" >/dev/null
	"${kc[@]}" wait --for condition=Established crd --all --timeout 60s >/dev/null

	stop_pid pvesim
	start_pvesim
	stop_pid provider
	start_provider

	"${kc[@]}" apply -f "$STATE/connection.yaml"
	wait_until 60 "ProxmoxConnection Ready" \
		"${kc[@]}" wait --for condition=Ready pxc/proxmox-connection-sample --timeout 1s
	"${kc[@]}" apply -f "$ROOT/examples/virtualmachine/clone-new.yaml"
	wait_until 120 "VirtualMachine Ready" \
		"${kc[@]}" wait --for condition=Ready -n default vm/virtualmachine-sample-clone-new --timeout 1s

	"${kc[@]}" get proxmoxconnections
	"${kc[@]}" get virtualmachines -A
	log "Proxmox (simulated) state: curl -sk https://127.0.0.1:$PVESIM_PORT/_sim/state"
	log "kubectl: export KUBECONFIG=$KUBECONFIG; $KUBECTL get vm -A"
	if [ "$KEEP" = 0 ]; then cmd_down; else log "running; stop with: cluster/local/demo.sh down"; fi
}

case "${1:-}" in
up) cmd_up ;;
down) cmd_down ;;
*) die "usage: $0 up|down" ;;
esac
