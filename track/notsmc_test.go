package track

import (
	"path/filepath"
	"testing"
)

// TestNotSMC: RDMA traffic that is not SMC (perftest, NCCL, rdma_cm over
// rxe) and TCP with other experimental options (TFO, AccECN) must create no
// connection or link, and every frame must still be counted.
func TestNotSMC(t *testing.T) {
	var files []string
	for _, pat := range []string{"linlinw5_rdma_ib_tutorial/*.pcap", "tcpdump_tests_negative_controls/*.pcap"} {
		m, _ := filepath.Glob(filepath.Join("../testdata/public", pat))
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d public captures", len(files))
	}
	roce := 0
	for _, name := range files {
		s := feedFile(t, name, Options{}, 0).Snapshot()
		checkAccounting(t, s.Stats)
		if len(s.Conns)+len(s.Links)+len(s.LinkGroups) != 0 {
			t.Errorf("%s: %d conns %d links %d lgrs from non-SMC traffic", filepath.Base(name), len(s.Conns), len(s.Links), len(s.LinkGroups))
		}
		if s.Stats.Unattached != s.Stats.RoCE || s.Stats.ConnAttached+s.Stats.LinkOnly != 0 {
			t.Errorf("%s: stats %+v: RoCE frames must all count as unattached", filepath.Base(name), s.Stats)
		}
		roce += s.Stats.RoCE
	}
	if roce == 0 {
		t.Error("no RoCE frame in the public captures: the test checks nothing")
	}
}
