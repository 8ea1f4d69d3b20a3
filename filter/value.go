package filter

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"math"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/decode"
)

// literal is a filter constant already converted to the Kind of the field
// it is compared with, so that Match does no parsing.
type literal struct {
	v decode.Value
	// hi is the upper bound of a range (only inside "in {lo..hi}").
	hi      decode.Value
	isRange bool
	// prefix is set for an address literal written as a CIDR prefix; it
	// matches by containment.
	prefix   netip.Prefix
	isPrefix bool
	// re is the compiled pattern of "matches".
	re *regexp.Regexp
}

// enumScanLimit bounds the search of an enum name at compile time; the
// catalogue's enums (CLC/LLC types, BTH opcodes, AETH syndromes) are small,
// and a 32-bit code (decline reasons) is written as a number anyway.
const enumScanLimit = 0x10000

// parseLiteral converts tok to a value of def's Kind; allowRange admits
// "lo..hi" (only inside a set).
func parseLiteral(def decode.FieldDef, tok token, allowRange bool) (literal, string) {
	s := tok.text
	quoted := tok.kind == tString
	switch def.Kind {
	case decode.KindUint:
		if quoted {
			// A quoted name of an enum field: smc.expert.severity == "warn".
			if u, ok := lookupName(def, s); ok {
				return literal{v: decode.Value{U: u}}, ""
			}
			return literal{}, "a string cannot be compared with " + kindPhrase(def)
		}
		if lo, hi, ok := strings.Cut(s, ".."); ok && allowRange {
			a, ok1, _ := parseUint(lo)
			b, ok2, _ := parseUint(hi)
			if !ok1 || !ok2 {
				return literal{}, strconv.Quote(s) + " is not a valid range of numbers for " + def.Name
			}
			if a > b {
				return literal{}, "empty range " + strconv.Quote(s)
			}
			return literal{v: decode.Value{U: a}, hi: decode.Value{U: b}, isRange: true}, ""
		}
		u, ok, why := parseUint(s)
		if !ok {
			if u, ok := lookupName(def, s); ok {
				return literal{v: decode.Value{U: u}}, ""
			}
			return literal{}, strconv.Quote(s) + " is not " + kindPhrase(def) + why
		}
		return literal{v: decode.Value{U: u}}, ""
	case decode.KindBool:
		if !quoted {
			switch strings.ToLower(s) {
			case "1", "true":
				return literal{v: decode.Value{U: 1}}, ""
			case "0", "false":
				return literal{v: decode.Value{U: 0}}, ""
			}
		}
		return literal{}, tok.describe() + " is not a boolean (1, 0, true, false) for " + def.Name
	case decode.KindTime:
		if quoted {
			return literal{}, "a string cannot be compared with " + kindPhrase(def)
		}
		if lo, hi, ok := strings.Cut(s, ".."); ok && allowRange {
			a, ok1, why1 := parseTime(lo)
			b, ok2, why2 := parseTime(hi)
			if !ok1 || !ok2 {
				return literal{}, strconv.Quote(s) + " is not a valid range of times for " + def.Name + why1 + why2
			}
			if a > b {
				return literal{}, "empty range " + strconv.Quote(s)
			}
			return literal{v: decode.Value{U: uint64(a)}, hi: decode.Value{U: uint64(b)}, isRange: true}, ""
		}
		ns, ok, why := parseTime(s)
		if !ok {
			return literal{}, strconv.Quote(s) + " is not " + kindPhrase(def) + why
		}
		return literal{v: decode.Value{U: uint64(ns)}}, ""
	case decode.KindString:
		// Bare words are accepted too, as Wireshark does for string fields.
		return literal{v: decode.Value{S: s}}, ""
	case decode.KindBytes:
		if quoted {
			return literal{v: decode.Value{B: []byte(s)}}, ""
		}
		b, ok := parseBytes(s)
		if !ok {
			return literal{}, strconv.Quote(s) + " is not " + kindPhrase(def) + " (write e2:d4:c3:d9 or 0xe2d4c3d9)"
		}
		return literal{v: decode.Value{B: b}}, ""
	case decode.KindMAC:
		b, ok := parseBytes(s)
		if quoted || !ok || len(b) != 6 {
			return literal{}, tok.describe() + " is not " + kindPhrase(def) + " (write 52:54:00:0a:00:01)"
		}
		return literal{v: decode.Value{B: b}}, ""
	case decode.KindAddr:
		if !quoted {
			if strings.Contains(s, "/") {
				if p, err := netip.ParsePrefix(s); err == nil {
					return literal{prefix: p.Masked(), isPrefix: true}, ""
				}
			} else if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
				return literal{v: decode.Value{A: a}}, ""
			}
		}
		return literal{}, tok.describe() + " is not " + kindPhrase(def) + " (write 10.10.0.1, fe80::1, ::ffff:10.10.0.1 or 10.10.0.0/16)"
	}
	return literal{}, "field " + def.Name + " has kind " + def.Kind.String() + ", which filters cannot compare"
}

