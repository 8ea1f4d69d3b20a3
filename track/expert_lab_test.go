package track

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// The lab's expert scenarios (lab/README.md, "The expert scenarios") make
// the kernels do what findings name: a slow reader, a lossy RoCE path, a
// peer that stops answering on a link. These tests hold the tracker's
// findings on their captures to the ground truth beside them
// (samples/X.log, truth.* lines): the kernels' counters and sock_diag,
// and the wire read from raw bytes by tshark, which lab/verify.sh
// required to agree with each other.

// labSample returns a lab sample's capture and its truth.* facts (keys
// without the "truth." prefix), skipping when the sample is not there.
func labSample(t *testing.T, name string) (string, map[string]string) {
	t.Helper()
	base := filepath.Join(samplesDir(), name)
	b, err := os.ReadFile(base + ".log")
	if err != nil {
		t.Skipf("no lab sample %s: %v", name, err)
	}
	truth := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "truth."), "="); ok && strings.HasPrefix(l, "truth.") {
			truth[k] = v
		}
	}
	return base + ".pcap", truth
}

// fact is a numeric truth.* fact.
func fact(t *testing.T, truth map[string]string, key string) int {
	t.Helper()
	n, err := strconv.Atoi(truth[key])
	if err != nil {
		t.Fatalf("truth.%s = %q: %v", key, truth[key], err)
	}
	return n
}

// findingsOf runs a capture through the tracker and returns its snapshot
// and its findings by name.
func findingsOf(t *testing.T, path string) (Snapshot, map[expert.ID][]Finding) {
	t.Helper()
	s := feedFile(t, path, Options{}, 0).Snapshot()
	by := map[expert.ID][]Finding{}
	for _, f := range s.Findings() {
		by[f.ID] = append(by[f.ID], f)
	}
	return s, by
}

// TestExpertSlowReader: slow-reader.pcap, a server reading 16 KiB a second
// while the client streams 4 x 64 KiB. Every write-blocked CDC of the
// client is a finding (tshark counts the same flags), and every pause the
// reader ended with its RMBE full (its own smc_diag line; the server's
// SMC statistics count the same full buffers) is a consumer stall of a
// second, no more than the pause. Nothing says loss.
func TestExpertSlowReader(t *testing.T) {
	path, truth := labSample(t, "slow-reader")
	s, by := findingsOf(t, path)
	if len(s.Conns) != 1 {
		t.Fatalf("%d connections, the kernel reports 1", len(s.Conns))
	}
	c := &s.Conns[0]
	f := &c.Flow[DirC2S]
	wb := fact(t, truth, "wire.cdc_write_blocked_c2s")
	if f.WriteBlocked != wb || wb != fact(t, truth, "server.slow_reader.peer_write_blocked_at_pause_end") {
		t.Errorf("C>S write-blocked CDCs %d; tshark counts %d, the reader saw the flag at %s pause ends",
			f.WriteBlocked, wb, truth["server.slow_reader.peer_write_blocked_at_pause_end"])
	}
	if fs := by[expert.WriteBlocked]; len(fs) != 1 || fs[0].Count != wb {
		t.Errorf("smc.cdc.write_blocked %+v, want one connection with %d frames", fs, wb)
	}
	full := fact(t, truth, "server.slow_reader.rmbe_full_at_pause_end")
	if full != fact(t, truth, "server.stats.rx_buf_full") {
		t.Fatalf("ground truth: RMBE full at %d pause ends, the server's statistics count %s full buffers", full, truth["server.stats.rx_buf_full"])
	}
	fs := by[expert.ConsumerStall]
	if len(fs) != 1 || fs[0].Count != full || fs[0].ObjectID != c.ID {
		t.Errorf("smc.cdc.consumer_stall %+v, want connection %d with %d stalls (the RMBE full at %d pause ends)", fs, c.ID, full, full)
	}
	if f.StallLongest < stallAfter || f.StallLongest > 1500*time.Millisecond {
		t.Errorf("longest stall %v: the reader pauses a second", f.StallLongest)
	}
	if f.Bytes != uint64(fact(t, truth, "server.slow_reader.bytes")) {
		t.Errorf("C>S %d bytes, the reader read %s", f.Bytes, truth["server.slow_reader.bytes"])
	}
	for _, id := range []expert.ID{expert.RCRetransmission, expert.PSNGap, expert.NAK, expert.SeqGap, expert.ConnAbort} {
		if len(by[id]) != 0 {
			t.Errorf("%s on a slow reader's clean path: %+v", id, by[id])
		}
	}
}

