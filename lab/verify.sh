#!/usr/bin/env bash
# Verification of one scenario run, sourced by lab/run. Two views must agree with what the
# scenario is meant to make the kernel do, and with each other:
#   * the kernel's own view, from the guests (smclab and smcping --diag, i.e. package
#     smcnl: smc_diag mode, fallback reason, token and cursors, SMC netlink stats, link
#     groups and links);
#   * the wire, from the host capture (tshark on raw bytes: CLC eyecatchers, RoCE opcodes,
#     QP numbers; and the project's smcdump, i.e. package decode).
# The kernel view is read by the project's own netlink code, so verify_kernel_wire
# cross-checks it against the wire decoded by a different code path (tokens, cursors,
# link UIDs): a fact both agree on is not an artefact of either.
# Every fact checked is written as "truth.<key>=<value>" into DIR/truth, the ground truth
# that samples/<scenario>.log carries for the tests.

# Expected client result per scenario: mode reason peer_diag connections.
declare -A EXPECT=(
	[pingpong]="SMCR 0x00000000 0x00000000 1"
	[multiconn]="SMCR 0x00000000 0x00000000 4"
	[multilink]="SMCR 0x00000000 0x00000000 2"
	[teardown]="SMCR 0x00000000 0x00000000 1"
	[long]="SMCR 0x00000000 0x00000000 1"
	[fallback-nosmc]="TCP-FALLBACK 0x03010000 0x00000000 1"
	[decline-nordma]="TCP-FALLBACK 0x05000000 0x03030002 1"
	[decline-ueid]="TCP-FALLBACK 0x05000000 0x03030000 1"
	[no-ueid]="TCP-FALLBACK 0x03030000 0x00000000 1"
	[ipv6]="TCP-FALLBACK 0x03030000 0x00000000 1"
	[e2e-smc]="SMCR 0x00000000 0x00000000 1"
	[e2e-ipproto]="SMCR 0x00000000 0x00000000 1"
	[e2e-decline]="TCP-FALLBACK 0x05000000 0x03030002 1"
	[e2e-nosmc]="TCP-FALLBACK 0x03010000 0x00000000 1"
	[e2e-smcd]="SMCD 0x00000000 0x00000000 1"
	[e2e-hsctrl]="SMCR 0x00000000 0x00000000 1"
	[slow-reader]="SMCR 0x00000000 0x00000000 1"
	[lossy]="SMCR 0x00000000 0x00000000 2"
	[silent-link]="SMCR 0x00000000 0x00000000 2"
	[erspan]="SMCR 0x00000000 0x00000000 1"
)

# tshark_count FILE FILTER prints how many frames match a display filter.
tshark_count() {
	timeout 120 tshark -n -r "$1" -Y "$2" -T fields -e frame.number 2>/dev/null | wc -l
}

# kv FILE KEY prints the value of key=value in the first line that has it.
kv() { grep -oE "(^| )$2=[^ ]*" "$1" 2>/dev/null | head -1 | sed -E "s/^ ?$2=//"; }

# kvd is kv with "-" for a missing value.
kvd() {
	local v
	v=$(kv "$1" "$2")
	echo "${v:--}"
}

verify_scenario() {
	local sc=$1 dir=$2 bad=0 bad_tool=0
	local truth="$dir/truth"
	: >"$truth"
	local mode reason peer nconns
	read -r mode reason peer nconns <<<"${EXPECT[$sc]:-}"
	check() { # check WHAT OK(0/1)
		if [ "$2" = 0 ]; then
			echo "check $1: ok" >>"$dir/verify.log"
		else
			echo "check $1: FAILED" >>"$dir/verify.log"
			log "$sc: check failed: $1"
			bad=1
		fi
	}
	# tcheck is a check of the project's own tools: a failure fails the scenario but does
	# not make the sample untrue.
	tcheck() {
		if [ "$2" = 0 ]; then
			echo "tool-check $1: ok" >>"$dir/verify.log"
		else
			echo "tool-check $1: FAILED" >>"$dir/verify.log"
			log "$sc: tool check failed: $1"
			bad_tool=1
		fi
	}
	fact() { echo "truth.$1=$2" >>"$truth"; }
	: >"$dir/verify.log"
	local r roles=(server client)
	# One guest (lab/run SOLO_SCENARIOS): the client role, its server a process beside it.
	solo "$sc" && roles=(client)
	for r in "${roles[@]}"; do
		check "$r guest finished with rc=0 ($(cat "$dir/$r/rc" 2>/dev/null || echo none))" \
			"$([ "$(cat "$dir/$r/rc" 2>/dev/null)" = 0 ] && echo 0 || echo 1)"
	done
	# Every wait in the guests has a deadline and logs "DEADLINE: what" when it passes
	# (scenarios.sh wait_for): the event it waited for did not come.
	local late
	late=$(cat "$dir/server.console" "$dir/client.console" 2>/dev/null | tr -d '\r' | grep -o 'DEADLINE: .*' | paste -sd';' || true)
	check "no wait in the guests passed its deadline${late:+ ($late)}" "$([ -z "$late" ] && echo 0 || echo 1)"
	late=$(cat "$dir/server.console" "$dir/client.console" 2>/dev/null | tr -d '\r' | grep -o 'DEADLINE (tool): .*' | paste -sd';' || true)
	tcheck "no wait for the project's tools in the guests passed its deadline${late:+ ($late)}" "$([ -z "$late" ] && echo 0 || echo 1)"
	fact scenario "$sc"
	fact kernel "$KVER"
	case "$sc" in e2e-*)
		verify_e2e "$sc" "$dir"
		cat "$dir/verify.log" >&2
		[ $bad = 0 ] || return 1
		[ $bad_tool = 0 ] || return 2
		return 0 ;;
	bench-*)
		verify_bench "$dir"
		cat "$dir/verify.log" "$dir/bench.txt" >&2
		[ $bad = 0 ] || return 1
		return 0 ;;
	esac

	# --- kernel view, client side: every measured connection (not the bulk one) ---
	local clog="$dir/client/client.log" n=0 line i
	while read -r line; do
		local m rs pd
		conn_facts "$line"
		check "client conn$i mode=$m reason=$rs peer_diag=$pd (want $mode $reason $peer)" \
			"$([ "$m" = "$mode" ] && [ "$rs" = "$reason" ] && [ "$pd" = "$peer" ] && echo 0 || echo 1)"
		n=$((n + 1))
	done < <(grep -E '^CLIENT conn[0-9]+ [0-9a-f[]' "$clog" 2>/dev/null | grep -v ' END ' | head -"$nconns")
	fact client.conns "$n"
	check "client made $n of $nconns connections" "$([ "$n" = "$nconns" ] && echo 0 || echo 1)"
	local res
	res=$(grep -c '^CLIENT RESULT conns=[0-9]* failed=0' "$clog" 2>/dev/null || true)
	check "every client run finished without failure ($res result lines)" \
		"$([ "$res" -ge 1 ] && ! grep -q 'failed=[1-9]\|CLIENT TIMEOUT' "$clog" && echo 0 || echo 1)"
	grep -E '^CLIENT conn[0-9]+ n=' "$clog" | sed -E 's/^CLIENT (conn[0-9]+) n=([0-9]+) size=([0-9]+).*/\1 \2 \3/' |
		while read -r c nn sz; do
			fact "client.$c.round_trips" "$nn"
			fact "client.$c.msg_size" "$sz"
		done
	local rep="$dir/client/client.report" srep="$dir/server/server.report"
	local k
	for k in clnt_v2_succ rx_bytes tx_bytes; do
		fact "client.stats.$k" "$(kv "$rep" "smcr.$k" || true)"
	done
	fact "server.stats.srv_v2_succ" "$(kv "$srep" smcr.srv_v2_succ || true)"
	fact client.fallback_stats "$(grep '^FBSTATS' "$rep" | sed 's/^FBSTATS: //' | tr ' ' ',' | paste -sd';')"
	fact server.fallback_stats "$(grep '^FBSTATS' "$srep" | sed 's/^FBSTATS: //' | tr ' ' ',' | paste -sd';')"
	local nlgr nlink
	nlgr=$(grep -c '^LGR:' "$rep" || true)
	nlink=$(grep -c '^LINK:' "$rep" || true)
	fact client.link_groups_at_end "$nlgr"
	fact client.links_at_end "$nlink"

	# --- the wire ---
	local pcap="$dir/capture.pcap"
	check "capture exists" "$([ -s "$pcap" ] && echo 0 || echo 1)"
	local frames writes writes_multi clc nonclc decl roce synopt synackopt
	frames=$(capinfos -c -M "$pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}')
	fact frames "$frames"
	roce=$(tshark_count "$pcap" 'udp.dstport==4791')
	writes=$(tshark_count "$pcap" 'infiniband.bth.opcode in {6,7,8,9,10,11}')
	writes_multi=$(tshark_count "$pcap" 'infiniband.bth.opcode == 6')
	clc=$(tshark_count "$pcap" 'tcp.port==5000 && tcp.len>=4 && tcp.payload[0:4]==e2:d4:c3:d9')
	nonclc=$(tshark_count "$pcap" 'tcp.port==5000 && tcp.len>0 && !(tcp.len>=4 && tcp.payload[0:4]==e2:d4:c3:d9)')
	decl=$(tshark_count "$pcap" 'tcp.port==5000 && tcp.len>=8 && tcp.payload[0:4]==e2:d4:c3:d9 && tcp.payload[4]==4')
	synopt=$(tshark_count "$pcap" 'tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.options.experimental.exid==0xe2d4')
	synackopt=$(tshark_count "$pcap" 'tcp.flags.syn==1 && tcp.flags.ack==1 && tcp.options.experimental.exid==0xe2d4')
	fact wire.roce_frames "$roce"
	fact wire.rdma_write_frames "$writes"
	fact wire.rdma_write_first_frames "$writes_multi"
	fact wire.clc_segments "$clc"
	fact wire.clc_decline_segments "$decl"
	fact wire.tcp_payload_not_clc "$nonclc"
	fact wire.syn_with_smc_option "$synopt"
	fact wire.synack_with_smc_option "$synackopt"
	if [ "$mode" = SMCR ]; then
		check "SMC: RDMA WRITEs on the wire ($writes)" "$([ "$writes" -gt 0 ] && echo 0 || echo 1)"
		check "SMC: no TCP payload but CLC on port 5000 ($nonclc)" "$([ "$nonclc" = 0 ] && echo 0 || echo 1)"
		check "SMC: no CLC Decline ($decl)" "$([ "$decl" = 0 ] && echo 0 || echo 1)"
		# Discriminating identifiers: the QPs each side sends to must differ.
		local sqp cqp
		sqp=$(timeout 60 tshark -n -r "$pcap" -Y 'ip.src==10.10.0.1 && infiniband.bth.opcode==4 && !gre' -T fields -e infiniband.bth.destqp 2>/dev/null | sort -u | paste -sd,)
		cqp=$(timeout 60 tshark -n -r "$pcap" -Y 'ip.src==10.10.0.2 && infiniband.bth.opcode==4 && !gre' -T fields -e infiniband.bth.destqp 2>/dev/null | sort -u | paste -sd,)
		fact wire.server_sends_to_qps "$sqp"
		fact wire.client_sends_to_qps "$cqp"
		check "QP numbers differ per side (server->$sqp client->$cqp)" \
			"$([ -n "$sqp" ] && [ -n "$cqp" ] && [ -z "$(comm -12 <(tr , '\n' <<<"$sqp") <(tr , '\n' <<<"$cqp"))" ] && echo 0 || echo 1)"
		local stok ctok
		ctok=$(grep -E '^CLIENT conn0 [0-9]' "$clog" | head -1 | grep -oE 'token=0x[0-9a-f]+' | cut -d= -f2)
		stok=$(grep -E '^SERVER accept .*10\.10\.0\.2' "$dir/server/server.log" | head -1 | grep -oE 'token=0x[0-9a-f]+' | cut -d= -f2)
		fact server.conn0.token "$stok"
		check "alert tokens differ per side (client $ctok, server $stok)" \
			"$([ -n "$ctok" ] && [ -n "$stok" ] && [ "$ctok" != "$stok" ] && echo 0 || echo 1)"
		check "client SMC-Rv2 successes counted ($(kv "$rep" smcr.clnt_v2_succ))" \
			"$([ "$(kv "$rep" smcr.clnt_v2_succ)" -ge "$nconns" ] 2>/dev/null && echo 0 || echo 1)"
	else
		check "fallback: no RoCE frames ($roce)" "$([ "$roce" = 0 ] && echo 0 || echo 1)"
		check "fallback: the data went over TCP ($nonclc segments)" "$([ "$nonclc" -gt 0 ] && echo 0 || echo 1)"
		check "fallback: SYN carries the SMC option ($synopt)" "$([ "$synopt" -ge 1 ] && echo 0 || echo 1)"
	fi
	case "$sc" in
	fallback-nosmc | e2e-nosmc)
		check "no CLC at all ($clc) and no SMC option on the SYN-ACK ($synackopt)" \
			"$([ "$clc" = 0 ] && [ "$synackopt" = 0 ] && echo 0 || echo 1)" ;;
	decline-nordma | decline-ueid | no-ueid | ipv6 | e2e-decline)
		check "a CLC Decline on the wire ($decl)" "$([ "$decl" -ge 1 ] && echo 0 || echo 1)" ;;
	multiconn)
		check "one link group for 4 connections ($nlgr)" "$([ "$nlgr" = 1 ] && echo 0 || echo 1)" ;;
	long)
		check "multi-packet RDMA WRITEs ($writes_multi WRITE First)" "$([ "$writes_multi" -gt 0 ] && echo 0 || echo 1)"
		check "bulk connection used SMC-R" "$(grep -q '^CLIENT bulk END .*mode=SMCR' "$clog" && echo 0 || echo 1)"
		fact client.bulk_bytes "$(kv "$clog" bytes)" ;;
	multilink)
		local before after post
		before=$(grep -c '^BEFORE-FAILOVER LINK:' "$clog" || true)
		# A link the server starts right after the failover (ACTIVATING) is not a survivor.
		after=$(grep '^AFTER-FAILOVER LINK:' "$clog" | grep -cv ' state=ACTIVATING ' || true)
		fact client.links_before_failover "$before"
		fact client.links_after_failover "$after"
		check "two links before eth1 goes down ($before), one after ($after)" \
			"$([ "$before" = 2 ] && [ "$after" = 1 ] && echo 0 || echo 1)"
		post=$(grep -cE '^CLIENT conn0 [0-9].*mode=SMCR' "$clog" || true)
		check "a new SMC-R connection after the failover (conn0 lines: $post)" "$([ "$post" -ge 2 ] && echo 0 || echo 1)" ;;
	teardown)
		check "smc unloaded on the client" "$(grep -q 'rmmod smc_diag smc' "$dir/client.console" && ! grep -q 'rc=[1-9].*rmmod' "$dir/client.console" && echo 0 || echo 1)" ;;
	slow-reader) verify_slow_reader "$dir" ;;
	lossy) verify_lossy "$dir" ;;
	silent-link) verify_silent_link "$dir" ;;
	erspan) verify_erspan "$dir" ;;
	esac
	verify_kernel_wire "$dir"
	verify_smcdump "$sc" "$dir" "$mode"
	cat "$dir/verify.log" >&2
	[ $bad = 0 ] || return 1
	[ $bad_tool = 0 ] || return 2
	return 0
}

