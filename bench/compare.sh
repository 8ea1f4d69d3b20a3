#!/usr/bin/env bash
# Measures smcdump against the pcap read loop, tcpdump and (optionally)
# tshark in one run, on one CPU and (-j 2) on two, and checks the goals of
# issue 34 ("every core, and the last 2x on one"); exits 0 whether or not
# they are met.
#
# Two captures are built with bench/mkbig: the main one (the inputs repeated,
# by default the kernel's pingpong capture) and one of short connections (the
# reference CLC declines repeated, ~100 connections per MiB). Every tool runs
# pinned to one CPU (taskset), with TZ=UTC, stdout to /dev/null, under GNU
# time, on a warm page cache, N times in rounds; the best time and the highest
# peak RSS count. The "-j 2" modes run pinned to two CPUs (CPU and another
# online one) with two decoding goroutines, each beside the machine's bound
# for it: two smcdump processes at once, one pinned to each CPU, each on a
# capture of half the size; they are skipped on one CPU. The report gives
# the machine, one table per capture (frames/s, ratio to the read loop and
# to tcpdump, MaxRSS) and the targets, met or NOT met. Untimed checks make
# sure that every tool saw every frame.
#
# With -L the same run measures the rest of issue 34's bounds, by their go
# test benchmarks on every CPU (after the timed modes): smctop's refresh at
# 100,000 sockets (CPU time), the exporter's scrape p99 under 50 concurrent
# scrapers, the fleet view over $FLEET_HOSTS hosts in a backfilled
# Prometheus with and without the fleet rules' records, and the browser
# (smcdump -I) on a capture of $BROWSER_MIB MiB: its first screen, its
# index (peak resident size, and its heap projected to 10 GiB of the same
# frames: an overestimate, since the tracker's part of it is bounded) and
# a whole-file filter (its time projected to 1 GiB).
#
# usage: bench/compare.sh [-s MiB] [-r N] [-c CPU] [-S] [-n] [-k] [-L] [-R] [-m FLAGS] [input.pcap ...]
#   -s MiB    size of each capture (default 200; 1024 for the 1 GB goals)
#   -r N      runs of each measurement (default 3)
#   -c CPU    the CPU every tool is pinned to (default the last online CPU)
#   -S        flatness: the memory modes also on both kinds of capture at
#             $FLAT_SIZES MiB (default "200 2048"), peak RSS compared
#   -n        no tshark (it runs once, takes minutes per 100 MiB and GiBs of memory)
#   -k        keep the work directory and print its path
#   -L        the live half and the browser too (minutes: the fleet's
#             backfill alone takes several; needs prometheus and promtool)
#   -R        write the main capture's figures into README.md's performance
#             table (between its "bench/compare.sh -R" markers)
#   -m FLAGS  extra flags for bench/mkbig (default $MKBIG_FLAGS, else none)
#   inputs    captures repeated into the main capture (default testdata/reference/pingpong.pcap)
# environment: MKBIG_FLAGS, FLAT_SIZES, SHORT_INPUTS (the captures repeated
#   into the short-connection capture), MIXES (other frame mixes, each
#   repeated into a capture of its own and measured in the per-mix modes;
#   default samples/long.pcap samples/multiconn.pcap, "" for none),
#   FLEET_HOSTS (-L's fleet, default 10000), BROWSER_MIB (-L's browser
#   capture, default 2048)
#
# Needs go, taskset, tcpdump, GNU time (/usr/bin/time -v) and, without -n, tshark.
set -euo pipefail

cd "$(dirname "$0")/.."
export LC_ALL=C TZ=UTC # TZ: without it tcpdump stats /etc/localtime for every packet

size=200
reps=3
cpu=$(sed 's/.*[,-]//' /sys/devices/system/cpu/online)
flat=0
tshark=1
keep=0
readme=0
live=0
mkbig_flags=${MKBIG_FLAGS:-}
while getopts "s:r:c:SnkLRm:" opt; do
	case $opt in
	s) size=$OPTARG ;;
	r) reps=$OPTARG ;;
	c) cpu=$OPTARG ;;
	S) flat=1 ;;
	n) tshark=0 ;;
	k) keep=1 ;;
	R) readme=1 ;;
	L) live=1 ;;
	m) mkbig_flags=$OPTARG ;;
	*) sed -n '2,51p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=(testdata/reference/pingpong.pcap)
