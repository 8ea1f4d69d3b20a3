package decode

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// serializer is a layer that decodes and writes itself back.
type serializer interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
	LayerPayload() []byte
}

// roundTrip decodes b, writes the layer back over its own payload and
// returns the bytes.
func roundTrip(t testing.TB, l serializer, b []byte, opts gopacket.SerializeOptions) []byte {
	t.Helper()
	if err := l.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		t.Fatalf("decode % x: %v", b, err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, opts, l, gopacket.Payload(l.LayerPayload())); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return buf.Bytes()
}

// TestSerializeRoundTrip: every BTH (with pad and ICRC), extension header
// (ImmDt and DETH from the public rxe captures),
// CDC and the RoCEv1 GRH of the lab captures and vectors serializes back
// to its bytes, and FixLengths gives the same lengths the kernel wrote.
func TestSerializeRoundTrip(t *testing.T) {
	samples := contractSamples(t)
	for _, lt := range []gopacket.LayerType{LayerTypeBTH, LayerTypeRETH, LayerTypeAETH, LayerTypeImmDt, LayerTypeDETH, LayerTypeCDC, LayerTypeGRH, LayerTypeLLC, LayerTypeCLC} {
		if len(samples[lt]) == 0 {
			t.Errorf("%s: no sample", lt)
		}
		for _, b := range samples[lt] {
			for _, fix := range []bool{false, true} {
				l := newLayer(lt).(serializer)
				got := roundTrip(t, l, b, gopacket.SerializeOptions{FixLengths: fix})
				want := b
				if g, ok := l.(*GRH); ok {
					want = b[:40+int(g.PayloadLen)]
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s (FixLengths %v):\n got % x\nwant % x", lt, fix, got, want)
				}
			}
		}
	}
}

// TestSerializeBuildsMalformed builds frames from fields, the way tests of
// other packages make edge cases: a CDC with a bad length decodes to the
// error it must.
func TestSerializeBuildsMalformed(t *testing.T) {
	c := &CDC{Type: cdcType, Length: 0xff, Seq: 7, Token: 3, Prod: CDCCursor{Wrap: 1, Count: 100}}
	buf := gopacket.NewSerializeBuffer()
	if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	var d CDC
	if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err == nil {
		t.Fatal("a CDC of length 0xff decoded")
	}
	if err := c.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeFromBytes(buf.Bytes()[:44], gopacket.NilDecodeFeedback); err != nil || d.Seq != 7 || d.Prod.Count != 100 {
		t.Fatalf("fixed CDC: %v %+v", err, d)
	}
}

// FuzzSerializeCDC: whatever decodes serializes back to the same 44 bytes
// up to the reserved ones, and decodes again to the same fields.
func FuzzSerializeCDC(f *testing.F) {
	f.Add(roceVector(f, "cdc_v1_seq1_token3_prod13"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c CDC
		if c.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		var d CDC
		if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
		c.BaseLayer, d.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
		if !reflect.DeepEqual(c, d) {
			t.Fatalf("round trip %+v != %+v", c, d)
		}
	})
}

// FuzzSerializeBTH: a decoded BTH with its payload serializes to a frame
// that decodes to the same header fields.
func FuzzSerializeBTH(f *testing.F) {
	f.Add(roceVector(f, "roce_bth_rc_send_only_smcr"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h BTH
		if h.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &h, gopacket.Payload(h.Payload)); err != nil {
			t.Fatal(err)
		}
		var g BTH
		if err := g.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		h.BaseLayer, g.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
		if !reflect.DeepEqual(h, g) {
			t.Fatalf("round trip %+v != %+v", h, g)
		}
	})
}

// FuzzSerializeLLC: a decoded LLC serializes to a message that decodes to
// the same fields.
func FuzzSerializeLLC(f *testing.F) {
	for _, v := range []string{"llc_v1_add_link_req", "llc_v1_confirm_link_req", "llc_v1_confirm_rkey_req", "llc_v1_delete_link_req_all_orderly", "llc_v1_delete_rkey_req"} {
		f.Add(roceVector(f, v))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var l LLC
		if l.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := l.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		var d LLC
		if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		l.BaseLayer, d.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
		if !reflect.DeepEqual(l, d) {
			t.Fatalf("round trip\n%+v\n%+v", l, d)
		}
	})
}

