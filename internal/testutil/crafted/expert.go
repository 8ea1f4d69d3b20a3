package crafted

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// Vector is a capture damaged so that it shows one finding a kernel will
// not produce on request: Finding is the finding's name (package expert),
// Build writes it from pingpong.pcap into t.TempDir() and returns its
// path. The frame numbers below are pingpong.pcap's (smcdump -r
// testdata/reference/pingpong.pcap -a).
type Vector struct {
	Name    string
	Finding string
	Build   func(t testing.TB) string
}

// Frames of pingpong.pcap the vectors edit.
const (
	ppConfirmCLC = 12 // CLC Confirm (client)
	ppAddLinkReq = 18 // LLC ADD_LINK_V2 request, server -> client
	ppAddLinkRej = 20 // LLC ADD_LINK_V2 reject, client -> server
	ppAck        = 24 // RC ACK, server -> client
	ppWrite      = 26 // RDMA WRITE, client -> server (PSN 0xddf8a4)
	ppCDC        = 27 // CDC seq 2 token 1 prod 0/88, client -> server
	ppServerCDC  = 31 // CDC seq 1 prod 0/64 cons 0/88, server -> client
	ppCDC3       = 35 // CDC seq 3 prod 0/152, client -> server
	ppServerCDC2 = 39 // CDC seq 2, server -> client
	ppProposal   = 8  // CLC Proposal
	ppAccept     = 10 // CLC Accept (server)
)

// Offsets in an SMC CDC message (struct smc_cdc_msg, net/smc/smc_cdc.h).
const (
	cdcSeq       = 2
	cdcProdWrap  = 10
	cdcProdCount = 12
	cdcProdFlags = 24
	cdcConnFlags = 25
)

