package track

import (
	"bufio"
	"fmt"
	"math/bits"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// samplesDir holds the lab's captures; SMCSCOPE_SAMPLES points elsewhere
// (e.g. a fresh lab run) without editing the test.
func samplesDir() string {
	if d := os.Getenv("SMCSCOPE_SAMPLES"); d != "" {
		return d
	}
	return "../samples"
}

// samplePcaps lists the lab's captures, skipping the test while there are none.
func samplePcaps(t *testing.T) []string {
	t.Helper()
	dir := samplesDir()
	pcaps, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
	if len(pcaps) == 0 {
		t.Skipf("no captures in %s yet (the lab publishes them with lab/run all)", dir)
	}
	return pcaps
}

// sampleTruth is what the guests' kernels said about a sample (smc_diag per
// connection, SMC netlink statistics, link groups and links), read from the
// logs the lab keeps next to each capture.
type sampleTruth struct {
	conns   map[string]map[string]string // by pairKey of the endpoints: key=value of the first diag lines (server's prefixed "server.")
	stats   map[string]string            // client's SMC statistics
	lgrIDs  map[uint64]bool              // client's link-group IDs
	linkUID map[uint64]uint64            // client's link id -> link UID as netlink prints it (confirmed links)
	// failoverLink is the client's link that carries connections after a
	// failover (an "AFTER-FAILOVER LINK:" line with conns > 0); 0 = none.
	failoverLink uint64
}

var (
	tupleRE = regexp.MustCompile(`^(CLIENT|SERVER) .*?(\d+\.\d+\.\d+\.\d+:\d+|\[[0-9a-fA-F:.]+\]:\d+) -> (\S+)`)
	statsRE = regexp.MustCompile(`(?:^|\s)(?:stats\.)?smcr\.(tx_bytes|rx_bytes)=(\d+)`)
)

func readTruth(t *testing.T, logs []string) sampleTruth {
	g := sampleTruth{conns: map[string]map[string]string{}, stats: map[string]string{},
		lgrIDs: map[uint64]bool{}, linkUID: map[uint64]uint64{}}
	for _, name := range logs {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		client := strings.Contains(filepath.Base(name), "client")
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			kv := map[string]string{}
			for _, x := range kvRE.FindAllStringSubmatch(line, -1) {
				kv[x[1]] = strings.Trim(x[2], `"`)
			}
			if m := tupleRE.FindStringSubmatch(line); m != nil && kv["mode"] != "" {
				// Servers print "local -> peer" or "peer -> local" depending on
				// the tool: key the connection by its unordered endpoints.
				key := pairKey(m[2], m[3])
				if m[1] == "SERVER" {
					kv = prefixed("server.", kv)
				}
				if g.conns[key] == nil {
					g.conns[key] = map[string]string{}
				}
				for k, v := range kv {
					if _, ok := g.conns[key][k]; !ok {
						g.conns[key][k] = v
					}
				}
				continue
			}
			if !client {
				continue
			}
			if strings.HasPrefix(line, "STATS:") {
				for _, x := range statsRE.FindAllStringSubmatch(line, -1) {
					g.stats[x[1]] = x[2]
				}
			}
			if id, ok := kv["lgr_smcr.id"]; ok {
				g.lgrIDs[num(t, id)] = true
			}
			if strings.Contains(line, "LGR: id=") {
				g.lgrIDs[num(t, kv["id"])] = true
			}
			if strings.HasPrefix(line, "AFTER-FAILOVER LINK:") && kv["conns"] != "" && num(t, kv["conns"]) > 0 {
				g.failoverLink = num(t, kv["link_id"])
			}
			if strings.Contains(line, "LINK: lgr=") && kv["peer_uid"] != "" && num(t, kv["peer_uid"]) != 0 {
				g.linkUID[num(t, kv["link_id"])] = num(t, kv["uid"])
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return g
}

func prefixed(p string, m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[p+k] = v
	}
	return out
}

// TestSamples checks the tracker on every lab capture against the kernels'
// view recorded beside it.
func TestSamples(t *testing.T) {
	pcaps := samplePcaps(t)
	for _, p := range pcaps {
		base := strings.TrimSuffix(p, ".pcap")
		t.Run(filepath.Base(base), func(t *testing.T) {
			s := feedFile(t, p, Options{}, 0).Snapshot()
			checkAccounting(t, s.Stats)
			if s.Stats.Unattached != 0 {
				t.Errorf("%d unattached frames in a capture that starts at boot", s.Stats.Unattached)
			}
			for _, c := range s.Conns {
				for d := range 2 {
					f := c.Flow[d]
					if c.Outcome == OutcomeSMCR && (f.Bytes != f.WriteBytes || f.CursorErrors != 0 || f.SeqGaps != 0 || f.WritesOutside != 0) {
						t.Errorf("conn %d %v: %d B by cursor, %d B by WRITE, cursor errors %d, seq gaps %d, WRITEs outside RMBE %d",
							c.ID, Dir(d), f.Bytes, f.WriteBytes, f.CursorErrors, f.SeqGaps, f.WritesOutside)
					}
				}
			}
			checkWireTruth(t, s, base+".log")
			logs, _ := filepath.Glob(base + "*.log")
			more, _ := filepath.Glob(filepath.Join(base, "*.log"))
			logs = append(logs, more...)
			g := readTruth(t, logs)
			if len(g.conns) == 0 {
				t.Logf("no ground-truth log beside %s: checked invariants only", p)
				return
			}
			checkTruth(t, s, g)
		})
	}
}

func checkTruth(t *testing.T, s Snapshot, g sampleTruth) {
	byTuple := map[string]*Conn{}
	for i := range s.Conns {
		c := &s.Conns[i]
		byTuple[pairKey(c.Client.String(), c.Server.String())] = c
	}
	var c2s, s2c uint64
	counted := map[*Conn]bool{}
	for key, kv := range g.conns {
		if a, b, _ := strings.Cut(key, " "); hostOf(a) == hostOf(b) {
			continue // a host's connection to itself never reaches the wire
		}
		c := byTuple[key]
		if c == nil {
			t.Errorf("kernel reports connection %s, the tracker does not have it", key)
			continue
		}
		mode := kv["mode"]
		if mode == "" {
			mode = kv["server.mode"]
		}
		switch {
		case mode == "SMCR":
			if c.Outcome != OutcomeSMCR {
				t.Errorf("%s: outcome %v, kernel says SMC-R", key, c.Outcome)
			}
			if tok, ok := kv["token"]; ok && uint64(c.ClientEP.Token) != num(t, tok) {
				t.Errorf("%s: client token %d, kernel %s", key, c.ClientEP.Token, tok)
			}
			if tok, ok := kv["server.token"]; ok && uint64(c.ServerEP.Token) != num(t, tok) {
				t.Errorf("%s: server token %d, kernel %s", key, c.ServerEP.Token, tok)
			}
			if !counted[c] {
				c2s += c.Flow[DirC2S].Bytes
				s2c += c.Flow[DirS2C].Bytes
				counted[c] = true
			}
		case strings.Contains(mode, "FALLBACK") || (mode == "TCP" && kv["reason"] != "" && num(t, kv["reason"]) != 0):
			reason := kv["reason"]
			if reason == "" {
				reason = kv["fallback"]
			}
			if c.Outcome != OutcomeFallback || reason == "" {
				t.Errorf("%s: outcome %v, kernel says %s %s", key, c.Outcome, mode, reason)
				continue
			}
			fb := c.Fallback
			switch r := decode.DeclineCode(num(t, reason)); r {
			case decode.DeclinePeerNoSMC:
				if fb.Cause != CauseNoOptionSYNACK {
					t.Errorf("%s: fallback %+v, kernel says PEERNOSMC", key, fb)
				}
			case decode.DeclinePeerDecl:
				if fb.Cause != CauseDecline || fb.By != DirS2C || uint64(fb.Code) != num(t, kv["peer_diag"]) {
					t.Errorf("%s: fallback %+v, kernel says the server declined %s", key, fb, kv["peer_diag"])
				}
			default:
				if fb.Cause != CauseDecline || fb.By != DirC2S || fb.Code != uint32(r) {
					t.Errorf("%s: fallback %+v, kernel says the client declined %#x", key, fb, uint32(r))
				}
			}
		}
	}
	if v, ok := g.stats["tx_bytes"]; ok && c2s != num(t, v) {
		t.Errorf("client->server bytes %d, client's SMC statistics say tx_bytes %s", c2s, v)
	}
	if v, ok := g.stats["rx_bytes"]; ok && s2c != num(t, v) {
		t.Errorf("server->client bytes %d, client's SMC statistics say rx_bytes %s", s2c, v)
	}
	if g.failoverLink != 0 {
		// The kernel moved connections to this link: the tracker must have
		// seen failover-validation CDCs both ways, moved them to it, and
		// deleted the failed link with reason "lost path".
		moved, lost := 0, 0
		for _, c := range s.Conns {
			if c.Flow[DirC2S].Failover > 0 && c.Flow[DirS2C].Failover > 0 {
				moved++
				for _, l := range s.Links {
					if l.ID == c.Link && uint64(l.LinkID) != g.failoverLink {
						t.Errorf("conn %d ends on link number %d, kernel moved it to %d", c.ID, l.LinkID, g.failoverLink)
					}
				}
			}
		}
		for _, l := range s.Links {
			if l.State == LinkDeleted && l.DeleteCode == uint32(decode.DelLinkLostPath) {
				lost++
			}
		}
		if moved == 0 || lost == 0 {
			t.Errorf("failover: %d connections moved, %d links lost; the kernel reports a failover", moved, lost)
		}
	}
	have := map[uint64]bool{}
	for _, lg := range s.LinkGroups {
		have[uint64(lg.ClientLGRID)] = true
	}
	for id := range g.lgrIDs {
		if !have[id] {
			t.Errorf("client link group %#x (netlink) not found; tracker has %v", id, have)
		}
	}
	for linkID, uid := range g.linkUID {
		found := false
		for _, l := range s.Links {
			if uint64(l.LinkID) == linkID && uint64(l.Client.UID) == uint64(bits.ReverseBytes32(uint32(uid))) {
				found = true
			}
		}
		if !found {
			t.Errorf("client link %d (uid %#x in netlink) not found with that UID", linkID, uid)
		}
	}
}

func pairKey(a, b string) string {
	if b < a {
		a, b = b, a
	}
	return a + " " + b
}

func hostOf(addrPort string) string {
	if i := strings.LastIndexByte(addrPort, ':'); i >= 0 {
		return addrPort[:i]
	}
	return addrPort
}

// TestSamplesJoinedGroup cuts each sample inside its first SMC-R
// connection's data phase: that connection is joined mid-stream (built
// from CDCs), and a later connection that reuses the link group must land
// on the same link, settle its roles, and count the same bytes as in the
// full capture.
func TestSamplesJoinedGroup(t *testing.T) {
	pcaps := samplePcaps(t)
	tried := 0
	for _, p := range pcaps {
		full := feedFile(t, p, Options{}, 0).Snapshot()
		var first, reused *Conn
		for i := range full.Conns {
			c := &full.Conns[i]
			switch {
			case c.Outcome != OutcomeSMCR:
			case first == nil && c.FirstContact && c.Flow[DirC2S].CDCs > 4:
				first = c
			case first != nil && reused == nil && !c.FirstContact && c.LGR == first.LGR && c.Flow[DirC2S].CDCs > 0:
				reused = c
			}
		}
		if first == nil || reused == nil || reused.FirstFrame <= first.FirstFrame+40 {
			continue
		}
		tried++
		skip := first.FirstFrame + 40 // inside the first connection's data phase
		t.Run(filepath.Base(p), func(t *testing.T) {
			s := feedFile(t, p, Options{}, skip).Snapshot()
			checkAccounting(t, s.Stats)
			var got *Conn
			for i := range s.Conns {
				if s.Conns[i].Client == reused.Client && s.Conns[i].Server == reused.Server {
					got = &s.Conns[i]
				}
			}
			if got == nil || got.Outcome != OutcomeSMCR {
				t.Fatalf("reused connection %v not found as SMC-R", reused.Client)
			}
			for d := range 2 {
				if got.Flow[d].Bytes != reused.Flow[d].Bytes || got.Flow[d].CDCs != reused.Flow[d].CDCs || got.Flow[d].WriteBytes != reused.Flow[d].WriteBytes {
					t.Errorf("%v: %d B / %d CDCs / %d B WRITE, full capture %d / %d / %d", Dir(d),
						got.Flow[d].Bytes, got.Flow[d].CDCs, got.Flow[d].WriteBytes, reused.Flow[d].Bytes, reused.Flow[d].CDCs, reused.Flow[d].WriteBytes)
				}
			}
			joined := 0
			for _, c := range s.Conns {
				if c.Inferred {
					joined++
					if c.Link != got.Link {
						t.Errorf("joined conn %d on link %d, reused conn on link %d: want one link", c.ID, c.Link, got.Link)
					}
					// Roles are known now: the joined stream's client->server
					// side is the client's RMB writes of the full capture.
					if c.Flow[DirC2S].Prod != first.Flow[DirC2S].Prod {
						t.Errorf("joined conn final C->S cursor %v, full capture %v (roles not settled?)", c.Flow[DirC2S].Prod, first.Flow[DirC2S].Prod)
					}
					// Cursor wraps need the RMBE size, which no CLC gave:
					// it is learned from the WRITEs at the first wrap.
					for d := range 2 {
						if f := c.Flow[d]; f.Bytes != f.WriteBytes || f.CursorErrors != 0 {
							t.Errorf("joined conn %v: %d B by cursor, %d B by WRITE, %d cursor errors", Dir(d), f.Bytes, f.WriteBytes, f.CursorErrors)
						}
					}
				}
			}
			if joined == 0 {
				t.Error("the first connection was not joined from its CDCs")
			}
			for _, l := range s.Links {
				if l.ID == got.Link && (l.Inferred || !l.keyed[0] || !l.keyed[1]) {
					t.Errorf("link %d after the CLC: inferred %v keyed %v", l.ID, l.Inferred, l.keyed)
				}
			}
		})
	}
	if tried == 0 {
		t.Skip("no sample has a first-contact connection followed by a reused one")
	}
}

// TestSamplesCut starts each sample at several points inside its traffic,
// as a capture started late would: concurrent connections must be joined
// without splitting or mixing their CDC streams (tokens coincide across
// connections, cursors are the evidence), WRITEs must agree with cursors
// (RMBE sizes learned at wraps), and link groups must not multiply. A
// link whose setup (ADD_LINK) the cut left out and that carries only LLC
// keepalives (silent-link.pcap's second link: TEST_LINK, which names no
// link group) cannot be placed in its group: such a group of its own, with
// no connection, is not counted.
func TestSamplesCut(t *testing.T) {
	groups := func(s Snapshot) int {
		n := 0
		for _, g := range s.LinkGroups {
			if !g.Inferred || len(g.Conns) > 0 {
				n++
			}
		}
		return n
	}
	pcaps := samplePcaps(t)
	for _, p := range pcaps {
		full := feedFile(t, p, Options{}, 0).Snapshot()
		if len(full.Links) == 0 {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			for _, skip := range []int{30, 60, 100, 500, 1000, 2000, 3000} {
				if skip >= full.Stats.Frames {
					continue
				}
				s := feedFile(t, p, Options{}, skip).Snapshot()
				checkAccounting(t, s.Stats)
				if len(s.Conns) > len(full.Conns) || groups(s) > len(full.LinkGroups) {
					t.Errorf("skip %d: %d conns / %d link groups, the whole capture has %d / %d",
						skip, len(s.Conns), groups(s), len(full.Conns), len(full.LinkGroups))
				}
				for _, c := range s.Conns {
					if c.Outcome != OutcomeSMCR && !c.Inferred {
						continue
					}
					for d := range 2 {
						f := c.Flow[d]
						if f.Bytes != f.WriteBytes || f.CursorErrors != 0 || f.SeqGaps != 0 {
							t.Errorf("skip %d conn %d %v: %d B by cursor, %d B by WRITE, %d cursor errors, %d seq gaps",
								skip, c.ID, Dir(d), f.Bytes, f.WriteBytes, f.CursorErrors, f.SeqGaps)
						}
					}
					if c.Inferred && (c.Flow[0].CDCs == 0 || c.Flow[1].CDCs == 0) && c.Flow[0].CDCs+c.Flow[1].CDCs > 4 {
						t.Errorf("skip %d conn %d: CDCs only one way (%d/%d): its other half was not joined", skip, c.ID, c.Flow[0].CDCs, c.Flow[1].CDCs)
					}
				}
			}
		})
	}
}

// checkWireTruth compares with the lab's machine-readable facts about the
// wire (truth.key=value lines in X.log, counted by tshark there).
func checkWireTruth(t *testing.T, s Snapshot, name string) {
	b, err := os.ReadFile(name)
	if err != nil {
		return
	}
	truth := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.HasPrefix(k, "truth.") {
			truth[k] = v
		}
	}
	if v, ok := truth["truth.frames"]; ok && uint64(s.Stats.Frames) != num(t, v) {
		t.Errorf("%d frames, the lab counted %s", s.Stats.Frames, v)
	}
	if v, ok := truth["truth.wire.roce_frames"]; ok && uint64(s.Stats.RoCE) != num(t, v) {
		t.Errorf("%d RoCE frames, the lab counted %s", s.Stats.RoCE, v)
	}
	if v, ok := truth["truth.wire.rdma_write_frames"]; ok {
		// The tracker follows the copy its responder takes, once; the
		// lab counts every frame, copies and requests the responder
		// dropped as out of sequence included.
		pkts, retrans := 0, 0
		for _, l := range s.Links {
			for d := range 2 {
				pkts += l.RC[d].WritePkts
				retrans += l.RC[d].Retrans + l.RC[d].OutOfSeq
			}
		}
		if w := num(t, v); uint64(pkts) > w || w > uint64(pkts+retrans) {
			t.Errorf("%d RDMA WRITE packets (+%d retransmitted or out of sequence), the lab counted %d", pkts, retrans, w)
		}
	}
}

