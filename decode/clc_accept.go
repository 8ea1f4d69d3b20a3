package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// Accept/Confirm layout: struct smc_clc_msg_accept_confirm (SMC-R r0 and SMC-D d0 parts),
// net/smc/smc_clc.h (smc_clc_msg_accept_confirm).
const (
	acceptV1RLen   = 68  // SMC-R v1 total length
	acceptV1DLen   = 48  // SMC-D v1 total length
	acceptV2RBody  = 104 // SMC-R v2 up to the first-contact extension
	acceptV2DBody  = 74  // SMC-D v2 up to the first-contact extension
	fceBaseLen     = 36  // smc_clc_first_contact_ext
	fceV2xLen      = 52  // smc_clc_first_contact_ext_v2x
	fceGIDListHdr  = 4   // smc_clc_fce_gid_ext without the GIDs
	gidLen         = 16  // SMC_GID_SIZE
	hostnameLen    = 32  // SMC_MAX_HOSTNAME_LEN
	acceptEIDROff  = 64  // negotiated EID, SMC-R v2
	acceptEIDDOff  = 34  // negotiated EID, SMC-D v2
	acceptCHIDDOff = 32  // CHID, SMC-D v2
)

// CLCAccept is the body of an Accept (server to client) or a Confirm
// (client to server): the same layout carrying the sender's values. SMC-R
// fields are set when CLC.TypeV1 is SMCTypeR, SMC-D fields when SMCTypeD.
type CLCAccept struct {
	// SMC-R: the r0 part of struct smc_clc_msg_accept_confirm.
	PeerID     [8]byte    // Offset 8, 8 bytes: sender system ID.
	GID        netip.Addr // Offset 16, 16 bytes: sender GID of the link (v2: IPv4-mapped).
	MAC        [6]byte    // Offset 32, 6 bytes: sender RoCE MAC.
	QPN        uint32     // Offset 38, 3 bytes: sender QP number (BTH DestQP towards the sender).
	RKey       uint32     // Offset 41, 4 bytes: rkey of the sender's RMB (RETH R_Key towards it).
	RMBEIdx    uint8      // Offset 45: RMBE index in the RMB (Linux: 1).
	AlertToken uint32     // Offset 46, 4 bytes: sender connection token (in CDCs sent to it).
	RMBESize   uint8      // Offset 50, mask 0xF0: compressed RMBE size, see RMBESizeBytes.
	QPMTU      uint8      // Offset 50, mask 0x0F: IB MTU enum, see QPMTUBytes.
	RMBVA      uint64     // Offset 52, 8 bytes: RMB virtual/DMA address (RETH VA base).
	PSN        uint32     // Offset 61, 3 bytes: sender's initial send PSN on the QP.
	// Offset 51: reserved upstream; ANCK's init_credits (CLC.ANCK).
	InitCredits uint8

	// SMC-D: the d0 part of struct smc_clc_msg_accept_confirm.
	SMCDGID  uint64  // Offset 8, 8 bytes: sender ISM GID.
	DMBToken uint64  // Offset 16, 8 bytes: sender DMB token.
	DMBEIdx  uint8   // Offset 24.
	DMBESize uint8   // Offset 25, mask 0xF0: compressed DMBE size.
	LinkID   [4]byte // Offset 28, 4 bytes: link-group ID in the sender's host byte order.
	CHID     uint16  // Offset 32, 2 bytes (v2).
	GIDExt   uint64  // Offset 66, 8 bytes (v2): GID extension of an Emulated-ISM device.

	// EID is the negotiated EID, 32 bytes blank padded (v2; offset 64 for
	// SMC-R, 34 for SMC-D).
	EID []byte

	// HasFCE: the first-contact extension follows (v2 with first contact).
	HasFCE bool
	FCE    CLCFCE

	// HasGIDList: a first-contact SMC-R Confirm lists the client's GIDs.
	HasGIDList bool
	GIDCount   uint8 // GID list +0.
	gids       []byte

	fixed bool // the SMC-R or SMC-D fields of v1 are in the message
	// captured: the message was cut by the capture after this many bytes
	// (CLC.Cut; 0: whole): a fixed field is set only when it ends within.
	captured int
	v2D      bool // CHID and GIDExt are in the message (SMC-D v2)
}

