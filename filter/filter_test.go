package filter

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/decode"
)

// Test-only fields, one per Kind, under a prefix no real layer uses. The
// values put in them below are taken from testdata/reference (pingpong:
// server 10.10.0.1, client GID ::ffff:10.10.0.2 on MAC 52:54:00:0a:00:02,
// UEID "SMC-LAB-UEID"; decline-nordma: peer diagnosis 0x03030002).
var (
	ftUint = decode.Field(decode.OwnerTrack, "filtertest.u", decode.KindUint, "test uint", decode.Enum(func(v uint64) string {
		switch v {
		case 1:
			return "Proposal"
		case 4:
			return "Decline"
		}
		return ""
	}))
	ftHex   = decode.Field(decode.OwnerTrack, "filtertest.hex", decode.KindUint, "test hex uint", decode.Hex())
	ftBool  = decode.Field(decode.OwnerTrack, "filtertest.flag", decode.KindBool, "test bool")
	ftStr   = decode.Field(decode.OwnerTrack, "filtertest.s", decode.KindString, "test string")
	ftBytes = decode.Field(decode.OwnerTrack, "filtertest.bytes", decode.KindBytes, "test bytes")
	ftAddr  = decode.Field(decode.OwnerTrack, "filtertest.addr", decode.KindAddr, "test address")
	ftMAC   = decode.Field(decode.OwnerTrack, "filtertest.mac", decode.KindMAC, "test MAC")
	ftTime  = decode.Field(decode.OwnerTrack, "filtertest.f", decode.KindTime, "test time")
	ftSubA  = decode.Field(decode.OwnerTrack, "filtertest.sub.a", decode.KindUint, "under the sub prefix")
	ftSubB  = decode.Field(decode.OwnerTrack, "filtertest.sub.b", decode.KindUint, "under the sub prefix")
	ftSubx  = decode.Field(decode.OwnerTrack, "filtertest.subx", decode.KindUint, "shares letters, not the prefix")
	_       = decode.Field(decode.OwnerTrack, "filtertest.never", decode.KindUint, "never in the test record")
)

func testRecord() *decode.Record {
	r := &decode.Record{}
	r.AddUint(ftUint, 4)
	r.AddUint(ftUint, 42) // a second occurrence: multi-valued semantics
	r.AddUint(ftHex, 0x03030002)
	r.AddBool(ftBool, true)
	r.AddString(ftStr, "SMC-LAB-UEID")
	r.AddBytes(ftBytes, []byte{0xe2, 0xd4, 0xc3, 0xd9})
	r.AddAddr(ftAddr, netip.MustParseAddr("10.10.0.1"))
	r.AddAddr(ftAddr, netip.MustParseAddr("::ffff:10.10.0.2"))
	r.AddBytes(ftMAC, []byte{0x52, 0x54, 0x00, 0x0a, 0x00, 0x02})
	r.AddTime(ftTime, 1_500000000, 6)
	r.AddUint(ftSubA, 7)
	return r
}

