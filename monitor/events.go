package monitor

import (
	"fmt"
)

// maxEvents bounds the event log a Monitor keeps.
const maxEvents = 500

// diffEvents derives events from two consecutive snapshots, for kernels
// (or users) without tracefs: sockets that fell back, link groups created
// and deleted, links going down or up (a failover when the group keeps
// another active link), error counters starting to move.
func diffEvents(prev, cur *Snapshot) []Event {
	if prev == nil {
		return nil
	}
	t := cur.Time
	var out []Event
	add := func(kind, format string, a ...any) {
		out = append(out, Event{Time: t, Kind: kind, Source: "diff", Text: fmt.Sprintf(format, a...)})
	}
	old := make(map[string]string, len(prev.Conns)) // key -> mode
	for i := range prev.Conns {
		old[prev.Conns[i].Key] = prev.Conns[i].Mode
	}
	for i := range cur.Conns {
		c := &cur.Conns[i]
		mode, seen := old[c.Key]
		if c.Mode == "fallback" && (!seen || mode != "fallback") {
			add(EventFallback, "%s %s -> %s fell back to TCP: %s%s", c.Key, c.Src, c.Dst, reasonText(c.Fallback), peerText(c.PeerDiagnosis))
		}
		if (c.Mode == "SMC-R" || c.Mode == "SMC-D") && (!seen || mode != c.Mode) {
			add(EventSMC, "%s %s -> %s uses %s%s", c.Key, c.Src, c.Dst, c.Mode, lgrText(c.LGRID))
		}
	}
	oldG := map[string]LinkGroupRow{}
	for _, g := range prev.LinkGroups {
		oldG[g.Key] = g
	}
	curG := map[string]bool{}
	for _, g := range cur.LinkGroups {
		curG[g.Key] = true
		o, seen := oldG[g.Key]
		if !seen {
			add(EventLGRCreated, "%s link group %#x created (%s%d links)", g.Kind, g.ID, roleText(g.Role), len(g.Links))
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
		curL := map[uint8]bool{}
		for _, l := range g.Links {
			curL[l.ID] = true
			ol, had := oldL[l.ID]
			switch {
			case had && ol.Active && !l.Active:
				add(EventLinkDown, "link group %#x link %d on %s/%d went %s", g.ID, l.ID, l.IBDev, l.IBPort, l.State)
			case (!had || !ol.Active) && l.Active:
				add(EventLinkUp, "link group %#x link %d on %s/%d is %s", g.ID, l.ID, l.IBDev, l.IBPort, l.State)
			}
		}
		for _, ol := range o.Links {
			if curL[ol.ID] {
				continue
			}
			add(EventLinkDown, "link group %#x link %d on %s/%d deleted", g.ID, ol.ID, ol.IBDev, ol.IBPort)
			if active > 0 {
				add(EventFailover, "link group %#x failed over to its %d remaining active link(s)", g.ID, active)
			}
		}
	}
	for k, g := range oldG {
		if !curG[k] {
			add(EventLGRDeleted, "%s link group %#x deleted", g.Kind, g.ID)
		}
	}
	if cur.Kernel != nil && prev.Kernel != nil {
		d := (cur.Kernel.ClientHSErrors + cur.Kernel.ServerHSErrors) - (prev.Kernel.ClientHSErrors + prev.Kernel.ServerHSErrors)
		if d > 0 && d < 1<<62 {
			add(EventHandshakeErr, "%d SMC handshake error(s)", d)
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
					add(EventCounter, "%s port %d %s started moving (+%d, %s)", d.Name, p.Port, c.Name, c.Delta, c.Health)
				}
			}
		}
	}
	return out
}

func roleText(role string) string {
	if role == "" {
		return ""
	}
	return role + ", "
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

func lgrText(id uint32) string {
	if id == 0 {
		return ""
	}
	return fmt.Sprintf(" in link group %#x", id)
}

// appendEvents keeps the newest maxEvents events.
func appendEvents(log []Event, evs ...Event) []Event {
	log = append(log, evs...)
	if len(log) > maxEvents {
		log = append([]Event(nil), log[len(log)-maxEvents:]...)
	}
	return log
}
