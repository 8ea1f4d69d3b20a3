package zview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

func TestViews(t *testing.T) {
	pp := feedFile(t, refDir+"pingpong.pcap", track.Options{Timeline: "10.10.0.2:49018"}, 0)
	dn := feedFile(t, refDir+"decline-nordma.pcap", track.Options{}, 0)
	tests := []struct {
		tr        *track.Tracker
		spec      string
		wantText  []string
		jsonCheck func(t *testing.T, b []byte)
	}{
		{pp, "smc,conns", []string{"10.10.0.2:49018", "10.10.0.1:5000", "SMC-R", "first contact", "32664", "32640", "512"},
			func(t *testing.T, b []byte) {
				var v rows.ConnsView
				mustJSON(t, b, &v)
				cs := v.Conns
				if v.Stats.Frames != 4140 || len(cs) != 1 || cs[0].Client2Srv.Bytes != 32664 || cs[0].ServerRKey != "0x3a9" || cs[0].Handshake.Confirm <= 0 {
					t.Errorf("conns json: %+v", cs)
				}
			}},
		{pp, "smc,links", []string{"deleted", "rejected", "0x000011", "0x000012", "CONFIRM_LINK_V2 resp link 1", "operator-initiated"},
			func(t *testing.T, b []byte) {
				var ls []rows.Link
				mustJSON(t, b, &ls)
				if len(ls) != 2 || ls[0].Server.UID != "00000101" || ls[0].C2S.Retrans+ls[0].S2C.Retrans != 14 {
					t.Errorf("links json: %+v", ls)
				}
			}},
		{pp, "smc,lgr", []string{"58607@52:54:00:0a:00:01", "16702@52:54:00:0a:00:02", "0x100", "link 1:deleted link 2:rejected"},
			func(t *testing.T, b []byte) {
				var gs []rows.LGR
				mustJSON(t, b, &gs)
				if len(gs) != 1 || gs[0].State != "deleted" || len(gs[0].Links) != 2 {
					t.Errorf("lgr json: %+v", gs)
				}
			}},
		{dn, "smc,decline", []string{"server", "after Proposal", "0x03030002", "NOSMCRDEV", "1 of 1"},
			func(t *testing.T, b []byte) {
				var v rows.DeclineView
				mustJSON(t, b, &v)
				if len(v.Fallbacks) != 1 || v.Fallbacks[0].Name != "NOSMCRDEV" || v.Fallbacks[0].By != "server" || len(v.ByReason) != 1 {
					t.Errorf("decline json: %+v", v)
				}
			}},
		{pp, "smc,timeline,1", []string{"CLC Accept", "first contact", "+64 B written", "peer-conn-closed", "RMB freed"},
			func(t *testing.T, b []byte) {
				var tl rows.Timeline
				mustJSON(t, b, &tl)
				if tl.Conn.ID != 1 || len(tl.Events) < 2000 || tl.Events[0].Frame != 5 || tl.Events[0].Rel != 0 {
					t.Errorf("timeline json: %d events, first %+v", len(tl.Events), tl.Events[:1])
				}
			}},
		{pp, "smc,timeline,10.10.0.1:5000", []string{"SYN with SMC option"}, nil},
	}
	for _, tc := range tests {
		name, arg, err := track.ParseView(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := writeView(tc.tr, &b, name, arg, "text"); err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for _, w := range tc.wantText {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s text lacks %q:\n%s", tc.spec, w, clip(b.String()))
			}
		}
		if tc.jsonCheck != nil {
			b.Reset()
			if err := writeView(tc.tr, &b, name, arg, "json"); err != nil {
				t.Fatalf("%s json: %v", tc.spec, err)
			}
			tc.jsonCheck(t, b.Bytes())
		}
	}
}

