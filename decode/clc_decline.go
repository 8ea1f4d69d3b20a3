package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// Decline layout: struct smc_clc_msg_decline and smc_clc_msg_decline_v2, net/smc/smc_clc.h
// (smc_clc_msg_decline, smc_clc_msg_decline_v2).
const (
	declineV1Len     = 28
	declineV2Len     = 44
	declineExtraDiag = 4 // SMC_DECL_DIAG_COUNT_V2
)

// CLCDecline is the body of a Decline (type 4), sent instead of any other
// CLC message when a side falls back to TCP.
type CLCDecline struct {
	PeerID    [8]byte     // Offset 8, 8 bytes: sender system ID (zero without RoCE device).
	Diagnosis DeclineCode // Offset 16, 4 bytes: peer diagnosis (SMC_CLC_DECL_*).
	OSType    uint8       // Offset 20, mask 0xF0 (v2): sender OS type.
	// Offset 24, 4 x 4 bytes (44-byte v2 only): additional diagnosis
	// codes; Linux sends 0.
	ExtraDiag [declineExtraDiag]DeclineCode
	// ShortV2: a v2 header on the 28-byte layout, what Linux 5.10 to 5.15
	// sent from an SMC-Dv2-capable host: smc_clc_send_decline set
	// hdr.version to the version it declined and os_type in
	// struct smc_clc_msg_decline, whose 28 bytes were then the only
	// Decline; "net/smc: add v2 format of CLC decline message" (5.16)
	// added the 44-byte struct smc_clc_msg_decline_v2 and made
	// smc_clc_msg_decl_valid want 44 bytes for any version above 1. An
	// older kernel's shape, not an error: its peer (of the same era)
	// accepted it and fell back.
	ShortV2 bool

	peer  bool // PeerID is in the message
	fixed bool // the fields up to the diagnosis are in the message
	os    bool // OSType is in the message (v2)
	extra int  // ExtraDiag slots in the message (the 44-byte v2 layout: all)
}

// decodeCut sets the fields that lie wholly within m, the start of a
// Decline the capture cut (CLC.DecodeCut).
func (d *CLCDecline) decodeCut(c *CLC, m []byte) { d.fields(c, m, len(m)) }

// fields sets the fields of m that lie before lim.
func (d *CLCDecline) fields(c *CLC, m []byte, lim int) {
	v2 := c.Version >= 2
	if lim >= 16 {
		d.peer = true
		d.PeerID = [8]byte(m[8:16])
	}
	if lim >= 20 {
		d.fixed = true
		d.Diagnosis = DeclineCode(binary.BigEndian.Uint32(m[16:20]))
		if v2 && lim > 20 {
			d.os = true
			d.OSType = m[20] >> 4
		}
	}
	if v2 {
		d.extra = min(declineExtraDiag, max(0, (lim-24)/4))
		for i := range d.extra {
			d.ExtraDiag[i] = DeclineCode(binary.BigEndian.Uint32(m[24+4*i:]))
		}
	}
}

func (d *CLCDecline) decode(c *CLC, m []byte) error {
	// The fields first, wherever the length puts the trailer, so that
	// DecodePartial shows them for a length no kernel accepts.
	d.fields(c, m, len(m)-clcTrailerLen)
	v2 := c.Version >= 2
	// Linux accepts a v1 Decline of exactly 28 bytes and, since 5.16, a
	// v2 one of exactly 44 (smc_clc_msg_decl_valid, net/smc/smc_clc.c);
	// it does not check the trailer. 5.10 to 5.15 accepted 28 bytes
	// whatever the version (smc_clc_msg_hdr_valid compared the length
	// with sizeof(struct smc_clc_msg_decline)), and sent v2 that way.
	switch {
	case !v2 && len(m) == declineV1Len, v2 && len(m) == declineV2Len:
	case v2 && len(m) == declineV1Len:
		d.ShortV2 = true
	case v2:
		return BadLength("CLC Decline", "length", 5, fmt.Sprintf("v%d Decline must be %d bytes (or %d, as Linux 5.10-5.15 sent it), length says %d", c.Version, declineV2Len, declineV1Len, len(m)))
	default:
		return BadLength("CLC Decline", "length", 5, fmt.Sprintf("v%d Decline must be %d bytes, length says %d", c.Version, declineV1Len, len(m)))
	}
	return nil
}