// TestExpertLossy: lossy.pcap, netem dropping and reordering what the
// client sends during a one-way stream. The tracker follows the RC
// sequence as the server's responder took it: its PSN jumps are the runs
// the server NAKed (its rxe0 out_of_seq_request, the NAKs on the wire),
// its duplicates the server's duplicate_request, the requests it drops
// and those first seen late what the raw PSNs say; the server's requests
// sent again after a lost ACK are the client's duplicate_request. The
// stream is counted once: no sequence gap, repeated sequence number or
// cursor error, no consumer stall (the reader is fast; the path is slow).
func TestExpertLossy(t *testing.T) {
	path, truth := labSample(t, "lossy")
	s, by := findingsOf(t, path)
	var l *Link // link 1; link 2's ADD_LINK was rejected (one RoCE device a side)
	for i := range s.Links {
		if s.Links[i].LinkID == 1 {
			l = &s.Links[i]
		}
	}
	if l == nil {
		t.Fatal("no link 1")
	}
	c2s, s2c := &l.RC[DirC2S], &l.RC[DirS2C]
	runs := fact(t, truth, "wire.rc.c2s.responder_runs")
	for _, x := range []struct {
		what      string
		got, want int
	}{
		{"C->S PSN jumps (runs out of sequence)", c2s.PSNGaps, runs},
		{"C->S runs = the server's NAKs on the wire", runs, fact(t, truth, "wire.nak_psn_seq_err.s2c")},
		{"C->S runs = the server's rxe0 out_of_seq_request", runs, fact(t, truth, "server.rxe0.out_of_seq_request")},
		{"S->C NAKs, PSN sequence error", s2c.NAKCodes[0], fact(t, truth, "wire.nak_psn_seq_err.s2c")},
		{"C->S duplicates = the server's rxe0 duplicate_request", c2s.Dups, fact(t, truth, "server.rxe0.duplicate_request")},
		{"C->S duplicates on the wire", c2s.Dups, fact(t, truth, "wire.rc.c2s.responder_dups")},
		{"C->S dropped out of sequence", c2s.OutOfSeq, fact(t, truth, "wire.rc.c2s.responder_dropped")},
		{"C->S retransmissions (PSN seen before)", c2s.Retrans, fact(t, truth, "wire.rc.c2s.repeats")},
		{"C->S first seen late", c2s.Late, fact(t, truth, "wire.rc.c2s.late")},
		{"S->C retransmissions = the client's rxe0 duplicate_request", s2c.Retrans, fact(t, truth, "client.rxe0.duplicate_request")},
		{"S->C retransmissions on the wire", s2c.Retrans, fact(t, truth, "wire.rc.s2c.repeats")},
	} {
		if x.got != x.want {
			t.Errorf("%s: %d, want %d", x.what, x.got, x.want)
		}
	}
	// Every request on the wire is taken, a duplicate or dropped.
	if want := fact(t, truth, "wire.rc.c2s.requests"); c2s.Packets+c2s.Dups+c2s.OutOfSeq != want {
		t.Errorf("C->S requests: %d taken, %d duplicates, %d dropped; the wire has %d", c2s.Packets, c2s.Dups, c2s.OutOfSeq, want)
	}
	if fs := by[expert.PSNGap]; len(fs) != 1 || fs[0].Count != runs {
		t.Errorf("roce.rc.psn_gap %+v, want %d frames on the link", fs, runs)
	}
	if fs := by[expert.NAK]; len(fs) != 1 || fs[0].Count != runs {
		t.Errorf("roce.rc.nak %+v, want %d frames", fs, runs)
	}
	if fs := by[expert.RCRetransmission]; len(fs) != 1 || fs[0].Count != c2s.Retrans+s2c.Retrans {
		t.Errorf("roce.rc.retransmission %+v, want %d frames", fs, c2s.Retrans+s2c.Retrans)
	}
	for _, c := range s.Conns {
		for d := range 2 {
			if f := c.Flow[d]; f.Bytes != f.WriteBytes || f.SeqGaps != 0 || f.SeqDup != 0 || f.CursorErrors != 0 {
				t.Errorf("conn %d %v: %d B by cursor, %d B by WRITE, seq gaps %d, dups %d, cursor errors %d",
					c.ID, Dir(d), f.Bytes, f.WriteBytes, f.SeqGaps, f.SeqDup, f.CursorErrors)
			}
		}
	}
	for _, id := range []expert.ID{expert.SeqGap, expert.SeqDup, expert.CursorBackwards, expert.ConsumerStall} {
		if len(by[id]) != 0 {
			t.Errorf("%s on a lossy path with a fast reader: %+v", id, by[id])
		}
	}
}

