package capture

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestTunnelNestedSession: a frame carried in tunnels nested is the
// innermost tunnel's (Kind, ID, its own number), numbered by the
// outermost session with a sequence number (Session); one tunnel alone
// is its own session.
func TestTunnelNestedSession(t *testing.T) {
	frames, _, err := mutate.ReadFile("../testdata/reference/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	inner := frames[len(frames)/2].Data
	for _, c := range []struct {
		kinds       []string // innermost first
		kind, sess  TunnelKind
		seq, sessSq uint32
		hasSeq      bool
		outer       bool // numbered by a session around the tunnel
	}{
		{[]string{"erspan2"}, TunnelERSPAN2, TunnelERSPAN2, 1, 1, true, false},
		{[]string{"vxlan", "erspan2"}, TunnelVXLAN, TunnelERSPAN2, 0, 2, false, true},
		{[]string{"erspan3", "erspan2"}, TunnelERSPAN3, TunnelERSPAN2, 1, 2, true, true},
		{[]string{"erspan3", "vxlan"}, TunnelERSPAN3, TunnelERSPAN3, 1, 1, true, false},
		{[]string{"gre", "vxlan", "erspan3"}, TunnelGRE, TunnelERSPAN3, 0, 3, false, true},
	} {
		d := inner
		for i, k := range c.kinds {
			d = mutate.Carry(k, d, uint32(i+1), false)
		}
		f := decodeOne(t, d)
		tn := f.Tunnel
		if tn == nil || tn.Kind != c.kind || tn.HasSeq != c.hasSeq || c.hasSeq && tn.Seq != c.seq ||
			tn.Session.Kind != c.sess || !tn.Session.HasSeq || tn.Session.Seq != c.sessSq || f.BTH == nil {
			t.Errorf("%v: tunnel %+v, BTH %v; want %v (seq %d), numbered by %v seq %d", c.kinds, tn, f.BTH != nil, c.kind, c.seq, c.sess, c.sessSq)
			continue
		}
		if got := tn.Outer(); got != c.outer {
			t.Errorf("%v: Outer %v, want %v", c.kinds, got, c.outer)
		}
	}
}

// decodeOne reads the one Ethernet frame d.
func decodeOne(t *testing.T, d []byte) *Frame {
	t.Helper()
	r, err := NewReader("one", mutate.NewSource([]mutate.Frame{{Data: d}}), layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	f, err := r.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return f
}

// TestTunnelMirrorCut: a frame a tunnel carries whose IP length claims
// more than the tunnel carried was cut by the mirror (a VXLAN mirror that
// truncates its copies has no flag to say so): a cut frame, not a bad
// length; carried whole it is whole; a bare frame's IP length that claims
// more is damage still.
func TestTunnelMirrorCut(t *testing.T) {
	frames, _, err := mutate.ReadFile("../testdata/reference/pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var inner []byte
	for _, p := range frames {
		if len(p.Data) > 90 && p.Data[23] == 17 { // a RoCEv2 packet over IPv4
			inner = p.Data
			break
		}
	}
	for _, kind := range []string{"vxlan", "geneve", "gre", "erspan1", "erspan3"} {
		f := decodeOne(t, mutate.Carry(kind, inner[:64], 1, false))
		if tn := f.Tunnel; tn == nil || !tn.Truncated || tn.Carried != 64 || tn.Claimed != len(inner) || !f.Cut || f.LengthBad || f.BTH == nil || !f.BTH.TrailerCut {
			t.Errorf("%s carrying 64 of %d bytes: tunnel %+v, cut %v, bad length %v (%v)", kind, len(inner), tn, f.Cut, f.LengthBad, f.Err)
		}
		if f := decodeOne(t, mutate.Carry(kind, inner, 1, false)); f.Tunnel == nil || f.Tunnel.Truncated || f.Cut || f.LengthBad {
			t.Errorf("%s carrying the frame whole: tunnel %+v, cut %v, bad length %v", kind, f.Tunnel, f.Cut, f.LengthBad)
		}
	}
	if f := decodeOne(t, inner[:64]); !f.LengthBad || f.Cut {
		t.Errorf("a bare frame whose IP length claims more: bad length %v, cut %v", f.LengthBad, f.Cut)
	}
}

// TestTunnelHeaderDamaged: erspan.pcap's ERSPAN copy of a CDC (frame 153)
// with its outer IPv4 total length damaged to claim more than the frame
// holds, its ERSPAN T bit set (a switch sets it only on a frame it cut,
// which this one, its IP length filled, is not), or the carried packet's
// own IPv4 length damaged to claim more (its header's checksum verifying
// with the bytes carried: longLengthDamaged): the carried packet is whole,
// so its ICRC is checked, verifying as sent and failing with a byte of its
// CDC damaged too, which the tracker then does not follow.
func TestTunnelHeaderDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/reference/erspan.pcap")
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		what string
		off  int  // the carrier's byte damaged
		mask byte // how
	}{
		{"outer IPv4 total length", 16, 0x4a},
		{"ERSPAN T bit", 14 + 20 + 8 + 2, 0x04},
		{"carried IPv4 total length", 14 + 20 + 8 + 8 + 14 + 2, 0x08}, // claiming more: no mirror's cut
	} {
		for _, cdc := range []bool{false, true} { // a byte of the carried CDC damaged as well
			data := slices.Clone(fs[152].Data)
			data[c.off] ^= c.mask
			if cdc {
				data[125] ^= 0x41 // the CDC's consumer cursor
			}
			f := Frame{Data: data}
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			// The ICRC matches as sent (where the carried IPv4 header's
			// checksum fails as held, OK says that: IPSumBad).
			if f.Tunnel == nil || f.CDC == nil || f.Err != nil || f.Cut || !f.ICRC.Checked || (f.ICRC.Got == f.ICRC.Want) == cdc {
				t.Errorf("%s, CDC damaged %v: tunnel %v, CDC %v, error %v, cut %v, ICRC %+v; want checked, ok %v",
					c.what, cdc, f.Tunnel != nil, f.CDC != nil, f.Err, f.Cut, f.ICRC, !cdc)
			}
		}
	}
}