# verify_kernel_wire compares the kernel's view (smcnl in the guests) with the wire as
# smcdump decodes it. Tokens: every SMC-R client connection's smc_diag token is an alert
# token the client sent in a CLC Confirm, the server's (from its accept log) one the server
# sent in a CLC Accept. Cursors: a client connection's final rx_prod (what the server
# wrote into its RMBE, read before close) is the producer cursor of the last CDC sent to
# its token. Links: every confirmed client link's UID and peer UID from netlink,
# byte-swapped (netlink prints the 4 wire bytes as a native u32), are CONFIRM_LINK link
# UIDs on the wire.
verify_kernel_wire() {
	local dir=$1 bin="$BUILD/host-smcdump" pcap="$dir/capture.pcap"
	local clog="$dir/client/client.log" slog="$dir/server/server.log"
	if [ ! -x "$bin" ]; then
		check "kernel vs wire: smcdump builds" 1
		return
	fi
	kwf() { timeout 120 "$bin" -r "$pcap" -T fields "$@" 2>/dev/null; }
	local confirm accept uids line tok rxp got nt=0 nc=0 nu=0 u sw
	confirm=$(kwf -Y 'smc.clc.type == 3' -e smc.clc.alert_token | grep . | sort -u)
	accept=$(kwf -Y 'smc.clc.type == 2' -e smc.clc.alert_token | grep . | sort -u)
	uids=$(kwf -Y 'smc.llc.link_uid' -e smc.llc.link_uid | grep . | sort -u)
	while read -r line; do
		tok=$(kv <(echo "$line") token)
		rxp=$(kv <(echo "$line") rx_prod)
		[ -n "$tok" ] || continue
		nt=$((nt + 1))
		check "kernel vs wire: client token $tok is in a CLC Confirm" \
			"$(grep -qx "$((tok))" <<<"$confirm" && echo 0 || echo 1)"
		if [ -n "$rxp" ]; then
			got=$(kwf -Y "(ip.dst == 10.10.0.2 || ip.dst == 10.10.0.12) && smc.cdc.token == $((tok))" \
				-e smc.cdc.prod.wrap -e smc.cdc.prod.count | tail -1 | tr '\t' /)
			nc=$((nc + 1))
			check "kernel vs wire: client token $tok final rx_prod $rxp is the last CDC's producer cursor ($got)" \
				"$([ "$got" = "$rxp" ] && echo 0 || echo 1)"
		fi
	done < <(grep -E '^CLIENT (conn[0-9]+|bulk END) [0-9]' "$clog" 2>/dev/null | grep 'mode=SMCR')
	while read -r line; do
		tok=$(kv <(echo "$line") token)
		[ -n "$tok" ] || continue
		nt=$((nt + 1))
		check "kernel vs wire: server token $tok is in a CLC Accept" \
			"$(grep -qx "$((tok))" <<<"$accept" && echo 0 || echo 1)"
	done < <(grep -E '^SERVER accept .*-> 10\.10\.0\.2:.*mode=SMCR' "$slog" 2>/dev/null)
	while read -r u; do
		[ -n "$u" ] && [ $((u)) != 0 ] || continue
		sw=$(( ((u & 0xff) << 24) | ((u & 0xff00) << 8) | ((u >> 8) & 0xff00) | ((u >> 24) & 0xff) ))
		nu=$((nu + 1))
		check "kernel vs wire: link UID $u (netlink) is a CONFIRM_LINK link UID on the wire ($(printf '0x%08x' $sw))" \
			"$(grep -qx "$sw" <<<"$uids" && echo 0 || echo 1)"
	done < <(cat "$clog" "$dir/client/client.report" 2>/dev/null | grep -E '^([A-Z-]+ )?LINK: lgr=' |
		grep -v 'peer_uid=0x00000000' | grep -oE ' (uid|peer_uid)=0x[0-9a-f]+' | cut -d= -f2 | sort -u)
	fact kernel_wire.tokens_checked "$nt"
	fact kernel_wire.cursors_checked "$nc"
	fact kernel_wire.link_uids_checked "$nu"
}

# verify_smcdump decodes the capture with the project's smcdump (when it builds) and
# compares its view with the raw-byte counts above.
verify_smcdump() {
	local sc=$1 dir=$2 mode=$3 bin="$BUILD/host-smcdump"
	local pcap=${4:-$dir/capture.pcap}
	[ -x "$bin" ] || { echo "tool-check smcdump: skipped (cmd/smcdump does not build yet)" >>"$dir/verify.log"; return 0; }
	local rc=0
	timeout 120 "$bin" -r "$pcap" >"$dir/smcdump.txt" 2>"$dir/smcdump.err" || rc=$?
	tcheck "smcdump -r capture.pcap exits 0 (rc=$rc)" "$([ $rc = 0 ] && echo 0 || echo 1)"
	sdf() { timeout 120 "$bin" -r "$pcap" -a -T fields "$@" 2>/dev/null; }
	local w d dc c
	w=$(sdf -e roce.bth.opcode | grep -cxE '6|7|8|9|10|11' || true)
	tcheck "smcdump counts the RDMA WRITEs tshark counts ($w vs $(kv "$dir/truth" truth.wire.rdma_write_frames))" \
		"$([ "$w" = "$(kv "$dir/truth" truth.wire.rdma_write_frames)" ] && echo 0 || echo 1)"
	# Port 5003 carries the e2e clients' first-contact connections (scenarios.sh
	# WARM_PORT), which may decline on a loaded host; the wire counts leave it out too.
	d=$(sdf -Y 'smc.clc.type == 4 && !(tcp.port == 5003)' -e frame.number | grep -c . || true)
	tcheck "smcdump finds the CLC Declines ($d vs $(kv "$dir/truth" truth.wire.clc_decline_segments))" \
		"$([ "$d" = "$(kv "$dir/truth" truth.wire.clc_decline_segments)" ] && echo 0 || echo 1)"
	echo "truth.smcdump.clc_types=$(sdf -e smc.clc.type | grep . | sort | uniq -c | awk '{printf "%s%s:%s", sep, $2, $1; sep=","}')" >>"$dir/truth"
	echo "truth.smcdump.llc_types=$(sdf -e smc.llc.type | grep . | sort | uniq -c | awk '{printf "%s%s:%s", sep, $2, $1; sep=","}')" >>"$dir/truth"
	if [ "$mode" = SMCR ]; then
		c=$(sdf -e smc.cdc.seq | grep -c . || true)
		tcheck "smcdump decodes CDC messages ($c)" "$([ "$c" -gt 0 ] && echo 0 || echo 1)"
		echo "truth.smcdump.cdc_messages=$c" >>"$dir/truth"
	fi
	local n
	case "$sc" in
	multilink)
		# Failover: both sides send failover-validation CDCs on the surviving link, and the
		# lost link is deleted with reason LOST_PATH (0x00010000), not as "all".
		n=$(sdf -Y 'smc.cdc.flags.failover_validation == 1' -e frame.number | grep -c . || true)
		echo "truth.smcdump.failover_validation_cdcs=$n" >>"$dir/truth"
		tcheck "smcdump: failover-validation CDCs ($n)" "$([ "$n" -ge 1 ] && echo 0 || echo 1)"
		n=$(sdf -e smc.llc.type -e smc.llc.delete.reason -e smc.llc.delete.all | grep -cxP '36\t65536\t0' || true)
		echo "truth.smcdump.delete_link_lost_path=$n" >>"$dir/truth"
		tcheck "smcdump: DELETE_LINK LOST_PATH for one link ($n)" "$([ "$n" -ge 1 ] && echo 0 || echo 1)" ;;
	slow-reader | lossy | silent-link)
		verify_expert_tool "$sc" "$dir" "$pcap" ;;
	teardown)
		# rmmod smc on the client: it deletes the whole link group (reason 0x00020000).
		n=$(sdf -Y 'ip.src == 10.10.0.2' -e smc.llc.type -e smc.llc.delete.reason -e smc.llc.delete.all | grep -cxP '36\t131072\t1' || true)
		echo "truth.smcdump.client_delete_link_all=$n" >>"$dir/truth"
		tcheck "smcdump: client DELETE_LINK all, reason 0x00020000 ($n)" "$([ "$n" -ge 1 ] && echo 0 || echo 1)" ;;
	decline-nordma | decline-ueid)
		dc=$(sdf -Y 'smc.clc.type == 4' -e smc.clc.decline.reason | head -1)
		tcheck "smcdump decline reason ($dc) is the client's peer_diag ($(kv "$dir/truth" truth.client.conn0.peer_diag))" \
			"$([ $((dc)) = $(($(kv "$dir/truth" truth.client.conn0.peer_diag))) ] 2>/dev/null && echo 0 || echo 1)" ;;
	no-ueid | ipv6)
		dc=$(sdf -Y 'smc.clc.type == 4' -e smc.clc.decline.reason | head -1)
		tcheck "smcdump decline reason ($dc) is the client's reason ($(kv "$dir/truth" truth.client.conn0.reason))" \
			"$([ $((dc)) = $(($(kv "$dir/truth" truth.client.conn0.reason))) ] 2>/dev/null && echo 0 || echo 1)" ;;
	esac
}

# step_rc DIR NAME prints the exit status of an e2e step ("none" when it did not run).
step_rc() { sed -n "s/^STEP $2 rc=//p" "$1/client/e2e.txt" 2>/dev/null | head -1 | grep . || echo none; }

