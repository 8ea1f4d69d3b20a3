package numfmt

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
)

// values are the numbers every function is checked on: each power of 2,
// 10 and 16 and its neighbours, the extremes, and random values of every
// bit length.
func values() []uint64 {
	var vs []uint64
	add := func(u uint64) { vs = append(vs, u-1, u, u+1) }
	for i := 0; i < 64; i++ {
		add(1 << i)
	}
	for p := uint64(1); ; p *= 10 {
		add(p)
		if p > math.MaxUint64/10 {
			break
		}
	}
	vs = append(vs, 0, math.MaxUint64, math.MaxUint64-1, 1<<63)
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 30000; i++ {
		vs = append(vs, r.Uint64()>>(r.UintN(64)))
	}
	return vs
}

func TestAsStrconv(t *testing.T) {
	prefix := []byte("x=")
	for _, u := range values() {
		check := func(name string, got []byte, want string) {
			t.Helper()
			if string(got) != "x="+want {
				t.Fatalf("%s(%d) = %q, want %q", name, u, got, "x="+want)
			}
		}
		// A fresh copy of prefix with no room, and one with plenty.
		for _, dst := range [][]byte{append([]byte(nil), prefix...), append(make([]byte, 0, 64), prefix...)} {
			check("AppendUint", AppendUint(dst, u), strconv.FormatUint(u, 10))
			check("AppendInt", AppendInt(dst, int64(u)), strconv.FormatInt(int64(u), 10))
			check("AppendHex", AppendHex(dst, u), strconv.FormatUint(u, 16))
			for _, w := range []int{0, 1, 2, 6, 9, 16, 21} {
				check("AppendPadded", AppendPadded(dst, u, w), fmt.Sprintf("%0*d", w, u))
				check("AppendHexPadded", AppendHexPadded(dst, u, w), fmt.Sprintf("%0*x", w, u))
			}
		}
		for _, dst := range [][]byte{append([]byte(nil), prefix...), append(make([]byte, 0, 64), prefix...)} {
			check("AppendHex24", AppendHex24(dst, uint32(u)), fmt.Sprintf("%06x", uint32(u)))
			check("AppendHex24", AppendHex24(dst, uint32(u)&(1<<24-1)), fmt.Sprintf("%06x", uint32(u)&(1<<24-1)))
		}
		if DecimalLen(u) != len(strconv.FormatUint(u, 10)) {
			t.Fatalf("DecimalLen(%d) = %d", u, DecimalLen(u))
		}
	}
}

func TestNoAlloc(t *testing.T) {
	buf := make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		buf = AppendUint(buf[:0], 18388237116597534936)
		buf = AppendPadded(buf, 12, 6)
		buf = AppendHexPadded(buf, 0xa6ac34, 6)
		buf = AppendHex24(buf, 0xa6ac34)
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

var sink []byte

// seq is what -T json writes of an RDMA WRITE's numbers.
var seq = []uint64{48, 62, 62, 2048, 4, 17, 1, 49441, 4791, 17, 0, 0, 0, 0, 65535, 0, 0, 17, 1,
	10923060, 1478694586, 18388237116597534936, 937, 64, 1, 1, 216, 4, 1, 1, 1, 4}

func BenchmarkAppendUint(b *testing.B) {
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		buf = buf[:0]
		for _, u := range seq {
			buf = AppendUint(buf, u)
		}
	}
	sink = buf
}

func BenchmarkStrconvAppendUint(b *testing.B) {
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		buf = buf[:0]
		for _, u := range seq {
			buf = strconv.AppendUint(buf, u, 10)
		}
	}
	sink = buf
}

// TestDigits8Exhaustive: digits8 (two words of digits4) against plain
// division on every value it takes.
func TestDigits8Exhaustive(t *testing.T) {
	step := uint32(1)
	if testing.Short() {
		step = 997
	}
	for v := uint32(0); v < 1e8; v += step {
		w, x := digits8(v), v
		for i := 7; i >= 0; i-- {
			if byte(w>>(8*i)) != byte('0'+x%10) {
				t.Fatalf("digits8(%d) = %016x", v, w)
			}
			x /= 10
		}
	}
}

// TestWord8 holds Word8 to strconv around every power of ten below 1e8
// and on a spread of values between.
func TestWord8(t *testing.T) {
	check := func(u uint64) {
		t.Helper()
		w, n := Word8(u)
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		want := strconv.FormatUint(u, 10)
		if string(b[:n]) != want || w>>(8*n%64) != 0 && n < 8 {
			t.Fatalf("Word8(%d) = %016x, %d; want %q", u, w, n, want)
		}
	}
	for p := uint64(1); p < 1e8; p *= 10 {
		for _, d := range []uint64{p - 1, p, p + 1, 2*p - 1, 9 * p, 9*p + 1} {
			check(d)
		}
	}
	for u := uint64(0); u < 1e8; u = u*7 + 3 {
		check(u)
		check(u * 13 % 1e8)
	}
	for u := uint64(0); u < 100000; u++ {
		check(u)
	}
}

// TestAppendIPv4 holds AppendIPv4 to netip on every octet value in every
// position.
func TestAppendIPv4(t *testing.T) {
	for v := range 256 {
		for pos := range 4 {
			b := [4]byte{10, 0, 99, 1}
			b[pos] = byte(v)
			want := netip.AddrFrom4(b).String()
			if got := AppendIPv4([]byte("x"), b); string(got[1:]) != want || got[0] != 'x' {
				t.Fatalf("%v: %q, want %q", b, got, want)
			}
		}
	}
}

// TestAppendHexBytes holds AppendHexBytes to encoding/hex on every length
// up to 70 (the word loop and the tail) of random bytes, after a prefix.
func TestAppendHexBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 70; n++ {
		for range 20 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			got := AppendHexBytes([]byte("x:"), b)
			if want := "x:" + hex.EncodeToString(b); string(got) != want {
				t.Fatalf("AppendHexBytes(% x) = %q, want %q", b, got, want)
			}
		}
	}
}

// BenchmarkAppendHexBytes: a KiB of payload as hex, beside encoding/hex.
func BenchmarkAppendHexBytes(b *testing.B) {
	src := make([]byte, 1024)
	for i := range src {
		src[i] = byte(i * 7)
	}
	for _, bc := range []struct {
		name string
		f    func(dst, src []byte) []byte
	}{{"numfmt", AppendHexBytes}, {"encoding-hex", hex.AppendEncode}} {
		b.Run(bc.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(src))
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				dst = bc.f(dst[:0], src)
			}
			sink = dst
		})
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 links", 1: "1 link", 2: "2 links", -1: "-1 links", 1000: "1000 links"} {
		if got := Count(n, "link"); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
