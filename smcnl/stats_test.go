package smcnl

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
)

// hist builds a size-histogram nest as smc_nl_fill_stats_bufsize_data does:
// all nine buckets, each a u64 preceded by its PAD where needed.
func hist(typ uint16, buckets [histBuckets]uint64) netlink.Attribute {
	var as []netlink.Attribute
	for i, v := range buckets {
		as = append(as, pad(0), u64(uint16(i+1), v))
	}
	return nest(typ, as...)
}

func rmb(typ uint16, v [7]uint64) netlink.Attribute {
	var as []netlink.Attribute
	for i, x := range v {
		as = append(as, u64(uint16(i+1), x))
	}
	return nest(typ, as...)
}

// pingpongClientStats is the client's GET_STATS after the pingpong run
// (pingpong.client.log "STATS: stats.smcr.clnt_v2_succ=1
// stats.smcr.nodelay=1 stats.smcr.rx_bytes=32640 stats.smcr.rx_cnt=510
// stats.smcr.rx_pload_size.8K=510 stats.smcr.rx_rmb_size.64K=1
// stats.smcr.rx_rmb_stats.alloc=1 stats.smcr.tx_bytes=32664
// stats.smcr.tx_cnt=511 stats.smcr.tx_pload_size.8K=511
// stats.smcr.tx_rmb_size.64K=1 stats.smcr.tx_rmb_stats.alloc=1").
func pingpongClientStats() genetlink.Message {
	tech := func(typ uint16, on bool) netlink.Attribute {
		var txR, rxR, txP, rxP [histBuckets]uint64
		var txS, rxS [7]uint64
		var v2, ndly, rxB, txB, rxC, txC uint64
		if on {
			txR[3], rxR[3], txP[0], rxP[0] = 1, 1, 511, 510
			txS[5], rxS[5] = 1, 1
			v2, ndly, rxB, txB, rxC, txC = 1, 1, 32640, 32664, 510, 511
		}
		return nest(typ,
			hist(techTxRMBSize, txR), hist(techRxRMBSize, rxR),
			hist(techTxPloadSize, txP), hist(techRxPloadSize, rxP),
			rmb(techTxRMBStats, txS), rmb(techRxRMBStats, rxS),
			u64(techClntV1Succ, 0), u64(techClntV2Succ, v2),
			u64(techSrvV1Succ, 0), u64(techSrvV2Succ, 0),
			u64(techSendpageCnt, 0), u64(techSpliceCnt, 0), u64(techCorkCnt, 0),
			u64(techNdlyCnt, ndly), u64(techUrgDataCnt, 0),
			u64(techRxBytes, rxB), u64(techTxBytes, txB), u64(techRxCnt, rxC), u64(techTxCnt, txC),
			u64(techRxRMBUsage, 0), u64(techTxRMBUsage, 0),
		)
	}
	return reply(cmdGetStats, []netlink.Attribute{nest(genStats,
		tech(statsSMCDTech, false),
		tech(statsSMCRTech, true),
		pad(0), u64(statsClntHSErrCnt, 0),
		pad(0), u64(statsSrvHSErrCnt, 0),
	)})
}

func TestStats(t *testing.T) {
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdGetStats, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return []genetlink.Message{pingpongClientStats()}, nil
		}))
	got, err := c.Stats()
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	var want Stats
	want.SMCR.TxRMBSize[3], want.SMCR.RxRMBSize[3] = 1, 1
	want.SMCR.TxPayloadSize[0], want.SMCR.RxPayloadSize[0] = 511, 510
	want.SMCR.TxRMBStats.Alloc, want.SMCR.RxRMBStats.Alloc = 1, 1
	want.SMCR.ClientV2Succ, want.SMCR.NodelayCount = 1, 1
	want.SMCR.RxBytes, want.SMCR.TxBytes, want.SMCR.RxCount, want.SMCR.TxCount = 32640, 32664, 510, 511
	want.SMCR.RMBUsageKnown, want.SMCD.RMBUsageKnown = true, true // 6.10+: the usage attributes are there
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}

}