// GIDs is how many GIDs of the list the message holds: the count, or
// fewer when the capture cut the list.
func (a *CLCAccept) GIDs() int { return len(a.gids) / gidLen }

// ListGID returns the i-th GID of a first-contact Confirm's GID list.
func (a *CLCAccept) ListGID(i int) netip.Addr { return clcGID(a.gids[i*gidLen:]) }

// CLCFCE is the first-contact extension of a v2 Accept/Confirm
// (smc_clc_first_contact_ext and its v2x form).
type CLCFCE struct {
	Offset   int    // message offset of the extension
	Len      int    // 36 (base) or 52 (v2x; also the 36+16 reserved of 5.16..6.5)
	Direct   bool   // +0, mask 0x80: peer on the same subnet (SMC-Rv2 direct)
	OSType   uint8  // +1, mask 0xF0: 1 z/OS, 2 Linux, 3 AIX
	Release  uint8  // +1, mask 0x0F: SMC v2 release (0 = v2.0, 1 = v2.1)
	Hostname []byte // +4, 32 bytes, blank padded
	// v2x fields (Len 52); zero means "not negotiated" (release 0).
	MaxConns      uint8  // +36: negotiated max connections per link group
	MaxLinks      uint8  // +37: negotiated max links per link group
	FeatureMask   uint16 // +38: supplemental features
	VendorOptions uint32 // +40: vendor experimental options
}

func (a *CLCAccept) decode(c *CLC, m []byte) error {
	name := c.layerName()
	l := len(m)
	lim := l - clcTrailerLen
	// The fixed fields are decoded whenever they lie before the trailer,
	// before the length is judged, so that DecodePartial shows them.
	switch c.TypeV1 {
	case SMCTypeR:
		want := acceptV1RLen
		if c.Version >= 2 {
			want = acceptV2RBody + clcTrailerLen
		}
		if lim >= acceptV1RLen-clcTrailerLen {
			a.fixed = true
			a.fixedFields(c, m)
		}
		if l < want || (c.Version == 1 && l != want) {
			return BadLength(name, "length", 5, fmt.Sprintf("SMC-R v%d needs length %d, got %d", c.Version, want, l))
		}
		if c.Version < 2 {
			return nil
		}
		a.EID = m[acceptEIDROff : acceptEIDROff+propEIDLen]
		return a.decodeV2Tail(c, m[:lim], acceptV2RBody, c.Type == CLCTypeConfirm)
	case SMCTypeD:
		want := acceptV1DLen
		if c.Version >= 2 {
			want = acceptV2DBody + clcTrailerLen
		}
		if lim >= acceptV1DLen-clcTrailerLen {
			a.fixed = true
			a.fixedFields(c, m)
		}
		if l < want || (c.Version == 1 && l != want) {
			return BadLength(name, "length", 5, fmt.Sprintf("SMC-D v%d needs length %d, got %d", c.Version, want, l))
		}
		if c.Version < 2 {
			return nil
		}
		a.v2D = true
		a.CHID = binary.BigEndian.Uint16(m[acceptCHIDDOff:])
		a.EID = m[acceptEIDDOff : acceptEIDDOff+propEIDLen]
		a.GIDExt = binary.BigEndian.Uint64(m[66:])
		return a.decodeV2Tail(c, m[:lim], acceptV2DBody, false)
	}
	return &Error{Layer: name, Field: "path", Offset: 7, Err: ErrUnknownType,
		Detail: "chosen SMC type " + c.TypeV1.String()}
}

