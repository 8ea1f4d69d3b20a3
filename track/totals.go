package track

import (
	"fmt"
)

// Totals count every connection, link and link group of the capture: the
// ones the views list and the ones folded into sums because there were
// more than Options.MaxConns.
type Totals struct {
	Conns      ConnTotals `json:"conns"`
	Links      LinkTotals `json:"links"`
	LinkGroups LGRTotals  `json:"link_groups"`
}

// ConnTotals sums connections.
type ConnTotals struct {
	Conns  int `json:"conns"`
	Listed int `json:"listed"`
	Folded int `json:"folded"`
	// FoldedOpen were folded before they ended (the cap was held by open
	// connections): their later frames count as TCP not tracked.
	FoldedOpen int `json:"folded_open,omitempty"`
	// FoldedIdle were folded after no frame for Options.IdleTimeout
	// (capture time) without a close: they count as ended.
	FoldedIdle int `json:"folded_idle,omitempty"`
	// Rule says which connections are kept whole, when some were folded.
	Rule     string         `json:"rule,omitempty"`
	Outcomes map[string]int `json:"outcomes"` // by Outcome.String()
	Closed   int            `json:"closed"`
	Frames   int            `json:"frames"`
	C2S      FlowTotals     `json:"c2s"`
	S2C      FlowTotals     `json:"s2c"`
}

// FlowTotals sums one direction of connections (see Flow).
type FlowTotals struct {
	CDCs       int    `json:"cdcs"`
	Bytes      uint64 `json:"bytes"`
	WriteBytes uint64 `json:"write_bytes"`
	Writes     int    `json:"writes"`
	TCPBytes   uint64 `json:"tcp_bytes"`
}

// LinkTotals sums links.
type LinkTotals struct {
	Links  int            `json:"links"`
	Listed int            `json:"listed"`
	Folded int            `json:"folded"`
	States map[string]int `json:"states"` // by LinkState.String()
	C2S    RCTotals       `json:"c2s"`
	S2C    RCTotals       `json:"s2c"`
}

// RCTotals sums one direction of links (see RC).
type RCTotals struct {
	Packets int `json:"packets"`
	Acks    int `json:"acks"`
	NAKs    int `json:"naks"`
	RNRs    int `json:"rnr_naks"`
	PSNGaps int `json:"psn_gaps"`
	Retrans int `json:"retransmissions"`
}

// LGRTotals sums link groups.
type LGRTotals struct {
	LinkGroups int `json:"link_groups"`
	Listed     int `json:"listed"`
	Folded     int `json:"folded"`
	Deleted    int `json:"deleted"`
}

// Folded reports whether anything was folded: then the views say so and
// show the totals.
func (s *Snapshot) Folded() bool {
	f := &s.folded
	return f.conns.n+f.links.n+f.linkGroups.n > 0
}

// Totals adds the listed connections, links and link groups to the folded
// sums.
func (s *Snapshot) Totals() Totals {
	f := &s.folded
	cs := f.conns
	for i := range s.Conns {
		cs.add(&s.Conns[i])
	}
	ls := f.links
	for i := range s.Links {
		ls.add(&s.Links[i])
	}
	gs := f.linkGroups
	for i := range s.LinkGroups {
		gs.add(&s.LinkGroups[i])
	}
	t := Totals{
		Conns: ConnTotals{Conns: cs.n, Listed: len(s.Conns), Folded: f.conns.n, FoldedOpen: f.conns.open,
			Outcomes: map[string]int{}, Closed: cs.closed, Frames: cs.frames, C2S: cs.flow[DirC2S], S2C: cs.flow[DirS2C]},
		Links: LinkTotals{Links: ls.n, Listed: len(s.Links), Folded: f.links.n, States: map[string]int{},
			C2S: ls.rc[DirC2S], S2C: ls.rc[DirS2C]},
		LinkGroups: LGRTotals{LinkGroups: gs.n, Listed: len(s.LinkGroups), Folded: f.linkGroups.n, Deleted: gs.deleted},
	}
	if f.conns.n > 0 {
		t.Conns.FoldedIdle = f.conns.idle
		t.Conns.Rule = fmt.Sprintf("kept whole: the newest %d connections", f.maxConns)
		if f.maxClosed < f.maxConns {
			t.Conns.Rule = fmt.Sprintf("kept whole: the newest %d connections that ended (both sides closed, or no frame for %v of capture time) and the newest %d of all", f.maxClosed, f.idleAfter, f.maxConns)
		}
	}
	for o, n := range cs.outcomes {
		if n > 0 {
			t.Conns.Outcomes[Outcome(o).String()] = n
		}
	}
	for st, n := range ls.states {
		if n > 0 {
			t.Links.States[LinkState(st).String()] = n
		}
	}
	return t
}

// OutcomeCount is one entry of Totals.Conns.Outcomes in Outcome order.
type OutcomeCount struct {
	Outcome string
	Count   int
}

// ByOutcome lists ConnTotals.Outcomes in the order of the Outcome values,
// for text.
func (c ConnTotals) ByOutcome() []OutcomeCount {
	var out []OutcomeCount
	for o := range Outcome(len(outcomeNames)) {
		if n := c.Outcomes[o.String()]; n > 0 {
			out = append(out, OutcomeCount{o.String(), n})
		}
	}
	return out
}

// StateCount is one entry of Totals.Links.States.
type StateCount struct {
	State string
	Count int
}

// ByState lists LinkTotals.States in the order of the LinkState values.
func (l LinkTotals) ByState() []StateCount {
	var out []StateCount
	for st := range LinkState(len(linkStateNames)) {
		if n := l.States[st.String()]; n > 0 {
			out = append(out, StateCount{st.String(), n})
		}
	}
	return out
}
