package monitor

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// replay reads a whole capture through a Monitor and returns its snapshot.
func replay(t *testing.T, path string) Snapshot {
	t.Helper()
	w, err := OpenWire(path, "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Wire: w, Now: fixedClock()})
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m.Refresh()
}

// truth reads the kernels' facts of a lab sample (its .log, written by
// lab/verify.sh: "truth.KEY=VALUE" lines).
func truth(t *testing.T, sample string) map[string]string {
	t.Helper()
	f, err := os.Open("../samples/" + sample + ".log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "truth."), "="); ok && strings.HasPrefix(sc.Text(), "truth.") {
			out[k] = v
		}
	}
	return out
}

// TestWireFallbackSides: a capture is seen from the client, as the
// client's kernel sees it: its own decline is its local reason (no peer
// diagnosis), the server's decline is PEERDECL with the server's code as
// the peer diagnosis, a SYN-ACK without the option is PEERNOSMC. Each
// side's fallback count is its kernel's SMC_NETLINK_GET_FBACK_STATS. All
// checked against the lab kernels' truth for every fallback sample.
func TestWireFallbackSides(t *testing.T) {
	for _, sample := range []string{"no-ueid", "decline-nordma", "decline-ueid", "fallback-nosmc"} {
		t.Run(sample, func(t *testing.T) {
			want := truth(t, sample)
			s := replay(t, "../samples/"+sample+".pcap")
			if len(s.Conns) != 1 {
				t.Fatalf("%d connections, want 1", len(s.Conns))
			}
			c := s.Conns[0].Details()
			if got := fmt.Sprintf("0x%08x", c.Fallback.Code); got != want["client.conn0.reason"] {
				t.Errorf("local reason %s (%s), the client's kernel says %s", got, c.Fallback.Name, want["client.conn0.reason"])
			}
			if got := fmt.Sprintf("0x%08x", c.PeerDiagnosis.Code); got != want["client.conn0.peer_diag"] {
				t.Errorf("peer diagnosis %s, the client's kernel says %s", got, want["client.conn0.peer_diag"])
			}
			if s.Conns[0].Mode != ModeFallback || c.Fallback.Name == "" {
				t.Errorf("row %+v", s.Conns[0])
			}
			var got, kernels []string
			for _, r := range s.Fallbacks {
				got = append(got, fmt.Sprintf("side=%s,reason=0x%08x,count=%d", r.Side, r.Reason.Code, r.Count))
			}
			for _, side := range []string{"client", "server"} {
				for _, e := range strings.Split(want[side+".fallback_stats"], ";") {
					if e != "" {
						kernels = append(kernels, e)
					}
				}
			}
			sort.Strings(got)
			sort.Strings(kernels)
			if strings.Join(got, " ") != strings.Join(kernels, " ") {
				t.Errorf("fallback reasons %v, the kernels count %v", got, kernels)
			}
			if s.Overview.FallbacksTotal != uint64(len(kernels)) || s.Overview.Ended != 1 {
				t.Errorf("overview %+v", s.Overview)
			}
			var ev bool
			for _, e := range s.Events {
				ev = ev || e.Kind == EventFallback && e.Conn == s.Conns[0].Key
			}
			if !ev {
				t.Errorf("no fallback event: %+v", s.Events)
			}
		})
	}
}

// TestWireFallbackNotCaptured: ipv6.pcap without the client's Decline.
// Both sides fell back (the data says so), for a reason the capture does
// not hold: the overview counts them, each side once, and lists no
// reason for them (no code is made up).
func TestWireFallbackNotCaptured(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/ipv6.pcap")
	const decline = 14 // ipv6.pcap frame 15: the client's CLC Decline
	frames = append(frames[:decline:decline], frames[decline+1:]...)
	s := replay(t, testutil.WriteFrames(t, "no-decline.pcap", lt, frames))
	if len(s.Conns) != 1 || s.Conns[0].Mode != ModeFallback {
		t.Fatalf("connections %+v, want one fallback", s.Conns)
	}
	if s.Overview.FallbacksTotal != 2 || len(s.Fallbacks) != 0 {
		t.Errorf("fallbacks total %d, reasons %+v: want 2 (each side once), no reason", s.Overview.FallbacksTotal, s.Fallbacks)
	}
}

// TestWireFallbackCodeCut: decline-nordma.pcap cut to 80 bytes a frame
// keeps the server's Decline's header, not its code: the client fell
// back with PEERDECL (its kernel's reason, whatever the code), the server
// for a reason the capture does not hold (counted, no reason listed, no
// peer diagnosis made up).
func TestWireFallbackCodeCut(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/decline-nordma.pcap")
	for i := range frames {
		if len(frames[i].Data) > 80 {
			frames[i].Data = frames[i].Data[:80:80]
			frames[i].CI.CaptureLength = 80
		}
	}
	s := replay(t, testutil.WriteFrames(t, "cut.pcap", lt, frames))
	if len(s.Conns) != 1 || s.Conns[0].Mode != ModeFallback {
		t.Fatalf("connections %+v, want one fallback", s.Conns)
	}
	c := s.Conns[0].Details()
	if c.Fallback.Code != uint32(decode.DeclinePeerDecl) || c.PeerDiagnosis.Code != 0 {
		t.Errorf("client reason %#x, peer diagnosis %#x: want PEERDECL and none", c.Fallback.Code, c.PeerDiagnosis.Code)
	}
	if s.Overview.FallbacksTotal != 2 || len(s.Fallbacks) != 1 || s.Fallbacks[0].Side != RoleClient {
		t.Errorf("fallbacks total %d, reasons %+v: want 2, the client's PEERDECL only", s.Overview.FallbacksTotal, s.Fallbacks)
	}
}

