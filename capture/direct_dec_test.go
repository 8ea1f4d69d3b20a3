package capture

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/decode"
)

// TestAppendNumber holds the direct path's frame numbers, counted up in
// their last digit from the previous one, to strconv's, across carries,
// jumps and the 8-digit limit.
func TestAppendNumber(t *testing.T) {
	var p DirectPlan
	check := func(n int) {
		t.Helper()
		buf := make([]byte, 0, 16)
		got, ok := p.appendNumber(buf, n)
		if n >= 1e8 {
			if ok {
				t.Fatalf("appendNumber(%d) took a 9-digit number", n)
			}
			return
		}
		if !ok || string(got) != strconv.Itoa(n) {
			t.Fatalf("appendNumber(%d) = %q, %v", n, got, ok)
		}
	}
	for n := 0; n < 12000; n++ {
		check(n)
	}
	for _, n := range []int{99999998, 99999999, 1e8, 5, 6, 1e8 - 1, 1e8} {
		check(n)
	}
}

// TestDirectFeed: the frames the direct path takes are handed to the feed
// with the layers it reads as the general path decodes them; a frame the
// feed turns down comes back decoded the general way, not Direct.
func TestDirectFeed(t *testing.T) {
	const name = "../testdata/reference/pingpong.pcap"
	num, _ := decode.LookupField("frame.number")
	plan, ok := CompileDirect([]decode.FieldID{num.ID})
	if !ok {
		t.Fatal("frame.number is not a direct column")
	}
	for _, accept := range []bool{true, false} {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r.SetDirect(plan)
		type seen struct {
			bth        string
			cdc        string
			reth, aeth bool
			src, dst   string
			icrc       ICRCStatus
		}
		var fed []seen
		r.SetDirectFeed(func(f *Frame) bool {
			s := seen{bth: bthKey(f.BTH), cdc: cdcKey(f.CDC), reth: f.RETH != nil, aeth: f.AETH != nil, src: f.IPv4.SrcIP.String(), dst: f.IPv4.DstIP.String(), icrc: f.ICRC}
			fed = append(fed, s)
			return accept
		})
		direct := 0
		for {
			before := len(fed)
			f, err := r.Next()
			if err != nil {
				break
			}
			g, err := ref.Next()
			if err != nil {
				t.Fatal(err)
			}
			if f.Direct() {
				direct++
			}
			if len(fed) == before {
				continue
			}
			// Fed this frame: with the layers the general path has.
			if s := fed[len(fed)-1]; g.BTH == nil || s.bth != bthKey(g.BTH) || s.src != g.IPv4.SrcIP.String() || s.dst != g.IPv4.DstIP.String() ||
				s.icrc != g.ICRC || s.reth != (g.RETH != nil) || s.aeth != (g.AETH != nil) || s.cdc != cdcKey(g.CDC) {
				t.Fatalf("frame %d fed %+v, the general path has BTH %v ICRC %+v CDC %s", f.Number, s, g.BTH != nil, g.ICRC, cdcKey(g.CDC))
			}
			if !accept && (f.Direct() || bthKey(f.BTH) != bthKey(g.BTH) || cdcKey(f.CDC) != cdcKey(g.CDC) || f.ICRC != g.ICRC) {
				// Turned down: decoded as the general path decodes it.
				t.Fatalf("frame %d turned down: direct %v, %s, want %s", f.Number, f.Direct(), bthKey(f.BTH), bthKey(g.BTH))
			}
		}
		r.Close()
		ref.Close()
		if len(fed) < 1000 || accept && direct != len(fed) || !accept && direct != 0 {
			t.Fatalf("accept %v: %d frames fed, %d direct", accept, len(fed), direct)
		}
	}
}

func bthKey(b *decode.BTH) string {
	return fmt.Sprintf("%v %d %d %d %v %d %x %x", b.Opcode, b.DestQP, b.PSN, b.PadCount, b.AckReq, b.PKey, b.ICRC, b.Payload)
}

func cdcKey(c *decode.CDC) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%d %d %+v %+v %v %v %d %v", c.Seq, c.Token, c.Prod, c.Cons, c.ProdFlags, c.ConnFlags, c.Credits, c.ANCK)
}

// TestFeedBuffered: the frames Next and FeedBuffered hand the direct feed
// from the stream's buffer are those, in that order and with the same
// layers, times and lengths, that a Reader of another source (pcapgo's,
// read and decoded frame by frame) hands it, and a frame the feed turns
// down is Next's to return, decoded the general way; with FeedBuffered
// most of the capture goes by its loop.
func TestFeedBuffered(t *testing.T) {
	const name = "../testdata/reference/pingpong.pcap"
	type seen struct {
		number           int
		ns               int64
		length, caplen   int
		ts               string
		data, bth, cdc   string
		icrc             ICRCStatus
		direct, src, dst string
	}
	// Every seventh frame is turned down: the feed reads it twice (from
	// the buffer, then the general way), keeping only what it takes.
	accept := func(f *Frame) bool { return f.Number%7 != 0 }
	run := func(how string) (fed, returned []seen, inLoop int) {
		var r *Reader
		if how == "pcapgo" {
			file, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			src, err := pcapgo.NewReader(file)
			if err != nil {
				t.Fatal(err)
			}
			if r, err = NewReader(name, src, src.LinkType()); err != nil {
				t.Fatal(err)
			}
		} else {
			var err error
			if r, err = Open(name); err != nil {
				t.Fatal(err)
			}
		}
		defer r.Close()
		r.SetDirectFeed(func(f *Frame) bool {
			if !accept(f) {
				return false
			}
			fed = append(fed, seen{number: f.Number, ns: f.UnixNano(), length: f.CI.Length, caplen: f.CI.CaptureLength,
				ts: f.CI.Timestamp.String(), data: string(f.Data), bth: bthKey(f.BTH), cdc: cdcKey(f.CDC), icrc: f.ICRC,
				src: f.IPv4.SrcIP.String(), dst: f.IPv4.DstIP.String()})
			return true
		})
		for {
			if how == "runs" {
				inLoop += r.FeedBuffered()
			}
			f, err := r.Next()
			if err != nil {
				break
			}
			if !f.Direct() {
				returned = append(returned, seen{number: f.Number, ns: f.UnixNano(), data: string(f.Data), direct: fmt.Sprint(f.BTH != nil && bthKey(f.BTH) != "")})
			}
		}
		return fed, returned, inLoop
	}
	wantFed, wantRet, _ := run("pcapgo")
	for _, how := range []string{"next", "runs"} {
		gotFed, gotRet, inLoop := run(how)
		if len(gotFed) != len(wantFed) || len(gotRet) != len(wantRet) {
			t.Fatalf("%s: fed %d, returned %d; frame by frame fed %d, returned %d", how, len(gotFed), len(gotRet), len(wantFed), len(wantRet))
		}
		for i := range wantFed {
			if gotFed[i] != wantFed[i] {
				t.Fatalf("%s: fed frame %d: %+v, frame by frame %+v", how, wantFed[i].number, gotFed[i], wantFed[i])
			}
		}
		for i := range wantRet {
			if gotRet[i] != wantRet[i] {
				t.Fatalf("%s: returned frame %d, frame by frame %d", how, gotRet[i].number, wantRet[i].number)
			}
		}
		if how == "runs" && inLoop < len(wantFed)/2 {
			t.Errorf("%d of %d frames fed by the buffered loop", inLoop, len(wantFed))
		}
	}
}