// TestSamplesStartAtConfirm cuts every sample just before each Confirm of a
// reused link group, so the capture holds the Confirm but not the Accept
// (nor, usually, the link's setup): the connection must still be found on
// its link, with CDCs both ways, and be counted once. A lab run whose cut
// fell there counted one connection twice, from TCP and from its CDCs.
func TestSamplesStartAtConfirm(t *testing.T) {
	pcaps := samplePcaps(t)
	tried := 0
	for _, p := range pcaps {
		type confirm struct {
			frame  int
			client netip.AddrPort
		}
		var cuts []confirm
		eachFrame(t, p, func(f *capture.Frame) {
			for _, m := range f.CLC {
				if m.Type == decode.CLCTypeConfirm && !m.FirstContact() && f.TCP != nil && f.IPv4 != nil {
					src, _ := netip.AddrFromSlice(f.IPv4.SrcIP)
					cuts = append(cuts, confirm{f.Number, netip.AddrPortFrom(src, uint16(f.TCP.SrcPort))})
				}
			}
		})
		full := feedFile(t, p, Options{}, 0).Snapshot()
		for _, cut := range cuts {
			tried++
			s := feedFile(t, p, Options{}, cut.frame-1).Snapshot()
			checkAccounting(t, s.Stats)
			if len(s.Conns) > len(full.Conns) {
				t.Errorf("%s from frame %d: %d connections, the whole capture has %d", filepath.Base(p), cut.frame, len(s.Conns), len(full.Conns))
			}
			var c *Conn
			for i := range s.Conns {
				if s.Conns[i].Client == cut.client {
					c = &s.Conns[i]
				}
			}
			switch {
			case c == nil:
				t.Errorf("%s from frame %d: connection %v not found", filepath.Base(p), cut.frame, cut.client)
			case c.LGR == 0 || c.Flow[DirC2S].CDCs == 0 || c.Flow[DirS2C].CDCs == 0:
				t.Errorf("%s from frame %d: connection %v on lgr %d with %d/%d CDCs: not joined to its link",
					filepath.Base(p), cut.frame, cut.client, c.LGR, c.Flow[DirC2S].CDCs, c.Flow[DirS2C].CDCs)
			}
		}
	}
	if tried == 0 {
		t.Skip("no sample has a Confirm of a reused link group")
	}
}

