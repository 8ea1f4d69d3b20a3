package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Label is one label of a sample.
type Label struct {
	Name, Value string
}

// Labels are a sample's labels sorted by name, as the API sends them: a
// series has a handful, and a slice of them costs a fraction of a map per
// sample over a fleet's tens of thousands.
type Labels []Label

// Get is the value of the named label, "" when the sample has none.
func (ls Labels) Get(name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

// answer is a decoded /api/v1/query response. Result holds the samples
// whose value is a number; ValueErr is the first that is not, which the
// caller reports only once the status and the result type are right.
type answer struct {
	Status, ErrorType, Error, ResultType string
	Result                               []Sample
	ValueErr                             error
}

// decodeAnswer decodes an API response: the decoder for what Prometheus
// writes, and encoding/json (decodeJSON) for anything the fast path does
// not take, so both give the same answer and the same errors for every
// input (FuzzDecodeAnswer checks it).
func decodeAnswer(b []byte) (answer, error) {
	// About one distinct label value to every 100 bytes of a fleet's
	// answers: the table does not grow, rehashing, as it fills.
	d := decoder{b: b, names: map[string]string{}, values: make(map[string]string, len(b)/100)}
	if a, ok := d.answer(); ok {
		return a, nil
	}
	return decodeJSON(b)
}

// decodeJSON is encoding/json's reading of an answer: the reference the
// fast path must agree with.
func decodeJSON(b []byte) (answer, error) {
	var env struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return answer{}, err
	}
	a := answer{Status: env.Status, ErrorType: env.ErrorType, Error: env.Error, ResultType: env.Data.ResultType}
	a.Result = make([]Sample, 0, len(env.Data.Result))
	for _, r := range env.Data.Result {
		s, ok := r.Value[1].(string)
		if !ok {
			if a.ValueErr == nil {
				a.ValueErr = errors.New("a sample without its value")
			}
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if a.ValueErr == nil {
				a.ValueErr = sampleValueError(s, err)
			}
			continue
		}
		var ls Labels
		for k, v := range r.Metric {
			ls = append(ls, Label{k, v})
		}
		slices.SortFunc(ls, func(x, y Label) int { return strings.Compare(x.Name, y.Name) })
		a.Result = append(a.Result, Sample{Labels: ls, Value: v})
	}
	return a, nil
}

func sampleValueError(s string, err error) error {
	return &valueError{s, err}
}

// valueError is a sample value that is not a number.
type valueError struct {
	s   string
	err error
}

func (e *valueError) Error() string {
	return "sample value " + strconv.Quote(e.s) + ": " + e.err.Error()
}
func (e *valueError) Unwrap() error { return e.err }

// decoder reads an answer in the one shape Prometheus writes (status,
// data with resultType and a result of metric and [timestamp, "value"]
// objects), interning label names and values: a fleet's answers repeat
// a few thousand strings over hundreds of thousands of labels. Anything
// else it declines (ok false) rather than guess at: a key in another
// case or written with escapes, a key twice, a type it does not expect,
// an exponent in a timestamp; encoding/json then decides. What it takes
// is strictly valid JSON.
type decoder struct {
	b             []byte
	i             int
	names, values map[string]string
	labels        []Label // the current sample's, reused
	// block holds the samples' labels, a few thousand to an allocation
	// rather than one each.
	block []Label
}