# verify_e2e checks the project's binaries in the e2e-* scenarios against the kernel
# (smclab's report in the same guest) and the wire; lab/e2e_test.go asserts on the same
# files in more detail.
# verify_bench DIR (bench-sockperf): sockperf's connection was SMC-R in the kernel's
# view, every run measured; DIR/bench.txt compares smcping with sockperf per size: the
# median over the rounds of the pairs' p50 ratio smcping/sockperf - 1, with its range, and
# each tool's CPU per round trip on the client and on the server, the median over the
# rounds of each run's (what is counted: lab/guest/scenarios.sh, bench-sockperf): one run
# that a busy host slows down moves a median, not the whole column. The goal (probe/BENCH.md):
# p50 within 5 %, CPU per round trip at most 1.2x sockperf's.
verify_bench() {
	local dir=$1 clog="$dir/client/client.log"
	check "sockperf ran over SMC-R (smc_diag: mode=SMCR towards port 11111)" \
		"$(grep -q '^BENCH check socket .*mode=SMCR' "$clog" && echo 0 || echo 1)"
	check "every run measured (no 'none' in the BENCH lines)" \
		"$(grep '^BENCH round=' "$clog" | grep -q none && echo 1 || echo 0)"
	{
		echo "bench-sockperf, kernel $KVER: smcping vs sockperf --full-rtt on SMC-R between the guests"
		echo "(TCG guests: round trips are milliseconds; p50 diff: median and range over the rounds of each back-to-back pair's ratio;"
		echo " CPU: user + system time per round trip, the median over the rounds; client from its socket to its exit, server over each run only)"
		grep -h '^BENCH' "$clog" 2>/dev/null | awk '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
			return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
		}
		# med(S, T, W): the median over the runs of tool T at size S of its CPU per round trip (usec), W cli or srv.
		function med(s, t, w,   i, m, x) {
			m = 0; delete x
			for (i = 1; i <= runs[s, t]; i++) if (rtn[s, t, i] > 0) x[++m] = tk[s, t, w, i] * 1e4 / rtn[s, t, i]
			return m ? median(x, m) : 0
		}
		/^BENCH env/ { env = $0; sub(/^BENCH env /, "", env) }
		# smcping server threads over one run (TID:ticks:voluntary:involuntary, before and
		# after): the busiest is the one that served the run, the rest are the Go runtime.
		/^BENCH threads/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			delete b0
			nb = split(v["before"], tb, ",")
			for (i = 1; i <= nb; i++) if (split(tb[i], f, ":") == 4) { b0[f[1], "t"] = f[2]; b0[f[1], "v"] = f[3] }
			na = split(v["after"], ta, ",")
			top = -1; all = 0; topv = 0; allv = 0
			for (i = 1; i <= na; i++) if (split(ta[i], f, ":") == 4) {
				dt = f[2] - b0[f[1], "t"]; dv = f[3] - b0[f[1], "v"]
				all += dt; allv += dv
				if (dt > top) { top = dt; topv = dv }
			}
			thr[v["size"], "serve"] += top; thr[v["size"], "rest"] += all - top
			thr[v["size"], "servev"] += topv; thr[v["size"], "restv"] += allv - topv
		}
		/^BENCH round=/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			k = v["round"] " " v["size"]
			p[k, v["tool"]] = v["p50_us"]
			j = ++runs[v["size"], v["tool"]]
			tk[v["size"], v["tool"], "cli", j] = v["cli_ticks"]
			tk[v["size"], v["tool"], "srv", j] = v["srv_ticks"]
			rtn[v["size"], v["tool"], j] = v["rtts"]
			ticks[v["size"], v["tool"], "start"] += v["start_ticks"]
			rt[v["size"], v["tool"]] += v["rtts"]
			sizes[v["size"]] = 1; rounds[v["round"]] = 1
		}
		END {
			if (env != "") print "guest: " env
			printf "%6s %6s %11s %11s %8s %8s %8s | %-25s | %-25s\n", "", "", "p50", "", "", "", "", "client CPU/rt", "server CPU/rt"
			printf "%6s %6s %11s %11s %8s %8s %8s | %8s %8s %7s | %8s %8s %7s\n", "size", "rounds", "sockperf", "smcping", "diff", "min", "max", "sockperf", "smcping", "ratio", "sockperf", "smcping", "ratio"
			ns = 0
			for (s in sizes) sz[++ns] = s + 0
			median(sz, ns) # sorts them
			for (si = 1; si <= ns; si++) {
				s = sz[si]
				n = 0; delete r; delete a; delete b
				for (k in rounds) if (((k " " s), "sockperf") in p && ((k " " s), "smcping") in p) {
					x = p[k " " s, "sockperf"]; y = p[k " " s, "smcping"]
					if (x > 0) { n++; r[n] = y / x - 1; a[n] = x; b[n] = y }
				}
				if (n == 0) continue
				lo = 1e9; hi = -1e9
				for (i = 1; i <= n; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
				cs = med(s, "sockperf", "cli"); cm = med(s, "smcping", "cli")
				ss = med(s, "sockperf", "srv"); sm = med(s, "smcping", "srv")
				printf "%6d %6d %9.1fus %9.1fus %+7.1f%% %+7.1f%% %+7.1f%% | %6.1fus %6.1fus %6.2fx | %6.1fus %6.1fus %6.2fx\n", s, n, median(a, n), median(b, n), 100 * median(r, n), 100 * lo, 100 * hi, cs, cm, (cs > 0 ? cm / cs : 0), ss, sm, (ss > 0 ? sm / ss : 0)
			}
			printf "round trips per run (mean) and process start (CPU before the socket, mean per run):\n"
			for (si = 1; si <= ns; si++) {
				s = sz[si]
				printf "%6d  sockperf %6.0f rt %5.1fms start | smcping %6.0f rt %5.1fms start\n", s, rt[s, "sockperf"] / runs[s, "sockperf"], ticks[s, "sockperf", "start"] * 10 / runs[s, "sockperf"], rt[s, "smcping"] / runs[s, "smcping"], ticks[s, "smcping", "start"] * 10 / runs[s, "smcping"]
			}
			hdr = 0
			for (si = 1; si <= ns; si++) {
				s = sz[si]
				if (!((s, "serve") in thr) || !rt[s, "smcping"]) continue
				if (!hdr++) printf "smcping server per round trip, all rounds: the thread that served the run | the Go runtime'"'"'s other threads:\n"
				n = rt[s, "smcping"]
				printf "%6d  %6.1fus CPU %5.2f sleeps | %6.1fus CPU %5.2f sleeps\n", s, thr[s, "serve"] * 1e4 / n, thr[s, "servev"] / n, thr[s, "rest"] * 1e4 / n, thr[s, "restv"] / n
			}
		}'
	} >"$dir/bench.txt"
}

verify_e2e() {
	local sc=$1 dir=$2
	local c="$dir/client" pcap="$dir/capture.pcap" have
	for have in smcping smcdump smclab; do
		tcheck "$have is in the guest" "$(grep -qx "HAVE $have" "$c/e2e.txt" 2>/dev/null && echo 0 || echo 1)"
	done
	# SMC-D over the loopback has no wire: its capture is smcdump's on the guest's lo.
	if [ "$sc" = e2e-smcd ]; then
		verify_smcd "$dir"
		return
	fi
	local writes nonclc decl
	# smcping's ports: 5000, and 5002 for the observation window (scenarios.sh OBS_PORT).
	writes=$(tshark_count "$pcap" 'infiniband.bth.opcode in {6,7,8,9,10,11}')
	nonclc=$(tshark_count "$pcap" 'tcp.port in {5000,5002} && tcp.len>0 && !(tcp.len>=4 && tcp.payload[0:4]==e2:d4:c3:d9)')
	decl=$(tshark_count "$pcap" 'tcp.port in {5000,5002} && tcp.len>=8 && tcp.payload[0:4]==e2:d4:c3:d9 && tcp.payload[4]==4')
	fact wire.rdma_write_frames "$writes"
	fact wire.tcp_payload_not_clc "$nonclc"
	fact wire.clc_decline_segments "$decl"
	case "$sc" in
	e2e-smc)
		check "wire: RDMA WRITEs ($writes), no TCP payload on 5000 but CLC ($nonclc), no Decline ($decl)" \
			"$([ "$writes" -gt 0 ] && [ "$nonclc" = 0 ] && [ "$decl" = 0 ] && echo 0 || echo 1)"
		check "kernel: client SMC-Rv2 successes ($(kv "$c/client.report" smcr.clnt_v2_succ))" \
			"$([ "$(kv "$c/client.report" smcr.clnt_v2_succ)" -ge 3 ] 2>/dev/null && echo 0 || echo 1)"
		tcheck "smcping --check exit 0 and says OK SMC-R via rxe0 (rc=$(step_rc "$dir" smcping-check))" \
			"$([ "$(step_rc "$dir" smcping-check)" = 0 ] && grep -q '^OK SMC-R via rxe0' "$c/smcping-check.txt" && echo 0 || echo 1)"
		local st
		for st in smcping-require smcping-plain smcping-compare smcping-bw smcping-ipproto; do
			tcheck "$st exit 0 (rc=$(step_rc "$dir" $st))" "$([ "$(step_rc "$dir" $st)" = 0 ] && echo 0 || echo 1)"
		done
		if [ -s "$c/live.pcapng" ]; then
			local key='-e ip.src -e ip.dst -e tcp.seq_raw -e tcp.len -e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode'
			# shellcheck disable=SC2086
			timeout 120 tshark -n -r "$c/live.pcapng" -T fields $key 2>/dev/null | sort >"$dir/live.keys"
			# shellcheck disable=SC2086
			timeout 120 tshark -n -r "$pcap" -T fields $key 2>/dev/null | sort >"$dir/capture.keys"
			local nl missing
			nl=$(wc -l <"$dir/live.keys")
			missing=$(comm -23 "$dir/live.keys" "$dir/capture.keys" | wc -l)
			fact e2e.live_frames "$nl"
			tcheck "smcdump -i eth0 live capture: $nl frames, all on the host's capture ($missing missing)" \
				"$([ "$nl" -gt 50 ] && [ "$missing" = 0 ] && echo 0 || echo 1)"
		else
			tcheck "smcdump -i eth0 live capture written" 1
		fi
		for st in smcnl-live rdmastats-live; do
			tcheck "$st (go test -run '^TestLive' in the guest) exit 0 (rc=$(step_rc "$dir" $st))" \
				"$([ "$(step_rc "$dir" $st)" = 0 ] && ! grep -q -- '^--- SKIP' "$c/$st.txt" && echo 0 || echo 1)"
		done
		;;
	e2e-ipproto)
		check "wire: RDMA WRITEs ($writes), no TCP payload on 5000 but CLC ($nonclc), no Decline ($decl)" \
			"$([ "$writes" -gt 0 ] && [ "$nonclc" = 0 ] && [ "$decl" = 0 ] && echo 0 || echo 1)"
		tcheck "smcping --proto ipproto --check exit 0 and says OK SMC-R via rxe0 (rc=$(step_rc "$dir" ipproto-check))" \
			"$([ "$(step_rc "$dir" ipproto-check)" = 0 ] && grep -q '^OK SMC-R via rxe0' "$c/ipproto-check.txt" && echo 0 || echo 1)"
		tcheck "smcping --proto ipproto --require smc exit 0 (rc=$(step_rc "$dir" ipproto-json))" \
			"$([ "$(step_rc "$dir" ipproto-json)" = 0 ] && echo 0 || echo 1)"
		fact e2e.ipproto_diag "$(grep '^socket ' "$c/ipproto-diag.txt" 2>/dev/null | grep -oE '(family|src|dst)=[^ ]+' | paste -sd, | sed 's/,family/;family/g')"
		;;
	e2e-decline)
		# The server's first reason is its Decline's: NOSMCRDEV on 6.12; on 7.3 the client
		# also proposes SMC-Dv2 (every host has the DIBS loopback), the server looks for
		# an SMC-Dv2 device first and keeps that reason, NOSMCD2DEV
		# (smc_find_ism_v2_device_serv, smc_init_info_store_rc in net/smc/af_smc.c).
		local peer=0x03030002
		[ "$KERNEL" = 7.3 ] && peer=0x03030007
		fact e2e.decline_peer_diag "$peer"
		check "wire: a CLC Decline ($decl), no RDMA WRITE ($writes)" \
			"$([ "$decl" -ge 1 ] && [ "$writes" = 0 ] && echo 0 || echo 1)"
		tcheck "smcping --check fails and names 0x05000000 PEERDECL, peer $peer (rc=$(step_rc "$dir" smcping-check))" \
			"$([ "$(step_rc "$dir" smcping-check)" != 0 ] && grep -q "^FAIL fallback 0x05000000 PEERDECL (peer $peer" "$c/smcping-check.txt" && echo 0 || echo 1)"
		tcheck "smcping --require smc exits 1 (rc=$(step_rc "$dir" smcping-require))" \
			"$([ "$(step_rc "$dir" smcping-require)" = 1 ] && echo 0 || echo 1)"
		tcheck "smcping without --require exits 0 (rc=$(step_rc "$dir" smcping-plain))" \
			"$([ "$(step_rc "$dir" smcping-plain)" = 0 ] && echo 0 || echo 1)"
		;;
	e2e-nosmc)
		check "wire: no CLC Decline ($decl), no RDMA WRITE ($writes), data on TCP ($nonclc)" \
			"$([ "$decl" = 0 ] && [ "$writes" = 0 ] && [ "$nonclc" -gt 0 ] && echo 0 || echo 1)"
		tcheck "smcping --check fails and names 0x03010000 PEERNOSMC (rc=$(step_rc "$dir" smcping-check))" \
			"$([ "$(step_rc "$dir" smcping-check)" != 0 ] && grep -q '^FAIL fallback 0x03010000 PEERNOSMC' "$c/smcping-check.txt" && echo 0 || echo 1)"
		tcheck "smcping --require smc exits 1 (rc=$(step_rc "$dir" smcping-require))" \
			"$([ "$(step_rc "$dir" smcping-require)" = 1 ] && echo 0 || echo 1)"
		tcheck "smcping without --require exits 0 (rc=$(step_rc "$dir" smcping-plain))" \
			"$([ "$(step_rc "$dir" smcping-plain)" = 0 ] && echo 0 || echo 1)"
		;;
	e2e-hsctrl)
		verify_hsctrl "$dir"
		;;
	esac
	if [ "$sc" != e2e-ipproto ] && [ "$sc" != e2e-hsctrl ] && grep -qx 'HAVE smclab' "$c/e2e.txt" 2>/dev/null; then
		tcheck "smclab stats exit 0 (rc=$(step_rc "$dir" smclab-stats))" "$([ "$(step_rc "$dir" smclab-stats)" = 0 ] && echo 0 || echo 1)"
	fi
	verify_smcdump "$sc" "$dir" "$(case "$sc" in e2e-smc | e2e-ipproto | e2e-hsctrl) echo SMCR ;; *) echo TCP-FALLBACK ;; esac)"
}

