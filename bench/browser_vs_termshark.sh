#!/usr/bin/env bash
# Side by side in one run: smcdump -I and termshark (Debian's package, which runs tshark)
# open the same capture in a 120x40 tmux pane each, one after the other, pinned to the same
# CPU. Measured from outside, as a user sees it: time until the first packet rows are on
# screen, time until the whole file is loaded (smcdump: its index; termshark: its packet
# count stops growing), and the resident memory then (smcdump; termshark plus its tshark
# children).
#   bench/browser_vs_termshark.sh [-s MiB] [-c CPU]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=200 CPU=1
while getopts s:c: o; do case $o in s) SIZE=$OPTARG ;; c) CPU=$OPTARG ;; *) exit 2 ;; esac; done
command -v tmux >/dev/null || { echo "needs tmux"; exit 2; }
command -v termshark >/dev/null || { echo "needs termshark (apt-get install termshark)"; exit 2; }
out=$(mktemp -d)
trap 'tmux -S "$out/sock" kill-server 2>/dev/null || true; rm -rf "$out"' EXIT
go build -o "$out/smcdump" ./cmd/smcdump
go run ./bench/mkbig -o "$out/big.pcap" -size "$SIZE" samples/multiconn.pcap samples/multilink.pcap samples/decline-nordma.pcap >/dev/null
frames=$(capinfos -c -M "$out/big.pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}')
echo "capture: $(du -m "$out/big.pcap" | cut -f1) MiB, $frames frames; $(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
now() { date +%s.%N; }
rss_tree() { # kB of a process and its descendants
	local total=0 p
	for p in $1 $(pgrep -P "$1" 2>/dev/null) $(for c in $(pgrep -P "$1" 2>/dev/null); do pgrep -P "$c"; done); do
		total=$((total + $(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)))
	done
	echo $total
}
run() { # name, marker of the first screen, done-test, command...
	local name=$1 marker=$2 donecheck=$3
	shift 3
	local t0 t1 t2 pane pid prev="" same=0
	t0=$(now)
	tmux -S "$out/sock" new-session -d -s b -x 120 -y 40 "taskset -c $CPU $*"
	while ! tmux -S "$out/sock" capture-pane -p -t b | grep -qF "$marker"; do sleep 0.05; done
	t1=$(now)
	pid=$(pgrep -x "$(basename "$1")" | head -1 || true)
	for _ in $(seq 1 1200); do
		pane=$(tmux -S "$out/sock" capture-pane -p -t b)
		if $donecheck "$pane" "$prev"; then same=$((same + 1)); else same=0; fi
		[ $same -ge 4 ] && break
		prev=$pane
		sleep 0.25
	done
	t2=$(now)
	printf '%-10s first screen %6.2f s   loaded %7.2f s   RSS %6d MiB\n' "$name" \
		"$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0 - 0.75" | bc)" $(( $(rss_tree "$pid") / 1024 ))
	tmux -S "$out/sock" kill-server 2>/dev/null || true
	sleep 1
}
smcdump_done() { ! grep -q 'indexing' <<<"$1"; }
termshark_done() { [ -n "$2" ] && [ "$1" = "$2" ] && ! grep -qi 'loading' <<<"$1"; }
run smcdump-I "[SYN]" smcdump_done "$out/smcdump" -I -r "$out/big.pcap"
run termshark "[SYN]" termshark_done termshark -r "$out/big.pcap"
