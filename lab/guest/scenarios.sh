# Scenario logic of a lab guest, sourced by /init (busybox sh) with ROLE and SCEN set.
# Every scenario is: set up the node (net, rxe, UEID, PNET), then the server starts its
# listener and says LAB-READY, the client waits for the host's "go", runs its part and
# powers off; the host then tells the server "done", and the server waits for its link
# group to disappear (the client's reboot notifier sent DELETE_LINK) before reporting.
#
# The traffic is the project's smcping (server and clients); the kernel's view (UEID,
# PNET table, smc_diag, SMC netlink) is the project's smclab (package smcnl). What the
# kernel says is checked on the host against the wire (verify.sh), so neither view is
# taken on trust.

PORT=5000
SRV=10.10.0.1
SRV_TARGET=$SRV
CLI=10.10.0.2
SRV1=10.10.0.11
CLI1=10.10.0.12
SRV6=fd00:10::1
CLI6=fd00:10::2
UEID=SMC-LAB-UEID
# e2e-hsctrl: the server's handshake controller (lab/guest/hsctrl) takes the SMC option
# off the handshakes of this port.
HSCTRL_PORT=5001
HSCTRL_NAME=labnosmc5001
# The server's port for the client's first-contact connections (first_contact), apart
# from the ports whose connections the e2e tests assert.
WARM_PORT=5003
# e2e-smc's HTTP exchange over SMC-R (smclab http-serve / http-get): the application
# protocol smcdump --export-tcp hands back to Wireshark's dissectors (lab/stream_e2e_test.go).
HTTP_PORT=5080

myaddr() { if [ "$ROLE" = server ]; then echo "$1"; else echo "$2"; fi; }

# two_links: the scenario's guests have two NICs, each with its rxe device, under one
# PNET ID, so their link groups get a second link (lab/run gives them the second NIC).
two_links() { [ "$SCEN" = multilink ] || [ "$SCEN" = silent-link ]; }

# iproute2's tc (busybox's applet knows no netem; and run's timeout needs a program,
# not a function like /init's ip).
TC=/bin/iproute2-tc

# wait_for SECS WHAT CMD... runs CMD every 0.2 s until it succeeds: every step of the lab
# waits for the event it needs (a line written, a state reached, a port answering), never
# for a sleep to be long enough. SECS is counted in polls, so a slow guest waits longer,
# never less. When it passes, "DEADLINE: WHAT" is logged (verify.sh fails the scenario on
# it) and wait_for fails. wait_for_tool is the same for events of the project's tools
# (smcdump, smctop), whose failure does not make a capture untrue: "DEADLINE (tool): WHAT".
wait_for() { wait_until "DEADLINE" "$@"; }
wait_for_tool() { wait_until "DEADLINE (tool)" "$@"; }
wait_until() {
	local tag=$1 secs=$2 what=$3 polls
	shift 3
	polls=$((secs * 5))
	while ! "$@"; do
		polls=$((polls - 1))
		if [ $polls -le 0 ]; then
			log "$tag: $what (not seen in $secs s)"
			return 1
		fi
		sleep 0.2
	done
}

# exited PID: the process is gone or a zombie (kill -0 succeeds on a zombie, and busybox
# sh reaps its background children only when it waits for them).
exited() {
	local st
	st=$(cat /proc/"$1"/stat 2>/dev/null) || return 0
	st=${st##*) }
	[ "${st%% *}" = Z ]
}

# hw_counter DEV NAME prints an rxe port counter (0 when there is none).
hw_counter() { cat /sys/class/infiniband/"$1"/ports/1/hw_counters/"$2" 2>/dev/null || echo 0; }

# rxe_add creates rxe device $1 on netdev $2 and waits for its IPv4-mapped RoCEv2 GID
# (rxe fills the GID table asynchronously; a connection before that finds no device).
rxe_add() {
	rdma link add "$1" type rxe netdev "$2" || return 1
	want=$(echo "$3" | awk -F. '{printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4}')
	i=0
	while [ $i -lt 100 ]; do
		if cat /sys/class/infiniband/"$1"/ports/1/gids/* 2>/dev/null | grep -qx "$want"; then
			log "$1 on $2 has GID $want"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	log "$1: GID $want did not appear"
	return 1
}

setup_net() {
	if [ "$SCEN" = ipv6 ]; then
		echo 0 >/proc/sys/net/ipv6/conf/all/disable_ipv6
	else
		# IPv6 only adds ND/MLD noise to the captures.
		echo 1 >/proc/sys/net/ipv6/conf/all/disable_ipv6
		echo 1 >/proc/sys/net/ipv6/conf/default/disable_ipv6
	fi
	ip link set lo up
	# e2e-smcd's guest has no NIC: SMC-D over the DIBS loopback never leaves lo.
	[ "$SCEN" = e2e-smcd ] && return 0
	ip link set eth0 up
	ip addr add "$(myaddr $SRV $CLI)"/24 dev eth0
	if [ "$SCEN" = ipv6 ]; then
		ip -6 addr add "$(myaddr $SRV6 $CLI6)"/64 dev eth0 nodad
	fi
	if two_links; then
		ip link set eth1 up
		ip addr add "$(myaddr $SRV1 $CLI1)"/24 dev eth1
	fi
}

setup_smc() {
	# decline-nordma: the server has SMC but no RoCE device. e2e-smcd has none either:
	# its proposals offer SMC-D alone.
	if [ "$SCEN" = e2e-smcd ]; then
		:
	elif ! { [ "$SCEN" = decline-nordma ] || [ "$SCEN" = e2e-decline ]; } || [ "$ROLE" != server ]; then
		rxe_add rxe0 eth0 "$(myaddr $SRV $CLI)" || return 1
	fi
	if two_links; then
		rxe_add rxe1 eth1 "$(myaddr $SRV1 $CLI1)" || return 1
		for p in "eth0 rxe0" "eth1 rxe1"; do
			set -- $p
			run 10 smclab pnet add LABNET "$1" "$2" || return 1
		done
	fi
	if [ "$SCEN" = silent-link ] && [ "$ROLE" = server ]; then
		silent_setup || return 1
	fi
	case "$SCEN" in
	no-ueid) ;;
	decline-ueid) run 10 smclab ueid add "$(myaddr SMC-LAB-OTHER $UEID)" || return 1 ;;
	*) run 10 smclab ueid add $UEID || return 1 ;;
	esac
	rdma link show
	# One grep over the whole GID table: a process per entry costs seconds under TCG.
	grep -H . /sys/class/infiniband/*/ports/1/gids/* 2>/dev/null |
		grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$' |
		sed -E 's|/sys/class/infiniband/([^/]+)/ports/1/gids/([0-9]+):|GID \1[\2]=|'
	# SMC-D's devices (Linux 6.19+, drivers/dibs): the loopback "lo" of CONFIG_DIBS_LO.
	grep -H . /sys/class/dibs/*/gid 2>/dev/null | sed -E 's|/sys/class/dibs/([^/]+)/gid:|DIBS \1 gid=|'
}

# smc_scenario says whether the scenario ends with an SMC-R link group to wait for.
smc_scenario() {
	case "$SCEN" in
	fallback-nosmc | decline-nordma | decline-ueid | no-ueid | ipv6 | e2e-decline | e2e-nosmc | e2e-smcd) return 1 ;;
	esac
	return 0
}

# shift_ids makes the server's identifiers differ from the client's before the measured
# traffic: a throwaway SMC connection of the server to itself allocates QPs on its rxe0
# and alert tokens that the client never does, so QP numbers and tokens in the capture
# tell the two sides apart.
shift_ids() {
	# SMC finds no RoCE device for a connection routed over lo unless lo shares a PNET ID
	# with one; rxe then loops the RoCE traffic back inside the guest (nothing on the wire).
	if two_links; then
		run 10 smclab pnet add LABNET lo || return 1
	else
		run 10 smclab pnet add LABSELF lo rxe0 || return 1
	fi
	# A kernel with the DIBS loopback (the lab's 7.3) would make this connection SMC-D
	# over it, which allocates no QP. A PNET ID that no netdev carries takes the loopback
	# out of the proposals (smc_find_ism_v2_device_clnt, net/smc/af_smc.c, skips an ISM
	# device whose PNET ID no netdev of the namespace has) and out of what the server
	# accepts, so this connection, and every later one, is SMC-R over rxe0.
	if [ -d /sys/class/dibs/lo ]; then
		run 10 smclab pnet add LABNOSMCD - lo || return 1
	fi
	run 30 smcping "$SRV" -p $PORT -n 2 -m 16 --warmup 0 --timeout 25s || return 1
	kstate | grep -E '^(LGR|LINK|SOCK)' || true
}

# lgr_lines prints smclab's link groups and links as "LGR: id=..." and
# "LINK: lgr=... link_id=..." lines (the lab's log format, read by verify.sh and
# track/samples_test.go).
lgr_lines() {
	timeout 10 smclab lgr | sed -n -e 's/^lgr /LGR: /p' -e 's/^link lgr=\([^ ]*\) id=/LINK: lgr=\1 link_id=/p'
}

