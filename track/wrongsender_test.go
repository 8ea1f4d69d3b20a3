package track

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// retyped is frames with the CLC message that begins frame n's (1-based)
// TCP payload carrying type typ, its checksums made again: a copy damaged
// in its type byte whose TCP checksum still verifies.
func retyped(t *testing.T, frames []rawFrame, n int, typ decode.CLCType) []rawFrame {
	t.Helper()
	return retypedSum(t, frames, n, typ, true)
}

// retypedSum is retyped, its checksums made again only with fix: without,
// the copy's TCP checksum fails (the capture damaged the type byte).
func retypedSum(t *testing.T, frames []rawFrame, n int, typ decode.CLCType, fix bool) []rawFrame {
	t.Helper()
	out := slices.Clone(frames)
	d := slices.Clone(out[n-1].Data)
	clc := tcpPayload(d)
	if len(clc) < 8 {
		t.Fatalf("frame %d holds no TCP payload", n)
	}
	if e := string(clc[:4]); e != "\xe2\xd4\xc3\xd9" && e != "\xe2\xd4\xc3\xc4" { // "SMCR", "SMCD" in EBCDIC
		t.Fatalf("frame %d holds no CLC message: % x", n, clc[:8])
	}
	clc[clcTypeOff] = byte(typ)
	if fix {
		crafted.FixIPv4TCP(d)
	}
	out[n-1].Data = d
	return out
}

// TestWrongSender: an Accept from the client or a Confirm from the server
// (one layout, SMC-R's and SMC-D's) is followed as the message its sender sends where the
// handshake goes on, with smc.clc.wrong_sender; a first contact's Confirm
// carried as an Accept does not decode as one (its GID list) and is still
// followed; a Proposal from the server is no step.
func TestWrongSender(t *testing.T) {
	type fact struct {
		outcome    Outcome
		clc        string
		confirmed  bool
		server, cl string
		version    uint8
	}
	facts := func(s Snapshot) []fact {
		var fs []fact
		for _, c := range s.Conns {
			fs = append(fs, fact{c.Outcome, fmt.Sprint(c.CLCTypes), !c.TConfirm.IsZero(),
				fmt.Sprint(c.ServerEP.QPN, c.ServerEP.Token), fmt.Sprint(c.ClientEP.QPN, c.ClientEP.Token), c.Version})
		}
		return fs
	}
	for _, tc := range []struct {
		file      string
		frame     int
		typ       decode.CLCType
		malformed bool // as carried, the message does not decode
	}{
		{"pingpong.pcap", 8, decode.CLCTypeAccept, true},     // first contact's Confirm
		{"pingpong.pcap", 7, decode.CLCTypeConfirm, true},    // first contact's Accept
		{"multiconn.pcap", 355, decode.CLCTypeAccept, false}, // a reusing connection's Confirm
		{"smcd-loopback.pcapng", 5, decode.CLCTypeAccept, false},
		{"smcd-loopback.pcapng", 9, decode.CLCTypeConfirm, false},
	} {
		name := fmt.Sprintf("%s frame %d as %s", tc.file, tc.frame, tc.typ)
		all := readRawFrames(t, "../samples/"+tc.file)
		base, _ := feedRaw(t, all)
		s, found := feedRaw(t, retyped(t, all, tc.frame, tc.typ))
		if got, want := facts(s), facts(base); !slices.Equal(got, want) {
			t.Errorf("%s: connections %+v, want %+v", name, got, want)
		}
		if !slices.Contains(found, expert.CLCWrongSender.String()) || slices.Contains(found, expert.HandshakeFailed.String()) {
			t.Errorf("%s: findings %v, want %s and no %s", name, found, expert.CLCWrongSender, expert.HandshakeFailed)
		}
		if got := slices.Contains(found, expert.Malformed.String()); got != tc.malformed {
			t.Errorf("%s: %s %v, want %v (the message as carried)", name, expert.Malformed, got, tc.malformed)
		}
		for _, f := range s.Findings() {
			if f.ID == expert.CLCWrongSender && (f.First != tc.frame || !strings.Contains(f.Detail, "followed as its")) {
				t.Errorf("%s: %s on frame %d: %q", name, f.ID, f.First, f.Detail)
			}
		}
	}

	// The same copies with their TCP checksums failing, and a type no
	// message has in the client's Proposal (multilink.pcap): the capture
	// damaged the byte, the sender's stack did not send it. Followed as
	// the message it is, with no smc.clc.wrong_sender.
	for _, tc := range []struct {
		file  string
		frame int
		typ   decode.CLCType
	}{
		{"pingpong.pcap", 8, decode.CLCTypeAccept},
		{"multiconn.pcap", 355, decode.CLCTypeAccept},
		{"multilink.pcap", 5, 0x4c},
	} {
		name := fmt.Sprintf("%s frame %d damaged to type %d", tc.file, tc.frame, tc.typ)
		all := readRawFrames(t, "../samples/"+tc.file)
		base, _ := feedRaw(t, all)
		s, found := feedRaw(t, retypedSum(t, all, tc.frame, tc.typ, false))
		if got, want := facts(s), facts(base); !slices.Equal(got, want) {
			t.Errorf("%s: connections %+v, want %+v", name, got, want)
		}
		if slices.Contains(found, expert.CLCWrongSender.String()) || !slices.Contains(found, expert.BadTCPSum.String()) {
			t.Errorf("%s: findings %v, want %s and no %s", name, found, expert.BadTCPSum, expert.CLCWrongSender)
		}
	}

	// A Proposal from the server is no step (the client awaits an
	// Accept): nothing of it is taken.
	tr := New(Options{Unshared: true})
	c := &Conn{ID: 1, Version: 2, EID: "E"}
	m := clcIn{typ: decode.CLCTypeProposal, version: 1, eid: "X", offered: "SMC-D"}
	tr.clc(c, DirS2C, &m, &input{number: 7}, false)
	if len(c.CLCTypes) != 0 || c.Version != 2 || c.EID != "E" || c.Offered != "" || !c.TProposal.IsZero() {
		t.Errorf("a Proposal from the server taken: %+v", c)
	}
	if mk := c.expert.find(expert.CLCWrongSender); mk == nil || mk.first != 7 || !strings.Contains(mk.text, "no step") {
		t.Errorf("a Proposal from the server: finding %+v", mk)
	}
}