// decodeCut sets the fixed fields that lie wholly within m, the start of
// a message the capture cut (CLC.DecodeCut).
func (a *CLCAccept) decodeCut(c *CLC, m []byte) {
	a.fixed, a.captured = true, len(m)
	a.fixedFields(c, m)
	if c.Version < 2 {
		return
	}
	fceOff := acceptV2RBody
	switch c.TypeV1 {
	case SMCTypeR:
		if a.has(acceptEIDROff + propEIDLen) {
			a.EID = m[acceptEIDROff : acceptEIDROff+propEIDLen]
		}
	case SMCTypeD:
		fceOff = acceptV2DBody
		if a.has(acceptEIDDOff + propEIDLen) {
			a.EID = m[acceptEIDDOff : acceptEIDDOff+propEIDLen]
		}
		// Fields with a place: dropped by it when not captured.
		a.v2D = true
		if a.has(acceptCHIDDOff + 2) {
			a.CHID = binary.BigEndian.Uint16(m[acceptCHIDDOff:])
		}
		if a.has(acceptV2DBody) {
			a.GIDExt = binary.BigEndian.Uint64(m[66:])
		}
	default:
		return
	}
	if c.Flag && a.has(fceOff+1) {
		a.fceCut(c, m, fceOff)
	}
}

// fceCut sets what m, the start of a first-contact message the capture
// cut at or after the extension's first byte, holds of the extension and
// of an SMC-R Confirm's GID list. The extension's size is not on the
// wire: an Accept's is what the length leaves after it; a Confirm's is the
// one (52 or 36) that the GID list's count, where captured, makes agree
// with the length. While both agree, the size is unknown (FCE.Len 0) and
// only the fields the two forms share are set.
func (a *CLCAccept) fceCut(c *CLC, m []byte, fceOff int) {
	pad := make([]byte, int(c.Length)-clcTrailerLen)
	copy(pad, m)
	rest := len(pad) - fceOff
	gidList := c.Type == CLCTypeConfirm && c.TypeV1 == SMCTypeR
	size := 0
	if !gidList {
		if rest == fceV2xLen || rest == fceBaseLen {
			size = rest
		}
	} else {
		for _, n := range [...]int{fceV2xLen, fceBaseLen} {
			g := fceOff + n
			fits := g+fceGIDListHdr <= len(pad) && (len(pad)-g-fceGIDListHdr)%gidLen == 0
			if fits && a.has(g+1) {
				fits = g+fceGIDListHdr+gidLen*int(pad[g]) == len(pad)
			}
			switch {
			case !fits:
			case size == 0:
				size = n
			default:
				size = -1 // both: not yet told apart
			}
		}
	}
	if size == 0 {
		return // no size fits the length: not an extension to show
	}
	f := &a.FCE
	a.HasFCE = true
	fb := pad[fceOff:]
	f.Offset = fceOff
	f.Direct = fb[0]&0x80 != 0
	f.OSType = fb[1] >> 4
	f.Release = fb[1] & 0x0f
	if a.has(fceOff + 4 + hostnameLen) {
		f.Hostname = m[fceOff+4 : fceOff+4+hostnameLen]
	}
	if size < 0 {
		return
	}
	f.Len = size
	if size == fceV2xLen {
		f.MaxConns = fb[36]
		f.MaxLinks = fb[37]
		f.FeatureMask = binary.BigEndian.Uint16(fb[38:])
		f.VendorOptions = binary.BigEndian.Uint32(fb[40:])
	}
	if g := fceOff + size; gidList && a.has(g+1) {
		a.HasGIDList = true
		a.GIDCount = m[g]
		whole := max(0, min(int(a.GIDCount), (len(m)-g-fceGIDListHdr)/gidLen))
		a.gids = pad[g+fceGIDListHdr : g+fceGIDListHdr+gidLen*whole]
	}
}

// FCECaptured reports whether the message holds its whole first-contact
// extension: always when it has one and is whole; for one the capture
// cut, when the cut lies past the extension and its size is known.
func (a *CLCAccept) FCECaptured() bool {
	return a.HasFCE && a.FCE.Len != 0 && a.has(a.FCE.Offset+a.FCE.Len)
}

