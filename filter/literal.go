package filter

import (
	"strconv"

	"github.com/smcscope/smcscope/decode"
)

// Equal returns the filter that selects frames where field d has value v
// ("smc.clc.type == 0x4"): what the capture browser applies or prepares
// for a field of the tree, as Wireshark's "Apply as Filter" does. Compiled,
// it matches a record that holds v for d.
func Equal(d decode.FieldDef, v decode.Value) string {
	return d.Name + " == " + string(AppendLiteral(nil, d, v))
}

// AppendLiteral appends v as a literal of d's Kind that parses back to v:
// numbers in the base the tree shows them in, strings quoted with the
// lexer's escapes, bytes and MACs in colon hex.
func AppendLiteral(dst []byte, d decode.FieldDef, v decode.Value) []byte {
	const digits = "0123456789abcdef"
	switch d.Kind {
	case decode.KindUint:
		if d.Hex {
			return strconv.AppendUint(append(dst, "0x"...), v.U, 16)
		}
		return strconv.AppendUint(dst, v.U, 10)
	case decode.KindBool:
		if v.U != 0 {
			return append(dst, '1')
		}
		return append(dst, '0')
	case decode.KindTime:
		return decode.AppendTime(dst, int64(v.U), v.Digits)
	case decode.KindAddr:
		return v.A.AppendTo(dst)
	case decode.KindBytes, decode.KindMAC:
		if len(v.B) == 0 {
			return append(dst, `""`...)
		}
		for i, c := range v.B {
			if i > 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, digits[c>>4], digits[c&15])
		}
		return dst
	}
	dst = append(dst, '"')
	for i := 0; i < len(v.S); i++ {
		switch c := v.S[i]; {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20 || c > 0x7e:
			dst = append(dst, '\\', 'x', digits[c>>4], digits[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
