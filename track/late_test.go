package track

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// lateAdder adds a frame's tracker fields the first time a filter test
// asks, as smcdump's run loop does.
type lateAdder struct {
	tr    *Tracker
	f     *capture.Frame
	added int
}

func (l *lateAdder) AppendLate(r *decode.Record) {
	if l.added == 0 {
		l.tr.AppendFields(l.f, r)
	}
	l.added++
}

// TestMatchLate holds filter.MatchLate, which has the tracker's fields
// added only when a test reads one, to Match on the record with every
// field added up front, on every capture of the repository and filters
// that mix frame and tracker fields under and, or and not.
func TestMatchLate(t *testing.T) {
	exprs := []string{
		"smc.cdc.seq == 5 and smc.conn.id",
		"smc.conn.id == 1 or smc.cdc.seq == 5",
		"not smc.conn.id",
		"not (smc.cdc and smc.conn.outcome == 1)",
		"smc.conn.dir == \"C->S\" and not smc.rc.retrans",
		"smc.conn.bytes > 1000 or tcp",
		"smc.lgr.id in {1 2} and roce",
		"smc.conn",
		"smc and not tcp",
		"smc.track.unattached or smc.rc.psn_gap > 0",
		"roce.bth.opcode == 17 and (smc.conn.cdcs > 3 or smc.link.state == 4)",
		"(tcp or smc.link.id) and not (smc.conn.inferred or smc.conn.fallback.reason)",
		"smc.cdc.seq == 5",
	}
	fs := compileFilters(t, exprs)
	for _, p := range testutil.AllCaptures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			tr := New(Options{Unshared: true})
			var full, part decode.Record
			matched := make([]int, len(fs))
			eachFrame(t, p, func(f *capture.Frame) {
				tr.Feed(f)
				frameFields := f.Fields()
				full.IDs = append(full.IDs[:0], frameFields.IDs...)
				full.Vals = append(full.Vals[:0], frameFields.Vals...)
				tr.AppendFields(f, &full)
				for i, flt := range fs {
					part.IDs = append(part.IDs[:0], frameFields.IDs...)
					part.Vals = append(part.Vals[:0], frameFields.Vals...)
					late := &lateAdder{tr: tr, f: f}
					want, got := flt.Match(&full), flt.MatchLate(&part, late)
					if want != got {
						t.Fatalf("frame %d, %q: MatchLate %v, Match %v", f.Number, exprs[i], got, want)
					}
					// Added once, in full, when added at all.
					if late.added > 0 && (!slices.Equal(part.IDs, full.IDs) || len(part.Vals) != len(full.Vals)) {
						t.Fatalf("frame %d, %q: late record %v, full %v", f.Number, exprs[i], part.IDs, full.IDs)
					}
					if got {
						matched[i]++
					}
				}
			})
			t.Logf("matched %v", matched)
		})
	}
}
