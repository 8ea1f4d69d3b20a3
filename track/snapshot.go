package track

import (
	"time"

	"github.com/smcscope/smcscope/expert"
)

// Snapshot is a copy of everything the tracker knows, safe to keep and to
// read while the tracker goes on.
type Snapshot struct {
	Stats      Stats
	Conns      []Conn
	Links      []Link
	LinkGroups []LinkGroup

	folded folded // sums of what is not listed (Totals adds the rest)
	expert marks  // findings tied to no connection or link
	// carried: frames that carried a finding, by severity (Tracker.carried)
	carried [expert.Error + 1]int
}

// Snapshot copies the current state.
func (t *Tracker) Snapshot() Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snapshot()
}

func (t *Tracker) snapshot() Snapshot {
	s := Snapshot{
		Stats:      t.stats,
		Conns:      make([]Conn, len(t.conns)),
		Links:      make([]Link, len(t.links)),
		LinkGroups: make([]LinkGroup, len(t.lgrs)),
		folded:     t.folded,
		expert:     append(marks(nil), t.expert...),
		carried:    t.carried,
	}
	if t.folded.reasons != nil {
		s.folded.reasons = make(map[fallbackReason]int, len(t.folded.reasons))
		for k, v := range t.folded.reasons {
			s.folded.reasons[k] = v
		}
	}
	for i, c := range t.conns {
		x := *c
		x.CLCTypes = append([]uint8(nil), c.CLCTypes...)
		x.Timeline = append([]Event(nil), c.Timeline...)
		x.RolesUnknown = c.Inferred && (c.link == nil || c.link.Inferred)
		x.Last = time.Unix(0, c.lastNS)
		x.expert = append(marks(nil), c.expert...)
		x.lgr, x.link = nil, nil
		s.Conns[i] = x
	}
	for i, l := range t.links {
		x := *l
		x.Conns = append([]int(nil), l.Conns...)
		x.History, x.hist = nil, nil
		if len(l.hist) > 0 {
			x.History = make([]LinkEvent, len(l.hist))
			for i := range l.hist {
				x.History[i] = l.hist[i].linkEvent()
			}
		}
		for d := range x.RC {
			x.RC[d].recent, x.RC[d].curWrite, x.RC[d].pend, x.RC[d].kept = [16]psnConn{}, nil, nil, nil
		}
		x.lgr, x.conns, x.history, x.rkeys = nil, nil, nil, [2]map[uint32]rmbRef{}
		x.Last = time.Unix(0, l.lastNS)
		x.expert = append(marks(nil), l.expert...)
		s.Links[i] = x
	}
	for i, g := range t.lgrs {
		x := *g
		x.Links = append([]int(nil), g.Links...)
		x.Conns = append([]int(nil), g.Conns...)
		// Only what the views show: gone points at folded links that the
		// tracker recycles.
		x.links, x.conns, x.tokens, x.pendingRKeys, x.gone = nil, nil, [2]map[uint32]*Conn{}, nil, nil
		x.expert = append(marks(nil), g.expert...)
		s.LinkGroups[i] = x
	}
	return s
}

// Stats returns the frame counters.
func (t *Tracker) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// Conn returns a copy of the connection with tracker ID id.
func (s *Snapshot) Conn(id int) (Conn, bool) {
	for _, c := range s.Conns {
		if c.ID == id {
			return c, true
		}
	}
	return Conn{}, false
}
