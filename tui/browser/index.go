// Package browser is smcdump -I: an SMC-aware capture browser. A
// background pass builds an index (per frame its record offset, its
// connection and link from the tracker, and flags); the packet list is
// virtual, so only the rows on screen are decoded, from their offsets,
// with their connection's handshake frames replayed first so CLC
// reassembly sees the SYNs it needs.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/track"
)

// entry is one frame of the index: 16 bytes, whatever the frame's size.
type entry struct {
	off   int64 // record offset in a classic pcap; -1 when frames are kept in raw
	conn  int32 // tracker connection ID, 0 none
	link  int16 // tracker link ID, 0 none
	flags uint8
	sev   expert.Severity // of the frame's worst expert finding, 0 none
}

// flagRelevant marks an SMC-relevant frame (smcdump's default selection).
const flagRelevant uint8 = 1

// maxContext bounds the frames kept per connection for replaying its
// handshake: SYN, SYN-ACK and the CLC segments come first.
const maxContext = 16

// Index is what the background pass learned about a capture.
type Index struct {
	path   string
	live   bool   // frames arrive from an interface
	limit  int    // -c: index only the first limit frames (0: all)
	header []byte // pcap global header, for reading single records back
	lt     layers.LinkType
	// digits is how many decimals of a frame's time the capture resolves
	// (capture.Frame.TimeDigits of its first frame), for the frames read
	// back: frame.time_epoch then shows what the file holds.
	digits uint8

	mu   sync.RWMutex
	ents []entry
	raw  [][]byte // frames when the file is not a classic pcap (pcapng, gzip)
	cis  []gopacket.CaptureInfo
	ctx  map[int32][]int32 // connection -> its first TCP frames
	// byFact maps a frame the first pass decoded as SMC by fact (its
	// queue pair known, the classifier not taking it) to the frame that
	// taught its queue pair; see qpTeachers.
	byFact map[int32]int32
	base   time.Time
	done   bool
	err    error
	snap   *track.Snapshot
	follow chan struct{} // closed and replaced when frames are appended
}

var (
	fConnID = lookup("smc.conn.id")
	fLinkID = lookup("smc.link.id")
)

func lookup(name string) decode.FieldID {
	d, ok := decode.LookupField(name)
	if !ok {
		panic("browser: no field " + name)
	}
	return d.ID
}

// Open starts indexing path in the background; the index fills while the
// user looks at the first frames.
func Open(ctx context.Context, path string) (*Index, error) { return OpenLimit(ctx, path, 0) }

// OpenLimit is Open for the first limit frames of the file (smcdump -c);
// 0 is every frame.
func OpenLimit(ctx context.Context, path string, limit int) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, 24)
	n, _ := io.ReadFull(f, hdr)
	f.Close()
	x := &Index{path: path, limit: limit, ctx: map[int32][]int32{}, follow: make(chan struct{})}
	if n == 24 && isPcapMagic(hdr) {
		x.header = hdr
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	r.SetICRCCheck(false) // the index shows no ICRC; rows on screen check it when decoded
	x.lt = r.LinkType()
	go x.build(ctx, r)
	return x, nil
}

// OpenLive indexes frames as they arrive on iface (kept in memory), with
// a capture filter and snap length as smcdump -i takes them, until limit
// frames (0: until the context ends).
func OpenLive(ctx context.Context, iface, bpf string, snaplen, limit int) (*Index, error) {
	r, err := capture.OpenLive(iface, bpf, snaplen)
	if err != nil {
		return nil, err
	}
	return openLive(ctx, iface, r, limit), nil
}

// openLive indexes a reader whose frames arrive over time.
func openLive(ctx context.Context, name string, r *capture.Reader, limit int) *Index {
	x := &Index{path: name, live: true, limit: limit, lt: r.LinkType(), ctx: map[int32][]int32{}, follow: make(chan struct{})}
	go x.build(ctx, r)
	go func() { <-ctx.Done(); r.Close() }()
	return x
}

func isPcapMagic(h []byte) bool {
	switch {
	case bytes.Equal(h[:4], []byte{0xd4, 0xc3, 0xb2, 0xa1}), bytes.Equal(h[:4], []byte{0xa1, 0xb2, 0xc3, 0xd4}),
		bytes.Equal(h[:4], []byte{0x4d, 0x3c, 0xb2, 0xa1}), bytes.Equal(h[:4], []byte{0xa1, 0xb2, 0x3c, 0x4d}):
		return true
	}
	return false
}

