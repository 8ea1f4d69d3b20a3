package monitor

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/numfmt"
)

// maxEvents bounds the event log a Monitor keeps.
const maxEvents = 500

// diffEvents derives events from two consecutive snapshots of the
// kernel's state, for kernels (or users) without tracefs: sockets that
// fell back, link groups created and deleted, links going down or up (a
// failover when the group keeps another active link), error counters
// starting to move. Wire rows are left out: the capture says when each
// of those happened, to the frame (readWire). conns are the sockets'
// events, found in the pass Refresh makes over the rows (carry).
func diffEvents(prev, cur *Snapshot, conns *connDiff) []Event {
	if prev == nil {
		return nil
	}
	t := cur.Time
	out := slices.Clone(conns.changes)
	add := eventAdder(t, &out)
	oldG := map[string]LinkGroupRow{}
	for _, g := range prev.LinkGroups {
		if g.Source == SourceKernel {
			oldG[g.Key] = g
		}
	}
	curG := map[string]bool{}
	for _, g := range cur.LinkGroups {
		if g.Source != SourceKernel {
			continue
		}
		curG[g.Key] = true
		o, seen := oldG[g.Key]
		if !seen {
			add(Event{Kind: EventLGRCreated, LGR: g.Key}, "%s link group %s created (%s%s)", g.Kind, g.ID, roleText(g.Role), numfmt.Count(len(g.Links), "link"))
			continue
		}
		oldL := map[uint8]LinkRow{}
		for _, l := range o.Links {
			oldL[l.ID] = l
		}
		active := 0
		for _, l := range g.Links {
			if l.Active {
				active++
			}
		}
		lost := func(l LinkRow) {
			add(Event{Kind: EventLinkDown, LGR: g.Key, Link: l.ID}, "link group %s link %d on %s/%d deleted", g.ID, l.ID, l.IBDev, l.IBPort)
			if active > 0 {
				add(Event{Kind: EventFailover, LGR: g.Key}, "link group %s failed over to its %d remaining active link(s)", g.ID, active)
			}
		}
		curL := map[uint8]bool{}
		for _, l := range g.Links {
			curL[l.ID] = true
			ol, had := oldL[l.ID]
			switch {
			case had && ol.Active && !l.Active && l.State == LinkDeleted:
				lost(l)
			case had && ol.Active && !l.Active:
				add(Event{Kind: EventLinkDown, LGR: g.Key, Link: l.ID}, "link group %s link %d on %s/%d went %s", g.ID, l.ID, l.IBDev, l.IBPort, l.State)
			case (!had || !ol.Active) && l.Active:
				add(Event{Kind: EventLinkUp, LGR: g.Key, Link: l.ID}, "link group %s link %d on %s/%d is %s", g.ID, l.ID, l.IBDev, l.IBPort, l.State)
			}
		}
		// A link gone while the group kept two active links is not kept
		// as lost (keepLost): its going is still an event.
		for _, ol := range o.Links {
			if !curL[ol.ID] && ol.State != LinkDeleted {
				lost(ol)
			}
		}
	}
	for k, g := range oldG {
		if !curG[k] {
			add(Event{Kind: EventLGRDeleted, LGR: g.Key}, "%s link group %s deleted", g.Kind, g.ID)
		}
	}
	if k, pk := cur.Kernel, prev.Kernel; k != nil && pk != nil {
		// The kernel's own findings: its counters say them (package
		// expert's catalogue, source kernel).
		rose := func(a, b uint64) uint64 {
			if d := a - b; a > b && d < 1<<62 {
				return d
			}
			return 0
		}
		if d := rose(k.ClientHSErrors+k.ServerHSErrors, pk.ClientHSErrors+pk.ServerHSErrors); d > 0 {
			add(finding(Event{Kind: EventHandshakeErr}, expert.HandshakeErrors), "%d SMC handshake error(s)", d)
		}
		if d := rose(k.ClientFallbacks+k.ServerFallbacks, pk.ClientFallbacks+pk.ServerFallbacks); d >= fallbackBurst {
			add(finding(Event{Kind: EventExpert}, expert.FallbackBurst), "%d connections fell back to TCP since the last refresh", d)
		}
		small := func(k *KernelStats) uint64 {
			var n uint64
			for _, t := range []TechTotals{k.SMCR, k.SMCD} {
				n += t.RxBuffer.SizeSmall + t.RxBuffer.SizeSmallPeer + t.TxBuffer.SizeSmall + t.TxBuffer.SizeSmallPeer
			}
			return n
		}
		if d := rose(small(k), small(pk)); d > 0 {
			add(finding(Event{Kind: EventExpert}, expert.BufferSmall), "SMC buffers made smaller than wanted, or the peer's too small, %d time(s) since the last refresh", d)
		}
		if d := rose(k.BuffersFull, pk.BuffersFull); d > 0 {
			usage := ""
			if rx, ok := rmbUsage(k.SMCR.RxRMBUsage, k.SMCD.RxRMBUsage); ok {
				tx, _ := rmbUsage(k.SMCR.TxRMBUsage, k.SMCD.TxRMBUsage)
				usage = fmt.Sprintf(" (rx RMB usage %d B, tx %d B)", rx, tx)
			}
			add(finding(Event{Kind: EventExpert}, expert.BufferFull), "SMC buffers found full %d time(s) since the last refresh%s", d, usage)
		} else if near, use, alloc := nearFull(cur); near && !wasNearFull(prev) {
			add(finding(Event{Kind: EventExpert}, expert.BufferFull), "SMC RMBs %d B in use of %d B allocated (%.0f %%)", use, alloc, 100*float64(use)/float64(alloc))
		}
	}
	out = append(out, conns.findings...)
	oldMoving := map[string]bool{}
	for _, d := range prev.Devices {
		for _, p := range d.Ports {
			for _, c := range p.Counters {
				if c.Moving {
					oldMoving[fmt.Sprintf("%s/%d/%s", d.Name, p.Port, c.Name)] = true
				}
			}
		}
	}
	for _, d := range cur.Devices {
		for _, p := range d.Ports {
			for _, c := range p.Counters {
				if c.Moving && !oldMoving[fmt.Sprintf("%s/%d/%s", d.Name, p.Port, c.Name)] {
					e := Event{Kind: EventCounter}
					if p.Links > 0 {
						// On a port that carries SMC links: a finding.
						e = finding(e, expert.PortErrors)
					}
					add(e, "%s port %d %s started moving (+%d, %s)", d.Name, p.Port, c.Name, c.Delta, c.Health)
				}
			}
		}
	}
	return out
}

