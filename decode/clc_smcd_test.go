package decode

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// smcdSample is SMC-Dv2 over the DIBS loopback of the lab's Linux 7.3, captured by
// smcdump on the guest's lo (samples/README.md): frames 3-5 are the first connection's
// Proposal, Accept and Confirm, 8-10 the second's, which reuses the link groups.
func smcdSampleCLC(t *testing.T, frame int) *CLC {
	t.Helper()
	f := testutil.Frame(t, filepath.Join(testutil.SamplesDir(t), "smcd-loopback.pcapng"), frame)
	p := gopacket.NewPacket(f.Data, layers.LayerTypeEthernet, gopacket.Default)
	tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if !ok {
		t.Fatalf("frame %d: no TCP", frame)
	}
	return clcMustDecode(t, tcp.Payload)
}

// smcdKernel reads what the kernel said about the sample's connections: the DIBS
// loopback's GID (its sysfs file, a UUID) from the truth file, and each client
// connection's smc_diag line (dmb_* of smcd_diag_dmbinfo) from the guest's log.
func smcdKernel(t *testing.T) (gid string, conns []map[string]string) {
	t.Helper()
	dir := testutil.SamplesDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "smcd-loopback.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "truth.kernel.dibs_lo_gid="); ok {
			gid = v
		}
	}
	b, err = os.ReadFile(filepath.Join(dir, "smcd-loopback.client.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "CLIENT conn") || !strings.Contains(l, " mode=SMCD ") {
			continue
		}
		kv := map[string]string{}
		for _, f := range strings.Fields(l) {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		conns = append(conns, kv)
	}
	if gid == "" || len(conns) != 2 {
		t.Fatalf("sample truth: GID %q, %d SMC-D connections", gid, len(conns))
	}
	return gid, conns
}

func hexU64(t *testing.T, s string) uint64 {
	t.Helper()
	u, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCLCSMCDLoopback decodes the real SMC-Dv2 handshakes of the lab's 7.3 loopback and
// holds them to the kernel's own view beside the capture: the GID (and its extension)
// in every message is the DIBS loopback's; the client's Confirm carries the DMB token and
// link-group ID smc_diag reports for the client socket (dmb_token, dmb_link_id), the
// server's Accept the token the client reports as its peer's (dmb_peer_token); a link
// group ID is 4 bytes in the sender's host order (lgr->id, x86: little-endian).
func TestCLCSMCDLoopback(t *testing.T) {
	uuid, conns := smcdKernel(t)
	raw, err := hex.DecodeString(strings.ReplaceAll(uuid, "-", ""))
	if err != nil || len(raw) != 16 {
		t.Fatalf("GID %q: %v", uuid, err)
	}
	gid, ext := binary.BigEndian.Uint64(raw[:8]), binary.BigEndian.Uint64(raw[8:])
	for i, frames := range [][3]int{{3, 4, 5}, {8, 9, 10}} {
		k := conns[i]
		prop := smcdSampleCLC(t, frames[0])
		p := prop.Proposal
		if prop.Type != CLCTypeProposal || prop.Version != 2 || prop.TypeV1 != SMCTypeN || prop.TypeV2 != SMCTypeD || !p.HasSMCDv2Ext {
			t.Fatalf("frame %d: %v v%d types v1 %v v2 %v, SMC-Dv2 ext %v", frames[0], prop.Type, prop.Version, prop.TypeV1, prop.TypeV2, p.HasSMCDv2Ext)
		}
		if n, emulated := p.SMCDv2Ext.Devices(); n != 1 || emulated != 1 || p.SMCDv2Ext.Len() != 2 {
			t.Errorf("frame %d: %d devices (%d emulated) in %d entries, want the loopback in two", frames[0], n, emulated, p.SMCDv2Ext.Len())
		}
		g0, c0 := p.SMCDv2Ext.GIDCHID(0)
		g1, c1 := p.SMCDv2Ext.GIDCHID(1)
		if g0 != gid || g1 != ext || c0 != 0xffff || c1 != 0xffff {
			t.Errorf("frame %d: entries %#x/%#x %#x/%#x, want the loopback's GID %s with CHID 0xffff", frames[0], g0, c0, g1, c1, uuid)
		}
		for j, n := range frames[1:] {
			c := smcdSampleCLC(t, n)
			a := c.Accept
			want := []CLCType{CLCTypeAccept, CLCTypeConfirm}[j]
			if c.Type != want || c.TypeV1 != SMCTypeD || c.Eyecatcher != EyecatcherSMCD || c.FirstContact() != (i == 0) {
				t.Errorf("frame %d: %v type %v eyecatcher %q first contact %v", n, c.Type, c.TypeV1, c.Eyecatcher, c.FirstContact())
			}
			if a.SMCDGID != gid || a.GIDExt != ext || a.CHID != 0xffff || a.DMBESize != 2 {
				t.Errorf("frame %d: GID %#x ext %#x CHID %#x DMBE size code %d", n, a.SMCDGID, a.GIDExt, a.CHID, a.DMBESize)
			}
			token, lgr := hexU64(t, k["dmb_peer_token"]), uint32(0)
			if want == CLCTypeConfirm {
				token = hexU64(t, k["dmb_token"])
				l, _ := strconv.ParseUint(k["dmb_link_id"], 10, 32)
				lgr = uint32(l)
			}
			if a.DMBToken != token {
				t.Errorf("frame %d: DMB token %#x, the kernel's %#x", n, a.DMBToken, token)
			}
			if lgr != 0 && binary.LittleEndian.Uint32(a.LinkID[:]) != lgr {
				t.Errorf("frame %d: link ID %x, the client socket's link group %#x", n, a.LinkID, lgr)
			}
		}
	}
}