// build is the background pass: capture, decode, track, one index entry
// per frame.
func (x *Index) build(ctx context.Context, r *capture.Reader) {
	defer r.Close()
	tr := track.New(track.Options{})
	var rec decode.Record
	var qps qpTeachers
	batch := 0
	for ctx.Err() == nil {
		f, err := r.Next()
		if err == nil && x.limit > 0 && f.Number > x.limit {
			err = io.EOF
		}
		if err != nil {
			x.mu.Lock()
			if !errors.Is(err, io.EOF) {
				x.err = err
			}
			x.done = true
			s := tr.Snapshot()
			x.snap = &s
			x.markFindings(&s)
			x.notify()
			x.mu.Unlock()
			return
		}
		tr.Feed(f)
		rec.Reset()
		tr.AppendFields(f, &rec)
		e := entry{off: r.RecordOffset()}
		if v, ok := rec.First(fConnID); ok {
			e.conn = int32(v.U)
		}
		if v, ok := rec.First(fLinkID); ok {
			e.link = int16(v.U)
		}
		if f.SMCRelevant() {
			e.flags |= flagRelevant
		}
		e.sev, _ = track.FrameFindings(&rec)
		x.mu.Lock()
		if len(x.ents) == 0 {
			x.base, x.digits = f.CI.Timestamp, f.TimeDigits()
		}
		if x.header == nil || e.off < 0 {
			e.off = -1
			x.raw = append(x.raw, bytes.Clone(f.Data))
			x.cis = append(x.cis, f.CI)
		}
		x.ents = append(x.ents, e)
		n := int32(len(x.ents))
		if t := qps.learn(f, n); t != 0 {
			if x.byFact == nil {
				x.byFact = map[int32]int32{}
			}
			x.byFact[n] = t
		}
		if e.conn != 0 && f.TCP != nil {
			if c := x.ctx[e.conn]; len(c) < maxContext {
				x.ctx[e.conn] = append(c, n)
			}
		}
		batch++
		if batch == 4096 {
			batch = 0
			x.notify()
			s := tr.Snapshot()
			x.snap = &s
		}
		x.mu.Unlock()
	}
}

// markFindings gives the frames the snapshot's findings name (the first
// and last of each) their severity: findings decided after their frames
// went by (a request that was never answered) carry none of their own.
// Callers hold mu.
func (x *Index) markFindings(s *track.Snapshot) {
	for _, f := range s.Findings() {
		for _, n := range [2]int{f.First, f.Last} {
			if n >= 1 && n <= len(x.ents) {
				x.ents[n-1].sev = max(x.ents[n-1].sev, f.Severity())
			}
		}
	}
}

// Severity is the severity of frame n's worst expert finding, 0 for none.
func (x *Index) Severity(n int) expert.Severity {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n < 1 || n > len(x.ents) {
		return expert.SeverityNone
	}
	return x.ents[n-1].sev
}

// notify wakes whoever waits for new frames (the live list). Callers hold mu.
func (x *Index) notify() {
	close(x.follow)
	x.follow = make(chan struct{})
}

// Limit is the -c limit on the frames indexed, 0 for none.
func (x *Index) Limit() int { return x.limit }

// Progress returns the frames indexed so far, whether the pass is done and
// the error that ended it.
func (x *Index) Progress() (n int, done bool, err error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.ents), x.done, x.err
}

// Changed returns a channel closed when frames are appended.
func (x *Index) Changed() <-chan struct{} {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.follow
}

// Snapshot is the tracker's state at the end of the pass (or of its last
// batch while it runs).
func (x *Index) Snapshot() *track.Snapshot {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.snap
}

// Conn returns the connection of frame n (1-based), 0 for none.
func (x *Index) Conn(n int) (conn, link int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n < 1 || n > len(x.ents) {
		return 0, 0
	}
	e := x.ents[n-1]
	return int(e.conn), int(e.link)
}

// Relevant lists the SMC-relevant frames (smcdump's default selection).
func (x *Index) Relevant() []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []int32
	for i, e := range x.ents {
		if e.flags&flagRelevant != 0 {
			out = append(out, int32(i+1))
		}
	}
	return out
}

// All lists every frame indexed so far.
func (x *Index) All() []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]int32, len(x.ents))
	for i := range out {
		out[i] = int32(i + 1)
	}
	return out
}

