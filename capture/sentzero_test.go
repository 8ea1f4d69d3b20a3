package capture

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestSentZeroKernel holds decode.CDC.SentZero and decode.LLC.SentZero to
// every capture's messages whose ICRC verifies: the bytes they name are
// zeros in each. Then, per message type, a copy with the first and last
// of them damaged fails its ICRC and ICRCMendSMC finds it exact; with a
// byte of the message outside them damaged too, that byte as sent.
func TestSentZeroKernel(t *testing.T) {
	seen := map[string]int{}
	mutated := map[string]bool{}
	for _, path := range testutil.AllCaptures(t) {
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := NewDecoder(r.LinkType())
		if err != nil {
			t.Fatal(err)
		}
		for {
			f, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !f.ICRC.Checked || !f.ICRC.OK || f.ICRC.IPSumBad {
				continue
			}
			name, msg, spans := sentZeroOf(f)
			if msg == nil {
				continue
			}
			seen[name]++
			var first, last = -1, -1
			for _, s := range spans {
				for i := s[0]; i < s[1] && i < len(msg); i++ {
					if msg[i] != 0 {
						t.Errorf("%s frame %d: %s byte %d is 0x%02x, not sent as zero", filepath.Base(path), f.Number, name, i, msg[i])
					}
					if first < 0 {
						first = i
					}
					last = i
				}
			}
			if mutated[name] || first < 0 || first == last {
				continue
			}
			mutated[name] = true
			at := cap(f.Data) - cap(msg)
			outside := 4 // the first byte after the header: a field of every type
			for _, c := range []struct{ more bool }{{false}, {true}} {
				data := append([]byte(nil), f.Data...)
				data[at+first] ^= 0x5A
				data[at+last] ^= 0x21
				if c.more {
					data[at+outside] ^= 0x08
				}
				var g Frame
				g.Data, g.Number = data, f.Number
				g.CI = gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}
				d.decode(&g, true)
				if g.LLC != nil && f.LLC != nil {
					g.LLC.ANCK = f.LLC.ANCK
				}
				if g.CDC != nil && f.CDC != nil {
					g.CDC.ANCK = f.CDC.ANCK
				}
				m, exact, ok := g.ICRCMendSMC()
				switch {
				case g.ICRC.OK:
					t.Errorf("%s frame %d: %s with bytes %d and %d damaged verifies", filepath.Base(path), f.Number, name, first, last)
				case !ok || exact == c.more:
					t.Errorf("%s frame %d: %s damaged (one byte more %v): mend %+v exact %v ok %v", filepath.Base(path), f.Number, name, c.more, m, exact, ok)
				case c.more && (m.Off != at+outside || m.Sent != f.Data[at+outside]):
					t.Errorf("%s frame %d: %s: mend %+v, want byte %d sent as 0x%02x", filepath.Base(path), f.Number, name, m, at+outside, f.Data[at+outside])
				}
			}
		}
		r.Close()
	}
	// The kinds the kernel's captures hold (SMC-Rv2 link groups), each
	// seen and, but for CONFIRM_RKEY's one reserved byte (ICRCMend's),
	// mutated.
	for _, name := range []string{"CDC", "CONFIRM_LINK_V2", "ADD_LINK_V2", "DELETE_LINK_V2", "CONFIRM_RKEY_V2", "DELETE_RKEY_V2", "TEST_LINK_V2"} {
		if seen[name] == 0 || !mutated[name] && name != "CONFIRM_RKEY_V2" {
			t.Errorf("%s: %d messages, mutated %v: want some, mutated", name, seen[name], mutated[name])
		}
	}
	t.Logf("messages checked: %v", seen)
}

// sentZeroOf is a frame's whole SMC message held in the frame, named, and
// the bytes its sender sends as zeros; nil for others.
func sentZeroOf(f *Frame) (string, []byte, [][2]int) {
	var msg []byte
	var name string
	var spans [][2]int
	switch {
	case f.CDC != nil && f.CDC.Cut == 0:
		z := f.CDC.SentZero()
		name, msg, spans = "CDC", f.CDC.Contents, z[:]
	case f.LLC != nil && f.LLC.Cut == 0:
		name, msg, spans = f.LLC.Type.String(), f.LLC.Contents, f.LLC.SentZero(nil)
	default:
		return "", nil, nil
	}
	if len(msg) == 0 || cap(msg) > cap(f.Data) || &f.Data[:cap(f.Data)][cap(f.Data)-cap(msg)] != &msg[0] {
		return "", nil, nil
	}
	return name, msg, spans
}
