#!/usr/bin/env bash
# Times smcdump against tshark and tcpdump on one large capture, in one run,
# and prints frames/s, seconds, peak RSS and speed-up for each.
#
# usage: bench/compare.sh [-s MiB] [-k] [-n] [input.pcap ...]
#   -s MiB   size of the generated capture (default 200; use 1024 for the
#            1 GB figure in bench/README.md)
#   -k       keep the work directory (capture and outputs) and print its path
#   -n       no tshark: its run takes minutes per 100 MiB and GiBs of memory
#   inputs   captures to repeat (default testdata/reference/pingpong.pcap)
#
# Needs go, tcpdump, GNU time (/usr/bin/time -v) and, without -n, tshark.
set -euo pipefail

cd "$(dirname "$0")/.."
size=200
keep=0
tshark=1
while getopts "s:kn" opt; do
	case $opt in
	s) size=$OPTARG ;;
	k) keep=1 ;;
	n) tshark=0 ;;
	*) sed -n '2,13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
inputs=("$@")
[ ${#inputs[@]} -gt 0 ] || inputs=(testdata/reference/pingpong.pcap)

tools=(go tcpdump /usr/bin/time)
[ "$tshark" = 0 ] || tools+=(tshark)
for tool in "${tools[@]}"; do
	command -v "$tool" >/dev/null || { echo "compare.sh: $tool not found (make test-deps installs the tools)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/smcbench.XXXXXX")
if [ "$keep" = 1 ]; then
	echo "work directory: $work" >&2
else
	trap 'rm -rf "$work"' EXIT
fi

CGO_ENABLED=0 go build -o "$work/smcdump" ./cmd/smcdump
go run ./bench/mkbig -o "$work/big.pcap" -size "$size" "${inputs[@]}" 2>"$work/mkbig.log"
frames=$(sed -n 's/.*: \([0-9]*\) frames$/\1/p' "$work/mkbig.log")
bytes=$(stat -c %s "$work/big.pcap")

# The same columns from each analyser: frame number, BTH opcode, dest QP,
# PSN, CDC sequence number, CLC type; one line per frame (-a for smcdump).
sfields=(-e frame.number -e roce.bth.opcode -e roce.bth.dqpn -e roce.bth.psn -e smc.cdc.seq -e smc.clc.type)
tfields=(-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn -e smc.rmbe.ctrl.seqno -e smc.clc_msg)

# measure NAME CMD...: runs CMD with stdout to a file under GNU time and
# appends "NAME seconds maxrss_kib lines" to results.
measure() {
	local name=$1
	shift
	sync
	if ! /usr/bin/time -v -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err"; then
		echo "compare.sh: $name failed:" >&2
		tail -5 "$work/$name.err" >&2
		exit 1
	fi
	local wall rss lines
	wall=$(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$work/$name.time" |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
	rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$name.time")
	lines=$(wc -l <"$work/$name.out")
	rm -f "$work/$name.out"
	echo "$name $wall $rss $lines" >>"$work/results"
}

: >"$work/results"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# Warm the page cache so the first tool does not pay for the disk.
cat "$work/big.pcap" >/dev/null
measure smcdump-fields "$work/smcdump" -r "$work/big.pcap" -a -T fields "${sfields[@]}"
measure smcdump-text "$work/smcdump" -r "$work/big.pcap"
[ "$tshark" = 0 ] || measure tshark-fields tshark -n -r "$work/big.pcap" --disable-protocol rpcordma -T fields "${tfields[@]}"
measure tcpdump tcpdump -nn -r "$work/big.pcap"

echo
echo "capture: $(awk -v b="$bytes" 'BEGIN { printf "%.0f MiB", b / 1048576 }'), $frames frames" \
	"(${inputs[*]} repeated); $(nproc) CPUs; $(tshark -v 2>/dev/null | head -1 | awk "{print \$1, \$3}");" \
	"$(tcpdump --version 2>&1 | head -1); $(go version | cut -d' ' -f3)"
echo "load average before/after: $load0 / $(cut -d' ' -f1-3 /proc/loadavg) (numbers from a busy machine are low)"
echo
awk -v frames="$frames" '
	{ name[NR] = $1; sec[NR] = $2; rss[NR] = $3; lines[NR] = $4; if ($1 == "tshark-fields") ts = $2; if ($1 == "tcpdump") td = $2 }
	END {
		printf "%-16s %10s %14s %12s %12s %12s %12s\n", "tool", "seconds", "frames/s", "MaxRSS MiB", "lines out", "vs tshark", "vs tcpdump"
		for (i = 1; i <= NR; i++) {
			s = sec[i] > 0 ? sec[i] : 0.01
			vs = ts ? sprintf("%11.1fx", ts / s) : sprintf("%12s", "n/a")
			printf "%-16s %10.2f %14.0f %12.1f %12d %s %11.2fx\n", name[i], sec[i], frames / s, rss[i] / 1024, lines[i], vs, td / s
		}
	}' "$work/results"
echo
awk -v frames="$frames" -v bytes="$bytes" '
	$1 == "smcdump-fields" { s = $2 > 0 ? $2 : 0.01; fs = frames / s; sec = s; rss = $3 / 1024 }
	$1 == "tshark-fields" { ts = $2 }
	$1 == "tcpdump" { td = $2 }
	END {
		printf "targets (smcdump -T fields):\n"
		if (ts) printf "  >= 20x tshark:        %5.1fx   %s\n", ts / sec, (ts / sec >= 20 ? "met" : "NOT met")
		else printf "  >= 20x tshark:        not measured (-n)\n"
		printf "  faster than tcpdump:  %5.2fx   %s\n", td / sec, (td > sec ? "met" : "NOT met")
		printf "  >= 2M frames/s:       %5.2fM   %s\n", fs / 1e6, (fs >= 2e6 ? "met" : "NOT met")
		printf "  <= 40 MiB peak RSS:   %5.1f    %s%s\n", rss, (rss <= 40 ? "met" : "NOT met"), (bytes < 1e9 ? " (target is for 1 GB: run with -s 1024)" : "")
	}' "$work/results"
# Each tool printed one line per frame; a short count means it stopped early.
awk -v frames="$frames" '$1 != "smcdump-text" && $4 != frames { printf "warning: %s printed %d lines for %d frames\n", $1, $4, frames; bad = 1 } END { exit bad }' "$work/results" >&2 || true
