package zview

import (
	"bytes"
	"testing"

	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/track/rows"
)

// The tracker plugs into smcdump's hook through Tracker.
var _ output.Tracker = Tracker{}

// TestTrackerViewsSnapshot: smcdump's tracker writes the views one by one
// (-T json) from one snapshot, and a frame fed since makes a new one.
func TestTrackerViewsSnapshot(t *testing.T) {
	tr, err := NewTracker([]string{"smc,conns"})
	if err != nil {
		t.Fatal(err)
	}
	frames := func() int {
		var b bytes.Buffer
		if err := tr.WriteViews(&b, []string{"smc,conns"}, "json"); err != nil {
			t.Fatal(err)
		}
		var v rows.ConnsView
		mustJSON(t, b.Bytes(), &v)
		return v.Stats.Frames
	}
	feedInto(t, tr.Tracker, refDir+"no-ueid.pcap")
	first := frames()
	if again := frames(); first == 0 || again != first || tr.last.frames != first {
		t.Errorf("frames %d then %d (cached %d), want the same snapshot", first, again, tr.last.frames)
	}
	feedInto(t, tr.Tracker, refDir+"decline-nordma.pcap")
	if n := frames(); n <= first {
		t.Errorf("after more frames the views still show %d frames", n)
	}
}
