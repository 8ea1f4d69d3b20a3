package output

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output/zview"
	"github.com/smcscope/smcscope/track"
)

// goldenFields is the -T fields column set the golden files lock: frame,
// every SMC layer's type, RoCE opcode and ICRC, and the tracker's joins.
var goldenFields = []string{
	"frame.number", "frame.error", "smc.clc.type", "smc.llc.type", "smc.cdc.seq",
	"roce.bth.opcode", "roce.icrc.ok", "smc.conn.id", "smc.conn.outcome",
	"smc.link.id", "smc.lgr.id",
}

// goldenFrameCap bounds the per-frame trees (-V, json) so the repository
// stays small (a whole-file -V of the samples is 100 MB); text, fields,
// the LLC trees and the views always cover the whole file.
const goldenFrameCap = 120

// TestGolden locks smcdump's output on every bundled capture: text, -V,
// -T json/jsonl/fields and every -z view. A change to output shows up as
// a diff of these files (go test ./output -run Golden -update).
func TestGolden(t *testing.T) {
	files := append(testutil.Samples(t), testutil.References(t)...)
	// The SMC-D sample is a pcapng (smcdump's own live capture on lo).
	files = append(files, filepath.Join(testutil.SamplesDir(t), "smcd-loopback.pcapng"))
	for _, path := range files {
		dir := filepath.Base(filepath.Dir(path))
		name := dir + "_" + strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".pcapng"), ".pcap")
		capN := goldenFrameCap
		// long.pcap is one connection's 60 000 CDCs: its text, fields and
		// timeline repeat one line shape, so they are locked on a prefix.
		textN := 0
		if strings.HasSuffix(path, "long.pcap") {
			textN = 3000
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cases := []struct {
				name string
				o    Options
			}{
				{"text", Options{Count: textN}},
				{"verbose", Options{Verbose: true, Count: capN}},
				{"json", Options{Format: "json", Count: capN}},
				{"jsonl", Options{Format: "jsonl", Count: capN}},
				{"fields", Options{Format: "fields", Fields: goldenFields, Header: true, Count: textN}},
				{"z-conns", Options{Quiet: true, Views: []string{track.ViewConns}}},
				{"z-links", Options{Quiet: true, Views: []string{track.ViewLinks}}},
				{"z-lgr", Options{Quiet: true, Views: []string{track.ViewLGR}}},
				{"z-decline", Options{Quiet: true, Views: []string{track.ViewDecline}}},
				{"z-timeline-1", Options{Quiet: true, Views: []string{track.ViewTimeline + ",1"}}},
				{"z-expert", Options{Quiet: true, Views: []string{track.ViewExpert}}},
				{"z-expert-json", Options{Quiet: true, Format: "json", Views: []string{track.ViewExpert}}},
				{"expert-warn", Options{DisplayFilter: "smc.expert.severity >= warn", Format: "fields", Header: true,
					Fields: []string{"frame.number", "smc.expert.id", "smc.expert.severity", "smc.conn.id", "smc.link.id"}}},
				{"verbose-llc", Options{Verbose: true, DisplayFilter: "smc.llc.type"}},
				{"json-views", Options{Format: "json", Count: 40, Views: []string{track.ViewConns, track.ViewLinks, track.ViewLGR, track.ViewDecline}}},
			}
			for _, c := range cases {
				if textN != 0 && c.name == "z-timeline-1" {
					continue
				}
				o := c.o
				o.Read = path
				o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
				var out, errb bytes.Buffer
				o.Stdout, o.Stderr = &out, &errb
				err := Run(context.Background(), o)
				if err != nil {
					out.WriteString("error: " + err.Error() + "\n")
				}
				if errb.Len() > 0 {
					out.WriteString("stderr: " + errb.String())
				}
				testutil.Golden(t, c.name, out.Bytes())
			}
		})
	}
}