// TestWireConnNotes: a wire connection's detail carries its notes as
// smcdump -z smc,conns gives them (rows.Conn.Notes): pingpong.pcap cut to
// 80 bytes a frame, its link known only from its first CDC, says the
// WRITEs before it were not counted; the whole capture has none.
func TestWireConnNotes(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/pingpong.pcap")
	whole := replay(t, testutil.WriteFrames(t, "whole.pcap", lt, frames))
	for i := range frames {
		if len(frames[i].Data) > 80 {
			frames[i].Data = frames[i].Data[:80:80]
			frames[i].CI.CaptureLength = 80
		}
	}
	s := replay(t, testutil.WriteFrames(t, "cut.pcap", lt, frames))
	if len(s.Conns) != 1 || len(whole.Conns) != 1 {
		t.Fatalf("connections %+v, the whole capture %+v: want one", s.Conns, whole.Conns)
	}
	if got := s.Conns[0].Details().Notes; got != "C>S WRITEs before its link was known not counted" {
		t.Errorf("notes %q", got)
	}
	if got := whole.Conns[0].Details().Notes; got != "" {
		t.Errorf("the whole capture: notes %q, want none", got)
	}
}

// TestWireEventTimes: every wire event carries the time of the frame that
// shows it, not the time of the refresh that found it, also when the
// capture is read in several refreshes (the dashboard's replay); the log
// is in time order, and an event is logged once.
func TestWireEventTimes(t *testing.T) {
	frames, _ := testutil.ReadFrames(t, "../samples/multilink.pcap")
	at := map[int]time.Time{}
	for i, f := range frames {
		at[i+1] = f.CI.Timestamp
	}
	once := replay(t, "../samples/multilink.pcap")
	// Three refreshes: after frame 900, 2000, and at the end.
	w, err := OpenWire("../samples/multilink.pcap", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Wire: w, Now: fixedClock()})
	n := 0
	for _, stop := range []int{900, 2000, len(frames)} {
		for n < stop {
			f, err := w.r.Next()
			if err != nil {
				t.Fatal(err)
			}
			w.tr.Feed(f)
			n++
		}
		m.Refresh()
	}
	stepped := m.Refresh()
	for name, s := range map[string]Snapshot{"once": once, "stepped": stepped} {
		if len(s.Events) < 6 {
			t.Fatalf("%s: %d events", name, len(s.Events))
		}
		seen := map[string]bool{}
		for i, e := range s.Events {
			if e.Source != EventFromWire || e.Frame == 0 {
				t.Errorf("%s: event %+v without its frame", name, e)
				continue
			}
			if !e.Time.Equal(at[e.Frame]) {
				t.Errorf("%s: event at frame %d stamped %v, the frame's time is %v", name, e.Frame, e.Time, at[e.Frame])
			}
			if i > 0 && e.Time.Before(s.Events[i-1].Time) {
				t.Errorf("%s: event %d out of time order", name, i)
			}
			k := fmt.Sprint(e.Kind, e.Frame, e.Link, e.Conn, e.Finding) // two findings may share a frame
			if seen[k] {
				t.Errorf("%s: event logged twice: %+v", name, e)
			}
			seen[k] = true
		}
		if len(once.Events) != len(stepped.Events) {
			t.Errorf("%d events read at once, %d in three refreshes", len(once.Events), len(stepped.Events))
		}
	}
}

