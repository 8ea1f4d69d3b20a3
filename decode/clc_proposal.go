package decode

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// Proposal layout: struct smc_clc_msg_proposal and its v2 extensions in net/smc/smc_clc.h
// (smc_clc_msg_proposal_area).
const (
	propFixedLen    = 40 // header + peer ID + GID + MAC + iparea_offset
	propSMCDAreaLen = 40 // smc_clc_msg_smcd
	propPrefixLen   = 8  // smc_clc_msg_proposal_prefix
	propIPv6Len     = 17 // smc_clc_ipv6_prefix, packed
	propV2ExtLen    = 40 // smc_clc_v2_extension_fixed
	propEIDLen      = 32 // SMC_MAX_EID_LEN
	propSMCDv2Len   = 48 // smc_clc_smcd_v2_extension_fixed
	propGIDCHIDLen  = 10 // smc_clc_smcd_gid_chid
	// The v2 extension offset counts from the end of its own field (52).
	propV2ExtBase = 52
)

// CLCProposal is the body of a Proposal (type 1, client to server).
type CLCProposal struct {
	// Offset 8, 8 bytes: sender system ID; zero in a v2-only Proposal.
	PeerID [8]byte
	// Offset 16, 16 bytes: SMC-R v1 (RoCEv1) GID; zero if not offered.
	GID netip.Addr
	// Offset 32, 6 bytes: RoCE MAC for SMC-R v1.
	MAC [6]byte
	// Offset 38, 2 bytes: bytes between offset 40 and the IP prefix area.
	IPAreaOffset uint16

	// HasSMCDArea: the 40-byte SMC-D area at offset 40 is present (always
	// in v2, in v1 only when IPAreaOffset is 40).
	HasSMCDArea bool
	ISMGID      uint64  // Offset 40, 8 bytes: native ISM GID.
	ISMCHID     uint16  // Offset 48, 2 bytes (v2).
	V2ExtOffset uint16  // Offset 50, 2 bytes: from offset 52 to the v2 extension.
	VendorOUI   [3]byte // Offset 52, 3 bytes.
	// Offset 55, 5 bytes: vendor_exp_options (v2.1; ANCK: a reserved
	// byte, then struct smc_clc_vendor_opt_ali, see Alibaba).
	VendorOptions [5]byte

	// HasPrefix: the IP prefix area at 40+IPAreaOffset is present (v1, or
	// v2 offering a v1 type).
	HasPrefix       bool
	IPv4Prefix      netip.Addr // prefix +0, 4 bytes: outgoing subnet.
	IPv4PrefixLen   uint8      // prefix +4.
	IPv6PrefixCount uint8      // prefix +7.
	ipv6            []byte     // 17 bytes per prefix

	HasV2Ext bool
	V2Ext    CLCV2Ext

	HasSMCDv2Ext bool
	SMCDv2Ext    CLCSMCDv2Ext

	fixed bool // PeerID to IPAreaOffset are in the message
	// captured: the capture cut the message after this many bytes
	// (CLC.DecodeCut); 0 for a whole one.
	captured int
}

// has reports whether the message holds its bytes up to offset end.
func (p *CLCProposal) has(end int) bool { return p.captured == 0 || end <= p.captured }