// TestExpertSilentLink: silent-link.pcap, the client's second link falls
// silent (everything it sends there dropped). The server's last TEST_LINK
// on link 2 is the finding, at its first frame (the LLC header read from
// the frames, PSN as tshark read it); its copies are the link's
// retransmissions; the DELETE_LINK of link 2, lost path, is the server's
// over link 1; the server's next attempt, link 3, never has its
// CONFIRM_LINK answered. Every copy the server sent on the silent path is
// one the client's rxe1 counted as a duplicate.
func TestExpertSilentLink(t *testing.T) {
	path, truth := labSample(t, "silent-link")
	psn := uint32(fact(t, truth, "wire.link2.last_test_link_psn"))
	first, copies := 0, 0
	eachFrame(t, path, func(f *capture.Frame) {
		if f.LLC != nil && f.BTH != nil && f.BTH.PSN == psn && f.LLC.Type.Base() == decode.LLCTestLink && !f.LLC.Response &&
			f.IPv4 != nil && f.IPv4.SrcIP.String() == "10.10.0.11" {
			if first == 0 {
				first = f.Number
			}
			copies++
		}
	})
	if copies != fact(t, truth, "wire.link2.last_test_link_frames") || fact(t, truth, "wire.link2.last_test_link_answered") != 0 {
		t.Fatalf("the last TEST_LINK on link 2 in %d frames from %d; the lab counted %s, answered %s",
			copies, first, truth["wire.link2.last_test_link_frames"], truth["wire.link2.last_test_link_answered"])
	}
	s, by := findingsOf(t, path)
	link := map[uint8]*Link{}
	for i := range s.Links {
		link[s.Links[i].LinkID] = &s.Links[i]
	}
	l2, l3 := link[2], link[3]
	if l2 == nil || l3 == nil || link[1] == nil {
		t.Fatalf("links by number %v: want 1, 2 and 3", link)
	}
	if fs := by[expert.TestLinkUnanswered]; len(fs) != 1 || fs[0].ObjectID != l2.ID || fs[0].First != first || fs[0].Count != 1 {
		t.Errorf("smc.llc.test_link_unanswered %+v, want link %d from frame %d", fs, l2.ID, first)
	}
	if l2.State != LinkDeleted || l2.DeleteCode != uint32(decode.DelLinkLostPath) || l3.State != LinkDeleted {
		t.Errorf("link 2 %v reason %#x, link 3 %v: want both deleted, link 2 for a lost path", l2.State, l2.DeleteCode, l3.State)
	}
	deleted := map[int]bool{}
	for _, f := range by[expert.LinkDeleted] {
		deleted[f.ObjectID] = true
	}
	if len(deleted) != 2 || !deleted[l2.ID] || !deleted[l3.ID] || fact(t, truth, "wire.delete_link_2_lost_path_by_server") < 1 {
		t.Errorf("smc.link.deleted on links %v, want %d and %d", deleted, l2.ID, l3.ID)
	}
	if fs := by[expert.LLCUnanswered]; len(fs) != 1 || fs[0].ObjectID != l3.ID || !strings.HasPrefix(fs[0].Detail, "CONFIRM_LINK") {
		t.Errorf("smc.llc.unanswered %+v, want link %d's CONFIRM_LINK", fs, l3.ID)
	}
	if got := l2.RC[DirS2C].Retrans; got != copies-1 {
		t.Errorf("link 2 S->C retransmissions %d, the last TEST_LINK went %d times", got, copies)
	}
	if got, want := l2.RC[DirS2C].Retrans+l3.RC[DirS2C].Retrans, fact(t, truth, "client.rxe1.duplicate_request"); got != want {
		t.Errorf("S->C retransmissions on the silent path %d, the client's rxe1 counted %d duplicates", got, want)
	}
	if l2.TestLinks != 1 || fact(t, truth, "wire.link2.test_link_responses") != 0 {
		t.Errorf("link 2: %d TEST_LINK messages, the lab %s responses: want the request alone", l2.TestLinks, truth["wire.link2.test_link_responses"])
	}
	for _, id := range []expert.ID{expert.PSNGap, expert.NAK, expert.SeqGap, expert.ConnAbort, expert.ConsumerStall} {
		if len(by[id]) != 0 {
			t.Errorf("%s: %+v", id, by[id])
		}
	}
}
