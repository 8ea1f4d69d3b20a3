//go:build linux

package smcnl

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// These tests talk to the running kernel. On a host without SMC they skip
// and say why; `make test` runs them inside the lab's guests (lab/run,
// e2e-smc), against a live SMC-R connection, where lab/e2e_test.go fails on
// any skip. Two variables of that run say what to expect:
//
//	SMCNL_LIVE_WANT=smcr  an SMC-R connection is running: sockets, link
//	                      group, link, device and counters must show it
//	SMCNL_LIVE_WRITE=1    the commands that change the kernel's tables
//	                      (UEIDs, PNET, handshake limitation) run too,
//	                      each restoring what it changed

func wantSMCR() bool { return os.Getenv("SMCNL_LIVE_WANT") == "smcr" }

func liveDial(t *testing.T) *Conn {
	t.Helper()
	c, err := Dial()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("needs CONFIG_SMC with SMC_GEN_NETLINK (5.11+): %v", err)
	}
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func liveSockets(t *testing.T) []Socket {
	t.Helper()
	ss, err := Sockets()
	if errors.Is(err, ErrNotSupported) {
		t.Skipf("needs CONFIG_SMC_DIAG: %v", err)
	}
	if err != nil {
		t.Fatalf("Sockets: %v", err)
	}
	return ss
}

// activeSMCR returns the active SMC-R sockets that have a connection.
func activeSMCR(ss []Socket) []Socket {
	var out []Socket
	for _, s := range ss {
		if s.Mode == ModeSMCR && s.State == StateActive && s.Conn != nil {
			out = append(out, s)
		}
	}
	return out
}

func TestLiveSockets(t *testing.T) {
	ss := liveSockets(t)
	for _, s := range ss {
		if s.Mode == ModeSMCR && s.State == StateActive && s.LGR == nil {
			t.Errorf("active SMC-R socket without LGRINFO: %+v", s)
		}
		if s.Inode == 0 || s.Cookie == 0 {
			t.Errorf("socket without inode or cookie, the keys to find it: %+v", s)
		}
	}
	if !wantSMCR() {
		t.Logf("%d SMC sockets", len(ss))
		return
	}
	act := activeSMCR(ss)
	if len(act) == 0 {
		t.Fatalf("no active SMC-R socket with a connection among %d while one runs", len(ss))
	}
	for _, s := range act {
		l := s.LGR
		if s.Conn.Token == 0 || s.Conn.RMBESize == 0 || s.Conn.PeerRMBESize == 0 || l.IBDev == "" || l.GID == "" || l.PeerGID == "" || l.LinkID == 0 {
			t.Errorf("active SMC-R socket lacks connection or link facts: conn %+v link %+v", s.Conn, l)
		}
		if !s.Src.IsValid() || s.Src.Port() == 0 || s.Dst.Port() == 0 {
			t.Errorf("active SMC-R socket %v -> %v: no ports", s.Src, s.Dst)
		}
	}
	t.Logf("%d SMC sockets, %d active SMC-R; first: %v -> %v token %#x via %s", len(ss), len(act), act[0].Src, act[0].Dst, act[0].Conn.Token, act[0].LGR.IBDev)
}

// TestLiveCursorsMove reads the running connection twice: the cursors of a
// connection that carries pings advance (the lab's ping runs for far longer
// than this test waits; the wait is a bound, not a measurement).
func TestLiveCursorsMove(t *testing.T) {
	if !wantSMCR() {
		t.Skip("needs a running SMC-R connection (the lab sets SMCNL_LIVE_WANT=smcr)")
	}
	key := func(s Socket) string {
		c := s.Conn
		return c.TxProd.String() + " " + c.RxProd.String()
	}
	first := map[uint64]string{}
	for _, s := range activeSMCR(liveSockets(t)) {
		first[s.Cookie] = key(s)
	}
	if len(first) == 0 {
		t.Fatal("no active SMC-R socket")
	}
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		for _, s := range activeSMCR(liveSockets(t)) {
			if k, ok := first[s.Cookie]; ok && k != key(s) {
				t.Logf("cookie %#x: tx_prod rx_prod %s -> %s", s.Cookie, k, key(s))
				return
			}
		}
	}
	t.Errorf("no active SMC-R connection's cursors moved: %v", first)
}

