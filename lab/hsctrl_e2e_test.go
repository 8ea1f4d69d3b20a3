package lab

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// e2e-hsctrl (7.3 only): the server guest registers the lab's BPF handshake controller
// (lab/guest/hsctrl/hsctrl.bpf.c, struct_ops smc_hs_ctrl) and selects it with
// net.smc.hs_ctrl; it leaves the SMC option out of the SYN-ACKs of port 5001. Port 5000
// stays SMC-R.

// smcOption reports whether a TCP segment carries the SMC option: kind 254 (experimental)
// with the magic E2D4C3D9 (RFC 7609; tcp_output.c smc_options_write).
func smcOption(tcp *layers.TCP) bool {
	for _, o := range tcp.Options {
		if o.OptionType == 254 && bytes.HasPrefix(o.OptionData, []byte{0xe2, 0xd4, 0xc3, 0xd9}) {
			return true
		}
	}
	return false
}

// TestHSCtrlTakesSMCOffOnePort: on the wire every SYN carries the SMC option, the
// server's SYN-ACKs on 5001 none and on 5000 all; smcping proves SMC-R on 5000 and names
// PEERNOSMC on 5001 for AF_SMC and IPPROTO_SMC sockets alike; the server's kernel
// reports its side of 5001 the same; smctop's settings name the controller; and smcdump
// says why each connection to 5001 fell back.
func TestHSCtrlTakesSMCOffOnePort(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-hsctrl")
		need(t, have, "smcping")
		base := filepath.Join(dir, "e2e-hsctrl")
		if got := readFile(t, filepath.Join(base, "server", "hsctrl.txt")); !strings.HasPrefix(got, "hs_ctrl=labnosmc5001\n") {
			t.Fatalf("the server's controller was not selected:\n%s", got)
		}

		type count struct{ syn, synOpt, synack, synackOpt int }
		ports := map[layers.TCPPort]*count{5000: {}, 5001: {}}
		for _, f := range frames(t, filepath.Join(base, "capture.pcap")) {
			p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.NoCopy)
			tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
			if !ok || !tcp.SYN {
				continue
			}
			switch {
			case !tcp.ACK && ports[tcp.DstPort] != nil:
				c := ports[tcp.DstPort]
				c.syn++
				if smcOption(tcp) {
					c.synOpt++
				}
			case tcp.ACK && ports[tcp.SrcPort] != nil:
				c := ports[tcp.SrcPort]
				c.synack++
				if smcOption(tcp) {
					c.synackOpt++
				}
			}
		}
		if c := ports[5001]; c.syn < 4 || c.synOpt != c.syn || c.synack < c.syn || c.synackOpt != 0 {
			t.Errorf("port 5001: %d SYNs (%d with the SMC option), %d SYN-ACKs (%d with it); want the option on every SYN and on no SYN-ACK", c.syn, c.synOpt, c.synack, c.synackOpt)
		}
		if c := ports[5000]; c.syn < 2 || c.synOpt != c.syn || c.synackOpt < c.syn {
			t.Errorf("port 5000: %d SYNs (%d with the SMC option), %d SYN-ACKs (%d with it); want it on all", c.syn, c.synOpt, c.synack, c.synackOpt)
		}

		c := filepath.Join(base, "client")
		dev := clientLink(t, dir, "e2e-hsctrl").dev
		for _, st := range []string{"hsctrl-smc-check", "hsctrl-ipproto-smc"} {
			if out := readFile(t, filepath.Join(c, st+".txt")); rc[st] != 0 || !strings.HasPrefix(out, "OK SMC-R via "+dev) {
				t.Errorf("%s exit %d:\n%s\nwant OK SMC-R via %s", st, rc[st], out, dev)
			}
		}
		for _, st := range []string{"hsctrl-nosmc-check", "hsctrl-ipproto-nosmc"} {
			if out := readFile(t, filepath.Join(c, st+".txt")); rc[st] == 0 || !strings.HasPrefix(out, "FAIL fallback 0x03010000 PEERNOSMC") {
				t.Errorf("%s exit %d:\n%s\nwant FAIL fallback 0x03010000 PEERNOSMC", st, rc[st], out)
			}
		}
		if rc["hsctrl-nosmc-require"] != 1 || rc["hsctrl-nosmc-plain"] != 0 {
			t.Errorf("on 5001 --require smc exit %d (want 1), a plain run exit %d (want 0)", rc["hsctrl-nosmc-require"], rc["hsctrl-nosmc-plain"])
		}

		srv := readFile(t, filepath.Join(base, "server", "server.log"))
		n := 0
		for _, l := range strings.Split(srv, "\n") {
			if !strings.Contains(l, ":5001 -> 10.10.0.2:") {
				continue
			}
			n++
			if !strings.Contains(l, " mode=TCP-FALLBACK reason=0x03010000") {
				t.Errorf("server: %s; want TCP-FALLBACK 0x03010000 (PEERNOSMC: its own SYN-ACK went without the option)", l)
			}
		}
		if n < 4 {
			t.Errorf("server accepted %d connections on 5001, want the client's 4:\n%s", n, srv)
		}

		snap := readSnapshot(t, filepath.Join(base, "server", "smctop1.json"))
		got := ""
		for _, s := range snap.Settings {
			if s.Name == "net.smc.hs_ctrl" {
				got = s.Value
			}
		}
		if got != "labnosmc5001" {
			t.Errorf("smctop's settings: net.smc.hs_ctrl = %q, want labnosmc5001 (%+v)", got, snap.Settings)
		}

		out, err := exec.Command(buildSmcdump(t), "-r", filepath.Join(base, "capture.pcap"), "-q", "-z", "smc,conns").Output()
		if err != nil {
			t.Fatalf("smcdump -z smc,conns: %v", err)
		}
		var to5001, why int
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) < 4 || !strings.HasSuffix(f[2], ":5001") {
				continue
			}
			to5001++
			if f[3] == "fallback" && strings.Contains(l, "option missing on server SYN-ACK") {
				why++
			}
		}
		if to5001 != ports[5001].syn || why != to5001 {
			t.Errorf("smcdump: %d connections to 5001, %d of them a fallback for the option missing on the SYN-ACK; the wire has %d SYNs:\n%s", to5001, why, ports[5001].syn, out)
		}
	})
}
