package columns

import (
	"strings"
	"testing"

	"github.com/smcscope/smcscope/decode"
	_ "github.com/smcscope/smcscope/track" // the tracker's fields (smc.conn.id)
)

// TestParseFormat: a spec reads back as itself (titles, widths, built-in
// names in any case, a field by name), and every mistake is one line
// naming the item.
func TestParseFormat(t *testing.T) {
	cols, err := Parse(`no, Time,Seq=smc.cdc.seq:6, smc.conn.id ,"Info"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Format(cols), "No.,Time,Seq=smc.cdc.seq:6,smc.conn.id,Info"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	if cols[2].Kind != Field || cols[2].Heading() != "Seq" || cols[2].Width != 6 || cols[3].Heading() != "smc.conn.id" {
		t.Errorf("columns %+v", cols)
	}
	if got := Format(Default()); got != "No.,Time,Source,Destination,Protocol,Length,Info" {
		t.Errorf("Default = %q", got)
	}
	for spec, want := range map[string]string{
		"":                 "no column",
		"No.,nope":         `column "nope": no such column or field`,
		"Info:0":           `column "Info": width "0"`,
		"smc.conn.id":      `column "smc.conn.id": refused`,
		"smc.cdc.seq:x200": `width "x200"`,
	} {
		_, err := Parse(spec, func(d decode.FieldDef) error {
			if d.Owner.Tracker() {
				return errRefused
			}
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): %v, want one line with %q", spec, err, want)
		}
	}
}

var errRefused = refusedError{}

type refusedError struct{}

func (refusedError) Error() string { return "refused" }

// FuzzParse: no spec panics the parser, and a layout it reads is written
// as a spec that reads back as the same layout.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"No.,Time,Source,Destination,Protocol,Length,Info", "Seq=smc.cdc.seq:6,smc.conn.id", `"No.",x=Info:1`, "=:,", "a=b=c:d:e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		cols, err := Parse(spec, nil)
		if err != nil {
			return
		}
		again, err := Parse(Format(cols), nil)
		if err != nil {
			t.Fatalf("Parse(%q) gave %q, which does not parse: %v", spec, Format(cols), err)
		}
		if Format(again) != Format(cols) {
			t.Fatalf("Parse(%q): %q, then %q", spec, Format(cols), Format(again))
		}
	})
}
