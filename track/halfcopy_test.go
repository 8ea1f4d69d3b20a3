package track

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/expert"
)

// TestDamagedClientHalf: pingpong.pcap where no TCP checksum of the
// handshake could be judged (every segment before the Confirm damaged in
// its window), the Accept malformed (its trailer), the Confirm's token
// damaged and the Proposal's v2 GID too, the link's CONFIRM_LINK
// exchange damaged past mending and the server's first CDC missed: the
// Confirm, its checksum failing as held, may be a damaged copy, so the
// server's first CDC the capture holds (sequence 2), to the client's
// queue pair and GID, places the connection with the token it carries;
// the Confirm's GID, a RoCE device's, stands against the Proposal's
// damaged one. One SMC-R connection, as in the whole capture, and its
// link group the handshake's, not one joined mid-stream (adoptHalf).
func TestDamagedClientHalf(t *testing.T) {
	const proposal, accept, confirm = 4, 6, 7           // indexes of frames 5, 7 and 8
	const confirmReq, confirmResp, firstCDC = 8, 10, 22 // frames 9, 11 and 23 (S->C CDC seq 1)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		for i := 2; i < confirm; i++ {
			fs[i].Data[48] ^= 0x04 // the TCP window
		}
		gid := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 10, 0, 2}
		p := fs[proposal].Data
		i := bytes.LastIndex(p, gid)
		if i < 0 {
			t.Fatal("no v2 GID in the Proposal")
		}
		p[i+4] ^= 0xb3
		a := fs[accept].Data
		a[len(a)-2] ^= 0x40           // the trailer's eyecatcher
		fs[confirm].Data[115] ^= 0x48 // the token
		for _, i := range []int{confirmReq, confirmResp} {
			d := fs[i].Data
			d[len(d)-20] ^= 0x11
			d[len(d)-30] ^= 0x22
		}
		return slices.Delete(fs, firstCDC, firstCDC+1)
	})
	if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR {
		got := connOutcomes(&s)
		t.Fatalf("connections %q, findings %v; want one SMC-R", got, found)
	}
	c := &s.Conns[0]
	if c.ClientEP.GID.String() != "::ffff:10.10.0.2" || c.Flow[DirS2C].CDCs == 0 || c.Flow[DirC2S].CDCs == 0 {
		t.Errorf("client GID %v, CDCs %d %d; want ::ffff:10.10.0.2 and CDCs both ways", c.ClientEP.GID, c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs)
	}
	if slices.Contains(found, expert.HandshakeFailed.String()) {
		t.Errorf("findings %v: smc.handshake.failed", found)
	}
	if d := findingDetail(&s, expert.Malformed); !strings.Contains(d, "a damaged copy") {
		t.Errorf("smc.malformed %q, want it said a damaged copy", d)
	}
	if len(s.LinkGroups) != 1 || s.LinkGroups[0].Inferred || s.LinkGroups[0].Version != 2 {
		t.Errorf("link groups %+v, want one, the handshake's (v2, not joined mid-stream)", s.LinkGroups)
	}
}

// TestConfirmedGID: a damaged Confirm's GID one byte off the one its
// Proposal offered, neither copy's checksum verifying: the one a RoCE
// device can have is read (wellFormedGID), and where both can, the
// Confirm's stands.
func TestConfirmedGID(t *testing.T) {
	for _, v := range []struct{ proposed, confirmed, want string }{
		{"::ffff:10.10.0.2", "0:80::ffff:a0a:2", "::ffff:10.10.0.2"},
		{"::b3:0:ffff:a0a:2", "::ffff:10.10.0.2", "::ffff:10.10.0.2"},
		{"::ffff:10.10.0.2", "::ffff:10.10.0.3", "::ffff:10.10.0.3"},
		{"fe80::5054:ff:fe0a:2", "fe80::5054:ff:fe0a:3", "fe80::5054:ff:fe0a:3"},
		{"fe80::5054:ff:fe0a:2", "80::5054:ff:fe0a:2", "fe80::5054:ff:fe0a:2"},
	} {
		c := &Conn{proposed: [2]netip.Addr{{}, netip.MustParseAddr(v.proposed)}}
		m := &clcIn{version: 2, ep: Endpoint{GID: netip.MustParseAddr(v.confirmed)}}
		if got := c.confirmedGID(m); got.String() != v.want {
			t.Errorf("proposed %s, confirmed %s: %s, want %s", v.proposed, v.confirmed, got, v.want)
		}
	}
}

