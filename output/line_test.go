package output

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/capture"
)

// TestAppendSeconds: the integer formatter of the text lines' time column
// writes what strconv.AppendFloat(d.Seconds(), 'f', 6) writes, including
// the ties and large and negative times it hands to the float path.
func TestAppendSeconds(t *testing.T) {
	ds := []time.Duration{0, 1, 499, 500, 501, 999, 1000, 1500, 999_999_499, 999_999_500, 999_999_999,
		time.Second, 3*time.Second + 500, 86400 * time.Second, 1<<62 + 123456789, -1, -1500, -time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		ds = append(ds, time.Duration(rng.Int64N(int64(48*time.Hour))))
		ds = append(ds, time.Duration(rng.Int64N(2e9)/1000*1000+500)) // ties
		ds = append(ds, time.Duration(rng.Int64N(1<<50)))
	}
	for _, d := range ds {
		want := strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64)
		if got := appendSeconds(nil, d); string(got) != string(want) {
			t.Fatalf("%d ns: %s, want %s", int64(d), got, want)
		}
	}
}

// TestSince: the capture-time difference is time.Time.Sub's, near zero,
// across seconds and both ways, and beyond the shortcut's range.
func TestSince(t *testing.T) {
	base := time.Unix(1795330658, 962938070).UTC()
	for _, d := range []time.Duration{0, 1, -1, 999_999_999, -999_999_999, time.Second, 90 * 24 * time.Hour,
		-90 * 24 * time.Hour, 100 * 365 * 24 * time.Hour, 200 * 365 * 24 * time.Hour, -200 * 365 * 24 * time.Hour} {
		ts := base.Add(d)
		if got, want := since(ts, base), ts.Sub(base); got != want {
			t.Errorf("%v: %v, want %v", d, got, want)
		}
	}
	far := time.Unix(1<<40, 5)
	if got, want := since(far, base), far.Sub(base); got != want {
		t.Errorf("far: %v, want %v", got, want)
	}
}

// TestNeedsEscape: the eight-bytes-at-a-time test agrees with a byte
// loop on every byte value at every position, and on random text.
func TestNeedsEscape(t *testing.T) {
	slow := func(s []byte) bool {
		for _, c := range s {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return true
			}
		}
		return false
	}
	base := []byte("38  0.564140  10.10.0.1 -> 10.10.0.2  RoCE  RC ACK")
	for i := range base {
		for c := 0; c < 256; c++ {
			s := append([]byte(nil), base...)
			s[i] = byte(c)
			if got, want := needsEscape(s), slow(s); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, i, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		s := make([]byte, rng.IntN(40))
		for i := range s {
			s[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(50) == 0 {
				s[i] = byte(rng.IntN(256))
			}
		}
		if got, want := needsEscape(s), slow(s); got != want {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
	}
}

// TestEndpointText: an IPv6 address with a port is bracketed, so that the
// port cannot be read as the last group of the address ([fd00:10::2]:47608
// in samples/ipv6.pcap); IPv4, GIDs without a port and MACs are not.
func TestEndpointText(t *testing.T) {
	text, _, err := run(t, Options{Read: "../samples/ipv6.pcap", Count: 1})
	if want := "[fd00:10::2]:47608 -> [fd00:10::1]:5000  TCP"; err != nil || !strings.Contains(text, want) {
		t.Errorf("ipv6.pcap: %q %v, want %q", text, err, want)
	}
	for _, c := range []struct {
		e    Endpoint
		want string
	}{
		{Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("fd00:10::2"), Port: 57284, HasPort: true}, "[fd00:10::2]:57284"},
		{Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("fd00:10::2")}, "fd00:10::2"},
		{Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("10.10.0.1"), Port: 5000, HasPort: true}, "10.10.0.1:5000"},
		{Endpoint{Kind: EndpointMAC, MAC: [6]byte{0x52, 0x54, 0, 0x0a, 0, 1}}, "52:54:00:0a:00:01"},
		{Endpoint{}, "?"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
	a := Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("10.10.0.1"), Port: 5000, HasPort: true}
	b := Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("10.10.0.2"), Port: 80, HasPort: true}
	c := Endpoint{Kind: EndpointAddr, Addr: netip.MustParseAddr("10.10.0.1"), Port: 5001, HasPort: true}
	if a.Compare(b) >= 0 || a.Compare(c) >= 0 || b.Compare(a) <= 0 || a.Compare(a) != 0 {
		t.Error("endpoints do not sort by address, then port")
	}
}

