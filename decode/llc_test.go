package decode

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

func roceDecodeLLC(t testing.TB, b []byte) *LLC {
	t.Helper()
	l := &LLC{}
	if err := l.DecodeFromBytes(b, &roceFeedback{}); err != nil {
		t.Fatalf("LLC % x: %v", b[:min(len(b), 8)], err)
	}
	return l
}

var (
	roceHwiplMAC = [6]byte{0x98, 0x03, 0x9b, 0xab, 0xcd, 0xef}
	roceHwiplGID = netip.MustParseAddr("fe80::9a03:9bff:feab:cdef")
	roceSrvMAC   = [6]byte{0x52, 0x54, 0x00, 0x0a, 0x00, 0x01}
	roceCliMAC   = [6]byte{0x52, 0x54, 0x00, 0x0a, 0x00, 0x02}
	roceSrvGID   = netip.MustParseAddr("::ffff:10.10.0.1")
	roceCliGID   = netip.MustParseAddr("::ffff:10.10.0.2")
)

// TestLLCVectorsV1 checks the hwipl SMC-R v1 messages against the values
// testdata/vectors/SOURCES.md gives for them.
func TestLLCVectorsV1(t *testing.T) {
	l := roceDecodeLLC(t, roceVector(t, "llc_v1_confirm_link_req"))
	if l.Type != LLCConfirmLink || l.Version != 1 || l.Length != 44 || l.Flags != 0x03 || l.Response {
		t.Errorf("header %v v%d len %d flags %#x resp %v", l.Type, l.Version, l.Length, l.Flags, l.Response)
	}
	if c := l.ConfirmLink; c != (LLCConfirmLinkBody{MAC: roceHwiplMAC, GID: roceHwiplGID, QPN: 263, LinkID: 0,
		LinkUID: 0x00010000, MaxLinks: 2, NoRMBEEyecatcher: true}) {
		t.Errorf("CONFIRM LINK %+v", c)
	}

	l = roceDecodeLLC(t, roceVector(t, "llc_v1_add_link_req"))
	a := l.AddLink
	if l.Type != LLCAddLink || a.MAC != roceHwiplMAC || a.GID != roceHwiplGID || a.QPN != 0 || a.LinkID != 0 ||
		a.MTU != 0 || a.PSN != 0 || a.Rejected || a.RejectReason != 0 || a.V2Ext || l.Response {
		t.Errorf("ADD LINK %v %+v", l.Type, a)
	}

	l = roceDecodeLLC(t, roceVector(t, "llc_v1_delete_link_req_all_orderly"))
	if l.Type != LLCDeleteLink || l.DeleteLink != (LLCDeleteLinkBody{LinkID: 0, Reason: 0, All: true, Orderly: true}) || l.Response {
		t.Errorf("DELETE LINK %+v", l.DeleteLink)
	}

	l = roceDecodeLLC(t, roceVector(t, "llc_v1_confirm_rkey_req"))
	c := l.ConfirmRKey
	if l.Type != LLCConfirmRKey || c.NumOtherLinks != 0 || c.RKey != 5469 || c.VA != 0xeef4d0000 ||
		c.Negative || c.Retry || len(c.OtherLinks()) != 0 || c.Others != [2]LLCRToken{} {
		t.Errorf("CONFIRM RKEY %+v", c)
	}

	l = roceDecodeLLC(t, roceVector(t, "llc_v1_delete_rkey_req"))
	d := l.DeleteRKey
	if l.Type != LLCDeleteRKey || d.NumRKeys != 1 || d.ErrMask != 0 || d.Negative ||
		len(d.RKeyList()) != 1 || d.RKeyList()[0] != 5469 {
		t.Errorf("DELETE RKEY %+v", d)
	}
}

