package decode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

// cutShown decodes the fields of a layer into name -> values in order.
func cutShown(add func(*Record)) (*Record, map[FieldID][]string) {
	var r Record
	add(&r)
	vals := map[FieldID][]string{}
	for i, id := range r.IDs {
		vals[id] = append(vals[id], r.Vals[i].Format(Def(id).Kind))
	}
	return &r, vals
}

// checkCutFields holds the fields shown of a message cut to captured
// bytes to the whole message's: each shown value is the whole message's
// (occurrence by occurrence) and its place, if it has one, lies in the
// captured bytes; with every, a field with a place is shown whenever its
// place does (a decoder that reads as far as captured).
func checkCutFields(t *testing.T, what string, whole, cut *Record, captured []byte, every bool) {
	t.Helper()
	wholeVals := map[FieldID][]string{}
	for i, id := range whole.IDs {
		wholeVals[id] = append(wholeVals[id], whole.Vals[i].Format(Def(id).Kind))
	}
	cutVals := map[FieldID][]string{}
	for i, id := range cut.IDs {
		d := Def(id)
		v := cut.Vals[i].Format(d.Kind)
		k := len(cutVals[id])
		cutVals[id] = append(cutVals[id], v)
		if k >= len(wholeVals[id]) || wholeVals[id][k] != v {
			t.Fatalf("%s: %s = %q, the whole message has %q", what, d.Name, v, wholeVals[id])
		}
	}
	for id, vs := range wholeVals {
		d := Def(id)
		for k := range vs {
			p, _, in := d.Locate(captured, k)
			in = in && p.Off >= 0 // a place from the end is past the cut
			shown := k < len(cutVals[id])
			if len(d.Places) > 0 && shown && !in || every && len(d.Places) > 0 && in && !shown {
				t.Fatalf("%s: %s occurrence %d: captured %v, shown %v", what, d.Name, k, in, shown)
			}
		}
	}
}

// checkCutSummary: a cut message's summary says how much was captured and
// shows nothing the whole message's summary does not.
func checkCutSummary(t *testing.T, what, cut, whole string, n, l int) {
	t.Helper()
	mark := fmt.Sprintf(" [%d of %d bytes captured]", n, l)
	if !strings.HasSuffix(cut, mark) {
		t.Fatalf("%s: summary %q, want it to end %q", what, cut, mark)
	}
	// Words without the punctuation a left-out value moves.
	word := func(w string) string { return strings.Trim(w, ",()") }
	var words []string
	for _, w := range strings.Fields(whole) {
		words = append(words, word(w))
	}
	for _, w := range strings.Fields(strings.TrimSuffix(cut, mark)) {
		if !slices.Contains(words, word(w)) {
			t.Fatalf("%s: summary %q has %q, the whole message's %q does not", what, cut, w, whole)
		}
	}
}

// llcCutCorpus is every LLC of the vectors and pingpong.pcap, and the
// types they lack made from them (as TestLLCOtherTypes does).
func llcCutCorpus(t *testing.T) [][]byte {
	msgs := roceAllLLC(t)
	cont := retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x03)
	cont[5] = 2
	rkcont := retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x08)
	rkcont[4] = 3
	req := retype(roceSendPayload(t, "pingpong.pcap", 4124), 0x25)
	req[24] = 1
	credits := retype(roceVector(t, "llc_v1_confirm_rkey_req"), 0x0A)
	return append(msgs, cont, rkcont, req, credits)
}