// TestSampleSMCDLoopback: samples/smcd-loopback.pcapng is SMC-Dv2 over the 7.3 lab's
// DIBS loopback, captured by smcdump on the guest's lo (SYNs and CLC). Every connection
// the kernel reported (smc_diag mode SMCD, the truth.client.connN lines beside it) is an
// SMC-D connection of the tracker, the first making a new link group and the second
// reusing it, as the Accepts' first-contact bit says; there are no others.
func TestSampleSMCDLoopback(t *testing.T) {
	base := filepath.Join(samplesDir(), "smcd-loopback")
	if _, err := os.Stat(base + ".pcapng"); err != nil {
		t.Skipf("no SMC-D sample: %v", err)
	}
	truth := map[string]string{}
	b, err := os.ReadFile(base + ".log")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimPrefix(l, "truth."), "="); ok && strings.HasPrefix(l, "truth.") {
			truth[k] = v
		}
	}
	s := feedFile(t, base+".pcapng", Options{}, 0).Snapshot()
	checkAccounting(t, s.Stats)
	if got, want := len(s.Conns), truth["client.conns"]; want == "" || strconv.Itoa(got) != want {
		t.Fatalf("%d connections, the kernel reported %s", got, want)
	}
	for i, c := range s.Conns {
		src, mode := truth[fmt.Sprintf("client.conn%d.src", i)], truth[fmt.Sprintf("client.conn%d.mode", i)]
		if c.Client.String() != src || mode != "SMCD" {
			t.Errorf("connection %d from %v; the kernel's conn%d: %s %s", c.ID, c.Client, i, src, mode)
		}
		if c.Outcome != OutcomeSMCD || !c.SMCD || c.Version != 2 || c.Offered != "SMC-Dv2" || strings.TrimRight(c.EID, " ") != "SMC-LAB-UEID" || c.FirstContact != (i == 0) {
			t.Errorf("connection %d: outcome %v, SMC-D %v, version %d, offered %q, EID %q, first contact %v", c.ID, c.Outcome, c.SMCD, c.Version, c.Offered, c.EID, c.FirstContact)
		}
	}
}