// Follow lists the frames of connection conn: its TCP handshake and CLC,
// its CDCs and RDMA WRITEs, and the LLC messages of its links (the frames
// the tracker attributed to the connection or, for LLC, to one of its
// links).
func (x *Index) Follow(conn int) []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	links := map[int16]bool{}
	for _, e := range x.ents {
		if int(e.conn) == conn && e.link != 0 {
			links[e.link] = true
		}
	}
	var out []int32
	for i, e := range x.ents {
		if int(e.conn) == conn || (e.conn == 0 && e.link != 0 && links[e.link]) {
			out = append(out, int32(i+1))
		}
	}
	return out
}

// LinkGroup lists the frames of a link group: those of its links and of
// its connections.
func (x *Index) LinkGroup(links, conns []int) []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ls, cs := map[int16]bool{}, map[int32]bool{}
	for _, l := range links {
		ls[int16(l)] = true
	}
	for _, c := range conns {
		cs[int32(c)] = true
	}
	var out []int32
	for i, e := range x.ents {
		if (e.link != 0 && ls[e.link]) || (e.conn != 0 && cs[e.conn]) {
			out = append(out, int32(i+1))
		}
	}
	return out
}

// Filter runs a display filter over the whole capture (a second pass,
// decoding only what the filter needs) and returns the matching frames.
func (x *Index) Filter(ctx context.Context, flt *filter.Filter) ([]int32, error) {
	r, err := x.pass()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	ids := flt.Fields()
	tracked := false
	for _, id := range ids {
		tracked = tracked || !capture.FrameField(id)
	}
	r.SetFieldDemand(ids)
	var tr *track.Tracker
	if tracked {
		tr = track.New(track.Options{})
	} else {
		r.SetDepth(capture.DemandDepth(ids)) // the tracker reads every layer
	}
	var out []int32
	for ctx.Err() == nil {
		f, err := r.Next()
		if err == nil && x.limit > 0 && f.Number > x.limit {
			err = io.EOF
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		if tr != nil {
			tr.Feed(f)
			tr.AppendFields(f, f.Fields())
		}
		rec := f.Fields()
		rec.Frame = f.Data // "frame contains"
		if flt.Match(rec) {
			out = append(out, int32(f.Number))
		}
	}
	return out, ctx.Err()
}

// pass opens the capture for a second pass over every frame (a filter, a
// sort by a decoded column): the file again, or the frames in memory.
func (x *Index) pass() (*capture.Reader, error) {
	if x.header == nil {
		return capture.NewReader(x.path, x.rawSource(), x.lt)
	}
	return capture.Open(x.path)
}

// rawSource replays the frames kept in memory.
func (x *Index) rawSource() *frameSource {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &frameSource{digits: x.digits}
	for i := range x.raw {
		s.frames = append(s.frames, rawFrame{x.cis[i], x.raw[i]})
	}
	return s
}

type rawFrame struct {
	ci   gopacket.CaptureInfo
	data []byte
}

type frameSource struct {
	frames []rawFrame
	i      int
	digits uint8
}

// Resolution tells capture.NewReader the capture's time resolution, which
// the frames alone do not carry.
func (s *frameSource) Resolution() gopacket.TimestampResolution {
	return gopacket.TimestampResolution{Base: 10, Exponent: -int(s.digits)}
}

func (s *frameSource) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if s.i == len(s.frames) {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	f := s.frames[s.i]
	s.i++
	return f.data, f.ci, nil
}

// recordReader reads frames back from their records in a classic pcap,
// or from memory, without decoding them. Offsets that grow are read
// through one buffer (a list, a search, an export go forward), others by
// seeking.
type recordReader struct {
	x    *Index
	f    *os.File
	br   *bufio.Reader
	pos  int64 // file offset of br's next byte; -1: not positioned
	hdr  [16]byte
	data []byte
}

func (x *Index) newRecordReader() (*recordReader, error) {
	rr := &recordReader{x: x, pos: -1}
	if x.header != nil {
		f, err := os.Open(x.path)
		if err != nil {
			return nil, err
		}
		rr.f, rr.br = f, bufio.NewReaderSize(f, 1<<16)
	}
	return rr, nil
}

func (rr *recordReader) Close() error {
	if rr.f != nil {
		return rr.f.Close()
	}
	return nil
}

// read returns frame n (1-based): its capture info and bytes, valid until
// the next read.
func (rr *recordReader) read(n int32) (gopacket.CaptureInfo, []byte, error) {
	x := rr.x
	x.mu.RLock()
	e := x.ents[n-1]
	if e.off < 0 {
		ci, data := x.cis[n-1], x.raw[n-1]
		x.mu.RUnlock()
		return ci, data, nil
	}
	x.mu.RUnlock()
	if gap := e.off - rr.pos; rr.pos < 0 || gap < 0 || gap > 1<<20 {
		if _, err := rr.f.Seek(e.off, io.SeekStart); err != nil {
			return gopacket.CaptureInfo{}, nil, err
		}
		rr.br.Reset(rr.f)
	} else if _, err := rr.br.Discard(int(gap)); err != nil {
		return gopacket.CaptureInfo{}, nil, err
	}
	rr.pos = -1 // until the record is read whole
	if _, err := io.ReadFull(rr.br, rr.hdr[:]); err != nil {
		return gopacket.CaptureInfo{}, nil, fmt.Errorf("%s: frame %d (file offset %#x): %w", x.path, n, e.off, err)
	}
	order, nanos := pcapByteOrder(x.header)
	ci := gopacket.CaptureInfo{
		CaptureLength: int(order.Uint32(rr.hdr[8:])),
		Length:        int(order.Uint32(rr.hdr[12:])),
	}
	frac := int64(order.Uint32(rr.hdr[4:]))
	if !nanos {
		frac *= 1000
	}
	ci.Timestamp = time.Unix(int64(order.Uint32(rr.hdr[0:])), frac).UTC()
	if ci.CaptureLength > 1<<24 {
		return ci, nil, fmt.Errorf("%s: frame %d (file offset %#x): capture length %d", x.path, n, e.off, ci.CaptureLength)
	}
	if cap(rr.data) < ci.CaptureLength {
		rr.data = make([]byte, ci.CaptureLength)
	}
	rr.data = rr.data[:ci.CaptureLength]
	if _, err := io.ReadFull(rr.br, rr.data); err != nil {
		return ci, nil, fmt.Errorf("%s: frame %d (file offset %#x): %w", x.path, n, e.off, err)
	}
	rr.pos = e.off + 16 + int64(ci.CaptureLength)
	return ci, rr.data, nil
}

// pcapByteOrder reads a classic pcap header's magic: the byte order of
// its records and whether their fractions are nanoseconds.
func pcapByteOrder(h []byte) (binary.ByteOrder, bool) {
	switch binary.LittleEndian.Uint32(h) {
	case 0xa1b2c3d4:
		return binary.LittleEndian, false
	case 0xa1b23c4d:
		return binary.LittleEndian, true
	case 0xd4c3b2a1:
		return binary.BigEndian, false
	}
	return binary.BigEndian, true
}

// Decode decodes frames ns (1-based) for display, replaying first the
// handshake frames of their connections, and calls fn for each of them in
// frame order. The frame is valid only during the call (the reader reuses
// its layers).
func (x *Index) Decode(ns []int32, fn func(n int32, f *capture.Frame)) error {
	want := map[int32]bool{}
	set := map[int32]bool{}
	x.mu.RLock()
	with := func(n, before int32) {
		set[n] = true
		if c := x.ents[n-1].conn; c != 0 {
			for _, k := range x.ctx[c] {
				if k < before {
					set[k] = true
				}
			}
		}
	}
	for _, n := range ns {
		if n < 1 || int(n) > len(x.ents) {
			continue
		}
		want[n] = true
		with(n, n)
		// The frames that taught the reader the queue pair of a frame
		// decoded by fact, with their own handshakes (a teacher may be
		// a CLC Accept).
		for t, k := x.byFact[n], 0; t != 0 && k < 8; t, k = x.byFact[t], k+1 {
			with(t, t)
		}
	}
	x.mu.RUnlock()
	order := make([]int32, 0, len(set))
	for n := range set {
		order = append(order, n)
	}
	slices.Sort(order)
	rr, err := x.newRecordReader()
	if err != nil {
		return err
	}
	defer rr.Close()
	x.mu.RLock()
	src := &frameSource{digits: x.digits}
	x.mu.RUnlock()
	for _, n := range order {
		ci, data, err := rr.read(n)
		if err != nil {
			return err
		}
		src.frames = append(src.frames, rawFrame{ci, bytes.Clone(data)})
	}
	r, err := capture.NewReader(x.path, src, x.lt)
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; ; i++ {
		fr, err := r.Next()
		if err != nil {
			return nil
		}
		if n := order[i]; want[n] {
			fr.Number = int(n)
			fn(n, fr)
		}
	}
}
