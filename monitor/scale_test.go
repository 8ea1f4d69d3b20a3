package monitor_test

import (
	"testing"
	"time"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/monitor/monitortest"
)

// TestBigKernelJoins: the big kernel's groups are distinct, so a refresh
// joins every SMC-R socket to the one group over its link, and each
// group and link holds as many of the rows as the kernel counts on it:
// the scale benchmarks measure a join that does its work.
func TestBigKernelJoins(t *testing.T) {
	const n, g = 5000, 50
	clock := time.Unix(0, 0)
	m := monitor.New(monitor.Options{Kernel: monitortest.BigKernel(t, n, g), SysfsRoot: "../rdmastats/testdata/sys",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	for range 2 { // the second refresh carries the first one's rows over
		s := m.Refresh()
		if len(s.Conns) != n || len(s.LinkGroups) != g {
			t.Fatalf("%d conns, %d link groups", len(s.Conns), len(s.LinkGroups))
		}
		type linkAt struct {
			key string
			id  uint8
		}
		groups := map[string]monitor.LinkGroupRow{}
		onLink := map[linkAt]int{}
		for _, lg := range s.LinkGroups {
			groups[lg.Key] = lg
		}
		for _, c := range s.Conns {
			if c.Mode != monitor.ModeSMCR {
				t.Fatalf("%s: mode %s", c.Key, c.Mode)
			}
			lg, ok := groups[c.Link().LGRKey]
			if !ok || c.Link().LGRID != lg.ID || c.Link().LGRID == 0 {
				t.Fatalf("%s: not joined (group %s %q)", c.Key, c.Link().LGRID, c.Link().LGRKey)
			}
			joined := false
			for _, l := range lg.Links {
				joined = joined || l.ID == c.Link().LinkID && l.GID == c.Link().GID && l.PeerGID == c.Link().PeerGID && l.IBDev == c.Link().IBDev
			}
			if !joined {
				t.Fatalf("%s: joined to %s, which has no link %d %s-%s", c.Key, c.Link().LGRKey, c.Link().LinkID, c.Link().GID, c.Link().PeerGID)
			}
			onLink[linkAt{c.Link().LGRKey, c.Link().LinkID}]++
		}
		for _, lg := range s.LinkGroups {
			sum := 0
			for _, l := range lg.Links {
				if got := onLink[linkAt{lg.Key, l.ID}]; got != int(l.Conns) {
					t.Errorf("%s link %d: %d rows, the kernel counts %d", lg.Key, l.ID, got, l.Conns)
				}
				sum += int(l.Conns)
			}
			if sum != int(lg.Conns) || lg.Conns == 0 {
				t.Errorf("%s: %d conns, %d on its links", lg.Key, lg.Conns, sum)
			}
		}
		if u := s.Overview.UnlistedConns; u == nil || *u != 0 {
			t.Errorf("unlisted conns %v, want 0", u)
		}
		if s.Overview.SMCR != n || s.Overview.LinkGroups != g {
			t.Errorf("overview: %d SMC-R, %d link groups", s.Overview.SMCR, s.Overview.LinkGroups)
		}
	}
}