// TestDamagedAcceptGIDNoDevice: pingpong.pcap with the Accept's GID
// damaged into one no RoCE device has (in the reserved ::/8), the
// Confirm's queue pair damaged too and the link's CONFIRM_LINK exchange
// damaged past mending: the server's first request whose ICRC verifies
// has the client's address alone of the key the two copies gave, and the
// damaged GID stands for its source (unknownEnds), so it keys the link;
// one SMC-R connection with its CDCs both ways, as in the whole capture.
func TestDamagedAcceptGIDNoDevice(t *testing.T) {
	const accept, confirm, confirmReq, confirmResp = 6, 7, 8, 10 // frames 7, 8, 9 and 11
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		fs[accept].Data[66+16+3] ^= 0xbc  // the GID's fourth byte
		fs[confirm].Data[66+38+2] ^= 0xf0 // the QPN's last byte
		for _, i := range []int{confirmReq, confirmResp} {
			d := fs[i].Data
			d[len(d)-20] ^= 0x11
			d[len(d)-30] ^= 0x22
		}
		return fs
	})
	checkOneSMCR(t, "", s, found, &base)
}

// checkOneSMCR wants s to hold one connection, SMC-R, and no
// smc.handshake.failed among found; where base is not nil, its CDCs and
// bytes (flowTotalsOf). what prefixes the failures.
// connOutcomes is each connection of s as its outcome and detail, for a
// test's message.
func connOutcomes(s *Snapshot) []string {
	var got []string
	for i := range s.Conns {
		got = append(got, fmt.Sprintf("%v %s", s.Conns[i].Outcome, ConnDetail(&s.Conns[i])))
	}
	return got
}

func checkOneSMCR(t *testing.T, what string, s Snapshot, found []string, base *Snapshot) {
	t.Helper()
	if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR || slices.Contains(found, expert.HandshakeFailed.String()) {
		got := connOutcomes(&s)
		t.Fatalf("%sconnections %q, findings %v; want one SMC-R, not failed", what, got, found)
	}
	if base == nil {
		return
	}
	if got, want := flowTotalsOf(s), flowTotalsOf(*base); got != want {
		t.Errorf("%sCDCs and bytes %v, want %v", what, got, want)
	}
}

// TestDamagedAcceptGIDAndPSNs: TestDamagedAcceptGIDNoDevice's capture
// with the first PSN both CLC messages announced damaged in a byte too
// (the Accept's and the Confirm's middle byte) and the Confirm's queue
// pair intact: the link's first requests whose ICRC verifies carry two
// parts of a direction's key and a PSN shortly after one a byte off the
// announced one (psnByteOff), so they key the link and set its first
// PSN (firstOfKey). With the GID intact and the PSNs' high byte damaged,
// the link's first requests find it by their key, and set its first PSN
// the same way (firstPSNOff). One SMC-R connection with its CDCs both
// ways, as in the whole capture.
func TestDamagedAcceptGIDAndPSNs(t *testing.T) {
	const accept, confirm, confirmReq, confirmResp = 6, 7, 8, 10 // frames 7, 8, 9 and 11
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	for _, v := range []struct {
		gid     bool
		psnByte int
	}{{true, 62}, {false, 61}} {
		s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
			if v.gid {
				fs[accept].Data[66+16+3] ^= 0xbc // the GID's fourth byte
			}
			fs[accept].Data[66+v.psnByte] ^= 0x5a // a byte of the PSN
			fs[confirm].Data[66+v.psnByte] ^= 0x0b
			for _, i := range []int{confirmReq, confirmResp} {
				d := fs[i].Data
				d[len(d)-20] ^= 0x11
				d[len(d)-30] ^= 0x22
			}
			return fs
		})
		checkOneSMCR(t, fmt.Sprintf("GID damaged %v: ", v.gid), s, found, &base)
	}
}

