package decode

import "testing"

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
