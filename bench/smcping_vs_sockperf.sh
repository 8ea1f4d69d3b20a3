#!/usr/bin/env bash
# smcping vs sockperf: TCP ping-pong on the same loopback path, in one run,
# with the client on the server's CPU and on another CPU.
#
# Both tools measure the full round trip (sockperf --full-rtt) of messages of
# the same total size (sockperf's -m and smcping's -m both count their
# header). The target is smcping's p50 RTT within 5 % of sockperf's, so that
# smcping's own overhead does not distort what it reports.
#
# Placements. Both servers run pinned to SERVER_CPU (taskset). "one CPU": both
# clients on SERVER_CPU too, so every wake-up is a switch on one CPU. "two
# CPUs": both clients on CLIENT_CPU, so every message wakes the other CPU; on
# a VM an idle vCPU is halted and its wake-up latency moves by tens of
# percent with whatever else the host runs. Both placements run by default
# (the second only when CLIENT_CPU differs from SERVER_CPU). Unpinned runs
# gave verdicts off by 70 %, the processes landing on different CPUs from
# run to run.
#
# Noise. Each round runs every placement and size once, and for each of
# them sockperf and smcping back to back, in alternating order (sockperf
# first in odd rounds): the two runs of a pair see the same state of the
# machine, and a drift over the run hits every pair alike. The diff is the
# median over the rounds of the pairs' ratios smcping/sockperf - 1, with a
# distribution-free 95 % confidence interval (order statistics of the
# ratios: no assumption about their distribution, which on a busy VM is
# skewed and has modes: the machine's latency jumps between levels, and a
# pair that straddles a jump gives a ratio far off). The verdict is "within
# 5%" when the whole interval is inside +-5 %, "MISSED 5%" when it is
# wholly above, "faster" when wholly below (smcping's round trips shorter:
# no overhead of its own to judge, a difference in how each tool's waiting
# thread is woken), and "no verdict: too noisy" when it straddles a bound:
# the machine moved more during the run than the difference being judged.
# Such a placement and size get up to EXTRA more rounds (default 2 *
# ROUNDS) and are judged once more on all their rounds; the verdict that
# still straddles is printed as such, never rounded to a yes or no. (Two
# looks at the data, not one per round: looking after every round until
# the interval fits would make a fit by chance likely.) One unrecorded
# warm-up pair per placement and size comes first. The p50 columns are the
# medians of each tool's p50s, "spread" the interquartile range of
# sockperf's p50s over the rounds as a share of their median: how much the
# machine itself moved.
#
#   bench/smcping_vs_sockperf.sh            # ROUNDS=15 EXTRA=30 SECS=1 SIZES="64 1024 16384"
#   SERVER_CPU=1 CLIENT_CPU=1 bench/smcping_vs_sockperf.sh   # one CPU only
#   STRICT=1 bench/smcping_vs_sockperf.sh   # exit 1 on a miss, 3 when too noisy for a verdict
#   RAW=/tmp/pairs.csv bench/smcping_vs_sockperf.sh          # every pair's p50s too
#
# Needs sockperf (apt-get install sockperf), taskset and Go. Loopback only.
# The servers listen on SP_PORT and SM_PORT (default 11111, 11311), which
# must be free.
set -euo pipefail

ROUNDS=${ROUNDS:-15}
EXTRA=${EXTRA:-$((2 * ROUNDS))}
SECS=${SECS:-1}
SIZES=${SIZES:-"64 1024 16384"}
SP_PORT=${SP_PORT:-11111}
SM_PORT=${SM_PORT:-11311}
STRICT=${STRICT:-0}
RAW=${RAW:-}
online=$(cat /sys/devices/system/cpu/online)
SERVER_CPU=${SERVER_CPU:-${online##*[,-]}}
CLIENT_CPU=${CLIENT_CPU:-${online%%[,-]*}}

command -v sockperf >/dev/null || { echo "bench: sockperf not found (apt-get install sockperf)" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ ]] && ((ROUNDS >= 6)) || { echo "bench: ROUNDS=$ROUNDS: at least 6 rounds are needed for a confidence interval" >&2; exit 2; }
[[ $EXTRA =~ ^[0-9]+$ ]] || { echo "bench: EXTRA=$EXTRA: a number of rounds" >&2; exit 2; }
[[ $SECS =~ ^[1-9][0-9]*$ ]] || { echo "bench: SECS=$SECS: whole seconds (sockperf -t)" >&2; exit 2; }
for c in "$SERVER_CPU" "$CLIENT_CPU"; do
	taskset -c "$c" true 2>/dev/null || { echo "bench: cannot pin to CPU $c (SERVER_CPU, CLIENT_CPU)" >&2; exit 2; }
done
# placements: name and client CPU.
placements=("one CPU:$SERVER_CPU")
[[ $CLIENT_CPU != "$SERVER_CPU" ]] && placements+=("two CPUs:$CLIENT_CPU")

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

# listen_inode PORT: the inode of the socket listening on TCP PORT, if any.
listen_inode() {
	local f=(/proc/net/tcp)
	[[ -r /proc/net/tcp6 ]] && f+=(/proc/net/tcp6)
	awk -v p="$(printf ':%04X' "$1")" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10; exit }' "${f[@]}"
}

