// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's SMC handshake controller (e2e-hsctrl, Linux 6.19+ with
 * CONFIG_SMC_HS_CTRL_BPF): a struct_ops smc_hs_ctrl (include/net/smc.h) that
 * takes the SMC option off the TCP handshakes of one port, so that port's
 * connections are plain TCP while every other port's negotiate SMC.
 *
 * tcp_output.c asks the controller of the socket's netns (net.smc.hs_ctrl)
 * before it writes the option: smc_set_option calls syn_option for a SYN,
 * smc_set_option_cond calls synack_option for the SYN-ACK of a SYN that
 * carried the option; 0 leaves the option out. The lab loads it in the server
 * guest only, so a client's SYN to NOSMC_PORT still carries the option and
 * the server's SYN-ACK does not: both sides fall back with PEERNOSMC, and the
 * capture shows why. syn_option does the same for the connections this host
 * makes to NOSMC_PORT.
 *
 * Built by lab/prep.sh with clang -target bpf against the 7.3 kernel's
 * vmlinux.h; registered with `bpftool struct_ops register` and selected with
 * `echo labnosmc5001 > /proc/sys/net/smc/hs_ctrl`. The section is
 * ".struct_ops", not ".struct_ops.link": smc_bpf_hs_ctrl_reg
 * (net/smc/smc_hs_bpf.c) refuses a registration through a bpf link with
 * EOPNOTSUPP.
 */
#include "vmlinux.h"

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

/* The port whose handshakes carry no SMC option (scenarios.sh HSCTRL_PORT). */
#define NOSMC_PORT 5001

/* syn_option: tp is the connecting socket; skc_dport is in network order. */
SEC("struct_ops")
int BPF_PROG(lab_syn_option, struct tcp_sock *tp)
{
	return tp->inet_conn.icsk_inet.sk.__sk_common.skc_dport != bpf_htons(NOSMC_PORT);
}

/*
 * synack_option: tp is the listener, ireq the request of the SYN; the
 * request's skc_num (ir_num) is the local port, in host order.
 */
SEC("struct_ops")
int BPF_PROG(lab_synack_option, const struct tcp_sock *tp, struct inet_request_sock *ireq)
{
	return ireq->req.__req_common.skc_num != NOSMC_PORT;
}

/*
 * The controller's name is what net.smc.hs_ctrl selects (at most 15
 * characters, SMC_HS_CTRL_NAME_MAX with its NUL).
 */
SEC(".struct_ops")
struct smc_hs_ctrl labnosmc = {
	.name = "labnosmc5001",
	.syn_option = (void *)lab_syn_option,
	.synack_option = (void *)lab_synack_option,
};