read -r -a short_inputs <<<"${SHORT_INPUTS:-testdata/reference/decline-nordma.pcap testdata/reference/fallback-nosmc.pcap testdata/reference/no-ueid.pcap}"
read -r -a flat_sizes <<<"${FLAT_SIZES:-200 2048}"
read -r -a mixes <<<"${MIXES-samples/long.pcap samples/multiconn.pcap}"
read -r -a mkflags <<<"$mkbig_flags"
[[ $size =~ ^[0-9]+$ && $reps =~ ^[1-9][0-9]*$ && $cpu =~ ^[0-9]+$ ]] || { echo "compare.sh: -s, -r and -c take numbers" >&2; exit 2; }
[ ${#flat_sizes[@]} = 2 ] || { echo "compare.sh: FLAT_SIZES needs two sizes" >&2; exit 2; }

tools=(go taskset tcpdump /usr/bin/time)
[ "$tshark" = 0 ] || tools+=(tshark)
[ "$live" = 0 ] || tools+=(prometheus promtool)
fleet_hosts=${FLEET_HOSTS:-10000}
browser_mib=${BROWSER_MIB:-2048}
[[ $fleet_hosts =~ ^[1-9][0-9]*$ && $browser_mib =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: FLEET_HOSTS and BROWSER_MIB take numbers" >&2; exit 2; }
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found (make test-deps installs the tools)" >&2; exit 1; }
done
taskset -c "$cpu" true 2>/dev/null || { echo "compare.sh: cannot pin to CPU $cpu" >&2; exit 1; }
# cpus2: CPU and another online one, for the -j 2 modes ("" on one CPU).
cpus2=""
for c in $(seq 0 "$(($(nproc --all) - 1))"); do
	if [ "$c" != "$cpu" ] && taskset -c "$c" true 2>/dev/null; then
		cpus2="$cpu,$c"
		break
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/smcbench.XXXXXX")
if [ "$keep" = 1 ]; then
	echo "work directory: $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi
say() { echo "compare.sh: $*" >&2; }

# shellcheck source=bench/pin.sh
. bench/pin.sh

CGO_ENABLED=0 go build -o "$work/smcdump" ./cmd/smcdump
CGO_ENABLED=0 go build -o "$work/readloop" ./bench/readloop
# halves FILE SMCDUMP ARGS...: SMCDUMP ARGS on FILE's halves (mkhalves) at
# once, each process pinned to one of the -j 2 modes' CPUs.
cat >"$work/halves" <<EOF
#!/usr/bin/env bash
f=\${1%.pcap}
shift
taskset -c ${cpus2%,*} "\$@" -r "\$f.h1.pcap" &
p=\$!
rc=0
taskset -c ${cpus2#*,} "\$@" -r "\$f.h2.pcap" || rc=1
wait "\$p" || rc=1
exit "\$rc"
EOF
chmod +x "$work/halves"

# mkcap NAME MiB INPUT...: builds $work/NAME.pcap with mkbig and prints its
# frame count.
mkcap() {
	local name=$1 mib=$2
	shift 2
	say "building $name.pcap ($mib MiB of $*)"
	if ! go run ./bench/mkbig "${mkflags[@]}" -o "$work/$name.pcap" -size "$mib" "$@" 2>"$work/$name.mkbig"; then
		say "mkbig failed:"
		cat "$work/$name.mkbig" >&2
		exit 1
	fi
	sed -n 's/.*: \([0-9]*\) frames$/\1/p' "$work/$name.mkbig"
}

# mkhalves NAME FRAMES INPUT...: the halves of NAME.pcap (of FRAMES
# frames) for the *-halves modes, when there are two CPUs: NAME.h1.pcap,
# a capture of half the size of the same inputs, and NAME.h2.pcap, a copy
# (a page cache of its own). NAME.pcap.frames and .half.frames hold the
# frame counts.
mkhalves() {
	local name=$1 fr=$2
	shift 2
	echo "$fr" >"$work/$name.pcap.frames"
	[ -n "$cpus2" ] || return 0
	mkcap "$name.h1" "$(((size + 1) / 2))" "$@" >"$work/$name.pcap.half.frames"
	cp "$work/$name.h1.pcap" "$work/$name.h2.pcap"
}

# The same columns from smcdump and tshark: frame number, BTH opcode, dest
# QP, PSN, CDC sequence number, CLC type; one line per frame (-a).
sfields=(-e frame.number -e roce.bth.opcode -e roce.bth.dqpn -e roce.bth.psn -e smc.cdc.seq -e smc.clc.type)
tfields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e smc.rmbe.ctrl.seqno -e smc.clc_msg)
# The two filters select the same frames; the second names a tracker field,
# so the only difference is the tracker.
yplain='smc.cdc.seq == 5'
ytracked='smc.cdc.seq == 5 and smc.conn.id'

# setcmd MODE FILE: sets cmd to the command line of MODE on FILE, and pin
# to the CPUs it runs on.
setcmd() {
	local s=$work/smcdump f=$2
	pin=$cpu
	case $1 in
	*-j2 | *-halves) pin=$cpus2 ;;
	esac
	case $1 in
	readloop) cmd=("$work/readloop" "$f") ;;
	fields) cmd=("$s" -r "$f" -a -T fields "${sfields[@]}") ;;
	text) cmd=("$s" -r "$f") ;;
	tcpdump) cmd=(tcpdump -nn -r "$f") ;;
	json) cmd=("$s" -r "$f" -T json) ;;
	jsonl) cmd=("$s" -r "$f" -T jsonl) ;;
	# Decode alone, every layer: -q alone decodes only as deep as SMC
	# relevance needs, the tracker reads every layer; frame.error asks for
	# every layer and costs one field.
	decode) cmd=("$s" -r "$f" -q -Y frame.error) ;;
	conns) cmd=("$s" -r "$f" -q -z "smc,conns") ;;
	# The expert findings also check every RoCE frame's ICRC (roce.icrc.bad).
	expert) cmd=("$s" -r "$f" -q -z "smc,expert") ;;
	filter) cmd=("$s" -r "$f" -Y "$yplain") ;;
	filter-tracked) cmd=("$s" -r "$f" -Y "$ytracked") ;;
	tshark) cmd=(tshark -n -r "$f" --disable-protocol rpcordma -T fields "${tfields[@]}") ;;
	# -T fields with a tracker view: what a view costs on top of the columns.
	fields-conns) cmd=("$s" -r "$f" -a -T fields "${sfields[@]}" -z "smc,conns") ;;
	# -j 2 forces the fast -T fields path onto two goroutines (-j 0 leaves it on one).
	fields-j2) cmd=("$s" -r "$f" -j 2 -a -T fields "${sfields[@]}") ;;
	text-j2) cmd=("$s" -r "$f" -j 2) ;;
	json-j2) cmd=("$s" -r "$f" -j 2 -T json) ;;
	# The machine's bound for -j 2: two smcdump processes at once, one
	# on each CPU, each on a capture of half the size (halves).
	fields-halves) cmd=("$work/halves" "$f" "$s" -a -T fields "${sfields[@]}") ;;
	text-halves) cmd=("$work/halves" "$f" "$s") ;;
	json-halves) cmd=("$work/halves" "$f" "$s" -T json) ;;
	*) echo "compare.sh: no mode $1" >&2; exit 2 ;;
	esac
}

