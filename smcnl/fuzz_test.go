package smcnl

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mdlayher/netlink"
)

// Properties of every parser: no panic on any input, and no partial result
// alongside an error. Plain `go test` runs the seeds (the realistic
// messages of the other tests) and the corpus in testdata/fuzz.

// addRecorded seeds f with every message of testdata/*/name.bin.
func addRecorded(f *testing.F, name string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", name+".bin"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		msgs, err := SplitMessages(b)
		if err != nil {
			f.Fatalf("%s: %v", p, err)
		}
		for _, m := range msgs {
			if name == "diag" {
				f.Add(m.Data)
			} else if len(m.Data) >= 4 {
				f.Add(m.Data[4:]) // past the generic netlink header
			}
		}
	}
}

func checkNoPartial(t *testing.T, v any, ok bool, err error) {
	t.Helper()
	if err != nil && (ok || !reflect.ValueOf(v).IsZero()) {
		t.Fatalf("partial result %+v (ok=%v) with error %v", v, ok, err)
	}
}

func FuzzParseSocket(f *testing.F) {
	f.Add(pingpongClientSocket(f))
	f.Add(declineClientSocket(f))
	f.Add(make([]byte, smcDiagMsgLen))
	addRecorded(f, "diag")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSocket(b)
		checkNoPartial(t, s, false, err)
		// The attribute walk must accept and reject what package
		// netlink's decoder does, and sharing strings change nothing.
		want, wantErr := parseSocketNetlink(b)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(s, want) {
			t.Fatalf("ParseSocket = %+v, %v; with netlink's decoder %+v, %v", s, err, want, wantErr)
		}
		shared, err := NewSocketParser(2).Parse(b)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(shared, want) {
			t.Fatalf("SocketParser.Parse = %+v, %v; ParseSocket %+v, %v", shared, err, want, wantErr)
		}
	})
}

// parseSocketNetlink is ParseSocket's attribute walk done by
// netlink.AttributeDecoder, the reference of FuzzParseSocket.
func parseSocketNetlink(b []byte) (Socket, error) {
	if len(b) < smcDiagMsgLen {
		return Socket{}, fmt.Errorf("smcnl: smc_diag_msg: need %d bytes, have %d", smcDiagMsgLen, len(b))
	}
	s, err := ParseSocket(b[:smcDiagMsgLen])
	if err != nil {
		return Socket{}, err
	}
	var p SocketParser
	ad, err := netlink.NewAttributeDecoder(b[smcDiagMsgLen:])
	if err != nil {
		return Socket{}, fmt.Errorf("smcnl: smc_diag_msg attributes: %w", err)
	}
	for ad.Next() {
		if ad.Type() == diagShutdown {
			s.Shutdown = Shutdown(ad.Uint8())
			continue
		}
		ad.Do(func(v []byte) error { return p.attr(&s, ad.Type(), v) })
	}
	if err := ad.Err(); err != nil {
		return Socket{}, fmt.Errorf("smcnl: smc_diag_msg attributes: %w", err)
	}
	return s, nil
}

func FuzzParseLinkGroupR(f *testing.F) {
	f.Add(pingpongLGR(0x100, 0, 1).Data)
	f.Add(pingpongLink(1, 3, 0x01010000).Data)
	addRecorded(f, "links")
	f.Fuzz(func(t *testing.T, b []byte) {
		g, ok, err := ParseLinkGroupR(b)
		checkNoPartial(t, g, ok, err)
	})
}

func FuzzParseLink(f *testing.F) {
	f.Add(pingpongLink(1, 3, 0x01010000).Data)
	f.Add(pingpongLGR(0x100, 0, 1).Data)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ok, err := ParseLink(b)
		checkNoPartial(t, l, ok, err)
	})
}

func FuzzParseLinkGroupD(f *testing.F) {
	f.Add(reply(cmdGetLGRSMCD, []netlink.Attribute{nest(genLGRSMCD, u32(lgrDID, 1), u32(lgrDCHID, 2),
		nest(lgrDV2Common, u8(lgrV2Ver, 2)))}).Data)
	f.Fuzz(func(t *testing.T, b []byte) {
		g, ok, err := ParseLinkGroupD(b)
		checkNoPartial(t, g, ok, err)
	})
}

func FuzzParseStats(f *testing.F) {
	f.Add(pingpongClientStats().Data)
	addRecorded(f, "stats")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok, err := ParseStats(b)
		checkNoPartial(t, s, ok, err)
	})
}

func FuzzParseFallbackStats(f *testing.F) {
	f.Add(reply(cmdGetFallbackStats, []netlink.Attribute{nest(genFbStats,
		u8(fbType, 1), pad(0), u64(fbSrvCnt, 1), pad(0), u64(fbClntCnt, 0),
		u32(fbRsnCode, 0x03030002), u16(fbRsnCnt, 1))}).Data)
	addRecorded(f, "fallback")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseFallbackStats([][]byte{b, b})
		checkNoPartial(t, s, false, err)
	})
}

func FuzzParseDevice(f *testing.F) {
	f.Add(reply(cmdGetDevSMCR, []netlink.Attribute{nest(genDevSMCR, u32(devUseCnt, 1), str(devIBName, "rxe0"),
		nest(devPort, u32(portNetDev, 2), u8(portState, 1)))}).Data)
	addRecorded(f, "dev_smcr")
	f.Fuzz(func(t *testing.T, b []byte) {
		d, ok, err := ParseDeviceR(b)
		checkNoPartial(t, d, ok, err)
		d, ok, err = ParseDeviceD(b)
		checkNoPartial(t, d, ok, err)
	})
}

func FuzzParseSysInfo(f *testing.F) {
	f.Add(reply(cmdGetSysInfo, []netlink.Attribute{nest(genSysInfo,
		u8(sysVer, 2), u8(sysRel, 1), u8(sysIsSMCRV2, 1), str(sysLocalHost, "(none)"))}).Data)
	addRecorded(f, "sysinfo")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok, err := ParseSysInfo(b)
		checkNoPartial(t, s, ok, err)
	})
}

func FuzzParseUEIDs(f *testing.F) {
	f.Add(reply(cmdDumpUEID, []netlink.Attribute{str(eidTableEntry, eid32("SMC-LAB-UEID"))}).Data)
	addRecorded(f, "ueid")
	f.Fuzz(func(t *testing.T, b []byte) {
		u, err := ParseUEIDs(b)
		checkNoPartial(t, u, false, err)
	})
}

func FuzzParseSEID(f *testing.F) {
	f.Add(reply(cmdDumpSEID, []netlink.Attribute{str(seidEntry, ""), u8(seidEnabled, 0)}).Data)
	addRecorded(f, "seid")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, ok, err := ParseSEID(b)
		checkNoPartial(t, s, ok, err)
	})
}

func FuzzParsePNETEntry(f *testing.F) {
	f.Add(reply(pnetCmdGet, []netlink.Attribute{str(pnetAttrName, "LABNET"), str(pnetAttrEthName, "n/a"),
		str(pnetAttrIBName, "lo"), u8(pnetAttrIBPort, 1)}).Data)
	addRecorded(f, "pnet")
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParsePNETEntry(b)
		checkNoPartial(t, e, false, err)
	})
}