// TestPSNByteOff: a PSN at or shortly after one that differs from the
// announced first PSN in its high or middle byte gives that first PSN;
// one differing in two bytes, or too far after, none; one differing only
// in the low byte, only a CONFIRM_LINK's, at that PSN.
func TestPSNByteOff(t *testing.T) {
	for _, v := range []struct {
		psn, announced, first uint32
		confirm, ok           bool
	}{
		{0x5e2051, 0x5ed951, 0x5e2051, false, true},
		{0x5e2054, 0x5ed951, 0x5e2051, false, true},
		{0x61f6e9, 0x61fde9, 0x61f6e9, false, true},
		{0x001234, 0xff1234, 0x001234, false, true},
		{0x5e2051, 0x5e2051, 0, true, false}, // the announced one: no damage to mend
		{0x5e2051, 0x5ed952, 0, false, false},
		{0x5e2051, 0x5e2052, 0, false, false},
		{0x5e2051 + psnOffAhead, 0x5ed951, 0, false, false},
		{0xdeb26c, 0xdeb2dd, 0xdeb26c, true, true},
		{0xdeb26d, 0xdeb2dd, 0, false, false},
	} {
		first, ok := psnByteOff(v.psn, v.announced, v.confirm)
		if ok != v.ok || first != v.first {
			t.Errorf("psnByteOff(%#06x, %#06x, %v) = %#06x %v, want %#06x %v", v.psn, v.announced, v.confirm, first, ok, v.first, v.ok)
		}
	}
}

// TestBlindHandshakeBesideDamagedSYN: pingpong.pcap where no TCP checksum
// could be judged (every handshake segment damaged in its window), the
// SYN's port and sequence number damaged too (a connection of its own,
// which no SYN-ACK answers), the Accept's sequence number (its bytes not
// read as CLC) and the Confirm's trailer: the one handshake between the
// hosts is the connection whose CDCs came up after it (adoptJoined); the
// damaged SYN's, answered by nothing, is no other candidate for them.
func TestBlindHandshakeBesideDamagedSYN(t *testing.T) {
	const syn, accept, confirm = 2, 6, 7 // frames 3, 7 and 8
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		for i := syn; i <= confirm; i++ {
			fs[i].Data[48] ^= 0x04 // the TCP window
		}
		fs[syn].Data[35] ^= 0x30 // the client's port
		fs[syn].Data[40] ^= 0x21 // the sequence number
		fs[accept].Data[40] ^= 0x08
		c := fs[confirm].Data
		c[len(c)-2] ^= 0x40                      // the trailer's eyecatcher
		for _, i := range []int{8, 10, 19, 22} { // CONFIRM_LINK and the first CDC of each direction (frames 9, 11, 20 and 23)
			d := fs[i].Data
			d[len(d)-20] ^= 0x11
			d[len(d)-30] ^= 0x22
		}
		return fs
	})
	var smcr, failed int
	for i := range s.Conns {
		switch s.Conns[i].Outcome {
		case OutcomeSMCR:
			smcr++
		case OutcomeFailed, OutcomeUnknown:
			failed++
		}
	}
	if smcr != 1 || failed != 0 || slices.Contains(found, expert.HandshakeFailed.String()) {
		got := connOutcomes(&s)
		t.Errorf("connections %q, findings %v; want one SMC-R, none failed or joined", got, found)
	}
}

// TestDamagedSYNAddressVouched: pingpong.pcap with its SYN-ACK unreadable,
// the SYN's client address damaged (its checksum fails) and the
// Proposal's TTL and window (both its checksums fail): the SYN's checksum
// verifies with the Proposal's addresses, so the connection is the
// Proposal's 4-tuple from its SYN on, not a SYN alone beside a handshake
// begun mid-stream.
func TestDamagedSYNAddressVouched(t *testing.T) {
	const syn, synack, proposal = 2, 3, 4 // frames 3, 4 and 5
	base, _ := feedRaw(t, readRawFrames(t, "../samples/pingpong.pcap"))
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		fs[syn].Data[29] ^= 0x11 // the client's address
		fillAA(fs[synack].Data, 12)
		fs[proposal].Data[22] ^= 0x01 // the TTL
		fs[proposal].Data[48] ^= 0x04 // the window
		return fs
	})
	if len(s.Conns) != 1 || s.Conns[0].Outcome != OutcomeSMCR || s.Conns[0].Client != base.Conns[0].Client || s.Conns[0].TSYN != base.Conns[0].TSYN {
		var got []string
		for i := range s.Conns {
			got = append(got, fmt.Sprintf("%v %v %s", s.Conns[i].Client, s.Conns[i].Outcome, ConnDetail(&s.Conns[i])))
		}
		t.Errorf("connections %q, findings %v; want one SMC-R from %v, its SYN at %v", got, found, base.Conns[0].Client, base.Conns[0].TSYN)
	}
	if d := findingDetail(&s, expert.BadTCPSum); !strings.Contains(d, "vouches for") {
		t.Errorf("tcp.checksum.bad %q, want the SYN's damage told", d)
	}
}