# label MODE: the table's name for MODE.
label() {
	case $1 in
	readloop) echo "read loop (pcapgo, no decode)" ;;
	fields) echo "smcdump -a -T fields (6 -e)" ;;
	text) echo "smcdump (text)" ;;
	tcpdump) echo "tcpdump -nn -r" ;;
	json | jsonl) echo "smcdump -T $1" ;;
	decode) echo "smcdump -q -Y frame.error" ;;
	conns) echo "smcdump -q -z smc,conns" ;;
	expert) echo "smcdump -q -z smc,expert" ;;
	filter) echo "smcdump -Y '$yplain'" ;;
	filter-tracked) echo "smcdump -Y '... and smc.conn.id'" ;;
	tshark) echo "tshark -T fields (6 -e), 1 run" ;;
	fields-conns) echo "smcdump -a -T fields -z smc,conns" ;;
	fields-j2) echo "  the same -T fields, -j 2 on 2 CPUs" ;;
	text-j2) echo "  text, -j 2 on 2 CPUs" ;;
	json-j2) echo "  -T json, -j 2 on 2 CPUs" ;;
	*-halves) echo "  ${1%-halves}: 2 processes on halves" ;;
	esac
}

# measure RESULTS FILE MODE...: one run of each MODE on FILE, pinned to
# $cpu under GNU time, stdout to /dev/null (the JSON of 1 GB is ~10 GB),
# except conns, whose table is kept for its counts. Appends "MODE seconds
# maxrss_kib" to RESULTS; the wall time is bash's clock (GNU time's has 10 ms
# steps).
measure() {
	local results=$1 file=$2 mode out t0 t1 rss scale
	shift 2
	for mode in "$@"; do
		setcmd "$mode" "$file"
		out=/dev/null
		[ "$mode" != conns ] || out=$work/conns.out
		t0=$EPOCHREALTIME
		if ! taskset -c "$pin" /usr/bin/time -v -o "$work/time" "${cmd[@]}" >"$out" 2>"$work/err"; then
			say "$mode failed: ${cmd[*]}"
			tail -5 "$work/err" >&2
			exit 1
		fi
		t1=$EPOCHREALTIME
		rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time")
		# The halves hold other than twice half the frames: their
		# time is scaled to the capture's frames (frames/s is what
		# compares).
		scale=1
		[[ $mode != *-halves ]] || scale=$(awk -v f="$(cat "$file.frames")" -v h="$(cat "$file.half.frames")" 'BEGIN { print f / (2 * h) }')
		echo "$mode $(awk -v a="$t0" -v b="$t1" -v s="$scale" 'BEGIN { printf "%.4f", (b - a) * s }') $rss" >>"$results"
	done
}

# rounds RESULTS FILE MODE...: $reps rounds of measure; each round runs
# every mode once, so that drifts of the machine hit all modes alike.
rounds() {
	local i
	cat "$2" >/dev/null # warm the page cache
	for ((i = 1; i <= reps; i++)); do
		say "$(basename "$2"): round $i of $reps"
		measure "$@"
	done
}

