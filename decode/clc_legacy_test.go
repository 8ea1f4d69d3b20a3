package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
)

// testCLCDeclineV2Short is the Decline Linux 5.10 to 5.15 sent from a host
// with SMC-Dv2 (smc_clc_send_decline(smc, reason, SMC_V2) filling the
// 28-byte struct smc_clc_msg_decline of those kernels: hdr.version 2,
// os_type SMC_CLC_OS_LINUX in the high nibble of byte 20, no
// peer_diagnosis_v2[]). Built from the kernel source, not captured: the
// lab's kernels are 6.x. Peer ID zero (no RoCE device: the
// smc_ib_is_valid_local_systemid test fails), reason NOSMCDEV.
//
//	e2d4c3d9 04 001c 20 | 00000000 00000000 | 03030000 | 20 000000 | e2d4c3d9
var testCLCDeclineV2Short = []byte{
	0xe2, 0xd4, 0xc3, 0xd9, 0x04, 0x00, 0x1c, 0x20,
	0, 0, 0, 0, 0, 0, 0, 0,
	0x03, 0x03, 0x00, 0x00,
	0x20, 0, 0, 0,
	0xe2, 0xd4, 0xc3, 0xd9,
}

func clcFieldValues(c *CLC) map[string][]string {
	var r Record
	c.AppendFields(&r)
	out := map[string][]string{}
	for i, id := range r.IDs {
		d := Def(id)
		out[d.Name] = append(out[d.Name], r.Vals[i].Format(d.Kind))
	}
	return out
}

// TestCLCDeclineV2Short: the 28-byte v2 Decline of Linux 5.10-5.15 is a
// Decline, with its diagnosis and OS type, marked as that era's shape
// (issue 28, point 9).
func TestCLCDeclineV2Short(t *testing.T) {
	c := clcMustDecode(t, testCLCDeclineV2Short)
	d := c.Decline
	if c.Type != CLCTypeDecline || c.Version != 2 || !d.ShortV2 || d.Diagnosis != DeclineNoSMCDev || d.OSType != 2 {
		t.Fatalf("decline %+v, version %d", d, c.Version)
	}
	s := c.String()
	for _, w := range []string{"0x03030000 NOSMCDEV", "Linux", "28-byte v2 Decline of Linux 5.10-5.15"} {
		if !strings.Contains(s, w) {
			t.Errorf("summary %q lacks %q", s, w)
		}
	}
	f := clcFieldValues(c)
	for name, want := range map[string]string{"smc.clc.type": "4", "smc.clc.decline.reason": "50528256",
		"smc.clc.decline.os_type": "2", "smc.clc.decline.short_v2": "1"} {
		if got := f[name]; len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want %s", name, got, want)
		}
	}
	if f["smc.clc.decline.extra_diag"] != nil {
		t.Errorf("extra_diag %v from a 28-byte Decline", f["smc.clc.decline.extra_diag"])
	}
	// The 44-byte v2 Decline of 5.16 and later is not marked.
	c = clcMustDecode(t, clcReference(t, "decline-nordma.pcap", 10))
	if c.Decline.ShortV2 || clcFieldValues(c)["smc.clc.decline.short_v2"] != nil {
		t.Errorf("44-byte v2 Decline marked short")
	}
	// Any other length of a v2 Decline is refused, as 5.16+ refuses it.
	b := clcWithLength(append(bytes.Clone(testCLCDeclineV2Short), 0, 0, 0, 0), 32)
	var bad CLC
	if err := bad.DecodeFromBytes(b, gopacket.NilDecodeFeedback); !errors.Is(err, ErrBadLength) {
		t.Errorf("32-byte v2 Decline: %v", err)
	}
}

