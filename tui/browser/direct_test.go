package browser

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestIndexDirectSame holds the index pass, which has the tracker follow
// the commonest SMC-R frames from the layers the reader's direct path
// fills, to the pass that decodes every frame whole: the same entries
// (connection, link, relevance, worst finding), handshake frames, queue
// pair teachers and final snapshot, on every sample and on damaged copies
// of pingpong.pcap.
func TestIndexDirectSame(t *testing.T) {
	paths := testutil.Samples(t)
	frames, _ := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	for seed := range uint64(12) {
		var damaged []mutate.Frame
		for _, m := range mutate.Generate(seed, frames, 6) {
			damaged = m.Apply(frames)
			frames = damaged
		}
		paths = append(paths, testutil.WriteFrames(t, fmt.Sprintf("damaged%d.pcap", seed), layers.LinkTypeEthernet, damaged))
		frames, _ = testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	}
	for _, p := range paths {
		direct, general := indexAs(t, p, false), indexAs(t, p, true)
		name := filepath.Base(p)
		if direct.ents.len() != general.ents.len() {
			t.Fatalf("%s: %d entries, %d decoding every frame", name, direct.ents.len(), general.ents.len())
		}
		for i := range direct.ents.len() {
			if d, g := entryOf(&direct.ents, i), entryOf(&general.ents, i); d != g {
				t.Fatalf("%s: frame %d: entry %+v, %+v decoding every frame", name, i+1, d, g)
			}
		}
		for what, pair := range map[string][2]any{
			"relevant": {direct.Relevant(), general.Relevant()},
			"byFact":   {direct.byFact, general.byFact},
			"ctx":      {direct.ctx, general.ctx},
			"snapshot": {direct.snap.Conns, general.snap.Conns},
			"links":    {direct.snap.Links, general.snap.Links},
		} {
			if !reflect.DeepEqual(pair[0], pair[1]) {
				t.Errorf("%s: %s differ", name, what)
			}
		}
	}
}

// indexAs indexes path to its end, general as openFileAs takes it.
func indexAs(t *testing.T, path string, general bool) *Index {
	t.Helper()
	return indexLimit(t, path, 0, general)
}

// TestFilterBatchesSame holds the whole-file filter on every CPU
// (filterBatches) and on the direct path's records to the one-goroutine
// pass that decodes every frame whole: the same frames, on every sample
// and damaged copies, for filters on every layer, a frame's bytes, its
// errors and the tracker's fields, and with -c's limit.
func TestFilterBatchesSame(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // two workers even on one CPU
	paths := testutil.Samples(t)
	frames, _ := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "multiconn.pcap"))
	for seed := range uint64(4) {
		damaged := frames
		for _, m := range mutate.Generate(seed, frames, 8) {
			damaged = m.Apply(damaged)
		}
		paths = append(paths, testutil.WriteFrames(t, fmt.Sprintf("damaged%d.pcap", seed), layers.LinkTypeEthernet, damaged))
	}
	exprs := []string{"smc.cdc.seq > 3", "tcp", "roce.bth.opcode == 17", "frame.error", "smc.clc", `frame contains "abc"`, "smc.llc",
		// Filters the direct path's records answer for the commonest
		// frames: every kind of value it reads.
		"ip.src == 10.10.0.1", "eth.dst == 52:54:00:0a:00:01", "roce.reth.len > 100", "roce.aeth.msn == 3 or smc.cdc.cons.count > 64",
		"smc.cdc.flags.write_blocked or roce.bth.se", "frame.len > 100 and udp.dstport == 4791", "frame.number < 500 and roce.icrc > 5",
		// Tracker fields: one goroutine, the tracker following the
		// commonest frames by its fast path on the direct path's records.
		"smc.conn.id == 1", "smc.conn.id == 2 and roce.bth.opcode == 17", "smc.stream.offset > 1000 or smc.expert",
		"smc.lgr.id == 1 and smc.cdc.seq > 3", "smc.conn.id"}
	for _, p := range paths {
		for _, limit := range []int{0, 3000} {
			batches, serial := indexLimit(t, p, limit, false), indexLimit(t, p, limit, true)
			for _, e := range exprs {
				flt, err := filter.Compile(e)
				if err != nil {
					t.Fatal(err)
				}
				got, err1 := batches.Filter(context.Background(), flt)
				want, err2 := serial.Filter(context.Background(), flt)
				if !slices.Equal(got, want) || fmt.Sprint(err1) != fmt.Sprint(err2) {
					t.Fatalf("%s -c %d, %q: %d frames (%v), one goroutine %d (%v)", filepath.Base(p), limit, e, len(got), err1, len(want), err2)
				}
			}
		}
	}
}

// indexLimit is indexAs with -c's limit.
func indexLimit(t *testing.T, path string, limit int, general bool) *Index {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	x, err := openFileAs(ctx, path, limit, nil, general)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ch := x.Changed()
		if _, done, _ := x.Progress(); done {
			return x
		}
		<-ch
	}
}

// TestTreeHeaderAbsentLink: a frame the tracker put on no link (a TCP
// segment) says so with "-", not link 0, which no link has.
func TestTreeHeaderAbsentLink(t *testing.T) {
	h := open(t, "multilink.pcap", 120, 40, Options{})
	h.Until("frame 3  connection 1  link -")
}
