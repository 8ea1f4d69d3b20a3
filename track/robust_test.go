package track

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// feedBytes runs a (possibly damaged) pcap image through capture and the
// tracker, including views and fields: nothing may panic, and the state
// stays consistent (checkState).
func feedBytes(t testing.TB, data []byte) {
	r, err := capture.NewFileReader("fuzz.pcap", bytes.NewReader(data))
	if err != nil {
		return
	}
	tr := New(Options{Timeline: "all", MaxConns: 8, IdleTimeout: 1})
	var rec decode.Record
	fed := 0
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		tr.Feed(f)
		fed++
		rec.Reset()
		tr.AppendFields(f, &rec)
	}
	s := tr.Snapshot()
	checkState(t, &s, fed)
	for _, v := range []any{s.Conns, s.Links, s.LinkGroups, s.Totals()} {
		if _, err := json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range s.Conns {
		if _, err := s.FindConn(strconv.Itoa(c.ID)); err != nil {
			t.Fatalf("timeline of %d: %v", c.ID, err)
		}
	}
}

// TestCorruptedCaptures flips bytes of the real captures at random places
// (fixed seed): decoders reject what they must, the tracker copes with the
// rest (impossible cursors, unknown tokens, bogus LLC) without panicking.
func TestCorruptedCaptures(t *testing.T) {
	for _, name := range []string{"pingpong", "decline-nordma", "no-ueid"} {
		orig, err := os.ReadFile(refDir + name + ".pcap")
		if err != nil {
			t.Fatal(err)
		}
		// Frame bytes only: a damaged record header ends the file early and
		// would test the reader instead of the tracker.
		var spans [][2]int
		for off := 24; off+16 <= len(orig); {
			n := int(binary.LittleEndian.Uint32(orig[off+8:]))
			spans = append(spans, [2]int{off + 16, off + 16 + n})
			off += 16 + n
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(orig))))
		rounds := 20
		if testing.Short() {
			rounds = 5
		}
		for range rounds {
			data := bytes.Clone(orig)
			for range 1 + rng.IntN(200) {
				sp := spans[rng.IntN(len(spans))]
				i := sp[0] + 14 + rng.IntN(sp[1]-sp[0]-14) // past Ethernet, so frames stay IP
				data[i] ^= byte(1 + rng.IntN(255))
			}
			feedBytes(t, data)
		}
	}
}

func FuzzTrackCapture(f *testing.F) {
	for _, name := range []string{"decline-nordma", "no-ueid", "fallback-nosmc"} {
		data, err := os.ReadFile(refDir + name + ".pcap")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// A handshake the snap length cut (the CLC reassembly's holes).
	frames, lt := testutil.ReadFrames(f, refDir+"no-ueid.pcap")
	for i := range frames {
		if d := frames[i].Data; len(d) > 100 {
			frames[i].Data, frames[i].CI.CaptureLength = d[:100:100], 100
		}
	}
	cut, err := os.ReadFile(testutil.WriteFrames(f, "cut.pcap", lt, frames))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cut)
	// Carried by a mirror session that numbers its frames (the mirror
	// sessions' gaps, strays and copies).
	carried := make([]testutil.Packet, 0, len(frames))
	for i, p := range frames {
		p.Data = mutate.Carry("erspan2", p.Data, uint32(i), false)
		p.CI.CaptureLength, p.CI.Length = len(p.Data), len(p.Data)
		carried = append(carried, p)
	}
	erspan, err := os.ReadFile(testutil.WriteFrames(f, "erspan.pcap", lt, carried))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(erspan)
	f.Fuzz(func(t *testing.T, data []byte) { feedBytes(t, data) })
}

// TestOddFrames: frames without IP (ARP, LLDP), a nil frame, and fields for
// a frame that was never fed do nothing.
func TestOddFrames(t *testing.T) {
	tr := New(Options{})
	tr.Feed(nil)
	var rec decode.Record
	tr.AppendFields(nil, &rec)
	eachFrame(t, refDir+"pingpong.pcap", func(f *capture.Frame) {
		if f.IPv4 == nil && f.IPv6 == nil {
			tr.Feed(f)
		}
	})
	s := tr.Snapshot()
	if s.Stats.Frames == 0 || s.Stats.Other != s.Stats.Frames || len(s.Conns)+len(s.Links) != 0 || len(rec.IDs) != 0 {
		t.Errorf("non-IP frames: %+v, %d conns, %d links", s.Stats, len(s.Conns), len(s.Links))
	}
}