# kstate is the kernel's view in the lab's log format: SYSINFO, STATS (non-zero SMC
# counters on one line), FBSTATS, LGR, LINK, PNET and SOCK lines, all from smclab.
kstate() {
	timeout 10 smclab sysinfo | sed 's/^/SYSINFO: /'
	echo "STATS: $(timeout 10 smclab stats | grep -v '=0$' | tr '\n' ' ')"
	timeout 10 smclab fallback |
		sed -n 's/^fallback side=\([a-z]*\) code=\(0x[0-9a-f]*\) count=/FBSTATS: side=\1 reason=\2 count=/p'
	lgr_lines
	timeout 10 smclab pnet list | grep '^pnet=' | sed 's/^/PNET: /'
	timeout 10 smclab diag | sed -n 's/^socket /SOCK: /p'
}

# client_lines FIRST PREFIX < smcping-output turns smcping --diag's end-of-run lines
# ("diag conn K smc: socket state=... src=A dst=B ... fallback=R peer_diag=P token=T ...")
# into "CLIENT connN A -> B state=... mode=... reason=R peer_diag=P token=T ..." lines,
# N counted from FIRST; another PREFIX ("CLIENT bulk END") replaces "CLIENT connN".
client_lines() {
	awk -v first="$1" -v prefix="$2" '
		/^diag conn [0-9]+ [a-z]+: socket / {
			n = $3 - 1 + first
			line = $0
			sub(/^diag conn [0-9]+ [a-z]+: socket /, "", line)
			src = line; sub(/.* src=/, "", src); sub(/ .*/, "", src)
			dst = line; sub(/.* dst=/, "", dst); sub(/ .*/, "", dst)
			sub(/ fallback=/, " reason=", line)
			name = (prefix == "CLIENT") ? "CLIENT conn" n : prefix
			print name " " src " -> " dst " " line
		}'
}

# smcping_run FIRST NAME N SIZE ARGS... runs one smcping client (N round trips of SIZE bytes, no
# warm-up, the kernel's view of its connection at the end) and reports it (ping_report).
smcping_run() {
	first=$1 name=$2 n=$3 size=$4
	shift 4
	log "+ smcping $SRV_TARGET -n $n -m $size $* (> $name.out)"
	timeout 120 smcping "$SRV_TARGET" -p $PORT -n "$n" -m "$size" --warmup 0 --timeout 30s --diag "$@" \
		>/tmp/"$name".out 2>&1
	prc=$?
	ping_report "$first" "$n" "$size" "$prc" </tmp/"$name".out
	return $prc
}

# ping_report FIRST N SIZE RC < smcping-output appends the lab's lines for one smcping run
# to /out/client.log (and the console): smcping's output, CLIENT connK lines numbered from
# FIRST, "CLIENT connK n=N size=SIZE" when it succeeded, and "CLIENT RESULT".
ping_report() {
	cat >/tmp/ping.out
	{
		cat /tmp/ping.out
		client_lines "$1" CLIENT </tmp/ping.out
		k=$1
		for c in $(sed -n 's/^diag conn \([0-9]*\) .*/\1/p' /tmp/ping.out); do
			[ "$4" = 0 ] && echo "CLIENT conn$k n=$2 size=$3"
			k=$((k + 1))
		done
		f=0
		[ "$4" = 0 ] || f=1
		echo "CLIENT RESULT conns=$((k - $1)) failed=$f rc=$4"
	} | tee -a /out/client.log
}

# server_lines FILE turns the smcping server's "connection accepted" log lines into
# "SERVER accept LOCAL -> REMOTE mode=... [reason=...] [token=...]" lines.
server_lines() {
	awk '/msg="connection accepted"/ {
		r = $0; sub(/.* remote=/, "", r); sub(/ .*/, "", r)
		l = $0; sub(/.* local=/, "", l); sub(/ .*/, "", l)
		mode = "TCP"; extra = ""
		if ($0 ~ /mode="SMC-R/) mode = "SMCR"
		if ($0 ~ /mode="SMC-D/) mode = "SMCD"
		if ($0 ~ /mode="fallback /) {
			mode = "TCP-FALLBACK"; c = $0; sub(/.*mode="fallback /, "", c); sub(/ .*/, "", c); extra = " reason=" c
		}
		if ($0 ~ / token=/) { t = $0; sub(/.* token=/, "", t); sub(/ .*/, "", t); extra = extra " token=" t }
		print "SERVER accept " l " -> " r " mode=" mode extra
	}' "$@"
}

hw_counters() {
	for d in /sys/class/infiniband/*; do
		[ -d "$d"/ports/1/hw_counters ] || continue
		line=""
		for f in "$d"/ports/1/hw_counters/*; do
			line="$line $(basename "$f")=$(cat "$f")"
		done
		echo "HWCOUNTERS $(basename "$d"):$line"
	done
}

final_report() {
	{
		kstate
		hw_counters
		dmesg | grep -E 'smc|rxe|infiniband' | sed 's/^/DMESG /'
		# silent-link: the kernel's smc:smcr_link_down events (silent_setup).
		[ "$SCEN" = silent-link ] && grep -h 'smcr_link_down' "$TRACEFS"/trace 2>/dev/null | sed 's/^ */TRACE /'
	} >/out/"$ROLE".report 2>&1
	cat /out/"$ROLE".report
}

server_main() {
	# smcping is the server: AF_SMC on PORT (e2e: plus the TCP baseline on PORT+1, for
	# --compare tcp); a plain TCP server for fallback-nosmc; [::] for ipv6.
	case "$SCEN" in
	fallback-nosmc | e2e-nosmc) srvargs="--tcp --tcp-port 0" ;;
	ipv6) srvargs="--listen :: --tcp-port 0" ;;
	e2e-ipproto) srvargs="--proto ipproto --tcp-port 0" ;;
	# The controller must be in place before the listeners see a SYN.
	e2e-hsctrl) hsctrl_load || return 1; srvargs="--tcp-port 0" ;;
	e2e-*) srvargs="" ;;
	*) srvargs="--tcp-port 0" ;;
	esac
	# shellcheck disable=SC2086
	smcping -s -p $PORT --idle 120s $srvargs >>/out/smcping-server.txt 2>&1 &
	srv=$!
	if [ "$SCEN" = bench-sockperf ]; then
		bench_server_start || return 1
	fi
	case "$SCEN" in
	e2e-smc | e2e-decline | e2e-nosmc)
		# shellcheck disable=SC2086
		smcping -s -p $OBS_PORT $(echo "$srvargs" | grep -o -- --tcp) --tcp-port 0 --idle 120s >>/out/smcping-obs.txt 2>&1 &
		obs_srv=$!
		server_observe &
		;;
	esac
	if [ "$SCEN" = e2e-hsctrl ]; then
		smcping -s -p $HSCTRL_PORT --tcp-port 0 --idle 120s >>/out/smcping-nosmc.txt 2>&1 &
		wait_for 30 "the smcping server listening on $HSCTRL_PORT" grep -q 'msg=listening' /out/smcping-nosmc.txt
	fi
	case "$SCEN" in
	e2e-smc | e2e-ipproto | e2e-hsctrl)
		smcping -s -p $WARM_PORT --tcp-port 0 --idle 120s >>/out/smcping-warm.txt 2>&1 &
		wait_for 30 "the smcping server listening on $WARM_PORT" grep -q 'msg=listening' /out/smcping-warm.txt
		;;
	esac
	if [ "$SCEN" = e2e-smc ] && [ -x /bin/smclab ]; then
		smclab http-serve -port $HTTP_PORT -once -wait 600s >/out/http-serve.txt 2>&1 &
		wait_for 30 "the HTTP server listening on $HTTP_PORT" grep -q 'listening' /out/http-serve.txt
	fi
	# The throwaway connections of shift_ids need the listener; it is the real one.
	wait_for 30 "the smcping server listening on $PORT" grep -q 'msg=listening' /out/smcping-server.txt
	if smc_scenario && [ "$SHIFT_IDS" != 0 ]; then
		shift_ids || log "shift_ids failed"
	fi
	if [ "$SCEN" = e2e-hsctrl ] && [ -x /bin/smctop ]; then
		# smctop's settings: net.smc.hs_ctrl names the controller.
		timeout 20 smctop --once -o json --interval 1s >/out/smctop1.json 2>/out/smctop1.err
	fi
	nbase=$(lgr_lines | grep -c '^LGR:')
	if [ "$SCEN" = slow-reader ]; then
		slow_server_start || return 1
	fi
	log "LAB-READY (link groups before the client: $nbase)"
	wait_host done || return 1
	[ "$SCEN" = e2e-ipproto ] && record_out done
	if smc_scenario; then
		run 60 smclab wait-lgr-gone -keep "$nbase" 50 || return 1
	fi
	server_lines /out/smcping-server.txt | tee -a /out/server.log
	[ "$SCEN" = e2e-hsctrl ] && server_lines /out/smcping-nosmc.txt | tee -a /out/server.log
	[ "$SCEN" = slow-reader ] && slow_server_report
	[ "$SCEN" = bench-sockperf ] && bench_server_report
	final_report
	return 0
}