// kindPhrase says what a field holds, for "x is not ..." messages.
func kindPhrase(def decode.FieldDef) string {
	switch def.Kind {
	case decode.KindUint:
		return "an unsigned number for " + def.Name
	case decode.KindTime:
		return "a time in seconds since 1970 (at most 9 decimals) for " + def.Name
	case decode.KindBytes:
		return "a byte string for " + def.Name
	case decode.KindMAC:
		return "a MAC address for " + def.Name
	case decode.KindAddr:
		return "an address for " + def.Name
	}
	return "a " + def.Kind.String() + " for " + def.Name
}

// parseUint reads decimal or 0x-hex. A leading 0 is decimal, not octal:
// protocol documents write 010 meaning ten far more often than eight.
func parseUint(s string) (u uint64, ok bool, why string) {
	base := 10
	digits := s
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		base, digits = 16, s[2:]
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, false, " (out of range)"
	}
	return u, err == nil, ""
}

// parseTime reads seconds since 1970 with up to nine decimals (as tshark
// reads an epoch time) as Unix nanoseconds, exactly: 1795336493.775685
// is 1795336493775685000 ns, which a float64 could not say.
func parseTime(s string) (ns int64, ok bool, why string) {
	neg := strings.HasPrefix(s, "-")
	sec, frac, dot := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if sec == "" || dot && frac == "" || strings.Trim(sec+frac, "0123456789") != "" {
		return 0, false, ""
	}
	if len(frac) > 9 {
		return 0, false, " (at most 9 decimals: frame times are whole nanoseconds)"
	}
	u, err := strconv.ParseUint(sec, 10, 64)
	if err != nil || u >= math.MaxInt64/1_000_000_000 {
		return 0, false, " (out of range)"
	}
	f, _ := strconv.ParseUint(frac+"000000000"[len(frac):], 10, 64)
	ns = int64(u)*1e9 + int64(f)
	if neg {
		ns = -ns
	}
	return ns, true, ""
}

// lookupName reads a value's name: the field's own reader of names
// (decode.FieldDef.Parse, which knows other spellings), then its enum.
func lookupName(def decode.FieldDef, name string) (uint64, bool) {
	if def.Parse != nil {
		if u, ok := def.Parse(name); ok {
			return u, true
		}
	}
	if def.Enum != nil {
		return lookupEnum(def, name)
	}
	return 0, false
}

func lookupEnum(def decode.FieldDef, name string) (uint64, bool) {
	for v := uint64(0); v < enumScanLimit; v++ {
		if n := def.Enum(v); n != "" && strings.EqualFold(n, name) {
			return v, true
		}
	}
	return 0, false
}

// parseBytes reads a byte string: 0xe2d4c3d9, e2d4c3d9, or bytes of one or
// two hex digits separated by ':', '-' or '.' (e2:d4:c3:d9, 52-54-00-0a-00-01).
func parseBytes(s string) ([]byte, bool) {
	if s == "" {
		return nil, false
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s = s[2:]
		b, err := hex.DecodeString(s)
		return b, err == nil && len(b) > 0
	}
	sep := byte(0)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ':' || c == '-' || c == '.' {
			sep = c
			break
		}
	}
	if sep == 0 {
		b, err := hex.DecodeString(s)
		return b, err == nil
	}
	var out []byte
	for part := range strings.SplitSeq(s, string(sep)) {
		if len(part) == 0 || len(part) > 2 {
			return nil, false
		}
		v, err := strconv.ParseUint(part, 16, 8)
		if err != nil {
			return nil, false
		}
		out = append(out, byte(v))
	}
	return out, true
}

// compareValue orders v against the literal by the field's Kind. It must
// not allocate: it runs once per field value per frame.
func compareValue(k decode.Kind, v, lit *decode.Value) int {
	switch k {
	case decode.KindUint, decode.KindBool:
		return cmp.Compare(v.U, lit.U)
	case decode.KindTime:
		// Exact: Unix nanoseconds on both sides.
		return cmp.Compare(int64(v.U), int64(lit.U))
	case decode.KindString:
		return strings.Compare(v.S, lit.S)
	case decode.KindBytes, decode.KindMAC:
		return bytes.Compare(v.B, lit.B)
	case decode.KindAddr:
		// An IPv4 literal matches its IPv4-mapped form, which is how
		// RoCEv2 GIDs carry IPv4 addresses (::ffff:10.10.0.1).
		return v.A.Unmap().Compare(lit.A.Unmap())
	}
	return -1
}

// equalLiteral reports whether v equals (or, for a prefix, lies in) lit.
func equalLiteral(k decode.Kind, v *decode.Value, lit *literal) bool {
	if lit.isPrefix {
		return lit.prefix.Contains(v.A) || lit.prefix.Contains(v.A.Unmap())
	}
	if lit.isRange {
		return compareValue(k, v, &lit.v) >= 0 && compareValue(k, v, &lit.hi) <= 0
	}
	return compareValue(k, v, &lit.v) == 0
}
