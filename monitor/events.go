package monitor

import (
	"fmt"
	"net/netip"
	"slices"
)

// maxEvents bounds the event log a Monitor keeps.
const maxEvents = 500

// diffEvents derives events from two consecutive snapshots of the
// kernel's state, for kernels (or users) without tracefs: sockets that
// fell back, link groups created and deleted, links going down or up (a
// failover when the group keeps another active link), error counters
// starting to move. Wire rows are left out: the capture says when each
// of those happened, to the frame (readWire).
func diffEvents(prev, cur *Snapshot) []Event {
	if prev == nil {
		return nil
	}
	t := cur.Time
	var out []Event
	add := func(e Event, format string, a ...any) {
		e.Time, e.Source, e.Text = t, EventFromDiff, fmt.Sprintf(format, a...)
		out = append(out, e)
	}
	old := make(map[string]Mode, len(prev.Conns))
	for i := range prev.Conns {
		old[prev.Conns[i].Key] = prev.Conns[i].Mode
	}
	for i := range cur.Conns {
		c := &cur.Conns[i]
		if c.Source != SourceKernel {
			continue
		}
		mode, seen := old[c.Key]
		if c.Mode == ModeFallback && (!seen || mode != ModeFallback) {
			add(Event{Kind: EventFallback, Conn: c.Key}, "%s %s -> %s fell back to TCP: %s%s", c.Key, endpoint(c.Src), endpoint(c.Dst), reasonText(c.Fallback), peerText(c.PeerDiagnosis))
		}
		if c.Mode.SMC() && (!seen || mode != c.Mode) {
			add(Event{Kind: EventSMC, Conn: c.Key, LGR: c.LGRKey}, "%s %s -> %s uses %s%s", c.Key, endpoint(c.Src), endpoint(c.Dst), c.Mode, lgrText(c.LGRID))
		}
	}
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
			add(Event{Kind: EventLGRCreated, LGR: g.Key}, "%s link group %s created (%s%d links)", g.Kind, g.ID, roleText(g.Role), len(g.Links))
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
	if cur.Kernel != nil && prev.Kernel != nil {
		d := (cur.Kernel.ClientHSErrors + cur.Kernel.ServerHSErrors) - (prev.Kernel.ClientHSErrors + prev.Kernel.ServerHSErrors)
		if d > 0 && d < 1<<62 {
			add(Event{Kind: EventHandshakeErr}, "%d SMC handshake error(s)", d)
		}
	}
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
					add(Event{Kind: EventCounter}, "%s port %d %s started moving (+%d, %s)", d.Name, p.Port, c.Name, c.Delta, c.Health)
				}
			}
		}
	}
	return out
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