# await_listen NAME PID PORT: wait until process PID listens on PORT: its
# own socket, not just any (10 s at most; a server that exits fails the run).
await_listen() {
	local end=$((SECONDS + 10)) ino
	while :; do
		ino=$(listen_inode "$3")
		if [[ -n $ino ]] && find "/proc/$2/fd" -lname "socket:\[$ino\]" 2>/dev/null | grep -q .; then
			return
		fi
		kill -0 "$2" 2>/dev/null || { echo "bench: the $1 server exited:" >&2; cat "$work/$1-server.log" >&2; exit 2; }
		((SECONDS < end)) || { echo "bench: the $1 server does not listen on port $3 after 10 s" >&2; exit 2; }
		sleep 0.05 # polling; the deadline, not this, decides
	done
}

for port in "$SP_PORT" "$SM_PORT"; do
	[[ -z $(listen_inode "$port") ]] || { echo "bench: port $port is in use (set SP_PORT, SM_PORT)" >&2; exit 2; }
done

(cd "$root" && CGO_ENABLED=0 go build -o "$work/smcping" ./cmd/smcping)
commit=$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)

# The servers are started with taskset itself, so that $! is the server's
# pid (taskset execs it).
taskset -c "$SERVER_CPU" sockperf sr --tcp -i 127.0.0.1 -p "$SP_PORT" >"$work/sockperf-server.log" 2>&1 &
pids+=($!)
await_listen sockperf "$!" "$SP_PORT"
taskset -c "$SERVER_CPU" "$work/smcping" -s --tcp --listen 127.0.0.1 -p "$SM_PORT" --tcp-port 0 2>"$work/smcping-server.log" &
pids+=($!)
await_listen smcping "$!" "$SM_PORT"

# sockperf_p50 CPU SIZE, smcping_p50 CPU SIZE: one run of the client pinned
# to CPU; its p50 RTT in usec, or the run fails with the client's output.
sockperf_p50() {
	local out
	out=$(taskset -c "$1" sockperf pp --tcp -i 127.0.0.1 -p "$SP_PORT" -m "$2" -t "$SECS" --full-rtt 2>&1) &&
		awk '/percentile 50.000/ { print $NF; found = 1 } END { exit !found }' <<<"$out" ||
		{ echo "bench: sockperf pp -m $2 gave no p50:" >&2; echo "$out" >&2; return 1; }
}
smcping_p50() {
	local out
	out=$(taskset -c "$1" "$work/smcping" "127.0.0.1:$SM_PORT" --proto tcp -m "$2" -t "$SECS" -o json 2>&1) &&
		awk -F': ' '/"p50_ns"/ { gsub(/,/, "", $2); printf "%.3f\n", $2 / 1000; found = 1; exit } END { exit !found }' <<<"$out" ||
		{ echo "bench: smcping -m $2 gave no p50:" >&2; echo "$out" >&2; return 1; }
}