// TestLLCReference checks the v2 LLCs of pingpong.pcap (§11.8-11.12).
func TestLLCReference(t *testing.T) {
	l := roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 14))
	if l.Type != LLCConfirmLinkV2 || l.Version != 2 || l.Length != 44 || l.LengthBigEndian || l.Flags != 0x03 || l.Response {
		t.Errorf("frame 14 header %+v", l)
	}
	if c := l.ConfirmLink; c != (LLCConfirmLinkBody{MAC: roceSrvMAC, GID: roceSrvGID, QPN: 0x11, LinkID: 1,
		LinkUID: 0x101, MaxLinks: 2, MaxConns: 255, NoRMBEEyecatcher: true}) {
		t.Errorf("frame 14 %+v", c)
	}
	l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 16))
	if c := l.ConfirmLink; !l.Response || l.Flags != 0x83 || c != (LLCConfirmLinkBody{MAC: roceCliMAC, GID: roceCliGID,
		QPN: 0x11, LinkID: 1, LinkUID: 0x101, MaxLinks: 2, MaxConns: 255, NoRMBEEyecatcher: true}) {
		t.Errorf("frame 16 %+v", c)
	}

	// ADD LINK v2 request, 88 bytes, one rkey triplet (the server RMB of
	// the CLC Accept: rkey 0x3a9, VA ff30243b84730000).
	l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 18))
	a := &l.AddLink
	if l.Type != LLCAddLinkV2 || l.Length != 88 || l.Response || a.Rejected || a.MAC != roceSrvMAC ||
		a.GID != roceSrvGID || a.QPN != 0x12 || a.LinkID != 2 || a.MTU != 3 || a.PSN != 0xe0dd7c ||
		!a.V2Ext || !a.Direct || a.TargetGID != roceSrvGID || a.NumRKeys != 1 {
		t.Errorf("frame 18 %+v", a)
	}
	if ts := a.Triplets(); len(ts) != 1 || ts[0] != (LLCRKeyTriplet{RKey: 0x3a9, RKeyNew: 0x5c9, VANew: 0xff30243b84730000}) {
		t.Errorf("frame 18 triplets %+v", ts)
	}
	// The client's reject echoes the first 44 bytes of that request.
	l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 20))
	a = &l.AddLink
	if l.Type != LLCAddLinkV2 || l.Length != 44 || l.Flags != 0xc0 || !l.Response || !a.Rejected ||
		a.V2Ext || a.MAC != roceSrvMAC || a.QPN != 0x12 || a.LinkID != 2 || a.PSN != 0xe0dd7c || a.RejectReason != 0 {
		t.Errorf("frame 20 %+v", a)
	}

	l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 4114))
	if d := l.DeleteRKey; l.Type != LLCDeleteRKeyV2 || l.Response || d.NumRKeys != 1 || d.ErrMask != 0 ||
		d.RKeyList()[0] != 0x369 {
		t.Errorf("frame 4114 %+v", d)
	}
	l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 4117))
	if d := l.DeleteRKey; !l.Response || d.NumRKeys != 1 || d.ErrMask != 0 || d.RKeyList()[0] != 0 {
		t.Errorf("frame 4117 %+v", d)
	}

	for _, c := range []struct {
		frame int
		flags uint8
		want  LLCDeleteLinkBody
	}{
		{4122, 0x40, LLCDeleteLinkBody{LinkID: 0, Reason: DelLinkOpInitTerm, All: true}},
		{4124, 0x60, LLCDeleteLinkBody{LinkID: 0, Reason: DelLinkOpInitTerm, All: true, Orderly: true}},
		{4126, 0x40, LLCDeleteLinkBody{LinkID: 0, Reason: DelLinkProgInitTerm, All: true}},
	} {
		l = roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", c.frame))
		if l.Type != LLCDeleteLinkV2 || l.Flags != c.flags || l.Response || l.DeleteLink != c.want {
			t.Errorf("frame %d: %v flags %#x %+v", c.frame, l.Type, l.Flags, l.DeleteLink)
		}
	}
}