# clc_messages PCAP prints one line per CLC message on the smcping ports, from raw bytes
# (tshark's TCP payload, not the project's decoder): "SRCPORT DSTPORT EYECATCHER TYPE
# VERSION TYPEV1 TYPEV2" with the header of net/smc/smc_clc.h (struct smc_clc_msg_hdr:
# eyecatcher "SMCR" e2d4c3d9 or "SMCD" e2d4c3c4 in EBCDIC, type at offset 4, then a byte
# of version (high nibble), typev2 (bits 2-3) and typev1 (bits 0-1); SMC_TYPE_R 0, _D 1,
# _N 2, _B 3: a Proposal offers typev1 for v1 and typev2 for v2).
clc_messages() {
	timeout 120 tshark -n -r "$1" -Y 'tcp.port in {5000,5001,5002} && tcp.len>=8 && tcp.payload[0:3]==e2:d4:c3' \
		-T fields -e tcp.srcport -e tcp.dstport -e tcp.payload 2>/dev/null |
		awk 'function byte(h) { return (index("0123456789abcdef", substr(h, 1, 1)) - 1) * 16 + index("0123456789abcdef", substr(h, 2, 1)) - 1 }
			{ p = tolower($3); gsub(/:/, "", p); b = byte(substr(p, 15, 2))
			printf "%s %s %s %d %d %d %d\n", $1, $2, (substr(p, 7, 2) == "c4" ? "SMCD" : "SMCR"),
				byte(substr(p, 9, 2)), int(b / 16), b % 4, int(b / 4) % 4 }'
}

# conn_facts LINE records the kernel's word on one client connection ("CLIENT connN A ->
# B ... mode= reason= peer_diag= token=") as truth.client.connN.* facts and leaves its
# number and values in i, m, rs and pd for the caller's checks.
conn_facts() {
	local tok
	i=$(sed -E 's/^CLIENT conn([0-9]+) .*/\1/' <<<"$1")
	m=$(kv <(echo "$1") mode) rs=$(kv <(echo "$1") reason) pd=$(kv <(echo "$1") peer_diag)
	tok=$(kv <(echo "$1") token)
	fact "client.conn$i.mode" "$m"
	fact "client.conn$i.reason" "$rs"
	fact "client.conn$i.peer_diag" "$pd"
	[ -n "$tok" ] && fact "client.conn$i.token" "$tok"
	return 0
}

# verify_smcd (e2e-smcd, one guest): the kernel's view (smcping --diag's smc_diag line, SMC
# netlink statistics and SMC-D link groups from smclab) against the CLC handshakes that
# smcdump captured on lo, read from raw bytes with tshark; then the project's tools.
verify_smcd() {
	local dir=$1 c="$1/client" pcap="$1/client/smcd-lo.pcapng"
	local line i m rs pd n=0
	while read -r line; do
		conn_facts "$line"
		fact "client.conn$i.src" "$(awk '{print $3}' <<<"$line")"
		check "client conn$i mode=$m reason=$rs peer_diag=$pd (want SMCD 0x00000000 0x00000000)" \
			"$([ "$m" = SMCD ] && [ "$rs" = 0x00000000 ] && [ "$pd" = 0x00000000 ] && echo 0 || echo 1)"
		n=$((n + 1))
	done < <(grep -E '^CLIENT conn[0-9]+ [0-9]' "$c/client.log" 2>/dev/null)
	fact client.conns "$n"
	check "the two smcping --diag clients made a connection each ($n)" "$([ "$n" = 2 ] && echo 0 || echo 1)"
	check "both smcping --diag runs finished (rc=$(step_rc "$dir" smcping-diag), $(step_rc "$dir" smcping-diag2))" \
		"$([ "$(step_rc "$dir" smcping-diag)" = 0 ] && [ "$(step_rc "$dir" smcping-diag2)" = 0 ] && echo 0 || echo 1)"
	grep -E '^CLIENT conn[0-9]+ n=' "$c/client.log" | sed -E 's/^CLIENT (conn[0-9]+) n=([0-9]+) size=([0-9]+).*/\1 \2 \3/' |
		while read -r cn nn sz; do
			fact "client.$cn.round_trips" "$nn"
			fact "client.$cn.msg_size" "$sz"
		done
	local rep="$c/client.report" k
	for k in smcd.clnt_v2_succ smcd.srv_v2_succ smcd.rx_bytes smcd.tx_bytes; do
		fact "stats.$k" "$(kv "$rep" "$k" || true)"
	done
	check "kernel: SMC-Dv2 successes as client and server ($(kv "$rep" smcd.clnt_v2_succ), $(kv "$rep" smcd.srv_v2_succ))" \
		"$([ "$(kv "$rep" smcd.clnt_v2_succ)" -ge 2 ] 2>/dev/null && [ "$(kv "$rep" smcd.srv_v2_succ)" -ge 2 ] 2>/dev/null && echo 0 || echo 1)"
	local ngrp
	ngrp=$(grep -c '^lgr_smcd ' "$c/smclab-lgr.txt" 2>/dev/null || true)
	fact kernel.smcd_link_groups_observed "$ngrp"
	check "kernel: SMC-D link groups while the paced connection ran ($ngrp)" "$([ "$ngrp" -ge 2 ] && echo 0 || echo 1)"
	fact kernel.dibs_lo_gid "$(cat "$c/dibs-lo-gid.txt" 2>/dev/null)"

	# The wire: lo, as smcdump wrote it.
	check "lo capture written ($(basename "$pcap"))" "$([ -s "$pcap" ] && echo 0 || echo 1)"
	local frames syn synack props accs confs decl nonclc
	frames=$(capinfos -c -M "$pcap" 2>/dev/null | awk '/Number of packets/ {print $NF}')
	fact frames "$frames"
	syn=$(tshark_count "$pcap" 'tcp.dstport==5000 && tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.options.experimental.exid==0xe2d4')
	synack=$(tshark_count "$pcap" 'tcp.srcport==5000 && tcp.flags.syn==1 && tcp.flags.ack==1 && tcp.options.experimental.exid==0xe2d4')
	nonclc=$(tshark_count "$pcap" 'tcp.port==5000 && tcp.len>0 && !(tcp.len>=4 && tcp.payload[0:3]==e2:d4:c3)')
	clc_messages "$pcap" >"$dir/clc.txt"
	props=$(awk '$4 == 1' "$dir/clc.txt" | wc -l)
	# An Accept or Confirm names the chosen type in typev1 (smc_clc_send_confirm_accept;
	# typev2 carries the first-contact bit).
	accs=$(awk '$4 == 2 && $3 == "SMCD" && $5 == 2 && $6 == 1' "$dir/clc.txt" | wc -l)
	confs=$(awk '$4 == 3 && $3 == "SMCD" && $5 == 2 && $6 == 1' "$dir/clc.txt" | wc -l)
	decl=$(awk '$4 == 4' "$dir/clc.txt" | wc -l)
	fact wire.syn_with_smc_option "$syn"
	fact wire.synack_with_smc_option "$synack"
	# SMC-D moves its data through the DMBs: nothing on lo is RDMA (verify_smcdump counts).
	fact wire.rdma_write_frames "$(tshark_count "$pcap" 'infiniband.bth.opcode in {6,7,8,9,10,11}')"
	fact wire.clc_proposals "$props"
	fact wire.clc_smcdv2_accepts "$accs"
	fact wire.clc_smcdv2_confirms "$confs"
	fact wire.clc_decline_segments "$decl"
	fact wire.tcp_payload_not_clc "$nonclc"
	fact wire.clc_messages "$(awk '{printf "%s%s>%s:%s/type%d/v%d/typev1=%d/typev2=%d", sep, $1, $2, $3, $4, $5, $6, $7; sep=","}' "$dir/clc.txt")"
	check "wire: $syn SYNs and $synack SYN-ACKs with the SMC option, $props Proposals, $accs SMC-Dv2 Accepts, $confs SMC-Dv2 Confirms, no Decline ($decl), one each per connection" \
		"$([ "$syn" -ge 2 ] && [ "$synack" = "$syn" ] && [ "$props" = "$syn" ] && [ "$accs" = "$syn" ] && [ "$confs" = "$syn" ] && [ "$decl" = 0 ] && echo 0 || echo 1)"
	# Kernel and wire name the same connections: the smc_diag source ports are the
	# Proposals' (the capture holds these two and nothing else).
	local kports wports
	kports=$(grep -oE '^truth\.client\.conn[0-9]+\.src=127\.0\.0\.1:[0-9]+' "$dir/truth" | sed 's/.*://' | sort | paste -sd,)
	wports=$(awk '$4 == 1 {print $1}' "$dir/clc.txt" | sort | paste -sd,)
	check "kernel and wire: the connections from ports $kports are the Proposals' ($wports)" "$([ -n "$kports" ] && [ "$kports" = "$wports" ] && echo 0 || echo 1)"

	# The project's tools.
	tcheck "smcdump -i lo exit 0 after SIGINT (rc=$(step_rc "$dir" smcdump-lo))" "$([ "$(step_rc "$dir" smcdump-lo)" = 0 ] && echo 0 || echo 1)"
	tcheck "smcping --check exit 0 and says OK SMC-D via lo (rc=$(step_rc "$dir" smcping-check))" \
		"$([ "$(step_rc "$dir" smcping-check)" = 0 ] && grep -q '^OK SMC-D via lo ' "$c/smcping-check.txt" && echo 0 || echo 1)"
	local st
	for st in smcping-check-json smcping-require smcping-compare smctop-once smctop-metrics; do
		tcheck "$st exit 0 (rc=$(step_rc "$dir" $st))" "$([ "$(step_rc "$dir" $st)" = 0 ] && echo 0 || echo 1)"
	done
	local bin="$BUILD/host-smcdump" conns smcd
	if [ -x "$bin" ]; then
		timeout 120 "$bin" -r "$pcap" -q -z smc,conns >"$dir/smcdump-conns.txt" 2>&1
		conns=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /:5000$/' "$dir/smcdump-conns.txt" | wc -l)
		smcd=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /:5000$/ && $4 == "SMC-D"' "$dir/smcdump-conns.txt" | wc -l)
		fact smcdump.smcd_conns "$smcd"
		tcheck "smcdump -z smc,conns calls all $conns connections to port 5000 SMC-D ($smcd)" \
			"$([ "$conns" = "$syn" ] && [ "$smcd" = "$conns" ] && echo 0 || echo 1)"
	fi
	verify_smcdump e2e-smcd "$dir" SMCD "$pcap"
}