func TestViewErrors(t *testing.T) {
	tr := feedFile(t, refDir+"no-ueid.pcap", track.Options{}, 0)
	var b bytes.Buffer
	for _, spec := range []string{"smc,nope", "smc,timeline", "smc,timeline,", "io,phs"} {
		if _, _, err := track.ParseView(spec); !errors.Is(err, track.ErrUnknownView) {
			t.Errorf("ParseView(%q) = %v, want track.ErrUnknownView", spec, err)
		}
	}
	if err := writeView(tr, &b, "smc,nope", "", "text"); !errors.Is(err, track.ErrUnknownView) {
		t.Errorf("unknown view: %v", err)
	}
	if err := writeView(tr, &b, track.ViewConns, "", "xml"); err == nil {
		t.Error("unknown format accepted")
	}
	if err := writeView(tr, &b, track.ViewTimeline, "7", "text"); err == nil || !strings.Contains(err.Error(), "no connection 7") {
		t.Errorf("missing connection: %v", err)
	}
	b.Reset()
	// Without track.Options.Timeline the view says why it is empty.
	if err := writeView(tr, &b, track.ViewTimeline, "1", "text"); err != nil || !strings.Contains(b.String(), "no events recorded") {
		t.Errorf("timeline without recording: %v\n%s", err, b.String())
	}
	// Empty tracker: views still render.
	for _, v := range []string{track.ViewConns, track.ViewLinks, track.ViewLGR, track.ViewDecline} {
		b.Reset()
		if err := writeView(track.New(track.Options{}), &b, v, "", "json"); err != nil || !json.Valid(b.Bytes()) {
			t.Errorf("%s on empty tracker: %v %q", v, err, b.String())
		}
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, clip(string(b)))
	}
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

// TestConcurrentSnapshot: a live UI reads views while the capture goroutine
// feeds (run with -race).
func TestConcurrentSnapshot(t *testing.T) {
	tr := track.New(track.Options{Timeline: "1"})
	r, err := capture.Open(refDir + "pingpong.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan struct{})
	go func() {
		// Not t.Fatal here: that must run on the test's goroutine.
		defer close(done)
		for {
			f, err := r.Next()
			if err != nil {
				return
			}
			tr.Feed(f)
		}
	}()
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		s := tr.Snapshot()
		var b bytes.Buffer
		if err := View(&b, &s, track.ViewConns, "", "json"); err != nil {
			t.Fatal(err)
		}
		if len(s.Conns) > 0 {
			_ = View(&b, &s, track.ViewTimeline, "1", "text")
		}
	}
	if s := tr.Snapshot(); s.Stats.Frames != 4140 {
		t.Errorf("%d frames fed", s.Stats.Frames)
	}
}

func TestWriteViews(t *testing.T) {
	if _, err := track.NewForViews(track.Options{}, []string{"smc,conns", "smc,bogus"}); !errors.Is(err, track.ErrUnknownView) {
		t.Fatalf("NewForViews accepted a bad spec: %v", err)
	}
	tr, err := track.NewForViews(track.Options{}, []string{"smc,conns", "smc,timeline,1"})
	if err != nil {
		t.Fatal(err)
	}
	tr = feedInto(t, tr, refDir+"no-ueid.pcap")
	var b bytes.Buffer
	if err := writeViews(tr, &b, []string{"smc,conns", "smc,decline", "smc,timeline,1"}, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"SMC connections: 1", "SMC fallbacks: 1 of 1", "CLC Decline", "NOSMCDEV"} {
		if !strings.Contains(out, w) {
			t.Errorf("views lack %q:\n%s", w, clip(out))
		}
	}
	if strings.Count(out, "=====\n") != 6 {
		t.Errorf("want 3 framed views:\n%s", clip(out))
	}
}

// The smc,lgr view of a failover capture must tell the whole story in one
// place: both links, the connections moving, and the DELETE_LINK reason.
func TestLGRViewShowsFailover(t *testing.T) {
	p := filepath.Join(samplesDir(), "multilink.pcap")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not there yet (lab/run all publishes it)", p)
	}
	var b strings.Builder
	if err := writeView(feedFile(t, p, track.Options{}, 0), &b, "smc,lgr", "", "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"link 1:", "link 2:", // both links of the symmetric group
		"ADD_LINK_V2 resp link 2 accepted",
		"failover: connection ", // a connection moved by failover-validation CDCs
		"DELETE_LINK_V2 req ORDERLY link 2 reason 0x00010000 lost path",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("smc,lgr lacks %q:\n%s", want, out)
		}
	}
	// History is in frame order.
	last := 0
	for _, line := range strings.Split(out, "\n") {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "frame %d:", &n); err == nil {
			if n < last {
				t.Errorf("history not in frame order at %q", line)
			}
			last = n
		}
	}
}