func TestLLCSummary(t *testing.T) {
	for _, c := range []struct {
		src  func() []byte
		want string
	}{
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 14) },
			"LLC CONFIRM_LINK_V2 req link 1 uid 0x00000101 QP 0x000011 GID ::ffff:10.10.0.1"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 18) },
			"LLC ADD_LINK_V2 req link 2 QP 0x000012 PSN 0xe0dd7c MTU 1024 GID ::ffff:10.10.0.1 rkeys 1"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 20) },
			"LLC ADD_LINK_V2 resp REJECT link 2"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 4114) },
			"LLC DELETE_RKEY_V2 req count 1 rkey 0x369"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 4117) },
			"LLC DELETE_RKEY_V2 resp count 1"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 4124) },
			"LLC DELETE_LINK_V2 req ALL ORDERLY link 0 reason 0x00020000 operator-initiated"},
		{func() []byte { return roceSendPayload(t, "pingpong.pcap", 4126) },
			"LLC DELETE_LINK_V2 req ALL link 0 reason 0x00030000 program-initiated"},
		{func() []byte { return roceVector(t, "llc_v1_confirm_rkey_req") },
			"LLC CONFIRM_RKEY req rkey 0x155d VA 0xeef4d0000 other links 0"},
		{func() []byte { return roceVector(t, "llc_v1_add_link_req") },
			"LLC ADD_LINK req link 0 QP 0x000000 PSN 0x000000 GID fe80::9a03:9bff:feab:cdef"},
	} {
		if got := string(roceDecodeLLC(t, c.src()).AppendSummary(nil)); got != c.want {
			t.Errorf("%q\nwant %q", got, c.want)
		}
	}
}

func TestLLCFields(t *testing.T) {
	var r Record
	roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 14)).AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.llc.type": 0x21, "smc.llc.version": 2, "smc.llc.length": 44,
		"smc.llc.response": 0, "smc.llc.link_id": 1, "smc.llc.qpn": 0x11, "smc.llc.link_uid": 0x101,
		"smc.llc.max_links": 2, "smc.llc.max_conns": 255, "smc.llc.flags": 3, "smc.llc.length_be": 0})
	if d, _ := LookupField("smc.llc.mac"); d.Kind != KindMAC {
		t.Errorf("smc.llc.mac kind %v", d.Kind)
	} else if v, ok := r.First(d.ID); !ok || v.Format(d.Kind) != "52:54:00:0a:00:01" {
		t.Errorf("smc.llc.mac %v", v.Format(d.Kind))
	}
	if d, _ := LookupField("smc.llc.gid"); true {
		if v, ok := r.First(d.ID); !ok || v.A != roceSrvGID {
			t.Errorf("smc.llc.gid %v", v.A)
		}
	}
	if d, _ := LookupField("smc.llc.type"); (Value{U: 0x22}).Display(d) != "0x22 (ADD_LINK_V2)" {
		t.Errorf("type display %q", (Value{U: 0x22}).Display(d))
	}

	r.Reset()
	roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 18)).AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.llc.reject": 0, "smc.llc.psn": 0xe0dd7c, "smc.llc.mtu": 3,
		"smc.llc.rkey_count": 1, "smc.llc.rkey": 0x3a9, "smc.llc.rkey_new": 0x5c9, "smc.llc.va": 0xff30243b84730000,
		"smc.llc.direct": 1})
	if d, _ := LookupField("smc.llc.mtu"); (Value{U: 3}).Display(d) != "3 (1024)" {
		t.Errorf("mtu display %q", (Value{U: 3}).Display(d))
	}

	r.Reset()
	roceDecodeLLC(t, roceSendPayload(t, "pingpong.pcap", 4124)).AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.llc.delete.reason": 0x20000, "smc.llc.delete.all": 1,
		"smc.llc.delete.orderly": 1, "smc.llc.link_id": 0})
	if d, _ := LookupField("smc.llc.delete.reason"); (Value{U: 0x20000}).Display(d) != "0x20000 (operator-initiated)" {
		t.Errorf("reason display %q", (Value{U: 0x20000}).Display(d))
	}

	r.Reset()
	roceDecodeLLC(t, roceVector(t, "llc_v1_add_link_req")).AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.llc.version": 1, "smc.llc.reject": 0, "smc.llc.reject_reason": 0})
	if d, _ := LookupField("smc.llc.length_be"); r.Has(d.ID) {
		t.Error("v1 message has smc.llc.length_be")
	}
}