// decodeCut sets the fields that lie wholly within m, the start of a
// Proposal the capture cut (CLC.DecodeCut). The message is decoded from a
// copy padded with zeros to its length, so that each area is found where
// the captured offsets put it; then an area without a fixed place (the
// prefixes, the v2 and SMC-Dv2 extensions) is kept only when m holds its
// fixed part, and a list only its whole entries. Fields with a fixed place
// are dropped by it (Record.addCaptured); the summary asks has.
func (p *CLCProposal) decodeCut(c *CLC, m []byte) {
	pad := make([]byte, c.Length)
	copy(pad, m)
	// Zeros past the cut are not the sender's: the padded message's
	// length checks say nothing.
	_ = p.decode(c, pad)
	n := len(m)
	p.captured = n
	whole := func(start, size, count int) int { return max(0, min(count, (n-start)/size)) }
	if p.HasPrefix {
		off := propFixedLen + int(p.IPAreaOffset)
		if p.HasPrefix = p.has(off + propPrefixLen); p.HasPrefix {
			p.ipv6 = p.ipv6[:propIPv6Len*whole(off+propPrefixLen, propIPv6Len, p.IPv6Prefixes())]
		}
	}
	if p.HasV2Ext {
		e := &p.V2Ext
		if p.HasV2Ext = p.has(e.Offset + propV2ExtLen); !p.HasV2Ext {
			p.V2Ext, p.HasSMCDv2Ext, p.SMCDv2Ext = CLCV2Ext{}, false, CLCSMCDv2Ext{}
			return
		}
		e.eids = e.eids[:propEIDLen*whole(e.Offset+propV2ExtLen, propEIDLen, e.EIDs())]
	}
	if p.HasSMCDv2Ext {
		d := &p.SMCDv2Ext
		if p.HasSMCDv2Ext = p.has(d.Offset + propSMCDv2Len); !p.HasSMCDv2Ext {
			p.SMCDv2Ext = CLCSMCDv2Ext{}
			return
		}
		d.gidchid = d.gidchid[:propGIDCHIDLen*whole(d.Offset+propSMCDv2Len, propGIDCHIDLen, d.Len())]
	}
}

// IPv6Prefixes is how many IPv6 prefixes the message holds: the count,
// or fewer when a refused message (CLC.DecodePartial) ends before them.
func (p *CLCProposal) IPv6Prefixes() int { return len(p.ipv6) / propIPv6Len }

// IPv6Prefix returns the i-th IPv6 prefix of the prefix area.
func (p *CLCProposal) IPv6Prefix(i int) (clcAddr netip.Addr, bits uint8) {
	b := p.ipv6[i*propIPv6Len:]
	return clcGID(b), b[16]
}

// CLCV2Ext is the SMC v2 extension of a Proposal (smc_clc_v2_extension).
type CLCV2Ext struct {
	Offset          int        // message offset of the extension
	EIDCount        uint8      // ext +0: user EIDs that follow
	ISMGIDCount     uint8      // ext +1: entries of the SMC-Dv2 GID/CHID list
	Release         uint8      // ext +3, mask 0xF0: 0 = v2.0, 1 = v2.1
	SEIDPresent     bool       // ext +3, mask 0x01: system EID indicator
	SMCDv2ExtOffset uint16     // ext +6: from ext+8 to the SMC-Dv2 extension
	RoCEv2GID       netip.Addr // ext +8, 16 bytes: SMC-Rv2 GID (IPv4-mapped)
	MaxConns        uint8      // ext +24 (v2.1): proposed max connections per link group
	MaxLinks        uint8      // ext +25 (v2.1): proposed max links per link group
	FeatureMask     uint16     // ext +26 (v2.1): 0x0001 = Emulated-ISM
	eids            []byte
}

// EIDs is how many user EIDs the extension holds: the count, or fewer
// when a refused message (CLC.DecodePartial) ends before them.
func (e *CLCV2Ext) EIDs() int { return len(e.eids) / propEIDLen }

// EID returns the i-th user EID without its blank padding.
func (e *CLCV2Ext) EID(i int) []byte {
	return clcTrimBlanks(e.eids[i*propEIDLen : (i+1)*propEIDLen])
}

// CLCSMCDv2Ext is the SMC-Dv2 extension of a Proposal
// (smc_clc_smcd_v2_extension).
type CLCSMCDv2Ext struct {
	Offset  int    // message offset of the extension
	SEID    []byte // +0, 32 bytes: system EID, valid when SEIDPresent
	gidchid []byte // +48: ISMGIDCount entries of GID (8) + CHID (2)
}

// GIDCHID returns the i-th ISM GID and CHID. An Emulated-ISM device takes two
// consecutive entries with the same CHID (the second GID is its extension).
func (e *CLCSMCDv2Ext) GIDCHID(i int) (gid uint64, chid uint16) {
	b := e.gidchid[i*propGIDCHIDLen:]
	return binary.BigEndian.Uint64(b), binary.BigEndian.Uint16(b[8:])
}

