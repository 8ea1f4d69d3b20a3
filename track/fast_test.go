package track

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// twin feeds every frame to two trackers: gen by the general path alone
// (fill and feed, the reference), fast by Feed, which tries fastRoCE
// first. After every frame their tracker fields and counters must agree,
// and every so often (and at the end) their whole state.
type twin struct {
	gen, fast  *Tracker
	recG, recF decode.Record
	fed        int
	fastFrames int // frames fastRoCE took
	every      int // whole state compared every this many frames
}

// twinOptions are the tracker settings the twins run with: the default,
// caps small enough that sweeps and folds happen between fast frames
// (smcdump's split of ended and open connections, MaxClosed, included),
// and a timeline (the fast path steps aside while one is recorded).
var twinOptions = []Options{
	{},
	{MaxConns: 4, IdleTimeout: time.Millisecond},
	{MaxConns: 8, MaxClosed: 2},
	{Timeline: "1"},
}

func newTwin(opts Options, every int) *twin {
	opts.Unshared = true
	return &twin{gen: New(opts), fast: New(opts), every: every}
}

func (w *twin) feed(t testing.TB, f *capture.Frame) {
	t.Helper()
	// The general path as Feed takes it, without fastRoCE.
	w.gen.mirrorStep(f)
	if w.gen.captureDup(f) {
		w.gen.feedDup(f)
	} else {
		w.gen.feedFrame(f)
	}
	w.fast.Feed(f)
	w.fed++
	// fill numbers the input with the frame; fastRoCE does not fill it.
	if w.fast.in.number != f.Number {
		w.fastFrames++
	}
	w.recG.Reset()
	w.recF.Reset()
	w.gen.AppendFields(f, &w.recG)
	w.fast.AppendFields(f, &w.recF)
	if !slices.Equal(w.recG.IDs, w.recF.IDs) || !reflect.DeepEqual(w.recG.Vals, w.recF.Vals) {
		t.Fatalf("frame %d: tracker fields differ:\n general %s\n fast    %s", f.Number, recordText(&w.recG), recordText(&w.recF))
	}
	if w.gen.stats != w.fast.stats {
		t.Fatalf("frame %d: counters differ:\n general %+v\n fast    %+v", f.Number, w.gen.stats, w.fast.stats)
	}
	if w.every > 0 && w.fed%w.every == 0 {
		w.same(t, fmt.Sprintf("frame %d", f.Number))
	}
}

func recordText(r *decode.Record) string {
	var b []byte
	for i, id := range r.IDs {
		d := decode.Def(id)
		b = append(b, d.Name...)
		b = append(b, '=')
		b = r.Vals[i].Append(b, d.Kind)
		b = append(b, ' ')
	}
	return string(b)
}

// scratch is what a tracker keeps between frames only to go faster, and
// what may differ between the twins: the input fill last wrote, the hot
// link, the wire keys cached (the fast path finds a key through the hot
// link that the general path looks up, and caches, again), and the last
// frame's attribution, which the fast path records in fastCur and feed in
// cur (feed compares what AppendFields makes of them after every frame),
// and the newest frame feed handled (the snapshot's End adds the links'
// newest frames, where the fast path keeps its own: the views compare End).
type scratch struct {
	in      input
	hot     hotLink
	qpCache [4]qpCacheEntry
	qpNext  int
	cur     attribution
	fastCur fastAttribution
	lastNS  int64
}

func takeScratch(t *Tracker) scratch {
	s := scratch{t.in, t.hot, t.qpCache, t.qpNext, t.cur, t.fastCur, t.lastNS}
	t.in, t.hot, t.qpCache, t.qpNext = input{}, hotLink{}, [4]qpCacheEntry{}, 0
	t.cur, t.fastCur, t.lastNS = attribution{}, fastAttribution{}, 0
	return s
}

func (s scratch) put(t *Tracker) {
	t.in, t.hot, t.qpCache, t.qpNext = s.in, s.hot, s.qpCache, s.qpNext
	t.cur, t.fastCur, t.lastNS = s.cur, s.fastCur, s.lastNS
}