// An inferred connection (no TCP seen) shows its link's hosts in the
// header of smc,timeline, as in its smc,conns line.
func TestTimelineInferredHosts(t *testing.T) {
	s := feedFile(t, refDir+"pingpong.pcap", track.Options{Timeline: "all"}, 2001).Snapshot()
	var conns rows.ConnsView
	var tl rows.Timeline
	for _, x := range []struct {
		spec string
		v    any
	}{{"smc,conns", &conns}, {"smc,timeline,1", &tl}} {
		var b bytes.Buffer
		name, arg, _ := track.ParseView(x.spec)
		if err := View(&b, &s, name, arg, "json"); err != nil {
			t.Fatal(err)
		}
		mustJSON(t, b.Bytes(), x.v)
	}
	if len(conns.Conns) != 1 || !conns.Conns[0].Inferred || conns.Conns[0].Client == "" {
		t.Fatalf("want one inferred connection with hosts from its link: %+v", conns.Conns)
	}
	if c := conns.Conns[0]; tl.Conn.Client != c.Client || tl.Conn.Server != c.Server {
		t.Errorf("timeline header %q -> %q, smc,conns %q -> %q", tl.Conn.Client, tl.Conn.Server, c.Client, c.Server)
	}
}

const refDir = "../../testdata/reference/"

func samplesDir() string { return "../../samples" }

// feedFile runs a capture through a tracker, skipping the first skip
// frames (a capture that starts mid-connection).
func feedFile(t testing.TB, name string, opts track.Options, skip int) *track.Tracker {
	t.Helper()
	return feed(t, track.New(opts), name, skip)
}

func writeView(tr *track.Tracker, w io.Writer, name, arg, format string) error {
	s := tr.Snapshot()
	return View(w, &s, name, arg, format)
}

func writeViews(tr *track.Tracker, w io.Writer, specs []string, format string) error {
	s := tr.Snapshot()
	return Views(w, &s, specs, format)
}

func feedInto(t testing.TB, tr *track.Tracker, name string) *track.Tracker {
	t.Helper()
	return feed(t, tr, name, 0)
}

// feed runs a capture through tr, skipping the first skip frames.
func feed(t testing.TB, tr *track.Tracker, name string, skip int) *track.Tracker {
	t.Helper()
	r, err := capture.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		f, err := r.Next()
		if err != nil {
			return tr
		}
		if f.Number > skip {
			tr.Feed(f)
		}
	}
}

// TestViewsFolded: when a capture holds more connections than the tracker
// keeps whole, every view says how many are listed and counts all of them
// by outcome, reason, bytes and state.
func TestViewsFolded(t *testing.T) {
	tr := track.New(track.Options{MaxConns: 2})
	for _, name := range []string{"pingpong", "decline-nordma", "fallback-nosmc", "no-ueid", "pingpong", "decline-nordma"} {
		feedInto(t, tr, refDir+name+".pcap")
	}
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"smc,conns", []string{"SMC connections: 2\n", "evicted connections 4\n",
			"listed 2 of 6 connections; folded into the totals below: the 4 oldest\n",
			"all 6 connections: SMC-R 2, fallback 4; closed 6; frames ",
			"all C>S: 1024 CDCs, 65328 B produced, 65328 B in 1022 RDMA WRITEs, "}},
		{"smc,decline", []string{"SMC fallbacks: 4 of 6 connections (1 listed, 3 folded: counted by reason below)\n",
			"  2  0x03030002 NOSMCRDEV (server)\n", "  1  0x03030000 NOSMCDEV (client)\n", "  1  no SMC option on SYN-ACK"}},
		{"smc,links", []string{"SMC-R links: 1 ", "listed 1 of 4 links; folded into these totals (history dropped): the 3 oldest\n", "all 4 links: rejected 2, deleted 2; "}},
		{"smc,lgr", []string{"SMC-R link groups: 1\n", "listed 1 of 2 link groups; folded with their links: the 1 oldest; deleted: 2 of all\n",
			"link 1:deleted +1 folded"}},
	} {
		var b bytes.Buffer
		if err := writeView(tr, &b, tc.spec, "", "text"); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", tc.spec, w, b.String())
			}
		}
	}
	var b bytes.Buffer
	if err := writeView(tr, &b, "smc,conns", "", "json"); err != nil {
		t.Fatal(err)
	}
	var v rows.ConnsView
	mustJSON(t, b.Bytes(), &v)
	if tot := v.Totals; tot == nil || tot.Conns.Conns != 6 || tot.Conns.Folded != 4 || tot.Conns.Outcomes["fallback"] != 4 ||
		tot.Links.Links != 4 || tot.LinkGroups.LinkGroups != 2 || tot.LinkGroups.Folded != 1 {
		t.Errorf("conns json totals: %+v", v.Totals)
	}
	if err := writeView(tr, &b, "smc,timeline", "1", "text"); err == nil || !strings.Contains(err.Error(), "folded") {
		t.Errorf("timeline of a folded connection: %v, want an error that says it was folded", err)
	}
}