# --- bench-sockperf: smcping against sockperf on the same SMC-R path ---------------------
# sockperf (Debian's) runs with lab/guest/smcpreload as LD_PRELOAD: its TCP sockets are
# AF_SMC ones, as smc-tools' smc_run makes them. Each round runs every size once, sockperf
# and smcping back to back in alternating order (sockperf first in odd rounds), each for
# BENCH_SECS: the two runs of a pair see the same state of the guests. The client writes
# one line per run; the host compares (verify.sh verify_bench).
#
# CPU time, the same way for both tools (clock ticks of 1/100 s, user + system, the
# process's threads included; /proc/PID/stat fields 14 and 15, which the kernel scales to
# the process's exact run time, kernel/sched/cputime.c cputime_adjust):
#   client: from the moment the client process has a socket open (bench_run polls for it:
#     exec, dynamic linking or the Go runtime's start, option parsing are before) to its
#     exit (busybox time's rusage of it): its connect, every round trip, its close and
#     report.
#   server: the server process's CPU time just before the client starts and just after it
#     has exited (asked over BENCH_CTL_PORT, outside the run): the connection's accept,
#     every round trip and its close, but not the server's idle time between runs.
# Round trips: smcping's n (--warmup 0: every ping is a sample); sockperf's [Total Run]
# ReceivedMessages, its 400 ms warm-up and 50 ms cool-down included (sockperf's
# TEST_START_WARMUP_MSEC and TEST_END_COOLDOWN_MSEC in defs.h), which its percentiles leave
# out but which its CPU time holds.
BENCH_PORT=11111
BENCH_CTL_PORT=11112
BENCH_ROUNDS=${BENCH_ROUNDS:-7}
BENCH_SECS=5
BENCH_SIZES="64 1024 16384"

# listening PORT: a TCP listener on PORT (an AF_SMC listener's TCP socket is one too), IPv4
# or IPv6 (busybox nc listens on [::]).
listening() { grep -q "^ *[0-9]*: [0-9A-F]*:$(printf '%04X' "$1") [0-9A-F]*:0000 0A " /proc/net/tcp /proc/net/tcp6; }

# cpu_ticks PID: user + system clock ticks of a process (/proc/PID/stat, fields 14, 15).
cpu_ticks() { awk '{ print $14 + $15 }' /proc/"$1"/stat 2>/dev/null || echo -; }

bench_server_start() {
	[ -x /bin/sockperf ] && [ -e /lib/smcpreload.so ] ||
		{ log "bench-sockperf needs sockperf on the host (apt-get install sockperf) and the shim"; return 1; }
	LD_PRELOAD=/lib/smcpreload.so sockperf server --tcp -i 0.0.0.0 -p $BENCH_PORT >/out/sockperf-server.txt 2>&1 &
	bench_sp=$!
	wait_for 30 "sockperf listening on $BENCH_PORT" listening $BENCH_PORT || return 1
	# The client's question before and after each run: both servers' CPU ticks, one line,
	# and smcping's per thread (TID:ticks:voluntary:involuntary context switches), which
	# tells the measuring thread from the Go runtime's. busybox nc forks the script per
	# connection; its CPU is not the servers'.
	cat >/tmp/benchcpu.sh <<-EOS
		#!/bin/sh
		t=""
		for d in /proc/$srv/task/*; do
			t="\$t\${d##*/}:\$(awk '{ print \$14 + \$15 }' \$d/stat):\$(awk '/^voluntary_ctxt/ { v = \$2 } /^nonvoluntary_ctxt/ { n = \$2 } END { print v ":" n }' \$d/status),"
		done
		echo "sockperf=\$(awk '{ print \$14 + \$15 }' /proc/$bench_sp/stat) smcping=\$(awk '{ print \$14 + \$15 }' /proc/$srv/stat) smcping_threads=\$t"
	EOS
	chmod +x /tmp/benchcpu.sh
	nc -ll -p $BENCH_CTL_PORT -e /tmp/benchcpu.sh >/dev/null 2>&1 &
	wait_for 30 "the CPU question answered on $BENCH_CTL_PORT" listening $BENCH_CTL_PORT
}

bench_server_report() {
	echo "BENCH server sockperf cpu_ticks=$(cpu_ticks "$bench_sp") smcping cpu_ticks=$(cpu_ticks "$srv") hz=100" | tee -a /out/server.log
}

# server_cpu: the server guest's answer (bench_server_start); server_val LINE KEY: a value of it.
server_cpu() { timeout 20 nc $SRV $BENCH_CTL_PORT </dev/null 2>/dev/null; }
server_val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# has_socket PID: the process has a socket open (test -S sees through /proc's fd links).
has_socket() {
	for f in /proc/"$1"/fd/*; do
		[ -S "$f" ] && return 0
	done
	return 1
}

# zombie PID: exited, as exited says, with shell built-ins only (for a busy poll).
zombie() {
	local st
	read -r st 2>/dev/null </proc/"$1"/stat || return 0
	st=${st##*) }
	[ "${st%% *}" = Z ]
}

# bench_run ROUND SIZE TOOL appends one BENCH line: the run's p50 round trip (usec), its
# round trips, the client's and the server's CPU ticks over the run (see above).
bench_run() {
	case $3 in
	sockperf) cmd="exec env LD_PRELOAD=/lib/smcpreload.so sockperf ping-pong --tcp -i $SRV -p $BENCH_PORT -m $2 -t $BENCH_SECS --full-rtt" ;;
	smcping) cmd="exec smcping $SRV -p $PORT -m $2 -t ${BENCH_SECS}s --warmup 0 --timeout 30s" ;;
	esac
	rm -f /tmp/bench.pid /tmp/bench.time
	l0=$(server_cpu)
	# sh writes its PID and becomes the client (exec keeps the PID), under busybox time.
	timeout 60 time -v -o /tmp/bench.time sh -c "echo \$\$ >/tmp/bench.pid; $cmd" >/tmp/bench.out 2>&1 &
	tp=$!
	# A busy poll of shell built-ins only, no sleep and no fork: the client connects within
	# a few scheduler slices of opening its socket, and no round trip can come before it.
	pid="" a=""
	while [ -z "$a" ] && ! zombie "$tp"; do
		[ -z "$pid" ] && [ -s /tmp/bench.pid ] && read -r pid </tmp/bench.pid
		[ -n "$pid" ] && has_socket "$pid" && a=$(cpu_ticks "$pid")
	done
	wait "$tp"
	l1=$(server_cpu)
	s0=$(server_val "$l0" "$3") s1=$(server_val "$l1" "$3")
	case $3 in
	sockperf)
		p50=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' /tmp/bench.out | head -1)
		n=$(sed -n 's/.*\[Total Run\].*ReceivedMessages=\([0-9]*\).*/\1/p' /tmp/bench.out | head -1)
		;;
	smcping)
		# The first row under "RTT (round trip)": size proto mode n min mean stddev p50 ...
		row=$(sed -n '/^RTT (round trip)/,/^$/p' /tmp/bench.out | awk '$1 ~ /^[0-9]+$/ { print; exit }')
		p50=$(echo "$row" | awk '{ print $8 }')
		n=$(echo "$row" | awk '{ print $4 }')
		;;
	esac
	user=$(sed -n 's/.*User time (seconds): *//p' /tmp/bench.time)
	sys=$(sed -n 's/.*System time (seconds): *//p' /tmp/bench.time)
	cli="" srvt=""
	[ -n "$a" ] && [ -n "$user" ] && [ -n "$sys" ] && cli=$(awk -v u="$user" -v s="$sys" -v a="$a" 'BEGIN { printf "%d", (u + s) * 100 + 0.5 - a }')
	[ -n "$s0" ] && [ -n "$s1" ] && srvt=$((s1 - s0))
	echo "BENCH round=$1 size=$2 tool=$3 p50_us=${p50:-none} rtts=${n:-none} cli_ticks=${cli:-none} start_ticks=${a:-none} srv_ticks=${srvt:-none}" | tee -a /out/client.log
	[ "$3" = smcping ] && echo "BENCH threads round=$1 size=$2 before=$(server_val "$l0" smcping_threads) after=$(server_val "$l1" smcping_threads)" >>/out/client.log
	[ -n "$p50" ] && [ -n "$n" ] || { cat /tmp/bench.out; return 1; }
}

bench_client() {
	echo "BENCH env clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null) cpus=$(nproc)" | tee -a /out/client.log
	# sockperf on SMC-R, not fallen back to TCP: its socket in smc_diag while it runs.
	LD_PRELOAD=/lib/smcpreload.so sockperf ping-pong --tcp -i $SRV -p $BENCH_PORT -m 64 -t 3 >/tmp/check.out 2>&1 &
	chk=$!
	wait_for 30 "sockperf's connection in smc_diag as SMC-R" sh -c "smclab diag | grep 'dst=$SRV:$BENCH_PORT' | grep -q 'mode=SMCR'" || return 1
	smclab diag | grep "dst=$SRV:$BENCH_PORT" | sed 's/^/BENCH check /' | tee -a /out/client.log
	wait "$chk"
	for round in $(seq 1 "$BENCH_ROUNDS"); do
		for size in $BENCH_SIZES; do
			if [ $((round % 2)) = 1 ]; then
				bench_run "$round" "$size" sockperf || return 1
				bench_run "$round" "$size" smcping || return 1
			else
				bench_run "$round" "$size" smcping || return 1
				bench_run "$round" "$size" sockperf || return 1
			fi
		done
	done
}

