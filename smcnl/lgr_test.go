package smcnl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
)

// pingpongLGR is the client's link group as the 6.12 kernel dumped it in
// pingpong.client.log ("lgr_smcr.id=0x100 lgr_smcr.conns=0 lgr_smcr.role=0
// lgr_smcr.type=1 ... v2_neg_eid="SMC-LAB-UEID" ... max_links=2"), in the
// attribute order of smc_nl_fill_lgr, with the PAD attributes
// nla_put_u64_64bit inserts and V2_COMMON numbered from 0.
func pingpongLGR(id uint32, role uint8, typ uint8) genetlink.Message {
	return reply(cmdGetLGRSMCR, []netlink.Attribute{nest(genLGRSMCR,
		u32(lgrRID, id),
		u8(lgrRRole, role),
		u8(lgrRType, typ),
		u8(lgrRBufType, 0),
		u8(lgrRVLANID, 0),
		pad(10),
		u64(lgrRNetCookie, 1),
		u32(lgrRConnsNum, 0),
		str(lgrRPNETID, ""),
		nest(lgrRV2Common,
			u8(lgrV2Ver, 2),
			u8(lgrV2Rel, 1),
			u8(lgrV2OS, 2),
			str(lgrV2PeerHost, "(none)"),
			str(lgrV2NegEID, eid32("SMC-LAB-UEID")),
		),
		nest(lgrRV2, u8(lgrRV2Direct, 1), u8(lgrRV2MaxConns, 255), u8(lgrRV2MaxLinks, 2)),
		// NLA_UINT: the kernel picks 4 bytes when the value fits.
		u32(lgrRSndBufAlloc, 65536),
		u64(lgrRRMBAlloc, 65536),
		// An attribute a newer kernel might add must be ignored.
		u32(99, 7),
	)})
}

// pingpongLink is "link_smcr.link_id=1 link_smcr.state=3
// link_smcr.conn_cnt=0 link_smcr.ib_port=1 link_smcr.netdev_ifindex=2
// link_smcr.ib_dev="rxe0" link_smcr.link_uid=0x1010000 ..." from the same log.
func pingpongLink(id uint8, state uint32, peerUID uint32) genetlink.Message {
	return reply(cmdGetLinkSMCR, []netlink.Attribute{nest(genLinkSMCR,
		u8(linkID, id),
		str(linkIBDev, "rxe0"),
		u8(linkIBPort, 1),
		str(linkGID, gidClient),
		str(linkPeerGID, gidServer),
		u32(linkConnCnt, 0),
		u32(linkNetDev, 2),
		u32(linkUID, 0x01010000),
		u32(linkPeerUID, peerUID),
		u32(linkState, state),
	)})
}

func wantPingpongLGR(id uint32, links ...Link) LinkGroupR {
	return LinkGroupR{
		ID: id, Role: RoleClient, Type: LGRTypeSingle, NetCookie: 1,
		V2Common:    &V2Common{Version: 2, Release: 1, PeerOS: 2, NegotiatedEID: "SMC-LAB-UEID", PeerHost: "(none)"},
		V2:          &LGRV2{Direct: true, MaxConns: 255, MaxLinks: 2},
		SndBufAlloc: 65536, RMBAlloc: 65536,
		Links: links,
	}
}

var wantPingpongLink = Link{
	ID: 1, IBDev: "rxe0", IBPort: 1, GID: gidClient, PeerGID: gidServer,
	NetDev: 2, UID: 0x01010000, PeerUID: 0x01010000, State: LinkActive,
}

func TestLinkGroupsR(t *testing.T) {
	// Two link groups: the pingpong one, and one whose second link stayed
	// ACTIVATING with peer UID 0 (the asymmetric link of §7.1).
	activating := wantPingpongLink
	activating.ID, activating.State, activating.PeerUID = 2, LinkActivating, 0
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdGetLinkSMCR, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return []genetlink.Message{
				pingpongLGR(0x100, 0, 1),
				pingpongLink(1, 3, 0x01010000),
				pingpongLGR(0x200, 0, 1),
				pingpongLink(1, 3, 0x01010000),
				pingpongLink(2, 2, 0),
			}, nil
		}))
	got, err := c.LinkGroupsR()
	if err != nil {
		t.Fatalf("LinkGroupsR: %v", err)
	}
	want := []LinkGroupR{
		wantPingpongLGR(0x100, wantPingpongLink),
		wantPingpongLGR(0x200, wantPingpongLink, activating),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

}

func TestLinkGroupsRLinkFirst(t *testing.T) {
	c := testConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		return []genetlink.Message{pingpongLink(1, 3, 0)}, nil
	})
	if _, err := c.LinkGroupsR(); err == nil {
		t.Fatal("a link before any link group gave no error")
	}
}

func TestLinkGroupsD(t *testing.T) {
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdGetLGRSMCD, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return []genetlink.Message{reply(cmdGetLGRSMCD, []netlink.Attribute{nest(genLGRSMCD,
				u32(lgrDID, 0x300),
				u64(lgrDGID, 0x1122334455667788),
				u64(lgrDPeerGID, 0x8877665544332211),
				u8(lgrDVLANID, 5),
				u32(lgrDConnsNum, 3),
				str(lgrDPNETID, "NET1"),
				u32(lgrDCHID, 0xffff), // u16 in uapi, nla_put_u32 in smc_nl_fill_smcd_lgr
				nest(lgrDV2Common, u8(lgrV2Ver, 2), str(lgrV2NegEID, eid32("E"))),
				u64(lgrDExtGID, 9),
				u64(lgrDPeerExtGID, 10),
				u64(lgrDSndBufAlloc, 1<<33),
				u32(lgrDDMBAlloc, 1<<20),
			)})}, nil
		}))
	got, err := c.LinkGroupsD()
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkGroupD{{
		ID: 0x300, GID: 0x1122334455667788, PeerGID: 0x8877665544332211, VLANID: 5, Conns: 3,
		PNETID: "NET1", CHID: 0xffff, V2Common: &V2Common{Version: 2, NegotiatedEID: "E"},
		ExtGID: 9, PeerExtGID: 10, SndBufAlloc: 1 << 33, DMBAlloc: 1 << 20,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestParseLinkGroupRBadWidth(t *testing.T) {
	// A u32 attribute of 2 bytes is a kernel/parser disagreement: report it.
	m := reply(cmdGetLGRSMCR, []netlink.Attribute{nest(genLGRSMCR, u16(lgrRID, 1))})
	if _, _, err := ParseLinkGroupR(m.Data); err == nil {
		t.Fatal("2-byte ID: no error")
	}
	m = reply(cmdGetLGRSMCR, []netlink.Attribute{nest(genLGRSMCR, netlink.Attribute{Type: lgrRRMBAlloc, Data: []byte{1, 2, 3}})})
	if _, _, err := ParseLinkGroupR(m.Data); err == nil {
		t.Fatal("3-byte RMB_ALLOC: no error")
	}
}