# best RESULTS: "MODE seconds maxrss_kib" per mode, in first-run order: the
# minimum time and the maximum peak RSS over its runs.
best() {
	awk '!($1 in t) { order[++n] = $1; t[$1] = $2; r[$1] = $3 }
		{ if ($2 < t[$1]) t[$1] = $2; if ($3 > r[$1]) r[$1] = $3 }
		END { for (i = 1; i <= n; i++) print order[i], t[order[i]], r[order[i]] }' "$1"
}

# conns_counts: "connections frames" from the last conns table: all the
# connections when some were folded into totals, else those listed.
conns_counts() {
	awk '/^SMC connections: / { c = $3 } /^all [0-9]+ connections:/ { c = $2 } /^frames [0-9]+:/ { f = $2 + 0 } END { print c + 0, f + 0 }' "$work/conns.out"
}

main_modes=(readloop fields text tcpdump json jsonl decode conns expert filter filter-tracked fields-conns)
[ -z "$cpus2" ] || main_modes+=(fields-j2 fields-halves text-j2 text-halves json-j2 json-halves)
mem_modes=(fields text jsonl conns filter-tracked)

frames=$(mkcap main "$size" "${inputs[@]}")
mkhalves main "$frames" "${inputs[@]}"
main_bytes=$(stat -c %s "$work/main.pcap")
load0=$(cut -d' ' -f1-3 /proc/loadavg)
rounds "$work/main.results" "$work/main.pcap" "${main_modes[@]}"
read -r main_conns main_tracked < <(conns_counts)
if [ "$tshark" = 1 ]; then
	say "tshark (one run)"
	measure "$work/main.results" "$work/main.pcap" tshark
fi

# Checks, untimed: every tool saw every frame, and the tracker does not
# change what the filter selects.
checks=()
lines() {
	setcmd "$1" "$work/main.pcap"
	"${cmd[@]}" 2>/dev/null | wc -l
}
say "checks"
rl=$("$work/readloop" "$work/main.pcap" | cut -d' ' -f1)
[ "$rl" = "$frames" ] || checks+=("read loop read $rl frames of $frames")
[ "$main_tracked" = "$frames" ] || checks+=("the tracker counted $main_tracked frames of $frames")
n=$(lines fields)
[ "$n" = "$frames" ] || checks+=("smcdump -T fields printed $n lines for $frames frames")
n=$(lines tcpdump)
[ "$n" = "$frames" ] || checks+=("tcpdump printed $n lines for $frames frames")
n=$(lines text)
if [ "$n" = 0 ] || [ "$n" -gt "$frames" ]; then
	checks+=("smcdump printed $n text lines for $frames frames")
fi
setcmd filter "$work/main.pcap"
"${cmd[@]}" >"$work/filter.out"
setcmd filter-tracked "$work/main.pcap"
"${cmd[@]}" >"$work/filter-tracked.out"
[ -s "$work/filter.out" ] || checks+=("-Y '$yplain' selected no frame")
cmp -s "$work/filter.out" "$work/filter-tracked.out" || checks+=("-Y '$yplain' and -Y '$ytracked' differ")
rm -f "$work/filter.out" "$work/filter-tracked.out"
# -j 2's output is -j 1's, byte for byte (hashed: the JSON of 200 MiB is GBs).
digest() {
	setcmd "$1" "${2:-$work/main.pcap}"
	taskset -c "$pin" "${cmd[@]}" 2>/dev/null | md5sum | cut -d' ' -f1
}
if [ -n "$cpus2" ]; then
	for m in fields text json; do
		[ "$(digest "$m")" = "$(digest "$m-j2")" ] || checks+=("$m: -j 2 printed other bytes than one CPU")
	done
fi

# The other frame mixes issue 34 names (bulk WRITEs, several connections),
# each a capture of its own of the same size, in the modes whose goals are
# per frame mix.
mix_modes=(readloop fields text tcpdump json fields-conns)
[ -z "$cpus2" ] || mix_modes+=(fields-j2 fields-halves text-j2 text-halves json-j2 json-halves)
mix_frames=()
for i in "${!mixes[@]}"; do
	mix_frames[i]=$(mkcap "mix$i" "$size" "${mixes[i]}")
	mkhalves "mix$i" "${mix_frames[i]}" "${mixes[i]}"
	rounds "$work/mix$i.results" "$work/mix$i.pcap" "${mix_modes[@]}"
	if [ -n "$cpus2" ]; then
		for m in fields text json; do
			[ "$(digest "$m" "$work/mix$i.pcap")" = "$(digest "$m-j2" "$work/mix$i.pcap")" ] || checks+=("${mixes[i]}: $m: -j 2 printed other bytes than one CPU")
		done
	fi
	rm -f "$work/mix$i.pcap" "$work/mix$i".h[12].pcap
done

short_frames=$(mkcap short "$size" "${short_inputs[@]}")
short_bytes=$(stat -c %s "$work/short.pcap")
rm -f "$work/main.pcap" "$work"/main.h[12].pcap
rounds "$work/short.results" "$work/short.pcap" "${mem_modes[@]}"
read -r short_conns short_tracked < <(conns_counts)
[ "$short_tracked" = "$short_frames" ] || checks+=("the tracker counted $short_tracked frames of $short_frames (short connections)")
rm -f "$work/short.pcap"