// TestLLCDecodeCut cuts every LLC message after each length from its
// header on: what is shown of it is the whole message's, as far as the
// capture holds it, and nothing else.
func TestLLCDecodeCut(t *testing.T) {
	for i, m := range llcCutCorpus(t) {
		for _, anck := range []bool{false, true} {
			var whole LLC
			if err := whole.DecodeFromBytes(m, gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			whole.ANCK = anck
			wr, _ := cutShown(whole.AppendFields)
			ws := string(whole.AppendSummary(nil))
			for n := 4; n < len(m); n++ {
				what := fmt.Sprintf("message %d (%v, ANCK %v) cut to %d of %d", i, whole.Type, anck, n, len(m))
				var c LLC
				if err := c.DecodeCut(m[:n], len(m)); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				c.ANCK = anck
				if c.Cut != n || c.Type != whole.Type || c.Response != whole.Response || len(c.Payload) != 0 {
					t.Fatalf("%s: cut %d, type %v, payload %d", what, c.Cut, c.Type, len(c.Payload))
				}
				cr, _ := cutShown(c.AppendFields)
				checkCutFields(t, what, wr, cr, m[:n], true)
				checkCutSummary(t, what, string(c.AppendSummary(nil)), ws, n, len(m))
				if c.StepCaptured() != (n >= llcStepNeed(&c)) {
					t.Fatalf("%s: StepCaptured %v", what, c.StepCaptured())
				}
			}
			var c LLC
			err := c.DecodeCut(m, len(m))
			c.ANCK = anck
			if err != nil || c.Cut != 0 || string(c.AppendSummary(nil)) != ws {
				t.Errorf("message %d whole: %v, cut %d", i, err, c.Cut)
			}
			if err := c.DecodeCut(m[:3], len(m)); err == nil {
				t.Errorf("message %d cut to 3 bytes: no error", i)
			}
		}
	}
}

// llcStepNeed is how many bytes a link's tracker reads of l's type.
func llcStepNeed(l *LLC) int {
	for n := 4; ; n++ {
		c := *l
		c.Cut = n
		if c.StepCaptured() {
			return n
		}
	}
}

// TestCDCDecodeCut: a CDC cut after its flags is decoded whole but for
// ANCK's credits byte, shown only when captured; cut before them it is
// not decoded.
func TestCDCDecodeCut(t *testing.T) {
	m := roceSendPayload(t, "pingpong.pcap", 4106)
	m = append([]byte(nil), m...)
	m[cdcCreditsOff] = 7
	for _, anck := range []bool{false, true} {
		var whole CDC
		if err := whole.DecodeFromBytes(m, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		whole.ANCK = anck
		wr, _ := cutShown(whole.AppendFields)
		ws := string(whole.AppendSummary(nil))
		for n := 2; n < len(m); n++ {
			what := fmt.Sprintf("CDC (ANCK %v) cut to %d", anck, n)
			var c CDC
			err := c.DecodeCut(m[:n], len(m))
			if n < cdcFieldsEnd {
				if err == nil || c.Cut != 0 {
					t.Fatalf("%s: decoded", what)
				}
				continue
			}
			if err != nil || c.Cut != n {
				t.Fatalf("%s: %v, cut %d", what, err, c.Cut)
			}
			c.ANCK = anck
			cr, cv := cutShown(c.AppendFields)
			checkCutFields(t, what, wr, cr, m[:n], true)
			if shown := len(cv[fCDCCredits]) > 0; shown != (anck && n > cdcCreditsOff) {
				t.Fatalf("%s: credits shown %v", what, shown)
			}
			checkCutSummary(t, what, string(c.AppendSummary(nil)), ws, n, len(m))
		}
	}
	var c CDC
	if err := c.DecodeCut(append([]byte{0xFE, 40}, m[2:30]...), 44); err == nil {
		t.Error("a cut CDC whose length byte is 40: no error")
	}
}

// TestBTHDecodeCut: a RoCEv2 packet cut by the snap length has its
// headers and as much payload as captured, no ICRC, and its SEND is
// classified by the message's length on the wire.
func TestBTHDecodeCut(t *testing.T) {
	for _, frame := range []int{18, 23} { // ADD_LINK_V2 (88 bytes), CDC
		_, pkt, ok := roceSplit(roceFrame(t, "pingpong.pcap", frame))
		if !ok {
			t.Fatal("not RoCE")
		}
		var whole BTH
		if err := whole.DecodeFromBytes(pkt, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(pkt); n++ {
			var b BTH
			err := b.DecodeCut(pkt[:n], len(pkt), gopacket.NilDecodeFeedback)
			if n < bthLen {
				if err == nil {
					t.Fatalf("frame %d cut to %d: no error", frame, n)
				}
				continue
			}
			if err != nil {
				t.Fatalf("frame %d cut to %d: %v", frame, n, err)
			}
			pay := pkt[bthLen:min(n, len(pkt)-icrcLen)]
			if !b.TrailerCut || b.ICRC != 0 || string(b.Payload) != string(pay) || b.DataWireLen() != len(whole.Data()) ||
				b.PSN != whole.PSN || b.DestQP != whole.DestQP {
				t.Fatalf("frame %d cut to %d: %+v", frame, n, b)
			}
			want := whole.NextLayerType()
			if len(pay) < 3 {
				want = gopacket.LayerTypePayload
			}
			if got := b.NextLayerType(); len(pay) > 0 && got != want {
				t.Fatalf("frame %d cut to %d: next %v, want %v", frame, n, got, want)
			}
		}
	}
}

// TestDecodeCutLengthLies: a cut packet whose length on the wire is too
// short for what its headers say was malformed by its sender, not cut by
// the capture: ErrBadLength, which a reader shows, never ErrTruncated,
// which it takes for the snap length's.
func TestDecodeCutLengthLies(t *testing.T) {
	_, pkt, _ := roceSplit(roceFrame(t, "pingpong.pcap", 18))
	var b BTH
	if err := b.DecodeCut(pkt[:12], 14, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Errorf("BTH of 14 bytes on the wire: %v", err)
	}
	llc := roceSendPayload(t, "pingpong.pcap", 18) // ADD_LINK_V2, 88 bytes
	var l LLC
	if err := l.DecodeCut(llc[:40], 60); !errors.Is(err, ErrBadLength) {
		t.Errorf("an 88-byte LLC in a 60-byte SEND: %v", err)
	}
	cdc := roceSendPayload(t, "pingpong.pcap", 23)
	var c CDC
	if err := c.DecodeCut(cdc[:30], 40); !errors.Is(err, ErrBadLength) {
		t.Errorf("a CDC in a 40-byte SEND: %v", err)
	}
}