// eventAdder returns the function that adds a difference's event, at t
// and with its text, to to.
func eventAdder(t time.Time, to *[]Event) func(Event, string, ...any) {
	return func(e Event, format string, a ...any) {
		e.Time, e.Source, e.Text = t, EventFromDiff, fmt.Sprintf(format, a...)
		*to = append(*to, e)
	}
}

// connDiff holds the sockets' events of a refresh: their changes, said
// first, and their findings, said after the link groups' and counters'
// events (diffEvents).
type connDiff struct {
	changes, findings []Event
}

// add finds the events of the kernel row c, o in the refresh before (nil:
// not there); at is the refresh's time, prevTime the one before's.
func (d *connDiff) add(c, o *ConnRow, prevTime, at time.Time) {
	if c.Source != SourceKernel {
		return
	}
	connFindings(c, o, prevTime, at, eventAdder(at, &d.findings))
	var mode Mode
	seen := o != nil
	if seen {
		mode = o.Mode
	}
	if c.Mode == ModeFallback && (!seen || mode != ModeFallback) {
		eventAdder(at, &d.changes)(Event{Kind: EventFallback, Conn: c.Key}, "%s %s -> %s fell back to TCP: %s%s", c.Key, endpoint(c.Src), endpoint(c.Dst), reasonText(c.FallbackReason()), peerText(c.PeerDiagnosisReason()))
	}
	if c.Mode.SMC() && (!seen || mode != c.Mode) {
		eventAdder(at, &d.changes)(Event{Kind: EventSMC, Conn: c.Key, LGR: c.Link().LGRKey}, "%s %s -> %s uses %s%s", c.Key, endpoint(c.Src), endpoint(c.Dst), c.Mode, lgrText(c.Link().LGRID))
	}
}

// Thresholds of the kernel's socket findings: how long a socket stays in
// a closing state (expert.CloseStuck) and how long written data stands
// unread by the peer (expert.TxUnconfirmed) before each is a finding.
const (
	closeStuckAfter  = time.Minute
	unconfirmedAfter = 30 * time.Second
)

// closing reports whether s is a state of a socket between the first
// close and the end (enum smc_state, net/smc/smc.h): PEERCLOSEWAIT1 to
// PROCESSABORT. A switch, not a map: every socket of every refresh asks.
func closing(s ConnState) bool {
	switch s {
	case "PEERCLOSEWAIT1", "PEERCLOSEWAIT2", "APPCLOSEWAIT1", "APPCLOSEWAIT2",
		"APPFINCLOSEWAIT", "PEERFINCLOSEWAIT", "PEERABORTWAIT", "PROCESSABORT":
		return true
	}
	return false
}

