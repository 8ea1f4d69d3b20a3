package decode

import (
	"errors"
	"testing"
)

func roceDecodeCDC(t testing.TB, b []byte) *CDC {
	t.Helper()
	c := &CDC{}
	if err := c.DecodeFromBytes(b, &roceFeedback{}); err != nil {
		t.Fatalf("CDC: %v", err)
	}
	return c
}

// TestCDC checks the hwipl v1 vector (SOURCES.md: seq 1, token 3,
// producer 0/13, consumer 0/0, no flags) and the CDCs of §11.13.
func TestCDC(t *testing.T) {
	cases := []struct {
		name    string
		msg     func() []byte
		want    CDC
		summary string
	}{
		{"hwipl v1", func() []byte { return roceVector(t, "cdc_v1_seq1_token3_prod13") },
			CDC{Type: 0xFE, Length: 44, Seq: 1, Token: 3, Prod: CDCCursor{0, 13}},
			"CDC seq 1 token 3 prod 0/13 cons 0/0"},
		{"pingpong 23", func() []byte { return roceSendPayload(t, "pingpong.pcap", 23) },
			CDC{Type: 0xFE, Length: 44, Seq: 1, Token: 1, Prod: CDCCursor{0, 24}},
			"CDC seq 1 token 1 prod 0/24 cons 0/0"},
		{"pingpong 31", func() []byte { return roceSendPayload(t, "pingpong.pcap", 31) },
			CDC{Type: 0xFE, Length: 44, Seq: 1, Token: 1, Prod: CDCCursor{0, 64}, Cons: CDCCursor{0, 88}},
			"CDC seq 1 token 1 prod 0/64 cons 0/88"},
		{"pingpong 4106 close", func() []byte { return roceSendPayload(t, "pingpong.pcap", 4106) },
			CDC{Type: 0xFE, Length: 44, Seq: 512, Token: 1, Prod: CDCCursor{0, 32664}, Cons: CDCCursor{0, 32640},
				ConnFlags: CDCPeerConnClosed},
			"CDC seq 512 token 1 prod 0/32664 cons 0/32640 [peer-conn-closed]"},
	}
	for _, c := range cases {
		got := roceDecodeCDC(t, c.msg())
		g := *got
		g.BaseLayer = c.want.BaseLayer
		if g.Type != c.want.Type || g.Length != c.want.Length || g.Seq != c.want.Seq || g.Token != c.want.Token ||
			g.Prod != c.want.Prod || g.Cons != c.want.Cons || g.ProdFlags != c.want.ProdFlags || g.ConnFlags != c.want.ConnFlags {
			t.Errorf("%s: %+v\nwant %+v", c.name, g, c.want)
		}
		if len(got.Contents) != 44 || len(got.Payload) != 0 {
			t.Errorf("%s: contents %d payload %d", c.name, len(got.Contents), len(got.Payload))
		}
		if s := string(got.AppendSummary(nil)); s != c.summary {
			t.Errorf("%s: %q, want %q", c.name, s, c.summary)
		}
	}
}

// TestCDCFlags sets the flag bytes of a real CDC to the values §11.13
// shows from long.pcap/multilink.pcap (not in testdata): write blocked
// 0x80, failover validation 0x08, and all bits together.
func TestCDCFlags(t *testing.T) {
	base := roceSendPayload(t, "pingpong.pcap", 31)
	for _, c := range []struct {
		prod, conn byte
		summary    string
		fields     map[string]uint64
	}{
		{0x80, 0, " [write-blocked]", map[string]uint64{"smc.cdc.flags.write_blocked": 1, "smc.cdc.flags.peer_conn_closed": 0}},
		{0x08, 0, " [failover-validation]", map[string]uint64{"smc.cdc.flags.failover_validation": 1}},
		{0xFF, 0xFF, " [write-blocked urgent-pending urgent-present cons-update-requested failover-validation peer-done-writing peer-conn-closed peer-conn-abort]",
			map[string]uint64{"smc.cdc.flags.urgent_pending": 1, "smc.cdc.flags.urgent_present": 1,
				"smc.cdc.flags.cons_update_req": 1, "smc.cdc.flags.peer_done_writing": 1,
				"smc.cdc.flags.peer_conn_abort": 1, "smc.cdc.prod_flags": 0xFF, "smc.cdc.conn_flags": 0xFF}},
		{0x07, 0x1F, "", map[string]uint64{"smc.cdc.prod_flags": 7, "smc.cdc.flags.write_blocked": 0}}, // reserved bits only
	} {
		p := append([]byte(nil), base...)
		p[24], p[25] = c.prod, c.conn
		cd := roceDecodeCDC(t, p)
		if got, want := string(cd.AppendSummary(nil)), "CDC seq 1 token 1 prod 0/64 cons 0/88"+c.summary; got != want {
			t.Errorf("%#x/%#x: %q\nwant %q", c.prod, c.conn, got, want)
		}
		var r Record
		cd.AppendFields(&r)
		roceCheckFields(t, &r, c.fields)
	}
}

func TestCDCFields(t *testing.T) {
	var r Record
	roceDecodeCDC(t, roceSendPayload(t, "pingpong.pcap", 31)).AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"smc.cdc.seq": 1, "smc.cdc.token": 1, "smc.cdc.prod.wrap": 0,
		"smc.cdc.prod.count": 64, "smc.cdc.cons.wrap": 0, "smc.cdc.cons.count": 88})
}

func TestCDCBad(t *testing.T) {
	m := roceSendPayload(t, "pingpong.pcap", 23)
	for n := range len(m) {
		fb := &roceFeedback{}
		var c CDC
		if err := c.DecodeFromBytes(m[:n], fb); !errors.Is(err, ErrTruncated) || !fb.truncated {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
	p := append([]byte(nil), m...)
	p[1] = 45
	var c CDC
	if err := c.DecodeFromBytes(p, &roceFeedback{}); !errors.Is(err, ErrBadLength) {
		t.Errorf("length 45: %v", err)
	}
	p[0], p[1] = 0x21, 44
	if err := c.DecodeFromBytes(p, &roceFeedback{}); !errors.Is(err, ErrUnknownType) {
		t.Errorf("type 0x21: %v", err)
	}
}

func TestCDCDoesNotMalloc(t *testing.T) {
	m := roceSendPayload(t, "pingpong.pcap", 4106)
	var c CDC
	fb := &roceFeedback{}
	var r Record
	r.IDs = make([]FieldID, 0, 64)
	r.Vals = make([]Value, 0, 64)
	line := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(200, func() {
		_ = c.DecodeFromBytes(m, fb)
		r.Reset()
		c.AppendFields(&r)
		line = c.AppendSummary(line[:0])
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func BenchmarkCDC(b *testing.B) {
	m := roceSendPayload(b, "pingpong.pcap", 31)
	var c CDC
	fb := &roceFeedback{}
	b.ReportAllocs()
	b.SetBytes(int64(len(m)))
	for b.Loop() {
		_ = c.DecodeFromBytes(m, fb)
	}
}
