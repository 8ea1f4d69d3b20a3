package track

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// findingNames runs a capture through the tracker (fast path and all) and
// returns the names of the findings its snapshot shows, and of those the
// frames carried in their smc.expert.id fields.
func findingNames(t *testing.T, path string) (all, onFrames map[string]bool) {
	t.Helper()
	tr := New(Options{Unshared: true})
	var rec decode.Record
	onFrames = map[string]bool{}
	eachFrame(t, path, func(f *capture.Frame) {
		tr.Feed(f)
		rec.Reset()
		tr.AppendFields(f, &rec)
		if _, ids := FrameFindings(&rec); len(ids) > 0 {
			for _, id := range ids {
				onFrames[id.String()] = true
			}
		}
	})
	tr.EndCapture(time.Time{})
	s := tr.Snapshot()
	all = map[string]bool{}
	for _, f := range s.Findings() {
		all[f.ID.String()] = true
		if f.Count < 1 || f.First < 1 || f.Last < f.First {
			t.Errorf("%s: %s on %s %d: count %d frames %d..%d", filepath.Base(path), f.ID, f.Object, f.ObjectID, f.Count, f.First, f.Last)
		}
	}
	return all, onFrames
}

func names(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestExpertVectors: each crafted capture shows its finding; the event
// findings are on a frame too (smc.expert.id), the absences are decided
// at the end only.
func TestExpertVectors(t *testing.T) {
	absences := map[string]bool{"smc.llc.unanswered": true, "smc.llc.test_link_unanswered": true,
		"smc.link.first_unconfirmed": true, "smc.conn.closed_without_close": true, "smc.capture.ended_pending": true}
	seen := map[string]bool{}
	readme, err := os.ReadFile(filepath.Join("..", "testdata", "expert", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range crafted.ExpertVectors {
		t.Run(v.Name, func(t *testing.T) {
			if row := "| `" + v.Name + ".pcap` | `" + v.Finding + "` |"; !bytes.Contains(readme, []byte(row)) {
				t.Errorf("testdata/expert/README.md has no row %q: say what the vector changes", row)
			}
			path := v.Build(t)
			// The same bytes are in the repository, to open with any tool
			// (smcdump -r testdata/expert/NAME.pcap -q -z smc,expert).
			built, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			testutil.GoldenFile(t, filepath.Join("..", "testdata", "expert", v.Name+".pcap"), built)
			all, frames := findingNames(t, path)
			seen[v.Finding] = true
			if !all[v.Finding] {
				t.Errorf("findings %v, want %s among them", names(all), v.Finding)
			}
			if frames[v.Finding] == absences[v.Finding] {
				t.Errorf("%s on a frame: %v, want %v (frames carry %v)", v.Finding, frames[v.Finding], !absences[v.Finding], names(frames))
			}
		})
	}
	// ANCK's findings, on the ANCK vectors (testdata/anck).
	for _, v := range crafted.ANCKVectors {
		if v.Finding == "" {
			continue
		}
		all, _ := findingNames(t, v.Build(t))
		if !all[v.Finding] {
			t.Errorf("%s: findings %v, want %s among them", v.Name, names(all), v.Finding)
		}
		seen[v.Finding] = true
	}
	// Every wire finding has a vector or a kernel-made capture that shows
	// it (TestExpertCleanCaptures lists those).
	for _, c := range cleanFindings {
		for _, n := range c.want {
			seen[n] = true
		}
	}
	for _, d := range expert.All() {
		if d.Source == expert.FromWire && !seen[d.Name] {
			t.Errorf("finding %s has no capture that shows it", d.Name)
		}
	}
}

// cleanFindings are the findings each kernel-made capture shows: real
// events of the lab's runs (fallbacks, the multilink failover, DELETE_LINK
// reasons, RC retransmissions of the DELETE_LINK at teardown, a group
// whose ADD_LINK the client rejected), and nothing else: no false alarm.
// The expert scenarios show theirs (expert_lab_test.go): the slow reader
// its write-blocked CDCs and stalls and no loss; the lossy path its PSN
// jumps, NAKs and retransmissions and no stall (its fast reader kept up;
// the client's write-blocked CDCs are the kernel's: the path held its
// data back), nor sequence or cursor trouble; the silent link its
// unanswered TEST_LINK, the deletions, the unanswered CONFIRM_LINK of the
// server's next attempt and the copies its RC sent.
var cleanFindings = []struct {
	file string
	want []string
}{
	{"samples/decline-nordma.pcap", []string{"smc.fallback"}},
	{"samples/decline-ueid.pcap", []string{"smc.fallback"}},
	{"samples/fallback-nosmc.pcap", []string{"smc.fallback"}},
	{"samples/ipv6.pcap", []string{"smc.fallback"}},
	{"samples/no-ueid.pcap", []string{"smc.fallback"}},
	{"samples/long.pcap", []string{"smc.cdc.write_blocked", "smc.lgr.deleted", "smc.lgr.no_redundancy"}},
	{"samples/multiconn.pcap", []string{"smc.lgr.deleted", "smc.lgr.no_redundancy"}},
	// multilink and silent-link: the link 3 the server added after the
	// failover never had its CONFIRM_LINK exchange (none on the wire;
	// silent-link's request went unanswered) and was deleted 5 s later,
	// lost path.
	{"samples/multilink.pcap", []string{"roce.rc.retransmission", "smc.failover", "smc.handshake.slow", "smc.lgr.deleted", "smc.lgr.no_redundancy", "smc.link.added_unconfirmed", "smc.link.asymmetric", "smc.link.deleted", "smc.llc.retransmitted"}},
	{"samples/pingpong.pcap", []string{"smc.lgr.deleted", "smc.lgr.no_redundancy"}},
	{"samples/teardown.pcap", []string{"roce.rc.retransmission", "smc.lgr.deleted", "smc.lgr.no_redundancy", "smc.llc.retransmitted"}},
	{"samples/slow-reader.pcap", []string{"smc.cdc.consumer_stall", "smc.cdc.write_blocked", "smc.lgr.deleted", "smc.lgr.no_redundancy"}},
	{"samples/lossy.pcap", []string{"roce.rc.nak", "roce.rc.psn_gap", "roce.rc.retransmission", "smc.cdc.write_blocked", "smc.lgr.deleted", "smc.lgr.no_redundancy"}},
	// silent-link: the server's last TEST_LINK on the healthy link, 950 ms
	// before the capture ended (the client powered off), has no response
	// in it: pending at the end.
	{"samples/silent-link.pcap", []string{"roce.rc.retransmission", "smc.capture.ended_pending", "smc.lgr.deleted", "smc.lgr.no_redundancy", "smc.link.added_unconfirmed", "smc.link.deleted", "smc.llc.retransmitted",
		"smc.llc.test_link_unanswered", "smc.llc.unanswered"}},
	{"testdata/reference/decline-nordma.pcap", []string{"smc.fallback"}},
	{"testdata/reference/erspan.pcap", []string{"roce.capture.duplicate", "roce.rc.retransmission", "smc.lgr.deleted", "smc.lgr.no_redundancy", "smc.llc.retransmitted"}},
	{"testdata/reference/fallback-nosmc.pcap", []string{"smc.fallback"}},
	{"testdata/reference/no-ueid.pcap", []string{"smc.fallback"}},
	{"testdata/reference/pingpong.pcap", []string{"roce.rc.retransmission", "smc.lgr.deleted", "smc.lgr.no_redundancy", "smc.llc.retransmitted"}},
}

// TestExpertCleanCaptures: every capture of samples/ and
// testdata/reference/ shows exactly its findings; one that appears on a
// kernel-made capture without being listed here is a false alarm (or a
// new capture to list).
func TestExpertCleanCaptures(t *testing.T) {
	root := testutil.Root(t)
	listed := map[string]bool{}
	for _, c := range cleanFindings {
		listed[c.file] = true
		t.Run(strings.ReplaceAll(c.file, "/", "_"), func(t *testing.T) {
			all, _ := findingNames(t, filepath.Join(root, c.file))
			if got := names(all); !slices.Equal(got, c.want) {
				t.Errorf("findings %v, want %v", got, c.want)
			}
		})
	}
	for _, p := range append(testutil.Samples(t), testutil.References(t)...) {
		rel, _ := filepath.Rel(root, p)
		if !listed[rel] {
			t.Errorf("%s: not in cleanFindings: list what it shows", rel)
		}
	}
}

// TestLLCRetransmissionIsNotANewRequest: an LLC message sent again on its
// PSN is one message: the link's history has the ADD_LINK request once,
// and the copy's frame says it is a retransmission.
func TestLLCRetransmissionIsNotANewRequest(t *testing.T) {
	path := crafted.ExpertVector(t, "llc-retransmitted").Build(t)
	tr := New(Options{Unshared: true})
	var rec decode.Record
	var copyFinds []expert.ID
	eachFrame(t, path, func(f *capture.Frame) {
		tr.Feed(f)
		if f.Number == 19 { // the copy of frame 18
			rec.Reset()
			tr.AppendFields(f, &rec)
			_, copyFinds = FrameFindings(&rec)
		}
	})
	if !slices.Contains(copyFinds, expert.LLCRetransmitted) || !slices.Contains(copyFinds, expert.RCRetransmission) {
		t.Errorf("the copy carries %v, want smc.llc.retransmitted and roce.rc.retransmission", copyFinds)
	}
	s := tr.Snapshot()
	n := 0
	for _, l := range s.Links {
		for _, h := range l.History {
			if strings.HasPrefix(h.What, "ADD_LINK_V2 req for link 2") {
				n++
			}
		}
	}
	if n != 1 {
		t.Errorf("the ADD_LINK request is %d times in the link's history, want once", n)
	}
}

// TestExpertSeverityFrames: smc,expert's "N frames" of a severity is the
// number of frames that carry a finding of it, each once, as -Y
// 'smc.expert.severity == S' selects them; it summed the findings' counts
// ("Warnings (5 findings, 93 frames)" on multilink.pcap, where 48 frames
// carry one). Issue 28, point 8.
func TestExpertSeverityFrames(t *testing.T) {
	paths := []string{crafted.ExpertVector(t, "llc-unanswered").Build(t)}
	for _, n := range []string{"multilink.pcap", "teardown.pcap", "silent-link.pcap", "long.pcap"} {
		paths = append(paths, filepath.Join(testutil.SamplesDir(t), n))
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			tr := New(Options{Unshared: true})
			var rec decode.Record
			want := map[string]int{}
			eachFrame(t, path, func(f *capture.Frame) {
				tr.Feed(f)
				rec.Reset()
				tr.AppendFields(f, &rec)
				_, ids := FrameFindings(&rec)
				seen := map[expert.Severity]bool{}
				for _, id := range ids {
					seen[id.Severity()] = true
				}
				for s := range seen {
					want[s.String()]++
				}
			})
			s := tr.Snapshot()
			v := s.ExpertView()
			if len(v.Severities) == 0 {
				t.Fatal("no findings")
			}
			for _, g := range v.Severities {
				if g.Frames != want[g.Severity] {
					t.Errorf("%s: %d frames, %d carry one", g.Severity, g.Frames, want[g.Severity])
				}
			}
		})
	}
}

// TestBadICRCDetail: roce.icrc.bad says the ICRC the frame carries and
// the one computed, as the frame's line does, and the one byte that
// explains the difference; its detail was "-" (issue 28, point 8).
func TestBadICRCDetail(t *testing.T) {
	path := crafted.ExpertVector(t, "bad-icrc").Build(t)
	tr := New(Options{Unshared: true})
	eachFrame(t, path, func(f *capture.Frame) { tr.Feed(f) })
	s := tr.Snapshot()
	n := 0
	for _, f := range s.Findings() {
		if f.ID != expert.BadICRC {
			continue
		}
		n++
		// The vector damaged the ICRC's last byte: one byte explains it.
		if f.Detail != "ICRC in the frame 0x5fe819d0, computed 0xa0e819d0: one byte explains it, offset 101 (ICRC), 0x5f in the frame, 0xa0 sent" {
			t.Errorf("detail %q", f.Detail)
		}
	}
	if n == 0 {
		t.Fatal("no roce.icrc.bad")
	}
}

// TestTeardownCopiesNoLossAdvice: the RC copies of a link group's last
// message, sent after its DELETE_LINK of every link to a peer whose QP is
// gone, are not loss: no PFC/ECN advice for them (teardown.pcap, a
// kernel-made capture); a lossy path keeps it (issue 28, point 8).
func TestTeardownCopiesNoLossAdvice(t *testing.T) {
	check := func(name string) map[expert.ID]string {
		tr := New(Options{Unshared: true})
		eachFrame(t, filepath.Join(testutil.SamplesDir(t), name), func(f *capture.Frame) { tr.Feed(f) })
		s := tr.Snapshot()
		out := map[expert.ID]string{}
		for _, f := range s.Findings() {
			if f.ID == expert.RCRetransmission || f.ID == expert.LLCRetransmitted {
				out[f.ID] = f.CheckText()
			}
		}
		return out
	}
	td := check("teardown.pcap")
	if len(td) != 2 {
		t.Fatalf("teardown.pcap retransmission findings: %v", td)
	}
	for id, c := range td {
		if strings.Contains(c, "PFC") || strings.Contains(c, "lost") || !strings.Contains(c, "teardown") {
			t.Errorf("teardown.pcap %s: check %q", id, c)
		}
	}
	if c := check("lossy.pcap")[expert.RCRetransmission]; !strings.Contains(c, "PFC/ECN") {
		t.Errorf("lossy.pcap roce.rc.retransmission: check %q", c)
	}
}

// TestExpertGroupField: smc.expert.group's description does not call
// smcscope's own groups Wireshark's.
func TestExpertGroupField(t *testing.T) {
	d := decode.Def(fExpertGroup)
	if strings.HasPrefix(d.Desc, "Wireshark") || !strings.Contains(d.Desc, "performance, state (smcscope's own)") {
		t.Errorf("smc.expert.group: %q", d.Desc)
	}
}
