package smcnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// LinkState is the state of an SMC-R link (enum smc_link_state).
type LinkState uint32

// Link states.
const (
	LinkUnused     LinkState = 0 // SMC_LNK_UNUSED
	LinkInactive   LinkState = 1 // SMC_LNK_INACTIVE
	LinkActivating LinkState = 2 // SMC_LNK_ACTIVATING
	LinkActive     LinkState = 3 // SMC_LNK_ACTIVE
)

func (s LinkState) String() string {
	switch s {
	case LinkUnused:
		return "UNUSED"
	case LinkInactive:
		return "INACTIVE"
	case LinkActivating:
		return "ACTIVATING"
	case LinkActive:
		return "ACTIVE"
	}
	return fmt.Sprintf("LinkState(%d)", uint32(s))
}

// Link is one SMC-R link of a link group (SMC_GEN_LINK_SMCR).
type Link struct {
	ID        uint8
	IBDev     string
	IBPort    uint8
	GID       string // "0000:0000:0000:0000:0000:ffff:0a0a:0001"
	PeerGID   string
	ConnCount uint32
	NetDev    uint32 // ifindex of the netdev under the RoCE device
	// UID and PeerUID are the 4 link-UID bytes read as a native u32, as the
	// kernel sends them (dmesg "id 00000101" is 0x01010000 on x86).
	UID     uint32
	PeerUID uint32
	State   LinkState
}

// ParseLink decodes one reply message; ok is false when it holds no
// SMC_GEN_LINK_SMCR nest.
func ParseLink(b []byte) (l Link, ok bool, err error) {
	ok, err = nested(b, genLinkSMCR, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case linkID:
				l.ID = ad.Uint8()
			case linkIBDev:
				l.IBDev = cString(ad.Bytes())
			case linkIBPort:
				l.IBPort = ad.Uint8()
			case linkGID:
				l.GID = cString(ad.Bytes())
			case linkPeerGID:
				l.PeerGID = cString(ad.Bytes())
			case linkConnCnt:
				l.ConnCount = ad.Uint32()
			case linkNetDev:
				l.NetDev = ad.Uint32()
			case linkUID:
				l.UID = ad.Uint32()
			case linkPeerUID:
				l.PeerUID = ad.Uint32()
			case linkState:
				l.State = LinkState(ad.Uint32())
			}
		}
		return nil
	})
	if err != nil {
		return Link{}, false, fmt.Errorf("LINK_SMCR: %w", err)
	}
	return l, ok, nil
}