// TestDamagedIPv6Handshake: ipv6.pcap (no IPv4 header checksum to vouch
// for addresses) with its handshake's 4-tuples damaged as editcap -E 0.02
// damaged them: the SYN's two addresses and its SYN-ACK's server address
// another way, neither checksum verifying with any mix of them, where the
// client's Decline after them verifies (sumVerifies: no vote needed); and
// the Decline's client address and port damaged, its bytes its stream's
// next to the number (nextBytes). Each is the whole capture's one
// fallback by the client's Decline.
func TestDamagedIPv6Handshake(t *testing.T) {
	const syn, synAck, decline = 12, 13, 14 // frames 13, 14 and 15
	base, _ := feedRaw(t, readRawFrames(t, "../samples/ipv6.pcap"))
	for _, v := range []struct {
		name   string
		damage func(fs []rawFrame)
	}{
		{"SYN's addresses, SYN-ACK's server address", func(fs []rawFrame) {
			fs[syn].Data[22+6] ^= 0xc8  // client address
			fs[syn].Data[38+11] ^= 0x01 // server address
			fs[syn].Data[54+14] ^= 0x02 // the window: no mix verifies
			fs[synAck].Data[22+11] ^= 0x4e
			fs[synAck].Data[54+14] ^= 0x02
		}},
		{"Decline's client address and port", func(fs []rawFrame) {
			fs[decline].Data[22+3] ^= 0x35 // client address
			fs[decline].Data[54+0] ^= 0x8b // client port
		}},
	} {
		s, found := feedDamaged(t, "../samples/ipv6.pcap", func(fs []rawFrame) []rawFrame { v.damage(fs); return fs })
		if len(s.Conns) != 1 || ConnDetail(&s.Conns[0]) != ConnDetail(&base.Conns[0]) || s.Conns[0].Client != base.Conns[0].Client {
			var got []string
			for i := range s.Conns {
				got = append(got, fmt.Sprintf("%v %s", s.Conns[i].Client, ConnDetail(&s.Conns[i])))
			}
			t.Errorf("%s: connections %q, findings %v; want %v %q", v.name, got, found, base.Conns[0].Client, ConnDetail(&base.Conns[0]))
		}
	}
}

// TestConnUpAfterMalformedFailure: a connection failed on a malformed CLC
// message whose checksum nothing judged, its TCP closed, whose CDC or
// link the capture shows only later (a request kept out of sequence):
// SMC-R, not failed, and not a failure with no reason.
func TestConnUpAfterMalformedFailure(t *testing.T) {
	c := &Conn{Outcome: OutcomeFailed, Failure: "malformed CLC from the client: x", failedMalformed: true, malformedUnjudged: true}
	c.expert.add(expert.HandshakeFailed, 9, 0, "")
	connUp(c)
	if c.Outcome != OutcomeSMCR || c.Failure != "" || c.expert.find(expert.HandshakeFailed) != nil {
		t.Errorf("outcome %v, failure %q, smc.handshake.failed %v; want SMC-R, none, none", c.Outcome, c.Failure, c.expert.find(expert.HandshakeFailed) != nil)
	}
}

// TestMalformedAnswered: pingpong.pcap where no TCP checksum of the
// handshake could be judged (each damaged in its window, the Confirm's
// too) and the Proposal's length field damaged past any CLC message's:
// the server's Accept answers it, which Linux's receiver of a malformed
// message never does (EPROTO, nothing sent), so the Proposal was a
// damaged copy, and smc.malformed says the server answered it. With the
// Accept missed too, the client's Confirm, sent for an Accept, says so.
// One SMC-R connection, as in the whole capture.
func TestMalformedAnswered(t *testing.T) {
	const proposal, accept, confirm = 4, 6, 7 // frames 5, 7 and 8
	for _, v := range []struct {
		missed bool
		want   string
	}{
		{false, "a damaged copy: the server answered it"},
		{true, "a damaged copy: the client sent a CLC Confirm after it"},
	} {
		s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
			for i := 2; i <= confirm; i++ {
				fs[i].Data[48] ^= 0x04 // the TCP window
			}
			fs[proposal].Data[66+5] ^= 0x80 // the length's high byte
			if v.missed {
				return slices.Delete(fs, accept, accept+1)
			}
			return fs
		})
		checkOneSMCR(t, fmt.Sprintf("Accept missed %v: ", v.missed), s, found, nil)
		if d := findingDetail(&s, expert.Malformed); !strings.Contains(d, v.want) {
			t.Errorf("Accept missed %v: smc.malformed %q, want it said %q", v.missed, d, v.want)
		}
	}
}