// same compares the twins' whole state, everything but their scratch, and
// the views made from it.
func (w *twin) same(t testing.TB, when string) {
	t.Helper()
	sg, sf := takeScratch(w.gen), takeScratch(w.fast)
	// Not reflect.DeepEqual: it takes map keys that hold pointers
	// (rkeyKey) for different keys.
	diff := firstDiff(reflect.ValueOf(w.gen).Elem(), reflect.ValueOf(w.fast).Elem(), "Tracker", map[[2]uintptr]bool{})
	sg.put(w.gen)
	sf.put(w.fast)
	g, f := w.gen.Snapshot(), w.fast.Snapshot()
	if vg, vf := viewsJSON(t, &g), viewsJSON(t, &f); vg != vf {
		t.Fatalf("%s: views differ:\n general %s\n fast    %s", when, vg, vf)
	}
	if diff != "" {
		t.Fatalf("%s: the trackers' states differ: %s", when, diff)
	}
}

// firstDiff names the first place where a and b, of the same type,
// differ (reflect.DeepEqual says only whether they do).
func firstDiff(a, b reflect.Value, path string, seen map[[2]uintptr]bool) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": one is nil"
			}
			return ""
		}
		k := [2]uintptr{a.Pointer(), b.Pointer()}
		if seen[k] {
			return ""
		}
		seen[k] = true
		return firstDiff(a.Elem(), b.Elem(), path, seen)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := firstDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, seen); d != "" {
				return d
			}
		}
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d, %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := firstDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), seen); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: %d entries, %d", path, a.Len(), b.Len())
		}
		var byText map[string]reflect.Value
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				// A key that holds a pointer (rkeyKey's link) is the
				// other tracker's object: find the key that spells the
				// same.
				if byText == nil {
					byText = map[string]reflect.Value{}
					for _, bk := range b.MapKeys() {
						byText[keyText(bk)] = bk
					}
				}
				if bk, ok := byText[keyText(k)]; ok {
					bv = b.MapIndex(bk)
				}
			}
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if d := firstDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k), seen); d != "" {
				return d
			}
		}
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path + ": one is nil"
			}
			return ""
		}
		return firstDiff(a.Elem(), b.Elem(), path, seen)
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return fmt.Sprintf("%s: %v, %v", path, a.Bool(), b.Bool())
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return fmt.Sprintf("%s: %d, %d", path, a.Int(), b.Int())
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if a.Uint() != b.Uint() {
			return fmt.Sprintf("%s: %d, %d", path, a.Uint(), b.Uint())
		}
	case reflect.String:
		if a.String() != b.String() {
			return fmt.Sprintf("%s: %q, %q", path, a.String(), b.String())
		}
	case reflect.Float32, reflect.Float64:
		if a.Float() != b.Float() {
			return fmt.Sprintf("%s: %v, %v", path, a.Float(), b.Float())
		}
	}
	return ""
}

// keyText spells a map key with its pointers replaced by the ID of what
// they point to (Link.ID): the twins' objects differ, their IDs do not.
func keyText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		if id := v.Elem().FieldByName("ID"); id.IsValid() {
			return fmt.Sprintf("#%d", id.Int())
		}
		return keyText(v.Elem())
	case reflect.Struct:
		s := "{"
		for i := range v.NumField() {
			s += keyText(v.Field(i)) + " "
		}
		return s + "}"
	}
	return fmt.Sprint(v)
}

// viewsJSON is every view of a snapshot, timelines included, as JSON.
func viewsJSON(t testing.TB, s *Snapshot) string {
	t.Helper()
	// The typed snapshot whole: every view (package rows) is made from it.
	views := []any{s.Stats, s.Conns, s.Links, s.LinkGroups, s.Totals(), fmt.Sprint(s.folded.reasons)}
	for _, c := range s.Conns {
		if _, err := s.FindConn(strconv.Itoa(c.ID)); err != nil {
			t.Fatalf("timeline of %d: %v", c.ID, err)
		}
	}
	b, err := json.Marshal(views)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runTwin decodes frames once and feeds them to twins of every option set;
// it returns how many frames the fast path took with the default options.
func runTwin(t testing.TB, name string, lt layers.LinkType, frames []rawFrame, every int) int {
	t.Helper()
	fast := 0
	for i, opts := range twinOptions {
		w := newTwin(opts, every)
		eachRaw(t, name, lt, frames, func(f *capture.Frame) { w.feed(t, f) })
		w.same(t, "end")
		if i == 0 {
			fast = w.fastFrames
		}
		if opts.Timeline != "" && w.fastFrames != 0 {
			t.Errorf("timeline %q: the fast path took %d frames, want none", opts.Timeline, w.fastFrames)
		}
	}
	return fast
}

// TestFastPathSame holds fastRoCE to the general path on every capture of
// the repository: the same tracker fields for every frame, the same
// counters, the same state and views.
func TestFastPathSame(t *testing.T) {
	for _, p := range testutil.AllCaptures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			frames, lt := testutil.ReadFrames(t, p)
			fast := runTwin(t, p, lt, frames, 509)
			if filepath.Base(p) == "pingpong.pcap" && fast < len(frames)/2 {
				t.Errorf("the fast path took %d of %d frames", fast, len(frames))
			}
		})
	}
}