// TestAppendSecondsDigits: the time column at each resolution a capture
// may have, rounded at its last decimal; six decimals are appendSeconds'.
func TestAppendSecondsDigits(t *testing.T) {
	for _, c := range []struct {
		d      time.Duration
		digits uint8
		want   string
	}{
		{1, 9, "0.000000001"},
		{977, 9, "0.000000977"},
		{3*time.Second + 5, 9, "3.000000005"},
		{-1, 9, "-0.000000001"},
		{1_500_000, 3, "0.002"},
		{1_499_999, 3, "0.001"},
		{999_600_000, 3, "1.000"},
		{2*time.Second + 400_000_000, 0, "2"},
		{1500, 6, "0.000002"},
		{123_456_789, 7, "0.1234568"},
	} {
		if got := string(AppendSeconds(nil, c.d, c.digits)); got != c.want {
			t.Errorf("AppendSeconds(%d, %d) = %s, want %s", c.d, c.digits, got, c.want)
		}
	}
	// Nine decimals and more take a path of their own: the same text as
	// formatting the nanoseconds whole.
	for _, d := range []time.Duration{0, 999_999_999, time.Second, 1<<50 + 7, math.MaxInt64} {
		want := fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second)
		for _, digits := range []uint8{9, 12} {
			if got := string(AppendSeconds(nil, d, digits)); got != want {
				t.Errorf("AppendSeconds(%d, %d) = %s, want %s", d, digits, got, want)
			}
		}
	}
}

// BenchmarkAppendSeconds is the time column of one line, at the
// resolutions captures have: six decimals (pcap), nine (nanosecond pcap,
// pcapng from Linux tools) and three (the general path).
func BenchmarkAppendSeconds(b *testing.B) {
	for _, digits := range []uint8{6, 9, 3} {
		b.Run(strconv.Itoa(int(digits)), func(b *testing.B) {
			buf := make([]byte, 0, 32)
			d := time.Duration(1234567891)
			for b.Loop() {
				buf = AppendSeconds(buf[:0], d, digits)
				d += 977
			}
		})
	}
}

// TestAppendCarrier: a carried frame's line names its carrier as its
// users do; a frame no one carried has nothing added.
func TestAppendCarrier(t *testing.T) {
	for _, c := range []struct {
		tunnel *capture.Tunnel
		want   string
	}{
		{nil, ""},
		{&capture.Tunnel{Kind: capture.TunnelERSPAN2, ID: 7, HasID: true, Seq: 45, HasSeq: true}, " [ERSPAN II session 7 seq 45]"},
		{&capture.Tunnel{Kind: capture.TunnelERSPAN3, ID: 6, HasID: true, Seq: 0, HasSeq: true}, " [ERSPAN III session 6 seq 0]"},
		{&capture.Tunnel{Kind: capture.TunnelERSPAN1}, " [ERSPAN I]"},
		{&capture.Tunnel{Kind: capture.TunnelGRE, ID: 9, HasID: true}, " [GRE key 9]"},
		{&capture.Tunnel{Kind: capture.TunnelGRE}, " [GRE]"},
		{&capture.Tunnel{Kind: capture.TunnelVXLAN, ID: 77, HasID: true}, " [VXLAN VNI 77]"},
		{&capture.Tunnel{Kind: capture.TunnelGeneve, ID: 88, HasID: true}, " [Geneve VNI 88]"},
		{&capture.Tunnel{Kind: capture.TunnelVXLAN, ID: 77, HasID: true,
			Session: capture.TunnelSession{Kind: capture.TunnelERSPAN2, ID: 5, HasID: true, Seq: 4, HasSeq: true}},
			" [VXLAN VNI 77 in ERSPAN II session 5 seq 4]"},
		{&capture.Tunnel{Kind: capture.TunnelERSPAN3, ID: 7, HasID: true, Seq: 45, HasSeq: true,
			Session: capture.TunnelSession{Kind: capture.TunnelERSPAN2, ID: 5, HasID: true, Seq: 9, HasSeq: true}},
			" [ERSPAN III session 7 seq 45 in ERSPAN II session 5 seq 9]"},
		{&capture.Tunnel{Kind: capture.TunnelERSPAN2, ID: 7, HasID: true, Seq: 45, HasSeq: true,
			Session: capture.TunnelSession{Kind: capture.TunnelERSPAN2, ID: 7, HasID: true, Seq: 45, HasSeq: true}},
			" [ERSPAN II session 7 seq 45]"},
	} {
		if got := string(appendCarrier(nil, &capture.Frame{Tunnel: c.tunnel})); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tunnel, got, c.want)
		}
	}
}
