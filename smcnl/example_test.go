package smcnl_test

import (
	"fmt"
	"log"
	"os"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nlenc"
	"github.com/mdlayher/netlink/nltest"
	"github.com/smcscope/smcscope/smcnl"
)

// A fake kernel answering GET_LINK_SMCR with one link group and its link,
// the values of the lab's pingpong client.
func fakeKernel(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
	u32 := func(t uint16, v uint32) netlink.Attribute {
		return netlink.Attribute{Type: t, Data: nlenc.Uint32Bytes(v)}
	}
	lgr := nltest.MustMarshalAttributes([]netlink.Attribute{{Type: 2, Data: nltest.MustMarshalAttributes([]netlink.Attribute{
		u32(1, 0x100),              // SMC_NLA_LGR_R_ID
		{Type: 3, Data: []byte{1}}, // SMC_NLA_LGR_R_TYPE: SINGLE
	})}})
	link := nltest.MustMarshalAttributes([]netlink.Attribute{{Type: 3, Data: nltest.MustMarshalAttributes([]netlink.Attribute{
		{Type: 1, Data: []byte{1}},          // SMC_NLA_LINK_ID
		{Type: 2, Data: []byte("rxe0\x00")}, // SMC_NLA_LINK_IB_DEV
		u32(10, 3),                          // SMC_NLA_LINK_STATE: ACTIVE
	})}})
	return []genetlink.Message{
		{Header: genetlink.Header{Command: 2}, Data: lgr},
		{Header: genetlink.Header{Command: 3}, Data: link},
	}, nil
}

func ExampleConn_LinkGroupsR() {
	family := genetlink.Family{ID: 0x1d, Version: 1, Name: "SMC_GEN_NETLINK"}
	c, err := smcnl.NewConn(genltest.Dial(genltest.ServeFamily(family, fakeKernel)))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	lgrs, err := c.LinkGroupsR()
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range lgrs {
		for _, l := range g.Links {
			fmt.Printf("lgr %#x %v: link %d on %s %v\n", g.ID, g.Type, l.ID, l.IBDev, l.State)
		}
	}
	// Output:
	// lgr 0x100 SINGLE: link 1 on rxe0 ACTIVE
}

func ExampleWriteFallbackStats() {
	// The decline-nordma client: the server had no RoCE device.
	f := smcnl.FallbackStats{ClientTotal: 1, Client: []smcnl.FallbackReason{{Code: 0x05000000, Count: 1}}}
	if err := smcnl.WriteFallbackStats(os.Stdout, f); err != nil {
		log.Fatal(err)
	}
	// Output:
	// fallback_total server=0 client=1
	// fallback side=client code=0x05000000 count=1
}
