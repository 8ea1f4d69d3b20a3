package rows_test

import (
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// TestTimelineAcrossStep: pingpong with its clock stepped back 5 s at
// frame 20 (mutate's step: a capture host's NTP step): the timeline's
// times from frame 20 on lack the time across the step and say so
// (AtLeast, and the note); frame 19, whose time the step makes frame
// 20's too, is measured; the whole capture has no such mark.
func TestTimelineAcrossStep(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../../samples/pingpong.pcap")
	for _, tc := range []struct {
		name    string
		frames  []mutate.Frame
		stepped bool
	}{
		{"whole", frames, false},
		{"stepped at 20", mutate.Mutation{Kind: mutate.Step, At: 19, N: 5000}.Apply(frames), true},
	} {
		r, err := capture.NewReader("step", mutate.NewSource(tc.frames), lt)
		if err != nil {
			t.Fatal(err)
		}
		s := snapshotWith(t, r, track.Options{Timeline: "1"})
		tl, err := rows.TimelineOf(&s, "1")
		if err != nil {
			t.Fatal(err)
		}
		if len(tl.Events) < 20 {
			t.Fatalf("%s: %d events", tc.name, len(tl.Events))
		}
		for _, e := range tl.Events {
			if want := tc.stepped && e.Frame >= 20; e.AtLeast != want {
				t.Errorf("%s: frame %d at least %v, want %v", tc.name, e.Frame, e.AtLeast, want)
			}
		}
		if got := strings.Contains(tl.Note, "stepped back"); got != tc.stepped {
			t.Errorf("%s: note %q", tc.name, tl.Note)
		}
	}
}
