package capture

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// placedValue reads the value a place holds from its bytes b, the way
// decode.Place documents it. A number written in host order gives two
// candidates.
func placedValue(p decode.Place, b []byte) []uint64 {
	be, le := uint64(0), uint64(0)
	for i := range b {
		be = be<<8 | uint64(b[i])
		le = le<<8 | uint64(b[len(b)-1-i])
	}
	var raws []uint64
	switch {
	case p.HostOrder:
		raws = []uint64{be, le}
	case p.LittleEndian:
		raws = []uint64{le}
	default:
		raws = []uint64{be}
	}
	for i, x := range raws {
		if p.Mask != 0 {
			x = (x & p.Mask) >> bits.TrailingZeros64(p.Mask)
		}
		if p.Value != nil {
			x = p.Value(x)
		}
		raws[i] = x
	}
	return raws
}

// ebcdicEyecatchers are the CLC eyecatchers (struct smc_clc_msg_hdr and
// smc_clc_msg_trail, EBCDIC) by the ASCII name the record shows.
var ebcdicEyecatchers = map[string][]byte{
	"SMCR": decode.EyecatcherSMCR[:],
	"SMCD": decode.EyecatcherSMCD[:],
}

// checkPlaced reports whether the bytes b at a field's place decode to the
// value v the record holds.
func checkPlaced(d decode.FieldDef, p decode.Place, b []byte, v decode.Value) error {
	switch d.Kind {
	case decode.KindUint, decode.KindBool:
		got := placedValue(p, b)
		for _, x := range got {
			if x == v.U || (d.Kind == decode.KindBool && (x != 0) == (v.U != 0)) {
				return nil
			}
		}
		return fmt.Errorf("bytes % x read %v, the record says %d", b, got, v.U)
	case decode.KindAddr:
		var a netip.Addr
		switch len(b) {
		case 4:
			a = netip.AddrFrom4([4]byte(b))
		case 16:
			a = netip.AddrFrom16([16]byte(b))
		}
		if a != v.A {
			return fmt.Errorf("bytes % x are %v, the record says %v", b, a, v.A)
		}
	case decode.KindMAC, decode.KindBytes:
		if !bytes.Equal(b, v.B) {
			return fmt.Errorf("bytes % x, the record says % x", b, v.B)
		}
	case decode.KindString:
		// Text is shown without its blank or NUL padding; eyecatchers are
		// EBCDIC shown by their ASCII name, or in hex when invalid.
		if string(bytes.TrimRight(b, " \x00")) != v.S && !bytes.Equal(ebcdicEyecatchers[v.S], b) && hex.EncodeToString(b) != v.S {
			return fmt.Errorf("bytes % x, the record says %q", b, v.S)
		}
	default:
		// frame.time_epoch, the only float, comes from the capture
		// header, not from the frame's bytes: it has no place to check.
		return fmt.Errorf("a %s field has a place, which cannot be read back", d.Kind)
	}
	return nil
}

// placeStats counts, per field, the values whose place was checked.
type placeStats map[string]int

// checkFramePlaces checks every value of f's record that has a place in
// the frame against the frame's bytes, and that every field with places
// is located whenever its layer is in the frame.
func checkFramePlaces(t *testing.T, name string, f *Frame, seen placeStats) {
	t.Helper()
	r := f.Fields()
	spans := f.FieldSpans()
	if len(spans) != len(r.IDs) {
		t.Fatalf("%s frame %d: %d spans for %d values", name, f.Number, len(spans), len(r.IDs))
	}
	for i, id := range r.IDs {
		d, sp := decode.Def(id), spans[i]
		if sp.Field.N == 0 {
			// A CLC message reassembled from several segments has only
			// part of its bytes here, and its layout decides which of its
			// fields have a place (the EID of a Proposal has none).
			if len(d.Places) > 0 && sp.Layer.N > 0 && d.Owner != decode.OwnerCLC {
				t.Errorf("%s frame %d: %s has places but was not located in its layer %+v", name, f.Number, d.Name, sp.Layer)
			}
			continue
		}
		if sp.Field.Off < sp.Layer.Off || sp.Field.Off+sp.Field.N > sp.Layer.Off+sp.Layer.N {
			t.Errorf("%s frame %d: %s at %+v, outside its layer %+v", name, f.Number, d.Name, sp.Field, sp.Layer)
		}
		b := f.Data[sp.Field.Off : sp.Field.Off+sp.Field.N]
		if err := checkPlaced(d, sp.Place, b, r.Vals[i]); err != nil {
			t.Errorf("%s frame %d: %s at %d: %v", name, f.Number, d.Name, sp.Field.Off, err)
		}
		seen[d.Name]++
	}
}