// fixedFields sets the v1 fields of the chosen type (the r0 or d0 part of
// struct smc_clc_msg_accept_confirm) that m holds (has).
func (a *CLCAccept) fixedFields(c *CLC, m []byte) {
	switch c.TypeV1 {
	case SMCTypeR:
		if a.has(16) {
			a.PeerID = [8]byte(m[8:16])
		}
		if a.has(32) {
			a.GID = clcGID(m[16:])
		}
		if a.has(38) {
			a.MAC = [6]byte(m[32:38])
		}
		if a.has(41) {
			a.QPN = u24(m[38:])
		}
		if a.has(45) {
			a.RKey = binary.BigEndian.Uint32(m[41:])
		}
		if a.has(46) {
			a.RMBEIdx = m[45]
		}
		if a.has(50) {
			a.AlertToken = binary.BigEndian.Uint32(m[46:])
		}
		if a.has(51) {
			a.RMBESize, a.QPMTU = m[50]>>4, m[50]&0x0f
		}
		if a.has(acceptInitCreditsOff + 1) {
			a.InitCredits = m[acceptInitCreditsOff]
		}
		if a.has(60) {
			a.RMBVA = binary.BigEndian.Uint64(m[52:])
		}
		if a.has(64) {
			a.PSN = u24(m[61:])
		}
	case SMCTypeD:
		if a.has(16) {
			a.SMCDGID = binary.BigEndian.Uint64(m[8:])
		}
		if a.has(24) {
			a.DMBToken = binary.BigEndian.Uint64(m[16:])
		}
		if a.has(25) {
			a.DMBEIdx = m[24]
		}
		if a.has(26) {
			a.DMBESize = m[25] >> 4
		}
		if a.has(32) {
			a.LinkID = [4]byte(m[28:32])
		}
	}
}

// has reports whether the message holds its bytes up to offset end: always
// for a whole message, up to where the capture cut it for one it cut.
func (a *CLCAccept) has(end int) bool { return a.captured == 0 || end <= a.captured }

// decodeV2Tail decodes what follows the fixed v2 body: nothing without first
// contact, else the FCE and, in an SMC-R Confirm, the GID list. body is the
// message without its trailer.
func (a *CLCAccept) decodeV2Tail(c *CLC, body []byte, fceOff int, gidList bool) error {
	name := c.layerName()
	rest := len(body) - fceOff
	if !c.Flag {
		if rest != 0 {
			return BadLength(name, "length", 5, fmt.Sprintf("%d unexpected bytes before the trailer without first contact", rest))
		}
		return nil
	}
	fceLen := 0
	switch {
	case gidList:
		// The FCE size is not on the wire; it is the one that makes the GID
		// count and the length agree (as smc_clc_fill_fce / smc_clc_v2x_features_validate read it, net/smc/smc_clc.c).
		for _, n := range [...]int{fceV2xLen, fceBaseLen} {
			g := fceOff + n
			if g+fceGIDListHdr <= len(body) && g+fceGIDListHdr+gidLen*int(body[g]) == len(body) {
				fceLen = n
				break
			}
		}
		if fceLen == 0 {
			return BadLength(name, "gid_count", fceOff+fceV2xLen,
				fmt.Sprintf("%d bytes after offset %d fit no FCE + GID list", rest, fceOff))
		}
	case rest == fceV2xLen || rest == fceBaseLen:
		fceLen = rest
	default:
		return BadLength(name, "fce", fceOff, fmt.Sprintf("first-contact extension of %d bytes (want %d or %d)", rest, fceBaseLen, fceV2xLen))
	}
	f := &a.FCE
	a.HasFCE = true
	fb := body[fceOff : fceOff+fceLen]
	f.Offset = fceOff
	f.Len = fceLen
	f.Direct = fb[0]&0x80 != 0
	f.OSType = fb[1] >> 4
	f.Release = fb[1] & 0x0f
	f.Hostname = fb[4 : 4+hostnameLen]
	if fceLen == fceV2xLen {
		f.MaxConns = fb[36]
		f.MaxLinks = fb[37]
		f.FeatureMask = binary.BigEndian.Uint16(fb[38:])
		f.VendorOptions = binary.BigEndian.Uint32(fb[40:])
	}
	if gidList {
		g := fceOff + fceLen
		a.HasGIDList = true
		a.GIDCount = body[g]
		a.gids = body[g+fceGIDListHdr:]
	}
	return nil
}

