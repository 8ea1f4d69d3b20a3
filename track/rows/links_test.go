package rows_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/track"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track/rows"
)

// TestDeletionNotCaptured: silent-link.pcap without frame 219, link 2's
// DELETE_LINK request (reason lost path), whose response carries 0 in the
// reason's place, and multilink.pcap without frames 987 and 990, link 2's
// request and its retransmission, whose response carries "unknown link"
// (the client had removed it). The whole capture and a late one (from
// frame 30, where silent-link's link 2 joins its group at the end) show
// link 2 deleted with its reason absent: "-" in the Deleted column, no
// delete_reason in JSON, never the response's code. The group's deletion
// of every link is still captured.
func TestDeletionNotCaptured(t *testing.T) {
	without := func(frames []testutil.Packet, numbers ...int) []testutil.Packet {
		var out []testutil.Packet
		for i, f := range frames {
			if !slices.Contains(numbers, i+1) {
				out = append(out, f)
			}
		}
		return out
	}
	silent, lt := testutil.ReadFrames(t, "../../samples/silent-link.pcap")
	multi, _ := testutil.ReadFrames(t, "../../samples/multilink.pcap")
	for _, c := range []struct {
		name   string
		frames []testutil.Packet
	}{
		{"silent-link", without(silent, 219)},
		{"silent-link from frame 30", without(silent, 219)[29:]},
		{"multilink", without(multi, 987, 990)},
	} {
		s := endedSnapshotOf(t, testutil.WriteFrames(t, "dropped.pcap", lt, c.frames))
		var link2 *rows.Link
		links := rows.LinkRows(&s)
		for i := range links {
			if links[i].LinkID == 2 {
				link2 = &links[i]
			}
		}
		if link2 == nil || link2.State != "deleted" {
			t.Fatalf("%s: link 2 %+v, want deleted", c.name, link2)
		}
		if link2.DeleteCode != "" || link2.Deletion() != "-" || link2.Facts.DeleteKnown {
			t.Errorf("%s: link 2's reason %q, column %q, known %v; want absent", c.name, link2.DeleteCode, link2.Deletion(), link2.Facts.DeleteKnown)
		}
		b, err := json.Marshal(link2)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "delete_reason") {
			t.Errorf("%s: link 2's JSON has a reason: %s", c.name, b)
		}
		groups := rows.LGRRows(&s)
		if len(groups) != 1 || !strings.HasPrefix(groups[0].Deletion(), "0x00020000 ") {
			t.Errorf("%s: groups %d, the first's deletion %q", c.name, len(groups), groups[0].Deletion())
		}
	}
	frames := silent
	// Links and groups not deleted have no Deleted column at all.
	s := snapshotOf(t, testutil.WriteFrames(t, "window.pcap", lt, frames[:210]))
	for _, l := range rows.LinkRows(&s) {
		if l.Deletion() != "" {
			t.Errorf("link %d (%s) before any DELETE_LINK: deletion %q", l.ID, l.State, l.Deletion())
		}
	}
}

// endedSnapshotOf is the snapshot of a tracker of the capture at path
// once told the capture ended (track.Tracker.EndCapture), as smcdump's.
func endedSnapshotOf(t *testing.T, path string) track.Snapshot {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := trackRead(t, r, track.Options{})
	tr.EndCapture(time.Time{})
	return tr.Snapshot()
}