# hsctrl_load registers the lab's handshake controller (lab/guest/hsctrl, built by prep.sh
# for this kernel) and selects it for this netns (net.smc.hs_ctrl): from then on the
# server's SYN-ACKs on HSCTRL_PORT carry no SMC option. bpftool registers the struct_ops
# map without a bpf link, which is what smc_hs_ctrl takes (net/smc/smc_hs_bpf.c), and
# leaves it registered when it exits.
hsctrl_load() {
	if [ ! -e /lab/hsctrl.bpf.o ]; then
		log "no handshake controller in the initramfs: $(cat /lab/hsctrl.missing 2>/dev/null)"
		return 1
	fi
	run 60 bpftool struct_ops register /lab/hsctrl.bpf.o || return 1
	if ! echo $HSCTRL_NAME >/proc/sys/net/smc/hs_ctrl; then
		log "net.smc.hs_ctrl did not take $HSCTRL_NAME"
		return 1
	fi
	{
		echo "hs_ctrl=$(cat /proc/sys/net/smc/hs_ctrl)"
		bpftool struct_ops list
	} >/out/hsctrl.txt 2>&1
	cat /out/hsctrl.txt
	[ "$(cat /proc/sys/net/smc/hs_ctrl)" = $HSCTRL_NAME ]
}

client_main() {
	log "LAB-CLIENT-READY"
	wait_host go || return 1
	rc=0
	case "$SCEN" in
	pingpong | teardown)
		smcping_run 0 pp 500 64 --digest || rc=$?
		;;
	multiconn)
		multiconn_client || rc=$?
		;;
	long)
		# 64 KiB RMBEs: 3000 x 64 B wraps the cursors; a 1 MiB one-way stream (16 messages
		# of 64 KiB) on a second connection gives multi-packet WRITEs.
		smcping_run 0 pp 3000 64 --digest || rc=$?
		bulk_client || rc=$?
		;;
	multilink)
		multilink_client || rc=$?
		;;
	bench-sockperf)
		bench_client || rc=$?
		;;
	slow-reader)
		# A one-way stream of 4 x 64 KiB into the server's slow reader (slow_server_start).
		smcping_run 0 slow 4 65536 --bw --digest || rc=$?
		# The client stays up until the server has closed its side too, or its power-off
		# (which ends the link group) would abort the connection: the connection leaves
		# the client's link group once both sides closed (smc_diag lists the client's
		# socket no more as soon as smcping closed it).
		wait_for 30 "the slow reader closing its side (no connection left in the link group)" lgr_conns 0
		;;
	lossy)
		lossy_client || rc=$?
		;;
	erspan)
		erspan_client || rc=$?
		;;
	silent-link)
		silent_client || rc=$?
		;;
	e2e-ipproto)
		ipproto_client || rc=$?
		;;
	e2e-smcd)
		smcd_client || rc=$?
		;;
	e2e-hsctrl)
		hsctrl_client || rc=$?
		;;
	e2e-*)
		e2e_client || rc=$?
		;;
	ipv6)
		SRV_TARGET=$SRV6
		smcping_run 0 pp 20 64 || rc=$?
		;;
	*)
		smcping_run 0 pp 20 64 || rc=$?
		;;
	esac
	final_report
	if [ "$SCEN" = teardown ]; then
		# Unloading SMC terminates the (idle) link group: DELETE_LINK(all) while both run.
		# The client stays up until rxe0 has sent it and received the server's answer.
		sent=$(hw_counter rxe0 sent_pkts) rcvd=$(hw_counter rxe0 rcvd_pkts)
		run 20 rmmod smc_diag smc || rc=$?
		wait_for 20 "rxe0 sending the DELETE_LINK and receiving the server's answer" \
			counters_past rxe0 "$sent" "$rcvd"
	fi
	return $rc
}

# multiconn_client: 4 smcping clients with their own counts and sizes, so the numbers
# differ per connection; each starts once the one before is connected, so the first makes
# the link group (first contact) and the other three join it while it runs.
multiconn_client() {
	pids="" k=0
	for cfg in "300 64" "200 1000" "120 4096" "80 200"; do
		set -- $cfg
		smcping "$SRV" -p $PORT -n "$1" -m "$2" --warmup 0 --timeout 30s --diag --digest >/tmp/mc$k.out 2>&1 &
		pids="$pids $!"
		wait_conns /tmp/mc$k.out 1
		k=$((k + 1))
	done
	mrc=0 k=0
	for cfg in "300 64" "200 1000" "120 4096" "80 200"; do
		set -- $cfg
		p=$(echo $pids | cut -d' ' -f$((k + 1)))
		wait "$p"
		prc=$?
		[ $prc = 0 ] || mrc=$prc
		ping_report $k "$1" "$2" $prc </tmp/mc$k.out
		k=$((k + 1))
	done
	return $mrc
}

# counters_past DEV SENT RCVD: rxe port DEV has sent more than SENT and received more
# than RCVD packets.
counters_past() { [ "$(hw_counter "$1" sent_pkts)" -gt "$2" ] && [ "$(hw_counter "$1" rcvd_pkts)" -gt "$3" ]; }

# count_lines FILE PATTERN prints how many lines of FILE match, 0 while FILE does not
# exist yet (grep -c on a missing file prints nothing, and an empty count would end a
# waiting loop at once).
count_lines() { cat "$1" 2>/dev/null | grep -c "$2"; }

# has_lines FILE PATTERN N: at least N lines of FILE match.
has_lines() { [ "$(count_lines "$1" "$2")" -ge "$3" ]; }

# wait_conns FILE N waits until smcping has printed the proofs of N connections (its
# "conn K ..." header lines): they are established.
wait_conns() { wait_for 30 "$2 connection proof(s) in $1" has_lines "$1" '^conn [0-9]' "$2"; }

# bulk_client: a one-way stream of 16 x 64 KiB, reported as "CLIENT bulk END ... bytes=".
bulk_client() {
	log "+ smcping $SRV --bw -n 16 -m 65536"
	timeout 120 smcping "$SRV" -p $PORT --bw -n 16 -m 65536 --warmup 0 --timeout 30s --diag --digest >/tmp/bulk.out 2>&1
	brc=$?
	{
		cat /tmp/bulk.out
		client_lines 0 "CLIENT bulk END" </tmp/bulk.out | sed "s/\$/ bytes=$((16 * 65536)) rc=$brc/"
	} | tee -a /out/client.log
	return $brc
}

# multilink_client: two links (eth0/rxe0, eth1/rxe1, one PNET ID), two paced smcping
# clients (a ping every 20 ms), one connection on each link; eth1 goes down while both
# connections are idle, the link group fails over to link 1, traffic resumes, and a new
# connection is made. Idle is made by stopping both smcping processes (SIGSTOP) and
# waiting until every ping they sent has been answered (traffic in flight on the dying
# link stalled 1 of 2 runs). SIGCONT resumes them; paced pings then catch up back to back.
# Each client is stopped as soon as it has pinged, so neither can finish its pings before
# the failover however slow the guest is. smctop, when present, streams snapshots from
# before eth1 goes down until it has shown the failover.
multilink_client() {
	smcping "$SRV" -p $PORT -n 300 -m 64 -i 20ms --warmup 0 --timeout 30s --diag --digest >/tmp/ml0.out 2>&1 &
	p0=$!
	wait_conns /tmp/ml0.out 1 || return 1
	port0=$(local_port /tmp/ml0.out)
	stop_when_pinged "$p0" "$port0" 0 || return 1
	# The server puts every second connection of a link group on its next active link:
	# with both links up, the second client's connection is the one on rxe1.
	wait_for 60 "two ACTIVE links in the link group" links_active 2 || return 1
	smcping "$SRV" -p $PORT -n 200 -m 512 -i 20ms --warmup 0 --timeout 30s --diag --digest >/tmp/ml1.out 2>&1 &
	p1=$!
	wait_conns /tmp/ml1.out 1 || return 1
	port1=$(local_port /tmp/ml1.out)
	stop_when_pinged "$p1" "$port1" 1 || return 1
	log "smcping clients stopped"
	wait_for 30 "both connections idle (every ping answered)" conns_are idle "$port0" "$port1"
	if [ -x /bin/smctop ]; then
		# Ended by SIGINT once it has shown the failover; the count only bounds it.
		smctop --count 100000 --interval 500ms -o jsonl >/out/smctop-stream.jsonl 2>/out/smctop-stream.err &
		st=$!
		smctop_shows 60 "both links active" -links 2
	fi
	lgr_lines | sed 's/^/BEFORE-FAILOVER /' | tee -a /out/client.log
	log "eth1 down"
	ip link set eth1 down
	# The snapshot that shows the failover is the one logged.
	wait_for 60 "one link left after eth1 went down" failed_over
	log "links after eth1 down: $(grep '^LINK:' /tmp/after | grep -cv ' state=ACTIVATING ')"
	sed 's/^/AFTER-FAILOVER /' /tmp/after | tee -a /out/client.log
	kill -CONT $p0 $p1
	log "smcping clients continued"
	if [ -n "${st:-}" ]; then
		smctop_shows 60 "the failover: one active link, the tracepoint's link-down and the failover" \
			-links 1 -event link-down/tracepoint -event failover
		kill -INT $st
		wait $st
		log "smctop stream ended, rc=$?"
	fi
	wait $p0
	rc0=$?
	wait $p1
	rc1=$?
	ping_report 0 300 64 $rc0 </tmp/ml0.out
	ping_report 1 200 512 $rc1 </tmp/ml1.out
	rc=0
	{ [ $rc0 = 0 ] && [ $rc1 = 0 ]; } || rc=1
	# After the failover the server tries a second, asymmetric link on the remaining
	# device; a connection made while it is ACTIVATING waits for it (or times out under
	# load), so the new connection waits until the link group settled.
	wait_for 60 "the link group settled (no INACTIVE or ACTIVATING link)" settled
	lgr_lines | sed 's/^/SETTLED /' | tee -a /out/client.log
	smcping_run 0 new 50 128 --digest || rc=$?
	return $rc
}

