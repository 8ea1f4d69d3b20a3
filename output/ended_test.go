package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
)

// TestEndedAtRecordedEnd: a capture stopped at the client's CLC Confirm,
// as pcapng whose statistics block says the capture went on 10 s more and
// dropped 2 packets. smcdump's expert view says what was pending and how
// long the capture went on after it (the recorded end, not the last
// frame), and stderr says the capture dropped packets; after -c the
// capture did not end, and nothing is pending.
func TestEndedAtRecordedEnd(t *testing.T) {
	frames := readFrames(t, crafted.Pingpong(t), 12)
	p := filepath.Join(t.TempDir(), "ended.pcapng")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	last := frames[len(frames)-1].CI.Timestamp
	end := last.Add(10 * time.Second)
	if err := w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{LastUpdate: end, EndTime: end, PacketsDropped: 2}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	newTracker := func(v []string) (Tracker, error) { return zview.NewTracker(v) }
	out, stderr, err := run(t, Options{Read: p, Quiet: true, Views: []string{"smc,expert"}, NewTracker: newTracker})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "smc.capture.ended_pending") || !strings.Contains(out, "last seen: CLC Confirm; the capture ended 10.000 s later") ||
		!strings.Contains(out, "(that is not in the capture either)") {
		t.Errorf("-z smc,expert does not say what was pending at the recorded end:\n%s", out)
	}
	if !strings.Contains(stderr, "recorded 2 packets dropped") {
		t.Errorf("stderr %q: want the 2 packets the capture dropped", stderr)
	}
	out, _, err = run(t, Options{Read: p, Quiet: true, Count: 3, Views: []string{"smc,expert"}, NewTracker: newTracker})
	if err != nil || strings.Contains(out, "ended_pending") {
		t.Errorf("-c 3: %v, the capture did not end there:\n%s", err, out)
	}
}