# verify_hsctrl (e2e-hsctrl): the server's controller took the SMC option off the
# SYN-ACKs of port 5001 and nothing else: on the wire, SYNs to 5001 carry the option and
# its SYN-ACKs do not, no CLC on 5001, SMC-R (CLC and RDMA WRITEs) on 5000; in the kernels,
# both sides of 5001 fell back with PEERNOSMC; and the project's tools say so.
verify_hsctrl() {
	local dir=$1 c="$1/client" s="$1/server" pcap="$1/capture.pcap"
	local syn1 synack1 syn0 synack0 clc1 clc0 ctl
	ctl=$(sed -n 's/^hs_ctrl=//p' "$s/hsctrl.txt" 2>/dev/null)
	fact server.hs_ctrl "$ctl"
	check "server: net.smc.hs_ctrl is the lab's controller ($ctl)" "$([ "$ctl" = labnosmc5001 ] && echo 0 || echo 1)"
	syn1=$(tshark_count "$pcap" 'tcp.dstport==5001 && tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.options.experimental.exid==0xe2d4')
	synack1=$(tshark_count "$pcap" 'tcp.srcport==5001 && tcp.flags.syn==1 && tcp.flags.ack==1')
	local synack1opt
	synack1opt=$(tshark_count "$pcap" 'tcp.srcport==5001 && tcp.flags.syn==1 && tcp.flags.ack==1 && tcp.options.experimental.exid==0xe2d4')
	syn0=$(tshark_count "$pcap" 'tcp.dstport==5000 && tcp.flags.syn==1 && tcp.flags.ack==0 && tcp.options.experimental.exid==0xe2d4')
	synack0=$(tshark_count "$pcap" 'tcp.srcport==5000 && tcp.flags.syn==1 && tcp.flags.ack==1 && tcp.options.experimental.exid==0xe2d4')
	clc1=$(tshark_count "$pcap" 'tcp.port==5001 && tcp.len>=4 && tcp.payload[0:3]==e2:d4:c3')
	clc0=$(tshark_count "$pcap" 'tcp.port==5000 && tcp.len>=4 && tcp.payload[0:3]==e2:d4:c3')
	fact wire.port5001.syn_with_smc_option "$syn1"
	fact wire.port5001.synack "$synack1"
	fact wire.port5001.synack_with_smc_option "$synack1opt"
	fact wire.port5001.clc_segments "$clc1"
	fact wire.port5000.syn_with_smc_option "$syn0"
	fact wire.port5000.synack_with_smc_option "$synack0"
	fact wire.port5000.clc_segments "$clc0"
	check "wire 5001: $syn1 SYNs with the SMC option, $synack1 SYN-ACKs of which $synack1opt with it, $clc1 CLC segments" \
		"$([ "$syn1" -ge 4 ] && [ "$synack1" -ge "$syn1" ] && [ "$synack1opt" = 0 ] && [ "$clc1" = 0 ] && echo 0 || echo 1)"
	check "wire 5000: $syn0 SYNs and $synack0 SYN-ACKs with the SMC option, $clc0 CLC segments, RDMA WRITEs ($(kv "$dir/truth" truth.wire.rdma_write_frames))" \
		"$([ "$syn0" -ge 2 ] && [ "$synack0" -ge "$syn0" ] && [ "$clc0" -ge 6 ] && [ "$(kv "$dir/truth" truth.wire.rdma_write_frames)" -gt 0 ] && echo 0 || echo 1)"
	local fb
	fb=$(grep -c ':5001 -> .* mode=TCP-FALLBACK reason=0x03010000' "$s/server.log" 2>/dev/null || true)
	fact server.port5001_fallbacks_peernosmc "$fb"
	check "server: every connection to 5001 fell back with PEERNOSMC ($fb of $(grep -c ':5001 -> ' "$s/server.log" 2>/dev/null || true))" \
		"$([ "$fb" -ge 4 ] && [ "$fb" = "$(grep -c ':5001 -> ' "$s/server.log")" ] && echo 0 || echo 1)"
	local st
	for st in hsctrl-smc-check hsctrl-ipproto-smc; do
		tcheck "$st: exit 0, OK SMC-R via rxe0 (rc=$(step_rc "$dir" $st))" \
			"$([ "$(step_rc "$dir" $st)" = 0 ] && grep -q '^OK SMC-R via rxe0' "$c/$st.txt" && echo 0 || echo 1)"
	done
	for st in hsctrl-nosmc-check hsctrl-ipproto-nosmc; do
		tcheck "$st: fails, FAIL fallback 0x03010000 PEERNOSMC (rc=$(step_rc "$dir" $st))" \
			"$([ "$(step_rc "$dir" $st)" != 0 ] && grep -q '^FAIL fallback 0x03010000 PEERNOSMC' "$c/$st.txt" && echo 0 || echo 1)"
	done
	tcheck "hsctrl-nosmc-require exits 1 (rc=$(step_rc "$dir" hsctrl-nosmc-require))" "$([ "$(step_rc "$dir" hsctrl-nosmc-require)" = 1 ] && echo 0 || echo 1)"
	tcheck "hsctrl-nosmc-plain exits 0 (rc=$(step_rc "$dir" hsctrl-nosmc-plain))" "$([ "$(step_rc "$dir" hsctrl-nosmc-plain)" = 0 ] && echo 0 || echo 1)"
	local bin="$BUILD/host-smcdump" n1 why1 n0 smcr0
	if [ -x "$bin" ]; then
		timeout 120 "$bin" -r "$pcap" -q -z smc,conns >"$dir/smcdump-conns.txt" 2>&1
		n1=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /:5001$/' "$dir/smcdump-conns.txt" | wc -l)
		why1=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /:5001$/ && $4 == "fallback" && /option missing on server SYN-ACK/' "$dir/smcdump-conns.txt" | wc -l)
		n0=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^10\.10\.0\.1:5000$/ && $2 ~ /^10\.10\.0\.2:/' "$dir/smcdump-conns.txt" | wc -l)
		smcr0=$(awk '$1 ~ /^[0-9]+$/ && $3 ~ /^10\.10\.0\.1:5000$/ && $2 ~ /^10\.10\.0\.2:/ && $4 == "SMC-R"' "$dir/smcdump-conns.txt" | wc -l)
		fact smcdump.port5001_option_missing_on_synack "$why1"
		tcheck "smcdump -z smc,conns: the $n1 connections to 5001 fell back, option missing on the server's SYN-ACK ($why1)" \
			"$([ "$n1" = "$syn1" ] && [ "$why1" = "$n1" ] && echo 0 || echo 1)"
		tcheck "smcdump -z smc,conns: the client's $n0 connections to 5000 are SMC-R ($smcr0)" \
			"$([ "$n0" -ge 2 ] && [ "$smcr0" = "$n0" ] && echo 0 || echo 1)"
	fi
}

# publish_samples DIR SCENARIO... copies the captures and a compact log (ground truth,
# verification, the guests' own reports) of verified scenarios into DIR.
publish_samples() {
	local dest=$1 sc d r done=()
	shift
	mkdir -p "$dest"
	for sc in "$@"; do
		case "$sc" in
		e2e-smcd)
			publish_smcd "$dest"
			done+=(smcd-loopback)
			continue
			;;
		e2e-*) continue ;;
		esac
		done+=("$sc")
		d="$OUT/$sc"
		cp "$d/capture.pcap" "$dest/$sc.pcap"
		{
			echo "# smcscope lab ground truth for $sc.pcap (lab/verify.sh; truth.* lines are machine-readable)"
			cat "$d/truth"
			echo "# checks"
			cat "$d/verify.log"
		} >"$dest/$sc.log"
		# The guests' own words, one file per side (the tests read connection lines from
		# both and link groups/statistics from the client's).
		for r in client server; do
			cat "$d/$r/$r.log" "$d/$r/$r.report" >"$dest/$sc.$r.log" 2>/dev/null || true
		done
	done
	write_samples_readme "$dest"
	log "published ${done[*]:-nothing} to $dest"
}

# publish_smcd DIR: e2e-smcd's capture (smcdump's on the guest's lo) is the sample
# smcd-loopback.pcapng, with its ground truth and the guest's own words in the same layout
# as the two-guest samples (one guest: no server log).
publish_smcd() {
	local dest=$1 d="$OUT/e2e-smcd"
	cp "$d/client/smcd-lo.pcapng" "$dest/smcd-loopback.pcapng"
	{
		echo "# smcscope lab ground truth for smcd-loopback.pcapng (lab/verify.sh; truth.* lines are machine-readable)"
		cat "$d/truth"
		echo "# checks"
		cat "$d/verify.log"
	} >"$dest/smcd-loopback.log"
	cat "$d/client/client.log" "$d/client/client.report" >"$dest/smcd-loopback.client.log" 2>/dev/null || true
}

# What each scenario makes the kernels do (the README's words; the numbers come from the
# verified truth files).
declare -A DESCRIBE=(
	[pingpong]="one SMC-Rv2 connection, 500 x 64 B ping-pong (RDMA WRITE + CDC); first contact: CONFIRM_LINK_V2, ADD_LINK_V2 rejected (one RoCE device per side); close, DELETE_RKEY_V2, DELETE_LINK_V2 at client power-off"
	[multiconn]="4 concurrent SMC-Rv2 connections in one link group (1 first contact, 3 reuse), 300/200/120/80 round trips of 64/1000/4096/200 B"
	[multilink]="2 NICs + 2 rxe + PNET table per side: symmetric 2-link group, 2 connections, client eth1 down while idle -> failover to link 1 (DELETE_LINK), traffic resumes, then a new connection"
	[teardown]="one SMC-Rv2 connection (500 x 64 B), then rmmod smc on the client: link group terminated while both run (DELETE_LINK all)"
	[long]="3000 x 64 B ping-pong (cursor wraps in the 64 KiB RMBE), then 1 MiB one-way bulk on a second connection (multi-packet RDMA WRITE)"
	[fallback-nosmc]="plain TCP server: SMC option on the SYN only, none on the SYN-ACK, no CLC; client falls back PEERNOSMC"
	[decline-nordma]="server has SMC and a UEID but no RoCE device: client Proposal, server CLC Decline NOSMCRDEV; client falls back PEERDECL"
	[decline-ueid]="server and client have different UEIDs: client Proposal, server CLC Decline NOSMCDEV; client falls back PEERDECL"
	[no-ueid]="no UEID anywhere: SMC-Rv2 impossible (and SMC-Rv1 over rxe too): client sends a v1-format CLC Decline NOSMCDEV instead of a Proposal"
	[ipv6]="IPv6 connection (fd00:10::/64): SMC-Rv2 is IPv4 only, client sends a CLC Decline NOSMCDEV"
	[slow-reader]="a slow reader: the server (smclab slow-reader) reads at most 16 KiB after each pause of a second while the client streams 4 x 64 KiB (smcping --bw): the 64 KiB RMBE fills, the client's CDCs say write-blocked, the RMBE stays full through every pause"
	[lossy]="a lossy RoCE path: after a clean 20 x 64 B ping-pong, netem on the client's eth0 (under rxe0) drops 2 % and reorders 5 % of what the client sends during a one-way stream of 8 x 64 KiB: PSN jumps, the server's NAKs (PSN sequence error), the client's go-back-N retransmissions, the server's requests sent again when the client's ACK was lost"
	[silent-link]="a peer that stops answering on one link: 2 NICs + 2 rxe as multilink, then the client's eth1 drops all it sends (netem loss 100 %); the server (net.smc.smcr_testlink_time 3 s) sends TEST_LINK on the idle link 2, gets no answer, retransmits it until its retry count is spent, takes link 2 down and deletes it over link 1 (DELETE_LINK lost path); a new connection on link 1"
	[erspan]="Linux's ERSPAN type II session 7 on the client mirrors every TCP and UDP frame its eth0 sends or receives (tc mirred into ers0) to the server's address during a 20 x 64 B ping-pong: each frame is in the capture twice, as the hosts sent it and inside GRE numbered by the session, as a collector would receive it"
	[smcd-loopback]="Linux 7.3, one guest: SMC-Dv2 over the DIBS loopback (device lo) between an smcping server and two clients on 127.0.0.1, 20 x 64 B then 30 x 200 B (first contact, then the link groups reused), captured by smcdump -i lo in the guest (default filter: SYNs and CLC; the data moves through DMBs and never shows on lo)"
)