# local_port FILE prints the local port of the connection whose proof smcping printed
# ("conn 1 smc 10.10.0.2:PORT -> ...").
local_port() { sed -n 's/^conn 1 [a-z]* [0-9.]*:\([0-9]*\) -> .*/\1/p' "$1" | head -1; }

# stop_when_pinged PID PORT K stops smcping client K (SIGSTOP) once its connection from
# PORT has sent data; it fails, saying so, when the client ended first.
stop_when_pinged() {
	wait_for 30 "client $3's first ping" conns_are moved "$2" || return 1
	if ! kill -STOP "$1" 2>/dev/null || exited "$1"; then
		log "DEADLINE: smcping client $3 ended before it could be stopped"
		return 1
	fi
}

# links_active N: the client's link groups have N links in state ACTIVE.
links_active() { [ "$(lgr_lines | grep '^LINK:' | grep -c ' state=ACTIVE ')" = "$1" ]; }

# failed_over: one link is left (in /tmp/after). Right after the failover the server
# starts a new, asymmetric link on the remaining device (ACTIVATING): that is not a
# survivor of the failover, so it is not counted.
failed_over() {
	lgr_lines >/tmp/after
	[ "$(grep '^LINK:' /tmp/after | grep -cv ' state=ACTIVATING ')" = 1 ]
}

# settled: no link of the client's link groups is INACTIVE or ACTIVATING.
settled() {
	lgr_lines >/tmp/lgr || return 1
	! grep -qE '^LINK:.* state=(INACTIVE|ACTIVATING) ' /tmp/lgr
}

# ---- slow-reader: the server reads little and late ----
# smclab's slow reader takes one connection and reads at most SLOW_CHUNK bytes per read,
# each after a pause of SLOW_PAUSE: the client's one-way stream fills the server's
# 64 KiB RMBE at once and again after every read, so its CDCs say write-blocked and the
# RMBE stays full for the pause, well beyond the tracker's 500 ms (track.stallAfter).
SLOW_CHUNK=16384
SLOW_PAUSE=1s

# lgr_conns N: the guest's link groups hold N connections in all.
lgr_conns() {
	lgr_lines >/tmp/lgr || return 1
	[ "$(sed -n 's/^LGR: .* conns=\([0-9]*\) .*/\1/p' /tmp/lgr | awk '{n += $1} END {print n + 0}')" = "$1" ]
}

# slow_server_start (server) replaces the smcping server on PORT, which shift_ids needed,
# with smclab's slow reader, and waits until it listens.
slow_server_start() {
	kill -INT "$srv" 2>/dev/null
	wait "$srv"
	smclab slow-reader -port $PORT -chunk $SLOW_CHUNK -pause $SLOW_PAUSE -wait 200s >/out/slow-reader.txt 2>&1 &
	slow=$!
	wait_for 30 "the slow reader listening on $PORT" grep -q '^slow-reader listening' /out/slow-reader.txt
}

# slow_server_report (server) waits for the slow reader to finish and logs what it said
# (the kernel's view of its socket at the end of every pause: cursors, and the flags of
# the client's last CDC), with its connection as a "SERVER accept" line (server_lines).
slow_server_report() {
	wait_for 60 "the slow reader done" exited "$slow"
	wait "$slow"
	echo "slow-reader rc=$?" >>/out/slow-reader.txt
	cat /out/slow-reader.txt >>/out/server.log
	sed -n 's/^slow-reader diag accept: socket .* mode=\([A-Z-]*\) .* src=\([^ ]*\) dst=\([^ ]*\) .* token=\([^ ]*\) .*/SERVER accept \2 -> \3 mode=\1 token=\4/p' \
		/out/slow-reader.txt | tee -a /out/server.log
}

# ---- lossy: loss and reordering on the client's RoCE path ----
# netem on the client's eth0, the netdev under rxe0: frames the client sends are dropped
# (2 %) or leave out of order (5 % go at once, the others 1 ms late) before they reach
# the wire, so the capture on the server's NIC shows the client's RC requests with PSN
# gaps, the server's NAKs (PSN sequence error) and the client's retransmissions, and the
# server's requests sent again when the client's ACK was lost.
LOSSY_NETEM="loss 2% delay 1ms reorder 5%"

# lossy_client: a short ping-pong makes the link group over a clean path; netem then
# impairs the path for a one-way stream of 8 x 64 KiB only, and is removed before the
# close. The rxe counters before and after, and netem's own drop count, are logged.
lossy_client() {
	local lrc=0
	smcping_run 0 pp 20 64 --digest || return 1
	hw_counters | sed 's/^/BEFORE-NETEM /' | tee -a /out/client.log
	# shellcheck disable=SC2086
	run 10 $TC qdisc add dev eth0 root netem $LOSSY_NETEM || return 1
	smcping_run 1 bulk 8 65536 --bw --digest || lrc=1
	run 10 $TC -s qdisc show dev eth0
	sed -n 's/.*(dropped \([0-9]*\),.*/NETEM dropped=\1/p' /tmp/run.out | head -1 | tee -a /out/client.log
	run 10 $TC qdisc del dev eth0 root || lrc=1
	hw_counters | sed 's/^/AFTER-NETEM /' | tee -a /out/client.log
	return $lrc
}

# ---- erspan: the client's frames mirrored by an ERSPAN session ----
# Linux's own ERSPAN type II (erspan_ver 1) session ERSPAN_KEY from the client to the
# server's address: tc's mirred copies every TCP and UDP frame the client's eth0 sends or
# receives into ers0, which numbers each (the GRE sequence number, __gre_xmit in
# net/ipv4/ip_gre.c) and sends it out of eth0 to the server, which drops it. The capture
# holds every frame twice, as the hosts sent it and as a collector behind the session
# would receive it (the GRE frames alone; the server answers some with an ICMP error that
# quotes them). The mirror stops before the counters are read,
# so ers0's count is every number the session used.
ERSPAN_KEY=7
erspan_client() {
	local erc=0 dir proto m
	# prep.sh keeps these out of /lib/modules/order (ip_gre makes fallback devices).
	for m in $(cat /lib/modules/order-erspan 2>/dev/null); do
		insmod /lib/modules/"$m" || log "insmod $m failed"
	done
	run 10 /bin/iproute2-ip link add ers0 type erspan seq key $ERSPAN_KEY local $CLI remote $SRV erspan_ver 1 erspan 3 || return 1
	run 10 /bin/iproute2-ip link set ers0 up || return 1
	run 10 $TC qdisc add dev eth0 clsact || return 1
	for dir in ingress egress; do
		for proto in 6 17; do
			run 10 $TC filter add dev eth0 $dir protocol ip u32 match ip protocol $proto 0xff \
				action mirred egress mirror dev ers0 || return 1
		done
	done
	smcping_run 0 pp 20 64 --digest || erc=1
	run 10 $TC -s filter show dev eth0 egress
	run 10 $TC qdisc del dev eth0 clsact || erc=1
	echo "ERSPAN tx_packets=$(cat /sys/class/net/ers0/statistics/tx_packets) tx_dropped=$(cat /sys/class/net/ers0/statistics/tx_dropped) key=$ERSPAN_KEY" |
		tee -a /out/client.log
	return $erc
}

# ---- silent-link: the peer stops answering on one link ----
# Two links (as multilink). Once both are ACTIVE, the client's eth1 (rxe1's netdev)
# drops every frame it would send (netem loss 100 %): the client still receives on link
# 2 but neither answers nor acknowledges. The server's TEST_LINK on the idle link 2 goes
# unanswered (its RC SEND is retransmitted until the retry count is spent), the server
# takes link 2 down and deletes it over link 1 (DELETE_LINK, lost path). TEST_LINK
# comes after net.smc.smcr_testlink_time of silence on a link (30 s by default); the
# scenario sets it to SILENT_TESTLINK seconds on the server before any link exists (a
# link takes the value when it becomes active, smc_llc_link_active). The client keeps
# the default, so the server is the one that tests and finds out (with both at 3 s
# either side's timer could fire first, and a client that gave up first would delete
# link 2 before the server ever tested it).
SILENT_TESTLINK=3
TRACEFS=/sys/kernel/tracing

