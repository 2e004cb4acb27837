#!/usr/bin/env bash
# The README's two demos, on a simulated Proxmox VE (pvesim) and a real local control plane
# (etcd + kube-apiserver + kube-controller-manager), left running for you to try kubectl on.
#
#   cluster/local/demo.sh up               # make demo: the provider (as cluster admin) with the
#                                          # CRDs applied, a ProxmoxConnection and the seed's
#                                          # VirtualMachine sample Ready
#   cluster/local/demo.sh crossplane       # make demo-crossplane: real Crossplane (core, RBAC
#                                          # manager, registry: cluster/local/crossplane.sh), the
#                                          # package pushed and installed, the provider running
#                                          # as its revision's ServiceAccount, a claim Ready
#   cluster/local/demo.sh down             # make demo-down: stops both demos
#   cluster/local/demo.sh crossplane-down  # make demo-crossplane-down: stops the second only
#
# The first run builds the binaries and tools (minutes; each step says what it builds and how
# long it took); later runs reuse them and take seconds.
#
# Environment: DEMO_DIR (state and logs, default ${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo),
# DEMO_CROSSPLANE_DIR (default ${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo-crossplane),
# PVESIM_PORT (default 18006; the Crossplane demo's simulator uses PVESIM_PORT+1),
# DEMO_METRICS_PORT (the provider's /metrics on loopback in `up`, default 18080; scraped by
# cluster/local/dashboard-png.sh), KEEP=1 keeps running after `up` (the default; KEEP=0 tears down).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE_DIR=${PROVIDER_PROXMOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/provider-proxmox}
KUBECTL=$CACHE_DIR/bin/kubectl
DEMO_STATE=${DEMO_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo}
XP_DEMO_STATE=${DEMO_CROSSPLANE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-demo-crossplane}
PVESIM_PORT=${PVESIM_PORT:-18006}
DEMO_METRICS_PORT=${DEMO_METRICS_PORT:-18080}
KEEP=${KEEP:-1}
# The connection the seed's samples use, and the one the example Compositions use.
CONNECTION=proxmox-connection-sample
XP_CONNECTION=default
XP_SCRIPT=$ROOT/cluster/local/crossplane.sh

LOG_TAG=demo
STATE=$DEMO_STATE
# shellcheck source=cluster/local/lib.sh
. "$(dirname "$0")/lib.sh"

kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }

# wait_until SECONDS DESCRIPTION CMD...: polls CMD; on timeout says where the logs are.
wait_until() {
	local secs=$1 what=$2
	shift 2
	wait_for "$secs" "$@" || die "timed out after ${secs}s waiting for $what (logs in $STATE/logs)"
}

build_binaries() { make -s -C "$ROOT" build; }

build_tools() { "$ROOT/cluster/local/build-tools.sh" "$@" >/dev/null; }

start_pvesim() { # PORT CONNECTION
	# The password is the simulator's own demo credential; it reaches the cluster only as a Secret.
	start_bg_stdout pvesim "$STATE/pvesim.out" "$ROOT/bin/pvesim" --listen "127.0.0.1:$1" --nodes pve,lowtower \
		--user 'root@pam:demo-password' --token 'root@pam!kubemox=demo-token-secret' \
		--template '9000:debian-12-cloudinit@lowtower' --template '9001:ubuntu-24.04-cloudinit@pve' \
		--ostemplate 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst@pve' \
		--iso 'local:iso/debian-12.iso@pve' \
		--task-duration 1s --resources-lag 3s \
		--connection-name "$2" --secret-namespace default
	wait_until 20 "pvesim" grep -q '^kind: ProxmoxConnection' "$STATE/pvesim.out"
	# The simulator prints a Secret and a ProxmoxConnection after its first line.
	sed -n '/^apiVersion:/,$p' "$STATE/pvesim.out" >"$STATE/connection.yaml"
}

connection_ready() { # NAME
	kc apply -f "$STATE/connection.yaml" >/dev/null
	wait_until 60 "ProxmoxConnection Ready" kc wait --for condition=Ready "pxc/$1" --timeout 1s
}

# ------------------------------------------------------------------ make demo
start_controlplane() { KUBECONFIG=$("$ROOT/cluster/local/controlplane.sh" up | tail -n 1); }

install_crds() {
	kc apply -f "$ROOT/package/crds" >/dev/null
	kc wait --for condition=Established crd --all --timeout 60s >/dev/null
}

