package decode

import (
	"fmt"
	"testing"
)

// TestRecordWantOnly: a record limited to some fields keeps exactly those,
// in the order they were added, drops the rest (including IDs beyond the
// wanted range), and WantOnly(nil) keeps everything again. -T fields relies
// on this to skip the fields nobody prints.
func TestRecordWantOnly(t *testing.T) {
	var r Record
	r.WantOnly([]FieldID{fCDCSeq, fCDCToken})
	r.AddUint(fCDCProdCount, 1)
	r.AddUint(fCDCToken, 2)
	r.AddText(fCLCEID, []byte("SMC-LAB-UEID"))
	r.AddUint(fCDCSeq, 3)
	r.AddUint(FieldID(len(r.Want)+5), 4) // beyond the table: not wanted
	if len(r.IDs) != 2 || r.IDs[0] != fCDCToken || r.Vals[0].U != 2 || r.IDs[1] != fCDCSeq || r.Vals[1].U != 3 {
		t.Fatalf("kept %v %v, want token 2 then seq 3", r.IDs, r.Vals)
	}
	r.Reset()
	r.WantOnly(nil)
	r.AddUint(fCDCProdCount, 1)
	r.AddText(fCLCEID, []byte("X"))
	if len(r.IDs) != 2 || r.Vals[1].S != "X" {
		t.Fatalf("unlimited record kept %v", r.IDs)
	}
}

// TestRecordAddUintInPlace: AddUint's in-place path (no Want, room in the
// record) leaves what the general path leaves: the value alone, every other
// member zero, also over the stale values a Reset leaves behind.
func TestRecordAddUintInPlace(t *testing.T) {
	var fast, slow Record
	slow.WantOnly([]FieldID{fCDCSeq, fCDCToken, fCLCEID}) // every add takes the general path
	fill := func(r *Record) {
		r.AddText(fCLCEID, []byte("SMC-LAB-UEID"))
		r.AddUint(fCDCSeq, 7)
		r.AddBool(fCDCToken, true)
		r.AddBool(fCDCSeq, false)
	}
	for round := 0; round < 3; round++ {
		fast.Reset()
		slow.Reset()
		if round == 2 { // stale text where numbers go now
			fast.AddText(fCLCEID, []byte("stale"))
			fast.AddText(fCLCEID, []byte("stale"))
			fast.Reset()
		}
		fill(&fast)
		fill(&slow)
		if len(fast.IDs) != len(fast.Vals) || fmt.Sprintf("%v %#v", fast.IDs, fast.Vals) != fmt.Sprintf("%v %#v", slow.IDs, slow.Vals) {
			t.Fatalf("round %d: in place %v %#v\ngeneral %v %#v", round, fast.IDs, fast.Vals, slow.IDs, slow.Vals)
		}
	}
}