// answer decodes the whole input, or declines it.
func (d *decoder) answer() (a answer, ok bool) {
	d.ws()
	if !d.lit('{') {
		return a, false
	}
	var seen [4]bool
	ok = d.object(func(key []byte) bool {
		k, known := topKeys.index(key)
		if !known {
			return k == -1 && d.skip()
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		var s *string
		switch k {
		case 0:
			s = &a.Status
		case 1:
			s = &a.ErrorType
		case 2:
			s = &a.Error
		case 3:
			return d.data(&a)
		}
		v, ok := d.str(nil)
		*s = v
		return ok
	})
	if !ok {
		return a, false
	}
	if a.Result == nil {
		a.Result = []Sample{} // as encoding/json's reading makes it
	}
	d.ws()
	return a, d.i == len(d.b)
}

// data decodes the data object.
func (d *decoder) data(a *answer) bool {
	if !d.lit('{') {
		return false
	}
	var seen [2]bool
	return d.object(func(key []byte) bool {
		k, known := dataKeys.index(key)
		if !known {
			return k == -1 && d.skip()
		}
		if seen[k] {
			return false
		}
		seen[k] = true
		if k == 0 {
			v, ok := d.str(nil)
			a.ResultType = v
			return ok
		}
		return d.result(a)
	})
}

// result decodes the result array.
func (d *decoder) result(a *answer) bool {
	if !d.lit('[') {
		return false
	}
	a.Result = []Sample{}
	return d.array(func() bool {
		if !d.lit('{') {
			return false
		}
		var seen [2]bool
		var ls Labels
		var val []byte
		ok := d.object(func(key []byte) bool {
			k, known := sampleKeys.index(key)
			if !known || seen[k] {
				return false
			}
			seen[k] = true
			if k == 0 {
				var ok bool
				ls, ok = d.metric()
				return ok
			}
			var ok bool
			val, ok = d.value()
			return ok
		})
		if !ok || !seen[1] {
			return false
		}
		v, err := strconv.ParseFloat(string(val), 64)
		if err != nil {
			if a.ValueErr == nil {
				a.ValueErr = sampleValueError(string(val), err)
			}
			return true
		}
		a.Result = append(a.Result, Sample{Labels: ls, Value: v})
		return true
	})
}

// metric decodes a sample's labels: sorted by name as the API sends them
// (sorted here otherwise); a name twice is declined.
func (d *decoder) metric() (Labels, bool) {
	if !d.lit('{') {
		return nil, false
	}
	d.labels = d.labels[:0]
	ok := d.object(func(key []byte) bool {
		name, ok := d.intern(key, d.names)
		if !ok {
			return false
		}
		d.ws()
		v, ok := d.str(d.values)
		d.labels = append(d.labels, Label{name, v})
		return ok
	})
	if !ok {
		return nil, false
	}
	if len(d.labels) == 0 {
		return nil, true
	}
	if cap(d.block)-len(d.block) < len(d.labels) {
		d.block = make([]Label, 0, max(4096, len(d.labels)))
	}
	start := len(d.block)
	d.block = append(d.block, d.labels...)
	ls := Labels(d.block[start:len(d.block):len(d.block)])
	if !slices.IsSortedFunc(ls, func(x, y Label) int { return strings.Compare(x.Name, y.Name) }) {
		slices.SortStableFunc(ls, func(x, y Label) int { return strings.Compare(x.Name, y.Name) })
	}
	for i := 1; i < len(ls); i++ {
		if ls[i].Name == ls[i-1].Name {
			return nil, false
		}
	}
	return ls, true
}

// value decodes [timestamp, "value"] and returns the value's string.
func (d *decoder) value() ([]byte, bool) {
	if !d.lit('[') {
		return nil, false
	}
	d.ws()
	if !d.timestamp() {
		return nil, false
	}
	d.ws()
	if !d.lit(',') {
		return nil, false
	}
	d.ws()
	v, ok := d.strBytes()
	if !ok {
		return nil, false
	}
	d.ws()
	return v, d.lit(']')
}

// timestamp skips a number without an exponent: one float64 always holds
// (an exponent could overflow it, which encoding/json rejects).
func (d *decoder) timestamp() bool {
	i := d.i
	if i < len(d.b) && d.b[i] == '-' {
		i++
	}
	switch {
	case i < len(d.b) && d.b[i] == '0':
		i++
	case i < len(d.b) && d.b[i] >= '1' && d.b[i] <= '9':
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(d.b) && d.b[i] == '.' {
		i++
		start := i
		for i < len(d.b) && d.b[i] >= '0' && d.b[i] <= '9' {
			i++
		}
		if i == start {
			return false
		}
	}
	if i < len(d.b) && (d.b[i] == 'e' || d.b[i] == 'E') || i-d.i > 40 {
		return false
	}
	d.i = i
	return true
}

// object decodes the members of an object whose '{' was read: member is
// called with each key (the decoder at its value, after the colon) and
// decodes the value.
func (d *decoder) object(member func(key []byte) bool) bool {
	d.ws()
	if d.lit('}') {
		return true
	}
	for {
		d.ws()
		key, ok := d.rawKey()
		if !ok {
			return false
		}
		d.ws()
		if !d.lit(':') {
			return false
		}
		d.ws()
		if !member(key) {
			return false
		}
		d.ws()
		if d.lit('}') {
			return true
		}
		if !d.lit(',') {
			return false
		}
	}
}

// array decodes the elements of an array whose '[' was read.
func (d *decoder) array(elem func() bool) bool {
	d.ws()
	if d.lit(']') {
		return true
	}
	for {
		d.ws()
		if !elem() {
			return false
		}
		d.ws()
		if d.lit(']') {
			return true
		}
		if !d.lit(',') {
			return false
		}
	}
}

// rawKey reads a key: a string without escapes, in UTF-8 (one with
// escapes is declined: it could spell a known key).
func (d *decoder) rawKey() ([]byte, bool) {
	if !d.lit('"') {
		return nil, false
	}
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			k := d.b[start:d.i]
			d.i++
			return k, ascii || utf8.Valid(k)
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
		d.i++
	}
	return nil, false
}

// str reads a string value, interned in table when it is not nil.
func (d *decoder) str(table map[string]string) (string, bool) {
	b, ok := d.strBytes()
	if !ok {
		return "", false
	}
	return d.intern(b, table)
}

// strBytes reads a string value: its bytes in the input when it has no
// escapes and is ASCII, else as encoding/json unquotes it (which replaces
// bytes that are not UTF-8).
func (d *decoder) strBytes() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i
	d.i++
	plain := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			if plain {
				return d.b[start+1 : d.i-1], true
			}
			var s string
			if json.Unmarshal(d.b[start:d.i], &s) != nil {
				return nil, false
			}
			return []byte(s), true
		case c == '\\':
			plain = false
			d.i++ // the escaped byte; encoding/json checks the escape
		case c < 0x20:
			return nil, false
		case c >= 0x80:
			plain = false
		}
		d.i++
	}
	return nil, false
}