# expert_readme TRUTH prints the ground truth of an expert scenario for the samples README
# (the facts of verify_slow_reader, verify_lossy, verify_silent_link), nothing for others.
expert_readme() {
	local t=$1
	case "$(kv "$t" truth.scenario)" in
	slow-reader)
		printf '; server (smc_diag at the end of its %s pauses): RMBE full %s times, client CDC write-blocked %s times; read %s B; client buf_full_peer %s; write-blocked CDCs on the wire %s (tshark)' \
			"$(kvd "$t" truth.server.slow_reader.pauses)" "$(kvd "$t" truth.server.slow_reader.rmbe_full_at_pause_end)" \
			"$(kvd "$t" truth.server.slow_reader.peer_write_blocked_at_pause_end)" "$(kvd "$t" truth.server.slow_reader.bytes)" \
			"$(kvd "$t" truth.client.stats.tx_buf_full_peer)" "$(kvd "$t" truth.wire.cdc_write_blocked)" ;;
	lossy)
		printf '; netem dropped %s client frames; wire C->S requests %s, repeated %s, PSN jumps %s (%s PSNs), late %s, as the server took them: runs out of sequence %s, duplicates %s, dropped %s; S->C repeated %s; NAKs PSN sequence error S->C %s; rxe0 server out_of_seq_request %s, duplicate_request %s; client rcvd_seq_err %s, completer_retry_err %s, duplicate_request %s, retry_exceeded_err %s' \
			"$(kvd "$t" truth.client.netem_dropped)" "$(kvd "$t" truth.wire.rc.c2s.requests)" "$(kvd "$t" truth.wire.rc.c2s.repeats)" \
			"$(kvd "$t" truth.wire.rc.c2s.jumps)" "$(kvd "$t" truth.wire.rc.c2s.missing)" "$(kvd "$t" truth.wire.rc.c2s.late)" \
			"$(kvd "$t" truth.wire.rc.c2s.responder_runs)" "$(kvd "$t" truth.wire.rc.c2s.responder_dups)" "$(kvd "$t" truth.wire.rc.c2s.responder_dropped)" \
			"$(kvd "$t" truth.wire.rc.s2c.repeats)" "$(kvd "$t" truth.wire.nak_psn_seq_err.s2c)" \
			"$(kvd "$t" truth.server.rxe0.out_of_seq_request)" "$(kvd "$t" truth.server.rxe0.duplicate_request)" \
			"$(kvd "$t" truth.client.rxe0.rcvd_seq_err)" "$(kvd "$t" truth.client.rxe0.completer_retry_err)" \
			"$(kvd "$t" truth.client.rxe0.duplicate_request)" "$(kvd "$t" truth.client.rxe0.retry_exceeded_err)" ;;
	silent-link)
		printf '; links before/after the silence %s/%s; link 2 TEST_LINK requests %s, responses %s, the last (PSN %s) sent %s times and answered %s times; DELETE_LINK link 2 lost path by the server %s; server smcr_link_down %s; server rxe1 completer_retry_err %s, retry_exceeded_err %s; client rxe1 duplicate_request %s' \
			"$(kvd "$t" truth.client.links_before_silence)" "$(kvd "$t" truth.client.links_after_silence)" \
			"$(kvd "$t" truth.wire.link2.test_link_requests)" "$(kvd "$t" truth.wire.link2.test_link_responses)" \
			"$(kvd "$t" truth.wire.link2.last_test_link_psn)" "$(kvd "$t" truth.wire.link2.last_test_link_frames)" \
			"$(kvd "$t" truth.wire.link2.last_test_link_answered)" "$(kvd "$t" truth.wire.delete_link_2_lost_path_by_server)" \
			"$(kvd "$t" truth.server.smcr_link_down)" "$(kvd "$t" truth.server.rxe1.completer_retry_err)" \
			"$(kvd "$t" truth.server.rxe1.retry_exceeded_err)" "$(kvd "$t" truth.client.rxe1.duplicate_request)" ;;
	esac
}

