package browser

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestEntries holds the compact table to what it was given: the record
// of every frame found from one kept before it, over records that follow
// each other (jumps anywhere in a block, a block's first frame one, runs
// of them), across blocks and chunks; frames kept in memory from some
// frame on; blocks with as many pairs as frames.
func TestEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var es entries
	var want []entry
	var ends []int64
	off := int64(24)
	n := 2*chunkFrames + 1000
	for i := range n {
		e := entry{off: off}
		if rng.IntN(8) == 0 {
			e.sev = expert.Severity(rng.IntN(5))
		}
		switch {
		case i/blockFrames == 5: // a block of 64 pairs
			e.conn, e.link = int32(i), int16(i%3)
		case rng.IntN(4) > 0:
			e.conn, e.link = int32(rng.IntN(4)), int16(rng.IntN(3))
		}
		if i >= n-100 {
			e.off = -1
		}
		end := off + 16 + int64(rng.IntN(1<<rng.IntN(19)))
		want = append(want, e)
		ends = append(ends, end)
		es.add(e, end)
		off = end
		if r := rng.IntN(100); r < 3 || (i >= 10*blockFrames && i < 11*blockFrames+3) {
			off += 4 + int64(rng.IntN(100)) // a block that is no frame's: a jump
		}
	}
	if es.len() != n {
		t.Fatalf("len %d, want %d", es.len(), n)
	}
	for i, w := range want {
		off, skip := es.record(i)
		if w.off < 0 {
			if off != -1 {
				t.Fatalf("entry %d, kept in memory: offset %d", i, off)
			}
		} else {
			from := i - skip
			if skip < 0 || from/blockFrames != i/blockFrames || want[from].off != off {
				t.Fatalf("entry %d: %d records after offset %d, not a frame's of its block", i, skip, off)
			}
			for j := from + 1; j <= i; j++ {
				if want[j].off != ends[j-1] {
					t.Fatalf("entry %d: %d records after frame %d's, but frame %d's does not follow the one before", i, skip, from, j)
				}
			}
		}
		if g := es.pair(i); g != (connLink{w.conn, w.link}) {
			t.Fatalf("entry %d: pair %+v, want %d %d", i, g, w.conn, w.link)
		}
		if g := es.conn(i); g != w.conn {
			t.Fatalf("entry %d: conn %d, want %d", i, g, w.conn)
		}
		if g := es.severity(i); g != w.sev {
			t.Fatalf("entry %d: severity %v, want %v", i, g, w.sev)
		}
	}
	if len(es.far) > n/20 {
		t.Errorf("%d offsets kept whole for about %d jumps", len(es.far), 3*n/100+blockFrames)
	}
	es.setSeverity(7, expert.Error)
	es.setSeverity(8, expert.SeverityNone)
	want[7].sev, want[8].sev = expert.Error, expert.SeverityNone
	for _, i := range []int{6, 7, 8, 9} {
		if g := es.severity(i); g != want[i].sev {
			t.Errorf("after setSeverity, entry %d: %v, want %v", i, g, want[i].sev)
		}
	}
	match := func(p connLink) bool { return p.conn == 2 || p.link == 1 || p.conn == 5*blockFrames+7 }
	var got []int
	es.matching(match, func(i int) { got = append(got, i) })
	var exp []int
	for i, w := range want {
		if match(connLink{w.conn, w.link}) {
			exp = append(exp, i)
		}
	}
	if len(got) != len(exp) {
		t.Fatalf("matching: %d entries, want %d", len(got), len(exp))
	}
	for i := range got {
		if got[i] != exp[i] {
			t.Fatalf("matching: entry %d is %d, want %d", i, got[i], exp[i])
		}
	}
}

// tableEntry is what the table gives back of a frame.
type tableEntry struct {
	off  int64 // of the record the frame's is walked from
	skip int   // records walked
	pair connLink
	sev  expert.Severity
}

func entryOf(es *entries, i int) tableEntry {
	off, skip := es.record(i)
	return tableEntry{off, skip, es.pair(i), es.severity(i)}
}

// TestRecordOffsets: the record of every frame, found from the one the
// table keeps before it, is at the offset a pass over the file gives
// (capture.Reader.RecordOffset), in order, shuffled and backwards, for
// classic pcap of both byte orders and pcapng with blocks between the
// packets (interfaces, statistics, a second section of the other byte
// order, simple packet blocks), with records of 64 KiB and more.
func TestRecordOffsets(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "multilink.pcap"))
	rng := rand.New(rand.NewPCG(7, 8))
	var pkts []testutil.Packet
	for i := range 400 {
		f := frames[i%len(frames)]
		f.Data = slices.Clone(f.Data)
		if r := rng.IntN(40); r < 2 {
			// Padded past 64 KiB: the frame's bytes stay a frame.
			f.Data = append(f.Data, make([]byte, 65536+rng.IntN(r*150000+1))...)
			f.CI.Length = len(f.Data)
		}
		f.CI.CaptureLength = len(f.Data)
		pkts = append(pkts, f)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"le.pcap":   pcapOf(binary.LittleEndian, lt, pkts),
		"be.pcap":   pcapOf(binary.BigEndian, lt, pkts),
		"mixed.ng":  pcapngOf(rng, lt, pkts),
		"mixed2.ng": pcapngOf(rng, lt, pkts),
	}
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := capture.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			var offs []int64
			var data [][]byte
			for {
				f, err := r.Next()
				if err != nil {
					break
				}
				offs = append(offs, r.RecordOffset())
				data = append(data, slices.Clone(f.Data))
			}
			r.Close()
			if len(offs) != len(pkts) {
				t.Fatalf("%d frames, want %d", len(offs), len(pkts))
			}
			idx, _ := openIndexed(t, p)
			if _, _, _, inMemory, _ := idx.Kept(); inMemory != 0 {
				t.Fatalf("%d frames kept in memory", inMemory)
			}
			if strings.HasSuffix(name, ".ng") && len(idx.ents.far) == 0 {
				t.Error("no jump: the pcapng's other blocks are not between frames")
			}
			rr, err := idx.newRecordReader()
			if err != nil {
				t.Fatal(err)
			}
			defer rr.Close()
			eachOrder(len(offs), func(how string, n int32) {
				off, _, err := rr.offset(n)
				if err != nil || off != offs[n-1] {
					t.Fatalf("%s: frame %d at offset %d (%v), want %d", how, n, off, err, offs[n-1])
				}
				if _, got, err := rr.read(n); err != nil || !bytes.Equal(got, data[n-1]) {
					t.Fatalf("%s: frame %d: %v, %d bytes, want %d", how, n, err, len(got), len(data[n-1]))
				}
			})
		})
	}
}

