package output

import (
	"strings"
	"testing"

	"github.com/smcscope/smcscope/output/zview"
)

// TestTrackerICRCEveryMode: a CDC whose ICRC does not match is dropped by
// the receiving RNIC, so the tracker must not follow its damaged content
// in any mode (here the responder took them: the capture's copies were
// damaged, one bit each, which the ICRC names and the tracker mends). The
// reader checks the ICRC only when something reads the verdict; -T fields
// and -q with a view read none of their own, and the view followed the
// corrupted cursors there (C>S bytes 1073774424, cursor errors) while -z
// smc,expert beside it checked and did not. Every mode must give the
// smc,conns view of the mode that checks.
func TestTrackerICRCEveryMode(t *testing.T) {
	fs := readFrames(t, pingpong, -1)
	bad := 0
	for i := range fs {
		d := fs[i].Data
		// RoCEv2 SEND Only (opcode 4) carrying a CDC (type 0xFE), past
		// the handshake: a bit of its producer cursor flipped.
		if i > 40 && bad < 3 && len(d) >= 14+20+8+12+44 && d[23] == 17 && d[36] == 0x12 && d[37] == 0xb7 && d[42] == 4 && d[54] == 0xFE {
			d = append([]byte(nil), d...)
			d[54+10] ^= 0x40
			fs[i].Data = d
			bad++
		}
	}
	if bad != 3 {
		t.Fatalf("%d CDCs corrupted", bad)
	}
	p := writeFrames(t, "badicrc.pcap", fs)
	newT := func(views []string) (Tracker, error) { return zview.NewTracker(views) }
	view := func(o Options) string {
		t.Helper()
		o.Read, o.NewTracker = p, newT
		o.Views = append([]string{"smc,conns"}, o.Views...)
		out, _, err := run(t, o)
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(out, "SMC connections:")
		if i < 0 {
			t.Fatalf("no conns view in\n%s", out)
		}
		v := out[i:]
		if j := strings.Index(v, "\n===="); j >= 0 {
			v = v[:j]
		}
		return v
	}
	want := view(Options{Quiet: true, Views: []string{"smc,expert"}, Jobs: 1})
	// One bit of each changed: the ICRC names it, and the CDCs are
	// followed as sent, the clean capture's counts and bytes.
	if !strings.Contains(want, " 512      511      32664      32640 ") || strings.Contains(want, "cursor-errors") {
		t.Fatalf("the checking mode followed a corrupted CDC:\n%s", want)
	}
	for name, o := range map[string]Options{
		"-q":           {Quiet: true},
		"-T fields":    {All: true, Format: FormatFields, Fields: []string{"frame.number", "smc.cdc.seq"}},
		"-Y tracked":   {Quiet: true, DisplayFilter: "smc.conn.id == 1"},
		"-T fields -j": {All: true, Format: FormatFields, Fields: []string{"frame.number"}, Jobs: 2},
		"-q -j":        {Quiet: true, Jobs: 2},
		"text":         {},
	} {
		if o.Jobs == 0 {
			o.Jobs = 1
		}
		if got := view(o); got != want {
			t.Errorf("%s: smc,conns\n%s\nwant\n%s", name, got, want)
		}
	}
}