// TestWireLinkGroup: the capture's link group carries what its CLC and LLC
// said, with the kernel's spelling: the client's ID 0x100 (the client's
// kernel lists 0x100, smcdump's "Client lgr"), the server's as the peer's,
// v2.1, EID, peer OS and host, direct, limits; a link that was added but
// never confirmed is no link (the client's kernel never listed link 3);
// the failed-over link 2 is DELETED with its reason since its DELETE_LINK.
func TestWireLinkGroup(t *testing.T) {
	s := replay(t, "../samples/multilink.pcap")
	if len(s.LinkGroups) != 1 {
		t.Fatalf("%d link groups", len(s.LinkGroups))
	}
	g := s.LinkGroups[0]
	if g.ID != 0x100 || g.PeerID != 0x300 || g.Role != RoleClient || g.Version != 2 || g.Release != 1 || g.EID != "SMC-LAB-UEID" ||
		g.PeerOS != "Linux" || g.PeerHost != "(none)" || !g.Direct || g.MaxLinks != 2 || g.MaxConns != 255 || !g.Deleted {
		t.Errorf("link group %+v", g)
	}
	if b, _ := g.ID.MarshalText(); string(b) != "0x100" {
		t.Errorf("ID in JSON %s, want 0x100 as everywhere", b)
	}
	var ids []uint8
	for _, l := range g.Links {
		ids = append(ids, l.ID)
	}
	if fmt.Sprint(ids) != "[1 2]" {
		t.Fatalf("links %v, want 1 and 2 (link 3 was never confirmed)", ids)
	}
	l2 := g.Links[1]
	if l2.State != LinkDeleted || l2.DeleteReason.Name != "lost-path" || l2.UID != 0x102 || l2.PeerUID != 0x302 || l2.Since.IsZero() {
		t.Errorf("link 2 %+v", l2)
	}
	if g.Links[0].Since.After(l2.Since) == false {
		t.Errorf("link 1 lost at %v, before link 2 (%v): it lived until the group ended", g.Links[0].Since, l2.Since)
	}
	if s.Overview.LinkGroups != 0 || s.Overview.Links != 0 || s.Overview.Ended != 3 || s.Overview.Conns != 0 {
		t.Errorf("an ended capture counts nothing as now: %+v", s.Overview)
	}
	for _, c := range s.Conns {
		if c.Link().LGRID != 0x100 || c.Link().LGRKey != g.Key || c.State != StateClosed || c.Link().GID == "" {
			t.Errorf("connection %+v", c)
		}
	}
	if len(g.History) == 0 || g.History[0].Frame == 0 {
		t.Errorf("history %+v", g.History)
	}
}

// TestWireLiveCounts: in the first 1000 frames of multilink.pcap (after the
// failover, before the end) the group is live with link 1 active, link 2
// lost and link 3 being added (ACTIVATING): counted now, not redundant,
// the two connections of the time open.
func TestWireLiveCounts(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, "../samples/multilink.pcap")
	s := replay(t, testutil.WriteFrames(t, "first1000.pcap", lt, frames[:1000]))
	o := s.Overview
	if o.LinkGroups != 1 || o.Links != 2 || o.LinksActive != 1 || o.LinksLost != 1 || o.NoRedundancy != 1 || o.SMCR != 2 {
		t.Errorf("overview %+v", o)
	}
}

// TestJSONLists: every list of a snapshot is a JSON list, empty when
// there is nothing (jq '.devices[]' works on a capture replay).
func TestJSONLists(t *testing.T) {
	s := replay(t, "../samples/no-ueid.pcap")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"devices":[]`, `"settings":[]`, `"link_groups":[]`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON lacks %s", k)
		}
	}
	if strings.Contains(string(b), "null") || strings.Contains(string(b), `"peer_diagnosis":{}`) {
		t.Errorf("JSON has null or an empty reason: %s", b)
	}
}

// TestWireUnfollowedEnds: multilink.pcap without what a damaged capture
// loses (every CONFIRM_LINK response and every close CDC: frames the
// capture missed or could not follow). Its links still carried the
// connections' data, so both are listed as the kernels listed them; and
// its connections ended with their link group (DELETE_LINK of every link
// kills them), so none is ACTIVE, and no link counts one as open.
func TestWireUnfollowedEnds(t *testing.T) {
	frames, lt, err := mutate.ReadFile("../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open("../samples/multilink.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var kept []mutate.Frame
	dropped := [2]int{}
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case f.LLC != nil && f.LLC.Type.Base() == decode.LLCConfirmLink && f.LLC.Response:
			dropped[0]++
		case f.CDC != nil && f.CDC.ConnFlags&(decode.CDCPeerConnClosed|decode.CDCPeerConnAbort) != 0:
			dropped[1]++
		default:
			kept = append(kept, frames[f.Number-1])
		}
	}
	if dropped[0] == 0 || dropped[1] == 0 {
		t.Fatalf("dropped %d CONFIRM_LINK responses and %d close CDCs: the sample has both", dropped[0], dropped[1])
	}
	path := filepath.Join(t.TempDir(), "damaged.pcap")
	if err := mutate.WriteFile(path, lt, kept); err != nil {
		t.Fatal(err)
	}
	s := replay(t, path)
	if len(s.LinkGroups) != 1 || !s.LinkGroups[0].Deleted {
		t.Fatalf("link groups %+v, want the one, deleted", s.LinkGroups)
	}
	var ids []uint8
	for _, l := range s.LinkGroups[0].Links {
		ids = append(ids, l.ID)
		if l.Conns != 0 {
			t.Errorf("link %d counts %d open connections after its group ended", l.ID, l.Conns)
		}
	}
	if fmt.Sprint(ids) != "[1 2]" {
		t.Errorf("links %v, want 1 and 2: both carried CDCs", ids)
	}
	for _, c := range s.Conns {
		if c.State != StateClosed {
			t.Errorf("connection %s %s, want CLOSED: its link group ended", c.Key, c.State)
		}
	}
}