// checkState asserts what must hold of any tracker state, whatever the
// input: every frame counted once, the attribution counts within the
// frame count, every reference between connections, links and link
// groups pointing at something the snapshot has, and outcomes and cursor
// counts that are possible.
func checkState(t testing.TB, s *Snapshot, fed int) {
	t.Helper()
	st := &s.Stats
	if st.Frames != fed {
		t.Errorf("stats count %d frames, %d were fed", st.Frames, fed)
	}
	if n := st.ConnAttached + st.LinkOnly + st.Unattached + st.TCPUntracked + st.Other + st.CaptureDups; n > st.Frames {
		t.Errorf("attribution counts add up to %d of %d frames: %+v", n, st.Frames, *st)
	}
	if st.LateAttached > st.Unattached+st.ConnAttached || st.LLC+st.CDC > st.RoCE {
		t.Errorf("impossible counts: %+v", *st)
	}
	links := map[int]*Link{}
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	groups := map[int]*LinkGroup{}
	for i := range s.LinkGroups {
		groups[s.LinkGroups[i].ID] = &s.LinkGroups[i]
	}
	for _, c := range s.Conns {
		if c.Outcome > OutcomeFailed {
			t.Errorf("conn %d: outcome %d", c.ID, c.Outcome)
		}
		if c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseNone {
			t.Errorf("conn %d: fallback without a cause", c.ID)
		}
		for d := range c.Flow {
			if f := &c.Flow[d]; f.CDCs < 0 || f.Writes < 0 || f.WritesOutside > f.Writes {
				t.Errorf("conn %d %v: flow %+v", c.ID, Dir(d), *f)
			}
		}
	}
	for _, l := range s.Links {
		if l.LGR != 0 && groups[l.LGR] == nil && !l.Inferred {
			t.Errorf("link %d: link group %d is not in the snapshot", l.ID, l.LGR)
		}
	}
	for _, g := range s.LinkGroups {
		for _, id := range g.Links {
			if links[id] == nil && st.EvictedLinks == 0 {
				t.Errorf("link group %d: link %d is not in the snapshot", g.ID, id)
			}
		}
	}
}

// TestCutCaptures cuts every sample at many points (a capture stopped
// early): the tracker state stays consistent, and every connection that
// closed before the cut has the outcome and CDC counts it has in the whole
// capture.
func TestCutCaptures(t *testing.T) {
	compared := 0
	for _, name := range []string{"pingpong", "multiconn", "multilink", "decline-nordma", "teardown"} {
		path := "../samples/" + name + ".pcap"
		frames := readRawFrames(t, path)
		full := replayFrames(t, frames)
		closedAt := map[int]int{} // conn ID -> last frame
		for _, c := range full.Conns {
			if c.Closed() {
				closedAt[c.ID] = c.LastFrame
			}
		}
		step := max(1, len(frames)/25)
		for cut := 1; cut < len(frames); cut += step {
			s := replayFrames(t, frames[:cut])
			checkState(t, &s, cut)
			for _, c := range s.Conns {
				last, ok := closedAt[c.ID]
				if !ok || last > cut {
					continue
				}
				w, _ := full.Conn(c.ID)
				compared++
				if c.Outcome != w.Outcome || c.Flow[0].CDCs != w.Flow[0].CDCs || c.Flow[1].CDCs != w.Flow[1].CDCs {
					t.Errorf("%s cut at %d: conn %d (closed at %d) is %v with %d/%d CDCs, whole capture %v %d/%d",
						name, cut, c.ID, last, c.Outcome, c.Flow[0].CDCs, c.Flow[1].CDCs, w.Outcome, w.Flow[0].CDCs, w.Flow[1].CDCs)
				}
			}
		}
	}
	if compared < 10 {
		t.Errorf("only %d closed connections compared across the cuts", compared)
	}
}

// replayFrames runs raw frames through the frame reader and a tracker.
func replayFrames(t testing.TB, frames []rawFrame) Snapshot {
	t.Helper()
	r, err := capture.NewReader("cut", mutate.NewSource(frames), layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	tr := New(Options{})
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		tr.Feed(f)
	}
	return tr.Snapshot()
}

// TestCopyAfterDamagedRecord: a capture that holds every frame twice (a
// copy the tracker counts and does not follow) and whose record header
// before one frame is damaged has one frame after damage: not the copies
// that follow it too, nor a copy after a frame the fast path took.
func TestCopyAfterDamagedRecord(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, refDir+"pingpong.pcap")
	var twice []rawFrame
	for _, f := range frames {
		twice = append(twice, f, f)
	}
	img, err := mutate.Encode(lt, twice)
	if err != nil {
		t.Fatal(err)
	}
	// The record header of frame 41 (the copy of the 21st frame) claims
	// more than any record: the reader skips to the next record.
	off := 24
	for range 40 {
		off += 16 + int(binary.LittleEndian.Uint32(img[off+8:]))
	}
	binary.LittleEndian.PutUint32(img[off+8:], 0x7fffff)
	r, err := capture.NewFileReader("twice.pcap", bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	tr := New(Options{Unshared: true})
	n := 0
	eachRead(t, r, func(f *capture.Frame) {
		n++
		if !tr.FeedFast(f) {
			tr.Feed(f)
		}
	})
	tr.EndCapture(time.Time{})
	var damaged []Finding
	s := tr.Snapshot()
	for _, f := range s.Findings() {
		if f.ID == expert.CaptureDamaged {
			damaged = append(damaged, f)
		}
	}
	if len(damaged) != 1 || damaged[0].Count != 1 {
		t.Errorf("%d frames read: smc.capture.damaged %+v, want one frame", n, damaged)
	}
}