// TestLiveGenl runs every read command of SMC_GEN_NETLINK. With a running
// SMC-R connection it also joins them: the socket's link is a link of a
// link group, on a device SMC lists, and the counters saw it.
func TestLiveGenl(t *testing.T) {
	c := liveDial(t)
	si, err := c.SysInfo()
	if err != nil {
		t.Fatalf("SysInfo: %v", err)
	}
	if si.Version < 1 {
		t.Errorf("SysInfo.Version = %d", si.Version)
	}
	lgrs, err := c.LinkGroupsR()
	if err != nil {
		t.Errorf("LinkGroupsR: %v", err)
	}
	if _, err := c.LinkGroupsD(); err != nil {
		t.Errorf("LinkGroupsD: %v", err)
	}
	devs, err := c.DevicesR()
	if err != nil {
		t.Errorf("DevicesR: %v", err)
	}
	if _, err := c.DevicesD(); err != nil {
		t.Errorf("DevicesD: %v", err)
	}
	st, err := c.Stats()
	if err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("Stats: %v", err)
	}
	if _, err := c.FallbackStats(); err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("FallbackStats: %v", err)
	}
	ueids, err := c.UEIDs()
	if err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("UEIDs: %v", err)
	}
	if _, err := c.SEID(); err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("SEID: %v", err)
	}
	if _, err := c.HSLimitation(); err != nil && !errors.Is(err, ErrNotSupported) {
		t.Errorf("HSLimitation: %v", err)
	}
	t.Logf("SMC v%d.%d SMC-Rv2 %v, %d SMC-R link groups, %d RoCE devices, UEIDs %q", si.Version, si.Release, si.SMCRv2, len(lgrs), len(devs), ueids)
	if !wantSMCR() {
		return
	}
	if st.SMCR.ClientV1Succ+st.SMCR.ClientV2Succ+st.SMCR.ServerV1Succ+st.SMCR.ServerV2Succ == 0 || st.SMCR.TxBytes == 0 || st.SMCR.RxBytes == 0 {
		t.Errorf("SMC-R counters saw no connection and no bytes: %+v", st.SMCR)
	}
	act := activeSMCR(liveSockets(t))
	if len(act) == 0 {
		t.Fatal("no active SMC-R socket")
	}
	l := act[0].LGR
	var g *LinkGroupR
	var link *Link
	for i := range lgrs {
		for j, k := range lgrs[i].Links {
			if lgrs[i].Role == l.Role && k.ID == l.LinkID && k.IBDev == l.IBDev && k.IBPort == l.IBPort && k.GID == l.GID && k.PeerGID == l.PeerGID {
				g, link = &lgrs[i], &lgrs[i].Links[j]
			}
		}
	}
	if link == nil {
		t.Fatalf("the socket's link %+v is in no link group: %+v", l, lgrs)
	}
	if g.Conns == 0 || link.ConnCount == 0 || link.State != LinkActive || link.UID == 0 || link.PeerUID == 0 {
		t.Errorf("link group %#x link %d: conns %d, link conns %d, state %v, uid %#x peer %#x", g.ID, link.ID, g.Conns, link.ConnCount, link.State, link.UID, link.PeerUID)
	}
	if g.V2Common != nil && g.V2Common.NegotiatedEID != "" && !slices.Contains(ueids, g.V2Common.NegotiatedEID) {
		t.Errorf("negotiated EID %q is not among the UEIDs %q", g.V2Common.NegotiatedEID, ueids)
	}
	if !slices.ContainsFunc(devs, func(d Device) bool {
		return d.IBName == l.IBDev && slices.ContainsFunc(d.Ports, func(p Port) bool { return p.Number == l.IBPort && p.LinkCount > 0 })
	}) {
		t.Errorf("device %s port %d with links is not in DevicesR: %+v", l.IBDev, l.IBPort, devs)
	}
	t.Logf("socket token %#x -> link group %#x (%v, %d conns) link %d uid %#x on %s/%d", act[0].Conn.Token, g.ID, g.Type, g.Conns, link.ID, link.UID, l.IBDev, l.IBPort)
}