# silent_setup: the testlink time, and the kernel's smc:smcr_link_down tracepoint on,
# whose events (the link's device and state) go into the report.
silent_setup() {
	if ! echo $SILENT_TESTLINK >/proc/sys/net/smc/smcr_testlink_time; then
		log "net.smc.smcr_testlink_time cannot be set"
		return 1
	fi
	log "net.smc.smcr_testlink_time=$(cat /proc/sys/net/smc/smcr_testlink_time)"
	echo 1 >"$TRACEFS"/events/smc/smcr_link_down/enable 2>/dev/null ||
		log "no smc:smcr_link_down tracepoint"
}

# one_link: the client's link groups have one link that is not ACTIVATING (a link the
# server starts after the deletion is not a survivor); the view is left in /tmp/after.
one_link() { failed_over; }

silent_client() {
	local slrc=0
	smcping_run 0 pp 20 64 || return 1
	wait_for 60 "two ACTIVE links in the link group" links_active 2 || return 1
	lgr_lines | sed 's/^/BEFORE-SILENCE /' | tee -a /out/client.log
	hw_counters | sed 's/^/BEFORE-SILENCE /' | tee -a /out/client.log
	run 10 $TC qdisc add dev eth1 root netem loss 100% || return 1
	log "eth1 silent (netem loss 100 %)"
	wait_for 90 "the server deleting link 2 after its unanswered TEST_LINK" one_link || return 1
	sed 's/^/AFTER-SILENCE /' /tmp/after | tee -a /out/client.log
	# The server then tries a new link over eth1 again; the client's answers on it are
	# dropped too, so it fails: the group settles on link 1.
	wait_for 60 "the link group settled (no INACTIVE or ACTIVATING link)" settled || return 1
	lgr_lines | sed 's/^/SETTLED /' | tee -a /out/client.log
	smcping_run 1 new 20 64 || slrc=1
	run 10 $TC -s qdisc show dev eth1
	sed -n 's/.*(dropped \([0-9]*\),.*/NETEM dropped=\1/p' /tmp/run.out | head -1 | tee -a /out/client.log
	return $slrc
}

# conns_are moved|idle PORT... looks at the client's connections from these local ports
# in smc_diag (cursors are wrap/count, counted in bytes with the buffer they point into:
# tx_prep and tx_fin in the send buffer, tx_prod in the peer's RMBE, rx_prod in ours).
#   moved: the connection has sent data;
#   idle:  no ping in flight: all it prepared was written and announced (tx_prep = tx_fin
#          = tx_prod), and every byte came back (rx_prod = tx_prod: smcping's server echoes
#          byte for byte).
conns_are() {
	local what=$1 p
	shift
	timeout 10 smclab diag >/tmp/diag.txt || return 1
	for p in "$@"; do
		awk -v src="$CLI:$p" -v what="$what" '
			function bytes(cur, size,   a) { split(cur, a, "/"); return a[1] * size + a[2] }
			index($0, " src=" src " ") {
				for (i = 1; i <= NF; i++) {
					n = index($i, "=")
					if (n) f[substr($i, 1, n - 1)] = substr($i, n + 1)
				}
				sent = bytes(f["tx_prod"], f["peer_rmbe"])
				if (what == "moved")
					ok = sent > 0
				else
					ok = bytes(f["tx_prep"], f["sndbuf"]) == bytes(f["tx_fin"], f["sndbuf"]) &&
						bytes(f["tx_fin"], f["sndbuf"]) == sent && bytes(f["rx_prod"], f["rmbe"]) == sent
				found = 1
			}
			END { exit !(found && ok) }' /tmp/diag.txt || return 1
	done
}

# smctop_shows SECS WHAT ARGS... waits until smctop's stream has a snapshot that shows
# ARGS (smclab wait-smctop); it stops waiting when smctop has exited.
smctop_shows() {
	local secs=$1 what=$2
	shift 2
	timeout $((secs + 10)) smclab wait-smctop /out/smctop-stream.jsonl "$secs" -pid "$st" "$@" >/tmp/wait.out 2>&1
	local wrc=$?
	cat /tmp/wait.out
	[ $wrc = 0 ] || log "DEADLINE (tool): smctop snapshot with $what ($(tail -1 /tmp/wait.out))"
	return $wrc
}

# step NAME CMD... runs one step of an e2e scenario: output in /out/NAME.txt, exit status
# as "STEP NAME rc=N" in /out/e2e.txt. A non-zero status is a result here, not an error.
step() {
	name=$1
	shift
	log "+ $* (> $name.txt)"
	timeout 100 "$@" >/out/"$name".txt 2>&1
	src=$?
	echo "STEP $name rc=$src" >>/out/e2e.txt
	cat /out/"$name".txt
	log "$name rc=$src"
}

# e2e_client runs the project's binaries against the kernel: smcping's mode proof and exit
# codes, smcdump's live capture on eth0 (compared on the host with the filter-dump capture
# of the same wire), smclab's view of the kernel (compared with the wire on the host).
# first_contact makes the client's SMC-R link group with throwaway connections to the
# server's WARM_PORT before the steps whose results are asserted, which then reuse it.
# The first connection of a link group must confirm its first link over RoCE within the
# kernel's fixed SMC_LLC_WAIT_TIME, 2 s (smcr_serv_conf_first_link, net/smc/af_smc.c); a
# TCG guest on a loaded host can miss it (seen on 7.3 with two CPU hogs), and that
# connection falls back with TIMEOUT_CL (0x02010000). So the lab waits for the event it
# needs, an ACTIVE link, connecting again until it comes, at most five times.
first_contact() {
	local k=0
	while ! lgr_lines | grep -q '^LINK: .* state=ACTIVE '; do
		if [ $k -ge 5 ]; then
			log "DEADLINE: an ACTIVE link after $k first-contact connections to $WARM_PORT"
			return 1
		fi
		k=$((k + 1))
		timeout 60 smcping $SRV -p $WARM_PORT -n 1 -m 16 --warmup 0 --timeout 30s >>/out/first-contact.txt 2>&1
	done
	log "first contact: an ACTIVE link after $k connection(s) to $WARM_PORT"
}

e2e_client() {
	: >/out/e2e.txt
	have_bins
	[ -x /bin/smcping ] || return 1
	[ "$SCEN" = e2e-smc ] && first_contact
	live=""
	if [ "$SCEN" = e2e-smc ] && [ -x /bin/smcdump ]; then
		timeout -s INT 100 smcdump -i eth0 -a -w /out/live.pcapng >/out/smcdump-live.txt 2>&1 &
		live=$!
		# smcdump prints nothing when it starts capturing; it creates the -w file once its
		# packet socket is bound with the filter attached, so the file is the event.
		wait_for_tool 30 "smcdump capturing on eth0 (/out/live.pcapng created)" capture_started "$live"
	fi
	step smcping-check smcping $SRV -p $PORT --check
	step smcping-require smcping $SRV -p $PORT -n 50 -m 64,1000 --warmup 5 --require smc -o json
	step smcping-plain smcping $SRV -p $PORT -n 30 -m 200 --warmup 5
	if [ "$SCEN" = e2e-smc ]; then
		step smcping-compare smcping $SRV -p $PORT -n 40 -m 64 --warmup 5 --compare tcp --round 20
	fi
	# The live capture ends before the one-way stream: under TCG smcdump's packet socket
	# drops part of a burst of 16 KiB WRITEs (the wire has them; seen in the first run
	# without labstub), and the host's check wants every frame its filter selects.
	if [ -n "$live" ]; then
		kill -INT "$live" 2>/dev/null
		wait "$live"
		echo "STEP smcdump-live rc=$?" >>/out/e2e.txt
	fi
	if [ "$SCEN" = e2e-smc ]; then
		step smcping-bw smcping $SRV -p $PORT -n 50 -m 16384 --warmup 0 --bw
		# What the application wrote and read (--digest: seeded payloads, bytes and SHA-256
		# per connection), for the streams smcdump reassembles from the wire
		# (lab/e2e_test.go TestStreamDigests): a ping-pong of two sizes, then a one-way
		# stream of multi-packet WRITEs that wraps the RMBE.
		step smcping-digest smcping $SRV -p $PORT -n 40 -m 64,3000 --warmup 0 --digest
		step smcping-digest-bw smcping $SRV -p $PORT -n 40 -m 16384 --warmup 0 --bw --digest
		# An application protocol over SMC-R: one HTTP GET and its answer, which the
		# capture shows as RDMA WRITEs and smcdump --export-tcp as HTTP again.
		[ -x /bin/smclab ] && step smclab-http smclab http-get $SRV:$HTTP_PORT /smc
		# IPPROTO_SMC sockets (6.11+): smc_diag reports them with 0.0.0.0 addresses.
		step smcping-ipproto smcping $SRV -p $PORT --proto ipproto --check
		during_ping smc_window
	else
		during_ping observe_client
	fi
	if [ -x /bin/smclab ]; then
		for c in diag lgr stats fallback sysinfo; do
			step "smclab-$c" smclab $c
			step "smclab-$c-json" smclab $c -json
		done
	fi
	return 0
}