// intern is b as a string, the one already made for the same bytes when
// table has it; b must be UTF-8.
func (d *decoder) intern(b []byte, table map[string]string) (string, bool) {
	if table == nil {
		return string(b), true
	}
	if s, ok := table[string(b)]; ok {
		return s, true
	}
	if !utf8.Valid(b) {
		return "", false
	}
	s := string(b)
	table[s] = s
	return s, true
}

// skip skips any valid JSON value.
func (d *decoder) skip() bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		return d.object(func([]byte) bool { return d.skip() })
	case c == '[':
		d.i++
		return d.array(d.skip)
	case c == '"':
		_, ok := d.str(nil)
		return ok
	case c == 't':
		return d.word("true")
	case c == 'f':
		return d.word("false")
	case c == 'n':
		return d.word("null")
	default:
		return d.number()
	}
}

// number skips a JSON number.
func (d *decoder) number() bool {
	if !d.timestamp() {
		return false
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		start := d.i
		for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
			d.i++
		}
		return d.i > start
	}
	return true
}

func (d *decoder) word(w string) bool {
	if !bytes.HasPrefix(d.b[d.i:], []byte(w)) {
		return false
	}
	d.i += len(w)
	return true
}

// lit reads the byte c.
func (d *decoder) lit(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// ws skips JSON whitespace.
func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// keySet is the keys of one object the decoder knows.
type keySet []string

var (
	topKeys    = keySet{"status", "errorType", "error", "data"}
	dataKeys   = keySet{"resultType", "result"}
	sampleKeys = keySet{"metric", "value"}
)

// index is key's position in the set (known), or -1 for a key that is
// none of them in any case, or -2 for one that is one of them in another
// case, which encoding/json would take for it.
func (ks keySet) index(key []byte) (int, bool) {
	for i, k := range ks {
		if string(key) == k {
			return i, true
		}
	}
	for _, k := range ks {
		if bytes.EqualFold(key, []byte(k)) {
			return -2, false
		}
	}
	return -1, false
}
