package mutate

import (
	"bytes"
	"testing"
	"time"
)

func frames(n int) []Frame {
	out := make([]Frame, n)
	for i := range out {
		out[i].Data = bytes.Repeat([]byte{byte(i)}, 60)
	}
	return out
}

// TestParseString: every mutation reads back as it is named, so a failing
// variant's name makes it again (smcmutate -m).
func TestParseString(t *testing.T) {
	for _, m := range append(Generate(7, frames(500), 200), append(Thinned(7, frames(500), 20),
		Mutation{Kind: Late, At: 4, N: 3}, Mutation{Kind: Snap, N: 96}, Mutation{Kind: OneWay, N: 2}, Mutation{Kind: Skew, N: -2000}, Mutation{Kind: Mirror, N: 100}, Mutation{Kind: Step, At: 9, N: 5000}, Mutation{Kind: Twice, N: 5000}, Mutation{Kind: Twice, N: 5000, At: 300})...) {
		got, err := Parse(m.String())
		if err != nil || got != m {
			t.Errorf("%q reads back as %+v, %v; want %+v", m, got, err, m)
		}
	}
	for _, bad := range []string{"", "drop", "drop 0", "drop x", "flip 3:4^0x100", "cut 3 4", "drop 5-3", "thin 3/1", "thin 0/4", "oneway 0", "oneway 3"} {
		if m, err := Parse(bad); err == nil {
			t.Errorf("%q read as %v, want an error", bad, m)
		}
	}
}

func TestApply(t *testing.T) {
	fs := frames(10)
	first := func(out []Frame) []byte {
		var b []byte
		for _, f := range out {
			b = append(b, f.Data[0])
		}
		return b
	}
	for _, c := range []struct {
		m    string
		want []byte
	}{
		{"drop 1", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"drop 3-5", []byte{0, 1, 5, 6, 7, 8, 9}},
		{"dup 10", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9}},
		{"cut 2", []byte{0, 1}},
		{"start 9", []byte{8, 9}},
		{"drop 11", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{"thin 3/3", []byte{0, 1, 2, 3, 5, 6, 8, 9}},
		{"late 2+3", []byte{0, 2, 3, 4, 1, 5, 6, 7, 8, 9}},
		{"late 9+5", []byte{0, 1, 2, 3, 4, 5, 6, 7, 9, 8}},
		{"snap 60", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
	} {
		m, err := Parse(c.m)
		if err != nil {
			t.Fatal(err)
		}
		if got := first(m.Apply(fs)); !bytes.Equal(got, c.want) {
			t.Errorf("%s: frames %v, want %v", c.m, got, c.want)
		}
	}
	for i := range fs {
		fs[i].CI.Timestamp = time.Unix(int64(i), 0)
	}
	late, _ := Parse("late 2+3")
	for i, f := range late.Apply(fs) {
		if !f.CI.Timestamp.Equal(time.Unix(int64(i), 0)) {
			t.Errorf("late 2+3: frame %d at %v, want the slot's time %v", i+1, f.CI.Timestamp, time.Unix(int64(i), 0))
		}
	}
	// Frames a second apart, their copies 2.5 s later: two frames
	// between each and its copy.
	twice, _ := Parse("twice 2500000us")
	if got, want := first(twice.Apply(fs[:5])), []byte{0, 1, 2, 0, 3, 1, 4, 2, 3, 4}; !bytes.Equal(got, want) {
		t.Errorf("twice 2500000us: frames %v, want %v", got, want)
	}
	snap, _ := Parse("snap 20")
	for _, f := range snap.Apply(fs) {
		if len(f.Data) != 20 || f.CI.CaptureLength != 20 {
			t.Errorf("snap 20: %d bytes, capture length %d", len(f.Data), f.CI.CaptureLength)
		}
	}
	m, _ := Parse("flip 2:20^0x40")
	out := m.Apply(fs)
	if out[1].Data[20] != 1^0x40 || fs[1].Data[20] != 1 {
		t.Errorf("flip: %#x in the variant, %#x in the original; want 0x41 and 0x01", out[1].Data[20], fs[1].Data[20])
	}
}

// TestGenerateSeeded: the same seed gives the same mutations.
func TestGenerateSeeded(t *testing.T) {
	a, b := Generate(3, frames(100), 40), Generate(3, frames(100), 40)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("mutation %d: %v then %v", i, a[i], b[i])
		}
	}
	if len(a) != 40 {
		t.Errorf("%d mutations, want 40", len(a))
	}
}

// TestOneWay: each side keeps what one address sends (the port decides
// between two ends of one host), and both keep a frame that is not IP.
func TestOneWay(t *testing.T) {
	ip4 := func(src, dst byte, sport, dport uint16) Frame {
		d := make([]byte, 14+20+8)
		d[12], d[13], d[14] = 0x08, 0x00, 0x45
		d[14+12], d[14+16] = src, dst
		d[34], d[35], d[36], d[37] = byte(sport>>8), byte(sport), byte(dport>>8), byte(dport)
		return Frame{Data: d}
	}
	fs := []Frame{ip4(1, 2, 9, 9), ip4(2, 1, 9, 9), {Data: []byte{0xee}}, ip4(7, 7, 4000, 5000), ip4(7, 7, 5000, 4000)}
	for side, want := range map[int][]int{1: {0, 2, 3}, 2: {1, 2, 4}} {
		got := Mutation{Kind: OneWay, N: side}.Apply(fs)
		if len(got) != len(want) {
			t.Fatalf("oneway %d kept %d frames, want %v", side, len(got), want)
		}
		for i, w := range want {
			if &got[i].Data[0] != &fs[w].Data[0] {
				t.Errorf("oneway %d: frame %d is not frame %d", side, i, w)
			}
		}
	}
}