// TestLLCLengthByteOrder swaps the v2 length to big-endian, as a
// big-endian host would write it; the ADD LINK rkey count follows the
// same order (both are host-order u16 in Linux).
func TestLLCLengthByteOrder(t *testing.T) {
	p := append([]byte(nil), roceSendPayload(t, "pingpong.pcap", 18)...)
	p[1], p[2] = p[2], p[1]
	p[70], p[71] = p[71], p[70]
	l := roceDecodeLLC(t, p)
	if l.Length != 88 || !l.LengthBigEndian || l.AddLink.NumRKeys != 1 || l.AddLink.Triplets()[0].RKey != 0x3a9 {
		t.Errorf("big-endian: len %d be %v rkeys %d", l.Length, l.LengthBigEndian, l.AddLink.NumRKeys)
	}
}

// TestLLCLengthLying changes the length bytes of real LLCs.
func TestLLCLengthLying(t *testing.T) {
	v2 := roceSendPayload(t, "pingpong.pcap", 18) // 88 bytes, `22 58 00`
	v1 := roceVector(t, "llc_v1_confirm_link_req")
	set := func(b []byte, i int, vals ...byte) []byte {
		b = append([]byte(nil), b...)
		copy(b[i:], vals)
		return b
	}
	for _, c := range []struct {
		name string
		p    []byte
		want error
	}{
		{"v1 length 43", set(v1, 1, 43), ErrBadLength},
		{"v1 length 45", set(v1, 1, 45), ErrBadLength},
		{"v1 length 0", set(v1, 1, 0), ErrBadLength},
		{"v2 length 104 > 88 bytes", set(v2, 1, 104, 0), ErrTruncated},
		{"v2 length 43", set(v2, 1, 43, 0), ErrBadLength},
		{"v2 length 0xffff", set(v2, 1, 0xff, 0xff), ErrBadLength},
		{"v2 length 8447 (BE 65312)", set(v2, 1, 0xff, 0x20), ErrBadLength},
		{"v2 length 8193, BE 288 > 88 bytes", set(v2, 1, 0x01, 0x20), ErrTruncated},
		{"v2 rkey count 2 in 88 bytes", set(v2, 70, 2, 0), ErrBadLength},
		{"v2 ADD LINK 60 bytes", set(v2[:60], 1, 60, 0), ErrBadLength},
		{"v1 DELETE RKEY count 9", set(roceVector(t, "llc_v1_delete_rkey_req"), 4, 9), ErrBadLength},
		{"v2 DELETE RKEY count 10 in 44 bytes", set(roceSendPayload(t, "pingpong.pcap", 4114), 4, 10), ErrBadLength},
		{"unknown type 0x23", set(v2, 0, 0x23), ErrUnknownType},
		{"unknown type 0x0b", set(v1, 0, 0x0b), ErrUnknownType},
		{"unknown type 0x2a (ANCK's ANNOUNCE_CREDITS has no v2 form)", set(v2, 0, 0x2a), ErrUnknownType},
		{"unknown type 0x31", set(v1, 0, 0x31), ErrUnknownType},
	} {
		var l LLC
		err := l.DecodeFromBytes(c.p, &roceFeedback{})
		var de *Error
		if !errors.Is(err, c.want) || !errors.As(err, &de) || !strings.HasPrefix(de.Layer, "LLC") {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

// TestLLCTruncated cuts every LLC of pingpong.pcap and every v1 vector at
// every length: an error with SetTruncated (or a bad length, since the
// v2 length no longer matches), never a panic.
func TestLLCTruncated(t *testing.T) {
	msgs := roceAllLLC(t)
	for _, m := range msgs {
		for n := range len(m) {
			var l LLC
			fb := &roceFeedback{}
			err := l.DecodeFromBytes(m[:n], fb)
			if err == nil {
				t.Errorf("LLC % x cut to %d: no error", m[:4], n)
			} else if errors.Is(err, ErrTruncated) != fb.truncated {
				t.Errorf("LLC % x cut to %d: %v, SetTruncated %v", m[:4], n, err, fb.truncated)
			}
		}
	}
}

// roceAllLLC returns the five v1 vectors and every LLC of pingpong.pcap.
func roceAllLLC(t testing.TB) [][]byte {
	t.Helper()
	out := [][]byte{
		roceVector(t, "llc_v1_confirm_link_req"), roceVector(t, "llc_v1_add_link_req"),
		roceVector(t, "llc_v1_delete_link_req_all_orderly"), roceVector(t, "llc_v1_confirm_rkey_req"),
		roceVector(t, "llc_v1_delete_rkey_req"),
	}
	for _, f := range roceReadPcap(t, "../testdata/reference/pingpong.pcap") {
		if _, bth, ok := roceSplit(f); ok && bth[0] == byte(OpSendOnly) && bth[12] != 0xFE {
			out = append(out, bth[12:len(bth)-4])
		}
	}
	if len(out) != 5+25 {
		t.Fatalf("%d LLC messages, want 30", len(out))
	}
	return out
}

func TestLLCTypeNames(t *testing.T) {
	for ty, want := range map[LLCType]string{
		0x01: "CONFIRM_LINK", 0x21: "CONFIRM_LINK_V2", 0x02: "ADD_LINK", 0x22: "ADD_LINK_V2",
		0x03: "ADD_LINK_CONT", 0x04: "DELETE_LINK", 0x24: "DELETE_LINK_V2", 0x25: "REQUEST_ADD_LINK_V2",
		0x06: "CONFIRM_RKEY", 0x26: "CONFIRM_RKEY_V2", 0x08: "CONFIRM_RKEY_CONT", 0x07: "TEST_LINK",
		0x27: "TEST_LINK_V2", 0x09: "DELETE_RKEY", 0x29: "DELETE_RKEY_V2", 0x23: "LLC(0x23)", 0xfe: "LLC(0xfe)",
	} {
		if got := ty.String(); got != want {
			t.Errorf("%#02x: %q, want %q", uint8(ty), got, want)
		}
	}
	for r, want := range map[DeleteLinkReason]string{DelLinkLostPath: "lost-path", DelLinkUnknownLink: "unknown-link",
		DelLinkProtViol: "protocol-violation", 0x00990000: "unknown-reason"} {
		if got := r.String(); got != want || r.Meaning() == "" {
			t.Errorf("%#x: %q, want %q", uint32(r), got, want)
		}
	}
}

func TestLLCDoesNotMalloc(t *testing.T) {
	var l LLC
	fb := &roceFeedback{}
	var r Record
	r.IDs = make([]FieldID, 0, 64)
	r.Vals = make([]Value, 0, 64)
	line := make([]byte, 0, 256)
	for _, m := range roceAllLLC(t) {
		if n := testing.AllocsPerRun(100, func() {
			_ = l.DecodeFromBytes(m, fb)
			r.Reset()
			l.AppendFields(&r)
			line = l.AppendSummary(line[:0])
		}); n != 0 {
			t.Errorf("LLC %v: %v allocations", LLCType(m[0]), n)
		}
	}
}

func BenchmarkLLC(b *testing.B) {
	for _, c := range []struct {
		name  string
		frame int
	}{{"CONFIRM_LINK_V2", 14}, {"ADD_LINK_V2_88B", 18}, {"DELETE_LINK_V2", 4124}} {
		m := roceSendPayload(b, "pingpong.pcap", c.frame)
		b.Run(c.name, func(b *testing.B) {
			var l LLC
			fb := &roceFeedback{}
			b.ReportAllocs()
			b.SetBytes(int64(len(m)))
			for b.Loop() {
				_ = l.DecodeFromBytes(m, fb)
			}
		})
	}
}

// ExampleLLC prints the LLC messages of the reference capture up to the
// first DELETE LINK of the final teardown (its RC retransmissions follow).
// Importing decode is enough for gopacket.NewPacket to find the BTH behind
// UDP port 4791 and the LLC in an RC SEND.
func ExampleLLC() {
	f, err := os.Open("../testdata/reference/pingpong.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	for n := 1; n <= 4126; n++ {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		if l, ok := p.Layer(LayerTypeLLC).(*LLC); ok {
			fmt.Printf("%d %s\n", n, l.AppendSummary(nil))
		}
	}
	// Output:
	// 14 LLC CONFIRM_LINK_V2 req link 1 uid 0x00000101 QP 0x000011 GID ::ffff:10.10.0.1
	// 16 LLC CONFIRM_LINK_V2 resp link 1 uid 0x00000101 QP 0x000011 GID ::ffff:10.10.0.2
	// 18 LLC ADD_LINK_V2 req link 2 QP 0x000012 PSN 0xe0dd7c MTU 1024 GID ::ffff:10.10.0.1 rkeys 1
	// 20 LLC ADD_LINK_V2 resp REJECT link 2
	// 4114 LLC DELETE_RKEY_V2 req count 1 rkey 0x369
	// 4115 LLC DELETE_RKEY_V2 req count 1 rkey 0x3a9
	// 4117 LLC DELETE_RKEY_V2 resp count 1
	// 4120 LLC DELETE_RKEY_V2 resp count 1
	// 4122 LLC DELETE_LINK_V2 req ALL link 0 reason 0x00020000 operator-initiated
	// 4124 LLC DELETE_LINK_V2 req ALL ORDERLY link 0 reason 0x00020000 operator-initiated
	// 4126 LLC DELETE_LINK_V2 req ALL link 0 reason 0x00030000 program-initiated
}

// TestLLCOtherTypes covers the types no capture or published vector holds
// (TEST LINK, ADD LINK CONT, CONFIRM RKEY CONT, REQUEST ADD LINK) by
// retyping real 44-byte LLCs and checking each field against the bytes at
// the offsets of §3.5 (kernel layout).
func TestLLCOtherTypes(t *testing.T) {
	// CONFIRM LINK v2 (frame 14) bytes read as TEST LINK v2: user data 4..19.
	m := retype(roceSendPayload(t, "pingpong.pcap", 14), 0x27)
	l := roceDecodeLLC(t, m)
	if l.Type != LLCTestLinkV2 || string(l.TestLink.UserData[:]) != string(m[4:20]) {
		t.Errorf("TEST LINK %v % x", l.Type, l.TestLink.UserData)
	}
	var r Record
	l.AppendFields(&r)
	if d, _ := LookupField("smc.llc.test_data"); true {
		if v, ok := r.First(d.ID); !ok || string(v.B) != string(m[4:20]) {
			t.Errorf("smc.llc.test_data % x", v.B)
		}
	}

	// CONFIRM RKEY v1 vector read as ADD LINK CONT: link 4, count 5,
	// triplets at 8 and 24.
	m = retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x03)
	m[5] = 2
	l = roceDecodeLLC(t, m)
	c := l.AddLinkCont
	if l.Type != LLCAddLinkCont || c.LinkID != m[4] || c.NumRKeys != 2 || len(c.Triplets()) != 2 ||
		c.RKeys[0] != readTriplet(m[8:]) || c.RKeys[1] != readTriplet(m[24:]) {
		t.Errorf("ADD LINK CONT %+v", c)
	}
	// ... and as CONFIRM RKEY CONT: count 4, rtokens at 5, 18, 31.
	m = retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x08)
	m[4] = 3
	l = roceDecodeLLC(t, m)
	cc := l.ConfirmRKeyCont
	if l.Type != LLCConfirmRKeyCont || len(cc.Tokens()) != 3 || cc.RTokens[0].LinkID != m[5] ||
		cc.RTokens[0].RKey != 0x155d00 || cc.RTokens[0] != readRToken(m[5:]) || cc.RTokens[2] != readRToken(m[31:]) {
		t.Errorf("CONFIRM RKEY CONT %+v", cc)
	}

	// DELETE LINK v2 (frame 4124, zero from byte 9) as REQUEST ADD LINK v2
	// with one GID at 28: the GID count at 24 is the only non-zero byte.
	m = retype(roceSendPayload(t, "pingpong.pcap", 4124), 0x25)
	m[24] = 1
	l = roceDecodeLLC(t, m)
	if q := l.RequestAddLink; l.Type != LLCRequestAddLinkV2 || q.NumGIDs != 1 || len(q.GIDList()) != 1 ||
		q.GIDs[0] != netip.AddrFrom16([16]byte(m[28:44])) {
		t.Errorf("REQUEST ADD LINK %+v", q)
	}
	m[24] = 2 // 28 + 32 > 44
	var bad LLC
	if err := bad.DecodeFromBytes(m, &roceFeedback{}); !errors.Is(err, ErrBadLength) {
		t.Errorf("REQUEST ADD LINK with 2 GIDs in 44 bytes: %v", err)
	}
	for _, ty := range []byte{0x27, 0x03, 0x08, 0x25} {
		m := retype(roceVector(t, "llc_v1_confirm_rkey_req"), ty)
		if ty == 0x27 || ty == 0x25 {
			m = retype(roceSendPayload(t, "pingpong.pcap", 4124), ty)
		}
		l := roceDecodeLLC(t, m)
		if s := l.AppendSummary(nil); !strings.HasPrefix(string(s), "LLC "+LLCType(ty).String()+" req") {
			t.Errorf("%#02x summary %q", ty, s)
		}
	}
}

