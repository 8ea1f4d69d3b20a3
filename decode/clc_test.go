package decode

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// clcTruncFeedback records SetTruncated, as gopacket's packet metadata does.
type clcTruncFeedback struct{ truncated bool }

func (f *clcTruncFeedback) SetTruncated() { f.truncated = true }

func clcMustDecode(t *testing.T, b []byte) *CLC {
	t.Helper()
	var c CLC
	if err := c.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
		t.Fatalf("DecodeFromBytes: %v", err)
	}
	return &c
}

func clcAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

// clcReference returns the CLC message of one frame of a reference capture.
func clcReference(t *testing.T, file string, frame int) []byte {
	t.Helper()
	m := clcFrames(t, "reference/"+file)
	b, ok := m[frame]
	if !ok {
		t.Fatalf("%s: frame %d carries no CLC message", file, frame)
	}
	return b
}

// Values from testdata/vectors/SOURCES.md (hwipl's annotated dumps of a
// Linux SMC-R v1 handshake over lo).
func TestCLCVectors(t *testing.T) {
	t.Parallel()
	gid := clcAddr("fe80::9a03:9bff:feab:cdef")
	mac := [6]byte{0x98, 0x03, 0x9b, 0xab, 0xcd, 0xef}
	peer4 := [8]byte{0xb1, 0xa0, 0x98, 0x03, 0x9b, 0xab, 0xcd, 0xef} // 45472@98:03:9b:ab:cd:ef
	peer6 := [8]byte{0x39, 0x44, 0x98, 0x03, 0x9b, 0xab, 0xcd, 0xef} // 14660@...
	type accept struct {
		peer                      [8]byte
		first                     bool
		qpn, rkey, token, va, psn uint64
	}
	accepts := []struct {
		file string
		typ  CLCType
		want accept
	}{
		{"clc_v1_smcr_accept_ipv4.hex", CLCTypeAccept, accept{peer4, true, 228, 5501, 5, 0xf0a60000, 7534078}},
		{"clc_v1_smcr_confirm_ipv4.hex", CLCTypeConfirm, accept{peer4, false, 229, 6271, 6, 0xf0a40000, 887204}},
		{"clc_v1_smcr_accept_ipv6.hex", CLCTypeAccept, accept{peer6, true, 226, 5727, 1, 0xf0b30000, 2254726}},
		{"clc_v1_smcr_confirm_ipv6.hex", CLCTypeConfirm, accept{peer6, false, 227, 6497, 2, 0xf0b10000, 1597250}},
	}
	for _, tc := range accepts {
		t.Run(tc.file, func(t *testing.T) {
			c := clcMustDecode(t, clcReadVector(t, tc.file))
			a := c.Accept
			if c.Type != tc.typ || c.Length != 68 || c.Version != 1 || c.TypeV1 != SMCTypeR || c.FirstContact() != tc.want.first {
				t.Errorf("header = type %v len %d v%d path %v fc %v", c.Type, c.Length, c.Version, c.TypeV1, c.FirstContact())
			}
			if a.PeerID != tc.want.peer || a.GID != gid || a.MAC != mac {
				t.Errorf("peer/gid/mac = %x %v %x", a.PeerID, a.GID, a.MAC)
			}
			got := accept{a.PeerID, c.Flag, uint64(a.QPN), uint64(a.RKey), uint64(a.AlertToken), a.RMBVA, uint64(a.PSN)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if a.RMBEIdx != 1 || RMBESizeBytes(a.RMBESize) != 65536 || a.QPMTU != 3 || QPMTUBytes(a.QPMTU) != 1024 {
				t.Errorf("idx %d size %d mtu %d", a.RMBEIdx, a.RMBESize, a.QPMTU)
			}
			if a.EID != nil || a.HasFCE || a.HasGIDList {
				t.Errorf("v1 message has v2 parts: EID %q FCE %v GIDs %v", a.EID, a.HasFCE, a.HasGIDList)
			}
		})
	}

	t.Run("clc_v1_smcr_proposal_ipv4.hex", func(t *testing.T) {
		c := clcMustDecode(t, clcReadVector(t, "clc_v1_smcr_proposal_ipv4.hex"))
		p := c.Proposal
		if c.Type != CLCTypeProposal || c.Length != 52 || c.Version != 1 || c.Flag || c.TypeV1 != SMCTypeR {
			t.Errorf("header = %v %d v%d flag %v path %v", c.Type, c.Length, c.Version, c.Flag, c.TypeV1)
		}
		if p.PeerID != peer4 || p.GID != gid || p.MAC != mac || p.IPAreaOffset != 0 {
			t.Errorf("peer %x gid %v mac %x ipoff %d", p.PeerID, p.GID, p.MAC, p.IPAreaOffset)
		}
		if !p.HasPrefix || p.IPv4Prefix != clcAddr("127.0.0.0") || p.IPv4PrefixLen != 8 || p.IPv6PrefixCount != 0 {
			t.Errorf("prefix %v %v/%d n6 %d", p.HasPrefix, p.IPv4Prefix, p.IPv4PrefixLen, p.IPv6PrefixCount)
		}
		if p.HasSMCDArea || p.HasV2Ext || p.HasSMCDv2Ext {
			t.Errorf("v1 SMC-R Proposal has SMC-D area %v / v2 ext %v / SMC-Dv2 ext %v", p.HasSMCDArea, p.HasV2Ext, p.HasSMCDv2Ext)
		}
	})
	t.Run("clc_v1_smcr_proposal_ipv6.hex", func(t *testing.T) {
		c := clcMustDecode(t, clcReadVector(t, "clc_v1_smcr_proposal_ipv6.hex"))
		p := c.Proposal
		if c.Length != 69 || p.PeerID != peer6 || p.GID != gid || p.MAC != mac {
			t.Errorf("len %d peer %x gid %v mac %x", c.Length, p.PeerID, p.GID, p.MAC)
		}
		if p.IPv4Prefix != clcAddr("0.0.0.0") || p.IPv4PrefixLen != 0 || p.IPv6PrefixCount != 1 {
			t.Fatalf("prefix %v/%d n6 %d", p.IPv4Prefix, p.IPv4PrefixLen, p.IPv6PrefixCount)
		}
		if a, bits := p.IPv6Prefix(0); a != clcAddr("::1") || bits != 128 {
			t.Errorf("IPv6 prefix = %v/%d, want ::1/128", a, bits)
		}
	})
	t.Run("clc_v1_smcr_decline_nosmcdev.hex", func(t *testing.T) {
		c := clcMustDecode(t, clcReadVector(t, "clc_v1_smcr_decline_nosmcdev.hex"))
		d := c.Decline
		if c.Type != CLCTypeDecline || c.Length != 28 || c.Version != 1 || c.OutOfSync() || c.TypeV1 != SMCTypeR {
			t.Errorf("header = %v %d v%d oos %v", c.Type, c.Length, c.Version, c.OutOfSync())
		}
		if d.PeerID != clcPeerIDReset || d.Diagnosis != DeclineNoSMCDev {
			t.Errorf("peer %x diag %v", d.PeerID, d.Diagnosis)
		}
		if s := c.String(); !strings.Contains(s, "peer ID unset") {
			t.Errorf("summary %q does not point out the reset peer ID", s)
		}
	})
}

// Values from the Linux 6.12 SMC-Rv2 captures of the lab (pingpong, multilink, decline-nordma, no-ueid).
func TestCLCReference(t *testing.T) {
	t.Parallel()
	t.Run("pingpong/8 Proposal", func(t *testing.T) {
		c := clcMustDecode(t, clcReference(t, "pingpong.pcap", 8))
		p := c.Proposal
		if c.Type != CLCTypeProposal || c.Length != 156 || c.Version != 2 || c.TypeV2 != SMCTypeR || c.TypeV1 != SMCTypeN {
			t.Errorf("header = %v %d v%d v2 %v v1 %v", c.Type, c.Length, c.Version, c.TypeV2, c.TypeV1)
		}
		if p.PeerID != ([8]byte{}) || !p.GID.IsUnspecified() || p.MAC != ([6]byte{}) || p.HasPrefix {
			t.Errorf("v2-only Proposal: peer %x gid %v mac %x prefix %v, want all zero and no prefix", p.PeerID, p.GID, p.MAC, p.HasPrefix)
		}
		if !p.HasSMCDArea || p.V2ExtOffset != 0x1c || !p.HasV2Ext || p.V2Ext.Offset != 80 {
			t.Fatalf("SMC-D area %v, v2 ext offset %d, ext %v at %d", p.HasSMCDArea, p.V2ExtOffset, p.HasV2Ext, p.V2Ext.Offset)
		}
		e := p.V2Ext
		if e.EIDCount != 1 || e.ISMGIDCount != 0 || e.Release != 1 || e.SEIDPresent || e.SMCDv2ExtOffset != 0 {
			t.Errorf("ext = %+v", e)
		}
		if e.RoCEv2GID != clcAddr("::ffff:10.10.0.2") || e.MaxConns != 255 || e.MaxLinks != 2 || e.FeatureMask != 1 {
			t.Errorf("ext GID %v conns %d links %d features %#x", e.RoCEv2GID, e.MaxConns, e.MaxLinks, e.FeatureMask)
		}
		if got := string(e.EID(0)); got != "SMC-LAB-UEID" {
			t.Errorf("EID = %q", got)
		}
		if p.HasSMCDv2Ext {
			t.Error("SMC-R-only Proposal has an SMC-Dv2 extension")
		}
	})
	t.Run("pingpong/10 Accept", func(t *testing.T) {
		c := clcMustDecode(t, clcReference(t, "pingpong.pcap", 10))
		a := c.Accept
		if c.Type != CLCTypeAccept || c.Length != 160 || c.Version != 2 || !c.FirstContact() || c.TypeV1 != SMCTypeR {
			t.Errorf("header = %v %d v%d fc %v path %v", c.Type, c.Length, c.Version, c.FirstContact(), c.TypeV1)
		}
		if a.PeerID != ([8]byte{0xe4, 0xef, 0x52, 0x54, 0, 0x0a, 0, 0x01}) || a.GID != clcAddr("::ffff:10.10.0.1") ||
			a.MAC != ([6]byte{0x52, 0x54, 0, 0x0a, 0, 0x01}) {
			t.Errorf("peer %x gid %v mac %x", a.PeerID, a.GID, a.MAC)
		}
		if a.QPN != 0x11 || a.RKey != 0x3a9 || a.RMBEIdx != 1 || a.AlertToken != 1 || a.RMBVA != 0xff30243b84730000 || a.PSN != 0xa6ac2e {
			t.Errorf("QPN %#x rkey %#x idx %d token %d VA %#x PSN %#x", a.QPN, a.RKey, a.RMBEIdx, a.AlertToken, a.RMBVA, a.PSN)
		}
		if RMBESizeBytes(a.RMBESize) != 65536 || QPMTUBytes(a.QPMTU) != 1024 {
			t.Errorf("RMBE %d MTU %d", RMBESizeBytes(a.RMBESize), QPMTUBytes(a.QPMTU))
		}
		if string(clcTrimBlanks(a.EID)) != "SMC-LAB-UEID" {
			t.Errorf("EID %q", a.EID)
		}
		f := a.FCE
		if !a.HasFCE || f.Offset != 104 || f.Len != 52 || !f.Direct || f.OSType != 2 || f.Release != 1 || string(clcTrimBlanks(f.Hostname)) != "(none)" {
			t.Errorf("FCE = %+v", f)
		}
		if f.MaxConns != 255 || f.MaxLinks != 2 || f.FeatureMask != 1 || f.VendorOptions != 0 || a.HasGIDList {
			t.Errorf("FCE v2x conns %d links %d features %#x vendor %#x, GID list %v", f.MaxConns, f.MaxLinks, f.FeatureMask, f.VendorOptions, a.HasGIDList)
		}
	})
	t.Run("pingpong/12 Confirm", func(t *testing.T) {
		c := clcMustDecode(t, clcReference(t, "pingpong.pcap", 12))
		a := c.Accept
		if c.Type != CLCTypeConfirm || c.Length != 180 || !c.FirstContact() {
			t.Errorf("header = %v %d fc %v", c.Type, c.Length, c.FirstContact())
		}
		if a.GID != clcAddr("::ffff:10.10.0.2") || a.QPN != 0x11 || a.RKey != 0x369 || a.AlertToken != 1 || a.RMBVA != 0xff3da5a383700000 || a.PSN != 0xddf8a0 {
			t.Errorf("gid %v QPN %#x rkey %#x token %d VA %#x PSN %#x", a.GID, a.QPN, a.RKey, a.AlertToken, a.RMBVA, a.PSN)
		}
		if a.FCE.Len != 52 || a.FCE.MaxConns != 255 || a.FCE.MaxLinks != 2 || a.FCE.FeatureMask != 1 {
			t.Errorf("FCE %+v", a.FCE)
		}
		if !a.HasGIDList || a.GIDCount != 1 || a.ListGID(0) != clcAddr("::ffff:10.10.0.2") {
			t.Errorf("GID list %v count %d", a.HasGIDList, a.GIDCount)
		}
	})
	t.Run("decline-nordma/10 Decline v2", func(t *testing.T) {
		c := clcMustDecode(t, clcReference(t, "decline-nordma.pcap", 10))
		d := c.Decline
		if c.Type != CLCTypeDecline || c.Length != 44 || c.Version != 2 || c.OutOfSync() {
			t.Errorf("header = %v %d v%d oos %v", c.Type, c.Length, c.Version, c.OutOfSync())
		}
		if d.PeerID != ([8]byte{}) || d.Diagnosis != DeclineNoSMCRDev || d.OSType != 2 || d.ExtraDiag != ([4]DeclineCode{}) {
			t.Errorf("decline = %+v", d)
		}
	})
	t.Run("no-ueid/8 Decline v1", func(t *testing.T) {
		c := clcMustDecode(t, clcReference(t, "no-ueid.pcap", 8))
		d := c.Decline
		if c.Type != CLCTypeDecline || c.Length != 28 || c.Version != 1 {
			t.Errorf("header = %v %d v%d", c.Type, c.Length, c.Version)
		}
		if d.PeerID != ([8]byte{0xc4, 0xe7, 0x52, 0x54, 0, 0x0a, 0, 0x02}) || d.Diagnosis != DeclineNoSMCDev || d.OSType != 0 {
			t.Errorf("decline = %+v", d)
		}
	})
	t.Run("fallback-nosmc has no CLC", func(t *testing.T) {
		if m := clcFrames(t, "reference/fallback-nosmc.pcap"); len(m) != 0 {
			t.Errorf("found CLC messages in frames %v of a plain TCP fallback", m)
		}
	})
}

// The summary line is what users read first; pin it for each real kind.
func TestCLCSummary(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msg  func(t *testing.T) []byte
		want string
	}{
		{"proposal v2", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 8) },
			`CLC Proposal SMC-Rv2 (v2 ext: 1 EID "SMC-LAB-UEID", release 1, GID ::ffff:10.10.0.2, max conns 255 links 2 features 0x1)`},
		{"accept v2", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 10) },
			`CLC Accept SMC-Rv2 first-contact QPN 0x11 token 1 rkey 0x3a9 VA 0xff30243b84730000 PSN 0xa6ac2e RMBE 64KiB MTU 1024 GID ::ffff:10.10.0.1 MAC 52:54:00:0a:00:01 peer 58607@52:54:00:0a:00:01 EID "SMC-LAB-UEID" (FCE: Linux release 1 host "(none)" direct, max conns 255 links 2 features 0x1)`},
		{"confirm v2", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 12) },
			`CLC Confirm SMC-Rv2 first-contact QPN 0x11 token 1 rkey 0x369 VA 0xff3da5a383700000 PSN 0xddf8a0 RMBE 64KiB MTU 1024 GID ::ffff:10.10.0.2 MAC 52:54:00:0a:00:02 peer 16702@52:54:00:0a:00:02 EID "SMC-LAB-UEID" (FCE: Linux release 1 host "(none)" direct, max conns 255 links 2 features 0x1) GIDs ::ffff:10.10.0.2`},
		{"decline v2", func(t *testing.T) []byte { return clcReference(t, "decline-nordma.pcap", 10) },
			`CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device (sender peer ID 0: no RoCE device, Linux)`},
		{"decline v1", func(t *testing.T) []byte { return clcReference(t, "no-ueid.pcap", 8) },
			`CLC Decline SMC-Rv1 0x03030000 NOSMCDEV: no usable SMC device (R or D), or no matching UEID / SMC-Rv2 path (sender 50407@52:54:00:0a:00:02)`},
		{"proposal v1 ipv6", func(t *testing.T) []byte { return clcReadVector(t, "clc_v1_smcr_proposal_ipv6.hex") },
			`CLC Proposal SMC-Rv1 peer 14660@98:03:9b:ab:cd:ef GID fe80::9a03:9bff:feab:cdef prefix 0.0.0.0/0, ::1/128`},
		{"confirm v1", func(t *testing.T) []byte { return clcReadVector(t, "clc_v1_smcr_confirm_ipv4.hex") },
			`CLC Confirm SMC-Rv1 QPN 0xe5 token 6 rkey 0x187f VA 0xf0a40000 PSN 0xd89a4 RMBE 64KiB MTU 1024 GID fe80::9a03:9bff:feab:cdef MAC 98:03:9b:ab:cd:ef peer 45472@98:03:9b:ab:cd:ef`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clcMustDecode(t, tc.msg(t))
			if got := string(c.AppendSummary(nil)); got != tc.want {
				t.Errorf("summary\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// clcAll returns every real CLC message the repository holds.
func clcAll(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range []string{
		"clc_v1_smcr_proposal_ipv4.hex", "clc_v1_smcr_proposal_ipv6.hex",
		"clc_v1_smcr_accept_ipv4.hex", "clc_v1_smcr_accept_ipv6.hex",
		"clc_v1_smcr_confirm_ipv4.hex", "clc_v1_smcr_confirm_ipv6.hex",
		"clc_v1_smcr_decline_nosmcdev.hex",
	} {
		out[f] = clcReadVector(t, f)
	}
	out["multilink.pcap/37"] = testFrameAcceptReusedLGR
	for _, f := range []string{"pingpong.pcap", "decline-nordma.pcap", "no-ueid.pcap"} {
		for n, b := range clcFrames(t, "reference/"+f) {
			out[f+"/"+clcItoa(n)] = b
		}
	}
	return out
}

func clcItoa(n int) string { return string(clcAppendInt(nil, n)) }

func clcAppendInt(dst []byte, n int) []byte {
	if n >= 10 {
		dst = clcAppendInt(dst, n/10)
	}
	return append(dst, byte('0'+n%10))
}

func TestCLCTruncatedEverywhere(t *testing.T) {
	t.Parallel()
	for name, msg := range clcAll(t) {
		t.Run(name, func(t *testing.T) {
			for n := range len(msg) {
				var c CLC
				var fb clcTruncFeedback
				err := c.DecodeFromBytes(msg[:n], &fb)
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("%d of %d bytes: err = %v, want ErrTruncated", n, len(msg), err)
				}
				if !fb.truncated {
					t.Fatalf("%d of %d bytes: SetTruncated not called", n, len(msg))
				}
				var de *Error
				if !errors.As(err, &de) || de.Layer == "" {
					t.Fatalf("%d bytes: error %v is not a *decode.Error with a layer", n, err)
				}
				if c.Type != 0 || c.Contents != nil {
					t.Fatalf("%d bytes: partial result left after error: %+v", n, c)
				}
			}
		})
	}
}

// clcWithLength returns a copy of msg with its length field set to l.
func clcWithLength(msg []byte, l int) []byte {
	b := bytes.Clone(msg)
	b[5], b[6] = byte(l>>8), byte(l)
	return b
}

func TestCLCBadLength(t *testing.T) {
	t.Parallel()
	for name, msg := range clcAll(t) {
		t.Run(name, func(t *testing.T) {
			// Length says more than the bytes hold: the segment was cut.
			var fb clcTruncFeedback
			var c CLC
			if err := c.DecodeFromBytes(clcWithLength(msg, len(msg)+1), &fb); !errors.Is(err, ErrTruncated) || !fb.truncated {
				t.Errorf("length+1: err = %v truncated %v, want ErrTruncated", err, fb.truncated)
			}
			// Length says less than the message structure needs.
			for _, l := range []int{0, 11, 12, len(msg) - 1, len(msg) - 4} {
				err := c.DecodeFromBytes(clcWithLength(msg, l), gopacket.NilDecodeFeedback)
				if !errors.Is(err, ErrBadLength) && !errors.Is(err, ErrBadEyecatcher) {
					t.Errorf("length %d of %d: err = %v, want ErrBadLength or a misplaced trailer", l, len(msg), err)
				}
				var de *Error
				if !errors.As(err, &de) || !strings.HasPrefix(de.Layer, "CLC") {
					t.Errorf("length %d: %v is not a CLC *decode.Error", l, err)
				}
			}
			// Length covers 4 more bytes that are really there: the trailer
			// moves to where there is none (Decline: wrong size).
			ext := clcWithLength(append(bytes.Clone(msg), 0, 0, 0, 0), len(msg)+4)
			err := c.DecodeFromBytes(ext, gopacket.NilDecodeFeedback)
			if !errors.Is(err, ErrBadLength) && !errors.Is(err, ErrBadEyecatcher) {
				t.Errorf("length+4 over zero bytes: err = %v", err)
			}
		})
	}
}

func TestCLCBadEyecatcherTypeVersion(t *testing.T) {
	t.Parallel()
	for name, msg := range clcAll(t) {
		t.Run(name, func(t *testing.T) {
			var c CLC
			check := func(what string, b []byte, want error, field string, off int) {
				t.Helper()
				err := c.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
				var de *Error
				if !errors.Is(err, want) || !errors.As(err, &de) || de.Field != field || de.Offset != off {
					t.Errorf("%s: err = %v, want %v at offset %d (%s)", what, err, want, off, field)
				}
			}
			b := bytes.Clone(msg)
			b[0] = 0xe3
			check("start eyecatcher", b, ErrBadEyecatcher, "eyecatcher", 0)
			check("start eyecatcher, 4 bytes", b[:4], ErrBadEyecatcher, "eyecatcher", 0)
			for _, typ := range []byte{0, 5, 0xfe} {
				b = bytes.Clone(msg)
				b[4] = typ
				check("type "+clcItoa(int(typ)), b, ErrUnknownType, "type", 4)
			}
			b = bytes.Clone(msg)
			b[7] &= 0x0f
			check("version 0", b, ErrUnknownType, "version", 7)

			b = bytes.Clone(msg)
			b[len(b)-1] ^= 0xff
			if msg[4] == byte(CLCTypeDecline) {
				// Linux ignores a Decline's trailer; decode it, but say so.
				if err := c.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
					t.Fatalf("Decline with bad trailer: %v", err)
				}
				if c.TrailerValid() || !strings.Contains(c.String(), "bad trailer") {
					t.Errorf("bad trailer not reported: valid %v, %q", c.TrailerValid(), c.String())
				}
			} else {
				check("trailer", b, ErrBadEyecatcher, "trailer", len(b)-4)
			}
		})
	}
}

func TestCLCSMCDEyecatcher(t *testing.T) {
	t.Parallel()
	// Receivers accept "SMCD" wherever "SMCR" may stand (net/smc/smc_clc.c smc_clc_wait_msg checks either eyecatcher).
	msg := bytes.Clone(clcReadVector(t, "clc_v1_smcr_accept_ipv4.hex"))
	msg[3] = 0xc4
	msg[len(msg)-1] = 0xc4
	c := clcMustDecode(t, msg)
	if c.Eyecatcher != EyecatcherSMCD || c.Trailer != EyecatcherSMCD || c.Accept.QPN != 228 {
		t.Errorf("eyecatcher %x trailer %x QPN %d", c.Eyecatcher, c.Trailer, c.Accept.QPN)
	}
}

func TestCLCPayloadAndFraming(t *testing.T) {
	t.Parallel()
	prop := clcReference(t, "pingpong.pcap", 8)
	acc := clcReference(t, "pingpong.pcap", 10)
	stream := append(bytes.Clone(prop), acc...)

	n, ok := CLCMessageLength(stream)
	if !ok || n != len(prop) {
		t.Fatalf("CLCMessageLength = %d, %v; want %d, true", n, ok, len(prop))
	}
	var c CLC
	if err := c.DecodeFromBytes(stream, gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	if c.Type != CLCTypeProposal || !bytes.Equal(c.Contents, prop) || !bytes.Equal(c.Payload, acc) {
		t.Fatalf("first message: type %v, %d contents, %d payload bytes", c.Type, len(c.Contents), len(c.Payload))
	}
	if err := c.DecodeFromBytes(c.Payload, gopacket.NilDecodeFeedback); err != nil || c.Type != CLCTypeAccept {
		t.Fatalf("second message: %v %v", c.Type, err)
	}

	for _, tc := range []struct {
		name string
		b    []byte
		n    int
		ok   bool
	}{
		{"6 bytes", prop[:6], 0, false},
		{"7 bytes", prop[:7], 156, true},
		{"bad eyecatcher", append([]byte{0, 0, 0, 0}, prop[4:]...), 156, false},
		{"length below header+trailer", clcWithLength(prop, 11), 11, false},
	} {
		if n, ok := CLCMessageLength(tc.b); n != tc.n || ok != tc.ok {
			t.Errorf("%s: CLCMessageLength = %d, %v; want %d, %v", tc.name, n, ok, tc.n, tc.ok)
		}
	}
}

func TestCLCNewPacket(t *testing.T) {
	t.Parallel()
	msg := clcReference(t, "pingpong.pcap", 10)
	p := gopacket.NewPacket(msg, LayerTypeCLC, gopacket.Default)
	c, ok := p.Layer(LayerTypeCLC).(*CLC)
	if !ok || p.ErrorLayer() != nil {
		t.Fatalf("no CLC layer: %v", p.ErrorLayer())
	}
	if c.Accept.RKey != 0x3a9 || c.LayerType() != LayerTypeCLC || c.NextLayerType() != gopacket.LayerTypeZero {
		t.Errorf("rkey %#x", c.Accept.RKey)
	}
	p = gopacket.NewPacket(msg[:100], LayerTypeCLC, gopacket.Default)
	if p.ErrorLayer() == nil || !errors.Is(p.ErrorLayer().Error(), ErrTruncated) || !p.Metadata().Truncated {
		t.Errorf("truncated Accept: error layer %v, truncated %v", p.ErrorLayer(), p.Metadata().Truncated)
	}

	// A DecodingLayerParser reuses one CLC for every message.
	var layer CLC
	parser := gopacket.NewDecodingLayerParser(LayerTypeCLC, &layer)
	var decoded []gopacket.LayerType
	if err := parser.DecodeLayers(msg, &decoded); err != nil || len(decoded) != 1 || layer.Accept.QPN != 0x11 {
		t.Errorf("parser: %v %v QPN %#x", err, decoded, layer.Accept.QPN)
	}
}

func TestCLCAppendFields(t *testing.T) {
	t.Parallel()
	type want map[string]string // field name -> Value.Format
	cases := []struct {
		name string
		msg  func(t *testing.T) []byte
		want want
	}{
		{"accept", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 10) }, want{
			"smc.clc.type": "2", "smc.clc.version": "2", "smc.clc.length": "160", "smc.clc.first_contact": "1",
			"smc.clc.qpn": "17", "smc.clc.rkey": "937", "smc.clc.alert_token": "1", "smc.clc.eid": "SMC-LAB-UEID",
			"smc.clc.gid": "::ffff:10.10.0.1", "smc.clc.mac": "52:54:00:0a:00:01", "smc.clc.peer_id": "e4ef5254000a0001",
			"smc.clc.rmbe_size": "65536", "smc.clc.mtu": "1024", "smc.clc.rmb_va": "18388237116597534720",
			"smc.clc.psn": "10923054", "smc.clc.path": "0", "smc.clc.rmbe_idx": "1",
			"smc.clc.fce.os_type": "2", "smc.clc.fce.release": "1", "smc.clc.fce.hostname": "(none)",
			"smc.clc.fce.max_conns": "255", "smc.clc.fce.max_links": "2", "smc.clc.fce.feature_mask": "1",
			"smc.clc.fce.direct": "1", "smc.clc.eyecatcher": "SMCR", "smc.clc.trailer": "SMCR",
		}},
		{"confirm", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 12) }, want{
			"smc.clc.type": "3", "smc.clc.gid_count": "1", "smc.clc.gid_list": "::ffff:10.10.0.2", "smc.clc.rkey": "873",
		}},
		{"proposal", func(t *testing.T) []byte { return clcReference(t, "pingpong.pcap", 8) }, want{
			"smc.clc.type": "1", "smc.clc.eid": "SMC-LAB-UEID", "smc.clc.proposal.release": "1",
			"smc.clc.proposal.rocev2_gid": "::ffff:10.10.0.2", "smc.clc.proposal.max_conns": "255",
			"smc.clc.proposal.feature_mask": "1", "smc.clc.proposal.path_v2": "0", "smc.clc.path": "2",
			"smc.clc.proposal.v2_ext_offset": "28",
		}},
		{"proposal v1", func(t *testing.T) []byte { return clcReadVector(t, "clc_v1_smcr_proposal_ipv4.hex") }, want{
			"smc.clc.proposal.ipv4_prefix": "127.0.0.0", "smc.clc.proposal.ipv4_prefix_len": "8",
			"smc.clc.proposal.ipv6_prefix_count": "0",
		}},
		{"decline", func(t *testing.T) []byte { return clcReference(t, "decline-nordma.pcap", 10) }, want{
			"smc.clc.type": "4", "smc.clc.decline.reason": "50528258", "smc.clc.decline.reason_name": "NOSMCRDEV",
			"smc.clc.decline.os_type": "2", "smc.clc.out_of_sync": "0",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := clcMustDecode(t, tc.msg(t))
			var r Record
			c.AppendFields(&r)
			for name, w := range tc.want {
				d, ok := LookupField(name)
				if !ok {
					t.Errorf("field %s not registered", name)
					continue
				}
				v, ok := r.First(d.ID)
				if !ok {
					t.Errorf("%s missing", name)
					continue
				}
				if got := v.Format(d.Kind); got != w {
					t.Errorf("%s = %s, want %s", name, got, w)
				}
			}
			for _, id := range r.IDs {
				if n := Def(id).Name; !strings.HasPrefix(n, "smc.clc.") {
					t.Errorf("CLC emitted field %s outside smc.clc.*", n)
				}
			}
		})
	}
	// The -V tree names decline codes.
	d, _ := LookupField("smc.clc.decline.reason")
	if got := (Value{U: 0x03030002}).Display(d); got != "0x03030002 (NOSMCRDEV)" {
		t.Errorf("Display = %q", got)
	}
}