// Accept/Confirm fields (struct smc_clc_msg_accept_confirm).
//
// Places, from the message's start: the first-contact bit of typev2 in the
// header (SMC_FIRST_CONTACT_MASK); SMC-R: struct smcr_clc_msg_accept_confirm
// at 8 (struct smc_clc_msg_local, then qpn, rmb_rkey, rmbe_idx,
// rmbe_alert_token, one byte of rmbe_size (0xf0) and qp_mtu (0x0f),
// rmb_dma_addr, psn), v2 the EID at 64 and the first-contact extension at
// 104 (offsetofend r1); SMC-D: struct smcd_clc_msg_accept_confirm_common
// at 8, v2 chid at 32, the EID at 34, gid_ext at 66, the extension at 74
// (offsetofend d1). The extension is struct smc_clc_first_contact_ext(_v2x);
// the GID list after it has no fixed place (the extension's size is not on
// the wire).
var (
	fCLCFirstContact = Field(OwnerCLC, "smc.clc.first_contact", KindBool, "first contact: the connection creates a new link group", At(7, 1, Bits(0x08)))
	fCLCQPN          = Field(OwnerCLC, "smc.clc.qpn", KindUint, "sender QP number (SMC-R)", HexN(6), At(38, 3))
	fCLCRKey         = Field(OwnerCLC, "smc.clc.rkey", KindUint, "rkey of the sender's RMB (SMC-R)", Hex(), At(41, 4))
	fCLCRMBEIdx      = Field(OwnerCLC, "smc.clc.rmbe_idx", KindUint, "RMBE index in the RMB (SMC-R)", At(45, 1))
	fCLCAlertToken   = Field(OwnerCLC, "smc.clc.alert_token", KindUint, "sender RMBE alert token = connection token in CDCs (SMC-R)", At(46, 4))
	fCLCRMBESize     = Field(OwnerCLC, "smc.clc.rmbe_size", KindUint, "RMBE size in bytes (SMC-R)", At(50, 1, Bits(0xf0), Via(rmbeSize)))
	fCLCMTU          = Field(OwnerCLC, "smc.clc.mtu", KindUint, "QP MTU in bytes (SMC-R)", At(50, 1, Bits(0x0f), Via(qpMTU)))
	fCLCRMBVA        = Field(OwnerCLC, "smc.clc.rmb_va", KindUint, "RMB virtual address (SMC-R)", Hex(), At(52, 8))
	fCLCPSN          = Field(OwnerCLC, "smc.clc.psn", KindUint, "sender initial packet sequence number (SMC-R)", HexN(6), At(61, 3))

	fSMCDGID      = Field(OwnerCLC, "smc.clc.smcd.gid", KindUint, "sender ISM GID (SMC-D)", Hex(), At(8, 8))
	fSMCDDMBToken = Field(OwnerCLC, "smc.clc.smcd.dmb_token", KindUint, "sender DMB token (SMC-D)", Hex(), At(16, 8))
	fSMCDDMBEIdx  = Field(OwnerCLC, "smc.clc.smcd.dmbe_idx", KindUint, "DMBE index (SMC-D)", At(24, 1))
	fSMCDDMBESize = Field(OwnerCLC, "smc.clc.smcd.dmbe_size", KindUint, "DMBE size in bytes (SMC-D)", At(25, 1, Bits(0xf0), Via(rmbeSize)))
	fSMCDLinkID   = Field(OwnerCLC, "smc.clc.smcd.link_id", KindBytes, "link-group ID, raw bytes in the sender's host order (SMC-D)", At(28, 4))
	fSMCDCHID     = Field(OwnerCLC, "smc.clc.smcd.chid", KindUint, "ISM CHID (SMC-D v2)", Hex(), At(acceptCHIDDOff, 2))
	fSMCDGIDExt   = Field(OwnerCLC, "smc.clc.smcd.gid_ext", KindUint, "GID extension of an Emulated-ISM device (SMC-D v2)", Hex(), At(66, 8))

	fFCEDirect      = Field(OwnerCLC, "smc.clc.fce.direct", KindBool, "SMC-Rv2 direct: peer on the same IP subnet", fceAt(0, 1, Bits(0x80)))
	fFCEOSType      = Field(OwnerCLC, "smc.clc.fce.os_type", KindUint, "sender OS type (1 z/OS, 2 Linux, 3 AIX)", Enum(clcOSTypeEnum), fceAt(1, 1, Bits(0xf0)))
	fFCERelease     = Field(OwnerCLC, "smc.clc.fce.release", KindUint, "sender SMC v2 release (0 = v2.0, 1 = v2.1)", fceAt(1, 1, Bits(0x0f)))
	fFCEHostname    = Field(OwnerCLC, "smc.clc.fce.hostname", KindString, "sender host name", fceAt(4, hostnameLen))
	fFCEMaxConns    = Field(OwnerCLC, "smc.clc.fce.max_conns", KindUint, "negotiated max connections per link group (v2.1)", fceAt(36, 1))
	fFCEMaxLinks    = Field(OwnerCLC, "smc.clc.fce.max_links", KindUint, "negotiated max links per link group (v2.1)", fceAt(37, 1))
	fFCEFeatureMask = Field(OwnerCLC, "smc.clc.fce.feature_mask", KindUint, "negotiated supplemental features (v2.1)", Hex(), fceAt(38, 2))
	fFCEVendorOpts  = Field(OwnerCLC, "smc.clc.fce.vendor_options", KindUint, "vendor experimental options (v2.1)", Hex(), fceAt(40, 4))

	fCLCGIDCount = Field(OwnerCLC, "smc.clc.gid_count", KindUint, "number of GIDs in a first-contact Confirm's GID list")
	fCLCGIDList  = Field(OwnerCLC, "smc.clc.gid_list", KindAddr, "client RoCEv2 GID usable for the link group (one value per GID)")
)

