package decode

import (
	"net/netip"
	"sort"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/smcscope/smcscope/internal/numfmt"
	"github.com/smcscope/smcscope/internal/textcache"
)

// Kind says how a field's value is stored, compared and printed.
type Kind uint8

const (
	KindUint   Kind = iota // unsigned integer (Value.U)
	KindBool               // 0/1 (Value.U)
	KindString             // text (Value.S)
	KindBytes              // raw bytes (Value.B), printed as hex
	KindAddr               // IPv4/IPv6 address or GID (Value.A)
	KindMAC                // 6-byte MAC (Value.B)
	// KindTime is an absolute time: Value.U holds Unix nanoseconds (an
	// int64) and Value.Digits the decimal places its source resolves
	// (6 for a microsecond pcap, 9 for nanoseconds), e.g. frame.time_epoch.
	// It is printed with exactly those decimals and compared as an integer:
	// a float64 of the seconds cannot tell nanoseconds apart at today's
	// times (its step is 238 ns) and gives a microsecond time false digits.
	KindTime
)

var kindNames = [...]string{"uint", "bool", "string", "bytes", "address", "mac", "time"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// FieldID is the catalogue index of a field; comparing IDs is how the hot
// path avoids string work.
type FieldID uint16

// FieldDef describes one field of the catalogue behind -G fields, -e and -Y.
type FieldDef struct {
	ID FieldID
	// Owner is what fills the field: the layer, the frame reader or the
	// tracker. Demand-driven decoding and the -V headings read it.
	Owner Owner
	Name  string // stable contract, e.g. "smc.cdc.prod.count"
	Kind  Kind
	Desc  string
	// Hex asks the -V tree to show the number in hex (fields output stays decimal).
	Hex bool
	// HexDigits zero-pads the hex form, so codes read as the kernel writes them (0x03030002).
	HexDigits int
	// Enum, when set, names a numeric value (e.g. a decline code), for -V and text lines.
	Enum func(uint64) string
	// Parse, when set, reads the names a filter may give for a value
	// (other spellings than Enum's, e.g. Wireshark's "warning"); see Names.
	Parse func(string) (uint64, bool)
	// Named: the value is written as its Enum name in -T json and -T
	// fields, the spelling the -z views use ("warn", not 3); filters
	// still compare the number, so that order means something.
	Named bool
	// Places say where the field's bytes sit in its layer (At; see
	// Locate); none when it has no fixed place there.
	Places []Place
	// Wireshark is Wireshark's name for the same value where it differs
	// (tcp.flags.reset, infiniband.bth.psn); filters, -e and columns
	// accept it, so a display filter carried over from Wireshark works.
	Wireshark string
}

// FieldOpt adjusts a FieldDef at registration.
type FieldOpt func(*FieldDef)

// Hex shows the value in hex in the -V tree.
func Hex() FieldOpt { return func(d *FieldDef) { d.Hex = true } }

// HexN shows the value in hex zero-padded to n digits in the -V tree.
func HexN(n int) FieldOpt { return func(d *FieldDef) { d.Hex, d.HexDigits = true, n } }

// WiresharkName gives the field Wireshark's name for the same value as a
// second spelling (FieldDef.Wireshark).
func WiresharkName(name string) FieldOpt { return func(d *FieldDef) { d.Wireshark = name } }

// Enum attaches a namer for numeric values.
func Enum(f func(uint64) string) FieldOpt { return func(d *FieldDef) { d.Enum = f } }

// ParseNames lets parse read names a filter may give beside the enum's
// (an older or another tool's spelling).
func ParseNames(parse func(string) (uint64, bool)) FieldOpt {
	return func(d *FieldDef) { d.Parse = parse }
}

// Names makes the enum name the value's spelling in -T json and -T fields
// (FieldDef.Named) and lets parse read the names filters give.
func Names(parse func(string) (uint64, bool)) FieldOpt {
	return func(d *FieldDef) { d.Named, d.Parse = true, parse }
}

// AppendOut appends v as -T json and -T fields write it: the enum name of
// a Named field (when it has one), else Value.Append.
func (d *FieldDef) AppendOut(dst []byte, v *Value) []byte {
	if d.Named && d.Enum != nil {
		if n := d.Enum(v.U); n != "" {
			return append(dst, n...)
		}
	}
	return v.Append(dst, d.Kind)
}

// The catalogue is written only by package initialisation (Field calls in
// package-level var blocks, which Go runs on one goroutine before main),
// like gopacket's layer-type registry, and is immutable afterwards: the
// read path takes no lock.
var catalogue struct {
	defs   []FieldDef
	byName map[string]FieldID
}

// Field registers a field and the owner that fills it, and returns its ID.
// It must be called only from package-level var blocks (initialisation);
// a duplicate name or a missing owner is a programming error and panics at
// start-up.
func Field(owner Owner, name string, k Kind, desc string, opts ...FieldOpt) FieldID {
	if owner == OwnerUnknown || owner >= NumOwners {
		panic("decode: field without an owner: " + name)
	}
	if catalogue.byName == nil {
		catalogue.byName = make(map[string]FieldID)
	}
	if _, dup := catalogue.byName[name]; dup {
		panic("decode: field registered twice: " + name)
	}
	id := FieldID(len(catalogue.defs))
	d := FieldDef{ID: id, Owner: owner, Name: name, Kind: k, Desc: desc}
	for _, o := range opts {
		o(&d)
	}
	catalogue.defs = append(catalogue.defs, d)
	catalogue.byName[name] = id
	if d.Wireshark != "" {
		if _, dup := catalogue.byName[d.Wireshark]; dup {
			panic("decode: field registered twice: " + d.Wireshark)
		}
		catalogue.byName[d.Wireshark] = id
	}
	return id
}

// LookupField finds a field by its name or its Wireshark name; the
// definition returned carries the catalogue's name.
func LookupField(name string) (FieldDef, bool) {
	id, ok := catalogue.byName[name]
	if !ok {
		return FieldDef{}, false
	}
	return catalogue.defs[id], true
}

// Def returns the definition of a registered field.
func Def(id FieldID) FieldDef {
	return catalogue.defs[id]
}

// Fields returns every registered field sorted by name.
func Fields() []FieldDef {
	out := append([]FieldDef(nil), catalogue.defs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Value is one field value. Which member is meaningful depends on the
// field's Kind. B may alias packet bytes: copy it to keep it past the frame.
type Value struct {
	U      uint64
	Digits uint8 // KindTime: decimal places of the time in U
	S      string
	B      []byte
	A      netip.Addr
}

// Format renders v the way -T fields prints it: numbers in decimal,
// booleans 0/1, addresses in their usual text form, bytes as hex.
func (v Value) Format(k Kind) string {
	return string(v.Append(nil, k))
}

// Append is Format without allocating a new string.
func (v *Value) Append(dst []byte, k Kind) []byte {
	switch k {
	case KindUint, KindBool:
		return numfmt.AppendUint(dst, v.U)
	case KindString:
		return appendText(dst, v.S)
	case KindBytes:
		return numfmt.AppendHexBytes(dst, v.B)
	case KindAddr:
		if v.A.Is4() { // every address of an IPv4 capture: the general path is slower
			return numfmt.AppendIPv4(dst, v.A.As4())
		}
		return v.A.AppendTo(dst)
	case KindMAC:
		if len(v.B) == 6 {
			for i, c := range v.B {
				if i > 0 {
					dst = append(dst, ':')
				}
				dst = append(dst, lowerHex[c>>4], lowerHex[c&15])
			}
			return dst
		}
		return numfmt.AppendHexBytes(dst, v.B)
	case KindTime:
		return AppendTime(dst, int64(v.U), v.Digits)
	}
	return dst
}

// appendText appends s, a string that may come off the wire (an EID, a
// host name), with every byte that is not part of a printable UTF-8
// character written \xNN, and a backslash \\: a control character
// would act on the terminal that shows it (an escape sequence) or break
// a -T fields line (a tab, a newline). Text of ours passes unchanged.
func appendText(dst []byte, s string) []byte {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\\' {
		i++
	}
	if i == len(s) {
		return append(dst, s...)
	}
	dst = append(dst, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case s[i] == '\\':
			dst = append(dst, '\\', '\\')
		case r == utf8.RuneError && n <= 1 || !unicode.IsPrint(r):
			for _, b := range []byte(s[i : i+max(n, 1)]) {
				dst = append(dst, '\\', 'x', lowerHex[b>>4], lowerHex[b&15])
			}
		default:
			dst = append(dst, s[i:i+n]...)
		}
		i += max(n, 1)
	}
	return dst
}

// pow10 are the divisors that cut nanoseconds to fewer decimals.
var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// AppendTime appends a time of ns Unix nanoseconds as seconds with digits
// decimals (at most 9; none and no point for 0), by integer arithmetic:
// 1795336493.775685 for a microsecond capture, as the file holds it.
// Finer digits than asked are cut, not rounded (a time that ns holds at
// the resolution digits says has none).
func AppendTime(dst []byte, ns int64, digits uint8) []byte {
	u := uint64(ns)
	if ns < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = numfmt.AppendUint(dst, u/1e9)
	if digits == 0 {
		return dst
	}
	digits = min(digits, 9)
	return numfmt.AppendPadded(append(dst, '.'), u%1e9/pow10[9-digits], int(digits))
}

// Display renders v for the -V tree and text lines: hex where the field asks
// for it, plus the enum name when there is one.
func (v Value) Display(d FieldDef) string { return string(v.AppendDisplay(nil, d)) }

// AppendDisplay is Display without allocating a new string (-V writes one
// for every field of every frame).
func (v *Value) AppendDisplay(dst []byte, d FieldDef) []byte {
	if d.Kind == KindUint && d.Hex {
		dst = numfmt.AppendHexPadded(append(dst, "0x"...), v.U, d.HexDigits)
	} else {
		dst = v.Append(dst, d.Kind)
	}
	if d.Enum != nil {
		if n := d.Enum(v.U); n != "" {
			dst = append(append(append(dst, " ("...), n...), ')')
		}
	}
	return dst
}

// Record collects the fields of one frame (or one tracker object). It is
// reused from frame to frame: Reset keeps the backing arrays.
type Record struct {
	IDs  []FieldID
	Vals []Value
	// Want, when non-nil, keeps only the fields marked true. Layers add all
	// their fields regardless; dropping the unwanted ones here is cheaper than
	// teaching every layer the demand, and -T fields asks for a handful.
	Want []bool
	// Frame is the frame's bytes, which a filter's "frame contains" and
	// "frame matches" search; the caller that matches such a filter
	// (filter.Filter.ReadsFrame) sets it for each frame.
	Frame []byte

	// texts hands out the strings of AddText: the EIDs and hostnames of
	// CLC messages repeat from handshake to handshake, and a string per
	// message was the garbage that made memory grow with a capture of
	// many short connections.
	texts textcache.Cache
}

// WantOnly limits the record to ids (nil: every field).
func (r *Record) WantOnly(ids []FieldID) {
	if ids == nil {
		r.Want = nil
		return
	}
	max := 0
	for _, id := range ids {
		if int(id) >= max {
			max = int(id) + 1
		}
	}
	r.Want = make([]bool, max)
	for _, id := range ids {
		r.Want[id] = true
	}
}

// Reset empties the record, keeping its memory.
func (r *Record) Reset() {
	r.IDs = r.IDs[:0]
	r.Vals = r.Vals[:0]
}

// addCaptured adds a message's fields with add and, when the snap length
// cut it (cut), drops those added past what the capture holds of it.
func (r *Record) addCaptured(cut bool, captured []byte, add func(*Record)) {
	from := len(r.IDs)
	add(r)
	if cut {
		r.dropUncaptured(from, captured)
	}
}

// dropUncaptured removes the fields added from index from on whose place
// does not lie wholly in layer, what the capture holds of a message its
// snap length cut (FieldDef.Locate, occurrence by occurrence; a place
// counted from the layer's end lies past the cut); a field with no place
// (computed) stays.
func (r *Record) dropUncaptured(from int, layer []byte) {
	var seen map[FieldID]int
	j := from
	for i := from; i < len(r.IDs); i++ {
		id := r.IDs[i]
		if d := Def(id); len(d.Places) > 0 {
			if seen == nil {
				seen = map[FieldID]int{}
			}
			k := seen[id]
			seen[id] = k + 1
			// A place counted from the end (a trailer) is past the cut.
			if p, _, ok := d.Locate(layer, k); !ok || p.Off < 0 {
				continue
			}
		}
		r.IDs[j], r.Vals[j] = id, r.Vals[i]
		j++
	}
	r.IDs, r.Vals = r.IDs[:j], r.Vals[:j]
}

// drops reports whether Want leaves id out.
func (r *Record) drops(id FieldID) bool {
	return r.Want != nil && (int(id) >= len(r.Want) || !r.Want[id])
}

// Add appends one value.
func (r *Record) Add(id FieldID, v Value) {
	if r.drops(id) {
		return
	}
	r.put(id)
	r.Vals[len(r.Vals)-1] = v
}

// put appends id with a zero value, for the typed adders to fill in place:
// building a whole Value and copying it in cost more than the rest of a
// numeric field's way into the record.
func (r *Record) put(id FieldID) *Value {
	r.IDs = append(r.IDs, id)
	if n := len(r.Vals); n < cap(r.Vals) {
		r.Vals = r.Vals[:n+1]
		r.Vals[n] = Value{}
	} else {
		r.Vals = append(r.Vals, Value{})
	}
	return &r.Vals[len(r.Vals)-1]
}

// AddUint appends a numeric value. Most values of a full record are
// numbers: with room in both slices and no Want, it stores the value in
// place, without drops and put's checks.
func (r *Record) AddUint(id FieldID, u uint64) {
	n := len(r.IDs)
	if r.Want == nil && n < cap(r.IDs) && n < cap(r.Vals) {
		r.IDs = r.IDs[:n+1]
		r.IDs[n] = id
		r.Vals = r.Vals[:n+1]
		r.Vals[n] = Value{U: u}
		return
	}
	r.addUint(id, u)
}

func (r *Record) addUint(id FieldID, u uint64) {
	if !r.drops(id) {
		r.put(id).U = u
	}
}

// AddBool appends a boolean as 0/1.
func (r *Record) AddBool(id FieldID, b bool) {
	var u uint64
	if b {
		u = 1
	}
	r.AddUint(id, u)
}

// AddString appends text.
func (r *Record) AddString(id FieldID, s string) {
	if !r.drops(id) {
		r.put(id).S = s
	}
}

// AddText appends wire bytes as text. The string is only made when the
// field is kept, so a Want-limited record does not allocate for it, and
// not again when it equals one of the last few texts.
func (r *Record) AddText(id FieldID, b []byte) {
	if !r.drops(id) {
		r.put(id).S = r.texts.String(b)
	}
}

// AddBytes appends raw bytes (aliasing b) for KindBytes and KindMAC fields.
func (r *Record) AddBytes(id FieldID, b []byte) {
	if !r.drops(id) {
		r.put(id).B = b
	}
}

// AddAddr appends an address or GID.
func (r *Record) AddAddr(id FieldID, a netip.Addr) {
	if !r.drops(id) {
		r.put(id).A = a
	}
}

// AddTime appends a time of ns Unix nanoseconds resolved to digits
// decimal places (KindTime).
func (r *Record) AddTime(id FieldID, ns int64, digits uint8) {
	if !r.drops(id) {
		v := r.put(id)
		v.U, v.Digits = uint64(ns), digits
	}
}

// First returns the first value of id in the record.
func (r *Record) First(id FieldID) (Value, bool) {
	for i, x := range r.IDs {
		if x == id {
			return r.Vals[i], true
		}
	}
	return Value{}, false
}

// Has reports whether id occurs in the record.
func (r *Record) Has(id FieldID) bool {
	for _, x := range r.IDs {
		if x == id {
			return true
		}
	}
	return false
}

// FieldAppender is implemented by every layer and tracker object that
// contributes fields.
type FieldAppender interface {
	AppendFields(r *Record)
}
