package capture

import (
	"fmt"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
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
