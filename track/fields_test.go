package track

import (
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// fieldRun feeds a capture and, for each frame, builds the record the way
// smcdump does (frame fields, then the tracker's) and hands it to fn.
func fieldRun(t *testing.T, name string, skip int, fn func(f *capture.Frame, r *decode.Record)) *Tracker {
	t.Helper()
	tr := New(Options{})
	eachFrame(t, name, func(f *capture.Frame) {
		if f.Number <= skip {
			return
		}
		tr.Feed(f)
		r := f.Fields()
		tr.AppendFields(f, r)
		fn(f, r)
	})
	return tr
}

func TestAppendFields(t *testing.T) {
	byFrame := map[int]map[string]string{}
	keep := map[int]bool{8: true, 10: true, 12: true, 14: true, 16: true, 22: true, 23: true, 31: true, 4106: true, 4127: true}
	tr := fieldRun(t, refDir+"pingpong.pcap", 0, func(f *capture.Frame, r *decode.Record) {
		if !keep[f.Number] {
			return
		}
		m := map[string]string{}
		for i, id := range r.IDs {
			d := decode.Def(id)
			m[d.Name] = r.Vals[i].Format(d.Kind)
		}
		byFrame[f.Number] = m
	})
	want := []struct {
		frame int
		field string
		value string // "" = must be absent
	}{
		{8, "smc.conn.id", "1"}, {8, "smc.conn.dir", "C->S"}, {8, "smc.conn.outcome", "0"}, // pending at the Proposal
		{10, "smc.conn.dir", "S->C"},
		{12, "smc.conn.outcome", "0"}, {12, "smc.lgr.id", "1"}, // first contact: pending after the Confirm ...
		{14, "smc.conn.outcome", "0"}, {16, "smc.conn.outcome", "1"}, // ... until the CONFIRM_LINK response
		{14, "smc.conn.id", "1"}, {14, "smc.link.id", "1"}, {14, "smc.link.num", "1"}, {14, "smc.link.state", "3"}, // CONFIRM_LINK req -> confirming... see below
		{22, "smc.conn.id", "1"}, {22, "smc.conn.cdc_bytes", ""},
		{23, "smc.conn.cdc_bytes", "24"}, {23, "smc.conn.bytes", "24"}, {23, "smc.conn.cdcs", "1"},
		{31, "smc.conn.dir", "S->C"}, {31, "smc.conn.cdc_bytes", "64"},
		{4106, "smc.conn.bytes", "32664"},
		{4127, "smc.rc.retrans", "1"}, {4127, "smc.conn.id", ""},
	}
	for _, w := range want {
		got, ok := byFrame[w.frame][w.field]
		if w.value == "" {
			if ok {
				t.Errorf("frame %d: %s = %s, want absent", w.frame, w.field, got)
			}
			continue
		}
		if w.frame == 14 && w.field == "smc.link.state" {
			w.value = "1" // LinkConfirming until the response
		}
		if !ok || got != w.value {
			t.Errorf("frame %d: %s = %q (present %v), want %q", w.frame, w.field, got, ok, w.value)
		}
	}
	// A stale frame gets nothing.
	var r decode.Record
	tr.AppendFields(&capture.Frame{Number: 1}, &r)
	if len(r.IDs) != 0 {
		t.Errorf("AppendFields for a frame other than the last fed added %d fields", len(r.IDs))
	}
}

// TestFilterOnTrackerFields runs -Y expressions over tracker fields the way
// smcdump does and compares the counts with the tracker's own numbers.
func TestFilterOnTrackerFields(t *testing.T) {
	exprs := []string{"smc.conn.id == 1", "smc.rc.retrans", "smc.conn.cdc_bytes && smc.conn.dir == \"C->S\"", "smc.track.unattached"}
	fs := compileFilters(t, exprs)
	count := func(name string, skip int) ([]int, Snapshot) {
		n := make([]int, len(fs))
		tr := fieldRun(t, name, skip, func(_ *capture.Frame, r *decode.Record) {
			for i, f := range fs {
				if f.Match(r) {
					n[i]++
				}
			}
		})
		return n, tr.Snapshot()
	}
	n, s := count(refDir+"pingpong.pcap", 0)
	c := s.Conns[0]
	if n[0] != c.Frames || n[0] != s.Stats.ConnAttached {
		t.Errorf("'%s' matched %d frames, want the connection's %d", exprs[0], n[0], c.Frames)
	}
	if n[1] != s.Stats.Retrans || n[1] == 0 {
		t.Errorf("'%s' matched %d, want %d retransmissions", exprs[1], n[1], s.Stats.Retrans)
	}
	if n[2] != c.Flow[DirC2S].CDCs {
		t.Errorf("'%s' matched %d, want %d C->S data CDCs", exprs[2], n[2], c.Flow[DirC2S].CDCs)
	}
	n, s = count(refDir+"pingpong.pcap", 1000)
	if n[3] != s.Stats.Unattached+s.Stats.LateAttached || n[3] == 0 {
		t.Errorf("'%s' matched %d, want %d unattached when seen", exprs[3], n[3], s.Stats.Unattached+s.Stats.LateAttached)
	}
}

// TestFieldsAreTrackerFields: smcdump decides from the name whether a -Y or
// -e field needs the tracker (capture.FrameField false); a tracker field in
// a layer's namespace (e.g. smc.cdc.*) would silently never match.
func TestFieldsAreTrackerFields(t *testing.T) {
	for _, id := range []decode.FieldID{fConnID, fConnDir, fConnOutcome, fConnFallback, fConnInferred, fConnBytes,
		fConnCDCs, fCDCBytes, fLGRID, fLinkID, fLinkNum, fLinkState, fRetrans, fPSNGap, fUnattached} {
		if capture.FrameField(id) {
			t.Errorf("%s is taken for a frame field by capture: smcdump would not feed the tracker for it", decode.Def(id).Name)
		}
	}
}

// TestCatalogueOwners: with decode, capture and track all linked (as in
// smcdump), every field names an owner and every owner heads at least one
// field, so demand-driven decoding and the -V headings never meet an
// owner they cannot place or a heading nothing fills.
func TestCatalogueOwners(t *testing.T) {
	n := map[decode.Owner]int{}
	for _, d := range decode.Fields() {
		if d.Owner == decode.OwnerUnknown || d.Owner >= decode.NumOwners {
			t.Errorf("%s: no owner", d.Name)
			continue
		}
		n[d.Owner]++
	}
	for o := decode.OwnerUnknown + 1; o < decode.NumOwners; o++ {
		if n[o] == 0 {
			t.Errorf("owner %s (%s.*) has no field", o.Title(), o.Key())
		}
	}
}