if [ "$flat" = 1 ]; then
	for fs in "${flat_sizes[@]}"; do
		for kind in main short; do
			if [ "$kind" = main ]; then
				fr=$(mkcap "flat-$kind-$fs" "$fs" "${inputs[@]}")
			else
				fr=$(mkcap "flat-$kind-$fs" "$fs" "${short_inputs[@]}")
			fi
			rounds "$work/flat-$kind-$fs.results" "$work/flat-$kind-$fs.pcap" "${mem_modes[@]}"
			read -r c _ < <(conns_counts)
			echo "$fr $c" >"$work/flat-$kind-$fs.counts"
			rm -f "$work/flat-$kind-$fs.pcap"
		done
	done
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)
held=$(pinned_after "$cpu")

# The goals measured by Go tests: 0 allocations per frame and golden output.
# gotest PATTERN PKG...: "met|N tests" or "NOT met|why".
gotest() {
	local pat=$1 out n
	shift
	say "go test -run '$pat'"
	if out=$(go test -count=1 -v -run "$pat" "$@" 2>&1); then
		n=$(grep -c -- '^--- PASS' <<<"$out" || true)
		if [ "$n" -gt 0 ]; then echo "met|$n tests: go test -run '$pat' $*"; else echo "NOT met|no test ran"; fi
	else
		echo "NOT met|go test -run '$pat' $* failed"
	fi
}
allocs=$(gotest 'NotAllocate|NoAlloc' ./decode/ ./capture/ ./filter/ ./output/)
goldens=$(gotest 'Golden' ./output/)

# gobench FILE PKG PATTERN [go test flags...] runs benchmarks PATTERN of PKG
# into FILE; a failed run leaves what it printed there, and no figures.
gobench() {
	local f=$1 pkg=$2 pat=$3
	shift 3
	say "go test $pkg -bench '$pat' $*"
	go test "$pkg" -run '^$' -bench "$pat" "$@" >"$f" 2>&1 || say "go test $pkg -bench '$pat' failed: see $f"
}
# metric FILE BENCH UNIT: the best value of UNIT over the lines of benchmark
# BENCH (its name up to the -GOMAXPROCS suffix) in FILE: the highest of a
# rate (a unit ending in /s), else the lowest.
metric() {
	awk -v b="$2" -v u="$3" '
		BEGIN { up = u ~ /\/s$/ }
		{ n = $1; sub(/-[0-9]+$/, "", n) }
		n == b { for (i = 3; i <= NF; i++) if ($i == u) { v = $(i - 1) + 0; if (best == "" || (up ? v > best : v < best)) best = v } }
		END { if (best != "") print best }' "$1"
}
if [ "$live" = 1 ]; then
	gobench "$work/live-smctop.txt" ./monitor/ 'Refresh100kSockets$' -benchtime 5x -count 3
	gobench "$work/live-scrape.txt" ./metrics/ 'Scrape50Concurrent$' -count 3
	FLEET_HOSTS=$fleet_hosts gobench "$work/live-fleet.txt" ./fleet/ 'RefreshPrometheusN(Rules)?$' -benchtime 3x -timeout 90m
	SMCSCOPE_BROWSER_MB=$browser_mib SMCSCOPE_BROWSER_FORMATS=pcap gobench "$work/live-browser.txt" ./tui/browser/ 'Browser/pcap/(first-screen|index|filter)$' -benchtime 3x -timeout 60m
fi

mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
version() { "$@" 2>&1 | head -1; }
rev=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- || rev="$rev + uncommitted changes"

echo
echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); $(nproc --all) CPUs; kernel $(uname -r); every tool pinned to CPU $cpu (taskset; Go then uses 1 P), the -j 2 modes to CPUs ${cpus2:-(none)}"
echo "tools: $(go version | cut -d' ' -f3); smcdump from $rev; $(version tcpdump --version), $(tcpdump --version 2>&1 | sed -n 2p);" \
	"$([ "$tshark" = 1 ] && version tshark -v | cut -d' ' -f1-3 || echo "tshark not run (-n)"); TZ=UTC"
if [ "$held" = "$cpu" ]; then
	echo "pinning: a process pinned to CPU $cpu was still on it 1.5 s later"
else
	echo "pinning: a process pinned to CPU $cpu was on CPUs $held 1.5 s later: something on this machine re-pins processes, so longer runs may have moved off CPU $cpu"