// TestFieldPlaces: in every frame of the repository's captures (the lab's
// samples, the reference kernel captures, the public RoCE captures) and a
// RoCEv1 frame behind QinQ, each field with a catalogue place holds, at
// that place, the value the record shows; and every such field is met at
// least once, except those these captures cannot have (said below).
func TestFieldPlaces(t *testing.T) {
	var files []string
	files = append(files, testutil.Samples(t)...)
	files = append(files, testutil.References(t)...)
	public, _ := filepath.Glob("../testdata/public/linlinw5_rdma_ib_tutorial/*.pcap")
	files = append(files, public...)
	anck, _ := filepath.Glob("../testdata/anck/*.pcap") // ANCK's fields (crafted)
	files = append(files, anck...)
	seen := placeStats{}
	for _, name := range files {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for {
			f, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkFramePlaces(t, filepath.Base(name), f, seen)
		}
		r.Close()
	}

	// RoCEv1 (GRH) behind a QinQ stack: frame 23 of the reference
	// pingpong, a CDC, rewrapped.
	v2 := readRaw(t, pingpong)[22].Data
	qinq := slices.Concat(v2[:12], []byte{0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x20, 0x0a, 0x89, 0x15})
	data := rocev1(t, v2, qinq)
	src := &sliceSource{frames: []rawFrame{{Data: data}}}
	src.frames[0].CI.CaptureLength, src.frames[0].CI.Length = len(data), len(data)
	r, err := NewReader("qinq", src, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Next()
	if err != nil || f.GRH == nil || len(f.VLAN) != 2 {
		t.Fatalf("QinQ RoCEv1 frame: %v, GRH %v, %d tags", err, f.GRH != nil, len(f.VLAN))
	}
	checkFramePlaces(t, "qinq", f, seen)
	if v, _ := f.Fields().First(fVLANID); v.U != 0x064 || seen["vlan.id"] != 2 {
		t.Errorf("outer VLAN %#x, %d tags checked", v.U, seen["vlan.id"])
	}

	// Fields with a place that no capture here carries: other transports
	// (RD, XRC), SEND with Invalidate, SMC-D, messages Linux never sends
	// or these runs did not provoke (TEST_LINK's data is in
	// silent-link.pcap).
	absent := map[string]bool{
		"roce.rdeth.eecnxt": true, "roce.xrceth.srq": true, "roce.ieth.rkey": true,
		"smc.clc.smcd.gid": true, "smc.clc.smcd.dmb_token": true, "smc.clc.smcd.dmbe_idx": true,
		"smc.clc.smcd.dmbe_size": true, "smc.clc.smcd.link_id": true, "smc.clc.smcd.chid": true,
		"smc.clc.smcd.gid_ext":  true,
		"smc.llc.reject_reason": true, "smc.llc.gid_count": true,
	}
	for _, d := range decode.Fields() {
		if len(d.Places) == 0 || d.Owner.Tracker() {
			continue
		}
		switch {
		case seen[d.Name] == 0 && !absent[d.Name]:
			t.Errorf("%s has a place but no frame checked it", d.Name)
		case seen[d.Name] > 0 && absent[d.Name]:
			t.Errorf("%s is listed as absent from the captures, yet %d values were checked", d.Name, seen[d.Name])
		}
	}
}

// TestFieldSpansLayers: the spans of one real frame by hand: frame 13 of
// samples/multilink.pcap, an ADD_LINK_V2 request (Ethernet, IPv4, UDP,
// BTH, LLC, ICRC).
func TestFieldSpansLayers(t *testing.T) {
	ps := readRaw(t, filepath.Join(testutil.SamplesDir(t), "multilink.pcap"))
	r, err := NewReader("multilink", &sliceSource{frames: ps[:13]}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var f *Frame
	for range 13 {
		if f, err = r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	at := map[string]FieldSpan{}
	spans := f.FieldSpans()
	for i, id := range f.Fields().IDs {
		n := decode.Def(id).Name
		if _, ok := at[n]; !ok {
			at[n] = spans[i] // the first occurrence
		}
	}
	n := len(f.Data)
	for name, want := range map[string][2]Span{
		"eth.type":        {{12, 2}, {0, 14}},
		"ip.src":          {{26, 4}, {14, 20}},
		"udp.dstport":     {{36, 2}, {34, 8}},
		"roce.bth.dqpn":   {{47, 3}, {42, 12}},
		"roce.bth.se":     {{43, 1}, {42, 12}},
		"smc.llc.type":    {{54, 1}, {54, n - 58}},
		"smc.llc.qpn":     {{54 + 28, 3}, {54, n - 58}},
		"roce.icrc":       {{n - 4, 4}, {n - 4, 4}},
		"roce.icrc.ok":    {{}, {n - 4, 4}},
		"frame.number":    {{}, {0, n}},
		"smc.llc.rkey":    {{54 + 72, 4}, {54, n - 58}},
		"smc.llc.length":  {{55, 2}, {54, n - 58}},
		"smc.llc.version": {{54, 1}, {54, n - 58}},
	} {
		got := at[name]
		if got.Field != want[0] || got.Layer != want[1] {
			t.Errorf("%s: field %+v layer %+v, want %+v %+v", name, got.Field, got.Layer, want[0], want[1])
		}
	}
	if f.LLC.Type != decode.LLCAddLinkV2 || binary.LittleEndian.Uint16(f.Data[55:57]) != f.LLC.Length {
		t.Errorf("frame 13 is not the ADD_LINK_V2 this test reads: %v length %d", f.LLC.Type, f.LLC.Length)
	}
}

// TestFieldSpansCLCSegments: a CLC message is found in the segment that
// completes it, whole or (split across segments) its tail, and several
// messages of one segment in stream order; fields outside the frame's
// part of a message have no span.
func TestFieldSpansCLCSegments(t *testing.T) {
	h := loadHandshake(t)
	P, A, C := len(h.proposal), len(h.accept), len(h.confirm)
	frames := []rawFrame{h.syn, h.synack,
		h.build(t, seg{1, 0, A}),           // 2: the Accept, whole
		h.build(t, seg{0, 0, P - 10}),      // 3: most of the Proposal
		h.build(t, seg{0, P - 10, 30}),     // 4: its last 10 bytes, the Confirm's first 20
		h.build(t, seg{0, P + 20, C - 20}), // 5: the rest of the Confirm
	}
	merged := []rawFrame{h.syn, h.synack, h.build(t, seg{1, 0, A}), h.build(t, seg{0, 0, P + C})}
	type want struct {
		frame, msg int    // frame index, CLC message in it
		name       string // field
		off        int    // from the start of the TCP payload; -1: no span
	}
	for _, tc := range []struct {
		name   string
		frames []rawFrame
		want   []want
	}{
		{"split", frames, []want{
			{4, 0, "smc.clc.eyecatcher", -1}, {4, 0, "smc.clc.trailer", 6},
			{5, 0, "smc.clc.eyecatcher", -1}, {5, 0, "smc.clc.qpn", 38 - 20}, {5, 0, "smc.clc.trailer", C - 20 - 4},
			{2, 0, "smc.clc.qpn", 38},
		}},
		{"merged", merged, []want{
			{3, 0, "smc.clc.eyecatcher", 0}, {3, 1, "smc.clc.eyecatcher", P}, {3, 1, "smc.clc.qpn", P + 38},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(tc.name, &sliceSource{frames: tc.frames}, layers.LinkTypeEthernet)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.frames {
				f, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				checkFramePlaces(t, tc.name, f, placeStats{})
				pay := cap(f.Data) - cap(f.TCP.Payload)
				spans := f.FieldSpans()
				for _, w := range tc.want {
					if w.frame != i {
						continue
					}
					msg, found := -1, false
					for j, id := range f.Fields().IDs {
						d := decode.Def(id)
						if d.Name == "smc.clc.eyecatcher" {
							msg++
						}
						if d.Name != w.name || msg != w.msg {
							continue
						}
						found = true
						got := -1
						if spans[j].Field.N > 0 {
							got = spans[j].Field.Off - pay
						}
						if got != w.off {
							t.Errorf("frame %d message %d: %s at payload+%d, want %d", i, w.msg, w.name, got, w.off)
						}
					}
					if !found {
						t.Errorf("frame %d has no %s in message %d", i, w.name, w.msg)
					}
				}
			}
		})
	}
}