// ExpertVectors are the crafted captures of the findings that the lab's
// kernels do not show by themselves, one finding each.
var ExpertVectors = []Vector{
	{"cursor-past-rmbe", "smc.cdc.cursor_past_rmbe", func(t testing.TB) string {
		// The producer cursor's byte count set to the RMBE's size (64 KiB):
		// Linux wraps it before that (smc_curs_add).
		return edit(t, "cursor-past-rmbe", ppCDC, func(m []byte) { binary.BigEndian.PutUint32(m[cdcProdCount:], 64<<10) })
	}},
	{"seq-dup", "smc.cdc.seq_dup", func(t testing.TB) string {
		return edit(t, "seq-dup", ppCDC, func(m []byte) { binary.BigEndian.PutUint16(m[cdcSeq:], 1) })
	}},
	{"seq-gap", "smc.cdc.seq_gap", func(t testing.TB) string {
		return edit(t, "seq-gap", ppCDC, func(m []byte) { binary.BigEndian.PutUint16(m[cdcSeq:], 5) })
	}},
	{"cursor-backwards", "smc.cdc.cursor_backwards", func(t testing.TB) string {
		return edit(t, "cursor-backwards", ppCDC3, func(m []byte) { binary.BigEndian.PutUint32(m[cdcProdCount:], 10) })
	}},
	{"write-blocked", "smc.cdc.write_blocked", func(t testing.TB) string {
		return edit(t, "write-blocked", ppCDC, func(m []byte) { m[cdcProdFlags] |= byte(decode.CDCWriteBlocked) })
	}},
	{"urgent", "smc.cdc.urgent", func(t testing.TB) string {
		return edit(t, "urgent", ppCDC, func(m []byte) { m[cdcProdFlags] |= byte(decode.CDCUrgentPending) })
	}},
	{"abort", "smc.conn.abort", func(t testing.TB) string {
		return edit(t, "abort", ppCDC, func(m []byte) { m[cdcConnFlags] |= byte(decode.CDCPeerConnAbort) })
	}},
	{"consumer-stall", "smc.cdc.consumer_stall", func(t testing.TB) string {
		// The client's second CDC says it filled the server's RMBE (a
		// wrap ahead of the server's consumer cursor 0/0), and the server
		// announces its first consumption a second later.
		fs := pingpong(t)
		m := smcMsg(t, fs, ppCDC, decode.CDCType)
		binary.BigEndian.PutUint16(m[cdcProdWrap:], 1)
		binary.BigEndian.PutUint32(m[cdcProdCount:], 0)
		FixICRC(t, fs[ppCDC-1].Data)
		later(fs, ppCDC+1, time.Second)
		return write(t, "consumer-stall", fs)
	}},
	{"test-link-unanswered", "smc.llc.test_link_unanswered", func(t testing.TB) string {
		// The server's second CDC (same PSN) becomes a TEST_LINK request
		// (v2: type 0x27, length 44 in host order, flags 0) that nothing
		// answers; the capture goes on for three seconds more.
		fs := pingpong(t)
		m := smcMsg(t, fs, ppServerCDC2, decode.CDCType)
		clear(m[:44])
		m[0], m[1], m[2] = byte(decode.LLCTestLinkV2), 44, 0
		FixICRC(t, fs[ppServerCDC2-1].Data)
		return write(t, "test-link-unanswered", fs)
	}},
	{"llc-unanswered", "smc.llc.unanswered", func(t testing.TB) string {
		// The client's ADD_LINK reject is never sent: the server's
		// request waits for ever. Left out with the server's ACK of it,
		// and the client's later PSNs one lower, as they would be (a
		// capture that only missed the reject shows its ACK, and the
		// request is then answered out of the capture's sight).
		fs := pingpong(t)
		psn := bthPSN(fs[ppAddLinkRej-1].Data)
		fs = append(fs[:ppAddLinkRej-1:ppAddLinkRej-1], fs[ppAddLinkRej+1:]...)
		for i := ppAddLinkRej - 1; i < len(fs); i++ {
			d := fs[i].Data
			// The client's requests and the server's ACKs of them.
			roce, fromClient := isRoCEFrom(d, 1) || isRoCEFrom(d, 2), isRoCEFrom(d, 2)
			if roce && fromClient != (d[bthOff] == opACK) && psnAfter(bthPSN(d), psn) {
				setPSN(d, bthPSN(d)-1)
				FixICRC(t, d)
			}
		}
		return write(t, "llc-unanswered", fs)
	}},
	{"llc-retransmitted", "smc.llc.retransmitted", func(t testing.TB) string {
		// The ADD_LINK request sent again on its PSN right after itself,
		// 2 ms later (the frames after it too): a copy within 1 ms with
		// nothing between would be the capture's (roce.capture.duplicate).
		fs := pingpong(t)
		dup := testutil.Packet{CI: fs[ppAddLinkReq-1].CI, Data: append([]byte(nil), fs[ppAddLinkReq-1].Data...)}
		dup.CI.Timestamp = dup.CI.Timestamp.Add(2 * time.Millisecond)
		for i := ppAddLinkReq; i < len(fs); i++ {
			fs[i].CI.Timestamp = fs[i].CI.Timestamp.Add(2 * time.Millisecond)
		}
		fs = append(fs[:ppAddLinkReq:ppAddLinkReq], append([]testutil.Packet{dup}, fs[ppAddLinkReq:]...)...)
		return write(t, "llc-retransmitted", fs)
	}},
	{"bad-icrc", "roce.icrc.bad", func(t testing.TB) string {
		// A CDC damaged on the way (its ICRC inverted; the ICRC is the
		// frame's last 4 bytes) and sent again (Resent).
		fs := Resent(pingpong(t), ppCDC, func(d []byte) { d[len(d)-1] ^= 0xff })
		return write(t, "bad-icrc", fs)
	}},
	{"bad-ip-checksum", "roce.ip_checksum.bad", func(t testing.TB) string {
		// A bit of the CDC's TTL flipped on the way: the ICRC leaves the
		// TTL out and still matches, the IPv4 header checksum fails; the
		// CDC sent again (Resent).
		fs := Resent(pingpong(t), ppCDC, func(d []byte) { d[14+8] ^= 0x01 })
		return write(t, "bad-ip-checksum", fs)
	}},
	{"damaged-copy", "roce.capture.damaged", func(t testing.TB) string {
		// A bit of the CDC's TTL flipped in the capture's copy alone: the
		// server's ACK of it follows, and nothing is sent again.
		fs := pingpong(t)
		fs[ppCDC-1].Data[14+8] ^= 0x01
		return write(t, "damaged-copy", fs)
	}},
	{"capture-duplicate", "roce.capture.duplicate", func(t testing.TB) string {
		// A CDC twice at the same time, as a mirror session copying both
		// directions of a port captures it.
		fs := pingpong(t)
		dup := testutil.Packet{CI: fs[ppCDC-1].CI, Data: append([]byte(nil), fs[ppCDC-1].Data...)}
		fs = append(fs[:ppCDC:ppCDC], append([]testutil.Packet{dup}, fs[ppCDC:]...)...)
		return write(t, "capture-duplicate", fs)
	}},
	{"capture-replayed", "smc.capture.replayed", func(t testing.TB) string {
		// A declined connection, its TCP closed, then the same frames
		// again a second after its last (tcpreplay of the capture, or
		// bench/mkbig's rounds).
		fs, _ := testutil.ReadFrames(t, filepath.Join(testutil.Root(t), "testdata", "reference", "decline-nordma.pcap"))
		shift := fs[len(fs)-1].CI.Timestamp.Sub(fs[0].CI.Timestamp) + time.Second
		for _, f := range fs[:len(fs):len(fs)] {
			f.CI.Timestamp = f.CI.Timestamp.Add(shift)
			fs = append(fs, f)
		}
		return write(t, "capture-replayed", fs)
	}},
	{"time-backwards", "smc.capture.time_backwards", func(t testing.TB) string {
		// One ACK stamped 5 s early, the frames after it as they were: a
		// capture host's clock stepped back and forth (the same step that
		// captures joined end to end make, once).
		fs := pingpong(t)
		fs[ppAck-1].CI.Timestamp = fs[ppAck-1].CI.Timestamp.Add(-5 * time.Second)
		return write(t, "time-backwards", fs)
	}},
	{"capture-damaged", "smc.capture.damaged", func(t testing.TB) string {
		// The record header of an ACK with a captured length no record
		// has, as a storage error or a copy that went wrong leaves it:
		// no kernel or capture point writes it. The file's damage, not
		// the network's: read past, the ACK's frame is missing.
		path := write(t, "capture-damaged", pingpong(t))
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(b[testutil.RecordOffsets(b)[ppAck-1]+8:], 0x7fffff00)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}},
	{"snap-cut", "smc.capture.snap_cut", func(t testing.TB) string {
		// One CDC kept to 70 of its 102 bytes, as a capture with -s 70
		// keeps it: 16 bytes of its 44-byte message, short of the
		// cursors.
		fs := pingpong(t)
		p := &fs[ppCDC-1]
		p.Data = p.Data[:70:70]
		p.CI.CaptureLength = 70
		return write(t, "snap-cut", fs)
	}},
	{"mirror-lost", "smc.capture.mirror_lost", func(t testing.TB) string {
		// Every frame as an ERSPAN type II session delivers it to a
		// collector, numbered from 1000, and the ACK of frame 24 lost on
		// the way: the protocol cannot tell (the next ACK covers more),
		// the session's numbering can.
		fs := pingpong(t)
		out := make([]testutil.Packet, 0, len(fs))
		for i, p := range fs {
			if i == ppAck-1 {
				continue
			}
			d := mutate.Carry("erspan2", p.Data, 1000+uint32(i), false)
			p.Data, p.CI.CaptureLength, p.CI.Length = d, len(d), len(d)
			out = append(out, p)
		}
		return write(t, "mirror-lost", out)
	}},
	{"capture-reordered", "roce.capture.reordered", func(t testing.TB) string {
		// A CDC the capture put after the server's ACK of it (frames 28
		// and 29), as a capture whose two directions arrive by different
		// queues does; the times stay in the capture's order.
		fs := pingpong(t)
		cdc, at := fs[ppCDC-1], fs[ppCDC-1].CI.Timestamp
		fs[ppCDC-1], fs[ppCDC], fs[ppCDC+1] = fs[ppCDC], fs[ppCDC+1], cdc
		fs[ppCDC+1].CI.Timestamp, fs[ppCDC].CI.Timestamp, fs[ppCDC-1].CI.Timestamp =
			fs[ppCDC].CI.Timestamp, fs[ppCDC-1].CI.Timestamp, at
		return write(t, "capture-reordered", fs)
	}},
	{"bad-length", "roce.length.bad", func(t testing.TB) string {
		// A CDC's UDP length 16 bytes more than the datagram: the frame
		// is whole, its ICRC untouched.
		fs := Resent(pingpong(t), ppCDC, func(d []byte) {
			u := d[RoCEIPOff+20+4:]
			binary.BigEndian.PutUint16(u, binary.BigEndian.Uint16(u)+16)
		})
		return write(t, "bad-length", fs)
	}},
	{"malformed", "smc.malformed", func(t testing.TB) string { return MalformedSMC(t) }},
	{"nak", "roce.rc.nak", func(t testing.TB) string {
		// An ACK turned into a NAK (AETH syndrome 0x60: PSN sequence error).
		return editAt(t, "nak", ppAck, RoCESMCOff, func(a []byte) { a[0] = 0x60 })
	}},
	{"rnr-nak", "roce.rc.rnr_nak", func(t testing.TB) string {
		// An ACK turned into an RNR NAK (syndrome 0x20 | RNR timer 1).
		return editAt(t, "rnr-nak", ppAck, RoCESMCOff, func(a []byte) { a[0] = 0x21 })
	}},
	{"psn-gap", "roce.rc.psn_gap", func(t testing.TB) string {
		// A WRITE lost on the way: the CDC after it arrives out of
		// sequence, the server NAKs the WRITE's PSN (PSN sequence error)
		// and the client sends both again (go-back-N), then the ACKs.
		fs := pingpong(t)
		w, cdc, ack := fs[ppWrite-1], fs[ppWrite], fs[ppWrite+1]
		nak := testutil.Packet{CI: ack.CI, Data: append([]byte(nil), ack.Data...)}
		nak.Data[RoCESMCOff] = 0x60 // AETH syndrome: NAK, PSN sequence error
		FixICRC(t, nak.Data)
		at := func(p testutil.Packet, us int) testutil.Packet {
			p.Data = append([]byte(nil), p.Data...)
			p.CI.Timestamp = cdc.CI.Timestamp.Add(time.Duration(us) * time.Microsecond)
			return p
		}
		ins := []testutil.Packet{at(cdc, 0), at(nak, 50), at(w, 100), at(cdc, 120)}
		fs = append(fs[:ppWrite-1:ppWrite-1], append(ins, fs[ppWrite+1:]...)...)
		return write(t, "psn-gap", fs)
	}},
	{"not-captured", "roce.rc.not_captured", func(t testing.TB) string {
		// A CDC missing from the capture alone: the server's ACK of its
		// PSN is there, the client's next request follows in sequence.
		fs := pingpong(t)
		fs = append(fs[:ppCDC-1:ppCDC-1], fs[ppCDC:]...)
		return write(t, "not-captured", fs)
	}},
	{"capture-unreadable", "smc.capture.unreadable", func(t testing.TB) string {
		// A CDC's copy filled with 0xaa from its EtherType on, as editcap
		// -E damages a frame (its addresses and DestQP gone): the
		// server's ACK of its PSN follows, nothing is sent again.
		fs := pingpong(t)
		d := fs[ppCDC-1].Data
		for i := 12; i < len(d); i++ {
			d[i] = 0xaa
		}
		return write(t, "capture-unreadable", fs)
	}},
	{"closed-without-close", "smc.conn.closed_without_close", func(t testing.TB) string {
		// The server's CDCs lose their peer_conn_closed flag: its TCP FIN
		// ends a connection whose SMC side it never closed.
		fs := pingpong(t)
		for i := range fs {
			d := fs[i].Data
			if len(d) > RoCESMCOff+cdcConnFlags && isRoCEFrom(d, 1) && d[RoCESMCOff] == decode.CDCType && d[RoCESMCOff+cdcConnFlags] != 0 {
				d[RoCESMCOff+cdcConnFlags] &^= byte(decode.CDCPeerConnClosed)
				FixICRC(t, d)
			}
		}
		return write(t, "closed-without-close", fs)
	}},
	{"handshake-slow", "smc.handshake.slow", func(t testing.TB) string {
		// The Accept and everything after it a second later.
		fs := pingpong(t)
		later(fs, ppProposal+1, time.Second)
		return write(t, "handshake-slow", fs)
	}},
	{"ended-pending", "smc.capture.ended_pending", func(t testing.TB) string {
		// The capture stops at the client's CLC Confirm: the server's
		// CONFIRM_LINK that comes next is not in it.
		return write(t, "ended-pending", pingpong(t)[:ppConfirmCLC])
	}},
	{"first-link-unconfirmed", "smc.link.first_unconfirmed", noLink},
	{"handshake-failed", "smc.handshake.failed", noLink},
	{"option-echoed", "smc.option.echoed_no_clc", func(t testing.TB) string {
		// Both SYNs carry the option, and the client's first bytes are
		// not CLC (the eyecatcher overwritten): a peer that does not
		// speak SMC behind a middlebox that echoed the option. No CLC
		// answers them (an Accept would say the server read a Proposal):
		// the capture ends with the server's ACK of them.
		fs := pingpong(t)[:ppProposal+1]
		d := fs[ppProposal-1].Data
		p := 14 + 20 + int(d[14+20+12]>>4)*4 // Ethernet, IPv4, TCP header
		copy(d[p:], "GET ")
		FixIPv4TCP(d) // as the peer sent them
		return write(t, "option-echoed", fs)
	}},
	{"tcp-checksum-bad", "tcp.checksum.bad", func(t testing.TB) string {
		// A bit of the Accept's peer ID flipped after its checksum was
		// made (a damaged copy): the message still decodes.
		fs := pingpong(t)
		d := fs[ppAccept-1].Data
		p := 14 + 20 + int(d[14+20+12]>>4)*4
		if string(d[p:p+4]) != "\xe2\xd4\xc3\xd9" {
			t.Fatalf("pingpong.pcap frame %d is no CLC message: % x", ppAccept, d[p:p+4])
		}
		d[p+8] ^= 1
		return write(t, "tcp-checksum-bad", fs)
	}},
	{"clc-wrong-sender", "smc.clc.wrong_sender", func(t testing.TB) string {
		// The client's Confirm with the type byte of an Accept, its
		// checksums made again: a copy damaged with the TCP checksum
		// still verifying (two damaged bytes that cancel out), as the
		// server's CONFIRM_LINK and the data after it show the server
		// took a Confirm.
		fs := pingpong(t)
		d := fs[ppConfirmCLC-1].Data
		clc := d[14+20+int(d[14+20+12]>>4)*4:] // Ethernet, IPv4, TCP header
		if clc[4] != byte(decode.CLCTypeConfirm) {
			t.Fatalf("pingpong.pcap frame %d is no CLC Confirm: % x", ppConfirmCLC, clc[:8])
		}
		clc[4] = byte(decode.CLCTypeAccept)
		FixIPv4TCP(d)
		return write(t, "clc-wrong-sender", fs)
	}},
	{"tcp-ip-checksum-bad", "tcp.ip_checksum.bad", func(t testing.TB) string {
		// A bit of the Accept's TTL flipped: the TCP checksum leaves the
		// TTL out and still verifies, the IPv4 header checksum fails.
		fs := pingpong(t)
		fs[ppAccept-1].Data[14+8] ^= 0x01
		return write(t, "tcp-ip-checksum-bad", fs)
	}},
}

