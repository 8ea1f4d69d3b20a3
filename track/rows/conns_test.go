package rows_test

import (
	"errors"
	"io"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// snapshotOf is the tracker's snapshot of a whole capture.
func snapshotOf(t *testing.T, path string) track.Snapshot {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := track.New(track.Options{})
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Feed(f)
	}
	return tr.Snapshot()
}

// TestWritesNotShown: ANCK's dump device copies a host's CDCs, not the
// RDMA WRITEs of its link: a capture of it alone shows the WRITE counts
// as unknown ("-"), not as none; a capture of the link shows them.
func TestWritesNotShown(t *testing.T) {
	for _, c := range []struct {
		path  string
		shown bool
	}{{"../../testdata/anck/dump-device.pcap", false}, {"../../testdata/reference/pingpong.pcap", true}} {
		s := snapshotOf(t, c.path)
		cs := rows.ConnRows(&s)
		if len(cs) == 0 {
			t.Fatalf("%s: no connection", c.path)
		}
		for _, f := range []*rows.Flow{&cs[0].Client2Srv, &cs[0].Srv2Client} {
			if got := rows.WriteCount(f, f.WriteBytes) != "-"; got != c.shown || f.WritesNotShown == c.shown {
				t.Errorf("%s: WRITE bytes %q (writes not shown %v)", c.path, rows.WriteCount(f, f.WriteBytes), f.WritesNotShown)
			}
		}
	}
}
