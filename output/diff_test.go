package output

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output/zview"
)

// mutatedCapture writes a capture of frames of the Ethernet captures with
// bytes changed (header fields, lengths, opcodes), cut short or grown, so
// that the writers meet the frames decoders reject or misread.
func mutatedCapture(t *testing.T) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var out []rawFrame
	for _, path := range append(testutil.Samples(t), testutil.References(t)...) {
		fs, lt := testutil.ReadFrames(t, path)
		if lt != layers.LinkTypeEthernet {
			continue
		}
		for i := 0; i < 200 && len(fs) > 0; i++ {
			f := fs[rng.IntN(len(fs))]
			d := append([]byte(nil), f.Data...)
			switch rng.IntN(4) {
			case 0: // one byte of the headers
				d[rng.IntN(min(len(d), 80))] = byte(rng.Uint32())
			case 1: // a few bytes anywhere
				for range 1 + rng.IntN(4) {
					d[rng.IntN(len(d))] ^= byte(1 << rng.IntN(8))
				}
			case 2: // cut
				d = d[:rng.IntN(len(d)+1)]
			case 3: // padded
				d = append(d, make([]byte, 1+rng.IntN(20))...)
			}
			out = append(out, rawFrame{CI: f.CI, Data: d}) // writeFrames sets the lengths
		}
	}
	return writeFrames(t, "mutated.pcap", out)
}

// eachTrackedFrame calls fn for every frame of path with the tracker's
// fields in its record, as Run's loop with a full record demanded.
func eachTrackedFrame(t *testing.T, path string, fn func(f *capture.Frame, base time.Time)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr, err := zview.NewTracker(nil)
	if err != nil {
		t.Fatal(err)
	}
	var base time.Time
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if f.Number == 1 {
			base = f.CI.Timestamp
		}
		tr.Feed(f)
		tr.AppendFields(f, f.Fields())
		fn(f, base)
	}
}

// TestJSONAsReference: the JSON writer (one pass, keys made once, numbers
// and addresses by internal/numfmt) writes what a plain writer built on
// strconv, net and the field catalogue writes, frame by frame, on every
// capture and on mutated frames. Strings (escaped by appendJSONString)
// and the _summary line (AppendLine) come from the code under test on
// both sides: the golden files hold those.
//
// Each capture is written with the shapes of its records kept as the
// writer keeps them, with only two kept (the others written field by
// field, the two swapped to the front as frames of other shapes come),
// and with none.
func TestJSONAsReference(t *testing.T) {
	frames := 0
	for _, path := range append(testutil.AllCaptures(t), mutatedCapture(t)) {
		for _, shapes := range []int{maxJSONShapes, 2, 0} {
			var buf bytes.Buffer
			bw := bufio.NewWriter(&buf)
			var base time.Time
			p := newJSONPrinter(bw, false, false, &base)
			p.maxShapes = shapes
			eachTrackedFrame(t, path, func(f *capture.Frame, b time.Time) {
				base = b
				buf.Reset()
				if err := p.frame(f); err != nil {
					t.Fatal(err)
				}
				bw.Flush()
				want := refJSONLine(f, base)
				if buf.String() != want {
					t.Fatalf("%s, %d shapes kept, frame %d:\ngot  %s\nwant %s", path, shapes, f.Number, buf.String(), want)
				}
				frames++
			})
		}
	}
	if frames < 10000 {
		t.Errorf("only %d frames compared", frames)
	}
}

// refJSONLine is a -T jsonl line by the plainest means: the fields in the
// order of their first value, several values as an array.
func refJSONLine(f *capture.Frame, base time.Time) string {
	r := f.Fields()
	var order []decode.FieldID
	vals := map[decode.FieldID][]string{}
	for i, id := range r.IDs {
		if _, ok := vals[id]; !ok {
			order = append(order, id)
		}
		vals[id] = append(vals[id], refJSONValue(decode.Def(id), r.Vals[i]))
	}
	var b []byte
	b = append(b, '{')
	for _, id := range order {
		b = strconv.AppendQuote(b, decode.Def(id).Name) // names are plain ASCII
		b = append(b, ':')
		vs := vals[id]
		if len(vs) > 1 {
			b = append(b, '[')
		}
		for i, v := range vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, v...)
		}
		if len(vs) > 1 {
			b = append(b, ']')
		}
		b = append(b, ',')
	}
	b = append(b, `"_summary":[`...)
	for i := 0; i < max(1, len(f.CLC)); i++ {
		if i > 0 {
			b = append(b, ',')
		}
		clc := i
		if len(f.CLC) == 0 {
			clc = -1
		}
		line := AppendLine(nil, f, base, clc)
		b = appendJSONString(b, line[:len(line)-1])
	}
	return string(append(b, "]}\n"...))
}

func refJSONValue(d decode.FieldDef, v decode.Value) string {
	k := d.Kind
	if d.Named && d.Enum != nil && d.Enum(v.U) != "" {
		// Named fields are written by their enum name (decode.Names).
		b, _ := json.Marshal(d.Enum(v.U))
		return string(b)
	}
	switch k {
	case decode.KindUint:
		return strconv.FormatUint(v.U, 10)
	case decode.KindBool:
		return strconv.FormatBool(v.U != 0)
	case decode.KindTime:
		ns := int64(v.U)
		if v.Digits == 0 {
			return strconv.FormatInt(ns/1e9, 10)
		}
		return fmt.Sprintf("%d.%0*d", ns/1e9, v.Digits, ns%1e9/int64(math.Pow10(9-int(v.Digits))))
	case decode.KindAddr:
		if v.A.Is4() {
			return `"` + net.IP(v.A.AsSlice()).String() + `"`
		}
		return `"` + string(v.A.AppendTo(nil)) + `"`
	case decode.KindMAC:
		if len(v.B) == 6 {
			return `"` + net.HardwareAddr(v.B).String() + `"`
		}
		return `"` + hex.EncodeToString(v.B) + `"`
	case decode.KindBytes:
		return `"` + hex.EncodeToString(v.B) + `"`
	}
	return string(appendJSONString(nil, v.S))
}

// TestTextLineCache: the text printer's line (endpoints remembered from
// line to line) is AppendLine's, frame by frame, on every capture and on
// mutated frames.
func TestTextLineCache(t *testing.T) {
	frames := 0
	for _, path := range append(testutil.AllCaptures(t), mutatedCapture(t)) {
		var ends endpointCache
		var got, want []byte
		eachTrackedFrame(t, path, func(f *capture.Frame, base time.Time) {
			for clc := -1; clc < len(f.CLC); clc++ {
				if clc == -1 && len(f.CLC) > 0 {
					continue
				}
				got = appendLine(got[:0], f, base, clc, &ends)
				want = AppendLine(want[:0], f, base, clc)
				if string(got) != string(want) {
					t.Fatalf("%s frame %d:\ngot  %s\nwant %s", path, f.Number, got, want)
				}
			}
			frames++
		})
	}
	if frames < 10000 {
		t.Errorf("only %d frames compared", frames)
	}
}