// ExpertVector finds a vector by name.
func ExpertVector(t testing.TB, name string) Vector {
	t.Helper()
	for _, v := range ExpertVectors {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no crafted vector %q", name)
	return Vector{}
}

func pingpong(t testing.TB) []testutil.Packet {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, Pingpong(t))
	return fs
}

func write(t testing.TB, name string, fs []testutil.Packet) string {
	t.Helper()
	return testutil.WriteFrames(t, name+".pcap", layers.LinkTypeEthernet, fs)
}

// smcMsg is the SMC message of frame n, which must start with typ.
func smcMsg(t testing.TB, fs []testutil.Packet, n int, typ byte) []byte {
	t.Helper()
	m := fs[n-1].Data[RoCESMCOff:]
	if m[0] != typ {
		t.Fatalf("pingpong.pcap frame %d is not of type %#x: % x", n, typ, m[:4])
	}
	return m
}

// edit changes the CDC of frame n and fixes its ICRC.
func edit(t testing.TB, name string, n int, fn func(m []byte)) string {
	t.Helper()
	fs := pingpong(t)
	fn(smcMsg(t, fs, n, decode.CDCType))
	FixICRC(t, fs[n-1].Data)
	return write(t, name, fs)
}

// editAt changes frame n from offset off on and fixes its ICRC.
func editAt(t testing.TB, name string, n, off int, fn func(b []byte)) string {
	t.Helper()
	fs := pingpong(t)
	fn(fs[n-1].Data[off:])
	FixICRC(t, fs[n-1].Data)
	return write(t, name, fs)
}