# record_out PHASE writes the kernel's netlink replies (smclab record) to
# /out/rec-PHASE-<name>.bin, the recordings of smcnl/testdata (its README says how).
record_out() {
	rm -rf /tmp/rec
	run 20 smclab record /tmp/rec || true
	for f in /tmp/rec/*.bin; do
		[ -e "$f" ] && cp "$f" /out/rec-"$1"-"$(basename "$f")"
	done
}

have_bins() {
	for b in smcping smcdump smctop smclab smcnl.test rdmastats.test; do
		if [ -x /bin/$b ]; then echo "HAVE $b" >>/out/e2e.txt; else echo "MISSING $b" >>/out/e2e.txt; fi
	done
}

# The observation window of the e2e scenarios: a paced smcping connection (one ping every
# 10 ms) to a second smcping server on OBS_PORT, which only it uses. Both guests look at
# the kernel while it runs. The connection is also the only channel between the guests
# (the control lines go to the host): the server takes its snapshots once it accepted the
# connection; the client, when done with its own, makes a second, one-ping connection to
# OBS_PORT; the server, having seen both, stops its OBS_PORT server, which ends the paced
# connection, and the client goes on.
OBS_PORT=5002

# during_ping FN... (client) runs FN (and its arguments) in the observation window.
during_ping() {
	smcping $SRV -p $OBS_PORT -n 1000000 -m 64 -i 10ms --warmup 0 --timeout 60s >/out/bg-ping.txt 2>&1 &
	bg=$!
	wait_conns /out/bg-ping.txt 1
	"$@"
	log "observation done; telling the server"
	timeout 30 smcping $SRV -p $OBS_PORT -n 1 -m 16 --warmup 0 --timeout 20s >/tmp/obs-done.txt 2>&1
	wait_for 60 "the server ending the paced connection" exited $bg
	kill -INT $bg 2>/dev/null
	wait $bg
	echo "STEP bg-ping rc=$?" >>/out/e2e.txt
}

# server_observe (server, in the background) waits for the client's paced connection on
# OBS_PORT, takes the server's snapshots while it runs (observe_server), then waits for
# the client's second connection and stops the OBS_PORT server (see OBS_PORT).
server_observe() {
	wait_for 120 "the client's paced connection on $OBS_PORT" \
		has_lines /out/smcping-obs.txt 'msg="connection accepted"' 1 || return 1
	observe_server
	wait_for 120 "the client's end-of-observation connection on $OBS_PORT" \
		has_lines /out/smcping-obs.txt 'msg="connection accepted"' 2
	log "observe: done, stopping the smcping server on $OBS_PORT"
	kill -INT "$obs_srv"
}

# observe_server and observe_client: two snapshots of the guest's kernel view while the
# paced connection runs (lab/e2e_test.go compares them). A second between them gives
# rates a span; that the connection's cursor and rxe0's counters moved in between, which
# the tests assert, is waited for (obs_moved), not expected of the second.
observe_server() { observe; }
observe_client() { observe; }
observe() {
	local k mark=""
	for k in 1 2; do
		if [ $k = 2 ]; then
			sleep 1
			# shellcheck disable=SC2086
			[ -z "$mark" ] || wait_for 30 "the paced connection moving on after snapshot 1" obs_moved $mark
		fi
		{
			timeout 10 smclab diag
			timeout 10 smclab lgr
			hw_counters
		} >/out/observe$k.txt 2>&1
		# The kernel's raw replies just before and after the first smctop snapshot: what
		# is the same in both is what lab/smctools_e2e_test.go holds smctop's new fields
		# (cursors, shutdown, statistics, system info, EIDs, PNET table) to.
		if [ $k = 1 ]; then record_out obsa; fi
		# smctop's join of the same moment (its two refreshes a second apart give rates);
		# lab/e2e_test.go compares it with smclab's view above.
		[ -x /bin/smctop ] && timeout 20 smctop --once -o json --interval 1s >/out/smctop$k.json 2>/out/smctop$k.err
		# The same as deploy/systemd/smctop.service runs it: not root, holding only
		# CAP_DAC_OVERRIDE and CAP_SYS_PTRACE as ambient capabilities; it must see what
		# root's smctop saw (lab/smctop_e2e_test.go).
		if [ $k = 1 ] && [ -x /bin/smctop ] && [ -x /bin/util-setpriv ]; then
			timeout 20 util-setpriv --reuid 65534 --regid 65534 --clear-groups \
				--inh-caps +dac_override,+sys_ptrace --ambient-caps +dac_override,+sys_ptrace \
				smctop --once -o json --interval 1s >/out/smctop-nonroot.json 2>/out/smctop-nonroot.err
		fi
		if [ $k = 1 ]; then record_out obsb; fi
		mark=$(obs_mark)
	done
	# The exporter, scraped inside the guest; promtool checks it on the host. It answers
	# once it listens, so wget asks until it does.
	if [ -x /bin/smctop ]; then
		scrape_exporter
	fi
}

# scrape_exporter runs smctop's exporter and writes one scrape to /out/metrics.txt
# (promtool checks it on the host). It answers once it listens, so wget asks until it
# does.
scrape_exporter() {
	smctop --listen 127.0.0.1:9714 --no-tui >/out/smctop-listen.err 2>&1 &
	exp=$!
	# No scheme: wget takes HTTP (and the project keeps URLs out of its scripts).
	if wait_for_tool 30 "smctop's exporter answering on 127.0.0.1:9714" \
		timeout 10 wget -q -O /out/metrics.txt 127.0.0.1:9714/metrics; then
		echo "STEP smctop-metrics rc=0" >>/out/e2e.txt
	else
		echo "STEP smctop-metrics rc=1" >>/out/e2e.txt
	fi
	kill $exp 2>/dev/null
	wait $exp 2>/dev/null
}

# obs_mark prints the paced connection's rx_prod and rxe0's sent and received packets, or
# nothing when the connection is not SMC-R (a fallback moves nothing on RoCE).
obs_mark() {
	local rx
	rx=$(timeout 10 smclab diag | awk -v p="$SRV:$OBS_PORT" '
		/ state=ACTIVE / && / mode=SMCR / && (index($0, " src=" p " ") || index($0, " dst=" p " ")) {
			for (i = 1; i <= NF; i++) if ($i ~ /^rx_prod=/) { print substr($i, 9); exit }
		}')
	[ -z "$rx" ] || echo "$rx $(hw_counter rxe0 sent_pkts) $(hw_counter rxe0 rcvd_pkts)"
}

# obs_moved RX_PROD SENT RCVD (an obs_mark): the connection's rx_prod and both counters
# have moved on since.
obs_moved() {
	# shellcheck disable=SC2046
	set -- "$@" $(obs_mark)
	[ $# = 6 ] && [ "$4" != "$1" ] && [ "$5" -gt "$2" ] && [ "$6" -gt "$3" ]
}

# capture_started PID [FILE]: smcdump (PID) has created its -w file (default
# /out/live.pcapng), or has exited.
capture_started() { [ -e "${2:-/out/live.pcapng}" ] || exited "$1"; }

# live_tests runs the Go tests that need a kernel with SMC and an RDMA device (TestLive* of
# packages smcnl and rdmastats, built by prep.sh with go test -c). SMCNL_LIVE_WANT=smcr makes
# them require the running connection; SMCNL_LIVE_WRITE=1 lets them change (and restore)
# the UEID and PNET tables and the handshake limitation. lab/e2e_test.go fails on any skip.
live_tests() {
	for t in smcnl rdmastats; do
		[ -x /bin/$t.test ] || continue
		step "$t-live" env SMCNL_LIVE_WANT=smcr SMCNL_LIVE_WRITE=1 /bin/$t.test -test.v -test.run '^TestLive' -test.timeout 90s
	done
}

# smc_window is what the client does in e2e-smc's observation window.
smc_window() {
	live_tests
	observe_client
}

# ipproto_client: IPPROTO_SMC sockets (socket(AF_INET, SOCK_STREAM, IPPROTO_SMC), Linux
# 6.11+) against an IPPROTO_SMC listener. smcping proves their mode by inode or cookie;
# smclab's sock_diag dump, taken while an IPPROTO_SMC and an AF_SMC connection both run,
# shows how the kernel reports each kind (family, addresses).
ipproto_client() {
	: >/out/e2e.txt
	have_bins
	first_contact
	step ipproto-check smcping $SRV -p $PORT --proto ipproto --check
	step ipproto-json smcping $SRV -p $PORT --proto ipproto -n 30 -m 64 --warmup 0 --require smc --diag -o json
	smcping $SRV -p $PORT --proto smc -n 1000000 -m 64 -i 10ms --warmup 0 --timeout 60s >/out/bg-afsmc.txt 2>&1 &
	bg2=$!
	wait_conns /out/bg-afsmc.txt 1
	smcping $SRV -p $PORT --proto ipproto -n 1000000 -m 64 -i 10ms --warmup 0 --timeout 60s >/out/bg-ipproto.txt 2>&1 &
	bg1=$!
	wait_conns /out/bg-ipproto.txt 1
	step ipproto-diag smclab diag
	step ipproto-diag-json smclab diag -json
	record_out active
	kill -INT $bg1 $bg2 2>/dev/null
	wait $bg1
	echo "STEP bg-ipproto rc=$?" >>/out/e2e.txt
	wait $bg2
	echo "STEP bg-afsmc rc=$?" >>/out/e2e.txt
	return 0
}

# smcd_client (e2e-smcd, one guest): SMC-D over the DIBS loopback between two processes,
# an smcping server and its clients on 127.0.0.1. smcdump captures the CLC handshakes on
# lo (the SMC-D data moves through the DMBs and never shows on lo); smcping proves SMC-D
# per connection and measures it against TCP; then, while a paced connection runs, the
# kernel's own dump (smclab) and smctop's join of the same moment are written for
# lab/e2e_test.go, with netlink recordings for smcnl/testdata.
smcd_client() {
	: >/out/e2e.txt
	have_bins
	[ -x /bin/smcping ] || return 1
	smcping -s -p $PORT --idle 120s >>/out/smcping-server.txt 2>&1 &
	srv=$!
	smcping -s -p $OBS_PORT --tcp-port 0 --idle 120s >>/out/smcping-obs.txt 2>&1 &
	obs=$!
	wait_for 30 "the smcping server listening on $PORT" grep -q 'msg=listening' /out/smcping-server.txt || return 1
	wait_for 30 "the smcping server listening on $OBS_PORT" grep -q 'msg=listening' /out/smcping-obs.txt || return 1
	live=""
	if [ -x /bin/smcdump ]; then
		# The default filter: SYNs, CLC segments (and RoCE, of which lo has none).
		timeout -s INT 100 smcdump -i lo -a -w /out/smcd-lo.pcapng >/out/smcdump-lo.txt 2>&1 &
		live=$!
		wait_for_tool 30 "smcdump capturing on lo (/out/smcd-lo.pcapng created)" capture_started "$live" /out/smcd-lo.pcapng
	fi
	# Two connections one after the other, the first making the link groups, the second
	# reusing them; the kernel's word on each (smcping --diag) is a CLIENT line in
	# client.log: the ground truth of the capture.
	SRV_TARGET=127.0.0.1
	smcping_run 0 pp 20 64
	echo "STEP smcping-diag rc=$?" >>/out/e2e.txt
	cp /tmp/pp.out /out/smcping-diag.txt
	smcping_run 1 pp2 30 200
	echo "STEP smcping-diag2 rc=$?" >>/out/e2e.txt
	cp /tmp/pp2.out /out/smcping-diag2.txt
	if [ -n "$live" ]; then
		kill -INT "$live" 2>/dev/null
		wait "$live"
		echo "STEP smcdump-lo rc=$?" >>/out/e2e.txt
	fi
	step smcping-check smcping 127.0.0.1 -p $PORT --check
	step smcping-check-json smcping 127.0.0.1 -p $PORT --check -o json
	step smcping-require smcping 127.0.0.1 -p $PORT -n 50 -m 64,1000 --warmup 5 --require smc -o json
	step smcping-compare smcping 127.0.0.1 -p $PORT -n 40 -m 64 --warmup 5 --compare tcp --round 20
	smcping 127.0.0.1 -p $OBS_PORT -n 1000000 -m 64 -i 10ms --warmup 0 --timeout 60s >/out/bg-ping.txt 2>&1 &
	bg=$!
	wait_conns /out/bg-ping.txt 1 && smcd_observe && traced_io $bg
	kill -CONT $bg 2>/dev/null
	kill -INT $bg 2>/dev/null
	wait $bg
	echo "STEP bg-ping rc=$?" >>/out/e2e.txt
	for c in stats fallback sysinfo dev; do
		step "smclab-$c" smclab $c
		step "smclab-$c-json" smclab $c -json
	done
	kill -INT $srv $obs 2>/dev/null
	wait $srv
	wait $obs
	server_lines /out/smcping-server.txt /out/smcping-obs.txt | tee -a /out/client.log
	return 0
}

# smcd_observe (e2e-smcd) writes, while the paced connection to OBS_PORT runs, the
# kernel's view (smclab diag and lgr, text and JSON, and its netlink recordings), the DIBS
# devices' sysfs files, smctop's join of the same moment and its exporter's metrics.
# traced_io PID: smctop's traffic of process PID (the paced smcping client, one SMC
# socket) from the smc_tx_sendmsg/smc_rx_recvmsg tracepoints, against the kernel's
# cursors of that socket. The client is stopped (SIGSTOP) while the kernel's dump is
# taken before and after, and while smctop starts, so both count exactly the calls
# between: smctop's totals since it started are the cursors' movement in between
# (the Go test compares them: TX with tx_prep, RX with rx_cons).
traced_io() {
	local pid=$1 st n
	[ -x /bin/smctop ] || return 0
	kill -STOP "$pid" || return 1
	smclab diag -json >/out/traced-diag-before.json 2>&1
	smctop --count 100000 --interval 500ms -o jsonl >/out/smctop-traced.jsonl 2>/out/smctop-traced.err &
	st=$!
	timeout 40 smclab wait-smctop /out/smctop-traced.jsonl 30 -pid $st -traced >/tmp/wait.out 2>&1 ||
		log "DEADLINE (tool): smctop reading the tracepoints ($(tail -1 /tmp/wait.out))"
	kill -CONT "$pid"
	# Ten round trips or more counted before the client stops again.
	timeout 40 smclab wait-smctop /out/smctop-traced.jsonl 30 -pid $st -calls "$pid:20" >/tmp/wait.out 2>&1 ||
		log "DEADLINE (tool): smctop counting the paced client's calls ($(tail -1 /tmp/wait.out))"
	kill -STOP "$pid"
	n=$(count_lines /out/smctop-traced.jsonl '')
	timeout 40 smclab wait-smctop /out/smctop-traced.jsonl 30 -pid $st -settled "$pid" -after "$n" >/tmp/wait.out 2>&1
	echo "STEP smctop-traced rc=$?" >>/out/e2e.txt
	smclab diag -json >/out/traced-diag-after.json 2>&1
	echo "$pid" >/out/traced-pid.txt
	# The client's sockets by inode (socket:[N]), for the test to find its SMC socket in
	# the kernel's dumps.
	for fd in /proc/"$pid"/fd/*; do readlink "$fd"; done 2>/dev/null | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' >/out/traced-inodes.txt
	kill -INT $st 2>/dev/null
	wait $st
	return 0
}

smcd_observe() {
	step smclab-diag smclab diag
	step smclab-diag-json smclab diag -json
	step smclab-lgr smclab lgr
	step smclab-lgr-json smclab lgr -json
	record_out active
	local d
	for d in /sys/class/dibs/*; do
		[ -d "$d" ] || continue
		for f in gid fabric_id; do
			[ -r "$d/$f" ] && cp "$d/$f" /out/dibs-"$(basename "$d")"-$f.txt
		done
		echo "driver=$(readlink "$d/device/driver" 2>/dev/null) device=$(readlink "$d/device" 2>/dev/null)" \
			>/out/dibs-"$(basename "$d")"-links.txt
	done
	[ -x /bin/smctop ] || return 0
	timeout 20 smctop --once -o json --interval 1s >/out/smctop1.json 2>/out/smctop1.err
	echo "STEP smctop-once rc=$?" >>/out/e2e.txt
	# The kernel's view once more: what did not change while smctop looked is what the
	# test compares field by field.
	step smclab-diag-json2 smclab diag -json
	step smclab-lgr-json2 smclab lgr -json
	# The raw replies after smctop too (record_out active was before it): what both
	# recordings agree on is what lab/smctools_e2e_test.go compares field by field.
	record_out active2
	scrape_exporter
}

# hsctrl_client (e2e-hsctrl): the server's controller leaves the SMC option out of the
# SYN-ACKs of HSCTRL_PORT, so connections there fall back (PEERNOSMC) while PORT's are
# SMC-R; with AF_SMC and with IPPROTO_SMC sockets alike.
hsctrl_client() {
	: >/out/e2e.txt
	have_bins
	first_contact
	step hsctrl-smc-check smcping $SRV -p $PORT --check
	step hsctrl-nosmc-check smcping $SRV -p $HSCTRL_PORT --check
	step hsctrl-nosmc-require smcping $SRV -p $HSCTRL_PORT -n 20 -m 64 --warmup 0 --require smc
	step hsctrl-nosmc-plain smcping $SRV -p $HSCTRL_PORT -n 20 -m 64 --warmup 0 --diag
	step hsctrl-ipproto-smc smcping $SRV -p $PORT --proto ipproto --check
	step hsctrl-ipproto-nosmc smcping $SRV -p $HSCTRL_PORT --proto ipproto --check
	return 0
}

scenario_main() {
	setup_net || return 1
	setup_smc || return 1
	case "$ROLE" in
	server) server_main ;;
	client) client_main ;;
	*) log "unknown role $ROLE" && return 1 ;;
	esac
}
