#!/usr/bin/env bash
# Side by side in one run: smcdump -I (on the capture as pcap, and as pcapng and pcap.gz
# with -f) and termshark (Debian's package, which runs tshark) open the same capture in a
# 120x40 tmux pane each, one after the other, pinned to the same CPU. Measured from outside,
# as a user sees it:
#   first screen  the first packet rows are on screen
#   loaded        the whole file is read: smcdump's "indexing…" is gone; termshark's
#                 progress (its percentage and <Stop> button) has come and gone
#   RSS           resident memory then (termshark with its tshark children)
#   filter        a display filter typed into the filter bar, from enter until the list is
#                 filtered (smcdump: "filtering…" gone; termshark: its progress gone again)
#   RSS filtered  resident memory after the filter
#   bench/browser_vs_termshark.sh [-s MiB] [-c CPU] [-f pcap,pcapng,pcap.gz] [-T]
# -T leaves termshark out (it needs minutes and gigabytes on a 1 GiB capture).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=200 CPU=1 FORMATS=pcap TERMSHARK=1
# A filter both languages read alike (Wireshark's SMC fields are not smcdump's): the
# connections' first SYNs, a pass over the whole file in both.
FILTER='tcp.flags.syn == 1 and tcp.flags.ack == 0'
while getopts s:c:f:T o; do
	case $o in
	s) SIZE=$OPTARG ;; c) CPU=$OPTARG ;; f) FORMATS=$OPTARG ;; T) TERMSHARK=0 ;; *) exit 2 ;;
	esac
done
command -v tmux >/dev/null || { echo "needs tmux"; exit 2; }
if [ $TERMSHARK = 1 ] && ! command -v termshark >/dev/null; then
	echo "needs termshark (apt-get install termshark), or -T to leave it out"
	exit 2
fi
out=$(mktemp -d)
trap 'tmux -S "$out/sock" kill-server 2>/dev/null || true; rm -rf "$out"' EXIT
go build -o "$out/smcdump" ./cmd/smcdump
go run ./bench/mkbig -o "$out/big.pcap" -size "$SIZE" samples/multiconn.pcap samples/multilink.pcap samples/decline-nordma.pcap 2>/dev/null
frames=$(capinfos -c -M "$out/big.pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}' || true)
for f in ${FORMATS//,/ }; do
	case $f in
	pcap) ;;
	pcapng) editcap -F pcapng "$out/big.pcap" "$out/big.pcapng" ;;
	pcap.gz) gzip -1 -c "$out/big.pcap" >"$out/big.pcap.gz" ;;
	*) echo "-f: $f: want pcap, pcapng or pcap.gz"; exit 2 ;;
	esac
done
echo "capture: $(du -m "$out/big.pcap" | cut -f1) MiB${frames:+, $frames frames}; $(date -u +%FT%TZ), $(nproc) CPUs, CPU $CPU, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "filter: $FILTER"
now() { date +%s.%N; }
pane() { tmux -S "$out/sock" capture-pane -p -t b; }
rss_tree() { # MiB of a process and its descendants
	local total=0 p
	for p in $1 $(pgrep -P "$1" 2>/dev/null) $(for c in $(pgrep -P "$1" 2>/dev/null); do pgrep -P "$c"; done); do
		total=$((total + $(awk '/VmRSS/ {print $2}' /proc/$p/status 2>/dev/null || echo 0)))
	done
	echo $((total / 1024))
}
# until TEST: poll the pane every 50 ms until TEST succeeds on it (5 min at most).
until_pane() {
	local deadline=$(($(date +%s) + 300))
	while ! "$@" "$(pane)"; do
		[ "$(date +%s)" -lt $deadline ] || { echo "timed out waiting for: $*; the pane:" >&2; pane >&2; return 1; }
		sleep 0.05
	done
}
# until_secs N TEST: like until_pane for N seconds; false when TEST never held.
until_secs() {
	local n=$1 end
	shift
	end=$(echo "$(now) + $n" | bc)
	while ! "$@" "$(pane)"; do
		[ "$(echo "$(now) < $end" | bc)" = 1 ] || return 1
		sleep 0.05
	done
}
has() { grep -qF -- "$1" <<<"$2"; }
lacks() { ! grep -qF -- "$1" <<<"$2"; }
# termshark's progress shows in its filter bar as "NN %" and a <Stop> button.
ts_busy() { grep -q '<Stop>\| [0-9]* %' <<<"$1"; }
ts_idle() { ! ts_busy "$1" && lacks 'Loading' "$1"; }
report() { # name first loaded rss filter rss-filtered
	printf '%-18s first screen %6.2f s   loaded %7.2f s   RSS %6d MiB   filter %7.2f s   RSS %6d MiB\n' "$@"
}
smcdump_run() { # file
	local t0 t1 t2 t3 pid rss
	t0=$(now)
	tmux -S "$out/sock" new-session -d -s b -x 120 -y 40 "taskset -c $CPU $out/smcdump -I -r $1"
	until_pane has "[SYN]"
	t1=$(now)
	until_pane lacks "indexing"
	t2=$(now)
	pid=$(pgrep -f "$out/smcdump -I" | head -1)
	rss=$(rss_tree "$pid")
	tmux -S "$out/sock" send-keys -t b / "$FILTER" Enter
	local t2b
	t2b=$(now)
	until_pane has "filter $FILTER,"
	until_pane lacks "filtering"
	t3=$(now)
	report "smcdump -I $(basename "$1" | sed 's/^big\.//')" "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" "$rss" \
		"$(echo "$t3 - $t2b" | bc)" "$(rss_tree "$pid")"
	tmux -S "$out/sock" kill-server 2>/dev/null || true
	sleep 1
}
termshark_run() { # file
	local t0 t1 t2 t3 t2b pid rss
	t0=$(now)
	tmux -S "$out/sock" new-session -d -s b -x 120 -y 40 "taskset -c $CPU termshark -r $1"
	until_pane has "[SYN]"
	t1=$(now)
	until_pane ts_busy # the load's progress must have started to be seen ending
	until_pane ts_idle
	t2=$(now)
	pid=$(pgrep -x termshark | head -1)
	rss=$(rss_tree "$pid")
	tmux -S "$out/sock" send-keys -t b / "$FILTER"
	until_pane has "Filter: $FILTER"
	# termshark checks a filter with tshark before it takes enter: an enter sent while the
	# check runs is dropped. Send it again each second until the filtering starts, and time
	# from the enter that started it.
	local tries=0
	while :; do
		tmux -S "$out/sock" send-keys -t b Enter
		t2b=$(now)
		if until_secs 1 ts_busy; then break; fi
		tries=$((tries + 1))
		[ $tries -lt 60 ] || { echo "termshark never started filtering; the pane:" >&2; pane >&2; return 1; }
	done
	until_pane ts_idle
	t3=$(now)
	report termshark "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t0" | bc)" "$rss" "$(echo "$t3 - $t2b" | bc)" "$(rss_tree "$pid")"
	tmux -S "$out/sock" kill-server 2>/dev/null || true
	sleep 1
}
for f in ${FORMATS//,/ }; do
	smcdump_run "$out/big.$f"
done
if [ $TERMSHARK = 1 ]; then
	termshark_run "$out/big.pcap"
fi