// TestJSONStreamsLikeMarshal: the views' JSON, written a row at a time, is
// what json.Marshal makes of the whole view.
func TestJSONStreamsLikeMarshal(t *testing.T) {
	folded := track.New(track.Options{MaxConns: 2, Timeline: "all"})
	for _, name := range []string{"pingpong", "decline-nordma", "fallback-nosmc", "no-ueid", "pingpong"} {
		feedInto(t, folded, refDir+name+".pcap")
	}
	for _, tr := range []*track.Tracker{
		feedFile(t, refDir+"pingpong.pcap", track.Options{Timeline: "all"}, 0),
		feedFile(t, refDir+"decline-nordma.pcap", track.Options{Timeline: "all"}, 0),
		feedFile(t, refDir+"pingpong.pcap", track.Options{Timeline: "all", TimelineMax: 10}, 2001), // events not kept
		feedFile(t, refDir+"no-ueid.pcap", track.Options{}, 0),                                     // a timeline with a note
		track.New(track.Options{}),
		folded,
	} {
		s := tr.Snapshot()
		views := []any{rows.Conns(&s), rows.LinkRows(&s), rows.LGRRows(&s), rows.Declines(&s)}
		for _, c := range s.Conns {
			tl, err := rows.TimelineOf(&s, fmt.Sprint(c.ID))
			if err != nil {
				t.Fatal(err)
			}
			views = append(views, tl)
		}
		for _, v := range views {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writeJSON(&got, v); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want)+"\n" {
				t.Errorf("%T: streamed JSON differs from json.Marshal:\n%s\n%s", v, clip(got.String()), clip(string(want)))
			}
		}
	}
}

// TestViewsLinksFolded: when only links were folded, the connection views
// count what they list as before and say nothing folded of them.
func TestViewsLinksFolded(t *testing.T) {
	tr := track.New(track.Options{MaxConns: 8}) // 2 links kept
	for _, name := range []string{"pingpong", "decline-nordma", "pingpong", "pingpong"} {
		feedInto(t, tr, refDir+name+".pcap")
	}
	var b bytes.Buffer
	if err := writeViews(tr, &b, []string{"smc,decline", "smc,conns", "smc,links"}, "text"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{"SMC fallbacks: 1 of 4 connections\n", "all 4 connections: SMC-R 3, fallback 1; ", "listed 2 of 6 links; "} {
		if !strings.Contains(out, w) {
			t.Errorf("views lack %q:\n%s", w, clip(out))
		}
	}
	if strings.Contains(out, "listed 4 of") || strings.Contains(out, "folded: counted by reason") {
		t.Errorf("views say connections were folded:\n%s", clip(out))
	}
}

// TestTimelineAcrossStepText: the text and JSON of smc,timeline mark the
// times from the frame whose clock stepped back on (">=", rel_at_least)
// and say why; the frame before it is not marked.
func TestTimelineAcrossStepText(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(samplesDir(), "pingpong.pcap"))
	path := testutil.WriteFrames(t, "step.pcap", lt, mutate.Mutation{Kind: mutate.Step, At: 19, N: 5000}.Apply(frames))
	s := feedFile(t, path, track.Options{Timeline: "1"}, 0).Snapshot()
	var text bytes.Buffer
	if err := View(&text, &s, track.ViewTimeline, "1", "text"); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for l := range strings.Lines(text.String()) {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[0]] = f[1]
		}
	}
	if !strings.HasPrefix(lines["20"], ">=") || strings.HasPrefix(lines["19"], ">=") || !strings.Contains(text.String(), "stepped back") {
		t.Errorf("frame 19's time %q, frame 20's %q, want only 20's marked, and the note:\n%s", lines["19"], lines["20"], text.String())
	}
	var js bytes.Buffer
	if err := View(&js, &s, track.ViewTimeline, "1", "json"); err != nil {
		t.Fatal(err)
	}
	var tl rows.Timeline
	mustJSON(t, js.Bytes(), &tl)
	for _, e := range tl.Events {
		if e.AtLeast != (e.Frame >= 20) {
			t.Errorf("JSON: frame %d rel_at_least %v", e.Frame, e.AtLeast)
		}
	}
}