// Len returns the number of GID/CHID entries.
func (e *CLCSMCDv2Ext) Len() int { return len(e.gidchid) / propGIDCHIDLen }

// Devices counts the ISM devices the entries offer: an Emulated-ISM device
// (CHID 0xFF00-0xFFFF, __smc_ism_is_emulated in net/smc/smc_ism.h: the
// DIBS loopback is 0xFFFF) has a 128-bit GID and takes two entries with its
// CHID, the second holding the GID's extension (smc_find_ism_v2_device_serv
// reads them so); a native ISM device takes one. The lab's 7.3 loopback
// offers one device in two entries (samples/smcd-loopback.pcapng).
func (e *CLCSMCDv2Ext) Devices() (devices, emulated int) {
	for i, n := 0, e.Len(); i < n; i++ {
		devices++
		if _, chid := e.GIDCHID(i); chid&0xff00 == 0xff00 && i+1 < n {
			if _, next := e.GIDCHID(i + 1); next == chid {
				emulated++
				i++
			}
		}
	}
	return devices, emulated
}

func (p *CLCProposal) decode(c *CLC, m []byte) error {
	const name = "CLC Proposal"
	lim := len(m) - clcTrailerLen // first byte of the trailer
	if lim < propFixedLen {
		return BadLength(name, "length", 5, fmt.Sprintf("length %d, fixed part needs %d", len(m), propFixedLen+clcTrailerLen))
	}
	p.PeerID = [8]byte(m[8:16])
	p.GID = clcGID(m[16:])
	p.MAC = [6]byte(m[32:38])
	p.IPAreaOffset = binary.BigEndian.Uint16(m[38:40])
	p.fixed = true
	if p.IPAreaOffset > propSMCDAreaLen {
		// smc_clc_proposal_get_prefix refuses anything beyond the SMC-D area.
		return BadLength(name, "iparea_offset", 38, fmt.Sprintf("IP area offset %d > %d", p.IPAreaOffset, propSMCDAreaLen))
	}
	end := propFixedLen // end of the last region seen, must meet the trailer
	need := func(field string, off, n int) error {
		if off+n > lim {
			return BadLength(name, field, off, fmt.Sprintf("needs %d bytes at offset %d, trailer at %d", n, off, lim))
		}
		end = max(end, off+n)
		return nil
	}

	v2 := c.Version >= 2
	if v2 || p.IPAreaOffset == propSMCDAreaLen {
		if err := need("smcd_area", propFixedLen, propSMCDAreaLen); err != nil {
			return err
		}
		p.HasSMCDArea = true
		p.ISMGID = binary.BigEndian.Uint64(m[40:48])
		p.ISMCHID = binary.BigEndian.Uint16(m[48:50])
		p.V2ExtOffset = binary.BigEndian.Uint16(m[50:52])
		p.VendorOUI = [3]byte(m[52:55])
		p.VendorOptions = [5]byte(m[55:60])
	}

	if !v2 || c.TypeV1 != SMCTypeN {
		off := propFixedLen + int(p.IPAreaOffset)
		if err := need("ip_prefix", off, propPrefixLen); err != nil {
			return err
		}
		p.HasPrefix = true
		p.IPv4Prefix = netip.AddrFrom4([4]byte(m[off : off+4]))
		p.IPv4PrefixLen = m[off+4]
		p.IPv6PrefixCount = m[off+7]
		n := int(p.IPv6PrefixCount) * propIPv6Len
		if err := need("ipv6_prefix", off+propPrefixLen, n); err != nil {
			return err
		}
		p.ipv6 = m[off+propPrefixLen : off+propPrefixLen+n]
	}

	if v2 && c.TypeV2 != SMCTypeN && p.V2ExtOffset != 0 {
		off := propV2ExtBase + int(p.V2ExtOffset)
		if off+propV2ExtLen > lim && off != end {
			// Linux puts the extension where the areas before it end
			// (smc_clc_send_proposal); one that would not fit and starts
			// elsewhere is the offset's fault, not the length's.
			return &Error{Layer: name, Field: "v2_ext_offset", Offset: 50, Err: ErrBadLength,
				Detail: fmt.Sprintf("v2 extension offset %d puts its %d bytes at %d, the areas before it end at %d, the trailer is at %d", p.V2ExtOffset, propV2ExtLen, off, end, lim)}
		}
		if err := need("v2_ext", off, propV2ExtLen); err != nil {
			return err
		}
		e := &p.V2Ext
		p.HasV2Ext = true
		e.Offset = off
		e.EIDCount = m[off]
		e.ISMGIDCount = m[off+1]
		e.Release = m[off+3] >> 4
		e.SEIDPresent = m[off+3]&0x01 != 0
		e.SMCDv2ExtOffset = binary.BigEndian.Uint16(m[off+6:])
		e.RoCEv2GID = clcGID(m[off+8:])
		e.MaxConns = m[off+24]
		e.MaxLinks = m[off+25]
		e.FeatureMask = binary.BigEndian.Uint16(m[off+26:])
		n := int(e.EIDCount) * propEIDLen
		if err := need("eid", off+propV2ExtLen, n); err != nil {
			return err
		}
		e.eids = m[off+propV2ExtLen : off+propV2ExtLen+n]

		if c.TypeV2.HasD() && e.SMCDv2ExtOffset != 0 {
			d := off + 8 + int(e.SMCDv2ExtOffset)
			if d+propSMCDv2Len > lim && d != end {
				// As for the v2 extension: Linux puts the SMC-Dv2
				// extension right after the EIDs.
				return &Error{Layer: name, Field: "smcd_v2_ext_offset", Offset: off + 6, Err: ErrBadLength,
					Detail: fmt.Sprintf("SMC-Dv2 extension offset %d puts its %d bytes at %d, the EIDs end at %d, the trailer is at %d", e.SMCDv2ExtOffset, propSMCDv2Len, d, end, lim)}
			}
			if err := need("smcd_v2_ext", d, propSMCDv2Len); err != nil {
				return err
			}
			p.HasSMCDv2Ext = true
			p.SMCDv2Ext.Offset = d
			p.SMCDv2Ext.SEID = m[d : d+propEIDLen]
			n := int(e.ISMGIDCount) * propGIDCHIDLen
			if err := need("gid_chid", d+propSMCDv2Len, n); err != nil {
				return err
			}
			p.SMCDv2Ext.gidchid = m[d+propSMCDv2Len : d+propSMCDv2Len+n]
		}
	}

	// Linux checks the exact length (smc_clc_msg_prop_valid); a mismatch is
	// the best evidence of a mis-framed or corrupt message.
	if end != lim {
		return BadLength(name, "length", 5, fmt.Sprintf("length %d, but the contents end at %d", len(m), end+clcTrailerLen))
	}
	return nil
}

