#!/usr/bin/env bash
# Renders docs/images/dashboard.png, the README's picture of examples/monitoring/dashboard.json,
# from a run of the demo (make demo): the provider's /metrics is scraped every SCRAPE_EVERY while
# a few minutes of activity happen (VMs created by scaling the set up, one VM updated and one
# drifted in Proxmox VE and corrected, a clone whose task fails, a CustomCertificate uploaded, VMs
# deleted by scaling down), then dashboardpng (hack/dashboardpng, built by build-tools.sh
# monitoring) evaluates every panel's PromQL over the scrapes with Prometheus's own engine and
# draws the panels.
#
#   cluster/local/dashboard-png.sh   # make dashboard-png; reuses a running `make demo`, else
#                                    # starts one and stops it at the end
#
# The recording stays in the run's state directory; FIXTURE=1 also writes every third scrape of
# it, compressed, to test/monitoring/testdata/recording.txt.gz, which test/monitoring renders in
# every `make test`.
#
# Environment: DASHBOARD_PNG (default docs/images/dashboard.png), STEP (seconds between the
# activity's steps, default 50), SCRAPE_EVERY (default 10s), FIXTURE, and demo.sh's PVESIM_PORT,
# DEMO_METRICS_PORT, CONTROLPLANE_DIR.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DEMO=$ROOT/cluster/local/demo.sh
OUT=${DASHBOARD_PNG:-$ROOT/docs/images/dashboard.png}
STEP=${STEP:-50}
SCRAPE_EVERY=${SCRAPE_EVERY:-10s}
METRICS_URL=http://127.0.0.1:${DEMO_METRICS_PORT:-18080}/metrics
SIM=https://127.0.0.1:${PVESIM_PORT:-18006}
KUBECONFIG=${CONTROLPLANE_DIR:-${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-cp}/kubeconfig
export KUBECONFIG
NS=default
# The demo's ubuntu template (VMID 9001 on pve): its clones fail while the fault rule is set.
BROKEN_TEMPLATE=9001

LOG_TAG=dashboard-png
STATE=${XDG_RUNTIME_DIR:-/tmp}/provider-proxmox-dashboard-png
# shellcheck source=cluster/local/lib.sh
. "$(dirname "$0")/lib.sh"

TOOLS=$("$ROOT/cluster/local/build-tools.sh" envtest monitoring | tail -n 1)
kc() { "$TOOLS/kubectl" "$@"; }
sim() { curl -sfk -X "$1" -H 'Content-Type: application/json' --data "$3" "$SIM/_sim/$2" >/dev/null; }

demo_running() { [ -f "$KUBECONFIG" ] && curl -sf -o /dev/null "$METRICS_URL"; }

# A VM cloned from the broken template: the clone task fails, the provider retries.
break_a_clone() {
	sim PUT faults "{\"rules\":[{\"method\":\"POST\",\"pathPattern\":\"/nodes/*/qemu/$BROKEN_TEMPLATE/clone\",\"taskFailureRate\":1,\"taskFailureMessage\":\"clone failed: disk error\"}]}"
	kc apply -f - >/dev/null <<EOF
apiVersion: proxmox.alperen.cloud/v1alpha1
kind: VirtualMachine
metadata: {name: dashboard-broken-clone, namespace: $NS}
spec:
  connectionRef: {name: proxmox-connection-sample}
  name: dashboard-broken-clone
  nodeName: pve
  template: {name: ubuntu-24.04-cloudinit, cores: 1, memory: 1024}
EOF
}

# The seed's VM changed behind the provider's back (drift), and its spec changed (an update).
drift_and_update() {
	local vmid
	vmid=$(kc get vm -n "$NS" virtualmachine-sample-clone-new -o 'jsonpath={.metadata.annotations.crossplane\.io/external-name}')
	sim POST guests "{\"action\":\"drift\",\"vmid\":$vmid,\"config\":{\"cores\":\"6\"}}"
	kc patch vm -n "$NS" virtualmachine-sample-clone-new --type merge -p '{"spec":{"template":{"memory":6144}}}' >/dev/null
}

# examples/customcertificate with a self-signed certificate for lowtower.
upload_certificate() {
	local dir=$STATE/tls
	mkdir -p "$dir"
	openssl req -x509 -newkey rsa:2048 -nodes -days 90 -subj /CN=lowtower.example \
		-keyout "$dir/tls.key" -out "$dir/tls.crt" 2>/dev/null
	kc create secret tls lowtower-tls -n "$NS" --cert "$dir/tls.crt" --key "$dir/tls.key" \
		--dry-run=client -o yaml | kc apply -f - >/dev/null
	kc apply -f "$ROOT/examples/customcertificate/tls-secret.yaml" >/dev/null
}

# What a reused demo had before: three replicas, no broken clone, no fault, no certificate.
restore() {
	kc scale vmset/web -n "$NS" --replicas=3 >/dev/null || true
	kc delete vm -n "$NS" dashboard-broken-clone --ignore-not-found --wait=false >/dev/null || true
	kc delete customcertificate -n "$NS" lowtower-pveproxy --ignore-not-found --wait=false >/dev/null || true
	kc delete secret -n "$NS" lowtower-tls --ignore-not-found >/dev/null || true
	sim PUT faults '{"rules":[]}' || true
}

# On any exit, failures included: the recorder stops, and the demo is stopped if this run started
# it, else given back as it was.
STARTED_DEMO=0
finish() {
	stop_bg recorder
	if [ "$STARTED_DEMO" = 1 ]; then "$DEMO" down; else restore; fi
}

scale_up_and_break_a_clone() {
	kc scale vmset/web -n "$NS" --replicas=5 >/dev/null
	break_a_clone
}

scale_down_and_heal() {
	kc scale vmset/web -n "$NS" --replicas=2 >/dev/null
	kc delete vm -n "$NS" dashboard-broken-clone --wait=false >/dev/null
	sim PUT faults '{"rules":[]}'
}

# One step every STEP seconds, a quiet STEP before and two after, so each panel shows a change
# and what follows it.
activity() {
	sleep "$STEP"
	step "scaling the set to 5 and cloning from a template whose clones fail" scale_up_and_break_a_clone
	sleep "$STEP"
	step "drifting the seed's VM in Proxmox VE and updating its memory" drift_and_update
	sleep "$STEP"
	step "uploading a CustomCertificate" upload_certificate
	sleep "$STEP"
	step "scaling the set down to 2, deleting the broken clone, clearing the fault" scale_down_and_heal
	sleep $((2 * STEP))
}

main() {
	local rec=$STATE/recording.txt
	mkdir -p "$STATE/logs"
	trap finish EXIT
	if demo_running; then
		log "reusing the running demo ($METRICS_URL)"
	else
		STARTED_DEMO=1
		step "starting the demo (make demo)" "$DEMO" up
	fi
	stop_bg recorder
	start_bg recorder "$TOOLS/dashboardpng" record --url "$METRICS_URL" --every "$SCRAPE_EVERY" \
		--dashboard "$ROOT/examples/monitoring/dashboard.json" --out "$rec"
	activity
	stop_bg recorder
	mkdir -p "$(dirname "$OUT")"
	step "rendering $OUT from $(grep -c '^# dashboardpng scrape at' "$rec") scrapes" \
		"$TOOLS/dashboardpng" render --dashboard "$ROOT/examples/monitoring/dashboard.json" --recording "$rec" --out "$OUT"
	if [ "${FIXTURE:-0}" = 1 ]; then
		# Every third scrape keeps the test's fixture small; the panels still get every series.
		awk '/^# dashboardpng scrape at /{n++} n % 3 == 1' "$rec" | gzip -9n >"$ROOT/test/monitoring/testdata/recording.txt.gz"
		log "wrote test/monitoring/testdata/recording.txt.gz"
	fi
}

main