start_provider() {
	KUBECONFIG=$KUBECONFIG start_bg provider "$ROOT/bin/provider" --poll 30s \
		--metrics-bind-address "127.0.0.1:$DEMO_METRICS_PORT" --health-probe-bind-address 127.0.0.1:0
}

vm_ready() {
	kc apply -f "$ROOT/examples/virtualmachine/clone-new.yaml" >/dev/null
	wait_until 120 "VirtualMachine Ready" kc wait --for condition=Ready -n default vm/virtualmachine-sample-clone-new --timeout 1s
}

vmset_ready() {
	kc apply -f "$ROOT/examples/virtualmachineset/web.yaml" >/dev/null
	wait_until 180 "VirtualMachineSet Ready" kc wait --for condition=Ready -n default vmset/web --timeout 1s
}

snapshotpolicy_ready() {
	kc apply -f "$ROOT/examples/virtualmachinesnapshotpolicy/web.yaml" >/dev/null
	wait_until 60 "VirtualMachineSnapshotPolicy scheduled" kc wait --for condition=Ready -n default vmsnappol/web-every-5m --timeout 1s
}

cmd_up() {
	local start=$SECONDS
	mkdir -p "$STATE/logs"
	step "building bin/provider and bin/pvesim (the first build compiles every dependency: minutes)" build_binaries
	step "building the control-plane binaries if not cached (the first time: 10-20 minutes)" build_tools envtest
	step "starting etcd, kube-apiserver and kube-controller-manager" start_controlplane
	export KUBECONFIG
	step "installing the provider's CRDs" install_crds
	stop_bg pvesim
	step "starting the simulated Proxmox VE on 127.0.0.1:$PVESIM_PORT" start_pvesim "$PVESIM_PORT" "$CONNECTION"
	stop_bg provider
	step "starting the provider (logs: $STATE/logs/provider.log)" start_provider
	step "waiting for the ProxmoxConnection to be Ready" connection_ready "$CONNECTION"
	step "creating the seed's VirtualMachine sample and waiting for it to be Ready" vm_ready
	step "creating a VirtualMachineSet of 3 (examples/virtualmachineset/web.yaml) and waiting for it to be Ready" vmset_ready
	step "creating a snapshot policy for the set's VMs, every 5 minutes (examples/virtualmachinesnapshotpolicy/web.yaml)" snapshotpolicy_ready
	kc get proxmoxconnections
	kc get virtualmachinesets -A
	kc get virtualmachines -A
	kc get virtualmachinesnapshotpolicies -A
	log "ready in $((SECONDS - start))s"
	if [ "$KEEP" = 0 ]; then
		cmd_down
		return 0
	fi
	cat >&2 <<EOF

What to try next:
  export KUBECONFIG=$KUBECONFIG; alias kubectl=$KUBECTL
  kubectl get managed -A          # every managed resource (our VirtualMachines)
  kubectl edit vm -n default virtualmachine-sample-clone-new
                                  # e.g. set spec.template.cores: 4; the VM follows
  kubectl scale vmset/web -n default --replicas=5
                                  # two more VMs, web-3 and web-4
  kubectl get vmsnap -n default -w
                                  # the policy's snapshots, at the next 5-minute mark
  kubectl annotate vmsnap -n default <name> proxmox.alperen.cloud/rollback=r1
                                  # roll that VM back to the snapshot, once per token
  curl -sk https://127.0.0.1:$PVESIM_PORT/_sim/state
                                  # the simulated Proxmox VE: guests, tasks, request counters
  curl -s http://127.0.0.1:$DEMO_METRICS_PORT/metrics
                                  # the provider's metrics (examples/monitoring's dashboard
                                  # shows them; make dashboard-png renders it from this demo)
  make demo-crossplane            # real Crossplane: the package installed, a claim Ready
  make demo-down                  # stops everything
EOF
}

cmd_down() {
	STATE=$DEMO_STATE
	stop_bg provider pvesim
	"$ROOT/cluster/local/controlplane.sh" down || true
	rm -rf "$STATE"
	log "stopped"
}

# ------------------------------------------------------------------ make demo-crossplane
XP_ACTIVATION=$ROOT/examples/activation/policy.yaml
CLAIM_EXAMPLE=$ROOT/examples/composition/claim

xp() { CROSSPLANE_DIR=$STATE/xp "$XP_SCRIPT" "$@"; }