// TestMalformedAnsweredAfterReset: TestMalformedAnswered's capture with
// the server's ACK of the Proposal damaged into a reset and the Accept's
// flags damaged too (a SYN), so that the reset stands until the server's
// FIN undoes it (resetUndone): the Accept, the Confirm and the CDCs that
// came while it stood still say the Proposal was a damaged copy and the
// connection SMC-R. One SMC-R connection, as in the whole capture.
func TestMalformedAnsweredAfterReset(t *testing.T) {
	const proposal, ack, accept, confirm = 4, 5, 6, 7 // frames 5, 6, 7 and 8
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		for i := 2; i <= confirm; i++ {
			fs[i].Data[48] ^= 0x04 // the TCP window
		}
		fs[proposal].Data[66+5] ^= 0x80 // the length's high byte
		fs[ack].Data[47] |= 0x04        // RST
		fs[accept].Data[47] |= 0x02     // SYN
		return fs
	})
	checkOneSMCR(t, "", s, found, &base)
}

// TestMalformedConfirmNoAccept: multiconn.pcap's second connection (a
// reused link group) with no TCP checksum of its handshake judged (each
// damaged in its window), its Proposal's and Accept's eyecatchers damaged
// past reading and its Confirm's trailer. The Proposal's bytes made a
// fallback for want of CLC, which the malformed Confirm's header undoes
// (noCLCUndone: a client confirms only an Accept); the connection's CDCs
// then place it (by the Confirm's GID, queue pair and token where one
// link takes them, placeMalformedConfirm, else as a blind handshake) and
// say the server read it whole (malformedCopy). SMC-R with its CDCs both
// ways, as in the whole capture: neither a fallback nor failed. (That the
// Confirm's fields place it where blind placement cannot is held by
// TestHeavyDamageHandshakes' multiconn copies 509/11 and 515/2.)
func TestMalformedConfirmNoAccept(t *testing.T) {
	clean := readRawFrames(t, "../samples/multiconn.pcap")
	base, _ := feedRaw(t, clean)
	const proposal, accept, confirm = 314 - 1, 336 - 1, 355 - 1 // indexes of frames 314, 336 and 355
	s, found := feedDamaged(t, "../samples/multiconn.pcap", func(fs []rawFrame) []rawFrame {
		for _, n := range []int{308, 309, 314, 315, 336, 355, 376} {
			fs[n-1].Data[48] ^= 0x04 // the TCP window
		}
		for _, i := range []int{proposal, accept} {
			fs[i].Data[66] ^= 0x5a // the eyecatcher
			fs[i].Data[67] ^= 0x33
		}
		c := fs[confirm].Data
		c[len(c)-1] ^= 0x40 // the trailer's last byte
		return fs
	})
	var c *Conn
	for i := range s.Conns {
		if s.Conns[i].Client.Port() == 36946 {
			if c != nil {
				t.Fatalf("two connections of client port 36946, findings %v", found)
			}
			c = &s.Conns[i]
		}
	}
	var want *Conn
	for i := range base.Conns {
		if base.Conns[i].Client.Port() == 36946 {
			want = &base.Conns[i]
		}
	}
	if c == nil || c.Outcome != OutcomeSMCR || c.FirstContact {
		t.Fatalf("connection of client port 36946: %+v, findings %v; want SMC-R, a reused link group", c, found)
	}
	for d := range c.Flow {
		if c.Flow[d].CDCs != want.Flow[d].CDCs {
			t.Errorf("%v CDCs %d, want %d", Dir(d), c.Flow[d].CDCs, want.Flow[d].CDCs)
		}
	}
	if det := findingDetail(&s, expert.Malformed); !strings.Contains(det, "a damaged copy") {
		t.Errorf("smc.malformed %q, want it said a damaged copy", det)
	}
}