// Decline fields (struct smc_clc_msg_decline and smc_clc_msg_decline_v2),
// placed from the message's start: the out-of-sync bit of typev2 in the
// header, id_for_peer at 8, peer_diagnosis at 16, os_type (0xf0) at 20,
// v2 peer_diagnosis_v2[] at 24. reason_name is the kernel's name for the
// code, not wire bytes.
var (
	fCLCOutOfSync      = Field(OwnerCLC, "smc.clc.out_of_sync", KindBool, "Decline out-of-sync flag: the receiver must drop its link group", At(7, 1, Bits(0x08)))
	fDeclineReason     = Field(OwnerCLC, "smc.clc.decline.reason", KindUint, "peer diagnosis: the sender's decline reason (SMC_CLC_DECL_*)", HexN(8), Enum(clcDeclineEnum), At(16, 4))
	fDeclineOSType     = Field(OwnerCLC, "smc.clc.decline.os_type", KindUint, "sender OS type (v2 Decline)", Enum(clcOSTypeEnum), At(20, 1, Bits(0xf0)))
	fDeclineExtraDiag  = Field(OwnerCLC, "smc.clc.decline.extra_diag", KindUint, "additional diagnosis code (v2 Decline; one value per slot)", HexN(8), Enum(clcDeclineEnum), At(24, 4, Every(4)))
	fDeclineReasonName = Field(OwnerCLC, "smc.clc.decline.reason_name", KindString, "kernel name of the decline reason (e.g. NOSMCRDEV)")
	// Computed from version and length, so no place of its own; present
	// only when true, like frame.cut.
	fDeclineShortV2 = Field(OwnerCLC, "smc.clc.decline.short_v2", KindBool, "v2 Decline in the 28-byte layout Linux 5.10-5.15 sent (5.16 and later send and want 44 bytes; present only when true)")
)

// clcPeerIDReset is "%%%%%%%" plus NUL, the value Linux keeps in
// local_systemid until a RoCE device is set up (SMC_LOCAL_SYSTEMID_RESET);
// seen in testdata/vectors/clc_v1_smcr_decline_nosmcdev.hex.
var clcPeerIDReset = [8]byte{0x25, 0x25, 0x25, 0x25, 0x25, 0x25, 0x25, 0x00}

// clcDeclineEnum names known codes only: an unknown code would just repeat the
// hex value the -V tree already shows.
func clcDeclineEnum(u uint64) string {
	if c := DeclineCode(u); c.Known() {
		return c.EnumLabel()
	}
	return ""
}

func (d *CLCDecline) appendFields(c *CLC, r *Record) {
	r.AddBool(fCLCOutOfSync, c.Flag)
	if d.peer {
		r.AddBytes(fCLCPeerID, d.PeerID[:])
	}
	if !d.fixed {
		return // a Decline cut, or malformed, before its diagnosis
	}
	r.AddUint(fDeclineReason, uint64(d.Diagnosis))
	r.AddString(fDeclineReasonName, d.Diagnosis.StringIn(c.ANCK))
	if d.os {
		r.AddUint(fDeclineOSType, uint64(d.OSType))
	}
	for _, x := range d.ExtraDiag[:d.extra] {
		r.AddUint(fDeclineExtraDiag, uint64(x))
	}
	if d.ShortV2 {
		r.AddBool(fDeclineShortV2, true)
	}
}

// appendSummary: `CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device`.
func (d *CLCDecline) appendSummary(c *CLC, dst []byte) []byte {
	dst = append(dst, ' ')
	// A Decline has no chosen type; the eyecatcher says which family sent it.
	t := SMCTypeR
	if c.Eyecatcher == EyecatcherSMCD {
		t = SMCTypeD
	}
	dst = clcAppendMode(dst, t, c.Version)
	if !d.fixed {
		return dst
	}
	dst = append(dst, ' ')
	dst = clcAppendCode(dst, d.Diagnosis, c.ANCK)
	dst = append(dst, ": "...)
	dst = append(dst, d.Diagnosis.MeaningIn(c.ANCK)...)
	if c.Flag {
		dst = append(dst, " [out of sync: drop the link group]"...)
	}
	for i, x := range d.ExtraDiag {
		if x != 0 {
			dst = append(dst, " extra["...)
			dst = numfmt.AppendInt(dst, int64(i))
			dst = append(dst, "] "...)
			dst = clcAppendCode(dst, x, c.ANCK)
		}
	}
	dst = append(dst, " (sender "...)
	switch {
	case clcIsZero(d.PeerID[:]):
		dst = append(dst, "peer ID 0: no RoCE device"...)
	case d.PeerID == clcPeerIDReset:
		dst = append(dst, "peer ID unset: no SMC device yet"...)
	default:
		dst = AppendPeerID(dst, d.PeerID)
	}
	if c.Version >= 2 {
		if n := OSTypeName(d.OSType); n != "" {
			dst = append(dst, ", "...)
			dst = append(dst, n...)
		}
	}
	if d.ShortV2 {
		dst = append(dst, ", 28-byte v2 Decline of Linux 5.10-5.15"...)
	}
	if c.Cut == 0 && !c.TrailerValid() { // a trailer the capture cut is not bad
		dst = append(dst, ", bad trailer"...)
	}
	dst = append(dst, ')')
	return dst
}

// clcAppendCode appends "0x03030002 NOSMCRDEV", or only the hex of a code
// that has no name.
func clcAppendCode(dst []byte, c DeclineCode, anck bool) []byte {
	dst = c.clcAppendHex(dst)
	if _, errno := c.Errno(); errno || c.Known() {
		dst = append(dst, ' ')
		dst = append(dst, c.StringIn(anck)...)
	}
	return dst
}