// FuzzSerializeCLC: a decoded CLC message serializes to bytes that decode
// to the same fields.
func FuzzSerializeCLC(f *testing.F) {
	for _, v := range []string{"accept_ipv4", "confirm_ipv6", "decline_nosmcdev", "proposal_ipv6"} {
		f.Add(clcReadVector(f, "clc_v1_smcr_"+v+".hex"))
	}
	f.Add(testCLCDeclineV2Short) // Linux 5.10-5.15
	f.Fuzz(func(t *testing.T, b []byte) {
		var c CLC
		if c.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		buf := gopacket.NewSerializeBuffer()
		if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), b[:c.Length]) {
			var d CLC
			if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil {
				t.Fatalf("re-decode: %v", err)
			}
			c.BaseLayer, d.BaseLayer = layers.BaseLayer{}, layers.BaseLayer{}
			if fmt.Sprintf("%+v", c) != fmt.Sprintf("%+v", d) {
				t.Fatalf("round trip\n%+v\n%+v", c, d)
			}
		}
	})
}

// TestSerializeCLCEdges builds CLC edge cases from a real Proposal's
// fields: a v2.1 limit change survives the round trip, a wrong length is
// reported where the kernel would reject it.
func TestSerializeCLCEdges(t *testing.T) {
	var c CLC
	if err := c.DecodeFromBytes(clcReadVector(t, "clc_v1_smcr_proposal_ipv6.hex"), gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	c.Proposal.IPv4PrefixLen = 16
	buf := gopacket.NewSerializeBuffer()
	if err := c.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		t.Fatal(err)
	}
	var d CLC
	if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil || d.Proposal.IPv4PrefixLen != 16 || d.Proposal.IPv6PrefixCount != c.Proposal.IPv6PrefixCount {
		t.Fatalf("edited Proposal: %v %+v", err, d.Proposal)
	}
	c.Length += 8 // eight bytes the contents do not account for
	if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err == nil {
		t.Fatal("a Proposal whose length overshoots its contents decoded")
	}
}

// FuzzSerializeExt: any bytes an extension header (RETH, AETH, ImmDt,
// IETH, DETH) accepts serialize to bytes that decode to the same header
// and payload (DETH's reserved byte is written as zero). IETH has no real
// frame in the captures, so this is where its SerializeTo is exercised.
func FuzzSerializeExt(f *testing.F) {
	f.Add(uint8(0), []byte("\x00\x00\x00\x00\x00\x00\x10\x00\x00\x00\x12\x34\x00\x00\x00\x40payload"))
	f.Add(uint8(3), []byte("\x12\x34\x56\x78"))
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		lt := []gopacket.LayerType{LayerTypeRETH, LayerTypeAETH, LayerTypeImmDt, LayerTypeIETH, LayerTypeDETH}[int(which)%5]
		l := newLayer(lt).(serializer)
		if l.DecodeFromBytes(b, gopacket.NilDecodeFeedback) != nil {
			return
		}
		got := roundTrip(t, l, b, gopacket.SerializeOptions{})
		want := reflect.ValueOf(l).Elem().Interface()
		d := newLayer(lt)
		if err := d.DecodeFromBytes(got, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("%s re-decode: %v", lt, err)
		}
		if !bytes.Equal(d.(serializer).LayerPayload(), l.LayerPayload()) {
			t.Fatalf("%s: payload changed", lt)
		}
		if g := reflect.ValueOf(d).Elem().FieldByName("BaseLayer"); g.IsValid() {
			g.Set(reflect.Zero(g.Type()))
		}
		w := reflect.New(reflect.TypeOf(want)).Elem()
		w.Set(reflect.ValueOf(want))
		if g := w.FieldByName("BaseLayer"); g.IsValid() {
			g.Set(reflect.Zero(g.Type()))
		}
		if !reflect.DeepEqual(reflect.ValueOf(d).Elem().Interface(), w.Interface()) {
			t.Fatalf("%s round trip\n%+v\n%+v", lt, d, w.Interface())
		}
	})
}