// TestWritesNotAllCaptured: long.pcap without every 10th frame from
// frame 30 (a mirror port that drops): the second connection's WRITE
// bytes (64 KiB WRITEs of several packets) fall short of its cursors',
// the capture's miss, so smc,conns notes the WRITEs not all in the
// capture (JSON requests_not_all_captured), not that the cursors and
// WRITEs differ; the whole capture notes neither.
func TestWritesNotAllCaptured(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(samplesDir(), "long.pcap"))
	thinned := testutil.WriteFrames(t, "thinned.pcap", lt, mutate.Mutation{Kind: mutate.Thin, At: 29, N: 10}.Apply(frames))
	for _, c := range []struct {
		name   string
		path   string
		missed bool
	}{{"whole", filepath.Join(samplesDir(), "long.pcap"), false}, {"thinned", thinned, true}} {
		out, v := connsViews(t, c.path)
		if got := strings.Contains(out, "C>S WRITEs not all in the capture"); got != c.missed || strings.Contains(out, "cursor/WRITE bytes differ") {
			t.Errorf("%s: notes WRITEs not all in the capture %v, want %v, and no disagreement:\n%s", c.name, got, c.missed, out)
		}
		if len(v.Conns) != 2 || v.Conns[1].Client2Srv.RequestsMissed != c.missed || c.missed && v.Conns[1].Client2Srv.WriteBytes >= v.Conns[1].Client2Srv.Bytes {
			t.Errorf("%s: JSON %+v, want two connections, the second's C>S requests_not_all_captured %v, its WRITE bytes short", c.name, v.Conns, c.missed)
		}
	}
}

// TestCDCsNotAllCaptured: lossy.pcap without every 4th frame from frame 1
// (to frame 2045: editcap drops 512 frames a run) misses the second
// connection's last C>S CDC, so its cursors stop short of its WRITEs: the
// capture's miss, noted as CDCs not all in the capture, not that the
// cursors and WRITEs differ.
func TestCDCsNotAllCaptured(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(samplesDir(), "lossy.pcap"))
	for n := 2045; n >= 1; n -= 4 {
		frames = mutate.Mutation{Kind: mutate.Drop, At: n - 1}.Apply(frames)
	}
	s := feedFile(t, testutil.WriteFrames(t, "thinned.pcap", lt, frames), track.Options{}, 0).Snapshot()
	var text bytes.Buffer
	if err := View(&text, &s, track.ViewConns, "", "text"); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "C>S CDCs not all in the capture") || strings.Contains(out, "cursor/WRITE bytes differ") {
		t.Errorf("notes: want C>S CDCs not all in the capture, and no disagreement:\n%s", out)
	}
}

// TestWritesBeforeLinkKnown: pingpong.pcap cut to 80 bytes a frame keeps
// no CONFIRM_LINK's sender QP, so the link is known from the client's
// first CDC, after its first WRITE: smc,conns notes the WRITEs the
// tracker could not count (JSON writes_before_link_known), not that the
// cursors and WRITEs differ. Cut to 84 bytes, the CONFIRM_LINKs keep
// their QPs (their UIDs cut) and every WRITE is counted.
func TestWritesBeforeLinkKnown(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(samplesDir(), "pingpong.pcap"))
	for _, c := range []struct {
		snap   int
		untied bool
	}{{80, true}, {84, false}} {
		path := testutil.WriteFrames(t, "cut.pcap", lt, mutate.Mutation{Kind: mutate.Snap, N: c.snap}.Apply(frames))
		out, v := connsViews(t, path)
		if got := strings.Contains(out, "C>S WRITEs before its link was known not counted"); got != c.untied || strings.Contains(out, "cursor/WRITE bytes differ") {
			t.Errorf("cut to %d: notes WRITEs not counted %v, want %v, and no disagreement:\n%s", c.snap, got, c.untied, out)
		}
		if len(v.Conns) != 1 {
			t.Fatalf("cut to %d: %d connections, want 1", c.snap, len(v.Conns))
		}
		if f := &v.Conns[0].Client2Srv; f.WritesUntied != c.untied || f.RequestsMissed || (f.WriteBytes == f.Bytes) == c.untied {
			t.Errorf("cut to %d: C>S %+v, want writes_before_link_known %v, its WRITE bytes short only then", c.snap, f, c.untied)
		}
	}
}

// connsViews is smc,conns of the capture at path, as text and as JSON.
func connsViews(t *testing.T, path string) (string, rows.ConnsView) {
	t.Helper()
	s := feedFile(t, path, track.Options{}, 0).Snapshot()
	var text, js bytes.Buffer
	if err := View(&text, &s, track.ViewConns, "", "text"); err != nil {
		t.Fatal(err)
	}
	if err := View(&js, &s, track.ViewConns, "", "json"); err != nil {
		t.Fatal(err)
	}
	var v rows.ConnsView
	mustJSON(t, js.Bytes(), &v)
	return text.String(), v
}
