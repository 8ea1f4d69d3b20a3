#!/usr/bin/env bash
# smcping vs sockperf: TCP ping-pong on the same loopback path, in one run.
#
# Both tools measure the full round trip (sockperf --full-rtt) of messages of
# the same total size (sockperf's -m and smcping's -m both count their
# header). Rounds alternate between the tools so that drifts of the machine
# hit both alike; the table gives the median over the rounds of each tool's
# p50 RTT. The target is smcping within 5 % of sockperf: smcping's own
# overhead must not distort what it reports.
#
# Both servers run pinned to SERVER_CPU and both clients to CLIENT_CPU
# (taskset; default the last online CPU and the first, the same CPU on a
# one-CPU machine): unpinned runs gave verdicts off by 70 %, the tools'
# processes landing on different CPUs from run to run. The Go side then runs
# with one P, like sockperf's single thread.
#
#   bench/smcping_vs_sockperf.sh              # ROUNDS=5 SECS=2 SIZES="64 1024 16384"
#   STRICT=1 bench/smcping_vs_sockperf.sh     # exit 1 when a size misses 5 %
#   SERVER_CPU=1 CLIENT_CPU=1 bench/smcping_vs_sockperf.sh   # both on one CPU
#
# Needs sockperf (apt-get install sockperf), taskset and Go. Loopback only.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-2}
SIZES=${SIZES:-"64 1024 16384"}
SP_PORT=${SP_PORT:-11111}
SM_PORT=${SM_PORT:-11311}
STRICT=${STRICT:-0}
online=$(cat /sys/devices/system/cpu/online)
SERVER_CPU=${SERVER_CPU:-${online##*[,-]}}
CLIENT_CPU=${CLIENT_CPU:-${online%%[,-]*}}

command -v sockperf >/dev/null || { echo "bench: sockperf not found (apt-get install sockperf)" >&2; exit 2; }
for c in "$SERVER_CPU" "$CLIENT_CPU"; do
	taskset -c "$c" true 2>/dev/null || { echo "bench: cannot pin to CPU $c (SERVER_CPU, CLIENT_CPU)" >&2; exit 2; }
done
# client CMD...: CMD pinned to CLIENT_CPU (the servers are started with
# taskset itself, so that $! is the server's pid: taskset execs it).
client() { taskset -c "$CLIENT_CPU" "$@"; }
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=bench/pin.sh
. "$root/bench/pin.sh"

(cd "$root" && CGO_ENABLED=0 go build -o "$work/smcping" ./cmd/smcping)

taskset -c "$SERVER_CPU" sockperf sr --tcp -i 127.0.0.1 -p "$SP_PORT" >"$work/sockperf-server.log" 2>&1 &
pids+=($!)
taskset -c "$SERVER_CPU" "$work/smcping" -s --tcp --listen 127.0.0.1 -p "$SM_PORT" --tcp-port 0 2>"$work/smcping-server.log" &
pids+=($!)
sleep 1

# sockperf_p50 SIZE: p50 RTT in usec.
sockperf_p50() {
	client sockperf pp --tcp -i 127.0.0.1 -p "$SP_PORT" -m "$1" -t "$SECS" --full-rtt 2>&1 |
		awk '/percentile 50.000/ { print $NF; found=1 } END { exit !found }'
}

# smcping_p50 SIZE: p50 RTT in usec, from the JSON report.
smcping_p50() {
	client "$work/smcping" "127.0.0.1:$SM_PORT" --proto tcp -m "$1" -t "$SECS" -o json |
		awk -F': ' '/"p50_ns"/ { gsub(/,/, "", $2); printf "%.3f\n", $2 / 1000; exit }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'smcping vs sockperf, TCP loopback, p50 RTT (usec), median of %d alternating rounds of %ss\n' "$ROUNDS" "$SECS"
printf '%s, %s, %s CPUs; servers pinned to CPU %s, clients to CPU %s\n' "$(sockperf --version 2>&1 | awk '/version/ { print $1, $3; exit }')" \
	"$(go version | awk '{ print $3 }')" "$(nproc --all)" "$SERVER_CPU" "$CLIENT_CPU"
printf '%8s %14s %14s %9s %s\n' size sockperf smcping diff verdict
missed=0
for size in $SIZES; do
	: >"$work/sp" && : >"$work/sm"
	for _ in $(seq "$ROUNDS"); do
		sockperf_p50 "$size" >>"$work/sp"
		smcping_p50 "$size" >>"$work/sm"
	done
	sp=$(median <"$work/sp")
	sm=$(median <"$work/sm")
	diff=$(awk -v a="$sm" -v b="$sp" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }')
	verdict=$(awk -v a="$sm" -v b="$sp" 'BEGIN { d = (a - b) / b; print (d <= 0.05 && d >= -0.05) ? "within 5%" : "MISSED 5%" }')
	[[ $verdict == MISSED* ]] && missed=1
	printf '%8s %14s %14s %9s %s\n' "$size" "$sp" "$sm" "$diff" "$verdict"
done
for c in "$SERVER_CPU" "$CLIENT_CPU"; do
	held=$(pinned_after "$c")
	[ "$held" = "$c" ] || printf 'warning: a process pinned to CPU %s was on CPUs %s 1.5 s later: something on this machine re-pins processes\n' "$c" "$held"
done
if [[ $STRICT == 1 && $missed == 1 ]]; then
	exit 1
fi