// TestConfirmTypeDamaged: pingpong.pcap's Confirm with its type byte
// damaged into one no CLC message has, its checksum failing as held, no
// checksum of the handshake judged: the client's next step after the
// Accept is its Confirm, and the bytes decode whole as one (retype), so it
// is read as the Confirm, not a malformed message the handshake fails on.
// One SMC-R connection, as in the whole capture.
func TestConfirmTypeDamaged(t *testing.T) {
	const confirm = 7 // frame 8
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		for i := 2; i <= confirm; i++ {
			fs[i].Data[48] ^= 0x04 // the TCP window
		}
		fs[confirm].Data[66+4] = 0x65 // the type
		return fs
	})
	checkOneSMCR(t, "", s, found, &base)
	if s.Conns[0].TConfirm.IsZero() {
		t.Errorf("no Confirm read (findings %v): want frame 8 read as the Confirm", found)
	}
}

// TestDamagedAddressCopy: pingpong.pcap with a copy of a CLC message
// after it (a mirror's duplicate) whose destination address and port the
// capture damaged (two fields: no sequence number ties a copy of bytes
// already seen to its connection): its IPv4 header checksum fails where
// its sender's headers verified, so the 4-tuple it names begins no
// connection, and it counts as a damaged copy among the segments not
// tracked. One SMC-R connection, as in the whole capture.
func TestDamagedAddressCopy(t *testing.T) {
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	for _, at := range []int{4, 6} { // frames 5 and 7: the Proposal, the Accept
		s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
			dup := fs[at]
			dup.Data = bytes.Clone(dup.Data)
			dup.Data[14+19] ^= 0x40 // the destination address's last byte
			dup.Data[34+3] ^= 0x20  // the destination port's low byte
			return slices.Insert(fs, at+1, dup)
		})
		checkOneSMCR(t, fmt.Sprintf("frame %d copied: ", at+1), s, found, &base)
		if st := s.Stats; st.TCPDamaged != 1 || st.TCPUntracked != 1 {
			t.Errorf("frame %d copied: %d TCP segments not tracked, %d of them damaged copies: want the copy, 1 and 1", at+1, st.TCPUntracked, st.TCPDamaged)
		}
	}
}

// TestSYNACKBitLost: pingpong.pcap with its SYN's flags damaged past
// reading as one (RST, PSH, ACK) and its SYN-ACK's ACK bit lost, RST set
// instead, both checksums failing: the server's segment, a SYN whose
// acknowledgement number is the client's (a SYN's is 0), is its SYN-ACK,
// and the connection is the client's, not one the server began. One SMC-R
// connection, as in the whole capture.
func TestSYNACKBitLost(t *testing.T) {
	const syn, synAck = 2, 3 // frames 3 and 4
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		fs[syn].Data[34+13] = 0x1C    // RST, PSH, ACK
		fs[synAck].Data[34+13] = 0x06 // SYN, RST
		return fs
	})
	checkOneSMCR(t, "", s, found, &base)
	if c := s.Conns[0]; c.Client.Port() == 5000 {
		t.Errorf("client %v, server %v: want the server on port 5000", c.Client, c.Server)
	}
}

// TestSYNTwoFieldsOff: pingpong.pcap with its SYN's destination address
// and port damaged (its IPv4 header checksum failing), its SYN-ACK
// missed, and a byte of the Proposal damaged (its TCP checksum failing,
// its IPv4 header's verifying): the SYN's checksum verifies with the
// Proposal's 4-tuple and its own sequence number, so the connection is
// the Proposal's, not the damaged SYN's. One SMC-R connection between the
// hosts' own ends, as in the whole capture.
func TestSYNTwoFieldsOff(t *testing.T) {
	const syn, synAck, proposal = 2, 3, 4 // frames 3, 4 and 5
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		fs[syn].Data[14+18] ^= 0x08 // the destination address's third byte
		fs[syn].Data[34+2] ^= 0x40  // the destination port's high byte
		fs[proposal].Data[66+9] ^= 0x01
		return slices.Delete(fs, synAck, synAck+1)
	})
	checkOneSMCR(t, "", s, found, &base)
	if c, w := s.Conns[0], base.Conns[0]; c.Client != w.Client || c.Server != w.Server {
		t.Errorf("connection %v -> %v, want %v -> %v", c.Client, c.Server, w.Client, w.Server)
	}
}

