package smcnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// LGRType is how a link group's links are spread over devices (enum
// smc_lgr_type).
type LGRType uint8

// Link-group types.
const (
	LGRTypeNone            LGRType = 0 // SMC_LGR_NONE
	LGRTypeSingle          LGRType = 1 // SMC_LGR_SINGLE
	LGRTypeSymmetric       LGRType = 2 // SMC_LGR_SYMMETRIC
	LGRTypeAsymmetricPeer  LGRType = 3 // SMC_LGR_ASYMMETRIC_PEER
	LGRTypeAsymmetricLocal LGRType = 4 // SMC_LGR_ASYMMETRIC_LOCAL
)

func (t LGRType) String() string {
	switch t {
	case LGRTypeNone:
		return "NONE"
	case LGRTypeSingle:
		return "SINGLE"
	case LGRTypeSymmetric:
		return "SYM"
	case LGRTypeAsymmetricPeer:
		return "ASYMP"
	case LGRTypeAsymmetricLocal:
		return "ASYML"
	}
	return fmt.Sprintf("LGRType(%d)", uint8(t))
}

// V2Common is what SMC v2 negotiated with the peer (SMC_NLA_LGR_*_V2_COMMON).
type V2Common struct {
	Version       uint8  // SMC_NLA_LGR_V2_VER
	Release       uint8  // SMC_NLA_LGR_V2_REL: peer's release
	PeerOS        uint8  // SMC_NLA_LGR_V2_OS: 1 z/OS, 2 Linux, 3 AIX
	NegotiatedEID string // SMC_NLA_LGR_V2_NEG_EID, blank padding removed
	PeerHost      string // SMC_NLA_LGR_V2_PEER_HOST
}

// LGRV2 holds the SMC-Rv2 specifics of a link group (SMC_NLA_LGR_R_V2).
type LGRV2 struct {
	Direct   bool  // no IP gateway between the peers
	MaxConns uint8 // v2.1 negotiated limits
	MaxLinks uint8
}

// LinkGroupR is one SMC-R link group (SMC_GEN_LGR_SMCR) with its links.
type LinkGroupR struct {
	ID          uint32 // native u32 of the 4 link-group ID bytes
	Role        Role
	Type        LGRType
	PNETID      string
	VLANID      uint8
	Conns       uint32
	V2Common    *V2Common // nil for SMC v1 link groups
	V2          *LGRV2    // nil before SMC-Rv2
	NetCookie   uint64    // network namespace cookie
	BufType     uint8     // 0 physically, 1 virtually contiguous, 2 mixed
	SndBufAlloc uint64    // bytes of send buffers (6.12+)
	RMBAlloc    uint64    // bytes of RMBs (6.12+)
	Links       []Link    // filled by LinkGroupsR
}

// LinkGroupsR lists the SMC-R link groups and their usable links, from one
// GET_LINK_SMCR dump: the kernel sends each link group followed by its links.
func (c *Conn) LinkGroupsR() ([]LinkGroupR, error) {
	msgs, err := c.execute(cmdGetLinkSMCR, true, nil)
	if err != nil {
		return nil, err
	}
	var out []LinkGroupR
	for i, m := range msgs {
		lg, ok, err := ParseLinkGroupR(m.Data)
		if err != nil {
			return nil, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		if ok {
			out = append(out, lg)
			continue
		}
		l, ok, err := ParseLink(m.Data)
		if err != nil {
			return nil, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		if !ok {
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("smcnl: reply %d: link %d before any link group", i, l.ID)
		}
		g := &out[len(out)-1]
		g.Links = append(g.Links, l)
	}
	return out, nil
}

// ParseLinkGroupR decodes one reply message; ok is false when it holds no
// SMC_GEN_LGR_SMCR nest.
func ParseLinkGroupR(b []byte) (g LinkGroupR, ok bool, err error) {
	ok, err = nested(b, genLGRSMCR, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case lgrRID:
				g.ID = ad.Uint32()
			case lgrRRole:
				g.Role = Role(ad.Uint8())
			case lgrRType:
				g.Type = LGRType(ad.Uint8())
			case lgrRPNETID:
				g.PNETID = eidString(ad.Bytes())
			case lgrRVLANID:
				g.VLANID = ad.Uint8()
			case lgrRConnsNum:
				g.Conns = ad.Uint32()
			case lgrRV2Common:
				g.V2Common = new(V2Common)
				ad.Nested(g.V2Common.decode)
			case lgrRV2:
				g.V2 = new(LGRV2)
				ad.Nested(g.V2.decode)
			case lgrRNetCookie:
				g.NetCookie = ad.Uint64()
			case lgrRBufType:
				g.BufType = ad.Uint8()
			case lgrRSndBufAlloc:
				g.SndBufAlloc = uintAttr(ad)
			case lgrRRMBAlloc:
				g.RMBAlloc = uintAttr(ad)
			}
		}
		return nil
	})
	if err != nil {
		return LinkGroupR{}, false, fmt.Errorf("LGR_SMCR: %w", err)
	}
	return g, ok, nil
}