func needWrite(t *testing.T) {
	t.Helper()
	if os.Getenv("SMCNL_LIVE_WRITE") != "1" {
		t.Skip("changes the kernel's SMC tables; set SMCNL_LIVE_WRITE=1 in a lab guest to run")
	}
}

// TestLiveUEID adds, removes and flushes user EIDs, then puts back those
// that were there.
func TestLiveUEID(t *testing.T) {
	needWrite(t)
	c := liveDial(t)
	before, err := c.UEIDs()
	if err != nil {
		t.Fatalf("UEIDs: %v", err)
	}
	const name = "SMCNL-TEST-UEID"
	if err := c.AddUEID(name); err != nil {
		t.Fatalf("AddUEID: %v", err)
	}
	if us, err := c.UEIDs(); err != nil || !slices.Contains(us, name) {
		t.Errorf("after AddUEID: UEIDs() = %q, %v; lacks %q", us, err, name)
	}
	if err := c.RemoveUEID(name); err != nil {
		t.Errorf("RemoveUEID: %v", err)
	}
	if us, err := c.UEIDs(); err != nil || slices.Contains(us, name) {
		t.Errorf("after RemoveUEID: UEIDs() = %q, %v", us, err)
	}
	if err := c.FlushUEIDs(); err != nil {
		t.Errorf("FlushUEIDs: %v", err)
	}
	after, err := c.UEIDs()
	for _, u := range before {
		if aerr := c.AddUEID(u); aerr != nil {
			t.Errorf("restoring UEID %q: %v", u, aerr)
		}
	}
	if err != nil || len(after) != 0 {
		t.Errorf("after FlushUEIDs: UEIDs() = %q, %v", after, err)
	}
	if us, err := c.UEIDs(); err != nil || !sameSet(us, before) {
		t.Errorf("restored UEIDs %q (%v), had %q", us, err, before)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestLiveHSLimitation flips the handshake limitation and back.
func TestLiveHSLimitation(t *testing.T) {
	needWrite(t)
	c := liveDial(t)
	was, err := c.HSLimitation()
	if err != nil {
		t.Fatalf("HSLimitation: %v", err)
	}
	defer func() {
		if err := c.SetHSLimitation(was); err != nil {
			t.Errorf("restoring handshake limitation %v: %v", was, err)
		}
	}()
	if err := c.SetHSLimitation(!was); err != nil {
		t.Fatalf("SetHSLimitation(%v): %v", !was, err)
	}
	if now, err := c.HSLimitation(); err != nil || now == was {
		t.Errorf("after SetHSLimitation(%v): %v, %v", !was, now, err)
	}
}

// TestLivePNET adds a PNET entry for lo (no RDMA device is ever bound to
// it), finds it, removes it, and flushes nothing: the lab's own entries
// stay.
func TestLivePNET(t *testing.T) {
	needWrite(t)
	p, err := DialPNET()
	if err != nil {
		t.Fatalf("DialPNET: %v", err)
	}
	defer p.Close()
	before, err := p.PNETIDs()
	if err != nil {
		t.Fatalf("PNETIDs: %v", err)
	}
	if slices.ContainsFunc(before, func(e PNETEntry) bool { return e.EthName == "lo" }) {
		t.Fatalf("lo already has a PNET ID here: %+v", before)
	}
	const id = "SMCNLTEST"
	if err := p.AddPNETID(PNETEntry{PNETID: id, EthName: "lo"}); err != nil {
		t.Fatalf("AddPNETID: %v", err)
	}
	es, err := p.PNETIDs()
	if err != nil || !slices.ContainsFunc(es, func(e PNETEntry) bool { return e.PNETID == id && e.EthName == "lo" }) {
		t.Errorf("after AddPNETID: PNETIDs() = %+v, %v", es, err)
	}
	if err := p.RemovePNETID(id); err != nil {
		t.Fatalf("RemovePNETID: %v", err)
	}
	if es, err := p.PNETIDs(); err != nil || len(es) != len(before) {
		t.Errorf("after RemovePNETID: PNETIDs() = %+v, %v; had %+v", es, err, before)
	}
}