// TestUnknownTypeRoles: pingpong.pcap from its Accept on (the capture
// began late), the Accept's type byte damaged into one no CLC message
// has: the connection's client is the end whose port is the higher, not
// the message's sender.
func TestUnknownTypeRoles(t *testing.T) {
	const accept = 6 // frame 7
	s, _ := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
		fs[accept].Data[66+4] = 0x52 // the type
		return fs[accept:]
	})
	if len(s.Conns) == 0 || s.Conns[0].Client.Port() == 5000 {
		t.Fatalf("connections %+v: want the first one's client on the ephemeral port", s.Conns)
	}
}

// TestMalformedFirstConfirmLinked: pingpong.pcap where no TCP checksum of
// the handshake verifies and the Confirm's trailer is damaged (malformed,
// its checksum judged neither way). With the Accept's QPN and GID damaged
// too (a first contact's Accept that names no end of the link), only the
// link's first CONFIRM_LINK, to the queue pair the Confirm's copy names,
// says the server read the Confirm whole (halfAnnounced on
// Conn.malformedEP; TestHeavyDamage's pingpong copy 543/1). With the
// Accept whole, missed, or a damaged copy itself (malformed, its IPv4
// header checksum failing) and the CONFIRM_LINK request past reading, the
// link group that came up right after says so as well (blind placement,
// which these variants keep to); the lossy copy 542/4 that needs the
// malformed Confirm's end with no Accept read is TestHeavyDamageHandshakes'.
// One SMC-R connection, as in the whole capture, the malformed message a
// damaged copy read at its frame's time (the Confirm's, as whole).
func TestMalformedFirstConfirmLinked(t *testing.T) {
	const accept, confirm, confirmLink = 6, 7, 8 // frames 7, 8 and 9
	clean := readRawFrames(t, "../samples/pingpong.pcap")
	base, _ := feedRaw(t, clean)
	for _, v := range []string{"Accept whole", "Accept's QPN and GID damaged", "Accept missed", "Accept a damaged copy"} {
		s, found := feedDamaged(t, "../samples/pingpong.pcap", func(fs []rawFrame) []rawFrame {
			for i := 2; i <= confirm; i++ {
				fs[i].Data[48] ^= 0x04 // the TCP window
			}
			fs[confirm].Data[66+176+2] ^= 0x40 // the trailer's third byte
			switch v {
			case "Accept's QPN and GID damaged":
				fs[accept].Data[66+38] ^= 0xe5 // the QPN's high byte
				fs[accept].Data[66+31] ^= 0x48 // the GID's last byte
			case "Accept missed":
				return slices.Delete(fs, accept, accept+1)
			case "Accept a damaged copy":
				fs[accept].Data[14+8] ^= 0x01     // the TTL
				fs[accept].Data[66+156+2] ^= 0x40 // the trailer's third byte
			}
			return fs
		})
		checkOneSMCR(t, v+": ", s, found, &base)
		if d := findingDetail(&s, expert.Malformed); !strings.Contains(d, "a damaged copy") {
			t.Errorf("%s: smc.malformed %q, want it said a damaged copy", v, d)
		}
		if got, want := s.Conns[0].TConfirm, base.Conns[0].TConfirm; !got.Equal(want) {
			t.Errorf("%s: Confirm at %v, want %v (frame 8's)", v, got, want)
		}
	}
}

// TestDamagedTTLSYNACKBegins: multiconn.pcap with its second
// connection's SYN missed and its SYN-ACK's TTL damaged: the SYN-ACK's IPv4
// header checksum fails where the server's (the first connection's)
// verified, but its TCP checksum, which covers the addresses and ports,
// verifies, so it still begins its connection. Four connections, each
// SMC-R, the second with its SYN-ACK seen.
func TestDamagedTTLSYNACKBegins(t *testing.T) {
	const syn, synAck = 307, 308 // frames 308 and 309
	s, found := feedDamaged(t, "../samples/multiconn.pcap", func(fs []rawFrame) []rawFrame {
		fs[synAck].Data[14+8] ^= 0x01 // the TTL
		return slices.Delete(fs, syn, syn+1)
	})
	got := connOutcomes(&s)
	if len(s.Conns) != 4 || slices.ContainsFunc(s.Conns, func(c Conn) bool { return c.Outcome != OutcomeSMCR }) {
		t.Fatalf("connections %q (findings %v), want four SMC-R", got, found)
	}
	if !s.Conns[1].SeenSYNACK {
		t.Errorf("the second connection saw no SYN-ACK: want it begun at its SYN-ACK")
	}
}