// eachOrder calls check for frames 1 to n in order, backwards and
// shuffled: a record reader must find each wherever it was before.
func eachOrder(n int, check func(how string, frame int32)) {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i + 1)
	}
	run := func(how string) {
		for _, f := range order {
			check(how, f)
		}
	}
	run("in order")
	slices.Reverse(order)
	run("backwards")
	rand.New(rand.NewPCG(1, 1)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	run("shuffled")
}

// pcapOf encodes frames as a classic pcap of byte order bo (microseconds).
func pcapOf(bo binary.AppendByteOrder, lt layers.LinkType, frames []testutil.Packet) []byte {
	b := bo.AppendUint32(nil, 0xa1b2c3d4)
	b = bo.AppendUint16(bo.AppendUint16(b, 2), 4)
	b = bo.AppendUint32(bo.AppendUint32(b, 0), 0)
	b = bo.AppendUint32(bo.AppendUint32(b, 262144), uint32(lt))
	for _, f := range frames {
		ts := f.CI.Timestamp
		b = bo.AppendUint32(bo.AppendUint32(b, uint32(ts.Unix())), uint32(ts.Nanosecond()/1000))
		b = bo.AppendUint32(bo.AppendUint32(b, uint32(len(f.Data))), uint32(f.CI.Length))
		b = append(b, f.Data...)
	}
	return b
}

// pcapngOf encodes frames as pcapng with other blocks at random among
// them: a new interface (the frames go on on it), interface statistics,
// a name resolution block, a new section of the other byte order, and
// simple packet blocks for some frames of interface 0.
func pcapngOf(rng *rand.Rand, lt layers.LinkType, frames []testutil.Packet) []byte {
	var b []byte
	var bo binary.AppendByteOrder = binary.LittleEndian
	block := func(typ uint32, body []byte) {
		n := 12 + (len(body)+3)&^3
		b = bo.AppendUint32(bo.AppendUint32(b, typ), uint32(n))
		b = append(b, body...)
		b = append(b, make([]byte, (4-len(body)%4)%4)...)
		b = bo.AppendUint32(b, uint32(n))
	}
	iface := func() {
		idb := bo.AppendUint16(nil, uint16(lt))
		idb = bo.AppendUint16(idb, 0)
		idb = bo.AppendUint32(idb, 262144)
		idb = bo.AppendUint16(bo.AppendUint16(idb, 9), 1) // if_tsresol: nanoseconds
		idb = append(idb, 9, 0, 0, 0)
		block(1, bo.AppendUint32(idb, 0))
	}
	ifaces := 0
	section := func() {
		shb := bo.AppendUint32(nil, 0x1A2B3C4D)
		shb = bo.AppendUint16(bo.AppendUint16(shb, 1), 0)
		block(0x0A0D0D0A, bo.AppendUint64(shb, ^uint64(0)))
		iface()
		ifaces = 1
	}
	section()
	for i, f := range frames {
		switch r := rng.IntN(30); {
		case r == 0:
			iface()
			ifaces++
		case r == 1:
			isb := bo.AppendUint32(nil, 0)
			block(5, bo.AppendUint32(bo.AppendUint32(isb, 0), 0))
		case r == 2:
			block(4, make([]byte, 4)) // nrb_record_end alone
		case r == 3 && i > 0:
			if bo == binary.AppendByteOrder(binary.LittleEndian) {
				bo = binary.BigEndian
			} else {
				bo = binary.LittleEndian
			}
			section()
		}
		if ifaces == 1 && rng.IntN(10) == 0 {
			spb := bo.AppendUint32(nil, uint32(f.CI.Length))
			block(3, append(spb, f.Data...))
			continue
		}
		ns := uint64(f.CI.Timestamp.UnixNano())
		epb := bo.AppendUint32(nil, uint32(ifaces-1))
		epb = bo.AppendUint32(bo.AppendUint32(epb, uint32(ns>>32)), uint32(ns))
		epb = bo.AppendUint32(bo.AppendUint32(epb, uint32(len(f.Data))), uint32(f.CI.Length))
		block(6, append(epb, f.Data...))
	}
	return b
}