// TestCLCDecodePartial: a message today's kernel refuses keeps the fields
// before its fault, and says what is wrong (issue 28, point 9).
func TestCLCDecodePartial(t *testing.T) {
	t.Run("accept v1 too long", func(t *testing.T) {
		// A v1 SMC-R Accept with 4 bytes more than Linux accepts
		// (smc_clc_msg_acc_conf_valid wants 68).
		m := clcReadVector(t, "clc_v1_smcr_accept_ipv4.hex")
		b := clcWithLength(append(append(bytes.Clone(m[:len(m)-4]), 0, 0, 0, 0), m[len(m)-4:]...), len(m)+4)
		var c CLC
		ok, err := c.DecodePartial(b)
		if !ok || !errors.Is(err, ErrBadLength) || c.Malformed != err {
			t.Fatalf("DecodePartial = %v, %v (Malformed %v)", ok, err, c.Malformed)
		}
		f := clcFieldValues(&c)
		for name, want := range map[string]string{"smc.clc.type": "2", "smc.clc.qpn": "228", "smc.clc.rkey": "5501", "smc.clc.length": "72"} {
			if got := f[name]; len(got) != 1 || got[0] != want {
				t.Errorf("%s = %v, want %s", name, got, want)
			}
		}
		if s := c.String(); !strings.Contains(s, "QPN 0xe4") {
			t.Errorf("summary %q", s)
		}
		var strict CLC
		if err2 := strict.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("DecodeFromBytes %v, DecodePartial %v", err2, err)
		}
	})
	t.Run("decline v2 30 bytes", func(t *testing.T) {
		b := clcWithLength(append(bytes.Clone(testCLCDeclineV2Short), 0, 0), 30)
		var c CLC
		ok, err := c.DecodePartial(b)
		if !ok || err == nil || c.Decline.Diagnosis != DeclineNoSMCDev {
			t.Fatalf("DecodePartial = %v, %v, %+v", ok, err, c.Decline)
		}
	})
	t.Run("accept too short for its fields", func(t *testing.T) {
		m := clcReadVector(t, "clc_v1_smcr_accept_ipv4.hex")
		b := clcWithLength(m[:40], 40)
		var c CLC
		ok, err := c.DecodePartial(b)
		if !ok || err == nil {
			t.Fatalf("DecodePartial = %v, %v", ok, err)
		}
		f := clcFieldValues(&c)
		if f["smc.clc.qpn"] != nil || f["smc.clc.type"] == nil {
			t.Errorf("fields of a 40-byte Accept: %v", f)
		}
	})
	t.Run("not framed", func(t *testing.T) {
		var c CLC
		m := clcReadVector(t, "clc_v1_smcr_accept_ipv4.hex")
		if ok, err := c.DecodePartial(m[:30]); ok || !errors.Is(err, ErrTruncated) || c.Contents != nil {
			t.Errorf("cut message: %v, %v", ok, err)
		}
	})
}

// TestCLCProposalV1SMCDArea: a v1 Proposal's SMC-D area is the ISM GID and
// 32 reserved bytes (struct smc_clc_msg_smcd before 5.10); CHID, v2
// extension offset and vendor OUI are v2's reading of those bytes.
func TestCLCProposalV1SMCDArea(t *testing.T) {
	v := clcReadVector(t, "clc_v1_smcr_proposal_ipv4.hex")
	area := make([]byte, propSMCDAreaLen)
	binary.BigEndian.PutUint64(area, 0x1122334455667788)
	for i := 8; i < len(area); i++ {
		area[i] = 0xa5 // reserved in v1: whatever was there
	}
	b := append(append(append([]byte(nil), v[:40]...), area...), v[40:]...)
	binary.BigEndian.PutUint16(b[5:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[38:], propSMCDAreaLen)
	b[7] = 0x10 | byte(SMCTypeB)
	c := clcMustDecode(t, b)
	if !c.Proposal.HasSMCDArea {
		t.Fatalf("no SMC-D area: %+v", c.Proposal)
	}
	f := clcFieldValues(c)
	if f["smc.clc.proposal.ism_gid"] == nil {
		t.Errorf("ism_gid missing")
	}
	for _, name := range []string{"smc.clc.proposal.ism_chid", "smc.clc.proposal.v2_ext_offset", "smc.clc.proposal.vendor_oui"} {
		if f[name] != nil {
			t.Errorf("%s = %v in a v1 Proposal (reserved bytes)", name, f[name])
		}
	}
}

// TestCLCProposalBadV2ExtOffset: an extension offset that points past the
// trailer is the offset's fault, and the error says so.
func TestCLCProposalBadV2ExtOffset(t *testing.T) {
	b := bytes.Clone(clcReference(t, "pingpong.pcap", 8))
	binary.BigEndian.PutUint16(b[50:], 200)
	var c CLC
	err := c.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
	var de *Error
	if !errors.As(err, &de) || de.Field != "v2_ext_offset" || de.Offset != 50 {
		t.Fatalf("err = %v, want one at offset 50 (v2_ext_offset)", err)
	}
	// A message cut short where the extension rightly starts is still
	// the length's fault.
	b = bytes.Clone(clcReference(t, "pingpong.pcap", 8))
	b = clcWithLength(b, len(b)-8)
	if err := c.DecodeFromBytes(b, gopacket.NilDecodeFeedback); !errors.As(err, &de) || de.Field == "v2_ext_offset" {
		t.Errorf("short message: %v", err)
	}
}

// TestCLCDeclineV2ShortRoundTrip: the 28-byte v2 Decline serializes back
// to its 28 bytes (it panicked, writing the 44-byte layout's extra codes).
func TestCLCDeclineV2ShortRoundTrip(t *testing.T) {
	for _, fix := range []bool{false, true} {
		c := clcMustDecode(t, testCLCDeclineV2Short)
		buf := gopacket.NewSerializeBuffer()
		if err := c.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: fix}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), testCLCDeclineV2Short) {
			t.Errorf("FixLengths %v:\n got % x\nwant % x", fix, buf.Bytes(), testCLCDeclineV2Short)
		}
	}
}
