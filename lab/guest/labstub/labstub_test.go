package main

import (
	"net/netip"
	"slices"
	"testing"
)

func TestIntListRepeatsLastValue(t *testing.T) {
	got, err := intList("300,200", 4)
	if err != nil || !slices.Equal(got, []int{300, 200, 200, 200}) {
		t.Errorf("intList(300,200; 4) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,,2", "-1", "x"} {
		if _, err := intList(bad, 1); err == nil {
			t.Errorf("intList(%q) accepted", bad)
		}
	}
}

// The address words of smc_diag_msg: IPv4 in the first word, IPv6 in all four (the
// layout of samples/*.client.log's connection lines).
func TestDiagAddr(t *testing.T) {
	v4 := []byte{10, 10, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if got, want := diagAddr(v4, 5000), netip.MustParseAddrPort("10.10.0.2:5000"); got != want {
		t.Errorf("v4: %v, want %v", got, want)
	}
	v6 := netip.MustParseAddr("fd00:10::1").As16()
	if got, want := diagAddr(v6[:], 5000), netip.MustParseAddrPort("[fd00:10::1]:5000"); got != want {
		t.Errorf("v6: %v, want %v", got, want)
	}
}

func TestCstrStopsAtNUL(t *testing.T) {
	if got := cstr([]byte("rxe0\x00\x00junk")); got != "rxe0" {
		t.Errorf("cstr = %q", got)
	}
	if got := cstr([]byte("abc")); got != "abc" {
		t.Errorf("cstr without NUL = %q", got)
	}
}