# pair CPU SIZE ROUND: "sockperf smcping" p50s, in the order of the round.
pair() {
	local sp sm
	if (($3 % 2)); then
		sp=$(sockperf_p50 "$1" "$2") || return 1
		sm=$(smcping_p50 "$1" "$2") || return 1
	else
		sm=$(smcping_p50 "$1" "$2") || return 1
		sp=$(sockperf_p50 "$1" "$2") || return 1
	fi
	echo "$sp $sm"
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
for pl in "${placements[@]}"; do
	for size in $SIZES; do
		# Warm-up, not recorded; a result missing here only costs a warning.
		pair "${pl#*:}" "$size" 0 >/dev/null || echo "bench: (a warm-up pair, not recorded)" >&2
	done
done
if [[ -n $RAW ]]; then
	echo "placement,client_cpu,size,round,sockperf_p50_us,smcping_p50_us" >"$RAW"
fi
# rounds FIRST LAST CONFIG...: rounds FIRST to LAST of each CONFIG
# (PLACEMENT-INDEX.SIZE), in that order within a round.
rounds() {
	local first=$1 last=$2 r cfg i size cpu p try
	shift 2
	for ((r = first; r <= last; r++)); do
		printf 'round %d/%d (%d pairs)\n' "$r" "$last" "$#" >&2
		for cfg in "$@"; do
			i=${cfg%%.*} size=${cfg#*.} cpu=${placements[${cfg%%.*}]#*:}
			# A tool that got too few round trips through a busy machine
			# reports no p50 (sockperf: "No valid observations found"): the
			# pair runs again, twice at most.
			for try in 1 2 3; do
				p=$(pair "$cpu" "$size" "$r") && break
				((try < 3)) || exit 2
				echo "bench: running that pair again" >&2
				retried=$((retried + 1))
			done
			echo "$p" >>"$work/pairs.$cfg"
			if [[ -n $RAW ]]; then
				echo "${placements[$i]%:*},$cpu,$size,$r,${p/ /,}" >>"$RAW"
			fi
		done
	done
}

# stats < pairs: "sp50 sm50 diff lo hi spread verdict" (diffs in percent).
stats() {
	awk '
	function sortv(a, n,   i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
	function med(a, n) { return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function q(a, n, p,   h, l) { h = 1 + (n - 1) * p; l = int(h); return (l >= n) ? a[n] : a[l] + (h - l) * (a[l + 1] - a[l]) }
	{ n++; sp[n] = $1; sm[n] = $2; d[n] = ($2 / $1 - 1) * 100 }
	END {
		sortv(sp, n); sortv(sm, n); sortv(d, n)
		# k: the largest with P(Bin(n, 1/2) < k) <= 2.5 %; [d_k, d_n+1-k]
		# then holds the median of the ratios with >= 95 % confidence.
		p = 0.5 ^ n; cum = 0; k = 0
		for (i = 0; i < n; i++) { cum += p; if (cum > 0.025) break; k = i + 1; p = p * (n - i) / (i + 1) }
		lo = d[k]; hi = d[n + 1 - k]
		if (lo >= -5 && hi <= 5) v = "within 5%"
		else if (lo > 5) v = "MISSED 5%"
		else if (hi < -5) v = "faster: no overhead to judge"
		else v = "no verdict: too noisy"
		printf "%.3f %.3f %+.1f%% %+.1f%% %+.1f%% %.1f%% %s\n", med(sp, n), med(sm, n), med(d, n), lo, hi,
			(q(sp, n, 0.75) - q(sp, n, 0.25)) / med(sp, n) * 100, v
	}'
}

retried=0
configs=()
for i in "${!placements[@]}"; do
	for size in $SIZES; do configs+=("$i.$size"); done
done
rounds 1 "$ROUNDS" "${configs[@]}"
undecided=()
for cfg in "${configs[@]}"; do
	[[ $(stats <"$work/pairs.$cfg") == *"no verdict"* ]] && undecided+=("$cfg")
done
if ((${#undecided[@]} && EXTRA)); then
	rounds $((ROUNDS + 1)) $((ROUNDS + EXTRA)) "${undecided[@]}"
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

printf 'smcping vs sockperf, TCP loopback, p50 RTT (usec); %d interleaved rounds of %ss per tool, size and placement,\n' "$ROUNDS" "$SECS"
printf 'up to %d more for those the first rounds left undecided\n' "$EXTRA"
printf '%s; %s; %s CPUs; kernel %s\n' "$started" "$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)" "$(nproc --all)" "$(uname -r)"
printf '%s, %s, smcping %s\n' "$(sockperf --version 2>&1 | awk '/version/ { print $1, $3; exit }')" "$(go version | awk '{ print $3 }')" "$commit"
printf 'load average before: %s, after: %s\n' "$load_before" "$load_after"
missed=0 noisy=0 faster=0
for i in "${!placements[@]}"; do
	cpu=${placements[$i]#*:}
	if [[ $cpu == "$SERVER_CPU" ]]; then
		printf '\n%s: servers and clients on CPU %s\n' "${placements[$i]%:*}" "$cpu"
	else
		printf '\n%s: servers on CPU %s, clients on CPU %s\n' "${placements[$i]%:*}" "$SERVER_CPU" "$cpu"
	fi
	printf '%8s %7s %10s %10s %8s %18s %8s  %s\n' size rounds sockperf smcping diff "95% CI of diff" spread verdict
	for size in $SIZES; do
		read -r sp sm diff lo hi spread verdict < <(stats <"$work/pairs.$i.$size")
		printf '%8s %7s %10s %10s %8s %18s %8s  %s\n' "$size" "$(wc -l <"$work/pairs.$i.$size")" "$sp" "$sm" "$diff" "[$lo, $hi]" "$spread" "$verdict"
		case $verdict in
		MISSED*) missed=1 ;;
		no\ verdict*) noisy=1 ;;
		faster*) faster=1 ;;
		esac
	done
done
echo
for c in $(printf '%s\n' "$SERVER_CPU" "$CLIENT_CPU" | sort -u); do
	held=$(pinned_after "$c")
	if [ "$held" = "$c" ]; then
		printf 'pinning: a process pinned to CPU %s was still on it 1.5 s later\n' "$c"
	else
		printf 'warning: a process pinned to CPU %s was on CPUs %s 1.5 s later: something on this machine re-pins processes\n' "$c" "$held"
	fi
done
((retried)) && echo "retried: $retried pair(s) ran again after a tool gave no p50 (a busy machine)"
((faster)) && echo "faster: smcping's round trips were shorter than sockperf's by more than 5 %: it adds no overhead there; what differs is how fast each tool's waiting thread is woken (across CPUs of a VM, an idle vCPU's wake-up is most of the round trip)"
((noisy)) && echo "too noisy: a confidence interval straddles +-5 %; run again with more ROUNDS or on a quieter machine"
if [[ $STRICT == 1 ]]; then
	((missed)) && exit 1
	((noisy)) && exit 3
fi
exit 0
