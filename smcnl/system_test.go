package smcnl

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
)

// TestRecordedEIDs reads the UEID and SEID replies the lab's kernels sent:
// 6.12 (no SMC-D, so not v2 capable for SEID: an empty DUMP_SEID message)
// and 7.3 with the DIBS loopback (v2 capable: an empty SEID, not in use).
func TestRecordedEIDs(t *testing.T) {
	for _, tt := range []struct {
		dir   string
		ueids []string
		seid  SEID
	}{
		{"pingpong-client-active", []string{"SMC-LAB-UEID"}, SEID{}},
		{"no-ueid-client-active", nil, SEID{}},
		{"smcd-client-active", []string{"SMC-LAB-UEID"}, SEID{EID: "", Enabled: false, Reported: true}},
	} {
		t.Run(tt.dir, func(t *testing.T) {
			c := recordedConn(t, tt.dir)
			u, err := c.UEIDs()
			if err != nil {
				t.Fatalf("UEIDs: %v", err)
			}
			if d := cmp.Diff(tt.ueids, u); d != "" {
				t.Errorf("UEIDs (-want +got):\n%s", d)
			}
			s, err := c.SEID()
			if err != nil {
				t.Fatalf("SEID: %v", err)
			}
			if s != tt.seid {
				t.Errorf("SEID = %+v, want %+v", s, tt.seid)
			}
		})
	}
}

// TestParseSEIDPresence tells the 7.3 guest's empty-but-present SEID from
// 6.12's absent one: ok says whether the kernel sent the attributes.
func TestParseSEIDPresence(t *testing.T) {
	if !isLittle() {
		t.Skip("recordings are x86 host-order bytes")
	}
	for dir, want := range map[string]bool{"pingpong-client-active": false, "smcd-client-active": true} {
		msgs, err := ReadRecording(filepath.Join("testdata", dir, "seid.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1", dir, len(msgs))
		}
		_, ok, err := ParseSEID(msgs[0].Data[4:])
		if err != nil || ok != want {
			t.Errorf("%s: ParseSEID ok=%v err=%v, want ok=%v", dir, ok, err, want)
		}
	}
}

// TestReplayPNET replays a pnet.bin as smclab record writes it (the
// entries smc_pnet_dumpinfo sends, "n/a" and port 0xff for what an entry
// lacks), and a directory recorded before pnet.bin existed.
func TestReplayPNET(t *testing.T) {
	dir := t.TempDir()
	var msgs []netlink.Message
	for _, attrs := range [][]netlink.Attribute{
		{str(1, "LABNET"), str(2, "eth1"), str(3, "n/a"), u8(4, 0xff)},
		{str(1, "LABNET"), str(2, "n/a"), str(3, "lo"), u8(4, 1)},
	} {
		g := reply(pnetCmdGet, attrs)
		b, err := g.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, netlink.Message{Header: netlink.Header{Type: 0x1e, Flags: netlink.Multi}, Data: b})
	}
	if err := os.WriteFile(filepath.Join(dir, "pnet.bin"), AppendMessages(nil, msgs), 0o644); err != nil {
		t.Fatal(err)
	}
	got := replayedPNET(t, dir)
	want := []PNETEntry{{PNETID: "LABNET", EthName: "eth1"}, {PNETID: "LABNET", IBName: "lo", IBPort: 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PNETIDs (-want +got):\n%s", d)
	}
	if _, err := ReplayPNET(t.TempDir()); !errors.Is(err, ErrNotSupported) {
		t.Errorf("ReplayPNET(no pnet.bin) = %v, want ErrNotSupported", err)
	}
}

// TestRecordedPNET: the PNET table the lab's 7.3 e2e-smc server replied
// (shift_ids: lo and rxe0 under LABSELF, the DIBS loopback under
// LABNOSMCD), one entry per device, the netdev entry without a port.
func TestRecordedPNET(t *testing.T) {
	if !isLittle() {
		t.Skip("recordings are x86 host-order bytes")
	}
	got := replayedPNET(t, filepath.Join("testdata", "e2e-smc-server-obs"))
	want := []PNETEntry{{PNETID: "LABSELF", EthName: "lo"}, {PNETID: "LABSELF", IBName: "rxe0", IBPort: 1}, {PNETID: "LABNOSMCD", IBName: "lo", IBPort: 1}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PNET table (-want +got):\n%s", d)
	}
}

// replayedPNET lists the PNET table of a recording directory.
func replayedPNET(t *testing.T, dir string) []PNETEntry {
	t.Helper()
	p, err := ReplayPNET(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	es, err := p.PNETIDs()
	if err != nil {
		t.Fatal(err)
	}
	return es
}
