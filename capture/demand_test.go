package capture

import (
	"fmt"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestFieldDemand: asking for one field must give exactly the values the
// full record has for it, on frames of every kind (TCP SYN, CLC, LLC,
// WRITE, CDC, ACK), and must not switch the ICRC off when it is asked for.
func TestFieldDemand(t *testing.T) {
	raw := readRaw(t, pingpong)
	for _, i := range []int{4, 5, 7, 9, 11, 13, 21, 22, 23} {
		frames := raw[:i+1] // the CLC frames need their SYN before them
		full := fieldValues(t, frames, nil)
		if len(full) == 0 {
			t.Fatalf("frame %d: empty record", i+1)
		}
		for id, want := range full {
			if groupOf(id) == gAll {
				t.Errorf("field %s has no layer group", decode.Def(id).Name)
			}
			got := fieldValues(t, frames, []decode.FieldID{id})
			if fmt.Sprint(got[id]) != fmt.Sprint(want) {
				t.Errorf("frame %d field %s: demanded %v, full %v", i+1, decode.Def(id).Name, got[id], want)
			}
		}
	}
}

// fieldValues reads frames and returns the last frame's values per field.
func fieldValues(t *testing.T, frames []rawFrame, demand []decode.FieldID) map[decode.FieldID][]string {
	t.Helper()
	r, err := NewReader("d", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	r.SetFieldDemand(demand)
	var f *Frame
	for range frames {
		if f, err = r.Next(); err != nil {
			t.Fatal(err)
		}
	}
	rec := f.Fields()
	out := map[decode.FieldID][]string{}
	for j, id := range rec.IDs {
		out[id] = append(out[id], rec.Vals[j].Format(decode.Def(id).Kind))
	}
	return out
}

// TestDepthKeepsFields: a demand that lets the decoder stop above the SMC
// messages (Reader.SetDepth) gives, frame for frame, the values the full
// decode gives for the demanded fields and the same SMC relevance, on
// every bundled capture.
func TestDepthKeepsFields(t *testing.T) {
	sets := [][]string{
		{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn"},
		{"roce.bth.psn", "roce.reth.va", "roce.reth.len", "roce.aeth.syndrome", "roce.immdt"},
		{"ip.src", "tcp.srcport", "smc.clc.type", "udp.dstport", "roce.grh.dgid"},
	}
	for _, path := range append(testutil.Samples(t), testutil.References(t)...) {
		frames, lt := testutil.ReadFrames(t, path)
		for _, names := range sets {
			var ids []decode.FieldID
			for _, n := range names {
				d, ok := decode.LookupField(n)
				if !ok {
					t.Fatalf("no field %s", n)
				}
				ids = append(ids, d.ID)
			}
			shallow, full := readDemand(t, frames, lt, ids, false), readDemand(t, frames, lt, ids, true)
			if shallow.depth == DepthAll {
				t.Errorf("%v: decoded whole", names)
			}
			for i := range full.lines {
				if shallow.lines[i] != full.lines[i] {
					t.Fatalf("%s frame %d, %v:\n  at depth %d: %s\n  whole:      %s", path, i+1, names, shallow.depth, shallow.lines[i], full.lines[i])
				}
			}
		}
	}
}

type demandRun struct {
	depth Depth
	lines []string
}

// readDemand describes each frame by its SMC relevance and the values of
// ids, decoded for that demand or (whole) down to every layer.
func readDemand(t *testing.T, frames []rawFrame, lt layers.LinkType, ids []decode.FieldID, whole bool) demandRun {
	t.Helper()
	r, err := NewReader("d", &sliceSource{frames: frames}, lt)
	if err != nil {
		t.Fatal(err)
	}
	r.SetFieldDemand(ids)
	if !whole {
		r.SetDepth(DemandDepth(ids))
	}
	run := demandRun{depth: r.depth}
	for range frames {
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		rec := f.Fields()
		line := fmt.Sprint(f.SMCRelevant())
		for _, id := range ids {
			for j, got := range rec.IDs {
				if got == id {
					line += " " + decode.Def(id).Name + "=" + rec.Vals[j].Format(decode.Def(id).Kind)
				}
			}
		}
		run.lines = append(run.lines, line)
	}
	return run
}