// ResendAfter is how long a requester of Linux SMC-R waits for an ACK
// before it sends a request again: the RC transport timeout of its queue
// pairs (4.096 us << 15, SMC_QP_TIMEOUT in net/smc/smc_ib.h).
const ResendAfter = 134 * time.Millisecond

// Resent makes request frame n (1-based) of fs a copy damaged on the way
// by damage, which the receiver dropped: the requester sends the frame
// again, whole, ResendAfter later, and every frame after it comes that
// much later.
func Resent(fs []testutil.Packet, n int, damage func(frame []byte)) []testutil.Packet {
	again := testutil.Packet{CI: fs[n-1].CI, Data: append([]byte(nil), fs[n-1].Data...)}
	again.CI.Timestamp = again.CI.Timestamp.Add(ResendAfter)
	fs[n-1].Data = append([]byte(nil), fs[n-1].Data...)
	damage(fs[n-1].Data)
	later(fs, n+1, ResendAfter)
	return append(fs[:n:n], append([]testutil.Packet{again}, fs[n:]...)...)
}

// later moves frames from n (1-based) on by d.
func later(fs []testutil.Packet, n int, d time.Duration) {
	for i := n - 1; i < len(fs); i++ {
		fs[i].CI.Timestamp = fs[i].CI.Timestamp.Add(d)
	}
}