// TestLLCLegacyShapes: messages older kernels sent, read for what they
// meant then (issue 28, point 9).
func TestLLCLegacyShapes(t *testing.T) {
	// A DELETE_LINK request with reason 0: what Linux up to 5.7 sent
	// (smc_llc_prep_delete_link zeroed the message and set no reason);
	// the hwipl vector comes from such a kernel. "ok" and "link deleted"
	// only fit a response.
	l := roceDecodeLLC(t, roceVector(t, "llc_v1_delete_link_req_all_orderly"))
	s := string(l.AppendSummary(nil))
	if !strings.HasSuffix(s, "reason 0x00000000 none") {
		t.Errorf("DELETE_LINK request with reason 0: %q", s)
	}
	if got := l.DeleteLink.Reason.MeaningIn(false); strings.Contains(got, "deleted") || !strings.Contains(got, "no reason") {
		t.Errorf("request meaning %q", got)
	}
	if got := DelLinkOK.MeaningIn(true); got != "response: link deleted" {
		t.Errorf("response meaning %q", got)
	}
	var r Record
	l.AppendFields(&r)
	d, _ := LookupField("smc.llc.delete.reason")
	if v, ok := r.First(d.ID); !ok || d.Enum(v.U) != "none" {
		t.Errorf("smc.llc.delete.reason %v %v, enum %q", v, ok, d.Enum(v.U))
	}

	// CONFIRM RKEY CONT with the negative-response flag (0x20 of byte 3,
	// as in CONFIRM RKEY): the flag is a field and in the summary.
	m := retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x08)
	m[3] |= LLCFlagRKeyNeg
	m[4] = 1
	l = roceDecodeLLC(t, m)
	if !l.ConfirmRKeyCont.Negative {
		t.Errorf("CONFIRM RKEY CONT negative flag not decoded: %+v", l.ConfirmRKeyCont)
	}
	if s := string(l.AppendSummary(nil)); !strings.Contains(s, "NEGATIVE") {
		t.Errorf("CONFIRM RKEY CONT summary %q", s)
	}
	r = Record{}
	l.AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.llc.negative": 1})
}

// retype copies a real LLC and gives it another type byte.
func retype(b []byte, ty byte) []byte {
	b = append([]byte(nil), b...)
	b[0] = ty
	return b
}

// TestDeleteReasonNames: reason 0 is named "none" (a request's "no
// reason"); "ok", its name before, still reads as 0 in filters.
func TestDeleteReasonNames(t *testing.T) {
	d, _ := LookupField("smc.llc.delete.reason")
	for _, n := range []string{"ok", "OK"} {
		if u, ok := d.Parse(n); !ok || u != 0 {
			t.Errorf("%q: %d %v", n, u, ok)
		}
	}
	if d.Named {
		t.Error("smc.llc.delete.reason is written by name")
	}
}