// damage returns a copy of frames damaged in ways the fast path must step
// aside for: bytes flipped (most often in the BTH and what follows it),
// frames lost, repeated (a retransmission) or swapped with the next.
func damage(rng *rand.Rand, frames []rawFrame) []rawFrame {
	out := make([]rawFrame, len(frames))
	for i, f := range frames {
		out[i] = rawFrame{CI: f.CI, Data: bytes.Clone(f.Data)}
	}
	for range 1 + rng.IntN(20) {
		if len(out) < 2 {
			break
		}
		i := rng.IntN(len(out) - 1)
		switch op := rng.IntN(6); op {
		case 0, 1, 2:
			d := out[i].Data
			// 42: Ethernet, IPv4 and UDP, where a RoCEv2 BTH starts.
			lo := 14
			if op > 0 && len(d) > 42 {
				lo = 42
			}
			if len(d) > lo {
				d[lo+rng.IntN(len(d)-lo)] ^= byte(1 + rng.IntN(255))
			}
		case 3:
			out = append(out[:i], out[i+1:]...)
		case 4:
			out = append(out[:i+1], out[i:]...)
			out[i+1] = rawFrame{CI: out[i].CI, Data: bytes.Clone(out[i].Data)}
		case 5:
			out[i].Data, out[i+1].Data = out[i+1].Data, out[i].Data
		}
	}
	return out
}

// TestFastPathSameMutated is TestFastPathSame on damaged copies of the
// SMC-R captures (fixed seeds).
func TestFastPathSameMutated(t *testing.T) {
	paths := append(testutil.Samples(t), testutil.References(t)...)
	rounds := 12
	if testing.Short() {
		rounds = 3
	}
	for _, p := range paths {
		frames, lt := testutil.ReadFrames(t, p)
		rng := rand.New(rand.NewPCG(7, uint64(len(frames))))
		for i := range rounds {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(p), i), func(t *testing.T) {
				runTwin(t, p, lt, damage(rng, frames), 0)
			})
		}
	}
}

// FuzzFastPath holds the fast path to the general one on any pcap file.
func FuzzFastPath(f *testing.F) {
	for _, name := range []string{"pingpong", "decline-nordma"} {
		data, err := os.ReadFile(refDir + name + ".pcap")
		if err != nil {
			f.Fatal(err)
		}
		// The handshake, link setup and first data of pingpong: the
		// mutator is slow on the whole 430 KiB.
		f.Add(data[:min(len(data), 48<<10)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := capture.NewFileReader("fuzz.pcap", bytes.NewReader(data))
		if err != nil {
			return
		}
		w := newTwin(Options{MaxConns: 8}, 0)
		for {
			fr, err := r.Next()
			if err != nil {
				break
			}
			w.feed(t, fr)
		}
		w.same(t, "end")
	})
}

// TestHotLinkDir: the hot link tells a frame's direction by its source
// address and DestQP, so that the two directions of a link within one host
// (the same addresses both ways, QPs apart) are told apart too.
func TestHotLinkDir(t *testing.T) {
	const a, b = 0x0100000a, 0x0200000a // 10.0.0.1, 10.0.0.2 as hotLink keeps them
	for _, c := range []struct {
		name     string
		src, dst [2]uint32
		qpn      [2]uint32
	}{
		{"two hosts", [2]uint32{a, b}, [2]uint32{b, a}, [2]uint32{0x11, 0x11}},
		{"one host", [2]uint32{a, a}, [2]uint32{a, a}, [2]uint32{0x11, 0x12}},
	} {
		var h hotLink
		for d := range Dir(2) {
			h.src[d], h.dst[d], h.qpn[d] = c.src[d], c.dst[d], c.qpn[d]
		}
		for d := range Dir(2) {
			if got := h.dir(c.src[d], c.qpn[d]); got != d {
				t.Errorf("%s: a frame of direction %d taken for %d", c.name, d, got)
			}
		}
	}
}