func TestMatch(t *testing.T) {
	t.Parallel()
	rec := testRecord()
	tests := []struct {
		expr string
		want bool
	}{
		// presence and prefixes
		{"filtertest.u", true},
		{"filtertest.never", false},
		{"filtertest.sub", true},
		{"filtertest.sub.b", false},
		{"filtertest", true},
		{"!filtertest.never", true},
		{"not filtertest.sub", false},
		// numbers: decimal, hex, no octal, enum names, words for operators
		{"filtertest.u == 4", true},
		{"filtertest.u == 0x4", true},
		{"filtertest.u == 04", true},
		{"filtertest.u == 042", true},
		{"filtertest.u == decline", true},
		{"filtertest.u == Proposal", false},
		{"filtertest.u eq 42", true},
		{"filtertest.u == 5", false},
		{"filtertest.hex == 0x03030002", true},
		{"filtertest.hex == 50528258", true},
		{"filtertest.hex > 0x03030001 && filtertest.hex < 0x03030003", true},
		{"filtertest.hex ge 0x03030002 and filtertest.hex le 0x03030002", true},
		{"filtertest.hex gt 0x03030002", false},
		// multi-valued: any for ==, <, >; "!=" is "not =="; "~=" is any-differs
		{"filtertest.u > 40", true},
		{"filtertest.u < 5", true},
		{"filtertest.u > 42", false},
		{"filtertest.u != 4", false},
		{"filtertest.u ne 5", true},
		{"filtertest.u ~= 4", true},
		{"filtertest.u any_ne 4", true},
		{"filtertest.never != 4", false},
		{"filtertest.never ~= 4", false},
		{"filtertest.never == 0", false},
		// sets and ranges
		{"filtertest.u in {1 2 3}", false},
		{"filtertest.u in {1, 2, 4}", true},
		{"filtertest.u in {40..50}", true},
		{"filtertest.u in {5..41}", false},
		{"filtertest.u in {proposal decline}", true},
		{"filtertest.addr in {10.10.0.9 10.10.0.2}", true},
		{`filtertest.s in {"x" "SMC-LAB-UEID"}`, true},
		{"filtertest.f in {1..2}", true},
		// booleans
		{"filtertest.flag == 1", true},
		{"filtertest.flag == true", true},
		{"filtertest.flag == FALSE", false},
		{"filtertest.flag != 0", true},
		// strings
		{`filtertest.s == "SMC-LAB-UEID"`, true},
		{`filtertest.s == SMC-LAB-UEID`, true},
		{`filtertest.s == "smc-lab-ueid"`, false},
		{`filtertest.s contains "LAB"`, true},
		{`filtertest.s contains "lab"`, false},
		{`filtertest.s > "SMC"`, true},
		{`filtertest.s == "\x53MC-LAB-UEID"`, true},
		{`filtertest.s matches "^smc-.*-ueid$"`, true}, // case-insensitive, as in Wireshark
		{`filtertest.s matches "(?-i)^smc"`, false},
		{`filtertest.s matches "LAB-[0-9]"`, false},
		// byte strings
		{"filtertest.bytes == e2:d4:c3:d9", true},
		{"filtertest.bytes == 0xe2d4c3d9", true},
		{"filtertest.bytes == e2d4c3d9", true},
		{"filtertest.bytes == e2-d4-c3-d9", true},
		{"filtertest.bytes == e2:d4:c3", false},
		{"filtertest.bytes contains d4:c3", true},
		{"filtertest.bytes contains c3:d4", false},
		{`filtertest.bytes contains "\xc3\xd9"`, true},
		{"filtertest.bytes > e2:d4", true},
		// addresses, GIDs, prefixes
		{"filtertest.addr == 10.10.0.1", true},
		{"filtertest.addr == 10.10.0.2", true}, // IPv4 literal vs IPv4-mapped GID
		{"filtertest.addr == ::ffff:10.10.0.2", true},
		{"filtertest.addr == ::ffff:10.10.0.1", true},
		{"filtertest.addr == 0:0:0:0:0:ffff:0a0a:0002", true},
		{"filtertest.addr == fe80::5054:ff:fe0a:2", false},
		{"filtertest.addr == 10.10.0.0/16", true},
		{"filtertest.addr == 192.168.0.0/16", false},
		{"filtertest.addr != 10.10.0.0/24", false},
		{"filtertest.addr > 10.10.0.1", true},
		// MACs
		{"filtertest.mac == 52:54:00:0a:00:02", true},
		{"filtertest.mac == 52-54-00-0A-00-02", true},
		{"filtertest.mac == 52:54:00:0a:00:01", false},
		// floats
		{"filtertest.f > 1.25", true},
		{"filtertest.f == 1.5", true},
		{"filtertest.f == 1.500000001", false},
		{"filtertest.f < 1.500000001", true},
		{"filtertest.f in {1.499999999..1.5}", true},
		// logic and precedence: not > and > or
		{"filtertest.never or filtertest.u == 4", true},
		{"filtertest.never || filtertest.u == 4 && filtertest.flag", true},
		{"filtertest.u == 4 or filtertest.never and filtertest.never", true},
		{"(filtertest.u == 4 or filtertest.never) and filtertest.never", false},
		{"not filtertest.never and filtertest.u", true},
		{"not (filtertest.never or filtertest.u)", false},
		{"!!filtertest.u", true},
		{"((filtertest.u))", true},
		{"filtertest.u==4&&filtertest.flag==1", true},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			f, err := Compile(tc.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.expr, err)
			}
			if got := f.Match(rec); got != tc.want {
				t.Errorf("Compile(%q).Match = %v, want %v", tc.expr, got, tc.want)
			}
			// The canonical form must compile to a filter with the same
			// verdict and the same canonical form.
			g, err := Compile(f.String())
			if err != nil {
				t.Fatalf("Compile(String() = %q): %v", f.String(), err)
			}
			if g.String() != f.String() || g.Match(rec) != tc.want {
				t.Errorf("round trip of %q via %q changed the filter", tc.expr, f.String())
			}
		})
	}
}

