# Scenario logic of a lab guest, sourced by /init (busybox sh) with ROLE and SCEN set.
# Every scenario is: set up the node (net, rxe, UEID, PNET), then the server starts its
# listener and says LAB-READY, the client waits for the host's "go", runs its part and
# powers off; the host then tells the server "done", and the server waits for its link
# group to disappear (the client's reboot notifier sent DELETE_LINK) before reporting.
#
# The ping-pong/bulk traffic and the kernel's view come from labstub (the lab's own
# independent oracle); the project's binaries run in the e2e-* scenarios.

PORT=5000
SRV=10.10.0.1
CLI=10.10.0.2
SRV1=10.10.0.11
CLI1=10.10.0.12
SRV6=fd00:10::1
CLI6=fd00:10::2
UEID=SMC-LAB-UEID

myaddr() { if [ "$ROLE" = server ]; then echo "$1"; else echo "$2"; fi; }

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
	ip link set eth0 up
	ip addr add "$(myaddr $SRV $CLI)"/24 dev eth0
	if [ "$SCEN" = ipv6 ]; then
		ip -6 addr add "$(myaddr $SRV6 $CLI6)"/64 dev eth0 nodad
	fi
	if [ "$SCEN" = multilink ]; then
		ip link set eth1 up
		ip addr add "$(myaddr $SRV1 $CLI1)"/24 dev eth1
	fi
}