// TestFallbackStats uses the decline-nordma server ("fback_stats.is_server=1
// fback_stats.srv_fback_cnt=1 fback_stats.clnt_fback_cnt=0
// fback_stats.reason=0x03030002(NOSMCRDEV) fback_stats.count=1") plus a
// client reason in a second message, which carries no totals.
func TestFallbackStats(t *testing.T) {
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdGetFallbackStats, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return []genetlink.Message{
				reply(cmdGetFallbackStats, []netlink.Attribute{nest(genFbStats,
					u8(fbType, 1), pad(0), u64(fbSrvCnt, 1), pad(0), u64(fbClntCnt, 2),
					u32(fbRsnCode, 0x03030002), u16(fbRsnCnt, 1))}),
				reply(cmdGetFallbackStats, []netlink.Attribute{nest(genFbStats,
					u8(fbType, 0), u32(fbRsnCode, 0x05000000), u16(fbRsnCnt, 2))}),
			}, nil
		}))
	got, err := c.FallbackStats()
	if err != nil {
		t.Fatal(err)
	}
	want := FallbackStats{
		ServerTotal: 1, ClientTotal: 2,
		Server: []FallbackReason{{Code: 0x03030002, Count: 1}},
		Client: []FallbackReason{{Code: 0x05000000, Count: 2}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

func TestFallbackStatsEmpty(t *testing.T) {
	// fallback-nosmc server: "FBSTATS: (none)", an empty dump.
	got, err := ParseFallbackStats(nil)
	if err != nil || len(got.Server)+len(got.Client) != 0 {
		t.Fatalf("ParseFallbackStats(nil) = %+v, %v", got, err)
	}
}

// TestSysInfo: "SYSINFO: sys_info.ver=2 sys_info.rel=1 sys_info.is_ism_v2=0
// sys_info.is_smcr_v2=1 sys_info.local_host="(none)"" from every 6.12 log.
func TestSysInfo(t *testing.T) {
	c := testConn(t, func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		switch greq.Header.Command {
		case cmdGetSysInfo:
			return []genetlink.Message{reply(cmdGetSysInfo, []netlink.Attribute{nest(genSysInfo,
				u8(sysVer, 2), u8(sysRel, 1), u8(sysIsISMV2, 0), u8(sysIsSMCRV2, 1),
				str(sysLocalHost, "(none)"))})}, nil
		case cmdDumpUEID:
			return []genetlink.Message{reply(cmdDumpUEID, []netlink.Attribute{str(eidTableEntry, eid32("SMC-LAB-UEID"))})}, nil
		}
		t.Fatalf("unexpected command %d", greq.Header.Command)
		return nil, nil
	})
	got, err := c.SysInfo()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SysInfo{Version: 2, Release: 1, SMCRv2: true, LocalHost: "(none)"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if us, err := c.UEIDs(); err != nil || len(us) != 1 || us[0] != "SMC-LAB-UEID" {
		t.Fatalf("UEIDs: %q %v", us, err)
	}
}

func TestSysInfoMissing(t *testing.T) {
	c := testConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		return []genetlink.Message{reply(cmdGetSysInfo, nil)}, nil
	})
	if _, err := c.SysInfo(); err == nil {
		t.Fatal("reply without SYS_INFO: no error")
	}
}

func TestSEIDAndHSLimitation(t *testing.T) {
	c := testConn(t, func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		switch greq.Header.Command {
		case cmdDumpSEID:
			return []genetlink.Message{reply(cmdDumpSEID, []netlink.Attribute{
				str(seidEntry, eid32("IBM-SYSZ-ISMSEID00000000ABCDEF0")), u8(seidEnabled, 1)})}, nil
		case cmdDumpHSLimitation:
			return []genetlink.Message{reply(cmdDumpHSLimitation, []netlink.Attribute{u8(hsLimitEnabled, 1)})}, nil
		}
		t.Fatalf("unexpected command %d", greq.Header.Command)
		return nil, nil
	})
	s, err := c.SEID()
	if err != nil || s != (SEID{EID: "IBM-SYSZ-ISMSEID00000000ABCDEF0", Enabled: true, Reported: true}) {
		t.Fatalf("SEID = %+v, %v", s, err)
	}
	on, err := c.HSLimitation()
	if err != nil || !on {
		t.Fatalf("HSLimitation = %v, %v", on, err)
	}
}

func TestDevicesR(t *testing.T) {
	// An rxe device on eth0 (ifindex 2), port 1 active, one link, as in
	// the lab; rxe has no PCI identity.
	c := testConn(t, genltest.CheckRequest(testFamily.ID, cmdGetDevSMCR, netlink.Request|netlink.Dump,
		func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
			return []genetlink.Message{reply(cmdGetDevSMCR, []netlink.Attribute{nest(genDevSMCR,
				u32(devUseCnt, 1), u8(devIsCrit, 1), u32(devPCIFID, 0), u16(devPCICHID, 0),
				u16(devPCIVendor, 0), u16(devPCIDevice, 0), str(devPCIID, ""),
				str(devIBName, "rxe0"),
				nest(devPort, u8(portPNETUsr, 0), str(portPNETID, ""), u32(portNetDev, 2),
					u8(portState, 1), u8(portValid, 1), u32(portLnkCnt, 1)),
			)})}, nil
		}))
	got, err := c.DevicesR()
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{{UseCount: 1, Critical: true, IBName: "rxe0",
		Ports: []Port{{Number: 1, NetDev: 2, Active: true, Valid: true, LinkCount: 1}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}
