# Shared by the scripts in cluster/local (sourced, not run): background processes tracked by
# pid files in $STATE, polling, free loopback ports. The sourcing script sets STATE and LOG_TAG
# and defines nothing these names use.

# A failure inside $(...) fails the script too (bash leaves errexit off there otherwise).
shopt -s inherit_errexit

log() { echo "[$LOG_TAG] $*" >&2; }
die() { log "$*"; exit 1; }

pid_of() { cat "$STATE/$1.pid" 2>/dev/null || true; }

# A pid file may outlive its process (reboot, crash) and the pid be reused: only trust a pid
# still running the executable start_bg recorded for it.
running() {
	local pid exe
	pid=$(pid_of "$1")
	exe=$(cat "$STATE/$1.exe" 2>/dev/null || true)
	[ -n "$pid" ] && [ -n "$exe" ] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF "$exe "
}

# start_bg NAME CMD...: runs CMD detached, output to $STATE/logs/NAME.log, so callers capturing
# our stdout never hang on it.
start_bg() {
	local name=$1
	shift
	mkdir -p "$STATE/logs"
	nohup "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null &
	record_bg "$name" $! "$1"
}

# start_bg_stdout NAME FILE CMD...: as start_bg, but stdout (a result the program prints) to FILE.
start_bg_stdout() {
	local name=$1 out=$2
	shift 2
	mkdir -p "$STATE/logs"
	nohup "$@" >"$out" 2>"$STATE/logs/$name.log" </dev/null &
	record_bg "$name" $! "$1"
}

record_bg() { # NAME PID EXECUTABLE
	echo "$2" >"$STATE/$1.pid"
	echo "$3" >"$STATE/$1.exe"
}

# stop_bg NAME...: SIGTERM to all of them at once (each takes a second or two to shut down),
# then SIGKILL to any still running after 10 s; only the processes start_bg recorded.
stop_bg() {
	local name pids=() pid
	for name in "$@"; do
		running "$name" && pids+=("$(pid_of "$name")")
		rm -f "$STATE/$name.pid" "$STATE/$name.exe"
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null || true
	for _ in $(seq 1 50); do
		kill -0 "${pids[@]}" 2>/dev/null || break
		sleep 0.2
	done
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
	done
	return 0
}

# watch_owner SCRIPT: when OWNER_PID names a process (a test or benchmark), starts a watchdog
# that runs `SCRIPT down` once that process is gone, however it ended: a `go test` timeout
# panics past every cleanup, and would leave this instance running for good. Without
# OWNER_PID (make demo, a user) the instance lives until `down`.
watch_owner() {
	[ -n "${OWNER_PID:-}" ] || return 0
	# shellcheck disable=SC2016 # expanded by the watchdog's shell
	start_bg owner-watch bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done; exec "$2" down' \
		owner-watch "$OWNER_PID" "$1"
}

# stop_owner_watch: stops the watchdog, unless this is the watchdog running `down`.
stop_owner_watch() {
	if [ "$(pid_of owner-watch)" = "$$" ]; then
		rm -f "$STATE/owner-watch.pid" "$STATE/owner-watch.exe"
		return 0
	fi
	stop_bg owner-watch
}

# wait_for SECONDS CMD...: polls CMD until it succeeds; fails after SECONDS.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.3
	done
}

# step DESCRIPTION CMD...: says what runs (some steps take minutes the first time), runs it, and
# says how long it took.
step() {
	local what=$1 start=$SECONDS
	shift
	log "$what ..."
	"$@"
	log "$what: done in $((SECONDS - start))s"
}

# wait_running NAME SECONDS CMD...: as wait_for, but gives up at once when the background
# process NAME exits.
wait_running() {
	local name=$1 deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		running "$name" || { log "$name exited"; return 1; }
		[ "$SECONDS" -lt "$deadline" ] || return 1
		sleep 0.3
	done
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: a loopback port nothing listens on, drawn between 10000 and the start of the kernel's
# ephemeral range (ip_local_port_range). The ephemeral range is handed out to every outgoing
# connection and to every listener on port 0 (the Go tests' API servers, the simulator), so a port
# chosen there can be taken between this check and the bind: CI lost kube-apiserver's port that way.
# Below it only another free_port caller can collide, and the starters retry when that happens.
free_port() {
	local p low=32768
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$low" -gt 11000 ] || die "the ephemeral port range starts at $low: no room below it for fixed ports"
	for _ in $(seq 1 100); do
		p=$((10000 + RANDOM % (low - 10000)))
		port_in_use "$p" || { echo "$p"; return 0; }
	done
	die "no free port found"
}

# lost_port_race NAME: whether the component NAME exited because its port was taken.
lost_port_race() { grep -q "address already in use" "$STATE/logs/$1.log" 2>/dev/null; }

# tail_log NAME: the last lines of a component's log, for a failure message.
tail_log() {
	log "last lines of $STATE/logs/$1.log:"
	tail -20 "$STATE/logs/$1.log" >&2 2>/dev/null || true
}