// connFindings finds whether the kernel socket c, o in the previous
// refresh (nil: not there), crossed a threshold since: stuck in a closing
// state, or its sent data unread by the peer for long. Each is found
// once, when it crosses.
func connFindings(c, o *ConnRow, prevTime, curTime time.Time, add func(Event, string, ...any)) {
	stuck := func(c *ConnRow, at time.Time) bool {
		return c.Source == SourceKernel && closing(c.State) && !c.StateSince.IsZero() && at.Sub(c.StateSince) >= closeStuckAfter
	}
	standing := func(c *ConnRow, at time.Time) bool {
		return c.Source == SourceKernel && c.Cursors != nil && c.Cursors.TxUnconfirmed > 0 && !c.Cursors.UnconfirmedSince.IsZero() &&
			at.Sub(c.Cursors.UnconfirmedSince) >= unconfirmedAfter
	}
	if stuck(c, curTime) && (o == nil || !stuck(o, prevTime)) {
		add(finding(Event{Kind: EventExpert, Conn: c.Key}, expert.CloseStuck), "%s %s -> %s in %s (shutdown %s) for %s",
			c.Key, endpoint(c.Src), endpoint(c.Dst), c.State, c.Shutdown, curTime.Sub(c.StateSince).Round(time.Second))
	}
	if standing(c, curTime) && (o == nil || !standing(o, prevTime)) {
		add(finding(Event{Kind: EventExpert, Conn: c.Key}, expert.TxUnconfirmed), "%s %s -> %s: %d B sent, unread by the peer for %s",
			c.Key, endpoint(c.Src), endpoint(c.Dst), c.Cursors.TxUnconfirmed, curTime.Sub(c.Cursors.UnconfirmedSince).Round(time.Second))
	}
}

// fallbackBurst is how many fallbacks between two refreshes make a burst
// (expert.FallbackBurst).
const fallbackBurst = 10

// nearFullShare of the RMBs allocated in use is near full.
const nearFullShare = 0.9

// finding makes e the event of a kernel finding.
func finding(e Event, id expert.ID) Event {
	e.Finding, e.Severity = FindingID(id), Severity(id.Severity())
	return e
}

// nearFull reports whether the receive buffers in use (the kernel's
// statistics, Linux 6.10+) come near the RMBs its link groups allocated
// (SMC_NLA_LGR_R_RMB_ALLOC, 6.12+), with both numbers.
func nearFull(s *Snapshot) (bool, uint64, uint64) {
	if s == nil || s.Kernel == nil {
		return false, 0, 0
	}
	var alloc uint64
	for _, g := range s.LinkGroups {
		if g.Source == SourceKernel {
			alloc += g.RMBAlloc
		}
	}
	use, ok := rmbUsage(s.Kernel.SMCR.RxRMBUsage, s.Kernel.SMCD.RxRMBUsage)
	return ok && alloc > 0 && float64(use) >= nearFullShare*float64(alloc), use, alloc
}

// rmbUsage sums the technologies' buffer usage; ok is false when the
// kernel does not tell it (before Linux 6.10).
func rmbUsage(r, d *uint64) (uint64, bool) {
	if r == nil && d == nil {
		return 0, false
	}
	var n uint64
	for _, v := range []*uint64{r, d} {
		if v != nil {
			n += *v
		}
	}
	return n, true
}

func wasNearFull(s *Snapshot) bool {
	near, _, _ := nearFull(s)
	return near
}

func roleText(role Role) string {
	if role == "" {
		return ""
	}
	return string(role) + ", "
}

func reasonText(r Reason) string {
	if r.Code == 0 {
		return "no local reason"
	}
	return fmt.Sprintf("%#08x %s (%s)", r.Code, r.Name, r.Meaning)
}

func peerText(r Reason) string {
	if r.Code == 0 {
		return ""
	}
	return fmt.Sprintf("; peer %#08x %s (%s)", r.Code, r.Name, r.Meaning)
}

func lgrText(id LGRID) string {
	if id == 0 {
		return ""
	}
	return " in link group " + id.String()
}

// endpoint writes an address and port, "-" for none; IPv6 in brackets.
func endpoint(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return "-"
	}
	return ap.String()
}

// appendEvents adds evs in time order (events from several sources reach
// a refresh out of order) and keeps the newest maxEvents.
func appendEvents(log []Event, evs ...Event) []Event {
	for _, e := range evs {
		i := len(log)
		for i > 0 && log[i-1].Time.After(e.Time) {
			i--
		}
		log = slices.Insert(log, i, e)
	}
	if len(log) > maxEvents {
		log = append([]Event(nil), log[len(log)-maxEvents:]...)
	}
	return log
}