fi
echo "load average before/after: $load0 / $load1 (numbers from a busy machine are low)"
echo "main capture: $(mib "$main_bytes"), $frames frames, $main_conns connections (${inputs[*]} repeated${mkbig_flags:+, mkbig $mkbig_flags})"
echo "times: best of $reps run(s), stdout to /dev/null; MaxRSS: the highest of the runs (GNU time)"
echo
best "$work/main.results" >"$work/main.best"
table() {
	awk -v frames="$1" -v labels="$2" '
		BEGIN { n = split(labels, l, "|"); for (i = 1; i < n; i += 2) lab[l[i]] = l[i + 1] }
		{ mode[NR] = $1; sec[NR] = $2; rss[NR] = $3; if ($1 == "readloop") rl = frames / $2; if ($1 == "tcpdump") td = frames / $2 }
		END {
			printf "%-36s %8s %12s %11s %10s %10s\n", "mode", "seconds", "frames/s", "vs readloop", "vs tcpdump", "MaxRSS MiB"
			for (i = 1; i <= NR; i++) {
				fps = frames / sec[i]
				printf "%-36s %8.3f %12.0f %11s %10s %10.1f\n", lab[mode[i]], sec[i], fps,
					rl ? sprintf("%.2f", fps / rl) : "-", td ? sprintf("%.2fx", fps / td) : "-", rss[i] / 1024
			}
		}' "$3"
}
labels=""
for m in "${main_modes[@]}" tshark; do labels+="$m|$(label "$m")|"; done
table "$frames" "$labels" "$work/main.best"
for i in "${!mixes[@]}"; do
	echo
	echo "frame mix: ${mixes[i]} repeated to $size MiB, ${mix_frames[i]} frames"
	best "$work/mix$i.results" >"$work/mix$i.best"
	table "${mix_frames[i]}" "$labels" "$work/mix$i.best"
done
echo
echo "short connections: $(mib "$short_bytes"), $short_frames frames, $short_conns connections (${short_inputs[*]} repeated${mkbig_flags:+, mkbig $mkbig_flags})"
best "$work/short.results" >"$work/short.best"
table "$short_frames" "$labels" "$work/short.best"

if [ "$flat" = 1 ]; then
	echo
	echo "flatness: peak RSS (MiB) of the memory modes at ${flat_sizes[0]} and ${flat_sizes[1]} MiB"
	for kind in main short; do
		read -r f0 c0 <"$work/flat-$kind-${flat_sizes[0]}.counts"
		read -r f1 c1 <"$work/flat-$kind-${flat_sizes[1]}.counts"
		echo "$kind: $f0 frames, $c0 connections / $f1 frames, $c1 connections"
		best "$work/flat-$kind-${flat_sizes[0]}.results" >"$work/flat0.best"
		best "$work/flat-$kind-${flat_sizes[1]}.results" >"$work/flat1.best"
		# "MODE seconds0 rss0 seconds1 rss1", in the order of the modes
		awk 'NR == FNR { t[$1] = $2; r[$1] = $3; next } $1 in t { print $1, $2, $3, t[$1], r[$1] }' \
			"$work/flat1.best" "$work/flat0.best" | tee -a "$work/flat.all" |
			awk -v labels="$labels" '
				BEGIN { n = split(labels, l, "|"); for (i = 1; i < n; i += 2) lab[l[i]] = l[i + 1] }
				{ printf "  %-36s %8.1f %8.1f %+7.1f%%\n", lab[$1], $3 / 1024, $5 / 1024, ($5 / $3 - 1) * 100 }'
	done
fi

echo
echo "targets (issue 34):"
# target GOAL VALUE VERDICT [NOTE]
target() {
	if [ -n "${4:-}" ]; then
		printf '  %-52s %-14s %-8s %s\n' "$@"
	else
		printf '  %-52s %-14s %s\n' "$@"
	fi
}
verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo "NOT met"; fi; }
get() { awk -v m="$2" '$1 == m { print $'"$3"' }' "$1"; }
# per_mix BEST PREFIX: the targets that hold for every frame mix, from
# the best times BEST, each line led by PREFIX.
per_mix() {
	local bf=$1 p=$2 rl fi_ td tx js fc m one two
	rl=$(get "$bf" readloop 2)
	fi_=$(get "$bf" fields 2)
	target "$p-T fields >= 85% of the read loop" "$(awk -v a="$rl" -v b="$fi_" 'BEGIN { printf "%.0f%%", a / b * 100 }')" "$(verdict "$rl / $fi_ >= 0.85")"
	td=$(get "$bf" tcpdump 2)
	tx=$(get "$bf" text 2)
	target "${p}text >= 3x tcpdump -nn -r (TZ=UTC)" "$(awk -v a="$td" -v b="$tx" 'BEGIN { printf "%.2fx", a / b }')" "$(verdict "$td / $tx >= 3")"
	js=$(get "$bf" json 2)
	target "$p-T json >= 15% of the read loop" "$(awk -v a="$rl" -v b="$js" 'BEGIN { printf "%.0f%%", a / b * 100 }')" "$(verdict "$rl / $js >= 0.15")"
	fc=$(get "$bf" fields-conns 2)
	target "$p-T fields + -z smc,conns <= 1.5x fields" "$(awk -v a="$fi_" -v b="$fc" 'BEGIN { printf "%.2fx", b / a }')" "$(verdict "$fc / $fi_ <= 1.5")"
	if [ -n "$cpus2" ]; then
		for m in fields text json; do
			one=$(get "$bf" "$m" 2)
			two=$(get "$bf" "$m-j2" 2)
			halves=$(get "$bf" "$m-halves" 2)
			target "$p$m: -j 2 on 2 CPUs >= 1.7x one CPU" "$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2fx", a / b }')" "$(verdict "$one / $two >= 1.7")" \
				"$(awk -v a="$one" -v b="$halves" 'BEGIN { printf "the machine: %.2fx (2 processes on halves)", a / b }')"
		done
	else
		target "$p-j 2 on 2 CPUs >= 1.7x one CPU" "-" "-" "not measured: one CPU online"
	fi
}
per_mix "$work/main.best" ""
for i in "${!mixes[@]}"; do
	per_mix "$work/mix$i.best" "$(basename "${mixes[i]}" .pcap): "