// fceAt places a field of the first-contact extension, off bytes into it:
// both places, as SMC-R and SMC-D put the extension apart.
func fceAt(off, size int, opts ...PlaceOpt) FieldOpt {
	r := At(acceptV2RBody+off, size, append(opts, clcAcceptIn(SMCTypeR))...)
	d := At(acceptV2DBody+off, size, append(opts, clcAcceptIn(SMCTypeD))...)
	return func(f *FieldDef) { r(f); d(f) }
}

// clcAcceptIn limits a place to Accept and Confirm messages of SMC type t.
func clcAcceptIn(t SMCType) PlaceOpt {
	return In(CLCLayout(CLCTypeAccept, t), CLCLayout(CLCTypeConfirm, t))
}

// rmbeSize and qpMTU are RMBESizeBytes and QPMTUBytes for a Place's Via.
func rmbeSize(n uint64) uint64 { return RMBESizeBytes(uint8(n)) }
func qpMTU(n uint64) uint64    { return QPMTUBytes(uint8(n)) }

func (a *CLCAccept) appendFields(c *CLC, r *Record) {
	r.AddBool(fCLCFirstContact, c.Flag)
	switch {
	case !a.fixed:
		// A malformed message too short for the fields (DecodePartial).
	case c.TypeV1 == SMCTypeR:
		r.AddBytes(fCLCPeerID, a.PeerID[:])
		r.AddAddr(fCLCGID, a.GID)
		r.AddBytes(fCLCMAC, a.MAC[:])
		r.AddUint(fCLCQPN, uint64(a.QPN))
		r.AddUint(fCLCRKey, uint64(a.RKey))
		r.AddUint(fCLCRMBEIdx, uint64(a.RMBEIdx))
		r.AddUint(fCLCAlertToken, uint64(a.AlertToken))
		r.AddUint(fCLCRMBESize, RMBESizeBytes(a.RMBESize))
		r.AddUint(fCLCMTU, QPMTUBytes(a.QPMTU))
		r.AddUint(fCLCRMBVA, a.RMBVA)
		r.AddUint(fCLCPSN, uint64(a.PSN))
	case c.TypeV1 == SMCTypeD:
		r.AddUint(fSMCDGID, a.SMCDGID)
		r.AddUint(fSMCDDMBToken, a.DMBToken)
		r.AddUint(fSMCDDMBEIdx, uint64(a.DMBEIdx))
		r.AddUint(fSMCDDMBESize, RMBESizeBytes(a.DMBESize))
		r.AddBytes(fSMCDLinkID, a.LinkID[:])
		if a.v2D {
			r.AddUint(fSMCDCHID, uint64(a.CHID))
			r.AddUint(fSMCDGIDExt, a.GIDExt)
		}
	}
	if a.EID != nil {
		r.AddText(fCLCEID, clcTrimBlanks(a.EID))
	}
	if a.HasFCE {
		f := &a.FCE
		r.AddBool(fFCEDirect, f.Direct)
		r.AddUint(fFCEOSType, uint64(f.OSType))
		r.AddUint(fFCERelease, uint64(f.Release))
		r.AddText(fFCEHostname, clcTrimBlanks(f.Hostname))
		if f.Len == fceV2xLen {
			r.AddUint(fFCEMaxConns, uint64(f.MaxConns))
			r.AddUint(fFCEMaxLinks, uint64(f.MaxLinks))
			r.AddUint(fFCEFeatureMask, uint64(f.FeatureMask))
			r.AddUint(fFCEVendorOpts, uint64(f.VendorOptions))
			if o, ok := a.Alibaba(c); ok {
				appendAliFields(r, fANCKAgreed, o)
			}
		}
	}
	if c.ANCK && a.fixed && c.TypeV1 == SMCTypeR {
		r.AddUint(fANCKInitCredits, uint64(a.InitCredits))
	}
	if a.HasGIDList {
		r.AddUint(fCLCGIDCount, uint64(a.GIDCount))
		for i := range a.GIDs() {
			r.AddAddr(fCLCGIDList, a.ListGID(i))
		}
	}
}