func TestMatchEmptyRecord(t *testing.T) {
	t.Parallel()
	var empty decode.Record
	for _, expr := range []string{"filtertest.u", "filtertest", "filtertest.u == 4",
		"filtertest.u != 4", "filtertest.u in {4}", `filtertest.s contains "a"`} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		if f.Match(&empty) {
			t.Errorf("%q matched an empty record", expr)
		}
	}
	f, err := Compile("not filtertest.u")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(&empty) {
		t.Error(`"not filtertest.u" did not match an empty record`)
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"filtertest.u eq 4 && filtertest.flag", "filtertest.u == 4 and filtertest.flag"},
		{"(filtertest.u || filtertest.flag) && filtertest.s", "(filtertest.u or filtertest.flag) and filtertest.s"},
		{"filtertest.u || (filtertest.flag && filtertest.s)", "filtertest.u or filtertest.flag and filtertest.s"},
		{"!(filtertest.u && filtertest.s)", "not (filtertest.u and filtertest.s)"},
		{"filtertest.u in {1,2, 3..5}", "filtertest.u in {1 2 3..5}"},
		{`filtertest.s contains "a\"b"`, `filtertest.s contains "a\"b"`},
	}
	for _, tc := range tests {
		f, err := Compile(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("Compile(%q) succeeded, want error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.in, err)
		}
		if got := f.String(); got != tc.want {
			t.Errorf("Compile(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFields(t *testing.T) {
	t.Parallel()
	f, err := Compile("filtertest.u == 4 and filtertest.sub or filtertest.u")
	if err != nil {
		t.Fatal(err)
	}
	got := f.Fields()
	want := map[decode.FieldID]bool{ftUint: true, ftSubA: true, ftSubB: true}
	if len(got) != len(want) {
		t.Fatalf("Fields() = %v, want the IDs of %v", got, []string{"filtertest.u", "filtertest.sub.a", "filtertest.sub.b"})
	}
	for _, id := range got {
		if !want[id] {
			t.Errorf("Fields() has %d (%s), not read by the filter", id, decode.Def(id).Name)
		}
	}
	if f.Match(&decode.Record{IDs: []decode.FieldID{ftSubx}, Vals: []decode.Value{{U: 1}}}) {
		t.Error(`prefix "filtertest.sub" matched field filtertest.subx`)
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		col  int
		msg  string // substring of the message
	}{
		{"", 1, "empty filter"},
		{"   ", 4, "empty filter"},
		{"filtertest.u == 4 and smc.foo.bar", 23, `unknown field "smc.foo.bar"`},
		{"filtertest.u ==", 14, `expected value after "=="`},
		{"filtertest.u == and filtertest.s", 14, `expected value after "=="`},
		{"filtertest.u >", 14, `expected value after ">"`},
		{`filtertest.s == "abc`, 17, "unterminated string"},
		{`filtertest.s == "abc\`, 17, "unterminated string"},
		{`filtertest.s == "a\qb"`, 19, "bad escape"},
		{"(filtertest.u", 1, `unclosed "("`},
		{"((filtertest.u)", 1, `unclosed "("`},
		{"filtertest.u)", 13, `unexpected ")"`},
		{"(filtertest.u filtertest.s)", 15, `expected ")"`},
		{"filtertest.u filtertest.s", 14, `expected "and", "or"`},
		{`filtertest.u == "4"`, 17, "a string cannot be compared"},
		{"filtertest.u == abc", 17, `"abc" is not an unsigned number for filtertest.u`},
		{"filtertest.u == 99999999999999999999999", 17, "out of range"},
		{"filtertest.u == 010x", 17, "is not an unsigned number"},
		{"filtertest.flag == 2", 20, "not a boolean"},
		{"filtertest.flag > 0", 17, "can only be compared with == or !="},
		{"filtertest.addr == 10.10.0.300", 20, "is not an address"},
		{"filtertest.addr == fe80::1%eth0", 20, "is not an address"},
		{"filtertest.addr > 10.0.0.0/8", 19, "prefix can only be compared"},
		{"filtertest.mac == 52:54:00:0a:00", 19, "is not a MAC address"},
		{"filtertest.bytes == e2:d4x", 21, "is not a byte string"},
		{"filtertest.bytes == 0xe2d", 21, "is not a byte string"},
		{"filtertest.f == abc", 17, "is not a time in seconds since 1970"},
		{"filtertest.f == 1.0000000001", 17, "at most 9 decimals"},
		{"filtertest.u contains 4", 14, `"contains" needs a string or byte field`},
		{`filtertest.u matches "4"`, 14, `"matches" needs a string field`},
		{`filtertest.s matches abc`, 22, "quoted regular expression"},
		{`filtertest.s matches "a("`, 22, "bad regular expression"},
		{"filtertest.sub == 4", 1, "is a protocol, not a field"},
		{"filtertest.u in 4", 17, `expected "{"`},
		{"filtertest.u in {}", 17, "empty set"},
		{"filtertest.u in {1 2", 17, `unclosed "{"`},
		{"filtertest.u in {5..1}", 18, "empty range"},
		{"filtertest.u in {1 (}", 20, "in set"},
		{"filtertest.u = 4", 14, `comparison is "=="`},
		{"filtertest.u == 4 @", 19, "unexpected character"},
		{"and filtertest.u", 1, "keyword"},
		{"filtertest.u and", 17, "got end of filter"},
		{"42", 1, "expected a field name"},
		{"== 4", 1, "expected a field name"},
		{"not", 4, "end of filter"},
		{"é == 1", 1, "expected a field name"},
		{"FILTERTEST.u", 1, "unknown field"},                         // names are case-sensitive, keywords are not
		{"filtertest.s == \"é\" and x.y", 25, `unknown field "x.y"`}, // columns count runes
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := Compile(tc.expr)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error = %v, want *SyntaxError", tc.expr, err)
			}
			if se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("Compile(%q) = %q (col %d), want col %d and %q", tc.expr, se.Error(), se.Col, tc.col, tc.msg)
			}
			if want := "column "; !strings.HasPrefix(se.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", se.Error(), want)
			}
		})
	}
}

func TestCaret(t *testing.T) {
	t.Parallel()
	expr := "filtertest.u == 4 and\tsmc.foo"
	_, err := Compile(expr)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("want *SyntaxError, got %v", err)
	}
	want := expr + "\n" + strings.Repeat(" ", 21) + "\t^"
	if got := se.Caret(expr); got != want {
		t.Errorf("Caret =\n%s\nwant\n%s", got, want)
	}
	if se.Error() != `column 23: unknown field "smc.foo"` {
		t.Errorf("Error() = %q", se.Error())
	}
	end := (&SyntaxError{Col: 5, Msg: "x"}).Caret("ab")
	if end != "ab\n    ^" {
		t.Errorf("Caret past the end = %q", end)
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	rec := testRecord()
	for _, expr := range []string{
		"filtertest.u == 4 and filtertest.flag",
		"filtertest.sub or filtertest.never",
		`filtertest.s contains "LAB" and filtertest.bytes contains d4:c3`,
		`filtertest.s matches "^smc-.*-ueid$"`,
		"filtertest.addr == 10.10.0.0/16 and filtertest.addr in {10.10.0.2} and filtertest.mac == 52:54:00:0a:00:02",
		"not filtertest.u != 4 or filtertest.f > 1 or filtertest.u in {1..3}",
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { f.Match(rec) }); n != 0 {
			t.Errorf("Match(%q) allocates %v times per call", expr, n)
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	rec := testRecord()
	for _, bc := range []struct{ name, expr string }{
		{"presence", "filtertest.flag"},
		{"prefix", "filtertest.sub"},
		{"uint", "filtertest.hex == 0x03030002"},
		{"and-or", "filtertest.u == 5 or filtertest.hex == 0x03030002 and filtertest.flag"},
		{"set", "filtertest.u in {1 2 3 40..50}"},
		{"addr-prefix", "filtertest.addr == 10.10.0.0/16"},
		{"contains", `filtertest.s contains "UEID"`},
	} {
		f, err := Compile(bc.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f.Match(rec)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("filtertest.u == 4 and (filtertest.sub or not filtertest.addr == 10.10.0.0/16)"); err != nil {
			b.Fatal(err)
		}
	}
}

// copyLate is a Late that adds the fields of from, once, and counts how
// often it was asked.
type copyLate struct {
	from  *decode.Record
	asked int
}

func (l *copyLate) AppendLate(r *decode.Record) {
	if l.asked == 0 {
		r.IDs = append(r.IDs, l.from.IDs...)
		r.Vals = append(r.Vals, l.from.Vals...)
	}
	l.asked++
}

// TestMatchLate: the test fields are all the tracker's (decode.OwnerTrack),
// so MatchLate starts from an empty record and has them added by the first
// test that reads one; the result is Match's on the whole record, and a
// test that decides first keeps them from being added at all.
func TestMatchLate(t *testing.T) {
	full := testRecord()
	for _, tc := range []struct {
		expr  string
		asked bool
	}{
		{"filtertest.u == 4 and filtertest.flag", true},
		{"filtertest.never or not filtertest.sub", true},
		{"not (filtertest.u in {1..3} or filtertest.f > 1)", true},
		{"frame.number == 5 and filtertest.u", false},
		{"frame.number or filtertest.u", false},
		{"not frame.number or filtertest.u == 4", true},
		// A leading test without tracker fields (Filter.first): where it
		// fails the late fields are not asked for, where it holds the
		// rest decides, at any depth of the "and" chain.
		{"frame.number == 1 and filtertest.u == 4", true},
		{"frame.number == 1 and frame.number < 9 and filtertest.flag", true},
		{"frame.number == 2 and frame.number < 9 and filtertest.flag", false},
		{"(frame.number == 1 and filtertest.never) and frame.number", true},
		{"(frame.number == 3 or filtertest.u == 4) and filtertest.flag", true},
		{"filtertest.u == 5 and frame.number == 1", true},
	} {
		f, err := Compile(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		// frame.number is no tracker field: the record holds it already.
		var rec decode.Record
		rec.AddUint(fFrameNumberForTest(), 1)
		want := f.Match(withFrameNumber(full))
		late := &copyLate{from: full}
		// MayMatch reads the record without late fields; where it says
		// no, the filter fails on the whole record too.
		if !f.MayMatch(&rec) && want {
			t.Errorf("%q: MayMatch false where Match is true", tc.expr)
		}
		if got := f.MatchLate(&rec, late); got != want {
			t.Errorf("%q: MatchLate %v, Match %v", tc.expr, got, want)
		}
		if (late.asked > 0) != tc.asked {
			t.Errorf("%q: late fields asked for %d times", tc.expr, late.asked)
		}
		if n := testing.AllocsPerRun(100, func() {
			rec.IDs, rec.Vals, late.asked = rec.IDs[:1], rec.Vals[:1], 0
			f.MatchLate(&rec, late)
		}); n != 0 {
			t.Errorf("MatchLate(%q) allocates %v times per call", tc.expr, n)
		}
	}
}

// TestMayMatch: a filter whose leading "and" operand reads no tracker
// field and fails is ruled out before any late field; otherwise MayMatch
// cannot tell and says yes.
func TestMayMatch(t *testing.T) {
	var rec decode.Record
	rec.AddUint(fFrameNumberForTest(), 1)
	for expr, want := range map[string]bool{
		"frame.number == 2 and filtertest.flag":                     false,
		"frame.number == 2 and frame.number < 9 and filtertest.u":   false,
		"frame.number == 1 and filtertest.flag":                     true,
		"filtertest.flag and frame.number == 2":                     true, // leads with a late field
		"frame.number == 2 or filtertest.flag":                      true, // no "and" on top
		"frame.number == 2 and frame.number == 3":                   true, // no late field at all
		"(frame.number == 2 or filtertest.u) and frame.number == 1": true,
	} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.MayMatch(&rec); got != want {
			t.Errorf("%q: MayMatch %v, want %v", expr, got, want)
		}
	}
}

func fFrameNumberForTest() decode.FieldID {
	d, ok := decode.LookupField("frame.number")
	if !ok {
		// Registered by package capture, which capture_test.go links.
		panic("frame.number is not in the field catalogue")
	}
	return d.ID
}

// withFrameNumber is r after a frame.number of 1, as a decoded frame's
// record has it first.
func withFrameNumber(r *decode.Record) *decode.Record {
	var x decode.Record
	x.AddUint(fFrameNumberForTest(), 1)
	x.IDs = append(x.IDs, r.IDs...)
	x.Vals = append(x.Vals, r.Vals...)
	return &x
}

// TestFrameContains: "frame contains" and "frame matches" search the
// frame's bytes (decode.Record.Frame), with text, colon hex and 0x hex,
// combined with field tests; other comparisons on "frame" stay errors.
func TestFrameContains(t *testing.T) {
	var r decode.Record
	r.Frame = []byte("\x00\x01\xe2\xd4\xc3\xd9hello SMC\x02")
	for expr, want := range map[string]bool{
		`frame contains "hello"`:          true,
		`frame contains "bye"`:            false,
		`frame contains e2:d4:c3:d9`:      true,
		`frame contains 0xe2d4c3d9`:       true,
		`frame contains 0xe2d4c3da`:       false,
		`frame matches "HEL+O smc"`:       true,
		`not frame contains "hello"`:      false,
		`frame contains "SMC" or frame.x`: true,
	} {
		f, err := Compile(expr)
		if strings.Contains(expr, "frame.x") {
			if err == nil {
				t.Errorf("%s: compiled", expr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if !f.ReadsFrame() {
			t.Errorf("%s: ReadsFrame false", expr)
		}
		if got := f.Match(&r); got != want {
			t.Errorf("%s: %v, want %v", expr, got, want)
		}
		if g, err := Compile(f.String()); err != nil || g.Match(&r) != want {
			t.Errorf("%s: String %q does not compile back: %v", expr, f.String(), err)
		}
	}
	for _, expr := range []string{`frame == 1`, `frame contains`, `frame matches abc`, `frame contains xyz`} {
		if _, err := Compile(expr); err == nil {
			t.Errorf("%s: compiled", expr)
		}
	}
	if f, _ := Compile("frame.number == 1"); f.ReadsFrame() {
		t.Error("frame.number reads the frame's bytes")
	}
}

// TestEqual: the filter made from a field and its value (the browser's
// "apply as filter") compiles and matches that value, for every Kind, and
// no other value.
func TestEqual(t *testing.T) {
	for _, c := range []struct {
		name     string
		v, other decode.Value
	}{
		{"smc.clc.type", decode.Value{U: 4}, decode.Value{U: 1}},
		{"smc.clc.decline.reason", decode.Value{U: 0x03030000}, decode.Value{U: 0x03030001}},
		{"frame.number", decode.Value{U: 812}, decode.Value{U: 813}},
		{"tcp.flags.syn", decode.Value{U: 1}, decode.Value{U: 0}},
		{"frame.time_epoch", decode.Value{U: 1795330658893693924, Digits: 9}, decode.Value{U: 1795330658893700000, Digits: 9}},
		{"ip.src", decode.Value{A: netip.MustParseAddr("fd00:10::2")}, decode.Value{A: netip.MustParseAddr("fd00:10::1")}},
		{"eth.src", decode.Value{B: []byte{0x52, 0x54, 0, 0x0a, 0, 1}}, decode.Value{B: []byte{0x52, 0x54, 0, 0x0a, 0, 2}}},
		{"smc.clc.eid", decode.Value{S: "SMC \"EID\" \\ é\x01"}, decode.Value{S: "SMC"}},
		{"smc.clc.peer_id", decode.Value{B: []byte{0x23, 0x11}}, decode.Value{B: []byte{0x23}}},
	} {
		d, ok := decode.LookupField(c.name)
		if !ok {
			t.Fatalf("no field %s", c.name)
		}
		expr := Equal(d, c.v)
		f, err := Compile(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		var r decode.Record
		r.Add(d.ID, c.v)
		if !f.Match(&r) {
			t.Errorf("%s does not match its own value", expr)
		}
		r.Reset()
		r.Add(d.ID, c.other)
		if f.Match(&r) {
			t.Errorf("%s matches %+v", expr, c.other)
		}
	}
}