// BTH fields in pingpong.pcap's RoCEv2 frames.
const (
	bthOff = RoCEIPOff + 20 + 8
	opACK  = 0x11 // RC Acknowledge
)

func bthPSN(d []byte) uint32 {
	return uint32(d[bthOff+9])<<16 | uint32(d[bthOff+10])<<8 | uint32(d[bthOff+11])
}

func setPSN(d []byte, psn uint32) {
	d[bthOff+9], d[bthOff+10], d[bthOff+11] = byte(psn>>16), byte(psn>>8), byte(psn)
}

// psnAfter reports whether 24-bit PSN a comes after b.
func psnAfter(a, b uint32) bool {
	dd := (a - b) & 0xFFFFFF
	return dd != 0 && dd < 0x800000
}

// isRoCEFrom reports whether an IPv4 frame comes from 10.10.0.host.
func isRoCEFrom(d []byte, host byte) bool {
	return d[RoCEIPOff+9] == 17 && d[RoCEIPOff+12] == 10 && d[RoCEIPOff+13] == 10 && d[RoCEIPOff+14] == 0 && d[RoCEIPOff+15] == host
}

// noLink is the handshake, then the server's CONFIRM_LINK request and no
// other RoCE frame: the client never answers (nor acknowledges it), and
// TCP closes three seconds later. (Linux would decline with TIMEOUT_CL
// first; a capture with no RoCE frame of the link at all is one that
// does not show the link, not a failure: track's failPending.)
func noLink(t testing.TB) string {
	fs := pingpong(t)
	out := append([]testutil.Packet(nil), fs[:ppConfirmCLC]...)
	request := 0 // its index in out
	for _, f := range fs[ppConfirmCLC:] {
		switch {
		case len(f.Data) > 23 && f.Data[23] == 6: // IPv4 protocol TCP
			out = append(out, f)
		case request == 0 && len(f.Data) > RoCEIPOff+16 && isRoCEFrom(f.Data, 1):
			request = len(out)
			out = append(out, f)
		}
	}
	later(out, request+2, 3*time.Second)
	return write(t, "no-link", out)
}
