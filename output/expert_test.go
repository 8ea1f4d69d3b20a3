package output

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
	"github.com/smcscope/smcscope/track"
)

// TestGoldenExpertVectors locks -z smc,expert and the frames that carry
// a finding (-Y 'smc.expert.severity') on every crafted vector: what
// smcdump says of a damage the lab's kernels do not make.
func TestGoldenExpertVectors(t *testing.T) {
	for _, v := range crafted.ExpertVectors {
		t.Run(v.Name, func(t *testing.T) {
			path := v.Build(t)
			for _, c := range []struct {
				name string
				o    Options
			}{
				{"z-expert", Options{Quiet: true, Views: []string{track.ViewExpert}}},
				{"frames", Options{DisplayFilter: "smc.expert.severity", Format: "fields", Header: true,
					Fields: []string{"frame.number", "smc.expert.id", "smc.expert.severity", "smc.conn.id", "smc.link.id"}}},
			} {
				o := c.o
				o.Read = path
				o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
				var out, errb bytes.Buffer
				o.Stdout, o.Stderr = &out, &errb
				// The damaged file's error, once read past (capture.Reader.Damage).
				if err := Run(context.Background(), o); err != nil && !(v.Finding == "smc.capture.damaged" && errors.Is(err, capture.ErrCorruptRecord)) {
					t.Fatal(err)
				}
				if !bytes.Contains(out.Bytes(), []byte(v.Finding)) && c.name == "z-expert" {
					t.Errorf("-z smc,expert does not name %s:\n%s", v.Finding, out.Bytes())
				}
				testutil.Golden(t, c.name, out.Bytes())
			}
		})
	}
}

// TestExpertFilterFindsNonSMCFrames: -Y smc.expert shows the frames -z
// smc,expert names even when they are not SMC themselves, without -a
// (issue 28, point 8): the TCP FIN that ends a handshake whose link never
// came, the data an echoed option let through.
func TestExpertFilterFindsNonSMCFrames(t *testing.T) {
	for name, want := range map[string]string{"handshake-failed": "16\n", "first-link-unconfirmed": "16\n", "option-echoed": "8\n"} {
		t.Run(name, func(t *testing.T) {
			o := Options{Read: crafted.ExpertVector(t, name).Build(t), DisplayFilter: "smc.expert", Format: "fields",
				Fields: []string{"frame.number"}, Count: 1}
			o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
			var out, errb bytes.Buffer
			o.Stdout, o.Stderr = &out, &errb
			if err := Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Errorf("-Y smc.expert: first frame %q, want %q", out.String(), want)
			}
		})
	}
}

// TestExpertSeveritySpellings: Wireshark's and tshark's "warning" works
// in -Y beside "warn", 3 and "warn" quoted; per-frame JSON and -T fields
// spell the severity as -z smc,expert's JSON does ("warn", not 3). Issue
// 28, point 8.
func TestExpertSeveritySpellings(t *testing.T) {
	path := crafted.ExpertVector(t, "llc-retransmitted").Build(t)
	runOut := func(o Options) string {
		t.Helper()
		o.Read = path
		o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
		var out, errb bytes.Buffer
		o.Stdout, o.Stderr = &out, &errb
		if err := Run(context.Background(), o); err != nil {
			t.Fatalf("%s: %v", o.DisplayFilter, err)
		}
		return out.String()
	}
	fields := func(expr string) string {
		return runOut(Options{DisplayFilter: expr, Format: "fields", Fields: []string{"frame.number", "smc.expert.severity"}})
	}
	want := fields("smc.expert.severity >= 3")
	if want == "" || !strings.Contains(want, "\twarn") || strings.Contains(want, "\t3") {
		t.Fatalf("-Y 'smc.expert.severity >= 3' -e smc.expert.severity:\n%s", want)
	}
	for _, expr := range []string{"smc.expert.severity >= warn", "smc.expert.severity >= warning", "smc.expert.severity >= Warning",
		`smc.expert.severity >= "warning"`} {
		if got := fields(expr); got != want {
			t.Errorf("-Y '%s':\n%s\nwant\n%s", expr, got, want)
		}
	}
	js := runOut(Options{DisplayFilter: "smc.expert.severity == warning", Format: "json", Count: 1})
	if !strings.Contains(js, `"smc.expert.severity":["warn","warn"]`) {
		t.Errorf("JSON severity not \"warn\":\n%s", js)
	}
}

// TestExpertSeverityFloor: -z smc,expert,warn (tshark's -z expert,warn)
// lists the warnings and errors of -z smc,expert and leaves the notes
// out, saying how many; a severity it does not know is a usage error.
// Issue 28, point 8.
func TestExpertSeverityFloor(t *testing.T) {
	path := filepath.Join(testutil.SamplesDir(t), "multilink.pcap")
	view := func(spec, format string) (string, error) {
		o := Options{Read: path, Quiet: true, Views: []string{spec}, Format: Format(format)}
		o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
		var out, errb bytes.Buffer
		o.Stdout, o.Stderr = &out, &errb
		err := Run(context.Background(), o)
		return out.String(), err
	}
	all, err := view("smc,expert", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"smc,expert,warn", "smc,expert,warning", "smc,expert,Warning"} {
		got, err := view(spec, "")
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if strings.Contains(got, "Notes (") || !strings.Contains(got, "at warn or above (3 below not shown)") {
			t.Errorf("-z %s:\n%s", spec, got)
		}
		i, j := strings.Index(all, "\nWarnings ("), strings.Index(all, "\nNotes (")
		if i < 0 || j < i || !strings.Contains(got, all[i:j]) {
			t.Errorf("-z %s does not list the warnings of -z smc,expert", spec)
		}
	}
	js, err := view("smc,expert,error", "json")
	if err != nil || !strings.Contains(js, `"smc,expert,error":{"min_severity":"error","below":9,"severities":[]}`) {
		t.Errorf("-z smc,expert,error -T json: %v\n%s", err, js)
	}
	if _, err := view("smc,expert,loud", ""); err == nil {
		t.Error("-z smc,expert,loud accepted")
	}
}