func (v *V2Common) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		switch ad.Type() {
		case lgrV2Ver:
			v.Version = ad.Uint8()
		case lgrV2Rel:
			v.Release = ad.Uint8()
		case lgrV2OS:
			v.PeerOS = ad.Uint8()
		case lgrV2NegEID:
			v.NegotiatedEID = eidString(ad.Bytes())
		case lgrV2PeerHost:
			v.PeerHost = eidString(ad.Bytes())
		}
	}
	return nil
}

func (v *LGRV2) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		switch ad.Type() {
		case lgrRV2Direct:
			v.Direct = ad.Uint8() != 0
		case lgrRV2MaxConns:
			v.MaxConns = ad.Uint8()
		case lgrRV2MaxLinks:
			v.MaxLinks = ad.Uint8()
		}
	}
	return nil
}

// LinkGroupD is one SMC-D link group (SMC_GEN_LGR_SMCD).
type LinkGroupD struct {
	ID          uint32
	GID         uint64
	PeerGID     uint64
	VLANID      uint8
	Conns       uint32
	PNETID      string
	CHID        uint16
	V2Common    *V2Common
	ExtGID      uint64
	PeerExtGID  uint64
	SndBufAlloc uint64
	DMBAlloc    uint64
}

// LinkGroupsD lists the SMC-D link groups.
func (c *Conn) LinkGroupsD() ([]LinkGroupD, error) {
	msgs, err := c.execute(cmdGetLGRSMCD, true, nil)
	if err != nil {
		return nil, err
	}
	return parseAll(msgs, ParseLinkGroupD)
}

// ParseLinkGroupD decodes one reply message; ok is false when it holds no
// SMC_GEN_LGR_SMCD nest.
func ParseLinkGroupD(b []byte) (g LinkGroupD, ok bool, err error) {
	ok, err = nested(b, genLGRSMCD, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case lgrDID:
				g.ID = ad.Uint32()
			case lgrDGID:
				g.GID = ad.Uint64()
			case lgrDPeerGID:
				g.PeerGID = ad.Uint64()
			case lgrDVLANID:
				g.VLANID = ad.Uint8()
			case lgrDConnsNum:
				g.Conns = ad.Uint32()
			case lgrDPNETID:
				g.PNETID = eidString(ad.Bytes())
			case lgrDCHID:
				// uapi says u16, Linux sends nla_put_u32.
				g.CHID = uint16(uintAttr(ad))
			case lgrDV2Common:
				g.V2Common = new(V2Common)
				ad.Nested(g.V2Common.decode)
			case lgrDExtGID:
				g.ExtGID = ad.Uint64()
			case lgrDPeerExtGID:
				g.PeerExtGID = ad.Uint64()
			case lgrDSndBufAlloc:
				g.SndBufAlloc = uintAttr(ad)
			case lgrDDMBAlloc:
				g.DMBAlloc = uintAttr(ad)
			}
		}
		return nil
	})
	if err != nil {
		return LinkGroupD{}, false, fmt.Errorf("LGR_SMCD: %w", err)
	}
	return g, ok, nil
}
