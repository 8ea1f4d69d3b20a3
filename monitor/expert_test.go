package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/smcscope/smcscope/expert"
)

// TestKernelFindings: the kernel's findings come from two refreshes of
// its counters, each with its catalogue name and severity, only when the
// kernel says it (a counter rose, usage crossed 90 % of the RMBs
// allocated, an error counter moved on a port with SMC links), and once.
func TestKernelFindings(t *testing.T) {
	t0 := time.Unix(1795336000, 0)
	base := func() *Snapshot {
		return &Snapshot{Time: t0, Kernel: &KernelStats{},
			LinkGroups: []LinkGroupRow{{Key: "lgr:1", Source: SourceKernel, Kind: ModeSMCR, RMBAlloc: 1 << 20}},
			Devices: []DeviceRow{{Name: "rxe0", Ports: []PortRow{
				{Port: 1, Links: 1, Counters: []Counter{{Name: "local_ack_timeout_err"}}},
				{Port: 2, Counters: []Counter{{Name: "local_ack_timeout_err"}}},
			}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(cur *Snapshot)
		want expert.ID
	}{
		{"handshake errors", func(s *Snapshot) { s.Kernel.ClientHSErrors = 2 }, expert.HandshakeErrors},
		{"fallback burst", func(s *Snapshot) { s.Kernel.ServerFallbacks = fallbackBurst }, expert.FallbackBurst},
		{"buffers full", func(s *Snapshot) { s.Kernel.BuffersFull = 3 }, expert.BufferFull},
		{"rmb near full", func(s *Snapshot) { s.Kernel.SMCR.RxRMBUsage = ptr(uint64(1 << 20 * 95 / 100)) }, expert.BufferFull},
		{"port errors", func(s *Snapshot) { s.Devices[0].Ports[0].Counters[0].Moving = true }, expert.PortErrors},
		{"no finding: a few fallbacks", func(s *Snapshot) { s.Kernel.ServerFallbacks = fallbackBurst - 1 }, expert.None},
		{"no finding: usage below 90 %", func(s *Snapshot) { s.Kernel.SMCR.RxRMBUsage = ptr(uint64(1 << 19)) }, expert.None},
		{"no finding: usage unknown (before 6.10)", func(s *Snapshot) { s.Kernel.SMCR.RxRMBUsage = nil }, expert.None},
		{"no finding: errors on a port without SMC links", func(s *Snapshot) { s.Devices[0].Ports[1].Counters[0].Moving = true }, expert.None},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, cur := base(), base()
			cur.Time = t0.Add(time.Second)
			tc.edit(cur)
			var got []Event
			for _, e := range diffEvents(prev, cur, diffConns(prev, cur)) {
				if e.Finding != 0 {
					got = append(got, e)
				}
			}
			if tc.want == expert.None {
				if len(got) != 0 {
					t.Errorf("findings %+v, want none", got)
				}
				return
			}
			d := tc.want.Def()
			if len(got) != 1 || got[0].Finding.String() != d.Name || got[0].Severity != Severity(d.Severity) || d.Source != expert.FromKernel {
				t.Fatalf("findings %+v, want one %s (%s)", got, d.Name, d.Severity)
			}
			// The same state again: nothing new to say.
			next := base()
			tc.edit(next)
			next.Time = cur.Time.Add(time.Second)
			for _, e := range diffEvents(cur, next, diffConns(cur, next)) {
				if e.Finding != 0 {
					t.Errorf("said again on an unchanged refresh: %+v", e)
				}
			}
		})
	}
}

// TestWireFindingsCounted: smctop -r shows the capture's findings as
// expert events, once each, and counts them for smc_expert_findings_total.
func TestWireFindingsCounted(t *testing.T) {
	s := replay(t, "../samples/multilink.pcap")
	events := map[string]int{}
	for _, e := range s.Events {
		if e.Kind == EventExpert {
			events[e.Finding.String()]++
		}
	}
	counts := map[string]uint64{}
	for _, c := range s.Expert {
		counts[c.ID.String()] = c.Count
	}
	for _, want := range []string{"smc.failover", "smc.link.deleted", "roce.rc.retransmission", "smc.llc.retransmitted"} {
		if events[want] == 0 || counts[want] == 0 {
			t.Errorf("%s: %d events, count %d", want, events[want], counts[want])
		}
	}
	if events["smc.link.deleted"] != 2 { // links 2 and 3
		t.Errorf("smc.link.deleted logged %d times, want once per link", events["smc.link.deleted"])
	}
	if counts["roce.rc.retransmission"] != 42 {
		t.Errorf("roce.rc.retransmission counted %d, want the 42 frames", counts["roce.rc.retransmission"])
	}
}

func ptr[T any](v T) *T { return &v }

// TestLGRCreatedText: a group the kernel made with one link says "1 link".
func TestLGRCreatedText(t *testing.T) {
	prev, cur := &Snapshot{}, &Snapshot{LinkGroups: []LinkGroupRow{{Key: "g", Source: SourceKernel, Kind: ModeSMCR, Links: []LinkRow{{ID: 1}}}}}
	created := 0
	for _, e := range diffEvents(prev, cur, &connDiff{}) {
		if e.Kind == EventLGRCreated {
			created++
			if !strings.HasSuffix(e.Text, "(1 link)") {
				t.Errorf("event %q, want it to end (1 link)", e.Text)
			}
		}
	}
	if created != 1 {
		t.Errorf("%d link groups created, want 1", created)
	}
}
