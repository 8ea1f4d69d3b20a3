package decode

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
)

// FuzzCLC checks that no input panics, that an error leaves no partial
// result, and that a decoded message is self-consistent and decodes the
// same way again from its own Contents.
func FuzzCLC(f *testing.F) {
	for _, msg := range clcEveryCaptured(f) {
		f.Add(msg)
		f.Add(msg[:len(msg)*2/3]) // as the snap length cuts it
	}
	f.Add(testCLCDeclineV2Short) // Linux 5.10-5.15
	f.Fuzz(func(t *testing.T, data []byte) {
		var c CLC
		var fb clcTruncFeedback
		err := c.DecodeFromBytes(data, &fb)
		// DecodePartial gives the same verdict; what it keeps of a
		// refused message is framed by its length and shows without
		// panicking.
		var p CLC
		ok, perr := p.DecodePartial(data)
		if (perr == nil) != (err == nil) || (err != nil && perr.Error() != err.Error()) {
			t.Fatalf("DecodePartial error %v, DecodeFromBytes %v", perr, err)
		}
		if ok {
			if l := int(p.Length); len(p.Contents) != l || !bytes.Equal(p.Contents, data[:l]) || (perr != nil) != (p.Malformed != nil) {
				t.Fatalf("partial contents %d bytes for length %d, malformed %v", len(p.Contents), l, p.Malformed)
			}
			var r Record
			p.AppendFields(&r)
			_ = p.AppendSummary(nil)
		} else if !reflect.DeepEqual(p, CLC{}) {
			t.Fatalf("nothing framed, yet %+v", p)
		}
		// The same bytes as the start of a message the snap length cut:
		// what is decoded of it shows without panicking.
		var k CLC
		if ok, err := k.DecodeCut(data); ok {
			if err != nil || k.Cut != len(data) {
				t.Fatalf("DecodeCut: ok with error %v, cut %d of %d", err, k.Cut, len(data))
			}
			var r Record
			k.AppendFields(&r)
			_ = k.AppendSummary(nil)
			_ = k.StepCaptured()
		}
		if err != nil {
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *decode.Error", err)
			}
			if !reflect.DeepEqual(c, CLC{}) {
				t.Fatalf("partial result with error %v: %+v", err, c)
			}
			if fb.truncated != errors.Is(err, ErrTruncated) {
				t.Fatalf("SetTruncated %v with error %v", fb.truncated, err)
			}
			return
		}
		l := int(c.Length)
		if len(c.Contents) != l || !bytes.Equal(c.Contents, data[:l]) || !bytes.Equal(c.Payload, data[l:]) {
			t.Fatalf("contents %d / payload %d bytes for length %d of %d", len(c.Contents), len(c.Payload), l, len(data))
		}
		if n, ok := CLCMessageLength(data); !ok || n != l {
			t.Fatalf("CLCMessageLength = %d, %v for a decoded message of %d", n, ok, l)
		}
		var r1 Record
		c.AppendFields(&r1)
		s1 := string(c.AppendSummary(nil))

		var again CLC
		if err := again.DecodeFromBytes(c.Contents, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("own contents do not decode: %v", err)
		}
		var r2 Record
		again.AppendFields(&r2)
		if s2 := again.String(); s1 != s2 || !reflect.DeepEqual(r1, r2) {
			t.Fatalf("re-decode differs:\n%s\n%s", s1, s2)
		}
		if err := again.DecodeFromBytes(c.Contents[:l-1], gopacket.NilDecodeFeedback); !errors.Is(err, ErrTruncated) {
			t.Fatalf("message cut by one byte: %v", err)
		}
	})
}
