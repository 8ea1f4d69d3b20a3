package output

import (
	"fmt"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output/zview"
)

// TestLateTrackerFields holds the run loop's late tracker fields (added
// when the filter or the printer first reads them) to adding them to every
// frame right after it is fed, in every output format, on every capture of
// the repository.
func TestLateTrackerFields(t *testing.T) {
	files := testutil.AllCaptures(t)
	filters := []string{
		"smc.cdc.seq == 5 and smc.conn.id",
		"smc.cdc.seq == 5 or smc.conn.id == 2",
		"not smc.conn.id and roce",
		"tcp or smc.link.state == 4",
	}
	variants := []Options{
		{},
		{Format: FormatFields, Fields: []string{"frame.number", "smc.conn.id", "smc.conn.dir", "smc.conn.cdc_bytes"}},
		{Format: FormatFields, Fields: []string{"frame.number", "smc.cdc.seq"}},
		{Format: FormatJSONL},
		{Verbose: true},
		// -c: which frames the filter selected decides where the views stop.
		{Quiet: true, Views: []string{"smc,conns"}, Count: 3},
	}
	for _, name := range files {
		for _, y := range filters {
			for _, v := range variants {
				o := v
				o.Read, o.DisplayFilter = name, y
				o.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
				eager := o
				eager.eagerLate = true
				got, gotErr, err1 := run(t, o)
				want, wantErr, err2 := run(t, eager)
				if got != want || gotErr != wantErr || fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s -Y %q %+v: late fields give %d bytes (%v), eager %d (%v)", name, y, v, len(got), err1, len(want), err2)
				}
			}
		}
	}
}