func TestCLCDoesNotMalloc(t *testing.T) {
	for name, msg := range clcAll(t) {
		var c CLC
		if n := testing.AllocsPerRun(100, func() {
			if err := c.DecodeFromBytes(msg, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: DecodeFromBytes allocates %v times per message", name, n)
		}
		// Fields and summary line run per frame too: -T fields with a few
		// (here non-text) fields wanted, and the text line.
		r := Record{IDs: make([]FieldID, 0, 128), Vals: make([]Value, 0, 128)}
		r.WantOnly([]FieldID{fCLCType, fCLCLength, fCLCQPN})
		line := make([]byte, 0, 512)
		if n := testing.AllocsPerRun(100, func() {
			r.Reset()
			c.AppendFields(&r)
			line = c.AppendSummary(line[:0])
		}); n != 0 {
			t.Errorf("%s: AppendFields+AppendSummary allocate %v times per message", name, n)
		}
		if !r.Has(fCLCType) || r.Has(fCLCEID) || r.Has(fFCEHostname) {
			t.Errorf("%s: Want-limited record holds %v", name, r.IDs)
		}
	}
}

// testFrameAcceptReusedLGR is the server's CLC Accept of multilink.pcap frame
// 37 (Linux 6.12 lab, multilink.pcap frame 37; the capture is not in the
// repository, the bytes are): a second connection placed on link 2 of an
// existing link group, so no first contact and no FCE (108 bytes).
//
//	0000  e2 d4 c3 d9 02 00 6c 20 f4 ee 52 54 00 0a 00 01
//	0010  00 00 00 00 00 00 00 00 00 00 ff ff 0a 0a 00 0b
//	0020  52 54 00 0a 01 01 00 00 11 00 00 04 6b 01 00 00
//	0030  00 02 23 00 ff 42 95 3b 03 b6 00 00 00 f1 3e 41
//	0040  53 4d 43 2d 4c 41 42 2d 55 45 49 44 20 20 20 20
//	0050  20 20 20 20 20 20 20 20 20 20 20 20 20 20 20 20
//	0060  00 00 00 00 00 00 00 00 e2 d4 c3 d9
var testFrameAcceptReusedLGR = []byte{
	0xe2, 0xd4, 0xc3, 0xd9, 0x02, 0x00, 0x6c, 0x20, 0xf4, 0xee, 0x52, 0x54, 0x00, 0x0a, 0x00, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x0a, 0x0a, 0x00, 0x0b,
	0x52, 0x54, 0x00, 0x0a, 0x01, 0x01, 0x00, 0x00, 0x11, 0x00, 0x00, 0x04, 0x6b, 0x01, 0x00, 0x00,
	0x00, 0x02, 0x23, 0x00, 0xff, 0x42, 0x95, 0x3b, 0x03, 0xb6, 0x00, 0x00, 0x00, 0xf1, 0x3e, 0x41,
	0x53, 0x4d, 0x43, 0x2d, 0x4c, 0x41, 0x42, 0x2d, 0x55, 0x45, 0x49, 0x44, 0x20, 0x20, 0x20, 0x20,
	0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe2, 0xd4, 0xc3, 0xd9,
}

func TestCLCAcceptReusedLinkGroup(t *testing.T) {
	t.Parallel()
	c := clcMustDecode(t, testFrameAcceptReusedLGR)
	a := c.Accept
	if c.Type != CLCTypeAccept || c.Length != 108 || c.Version != 2 || c.FirstContact() || a.HasFCE || a.HasGIDList {
		t.Errorf("header = %v %d v%d fc %v fce %v", c.Type, c.Length, c.Version, c.FirstContact(), a.HasFCE)
	}
	if a.GID != clcAddr("::ffff:10.10.0.11") || a.MAC != ([6]byte{0x52, 0x54, 0, 0x0a, 0x01, 0x01}) {
		t.Errorf("gid %v mac %x", a.GID, a.MAC)
	}
	if a.QPN != 0x11 || a.RKey != 0x46b || a.RMBEIdx != 1 || a.AlertToken != 2 || a.RMBVA != 0xff42953b03b60000 || a.PSN != 0xf13e41 {
		t.Errorf("QPN %#x rkey %#x idx %d token %d VA %#x PSN %#x", a.QPN, a.RKey, a.RMBEIdx, a.AlertToken, a.RMBVA, a.PSN)
	}
	if string(clcTrimBlanks(a.EID)) != "SMC-LAB-UEID" {
		t.Errorf("EID %q", a.EID)
	}
	want := `CLC Accept SMC-Rv2 QPN 0x11 token 2 rkey 0x46b VA 0xff42953b03b60000 PSN 0xf13e41 RMBE 64KiB MTU 1024 GID ::ffff:10.10.0.11 MAC 52:54:00:0a:01:01 peer 62702@52:54:00:0a:00:01 EID "SMC-LAB-UEID"`
	if got := c.String(); got != want {
		t.Errorf("summary\n got %s\nwant %s", got, want)
	}
	// Without first contact nothing may follow the fixed v2 body.
	ext := clcWithLength(append(append(bytes.Clone(testFrameAcceptReusedLGR[:104]), make([]byte, 52)...), testFrameAcceptReusedLGR[104:]...), 160)
	if err := c.DecodeFromBytes(ext, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Errorf("non-first-contact Accept with 52 extra bytes: %v", err)
	}
}

// TestCLCDecodeCut: every message of the vectors and reference captures,
// cut after each length from its header to one byte short of whole (a
// capture's snap length), decodes with no error; every field it shows is
// the whole message's, with the same value, none lies past the cut (the
// trailer never: absent is not zero), and the summary says how much was
// captured. A whole message, or less than a header, is not a cut one.
// clcEveryCaptured is every whole CLC message a TCP segment of the
// samples and crafted captures carries (SMC-D, v2 Proposals with
// extensions, ANCK's, v2 Declines), beside clcAll's, each once.
func clcEveryCaptured(t testing.TB) map[string][]byte {
	t.Helper()
	out := clcAll(t)
	seen := map[string]bool{}
	for _, m := range out {
		seen[string(m)] = true
	}
	var files []string
	for _, g := range []string{filepath.Join(testutil.SamplesDir(t), "*.pcap*"), "../testdata/*/*.pcap*"} {
		fs, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	for _, f := range files {
		if testutil.DamagedFile(f) {
			continue
		}
		ps, lt := testutil.ReadFrames(t, f)
		for i, p := range ps {
			pkt := gopacket.NewPacket(p.Data, lt, gopacket.NoCopy)
			tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if !ok {
				continue
			}
			l, ok := CLCMessageLength(tcp.Payload)
			if !ok || l > len(tcp.Payload) || seen[string(tcp.Payload[:l])] {
				continue
			}
			seen[string(tcp.Payload[:l])] = true
			out[filepath.Base(f)+"/"+clcItoa(i+1)] = tcp.Payload[:l]
		}
	}
	return out
}

func TestCLCDecodeCut(t *testing.T) {
	t.Parallel()
	for name, msg := range clcEveryCaptured(t) {
		t.Run(name, func(t *testing.T) {
			var whole CLC
			if err := whole.DecodeFromBytes(msg, gopacket.NilDecodeFeedback); err != nil {
				t.Skipf("not a whole message: %v", err)
			}
			var wr Record
			whole.AppendFields(&wr)
			l := int(whole.Length)
			for n := clcHeaderLen; n < l; n++ {
				var c CLC
				ok, err := c.DecodeCut(msg[:n])
				if !ok || err != nil || c.Cut != n || c.Type != whole.Type || c.Malformed != nil {
					t.Fatalf("%d of %d bytes: ok %v, err %v, cut %d, type %v", n, l, ok, err, c.Cut, c.Type)
				}
				var r Record
				c.AppendFields(&r)
				what := fmt.Sprintf("%d of %d bytes", n, l)
				checkCutFields(t, what, &wr, &r, msg[:n], true)
				checkCutSummary(t, what, c.String(), whole.String(), n, l)
			}
			var c CLC
			if ok, err := c.DecodeCut(msg[:l]); ok || err == nil {
				t.Errorf("DecodeCut of the whole message: ok %v, err %v", ok, err)
			}
			if ok, _ := c.DecodeCut(msg[:clcHeaderLen-1]); ok {
				t.Errorf("DecodeCut of %d bytes: ok", clcHeaderLen-1)
			}
		})
	}
}