write_samples_readme() {
	local dest=$1 f sc
	{
		cat <<'HDR'
# Lab captures (Linux 6.12, SMC-Rv2 over Soft-RoCE, two QEMU guests)

Regenerate with `lab/run all` (about 5-10 minutes on 2 cores under TCG; see lab/README.md).
Server 10.10.0.1 (eth1 10.10.0.11), client 10.10.0.2 (eth1 10.10.0.12), TCP port 5000,
RoCEv2 on UDP 4791; captured by QEMU filter-dump on the server's NIC(s), so every frame
of the virtual wire in both directions, from boot to power-off.

Identifiers are made to differ between the sides: before the client starts, the server
opens a throwaway SMC connection to itself (lo shares a PNET ID with rxe0; it never
reaches the wire), which advances its QP numbers and alert tokens. That connection ends
in a fallback (first-link timeout), so the server's fallback statistics in SMC scenarios
show server 0x02010000 / client 0x05000000 once; it is not part of any capture. Message
sizes and counts differ per connection.

`smcd-loopback.pcapng` is the exception: Linux 7.3 built by the lab, one guest, SMC-Dv2
over the DIBS loopback between two processes, captured by the project's `smcdump -i lo` in
the guest (regenerate with `lab/run --kernel 7.3 --samples samples e2e-smcd`). Its ground
truth is the kernel's (smc_diag, SMC netlink statistics and link groups) against the CLC
headers read from raw bytes with tshark; there is no server log, server and client are
processes of one guest.

`slow-reader.pcap`, `lossy.pcap` and `silent-link.pcap` make the findings of a slow reader,
a lossy RoCE path and a peer that stops answering LLC happen (lab/README.md, "The expert
scenarios"; `smcdump -r X.pcap -q -z smc,expert`). Their ground truth adds the kernels'
word on exactly that: the slow reader's smc_diag line at the end of every pause (its RMBE
full, the client's last CDC write-blocked), the SMC statistics' full-buffer counts, netem's
drop count, the rxe counters of both sides (`out_of_seq_request`, `duplicate_request`,
`completer_retry_err` ...), the `smc:smcr_link_down` tracepoint and the kernels' link
added/removed messages; and the wire read from raw bytes by tshark (write-blocked CDCs,
RC PSN sequences, NAKs, LLC headers), which verify.sh requires to agree with the counters.

Beside each `X.pcap`: `X.log` (the verified ground truth as `truth.key=value` lines and
the checks that passed), `X.client.log` / `X.server.log` (the guests' own words: smc_diag
per connection, SMC netlink statistics, fallback statistics, link groups and links, rxe
counters, kernel messages). Modes and reasons are the kernel's (smc_diag); the `wire.*`
counts come from raw bytes (tshark), `smcdump.*` from the project's decoder. A client log's
`digest conn N smc: ...` lines (smcping --digest: seeded payloads) are the bytes and SHA-256
of what the application wrote and read on each connection: the streams smcdump reassembles
from the capture (`-z smc,follow,CONN`, `--export-tcp`) equal them: lab's
TestStreamSampleDigests hashes long.pcap's and compares.

| sample | what the kernel did | verified ground truth |
|---|---|---|
HDR
		for f in "$dest"/*.log; do
			case "$f" in *.client.log | *.server.log) continue ;; esac
			sc=$(basename "$f" .log)
			local t="$f" conns modes
			modes=$(grep -E '^truth\.client\.conn[0-9]+\.(mode|reason|peer_diag)=' "$t" |
				sed -E 's/^truth\.client\.conn([0-9]+)\.(mode|reason|peer_diag)=(.*)/\1 \2 \3/' |
				sort -n -k1,1 -s | awk '$2 == "mode" {if (c != "") printf "%s; ", c; c = "conn" $1 " " $3; next}
					{c = c " " $2 "=" $3} END {if (c != "") printf "%s", c}')
			if [ "$(kv "$t" truth.scenario)" = e2e-smcd ]; then
				printf '| %s.pcapng | %s | frames %s; client conns %s (%s); SYNs/SYN-ACKs with the SMC option %s/%s; CLC Proposals %s, SMC-Dv2 Accepts %s, SMC-Dv2 Confirms %s (Declines %s); SMC-D link groups %s; SMC-Dv2 successes client/server %s/%s |\n' \
					"$sc" "${DESCRIBE[$sc]:-}" "$(kvd "$t" truth.frames)" "$(kvd "$t" truth.client.conns)" "${modes%; }" \
					"$(kvd "$t" truth.wire.syn_with_smc_option)" "$(kvd "$t" truth.wire.synack_with_smc_option)" \
					"$(kvd "$t" truth.wire.clc_proposals)" "$(kvd "$t" truth.wire.clc_smcdv2_accepts)" \
					"$(kvd "$t" truth.wire.clc_smcdv2_confirms)" "$(kvd "$t" truth.wire.clc_decline_segments)" \
					"$(kvd "$t" truth.kernel.smcd_link_groups_observed)" \
					"$(kvd "$t" truth.stats.smcd.clnt_v2_succ)" "$(kvd "$t" truth.stats.smcd.srv_v2_succ)"
				continue
			fi
			local extra=""
			[ -n "$(kv "$t" truth.client.links_before_failover)" ] &&
				extra="; links before/after failover $(kv "$t" truth.client.links_before_failover)/$(kv "$t" truth.client.links_after_failover)"
			[ -n "$(kv "$t" truth.client.bulk_bytes)" ] && extra="$extra; bulk $(kv "$t" truth.client.bulk_bytes) B over SMC-R, WRITE First frames $(kv "$t" truth.wire.rdma_write_first_frames)"
			extra="$extra$(expert_readme "$t")"
			printf '| %s.pcap | %s | frames %s; client conns %s (%s); client tx/rx bytes %s/%s; link groups %s, links %s at end; RDMA WRITE frames %s; CLC segments %s (Declines %s); TCP payload outside CLC %s; dest QP S->C %s, C->S %s%s |\n' \
				"$sc" "${DESCRIBE[$sc]:-}" "$(kvd "$t" truth.frames)" "$(kvd "$t" truth.client.conns)" "${modes%; }" \
				"$(kvd "$t" truth.client.stats.tx_bytes)" "$(kvd "$t" truth.client.stats.rx_bytes)" \
				"$(kvd "$t" truth.client.link_groups_at_end)" "$(kvd "$t" truth.client.links_at_end)" \
				"$(kvd "$t" truth.wire.rdma_write_frames)" "$(kvd "$t" truth.wire.clc_segments)" \
				"$(kvd "$t" truth.wire.clc_decline_segments)" "$(kvd "$t" truth.wire.tcp_payload_not_clc)" \
				"$(kvd "$t" truth.wire.server_sends_to_qps)" "$(kvd "$t" truth.wire.client_sends_to_qps)" "$extra"

		done
	} >"$dest/README.md"
}

# ---- The expert scenarios (slow-reader, lossy, silent-link) ----
# Each makes the kernels do what a finding of package expert names; the ground truth is
# the kernels' own word (smc_diag cursors and flags, SMC statistics, rxe counters, the
# smcr_link_down tracepoint, netem's drop count) and the wire read from raw bytes with
# tshark (BTH fields, AETH syndromes, LLC headers in the UDP payload), not the project's
# decoder; track/expert_lab_test.go holds the tracker's findings to these facts.

# hw FILE DEV NAME prints rxe port counter NAME of DEV from the last "HWCOUNTERS DEV:" line
# of a guest's report (scenarios.sh hw_counters), "-" when there is none.
hw() {
	local v
	v=$(grep "^HWCOUNTERS $2:" "$1" 2>/dev/null | tail -1 | grep -oE " $3=[0-9]+" | cut -d= -f2)
	echo "${v:--}"
}

# rc_sequence PCAP prints per direction of the RC traffic ("s2c": from 10.10.0.1 or
# 10.10.0.11) "DIR REQUESTS REPEATS JUMPS MISSING LATE RUNS DUPS DROPPED", from tshark's
# BTH fields: request packets (IBA opcodes SEND, RDMA WRITE, READ request, atomics);
# repeats, whose PSN the same QP sent before in the capture (a retransmission seen twice);
# jumps, packets whose PSN is ahead of the highest before it, and how many PSNs they
# skipped; late, PSNs first seen after higher ones (a retransmission whose first copy
# was lost before the capture, or a packet overtaken). Then the responder's view, in
# the wire's order (the capture point is the server's NIC, where the client's packets
# arrive): a request is taken when its PSN is the one expected; one behind it is a
# duplicate (acknowledged again, left); one ahead is dropped, and the first of a run of
# those is NAKed with a PSN sequence error (IBA Vol. 1, 9.7.5.1; Linux's rxe counts
# runs as out_of_seq_request and duplicates as duplicate_request): runs, dups, dropped.
# FILTER, when given, narrows the frames (a display filter).
rc_sequence() {
	timeout 120 tshark -n -r "$1" -Y "udp.dstport == 4791${2:+ && ($2)}" -T fields -e ip.src -e ip.dst \
		-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.opcode 2>/dev/null |
		awk -F'\t' '
		function diff(a, b) { a = (a - b + 16777216) % 16777216; return a >= 8388608 ? a - 16777216 : a }
		$5 == "" { next }
		{
			op = $5 + 0
			if (!(op <= 12 || op == 19 || op == 20)) next
			d = ($1 == "10.10.0.1" || $1 == "10.10.0.11") ? "s2c" : "c2s"
			k = $1 " " $2 " " $3
			psn = $4 + 0
			req[d]++
			if (!(k in want)) { want[k] = (psn + 1) % 16777216; hi[k] = psn; seen[k, psn] = 1; next }
			if ((k, psn) in seen) rep[d]++
			else {
				seen[k, psn] = 1
				j = diff(psn, hi[k])
				if (j < 0) late[d]++
				else { if (j > 1) { jumps[d]++; miss[d] += j - 1 }; hi[k] = psn }
			}
			e = diff(psn, want[k])
			if (e == 0) { want[k] = (psn + 1) % 16777216; inrun[k] = 0 }
			else if (e < 0) dups[d]++
			else { dropped[d]++; if (!inrun[k]) { runs[d]++; inrun[k] = 1 } }
		}
		END { for (d in req) printf "%s %d %d %d %d %d %d %d %d\n", d, req[d], rep[d], jumps[d], miss[d], late[d], runs[d], dups[d], dropped[d] }'
}

# naks PCAP prints per direction "DIR NAKS SEQERR": RC NAKs (AETH syndrome opcode 3) and of
# them PSN sequence errors (NAK code 0).
naks() {
	timeout 120 tshark -n -r "$1" -Y 'udp.dstport == 4791 && infiniband.aeth.syndrome.opcode == 3' -T fields \
		-e ip.src -e infiniband.aeth.syndrome.error_code 2>/dev/null |
		awk -F'\t' '{ d = ($1 == "10.10.0.1" || $1 == "10.10.0.11") ? "s2c" : "c2s"; n[d]++; if ($2 + 0 == 0) s[d]++ }
			END { for (d in n) printf "%s %d %d\n", d, n[d], s[d] }'
}

# llc_messages PCAP prints one line per SMC-R LLC message from raw bytes (RC SEND Only;
# the UDP payload is the 12-byte BTH, then the LLC header of net/smc/smc_llc.c: type,
# length (one byte in v1, two in SMC-Rv2), flags at offset 3 with 0x80 the response):
# "FRAME SRC DST PSN TYPE RESP LINK REASON", TYPE in hex (SMC-Rv2 0x21-0x29), LINK and
# REASON for DELETE_LINK (link_num at offset 4, the reason big-endian at 5: struct
# smc_llc_msg_del_link), "-" otherwise. CDCs (type 0xfe) are left out.
llc_messages() {
	timeout 120 tshark -n -r "$1" -Y 'udp.dstport == 4791 && infiniband.bth.opcode == 4' -T fields \
		-e frame.number -e ip.src -e ip.dst -e infiniband.bth.psn -e udp.payload 2>/dev/null |
		awk -F'\t' 'function byte(h) { return (index("0123456789abcdef", substr(h, 1, 1)) - 1) * 16 + index("0123456789abcdef", substr(h, 2, 1)) - 1 }
		{
			p = tolower($5)
			gsub(/:/, "", p)
			t = substr(p, 25, 2)
			if (t == "fe") next
			link = "-"
			reason = "-"
			if (t == "04" || t == "24") { link = byte(substr(p, 33, 2)); reason = "0x" substr(p, 35, 8) }
			print $1, $2, $3, $4, "0x" t, (byte(substr(p, 31, 2)) >= 128 ? 1 : 0), link, reason
		}'
}

# verify_slow_reader: the server's slow reader saw its RMBE full at the end of its pauses
# with the client's last CDC saying write-blocked, read the whole stream, and the wire has
# the client's write-blocked CDCs. In smc_diag (smc_diag_msg_common_fill's conninfo,
# net/smc/smc_diag.c) rx_prod and rx_prod_flags are the last CDC received
# (conn->local_rx_ctrl: the client's producer cursor into this RMBE, and its flags, 0x80
# write_blocked as struct smc_cdc_producer_flags lays it out on x86), tx_cons the
# server's own consumer cursor of its RMBE (conn->local_tx_ctrl.cons, advanced by every
# read): the RMBE is full when rx_prod is a whole RMBE ahead of tx_cons.
verify_slow_reader() {
	local dir=$1 slog="$1/server/server.log" rep="$1/client/client.report" srep="$1/server/server.report"
	local pauses full wb bytes want=$((4 * 65536 + 4)) wire wirec
	read -r pauses full wb < <(grep '^slow-reader diag pause [0-9]* end: socket ' "$slog" 2>/dev/null | awk '
		function cur(s, a) { split(s, a, "/"); return a[1] * rmbe + a[2] }
		{
			for (i = 1; i <= NF; i++) { n = index($i, "="); if (n) f[substr($i, 1, n - 1)] = substr($i, n + 1) }
			rmbe = f["rmbe"] + 0
			unread = cur(f["rx_prod"]) - cur(f["tx_cons"])
			if (unread < 0) unread += 65536 * rmbe
			p++
			if (rmbe > 0 && unread == rmbe) full++
			if (index("89abcdef", substr(tolower(f["rx_prod_flags"]), 3, 1))) wb++
		}
		END { print p + 0, full + 0, wb + 0 }')
	bytes=$(sed -n 's/^slow-reader done bytes=\([0-9]*\) .*/\1/p' "$slog" 2>/dev/null | head -1)
	wire=$(tshark_count "$dir/capture.pcap" 'smc.rmbe.ctrl.write.blocked == 1')
	wirec=$(tshark_count "$dir/capture.pcap" 'ip.src == 10.10.0.2 && smc.rmbe.ctrl.write.blocked == 1')
	fact server.slow_reader.bytes "${bytes:--}"
	fact server.slow_reader.pauses "$pauses"
	fact server.slow_reader.rmbe_full_at_pause_end "$full"
	fact server.slow_reader.peer_write_blocked_at_pause_end "$wb"
	fact client.stats.tx_buf_full_peer "$(kvd "$rep" smcr.tx_rmb_stats.buf_full_peer)"
	fact server.stats.rx_buf_full "$(kvd "$srep" smcr.rx_rmb_stats.buf_full)"
	fact wire.cdc_write_blocked "$wire"
	fact wire.cdc_write_blocked_c2s "$wirec"
	check "slow reader read the whole stream ($bytes of $want bytes)" "$([ "$bytes" = "$want" ] && echo 0 || echo 1)"
	check "kernel: the slow reader's RMBE full at the end of $full of $pauses pauses, the client's CDC write-blocked at $wb" \
		"$([ "$full" -ge 3 ] && [ "$wb" -ge 3 ] && echo 0 || echo 1)"
	check "kernel: the client found the server's RMBE full (buf_full_peer $(kv "$rep" smcr.tx_rmb_stats.buf_full_peer))" \
		"$([ "$(kv "$rep" smcr.tx_rmb_stats.buf_full_peer)" -ge 1 ] 2>/dev/null && echo 0 || echo 1)"
	check "wire: the client's write-blocked CDCs ($wirec of $wire, tshark)" "$([ "$wirec" -ge 1 ] && echo 0 || echo 1)"
}

# verify_erspan: the session numbered every copy it sent (ers0's tx_packets) 0, 1, 2 ...
# in the order the wire shows them, no number skipped or repeated; smcdump reads the
# collector's view (the GRE frames alone) as the hosts' (the rest), finds nothing missing
# in it but what editcap takes out, and follows the whole capture's copies once.
verify_erspan() {
	local dir=$1 clog="$1/client/client.log" pcap="$1/capture.pcap" bin="$BUILD/host-smcdump"
	local sent dropped n first last uniq gaps
	sent=$(sed -n 's/^ERSPAN tx_packets=\([0-9]*\).*/\1/p' "$clog" | head -1)
	dropped=$(sed -n 's/^ERSPAN .*tx_dropped=\([0-9]*\).*/\1/p' "$clog" | head -1)
	fact client.ers0.tx_packets "${sent:--}"
	fact client.ers0.tx_dropped "${dropped:--}"
	timeout 120 tshark -n -r "$pcap" -Y 'erspan.spanid == 7 && !icmp' -T fields -e gre.sequence_number >"$dir/erspan-seq.txt" 2>/dev/null
	n=$(grep -c . "$dir/erspan-seq.txt" || true)
	first=$(head -1 "$dir/erspan-seq.txt") last=$(tail -1 "$dir/erspan-seq.txt")
	uniq=$(sort -un "$dir/erspan-seq.txt" | grep -c . || true)
	gaps=$(awk 'NR > 1 && $1 != prev + 1 {g++} {prev = $1} END {print g + 0}' "$dir/erspan-seq.txt")
	fact wire.erspan_frames "$n"
	fact wire.erspan_seq "${first:--}..${last:--}"
	check "kernel vs wire: ers0 sent $sent frames (dropped $dropped), the capture holds $n numbered $first..$last, each once, in order ($gaps steps not +1)" \
		"$([ -n "$sent" ] && [ "$n" = "$sent" ] && [ "$dropped" = 0 ] && [ "$first" = 0 ] && [ "$last" = $((sent - 1)) ] && [ "$uniq" = "$n" ] && [ "$gaps" = 0 ] && echo 0 || echo 1)"
	[ -x "$bin" ] || return 0
	# The collector's view; the hosts' view of the whole capture, and of the time the
	# session mirrored (from its first copy to its last, and the millisecond after, in
	# which the original of an egress copy follows it).
	local t0 t1
	t0=$(timeout 120 tshark -n -r "$pcap" -Y 'erspan && !icmp' -T fields -e frame.time_epoch 2>/dev/null | head -1)
	t1=$(timeout 120 tshark -n -r "$pcap" -Y 'erspan && !icmp' -T fields -e frame.time_epoch 2>/dev/null | tail -1)
	timeout 120 tshark -n -r "$pcap" -Y 'erspan && !icmp' -w "$dir/collector.pcap" -F pcap 2>/dev/null
	timeout 120 tshark -n -r "$pcap" -Y '!gre' -w "$dir/hosts.pcap" -F pcap 2>/dev/null
	timeout 120 tshark -n -r "$pcap" -Y "!gre && frame.time_epoch >= $t0 - 0.001 && frame.time_epoch <= $t1 + 0.001" -w "$dir/hosts-mirrored.pcap" -F pcap 2>/dev/null
	# The connections and links as each view shows them, less what the copies' times and
	# places change (handshake milliseconds, frame numbers).
	erspan_views() {
		timeout 120 "$bin" -r "$1" -q -z smc,conns -z smc,links -T json 2>/dev/null |
			jq -c '.views | [(."smc,conns".conns | map(del(.handshake, .first_frame, .last_frame))), (."smc,links" | map(del(.history)))]'
	}
	local c hm h w
	c=$(erspan_views "$dir/collector.pcap") hm=$(erspan_views "$dir/hosts-mirrored.pcap") h=$(erspan_views "$dir/hosts.pcap") w=$(erspan_views "$pcap")
	echo "$hm" >"$dir/erspan-hosts-view.json"
	echo "$c" >"$dir/erspan-collector-view.json"
	tcheck "smcdump: the collector's view (GRE frames) shows the connections and links of the hosts' view while the session mirrored" "$([ -n "$hm" ] && [ "$c" = "$hm" ] && echo 0 || echo 1)"
	tcheck "smcdump: the whole capture (every frame and its copy) shows those of the hosts' view, once" "$([ -n "$h" ] && [ "$w" = "$h" ] && echo 0 || echo 1)"
	local lost
	lost=$(timeout 120 "$bin" -r "$dir/collector.pcap" -q -z smc,expert 2>&1 | grep -c 'smc.capture.mirror_lost' || true)
	tcheck "smcdump: nothing missing from the collector's view ($lost mirror_lost lines)" "$([ "$lost" = 0 ] && echo 0 || echo 1)"
	editcap "$dir/collector.pcap" "$dir/collector-thinned.pcap" 20-24 60 >/dev/null 2>&1
	lost=$(timeout 120 "$bin" -r "$dir/collector-thinned.pcap" -q -z smc,conns 2>&1 | sed -n 's/^frames a mirror session numbered that the capture does not hold \([0-9]*\).*/\1/p')
	tcheck "smcdump: the collector's view without 6 frames (editcap) misses 6 by the session's numbers ($lost)" "$([ "$lost" = 6 ] && echo 0 || echo 1)"
	rm -f "$dir/collector.pcap" "$dir/hosts.pcap" "$dir/hosts-mirrored.pcap" "$dir/collector-thinned.pcap"
}

# verify_lossy: netem dropped some of the client's frames; the wire shows the client's
# requests with PSN jumps and retransmissions and the server's NAKs; the kernels' rxe
# counters say the same (the server's responder NAKed out-of-sequence requests, the
# client's requester retried); the stream arrived whole.
verify_lossy() {
	local dir=$1 clog="$1/client/client.log" rep="$1/client/client.report" srep="$1/server/server.report"
	local dropped line d n k
	dropped=$(sed -n 's/^NETEM dropped=//p' "$clog" 2>/dev/null | head -1)
	fact client.netem "$(grep -o 'netem .*' "$dir/client.console" 2>/dev/null | tr -d '\r' | head -1)"
	fact client.netem_dropped "${dropped:--}"
	for k in rcvd_seq_err completer_retry_err retry_exceeded_err duplicate_request out_of_seq_request rcvd_rnr_err send_rnr_err; do
		fact "client.rxe0.$k" "$(hw "$rep" rxe0 $k)"
		fact "server.rxe0.$k" "$(hw "$srep" rxe0 $k)"
		fact "client.rxe0.before_netem.$k" "$(grep '^BEFORE-NETEM HWCOUNTERS rxe0:' "$clog" | tail -1 | grep -oE " $k=[0-9]+" | cut -d= -f2)"
	done
	rc_sequence "$dir/capture.pcap" >"$dir/rc.txt"
	while read -r d line; do
		set -- $line
		fact "wire.rc.$d.requests" "$1"
		fact "wire.rc.$d.repeats" "$2"
		fact "wire.rc.$d.jumps" "$3"
		fact "wire.rc.$d.missing" "$4"
		fact "wire.rc.$d.late" "$5"
		fact "wire.rc.$d.responder_runs" "$6"
		fact "wire.rc.$d.responder_dups" "$7"
		fact "wire.rc.$d.responder_dropped" "$8"
	done <"$dir/rc.txt"
	naks "$dir/capture.pcap" >"$dir/naks.txt"
	while read -r d n k; do
		fact "wire.nak.$d" "$n"
		fact "wire.nak_psn_seq_err.$d" "$k"
	done <"$dir/naks.txt"
	check "netem dropped client frames ($dropped)" "$([ "${dropped:-0}" -ge 1 ] && echo 0 || echo 1)"
	check "bulk connection (conn1) used SMC-R and finished" \
		"$(grep -qE '^CLIENT conn1 [0-9].*mode=SMCR' "$clog" && echo 0 || echo 1)"
	local jumps rep2 nak
	jumps=$(kv "$dir/truth" truth.wire.rc.c2s.jumps) rep2=$(kv "$dir/truth" truth.wire.rc.c2s.repeats)
	nak=$(kv "$dir/truth" truth.wire.nak_psn_seq_err.s2c)
	check "wire: the client's requests jump ahead ($jumps) and are sent again ($rep2), the server NAKs ($nak)" \
		"$([ "${jumps:-0}" -ge 1 ] && [ "${rep2:-0}" -ge 1 ] && [ "${nak:-0}" -ge 1 ] && echo 0 || echo 1)"
	check "kernel: the server's responder found requests out of sequence ($(hw "$srep" rxe0 out_of_seq_request)), the client's requester retried ($(hw "$rep" rxe0 completer_retry_err))" \
		"$([ "$(hw "$srep" rxe0 out_of_seq_request)" -ge 1 ] 2>/dev/null && [ "$(hw "$rep" rxe0 completer_retry_err)" -ge 1 ] 2>/dev/null && echo 0 || echo 1)"
	# Kernel and wire, exactly: the server's rxe0 counts a NAKed run out of sequence and a
	# duplicate as the wire shows them (the server's shift_ids loops back inside its
	# guest without loss), and the client's responder the server's requests sent again.
	# The client's counters are read before it powers off; the server's DELETE_LINK
	# then is sent again until the server's own end (lab/README: the capture's tail),
	# which no client counts: its duplicates are counted up to the first DELETE_LINK.
	local runs dups sdups tail
	runs=$(kv "$dir/truth" truth.wire.rc.c2s.responder_runs) dups=$(kv "$dir/truth" truth.wire.rc.c2s.responder_dups)
	tail=$(llc_messages "$dir/capture.pcap" | awk '$5 == "0x24" || $5 == "0x04" {print $1; exit}')
	sdups=$(rc_sequence "$dir/capture.pcap" "frame.number < ${tail:-999999999}" | awk '$1 == "s2c" {print $8}')
	fact wire.rc.s2c.responder_dups_before_delete_link "${sdups:-0}" 
	check "kernel vs wire: the server's out_of_seq_request ($(hw "$srep" rxe0 out_of_seq_request)) = its NAKs ($nak) = runs out of sequence ($runs)" \
		"$([ "$(hw "$srep" rxe0 out_of_seq_request)" = "$nak" ] && [ "$nak" = "$runs" ] && echo 0 || echo 1)"
	check "kernel vs wire: the server's duplicate_request ($(hw "$srep" rxe0 duplicate_request)) = duplicates on the wire ($dups)" \
		"$([ "$(hw "$srep" rxe0 duplicate_request)" = "$dups" ] && echo 0 || echo 1)"
	check "kernel vs wire: the client's duplicate_request ($(hw "$rep" rxe0 duplicate_request)) = the server's duplicates on the wire ($sdups)" \
		"$([ "$(hw "$rep" rxe0 duplicate_request)" = "${sdups:-0}" ] && echo 0 || echo 1)"
}

# verify_silent_link: two links, then the client's eth1 drops all it sends. On the wire,
# the server's last TEST_LINK on link 2 (10.10.0.11 -> 10.10.0.12) is sent again and
# again and never answered, and the server deletes link 2 over link 1 with reason lost
# path (0x00010000, SMC_LLC_DEL_LOST_PATH); in the kernels, the server took link 2 down
# (smc:smcr_link_down on rxe1), the client has one link left, and a new connection works.
verify_silent_link() {
	local dir=$1 clog="$1/client/client.log" rep="$1/client/client.report" srep="$1/server/server.report"
	local before after settled
	before=$(grep -c '^BEFORE-SILENCE LINK:' "$clog" || true)
	after=$(grep '^AFTER-SILENCE LINK:' "$clog" | grep -cv ' state=ACTIVATING ' || true)
	settled=$(grep -c '^SETTLED LINK:' "$clog" || true)
	fact client.links_before_silence "$before"
	fact client.links_after_silence "$after"
	fact client.links_settled "$settled"
	check "two links before eth1 goes silent ($before), one after ($after)" \
		"$([ "$before" = 2 ] && [ "$after" = 1 ] && echo 0 || echo 1)"
	llc_messages "$dir/capture.pcap" >"$dir/llc.txt"
	local last copies answered tl dl trace
	# TEST_LINK (0x07, SMC-Rv2 0x27) requests the server sent on link 2.
	tl=$(awk '$2 == "10.10.0.11" && $3 == "10.10.0.12" && ($5 == "0x07" || $5 == "0x27") && $6 == 0' "$dir/llc.txt")
	last=$(tail -1 <<<"$tl" | awk '{print $4}')
	copies=$(awk -v p="$last" '$4 == p' <<<"$tl" | grep -c . || true)
	answered=$(awk -v f="$(awk -v p="$last" '$4 == p {print $1; exit}' <<<"$tl")" \
		'$1 > f && $2 == "10.10.0.12" && ($5 == "0x07" || $5 == "0x27") && $6 == 1' "$dir/llc.txt" | grep -c . || true)
	dl=$(awk '$2 == "10.10.0.1" && $3 == "10.10.0.2" && $5 == "0x24" && $6 == 0 && $7 == 2 && $8 == "0x00010000"' "$dir/llc.txt" | grep -c . || true)
	fact wire.link2.test_link_requests "$(awk '{print $4}' <<<"$tl" | sort -u | grep -c . || true)"
	fact wire.link2.test_link_responses "$(awk '$2 == "10.10.0.12" && $3 == "10.10.0.11" && ($5 == "0x07" || $5 == "0x27") && $6 == 1' "$dir/llc.txt" | grep -c . || true)"
	fact wire.link2.last_test_link_psn "${last:--}"
	fact wire.link2.last_test_link_frames "$copies"
	fact wire.link2.last_test_link_answered "$answered"
	fact wire.delete_link_2_lost_path_by_server "$dl"
	check "wire: the server's last TEST_LINK on link 2 (PSN $last) sent $copies times, answered $answered times" \
		"$([ -n "$last" ] && [ "$copies" -ge 2 ] && [ "$answered" = 0 ] && echo 0 || echo 1)"
	check "wire: the server deletes link 2 over link 1, reason lost path ($dl)" "$([ "$dl" -ge 1 ] && echo 0 || echo 1)"
	# The tracepoint's location is the work function's caller (process_one_work): the
	# device and the link's state before are what it tells.
	trace=$(grep '^TRACE ' "$srep" 2>/dev/null | grep -oE 'state=[0-9]+ dev=[^ ]+' | paste -sd';')
	fact server.smcr_link_down "${trace:--}"
	check "kernel: the server took rxe1's link down (smc:smcr_link_down: $trace)" \
		"$(grep -q 'dev=rxe1' <<<"$trace" && echo 0 || echo 1)"
	# The kernels' own messages (smcr_link_init / smcr_link_clear, net/smc/smc_core.c):
	# "link added/removed: id <link UID as on the wire>, peerid <the peer's>, ibdev".
	local r
	for r in server client; do
		fact "$r.links_added" "$(grep -oE 'link added: id [0-9a-f]+, peerid [0-9a-f]+, ibdev [a-z0-9]+' "$1/$r/$r.report" 2>/dev/null | sed 's/link added: //; s/, /,/g; s/ /=/g' | paste -sd';')"
		fact "$r.links_removed" "$(grep -oE 'link removed: id [0-9a-f]+, peerid [0-9a-f]+, ibdev [a-z0-9]+' "$1/$r/$r.report" 2>/dev/null | sed 's/link removed: //; s/, /,/g; s/ /=/g' | paste -sd';')"
	done
	check "kernel: the server removed its link on rxe1, the client its link 2 ($(kv "$dir/truth" truth.server.links_removed); $(kv "$dir/truth" truth.client.links_removed))" \
		"$(grep -q 'ibdev=rxe1' <<<"$(kv "$dir/truth" truth.server.links_removed)" && grep -qE 'id=[0-9a-f]{6}02,' <<<"$(kv "$dir/truth" truth.client.links_removed)" && echo 0 || echo 1)"
	local k
	for k in completer_retry_err retry_exceeded_err duplicate_request sent_pkts rcvd_pkts; do
		fact "server.rxe1.$k" "$(hw "$srep" rxe1 $k)"
		fact "client.rxe1.$k" "$(hw "$rep" rxe1 $k)"
	done
	fact client.netem_dropped "$(sed -n 's/^NETEM dropped=//p' "$clog" 2>/dev/null | head -1)"
	fact server.testlink_time "$(grep -o 'net.smc.smcr_testlink_time=[0-9]*' "$dir/server.console" | head -1 | cut -d= -f2)"
}

# verify_expert_tool: the project's smcdump names the findings the scenario makes happen
# (-z smc,expert); a miss fails the scenario as a tool check, the capture stays true.
verify_expert_tool() {
	local sc=$1 dir=$2 pcap=$3 want id
	timeout 120 "$BUILD/host-smcdump" -r "$pcap" -q -z smc,expert >"$dir/smcdump-expert.txt" 2>&1
	case "$sc" in
	slow-reader) want="smc.cdc.write_blocked smc.cdc.consumer_stall" ;;
	lossy) want="roce.rc.retransmission roce.rc.psn_gap roce.rc.nak" ;;
	silent-link) want="smc.llc.test_link_unanswered smc.link.deleted roce.rc.retransmission" ;;
	esac
	for id in $want; do
		tcheck "smcdump -z smc,expert names $id" "$(grep -qE "^  $id " "$dir/smcdump-expert.txt" && echo 0 || echo 1)"
	done
	echo "truth.smcdump.expert=$(grep -oE '^  [a-z_.]+ ' "$dir/smcdump-expert.txt" | grep '\.' | tr -d ' ' | sort -u | paste -sd,)" >>"$dir/truth"
}