// Proposal fields (struct smc_clc_msg_proposal, net/smc/smc_clc.h).
//
// Places, from the message's start: typev2 in the header; struct
// smc_clc_msg_local at 8 (id_for_peer, gid, mac, which an Accept/Confirm
// (r0) and a Decline (id_for_peer) carry at the same offsets);
// iparea_offset at 38; struct smc_clc_msg_smcd at 40. The prefix area sits
// where iparea_offset says and the v2 extensions where their offsets say:
// their fields, and the Proposal's EIDs, have no fixed place. An Accept or
// Confirm places its EID by SMC type (clcAcceptIn).
var (
	fCLCPeerID = Field(OwnerCLC, "smc.clc.peer_id", KindBytes, "sender system ID (Linux: 2-byte instance + MAC)", At(8, 8))
	fCLCGID    = Field(OwnerCLC, "smc.clc.gid", KindAddr, "sender RoCE GID (Proposal: SMC-R v1 GID)", At(16, 16))
	fCLCMAC    = Field(OwnerCLC, "smc.clc.mac", KindMAC, "sender RoCE MAC", At(32, 6))
	fCLCEID    = Field(OwnerCLC, "smc.clc.eid", KindString, "EID: user EIDs offered (Proposal) or the negotiated EID (Accept/Confirm)",
		At(acceptEIDROff, propEIDLen, clcAcceptIn(SMCTypeR)), At(acceptEIDDOff, propEIDLen, clcAcceptIn(SMCTypeD)))

	fPropPathV2       = Field(OwnerCLC, "smc.clc.proposal.path_v2", KindUint, "SMC v2 types offered (0 SMC-R, 1 SMC-D, 2 none, 3 both)", Enum(func(u uint64) string { return SMCType(u).String() }), At(7, 1, Bits(0x0c)))
	fPropIPAreaOffset = Field(OwnerCLC, "smc.clc.proposal.iparea_offset", KindUint, "bytes between offset 40 and the IP prefix area", At(38, 2))
	fPropISMGID       = Field(OwnerCLC, "smc.clc.proposal.ism_gid", KindUint, "native ISM GID (SMC-D area)", Hex(), At(40, 8))
	fPropISMCHID      = Field(OwnerCLC, "smc.clc.proposal.ism_chid", KindUint, "ISM CHID (SMC-D area, v2)", Hex(), At(48, 2))
	fPropV2ExtOffset  = Field(OwnerCLC, "smc.clc.proposal.v2_ext_offset", KindUint, "offset from byte 52 to the v2 extension", At(50, 2))
	fPropVendorOUI    = Field(OwnerCLC, "smc.clc.proposal.vendor_oui", KindBytes, "vendor OUI (SMC-D area)", At(52, 3))
	fPropIPv4Prefix   = Field(OwnerCLC, "smc.clc.proposal.ipv4_prefix", KindAddr, "outgoing IPv4 subnet")
	fPropIPv4PrefLen  = Field(OwnerCLC, "smc.clc.proposal.ipv4_prefix_len", KindUint, "IPv4 prefix length")
	fPropIPv6Count    = Field(OwnerCLC, "smc.clc.proposal.ipv6_prefix_count", KindUint, "number of IPv6 prefixes")
	fPropIPv6Prefix   = Field(OwnerCLC, "smc.clc.proposal.ipv6_prefix", KindAddr, "IPv6 prefix (one value per prefix)")
	fPropIPv6PrefLen  = Field(OwnerCLC, "smc.clc.proposal.ipv6_prefix_len", KindUint, "IPv6 prefix length (one value per prefix)")
	fPropEIDCount     = Field(OwnerCLC, "smc.clc.proposal.eid_count", KindUint, "number of user EIDs (v2 extension)")
	fPropISMGIDCount  = Field(OwnerCLC, "smc.clc.proposal.ism_gid_count", KindUint, "number of SMC-Dv2 GID/CHID entries")
	fPropRelease      = Field(OwnerCLC, "smc.clc.proposal.release", KindUint, "SMC v2 release offered (0 = v2.0, 1 = v2.1)")
	fPropSEIDPresent  = Field(OwnerCLC, "smc.clc.proposal.seid_present", KindBool, "system EID indicator")
	fPropSMCDv2Offset = Field(OwnerCLC, "smc.clc.proposal.smcd_v2_ext_offset", KindUint, "offset from v2 ext+8 to the SMC-Dv2 extension")
	fPropRoCEv2GID    = Field(OwnerCLC, "smc.clc.proposal.rocev2_gid", KindAddr, "SMC-Rv2 RoCEv2 GID offered")
	fPropMaxConns     = Field(OwnerCLC, "smc.clc.proposal.max_conns", KindUint, "proposed max connections per link group (v2.1)")
	fPropMaxLinks     = Field(OwnerCLC, "smc.clc.proposal.max_links", KindUint, "proposed max links per link group (v2.1)")
	fPropFeatureMask  = Field(OwnerCLC, "smc.clc.proposal.feature_mask", KindUint, "supplemental features (v2.1; 0x0001 Emulated-ISM)", Hex())
	fPropSEID         = Field(OwnerCLC, "smc.clc.proposal.seid", KindString, "system EID (SMC-Dv2 extension)")
	fPropSMCDGID      = Field(OwnerCLC, "smc.clc.proposal.smcd_gid", KindUint, "SMC-Dv2 ISM GID (one value per entry)", Hex())
	fPropSMCDCHID     = Field(OwnerCLC, "smc.clc.proposal.smcd_chid", KindUint, "SMC-Dv2 ISM CHID (one value per entry)", Hex())
)