setup_smc() {
	# decline-nordma: the server has SMC but no RoCE device.
	if ! { [ "$SCEN" = decline-nordma ] || [ "$SCEN" = e2e-decline ]; } || [ "$ROLE" != server ]; then
		rxe_add rxe0 eth0 "$(myaddr $SRV $CLI)" || return 1
	fi
	if [ "$SCEN" = multilink ]; then
		rxe_add rxe1 eth1 "$(myaddr $SRV1 $CLI1)" || return 1
		for p in "eth0 rxe0" "eth1 rxe1"; do
			set -- $p
			run 10 labstub pnet-add LABNET "$1" "$2" || return 1
		done
	fi
	case "$SCEN" in
	no-ueid) ;;
	decline-ueid) run 10 labstub ueid-add "$(myaddr SMC-LAB-OTHER $UEID)" || return 1 ;;
	*) run 10 labstub ueid-add $UEID || return 1 ;;
	esac
	rdma link show
	# One grep over the whole GID table: a process per entry costs seconds under TCG.
	grep -H . /sys/class/infiniband/*/ports/1/gids/* 2>/dev/null |
		grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$' |
		sed -E 's|/sys/class/infiniband/([^/]+)/ports/1/gids/([0-9]+):|GID \1[\2]=|'
}

# smc_scenario says whether the scenario ends with an SMC-R link group to wait for.
smc_scenario() {
	case "$SCEN" in
	fallback-nosmc | decline-nordma | decline-ueid | no-ueid | ipv6 | e2e-decline) return 1 ;;
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
	if [ "$SCEN" = multilink ]; then
		run 10 labstub pnet-add LABNET lo "" || return 1
	else
		run 10 labstub pnet-add LABSELF lo rxe0 || return 1
	fi
	run 30 labstub client -addr "$SRV:$PORT" -n 2 -m 16 -P 1 -timeout 25s || return 1
	run 10 labstub report | grep -E '^(LGR|LINK|SOCK)' || true
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
		timeout 20 labstub report
		hw_counters
		dmesg | grep -E 'smc|rxe|infiniband' | sed 's/^/DMESG /'
	} >/out/"$ROLE".report 2>&1
	cat /out/"$ROLE".report
}

server_main() {
	case "$SCEN" in
	fallback-nosmc) srvargs="-tcp" ;;
	ipv6) srvargs="-6" ;;
	*) srvargs="" ;;
	esac
	case "$SCEN" in
	e2e-*)
		# The project's smcping is the server (AF_SMC on PORT, TCP baseline on PORT+1).
		if [ -x /bin/smcping ]; then
			smcping -s -p $PORT >>/out/smcping-server.txt 2>&1 &
		else
			echo "SMCPING-MISSING" >>/out/smcping-server.txt
			labstub serve -p $PORT >>/out/server.log 2>&1 &
		fi
		;;
	*)
		labstub serve -p $PORT $srvargs >>/out/server.log 2>&1 &
		;;
	esac
	# The throwaway connections of shift_ids need the listener; it is the real one.
	sleep 0.3
	if smc_scenario && [ "$SHIFT_IDS" != 0 ]; then
		shift_ids || log "shift_ids failed"
	fi
	nbase=$(labstub report 2>/dev/null | grep -c '^LGR:')
	log "LAB-READY (link groups before the client: $nbase)"
	wait_host done || return 1
	if smc_scenario; then
		run 60 labstub wait-lgr-gone -t 50 -keep "$nbase" || return 1
	fi
	cat /out/server.log 2>/dev/null
	final_report
	return 0
}

client_main() {
	log "LAB-CLIENT-READY"
	wait_host go || return 1
	rc=0
	case "$SCEN" in
	pingpong | teardown)
		run 120 labstub client -addr $SRV:$PORT -n 500 -m 64 || rc=$?
		;;
	multiconn)
		# Different sizes and counts per connection, so per-connection numbers differ.
		run 120 labstub client -addr $SRV:$PORT -P 4 -n 300,200,120,80 -m 64,1000,4096,200 || rc=$?
		;;
	long)
		# 64 KiB RMBEs: 3000 x 64 B wraps the cursors; 1 MiB bulk gives multi-packet WRITEs.
		run 120 labstub client -addr $SRV:$PORT -n 3000 -m 64 -bulk 1048576 || rc=$?
		;;
	multilink)
		multilink_client || rc=$?
		;;
	e2e-*)
		e2e_client || rc=$?
		;;
	ipv6)
		run 60 labstub client -addr "[$SRV6]:$PORT" -n 20 -m 64 || rc=$?
		;;
	*)
		run 60 labstub client -addr $SRV:$PORT -n 20 -m 64 || rc=$?
		;;
	esac
	final_report
	if [ "$SCEN" = teardown ]; then
		# Unloading SMC terminates the (idle) link group: DELETE_LINK(all) while both run.
		run 20 rmmod smc_diag smc || rc=$?
		sleep 2
	fi
	return $rc
}

# multilink_client: two links (eth0/rxe0, eth1/rxe1, one PNET ID), two connections, then
# eth1 goes down while the connections are idle (traffic in flight on the dying link
# stalled 1 of 2 runs), the link group fails over to link 1, traffic resumes, and a new
# connection is made afterwards.
multilink_client() {
	rm -f /tmp/pause.ready /tmp/pause.go
	labstub client -addr $SRV:$PORT -P 2 -n 300,200 -m 64,512 -pause-after 100 \
		-pause-file /tmp/pause -timeout 100s >/tmp/ml.out 2>&1 &
	pid=$!
	i=0
	while [ ! -e /tmp/pause.ready ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	timeout 10 labstub report | grep -E '^(LGR|LINK)' | sed 's/^/BEFORE-FAILOVER /' | tee -a /out/client.log
	log "eth1 down"
	ip link set eth1 down
	i=0
	while [ $i -lt 100 ]; do
		n=$(timeout 5 labstub report | grep -c '^LINK:')
		[ "$n" = 1 ] && break
		sleep 0.2
		i=$((i + 1))
	done
	log "links after eth1 down: $n"
	timeout 10 labstub report | grep -E '^(LGR|LINK)' | sed 's/^/AFTER-FAILOVER /' | tee -a /out/client.log
	touch /tmp/pause.go
	wait $pid
	rc=$?
	cat /tmp/ml.out
	cat /tmp/ml.out >>/out/client.log
	# After the failover the server tries a second, asymmetric link on the remaining
	# device; a connection made while it is ACTIVATING waits for it (or times out under
	# load), so the new connection waits until the link group settled.
	i=0
	while [ $i -lt 100 ] && timeout 5 labstub report | grep -q '^LINK:.* state=[12] '; do
		sleep 0.2
		i=$((i + 1))
	done
	timeout 10 labstub report | grep -E '^(LGR|LINK)' | sed 's/^/SETTLED /' | tee -a /out/client.log
	run 60 labstub client -addr $SRV:$PORT -n 50 -m 128 || rc=$?
	return $rc
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
# of the same wire), smclab's view of the kernel (compared with labstub's report).
e2e_client() {
	: >/out/e2e.txt
	for b in smcping smcdump smclab; do
		if [ -x /bin/$b ]; then echo "HAVE $b" >>/out/e2e.txt; else echo "MISSING $b" >>/out/e2e.txt; fi
	done
	[ -x /bin/smcping ] || return 1
	live=""
	if [ "$SCEN" = e2e-smc ] && [ -x /bin/smcdump ]; then
		timeout -s INT 100 smcdump -i eth0 -a -w /out/live.pcapng >/out/smcdump-live.txt 2>&1 &
		live=$!
		sleep 1
	fi
	step smcping-check smcping $SRV -p $PORT --check
	step smcping-require smcping $SRV -p $PORT -n 50 -m 64,1000 --warmup 5 --require smc -o json
	step smcping-plain smcping $SRV -p $PORT -n 30 -m 200 --warmup 5
	if [ "$SCEN" = e2e-smc ]; then
		step smcping-compare smcping $SRV -p $PORT -n 40 -m 64 --warmup 5 --compare tcp --round 20
		step smcping-bw smcping $SRV -p $PORT -n 50 -m 16384 --warmup 0 --bw
		# IPPROTO_SMC sockets (6.11+): smc_diag reports them with 0.0.0.0 addresses.
		step smcping-ipproto smcping $SRV -p $PORT --proto ipproto --check
	fi
	if [ -n "$live" ]; then
		sleep 1
		kill -INT "$live" 2>/dev/null
		wait "$live"
		echo "STEP smcdump-live rc=$?" >>/out/e2e.txt
	fi
	if [ -x /bin/smclab ]; then
		for c in diag lgr stats fallback sysinfo; do
			step "smclab-$c" smclab $c
			step "smclab-$c-json" smclab $c -json
		done
	fi
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
