package rdmastats

// Health classifies a counter by what its increase says about the RDMA
// path. SMC-R links run over RC queue pairs: lost or late packets show up
// first as sequence and retry counters, and when the retries are used up
// the QP fails and SMC deletes the link (DELETE LINK, failover or
// fallback). These counters are the ones worth a colour on a dashboard.
type Health uint8

// Health classes, in rising order of severity.
const (
	// HealthNone: traffic and bookkeeping counters.
	HealthNone Health = iota
	// HealthCongestion: ECN marks and CNPs (DCQCN at work) and IB credit
	// stalls. Expected in bursts under load; steady growth means a
	// congested fabric.
	HealthCongestion
	// HealthRetransmit: sequence errors, duplicates, ACK timeouts and RNR
	// retries. Packets were lost, reordered or found no receive buffer;
	// the QP recovered, but this precedes link loss.
	HealthRetransmit
	// HealthError: retries exhausted, completion and access errors, link
	// down. QPs have failed.
	HealthError
)

// String returns "none", "congestion", "retransmit" or "error".
func (h Health) String() string {
	switch h {
	case HealthCongestion:
		return "congestion"
	case HealthRetransmit:
		return "retransmit"
	case HealthError:
		return "error"
	}
	return "none"
}

// healthOf lists counter names of the drivers' hw_counters
// (drivers/infiniband/hw/mlx5/counters.c,
// drivers/infiniband/sw/rxe/rxe_hw_counters.c) and the PMA error counters
// (drivers/infiniband/core/sysfs.c). Names are shared where drivers agree
// (duplicate_request, link_downed).
var healthOf = map[string]Health{
	// mlx5 congestion control (DCQCN).
	"np_cnp_sent":                HealthCongestion,
	"np_ecn_marked_roce_packets": HealthCongestion,
	"rp_cnp_handled":             HealthCongestion,
	"rp_cnp_ignored":             HealthCongestion,
	// PMA: ticks with data queued but no flow-control credit.
	"port_xmit_wait": HealthCongestion,

	// mlx5 retransmission and sequence counters.
	"out_of_sequence":         HealthRetransmit,
	"packet_seq_err":          HealthRetransmit,
	"implied_nak_seq_err":     HealthRetransmit,
	"local_ack_timeout_err":   HealthRetransmit,
	"rnr_nak_retry_err":       HealthRetransmit,
	"duplicate_request":       HealthRetransmit, // also rxe
	"out_of_buffer":           HealthRetransmit, // no receive WQE: RNR NAK follows
	"roce_adp_retrans":        HealthRetransmit,
	"roce_adp_retrans_to":     HealthRetransmit,
	"roce_slow_restart":       HealthRetransmit,
	"roce_slow_restart_cnps":  HealthRetransmit,
	"roce_slow_restart_trans": HealthRetransmit,
	// rxe. completer_retry_err counts RC retransmission rounds: it grew
	// during normal lab runs over lossy virtio links (§7.3), so it is a
	// warning, not an error.
	"completer_retry_err": HealthRetransmit,
	"rcvd_seq_err":        HealthRetransmit,
	"out_of_seq_request":  HealthRetransmit,
	"rcvd_rnr_err":        HealthRetransmit,
	"send_rnr_err":        HealthRetransmit,

	// QP-fatal errors, mlx5.
	"req_cqe_error":              HealthError,
	"resp_cqe_error":             HealthError,
	"req_remote_invalid_request": HealthError,
	"req_remote_access_errors":   HealthError,
	"resp_remote_access_errors":  HealthError,
	"resp_local_length_error":    HealthError,
	"rx_icrc_encapsulated":       HealthError,
	// rxe.
	"retry_exceeded_err":     HealthError,
	"retry_rnr_exceeded_err": HealthError,
	"send_err":               HealthError,
	// PMA link-level errors (link_downed is also an rxe counter).
	"link_downed":                     HealthError,
	"symbol_error":                    HealthError,
	"link_error_recovery":             HealthError,
	"local_link_integrity_errors":     HealthError,
	"excessive_buffer_overrun_errors": HealthError,
	"port_rcv_errors":                 HealthError,
	"port_rcv_remote_physical_errors": HealthError,
	"port_rcv_switch_relay_errors":    HealthError,
	"port_xmit_discards":              HealthError,
	"port_xmit_constraint_errors":     HealthError,
	"port_rcv_constraint_errors":      HealthError,
	"VL15_dropped":                    HealthError,

	// req_cqe_flush_error and resp_cqe_flush_error are deliberately
	// HealthNone: every QP torn down with posted receive WQEs flushes
	// them, and SMC-R keeps receives posted for the link's whole life,
	// so they grow on each ordinary link deletion.
}

// Classify returns the health class of a counter by its sysfs name.
// Unknown names, including future driver counters, are HealthNone.
func Classify(name string) Health { return healthOf[name] }
