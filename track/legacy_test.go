package track

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/internal/textcache"
)

// TestLegacyVectors: messages real kernels sent, in shapes today's kernel
// refuses or reads otherwise, and what the connection did next (issue 28,
// point 9). The captures are in testdata/legacy (README.md there says
// which kernel sent each shape).
func TestLegacyVectors(t *testing.T) {
	snap := func(t *testing.T, path string) Snapshot {
		tr := New(Options{Unshared: true})
		eachFrame(t, path, func(f *capture.Frame) { tr.Feed(f) })
		return tr.Snapshot()
	}
	checks := map[string]func(t *testing.T, s Snapshot, all map[string]bool){
		"decline-v2-28": func(t *testing.T, s Snapshot, all map[string]bool) {
			// A Decline of its time: a fallback with its code, no error.
			c := s.Conns[0]
			if c.Outcome != OutcomeFallback || c.Fallback.Cause != CauseDecline || c.Fallback.Code != uint32(decode.DeclineNoSMCRDev) {
				t.Errorf("outcome %v, fallback %+v", c.Outcome, c.Fallback)
			}
			if all["smc.malformed"] || all["smc.handshake.failed"] || !all["smc.fallback"] {
				t.Errorf("findings %v", names(all))
			}
			if n := s.Totals().Conns.Outcomes["fallback"]; n != 1 {
				t.Errorf("fallbacks %d", n)
			}
		},
		"decline-malformed": func(t *testing.T, s Snapshot, all map[string]bool) {
			// Refused by today's kernels (the error stays), but the data
			// after it says both sides fell back.
			c := s.Conns[0]
			if c.Outcome != OutcomeFallback || c.Fallback.Cause != CauseDecline || c.Fallback.Code != uint32(decode.DeclineNoSMCRDev) {
				t.Errorf("outcome %v (%s), fallback %+v", c.Outcome, c.Failure, c.Fallback)
			}
			if !all["smc.malformed"] || all["smc.handshake.failed"] || !all["smc.fallback"] {
				t.Errorf("findings %v", names(all))
			}
		},
		"proposal-v1-smcd": func(t *testing.T, s Snapshot, all map[string]bool) {
			c := s.Conns[0]
			if c.Outcome != OutcomeFallback || c.Fallback.Code != uint32(decode.DeclineNoSMCDDev) || all["smc.malformed"] {
				t.Errorf("outcome %v, fallback %+v, findings %v", c.Outcome, c.Fallback, names(all))
			}
		},
		"delete-link-reason0": func(t *testing.T, s Snapshot, all map[string]bool) {
			var events []string
			for _, l := range s.Links {
				for _, e := range l.History {
					events = append(events, e.What)
				}
			}
			h := strings.Join(events, "\n")
			if !strings.Contains(h, "req ALL link 0 reason 0x00000000 no reason given") || strings.Contains(h, "link deleted") {
				t.Errorf("history:\n%s", h)
			}
		},
	}
	for _, v := range crafted.LegacyVectors {
		t.Run(v.Name, func(t *testing.T) {
			path := v.Build(t)
			built, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			testutil.GoldenFile(t, filepath.Join("..", "testdata", "legacy", v.Name+".pcap"), built)
			all, _ := findingNames(t, path)
			check, ok := checks[v.Name]
			if !ok {
				t.Fatalf("no check for %s", v.Name)
			}
			check(t, snap(t, path), all)
			if v.Name == "proposal-v1-smcd" {
				proposalV1Fields(t, path)
			}
		})
	}
}

// proposalV1Fields: the v1 Proposal's SMC-D area shows its ISM GID and
// none of the v2 fields 5.10 put into the bytes v1 reserves.
func proposalV1Fields(t *testing.T, path string) {
	t.Helper()
	id := func(name string) decode.FieldID {
		d, ok := decode.LookupField(name)
		if !ok {
			t.Fatalf("no field %s", name)
		}
		return d.ID
	}
	seen := false
	eachFrame(t, path, func(f *capture.Frame) {
		if len(f.CLC) == 0 || f.CLC[0].Type != decode.CLCTypeProposal {
			return
		}
		seen = true
		r := f.Fields()
		if v, ok := r.First(id("smc.clc.proposal.ism_gid")); !ok || v.U != 0x0123456789abcdef {
			t.Errorf("ism_gid %v %v", v, ok)
		}
		for _, n := range []string{"smc.clc.proposal.ism_chid", "smc.clc.proposal.v2_ext_offset", "smc.clc.proposal.vendor_oui"} {
			if r.Has(id(n)) {
				t.Errorf("%s shown for a v1 Proposal", n)
			}
		}
	})
	if !seen {
		t.Fatal("no Proposal")
	}
}

// TestFillRefusedCLC: a refused Proposal whose EID count says more than
// its bytes hold (decode.CLC.DecodePartial keeps the count, not the EIDs)
// reaches the tracker without a panic and without an EID.
func TestFillRefusedCLC(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, crafted.Pingpong(t))
	d := fs[7].Data // frame 8, the CLC Proposal
	p := 14 + 20 + int(d[14+20+12]>>4)*4
	m := append([]byte(nil), d[p:]...)
	if m[4] != byte(decode.CLCTypeProposal) {
		t.Fatalf("frame 8 is no Proposal: % x", m[:8])
	}
	m[52+28] = 2 // the v2 extension (offset 28 from 52) claims 2 EIDs
	var c decode.CLC
	ok, err := c.DecodePartial(m)
	if !ok || err == nil || !c.Proposal.HasV2Ext || c.Proposal.V2Ext.EIDCount != 2 {
		t.Fatalf("DecodePartial = %v, %v, %+v", ok, err, c.Proposal.V2Ext)
	}
	var in clcIn
	var eids textcache.Cache
	fillCLC(&in, &c, &eids)
	if in.eid != "" {
		t.Errorf("eid %q from a message without its EIDs", in.eid)
	}
}