done
over() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (b / a - 1) * 100 }'; }
a=$(get "$work/main.best" decode 2)
b=$(get "$work/main.best" conns 2)
target "-q -z smc,conns <= 10% over decoding alone" "$(over "$a" "$b")" "$(verdict "$b / $a <= 1.10")"
b=$(get "$work/main.best" expert 2)
target "-q -z smc,expert over decoding alone (no goal)" "$(over "$a" "$b")" "-" "it checks every ICRC as well"
a=$(get "$work/main.best" filter 2)
b=$(get "$work/main.best" filter-tracked 2)
target "-Y tracker field <= 10% over a plain field" "$(over "$a" "$b")" "$(verdict "$b / $a <= 1.10")"
small=""
[ "$size" -ge 1024 ] || small="; at $size MiB, the goal is for -s 1024"
peak() { grep -v -e '^readloop ' -e '^tcpdump ' -e '^tshark ' "$1" | sort -k3,3n | tail -1; }
read -r pm _ pr < <(peak "$work/main.best")
target "peak RSS <= 64 MiB, repeated capture" "$(awk -v r="$pr" 'BEGIN { printf "%.1f MiB", r / 1024 }')" "$(verdict "$pr <= 65536")" "$(label "$pm")$small"
read -r pm _ pr < <(peak "$work/short.best")
many=""
[ "$short_conns" -ge 100000 ] || many="; $short_conns connections, the goal is for 100 000+"
target "peak RSS <= 64 MiB, short connections" "$(awk -v r="$pr" 'BEGIN { printf "%.1f MiB", r / 1024 }')" "$(verdict "$pr <= 65536")" "$(label "$pm")$small$many"
if [ "$flat" = 1 ]; then
	read -r w bad < <(awk '{ g = $5 - $3; if (g > $3 * 0.10 && g > 2048) bad++; if (g > w) w = g }
		END { printf "%.1f %d\n", w / 1024, bad }' "$work/flat.all")
	target "flat from ${flat_sizes[0]} to ${flat_sizes[1]} MiB (<= 10% or 2 MiB)" "max +$w MiB" "$(verdict "$bad == 0")"
else
	target "flat from ${flat_sizes[0]} to ${flat_sizes[1]} MiB" "-" "-" "not measured: -S measures it"
fi
if [ "$live" = 1 ]; then
	# liveTarget GOAL VALUE UNIT LIMIT: VALUE (empty when not measured)
	# against LIMIT, lower is better.
	liveTarget() {
		if [ -z "$2" ]; then
			target "$1" "-" "NOT met" "not measured: see the work directory (-k)"
		else
			target "$1" "$2 $3" "$(verdict "$2 < $4")"
		fi
	}
	v=$(metric "$work/live-smctop.txt" BenchmarkRefresh100kSockets cpu-ns/op)
	liveTarget "smctop refresh, 100,000 sockets < 100 ms CPU" "$( [ -z "$v" ] || awk -v v="$v" 'BEGIN { printf "%.1f", v / 1e6 }')" ms 100
	liveTarget "exporter scrape p99, 50 scrapers, 10k sockets < 100 ms" "$(metric "$work/live-scrape.txt" BenchmarkScrape50Concurrent p99-ms)" ms 100
	for b in RefreshPrometheusN RefreshPrometheusNRules; do
		v=$(metric "$work/live-fleet.txt" "Benchmark$b" ns/op)
		what="fleet refresh, $fleet_hosts hosts < 1 s"
		[ "$b" = RefreshPrometheusN ] || what="$what, the rules' records"
		liveTarget "$what" "$( [ -z "$v" ] || awk -v v="$v" 'BEGIN { printf "%.2f", v / 1e9 }')" s 1
	done
	f=$work/live-browser.txt
	v=$(metric "$f" BenchmarkBrowser/pcap/first-screen ns/op)
	liveTarget "browser first screen ($browser_mib MiB) < 0.5 s" "$( [ -z "$v" ] || awk -v v="$v" 'BEGIN { printf "%.3f", v / 1e9 }')" s 0.5
	fr=$(metric "$f" BenchmarkBrowser/pcap/index frames)
	fm=$(metric "$f" BenchmarkBrowser/pcap/index fileMiB)
	hb=$(metric "$f" BenchmarkBrowser/pcap/index heapB/frame)
	liveTarget "browser index peak RSS ($browser_mib MiB) < 200 MiB" "$(metric "$f" BenchmarkBrowser/pcap/index peakRSSMiB)" MiB 200
	v=""
	[ -z "$hb" ] || v=$(awk -v h="$hb" -v n="$fr" -v m="$fm" 'BEGIN { printf "%.0f", h * n / m * 10240 / 1048576 }')
	liveTarget "browser index heap, projected to 10 GiB < 200 MiB" "$v" MiB 200
	v=$(metric "$f" BenchmarkBrowser/pcap/filter frames/s)
	liveTarget "browser filter, projected to 1 GiB < 0.5 s" "$( [ -z "$v" ] || awk -v v="$v" -v n="$fr" -v m="$fm" 'BEGIN { printf "%.2f", n / m * 1024 / v }')" s 0.5
fi
target "0 allocations per frame (go test)" "-" "${allocs%%|*}" "${allocs#*|}"
target "output identical (goldens, go test)" "-" "${goldens%%|*}" "${goldens#*|}"

if [ ${#checks[@]} -gt 0 ]; then
	echo
	echo "checks FAILED (the figures above may not compare like with like):"
	printf '  %s\n' "${checks[@]}"
else
	echo
	echo "checks: read loop, tracker, -T fields and tcpdump saw all $frames frames; both -Y filters printed the same frames${cpus2:+; -j 2 printed the same bytes as one CPU (fields, text, json)}"
fi

# -R: the main capture's figures into README.md, between its markers.
if [ "$readme" = 1 ]; then
	begin='<!-- bench/compare.sh -R: begin -->'
	end='<!-- bench/compare.sh -R: end -->'
	if ! grep -qxF "$begin" README.md || ! grep -qxF "$end" README.md; then
		say "README.md has no '$begin' ... '$end' block: not written"
		exit 0
	fi
	{
		echo "$begin"
		flags=-R
		[ "$tshark" = 1 ] || flags="-n -R"
		echo "One run of \`bench/compare.sh $flags\` on $(date -u '+%Y-%m-%d'): $(mib "$main_bytes") of the kernel's pingpong capture repeated"
		echo "($frames frames), every tool pinned to one CPU of a $(nproc --all)-CPU $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) VM, smcdump $rev:"
		echo
		awk -v frames="$frames" '
			BEGIN {
				n = split("readloop|fields|text|tcpdump|json|conns|fields-conns|tshark", order, "|")
				lab["readloop"] = "read loop (pcapgo, no decode): the limit"
				lab["fields"] = "`smcdump -a -T fields`, 6 fields"
				lab["text"] = "`smcdump` (text)"
				lab["tcpdump"] = "`tcpdump -nn -r`"
				lab["json"] = "`smcdump -T json`"
				lab["conns"] = "`smcdump -q -z smc,conns` (the tracker)"
				lab["fields-conns"] = "`smcdump -a -T fields -z smc,conns`"
				lab["tshark"] = "`tshark -T fields`, the same 6 fields"
			}
			{ sec[$1] = $2 }
			END {
				rl = frames / sec["readloop"]; td = frames / sec["tcpdump"]
				print "| one CPU | frames/s | of the read loop | vs tcpdump |"
				print "|---|--:|--:|--:|"
				for (i = 1; i <= n; i++) {
					m = order[i]
					if (!(m in sec)) continue
					fps = frames / sec[m]
					share = fps / rl * 100
					printf "| %s | %.2f M | %." (share < 1 ? 1 : 0) "f %% | %.2f× |\n", lab[m], fps / 1e6, share, fps / td
				}
			}' "$work/main.best"
		if [ -n "$cpus2" ]; then
			echo
			awk '
				{ sec[$1] = $2 }
				END {
					print "| two CPUs | `-T fields` | text | `-T json` |"
					print "|---|--:|--:|--:|"
					printf "| `-j 2`, against one CPU | %.2f× | %.2f× | %.2f× |\n", sec["fields"] / sec["fields-j2"], sec["text"] / sec["text-j2"], sec["json"] / sec["json-j2"]
					printf "| the machine: 2 processes, each on half | %.2f× | %.2f× | %.2f× |\n", sec["fields"] / sec["fields-halves"], sec["text"] / sec["text-halves"], sec["json"] / sec["json-halves"]
				}' "$work/main.best"
		fi
		echo "$end"
	} >"$work/readme.md"
	awk -v b="$begin" -v e="$end" -v f="$work/readme.md" '
		$0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
		$0 == e { skip = 0; next }
		!skip' README.md >"$work/README.md"
	cp "$work/README.md" README.md
	say "README.md: performance table written"
fi
