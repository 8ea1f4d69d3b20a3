// Package filter implements smcdump's -Y display filters: a Wireshark-like
// language evaluated against the fields a frame contributed to a
// decode.Record.
//
// Compile once, then Match every frame:
//
//	f, err := filter.Compile(`smc.clc.type == 4 and smc.clc.decline.reason == 0x03030002`)
//	if err != nil {
//		var se *filter.SyntaxError
//		if errors.As(err, &se) {
//			fmt.Fprintln(os.Stderr, se.Caret(expr))
//		}
//		return err
//	}
//	if f.Match(rec) { ... }
//
// # Language
//
//   - A field name alone tests presence; a protocol prefix (smc.cdc, roce,
//     tcp) tests whether any catalogue field under it is present.
//   - Wireshark's either-direction names eth.addr, ip.addr, tcp.port and
//     udp.port stand for the source and destination fields ("ip.addr !=
//     a": there is an address and neither is a).
//   - Comparisons: == != ~= < <= > >= (also eq ne any_ne lt le gt ge) and
//     contains (strings and byte strings), matches (a quoted Go regular
//     expression against a string field, case-insensitive unless it starts
//     with (?-i), as in Wireshark).
//   - "frame contains" searches the frame's bytes for a byte string
//     ("SMCR", e2:d4:c3:d9 or 0xe2d4c3d9), "frame matches" for a quoted
//     regular expression, as in Wireshark; the caller sets
//     decode.Record.Frame (Filter.ReadsFrame).
//   - Sets: field in {1 2 0x10 20..30}; commas are optional; ranges are
//     for numbers.
//   - Logic: and &&, or ||, not !, parentheses. "not" binds tightest, then
//     "and", then "or".
//   - Literals are read in the Kind of the field they are compared with:
//     decimal or 0x numbers (a leading 0 is decimal, there is no octal),
//     enum names where the field has one, 1/0/true/false, "strings" with \"
//     \\ \n \t \xHH escapes, addresses (10.10.0.1, fe80::1, a GID such as
//     ::ffff:10.10.0.1) or CIDR prefixes (10.10.0.0/16), MACs
//     (52:54:00:0a:00:01) and byte strings (e2:d4:c3:d9 or 0xe2d4c3d9).
//     An IPv4 literal also matches the IPv4-mapped GID of the same host.
//
// # Multi-valued fields
//
// A field may occur several times in a frame. As in Wireshark 4, a
// comparison holds if any occurrence satisfies it, except "!=", which holds
// when the field is present and no occurrence equals the value (it is "not
// =="); "~=" is the "any occurrence differs" form. Every comparison on an
// absent field is false.
//
// # Allocation
//
// Match does not allocate: Compile resolves names to decode.FieldIDs and
// literals to decode.Values, and Match walks the record's parallel slices.
package filter
