package rdmastats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want Health
	}{
		// The RoCE health counters smctop highlights (mlx5).
		{"out_of_sequence", HealthRetransmit},
		{"packet_seq_err", HealthRetransmit},
		{"local_ack_timeout_err", HealthRetransmit},
		{"rnr_nak_retry_err", HealthRetransmit},
		{"np_cnp_sent", HealthCongestion},
		{"rp_cnp_handled", HealthCongestion},
		{"np_ecn_marked_roce_packets", HealthCongestion},
		// rxe.
		{"retry_exceeded_err", HealthError},
		{"completer_retry_err", HealthRetransmit},
		{"rcvd_seq_err", HealthRetransmit},
		{"out_of_seq_request", HealthRetransmit},
		{"duplicate_request", HealthRetransmit},
		{"link_downed", HealthError},
		// PMA.
		{"symbol_error", HealthError},
		{"port_xmit_wait", HealthCongestion},
		// Traffic, bookkeeping, flushes on ordinary teardown, unknown.
		{"rdma_sends", HealthNone},
		{"sent_pkts", HealthNone},
		{"ack_deferred", HealthNone},
		{"port_xmit_data", HealthNone},
		{"rx_write_requests", HealthNone},
		{"resp_cqe_flush_error", HealthNone},
		{"req_cqe_flush_error", HealthNone},
		{"lifespan", HealthNone},
		{"some_future_counter", HealthNone},
		{"", HealthNone},
	}
	for _, tt := range tests {
		if got := Classify(tt.name); got != tt.want {
			t.Errorf("Classify(%q) = %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestClassifyCoversFixtureErrors checks that every error-sounding counter
// in the fixtures (the §7.3 lists) has a class, so a new name added to the
// fixtures cannot silently go unhighlighted.
func TestClassifyCoversFixtureErrors(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join(fixtureRoot, "class/infiniband/*/ports/*/*counters"))
	if err != nil || len(dirs) != 3 {
		t.Fatalf("fixture counter directories = %v (%v), want 3", dirs, err)
	}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			n := e.Name()
			errorish := containsAny(n, "_err", "seq", "retry", "retrans", "cnp", "ecn", "discard", "dropped", "downed", "duplicate", "slow_restart", "out_of")
			flush := n == "req_cqe_flush_error" || n == "resp_cqe_flush_error"
			if errorish && !flush && Classify(n) == HealthNone {
				t.Errorf("%s/%s looks like a health counter but Classify gives none", filepath.Base(dir), n)
			}
		}
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestHealthString(t *testing.T) {
	t.Parallel()
	for h, want := range map[Health]string{HealthNone: "none", HealthCongestion: "congestion", HealthRetransmit: "retransmit", HealthError: "error", 42: "none"} {
		if got := h.String(); got != want {
			t.Errorf("Health(%d).String() = %q, want %q", h, got, want)
		}
	}
	if !(HealthNone < HealthCongestion && HealthCongestion < HealthRetransmit && HealthRetransmit < HealthError) {
		t.Error("health classes are not in rising order of severity")
	}
}
