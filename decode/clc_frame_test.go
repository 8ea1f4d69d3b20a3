package decode

import (
	"errors"
	"testing"
)

// TestCLCFrame frames a real Proposal (Linux 6.12, pingpong.pcap) and the
// ways its first bytes can be cut or damaged in a TCP stream.
func TestCLCFrame(t *testing.T) {
	t.Parallel()
	prop := clcReference(t, "pingpong.pcap", 8)
	for _, tc := range []struct {
		name string
		b    []byte
		n    int
		f    CLCFraming
	}{
		{"whole", prop, len(prop), CLCFramed},
		{"7 bytes", prop[:7], len(prop), CLCFramed},
		{"6 bytes", prop[:6], 0, CLCNeedMore},
		{"3 bytes", prop[:3], 0, CLCNeedMore},
		{"empty", nil, 0, CLCNeedMore},
		{"not CLC", []byte("GET / HTTP/1.1"), 0, CLCNotCLC},
		{"eyecatcher prefix then other", []byte{0xE2, 0xD4, 0x00}, 0, CLCNotCLC},
		{"length 0", clcWithLength(prop, 0), 0, CLCBadLength},
		{"length 4", clcWithLength(prop, 4), 4, CLCBadLength},
		{"length 11", clcWithLength(prop, 11), 11, CLCBadLength},
		{"length 12", clcWithLength(prop, 12), 12, CLCFramed},
		{"length 0xffff", clcWithLength(prop, 0xffff), 0xffff, CLCBadLength},
	} {
		n, f := CLCFrame(tc.b)
		if n != tc.n || f != tc.f {
			t.Errorf("%s: CLCFrame = %d, %d; want %d, %d", tc.name, n, f, tc.n, tc.f)
		}
		err := CLCBadLengthError(tc.b)
		var de *Error
		switch {
		case tc.f != CLCBadLength && err != nil:
			t.Errorf("%s: CLCBadLengthError = %v, want nil", tc.name, err)
		case tc.f == CLCBadLength && (!errors.As(err, &de) || !errors.Is(err, ErrBadLength) || de.Offset != 5 || de.Layer != "CLC Proposal"):
			t.Errorf("%s: CLCBadLengthError = %v, want a bad length of the CLC Proposal at offset 5", tc.name, err)
		}
	}
	if err := CLCBadLengthError(clcWithLength(prop, 0xffff)); err.Error() == "" {
		t.Error("empty message")
	}
}

func TestCLCFrameNoAlloc(t *testing.T) {
	prop := clcReference(t, "pingpong.pcap", 8)
	if n := testing.AllocsPerRun(100, func() { CLCFrame(prop) }); n != 0 {
		t.Errorf("CLCFrame allocates %v times", n)
	}
}