func (p *CLCProposal) appendFields(c *CLC, r *Record) {
	if c.Version >= 2 {
		r.AddUint(fPropPathV2, uint64(c.TypeV2))
	}
	if !p.fixed {
		return // DecodePartial of a message too short for its fields
	}
	r.AddBytes(fCLCPeerID, p.PeerID[:])
	r.AddAddr(fCLCGID, p.GID)
	r.AddBytes(fCLCMAC, p.MAC[:])
	r.AddUint(fPropIPAreaOffset, uint64(p.IPAreaOffset))
	if p.HasSMCDArea {
		r.AddUint(fPropISMGID, p.ISMGID)
		// v1's struct smc_clc_msg_smcd is the GID and 32 reserved bytes
		// (net/smc/smc_clc.h before 5.10); CHID, extension offset and
		// vendor OUI are 5.10's v2 layout of those bytes.
		if c.Version >= 2 {
			r.AddUint(fPropISMCHID, uint64(p.ISMCHID))
			r.AddUint(fPropV2ExtOffset, uint64(p.V2ExtOffset))
			r.AddBytes(fPropVendorOUI, p.VendorOUI[:])
			if o, ok := p.Alibaba(); ok {
				appendAliFields(r, fANCKPropOptions, o)
			}
		}
	}
	if p.HasPrefix {
		r.AddAddr(fPropIPv4Prefix, p.IPv4Prefix)
		r.AddUint(fPropIPv4PrefLen, uint64(p.IPv4PrefixLen))
		r.AddUint(fPropIPv6Count, uint64(p.IPv6PrefixCount))
		for i := range p.IPv6Prefixes() {
			a, bits := p.IPv6Prefix(i)
			r.AddAddr(fPropIPv6Prefix, a)
			r.AddUint(fPropIPv6PrefLen, uint64(bits))
		}
	}
	if p.HasV2Ext {
		e := &p.V2Ext
		r.AddUint(fPropEIDCount, uint64(e.EIDCount))
		r.AddUint(fPropISMGIDCount, uint64(e.ISMGIDCount))
		r.AddUint(fPropRelease, uint64(e.Release))
		r.AddBool(fPropSEIDPresent, e.SEIDPresent)
		r.AddUint(fPropSMCDv2Offset, uint64(e.SMCDv2ExtOffset))
		r.AddAddr(fPropRoCEv2GID, e.RoCEv2GID)
		r.AddUint(fPropMaxConns, uint64(e.MaxConns))
		r.AddUint(fPropMaxLinks, uint64(e.MaxLinks))
		r.AddUint(fPropFeatureMask, uint64(e.FeatureMask))
		for i := range e.EIDs() {
			r.AddText(fCLCEID, e.EID(i))
		}
	}
	if p.HasSMCDv2Ext {
		d := &p.SMCDv2Ext
		r.AddText(fPropSEID, clcTrimBlanks(d.SEID))
		for i := range d.Len() {
			gid, chid := d.GIDCHID(i)
			r.AddUint(fPropSMCDGID, gid)
			r.AddUint(fPropSMCDCHID, uint64(chid))
		}
	}
}