start_crossplane() { KUBECONFIG=$(xp up | tail -n 1); }

install_provider() {
	local xpkg
	xpkg=$(xp package | tail -n 1)
	xp install-provider "$xpkg" >/dev/null
}

activate() {
	kc apply -f "$XP_ACTIVATION" >/dev/null
	local crd
	for crd in proxmoxconnections virtualmachines providerconfigusages; do
		wait_until 120 "CRD $crd.proxmox.alperen.cloud" kc wait --for condition=Established "crd/$crd.proxmox.alperen.cloud" --timeout 1s
	done
}

start_provider_as_revision() {
	xp start-provider --poll 30s --metrics-bind-address 0
}

claim_ready() {
	kc apply -f "$CLAIM_EXAMPLE/definition.yaml" -f "$CLAIM_EXAMPLE/composition.yaml" >/dev/null
	wait_until 60 "the claim's XRD" kc wait --for condition=Offered xrd/xvirtualmachines.compute.example.org --timeout 1s
	kc apply -f "$CLAIM_EXAMPLE/claim.yaml" >/dev/null
	wait_until 240 "the claim Ready" kc wait --for condition=Ready -n team-a virtualmachineclaim/dev-vm --timeout 1s
}

cmd_crossplane() {
	local start=$SECONDS
	STATE=$XP_DEMO_STATE
	mkdir -p "$STATE/logs"
	step "building bin/provider and bin/pvesim (the first build compiles every dependency: minutes)" build_binaries
	step "building the control plane and Crossplane tools if not cached (the first time: 20-30 minutes)" \
		build_tools envtest crossplane
	step "starting the control plane, Crossplane core v2.4.0, its RBAC manager and a registry" start_crossplane
	export KUBECONFIG
	step "building, pushing and installing the provider's package (crossplane xpkg push/install)" install_provider
	step "activating our kinds (ManagedResourceActivationPolicy)" activate
	step "installing function-patch-and-transform (a local process over mutual TLS)" xp install-function
	stop_bg pvesim
	step "starting the simulated Proxmox VE on 127.0.0.1:$((PVESIM_PORT + 1))" start_pvesim $((PVESIM_PORT + 1)) "$XP_CONNECTION"
	step "starting the provider as its revision's ServiceAccount" start_provider_as_revision
	step "waiting for the ProxmoxConnection to be Ready" connection_ready "$XP_CONNECTION"
	step "applying examples/composition/claim (XRD, Composition, a claim), waiting for the claim to be Ready" claim_ready
	kc get providers.pkg.crossplane.io,functions.pkg.crossplane.io
	kc get virtualmachineclaims,virtualmachines -A
	log "ready in $((SECONDS - start))s"
	if [ "$KEEP" = 0 ]; then
		cmd_crossplane_down
		return 0
	fi
	local sa
	sa=$(kc get providers.pkg.crossplane.io provider-proxmox -o 'jsonpath={.status.currentRevision}')
	cat >&2 <<EOF

What to try next:
  export KUBECONFIG=$KUBECONFIG; alias kubectl=$KUBECTL
  kubectl get managed -A          # the VirtualMachine the claim's Composition made
  kubectl patch virtualmachineclaim dev-vm -n team-a --type merge -p '{"spec":{"size":"large"}}'
                                  # the VM in Proxmox VE follows
  kubectl get secret dev-vm-connection -n team-a -o jsonpath='{.data}'
                                  # the claim's connection details: vmid, node, ipAddress
  kubectl auth can-i --list --as system:serviceaccount:crossplane-system:$sa
                                  # all the provider may do: what Crossplane grants its revision
  curl -sk https://127.0.0.1:$((PVESIM_PORT + 1))/_sim/state
  make demo-crossplane-down       # stops this demo (make demo-down stops both)
Logs: $STATE/logs (demo), $STATE/xp/logs (Crossplane, the provider, the function)
EOF
}

cmd_crossplane_down() {
	STATE=$XP_DEMO_STATE
	stop_bg pvesim
	[ -d "$STATE/xp" ] && xp down
	rm -rf "$STATE"
	log "Crossplane demo stopped"
}

case "${1:-}" in
up) cmd_up ;;
crossplane) cmd_crossplane ;;
down)
	cmd_crossplane_down
	cmd_down
	;;
crossplane-down) cmd_crossplane_down ;;
*) die "usage: $0 up|crossplane|down|crossplane-down" ;;
esac
