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
	for _, msg := range clcAll(f) {
		f.Add(msg)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c CLC
		var fb clcTruncFeedback
		err := c.DecodeFromBytes(data, &fb)
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
