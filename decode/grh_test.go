package decode

import (
	"errors"
	"net/netip"
	"testing"
)

// TestGRHVector is the hwipl RoCEv1 GRH (SOURCES.md: version 6, traffic
// class 2, flow label 0, length 60, next header 0x1b, hop limit 1, source
// and destination fe80::9a03:9bff:feab:cdef).
func TestGRHVector(t *testing.T) {
	p := roceV1Packet(t)
	var g GRH
	if err := g.DecodeFromBytes(p, &roceFeedback{}); err != nil {
		t.Fatal(err)
	}
	gid := netip.MustParseAddr("fe80::9a03:9bff:feab:cdef")
	if g.Version != 6 || g.TrafficClass != 2 || g.FlowLabel != 0 || g.PayloadLen != 60 || g.NextHeader != 0x1b ||
		g.HopLimit != 1 || g.SGID != gid || g.DGID != gid {
		t.Errorf("%+v", g)
	}
	if g.NextLayerType() != LayerTypeBTH || len(g.Payload) != 60 || len(g.Contents) != 40 {
		t.Errorf("next %v payload %d", g.NextLayerType(), len(g.Payload))
	}
	if s := string(g.AppendSummary(nil)); s != "RoCEv1 fe80::9a03:9bff:feab:cdef > fe80::9a03:9bff:feab:cdef" {
		t.Errorf("summary %q", s)
	}
	var r Record
	g.AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"roce.grh.version": 6, "roce.grh.tclass": 2, "roce.grh.paylen": 60,
		"roce.grh.nxthdr": 0x1b, "roce.grh.hoplimit": 1, "roce.grh.flow_label": 0})
	if d, _ := LookupField("roce.grh.sgid"); true {
		if v, _ := r.First(d.ID); v.A != gid {
			t.Errorf("sgid %v", v.A)
		}
	}
	// Bytes after PayLen (Ethernet padding) stay out of the BTH.
	if err := g.DecodeFromBytes(append(append([]byte(nil), p...), 0, 0), &roceFeedback{}); err != nil || len(g.Payload) != 60 {
		t.Errorf("padded: %v, payload %d", err, len(g.Payload))
	}
}

func TestGRHBad(t *testing.T) {
	p := roceV1Packet(t)
	for n := range len(p) {
		fb := &roceFeedback{}
		var g GRH
		if err := g.DecodeFromBytes(p[:n], fb); !errors.Is(err, ErrTruncated) || !fb.truncated {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
	q := append([]byte(nil), p...)
	q[0] = 0x40
	var g GRH
	if err := g.DecodeFromBytes(q, &roceFeedback{}); !errors.Is(err, ErrReserved) {
		t.Errorf("version 4: %v", err)
	}
	q[0], q[6] = p[0], 0x11
	if err := g.DecodeFromBytes(q, &roceFeedback{}); err != nil || g.NextLayerType() == LayerTypeBTH {
		t.Errorf("next header 0x11: %v, next %v", err, g.NextLayerType())
	}
}

func TestGRHDoesNotMalloc(t *testing.T) {
	p := roceV1Packet(t)
	var g GRH
	fb := &roceFeedback{}
	if n := testing.AllocsPerRun(200, func() { _ = g.DecodeFromBytes(p, fb) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func BenchmarkGRH(b *testing.B) {
	p := roceV1Packet(b)
	var g GRH
	fb := &roceFeedback{}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.DecodeFromBytes(p, fb)
	}
}