// appendSummary: `CLC Accept SMC-Rv2 first-contact QPN 0x11 token 1 rkey 0x3a9 ...`.
func (a *CLCAccept) appendSummary(c *CLC, dst []byte) []byte {
	dst = append(dst, ' ')
	dst = clcAppendMode(dst, c.TypeV1, c.Version)
	if c.Flag {
		dst = append(dst, " first-contact"...)
	}
	if !a.fixed {
		return dst // DecodePartial of a message too short for its fields
	}
	switch c.TypeV1 {
	case SMCTypeR:
		// What the capture holds of each (has: always, unless cut).
		if a.has(41) {
			dst = append(dst, " QPN "...)
			dst = clcAppendHex(dst, uint64(a.QPN))
		}
		if a.has(50) {
			dst = append(dst, " token "...)
			dst = numfmt.AppendUint(dst, uint64(a.AlertToken))
		}
		if a.has(45) {
			dst = append(dst, " rkey "...)
			dst = clcAppendHex(dst, uint64(a.RKey))
		}
		if a.has(60) {
			dst = append(dst, " VA "...)
			dst = clcAppendHex(dst, a.RMBVA)
		}
		if a.has(64) {
			dst = append(dst, " PSN "...)
			dst = clcAppendHex(dst, uint64(a.PSN))
		}
		if a.has(51) {
			dst = append(dst, " RMBE "...)
			dst = clcAppendSize(dst, RMBESizeBytes(a.RMBESize))
		}
		if a.has(46) && a.RMBEIdx != 1 {
			dst = append(dst, " idx "...)
			dst = numfmt.AppendUint(dst, uint64(a.RMBEIdx))
		}
		if a.has(51) {
			dst = append(dst, " MTU "...)
			dst = numfmt.AppendUint(dst, QPMTUBytes(a.QPMTU))
		}
		if a.has(32) {
			dst = append(dst, " GID "...)
			dst = a.GID.AppendTo(dst)
		}
		if a.has(38) {
			dst = append(dst, " MAC "...)
			dst = clcAppendMAC(dst, a.MAC[:])
		}
		if a.has(16) {
			dst = append(dst, " peer "...)
			dst = AppendPeerID(dst, a.PeerID)
		}
	case SMCTypeD:
		if a.has(16) {
			dst = append(dst, " GID "...)
			dst = clcAppendHex(dst, a.SMCDGID)
		}
		if a.has(24) {
			dst = append(dst, " DMB token "...)
			dst = clcAppendHex(dst, a.DMBToken)
		}
		if a.has(26) {
			dst = append(dst, " DMBE "...)
			dst = clcAppendSize(dst, RMBESizeBytes(a.DMBESize))
		}
		if a.v2D && a.has(acceptCHIDDOff+2) {
			dst = append(dst, " CHID "...)
			dst = clcAppendHex(dst, uint64(a.CHID))
			if a.has(acceptV2DBody) && a.GIDExt != 0 {
				dst = append(dst, " GID ext "...)
				dst = clcAppendHex(dst, a.GIDExt)
			}
		}
	}
	if a.EID != nil {
		dst = append(dst, " EID "...)
		dst = clcAppendQuoted(dst, clcTrimBlanks(a.EID))
	}
	if a.HasFCE {
		f, o := &a.FCE, a.FCE.Offset
		dst = append(dst, " (FCE:"...)
		if a.has(o + 2) {
			dst = append(dst, ' ')
			if n := OSTypeName(f.OSType); n != "" {
				dst = append(dst, n...)
			} else {
				dst = append(dst, "OS "...)
				dst = numfmt.AppendUint(dst, uint64(f.OSType))
			}
			dst = append(dst, " release "...)
			dst = numfmt.AppendUint(dst, uint64(f.Release))
		}
		if a.has(o + 4 + hostnameLen) {
			dst = append(dst, " host "...)
			dst = clcAppendQuoted(dst, clcTrimBlanks(f.Hostname))
		}
		if f.Direct {
			dst = append(dst, " direct"...)
		}
		if f.Len == fceV2xLen && a.has(o+40) && (f.MaxConns != 0 || f.MaxLinks != 0 || f.FeatureMask != 0) {
			dst = append(dst, ", max conns "...)
			dst = numfmt.AppendUint(dst, uint64(f.MaxConns))
			dst = append(dst, " links "...)
			dst = numfmt.AppendUint(dst, uint64(f.MaxLinks))
			dst = append(dst, " features "...)
			dst = clcAppendHex(dst, uint64(f.FeatureMask))
		}
		dst = append(dst, ')')
	}
	if c.ANCK && c.TypeV1 == SMCTypeR && a.has(acceptInitCreditsOff+1) {
		if o, ok := a.Alibaba(c); ok {
			dst = appendAli(dst, "agreed", o)
			dst = append(dst, ',')
		} else {
			dst = append(dst, " [ANCK"...)
		}
		dst = append(dst, " init credits "...)
		dst = numfmt.AppendUint(dst, uint64(a.InitCredits))
		dst = append(dst, ']')
	}
	if a.HasGIDList && (a.GIDs() > 0 || a.captured == 0) {
		dst = append(dst, " GIDs"...)
		for i := range a.GIDs() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, ' ')
			dst = a.ListGID(i).AppendTo(dst)
		}
	}
	return dst
}
