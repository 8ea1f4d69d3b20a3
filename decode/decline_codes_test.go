package decode

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every constant's name must match the C name in its comment, so the table
// and the constants cannot drift apart (the comment is what grep finds).
func TestDeclineCodeNamesMatchKernel(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("decline_codes.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^\s*(Decline\w+)\s+DeclineCode = (0x[0-9a-f]{8}) // SMC_CLC_DECL_(\w+)`)
	m := re.FindAllStringSubmatch(string(src), -1)
	if len(m) < 40 {
		t.Fatalf("found only %d decline constants", len(m))
	}
	for _, x := range m {
		v, _ := strconv.ParseUint(x[2], 0, 32)
		c := DeclineCode(v)
		if c.String() != x[3] {
			t.Errorf("%s (%s) String = %q, comment says SMC_CLC_DECL_%s", x[1], x[2], c.String(), x[3])
		}
		if !c.Known() || c.Meaning() == "" || strings.HasPrefix(c.Meaning(), "unknown") {
			t.Errorf("%s: meaning %q", x[1], c.Meaning())
		}
	}
}

// Codes and names of SMC_CLC_DECL_* (net/smc/smc_clc.h), with the v2.1 additions.
func TestDeclineCodeTable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code DeclineCode
		name string
	}{
		{0x01010000, "MEM"}, {0x02010000, "TIMEOUT_CL"}, {0x02020000, "TIMEOUT_AL"}, {0x03000000, "CNFERR"},
		{0x03010000, "PEERNOSMC"}, {0x03020000, "IPSEC"}, {0x03030000, "NOSMCDEV"}, {0x03030001, "NOSMCDDEV"},
		{0x03030002, "NOSMCRDEV"}, {0x03030003, "NOISM2SUPP"}, {0x03030004, "NOV2EXT"}, {0x03030005, "NOV2DEXT"},
		{0x03030006, "NOSEID"}, {0x03030007, "NOSMCD2DEV"}, {0x03030008, "NOUEID"}, {0x03030009, "RELEASEERR"},
		{0x0303000a, "MAXCONNERR"}, {0x0303000b, "MAXLINKERR"}, {0x0303000c, "FEATUNSUPP"}, {0x03040000, "MODEUNSUPP"},
		{0x03050000, "RMBE_EC"}, {0x03060000, "OPTUNSUPP"}, {0x03070000, "DIFFPREFIX"}, {0x03080000, "GETVLANERR"},
		{0x03090000, "ISMVLANERR"}, {0x030a0000, "NOACTLINK"}, {0x030b0000, "NOSRVLINK"}, {0x030c0000, "VERSMISMAT"},
		{0x030d0000, "MAX_DMB"}, {0x030e0000, "NOROUTE"}, {0x030f0000, "NOINDIRECT"}, {0x04000000, "SYNCERR"},
		{0x05000000, "PEERDECL"}, {0x09990000, "INTERR"}, {0x09990001, "ERR_RTOK"}, {0x09990002, "ERR_RDYLNK"},
		{0x09990003, "ERR_REGBUF"},
		// historic Linux 4.x
		{0x02000000, "TIMEOUT"}, {0x06000000, "REPLY"}, {0x07000000, "SEND"}, {0x99990000, "INTERR"}, {0x02040000, "TCL"},
	} {
		if got := tc.code.String(); got != tc.name {
			t.Errorf("%#08x: String = %q, want %q", uint32(tc.code), got, tc.name)
		}
	}
}

func TestDeclineCodeUnknownAndErrno(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code          DeclineCode
		name, meaning string
		known         bool
	}{
		{0x0303000d, "0x0303000d", "unknown configuration reason", false},
		{0x0a000000, "0x0a000000", "unknown reason", false},
		{0, "0x00000000", "no reason given", false},
		{DeclineCode(0xffffff92), "-ETIMEDOUT", "local error: connection timed out", true}, // -110
		{DeclineCode(0xffffffb9), "-EPROTO", "local error: protocol error", true},          // -71
		{DeclineCode(0xfffffc00), "-1024", "local error: errno 1024", false},
	} {
		if got := tc.code.String(); got != tc.name {
			t.Errorf("%#x: String = %q, want %q", uint32(tc.code), got, tc.name)
		}
		if got := tc.code.Meaning(); !strings.HasPrefix(got, tc.meaning) {
			t.Errorf("%#x: Meaning = %q, want prefix %q", uint32(tc.code), got, tc.meaning)
		}
		if tc.code.Known() != tc.known {
			t.Errorf("%#x: Known = %v", uint32(tc.code), !tc.known)
		}
	}
	if e, ok := DeclineIntErrOld.Errno(); ok {
		t.Errorf("0x99990000 taken for errno %d", e)
	}
}