// appendSummary: `CLC Proposal SMC-Rv2 (v2 ext: 1 EID "SMC-LAB-UEID", release 1, ...)`.
func (p *CLCProposal) appendSummary(c *CLC, dst []byte) []byte {
	dst = append(dst, ' ')
	n := 0
	mode := func(s string) {
		if n > 0 {
			dst = append(dst, '/')
		}
		dst = append(dst, s...)
		n++
	}
	if c.Version >= 2 {
		if c.TypeV2.HasR() {
			mode("SMC-Rv2")
		}
		if c.TypeV2.HasD() {
			mode("SMC-Dv2")
		}
	}
	if c.TypeV1.HasR() {
		mode("SMC-Rv1")
	}
	if c.TypeV1.HasD() {
		mode("SMC-Dv1")
	}
	if n == 0 {
		dst = append(dst, "no SMC type"...)
	}
	if !p.fixed {
		return dst // DecodePartial of a message too short for its fields
	}
	if p.has(16) && !clcIsZero(p.PeerID[:]) {
		dst = append(dst, " peer "...)
		dst = AppendPeerID(dst, p.PeerID)
	}
	if c.TypeV1.HasR() && p.has(32) && !p.GID.IsUnspecified() {
		dst = append(dst, " GID "...)
		dst = p.GID.AppendTo(dst)
	}
	if p.HasPrefix {
		dst = append(dst, " prefix "...)
		dst = p.IPv4Prefix.AppendTo(dst)
		dst = append(dst, '/')
		dst = numfmt.AppendUint(dst, uint64(p.IPv4PrefixLen))
		for i := range p.IPv6Prefixes() {
			a, bits := p.IPv6Prefix(i)
			dst = append(dst, ", "...)
			dst = a.AppendTo(dst)
			dst = append(dst, '/')
			dst = numfmt.AppendUint(dst, uint64(bits))
		}
	}
	if p.HasSMCDArea && p.has(48) && p.ISMGID != 0 {
		dst = append(dst, " ISM GID "...)
		dst = clcAppendHex(dst, p.ISMGID)
	}
	if p.HasV2Ext {
		e := &p.V2Ext
		dst = append(dst, " (v2 ext: "...)
		dst = numfmt.AppendUint(dst, uint64(e.EIDCount))
		if e.EIDCount == 1 {
			dst = append(dst, " EID"...)
		} else {
			dst = append(dst, " EIDs"...)
		}
		for i := range e.EIDs() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, ' ')
			dst = clcAppendQuoted(dst, e.EID(i))
		}
		dst = append(dst, ", release "...)
		dst = numfmt.AppendUint(dst, uint64(e.Release))
		if c.TypeV2.HasR() {
			dst = append(dst, ", GID "...)
			dst = e.RoCEv2GID.AppendTo(dst)
		}
		if e.MaxConns != 0 || e.MaxLinks != 0 || e.FeatureMask != 0 {
			dst = append(dst, ", max conns "...)
			dst = numfmt.AppendUint(dst, uint64(e.MaxConns))
			dst = append(dst, " links "...)
			dst = numfmt.AppendUint(dst, uint64(e.MaxLinks))
			dst = append(dst, " features "...)
			dst = clcAppendHex(dst, uint64(e.FeatureMask))
		}
		if p.HasSMCDv2Ext {
			if e.SEIDPresent {
				dst = append(dst, ", SEID "...)
				dst = clcAppendQuoted(dst, clcTrimBlanks(p.SMCDv2Ext.SEID))
			}
			// Not counted from a list the capture cut.
			if p.SMCDv2Ext.Len() == int(e.ISMGIDCount) {
				dst = appendISMDevices(dst, &p.SMCDv2Ext)
			}
		}
		dst = append(dst, ')')
	} else if c.Version >= 2 && c.TypeV2 != SMCTypeN && c.Malformed == nil && c.Cut == 0 {
		// (A malformed one may have an extension not decoded, a cut
		// one one the capture did not keep.)
		dst = append(dst, " (no v2 extension)"...)
	}
	if o, ok := p.Alibaba(); ok && c.Version >= 2 {
		dst = append(appendAli(dst, "offers", o), ']')
	}
	return dst
}

// appendISMDevices appends ", 2 ISM devices (1 Emulated-ISM: ...)":
// devices, not entries, as an Emulated-ISM device takes two.
func appendISMDevices(dst []byte, d *CLCSMCDv2Ext) []byte {
	n, emulated := d.Devices()
	dst = append(dst, ", "...)
	dst = numfmt.AppendUint(dst, uint64(n))
	dst = append(dst, " ISM device"...)
	if n != 1 {
		dst = append(dst, 's')
	}
	if emulated > 0 {
		dst = append(dst, " ("...)
		dst = numfmt.AppendUint(dst, uint64(emulated))
		dst = append(dst, " Emulated-ISM: GID and extension)"...)
	}
	return dst
}
