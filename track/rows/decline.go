package rows

import (
	"fmt"
	"sort"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// DeclineView lists the fallbacks and counts them by reason.
type DeclineView struct {
	Fallbacks []Decline     `json:"fallbacks"`
	ByReason  []ReasonCount `json:"by_reason"` // over all fallbacks, listed and folded
	// Folded counts the fallbacks that are not listed: connections folded
	// into the totals because there were more than Options.MaxConns.
	Folded int `json:"folded,omitempty"`
}

// Decline is one connection that stayed on TCP.
type Decline struct {
	ID        int    `json:"id"`
	Client    string `json:"client"`
	Server    string `json:"server"`
	Cause     string `json:"cause"`
	By        string `json:"by"`
	Stage     string `json:"stage"`
	Code      string `json:"code,omitempty"`
	Name      string `json:"name,omitempty"`
	Meaning   string `json:"meaning"`
	OutOfSync bool   `json:"out_of_sync,omitempty"`
	Frame     int    `json:"frame"`

	// Typed facts for surfaces that draw their own text.
	Facts track.Fallback `json:"-"`
}

// ReasonCount counts fallbacks with one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// Declines returns the smc,decline view.
func Declines(s *track.Snapshot) DeclineView {
	v := DeclineView{Fallbacks: []Decline{}, ByReason: []ReasonCount{}}
	count := map[string]int{}
	for i := range s.Conns {
		c := &s.Conns[i]
		if c.Outcome != track.OutcomeFallback {
			continue
		}
		r, reason := declineRow(c)
		count[reason]++
		v.Fallbacks = append(v.Fallbacks, r)
	}
	for _, f := range s.FoldedFallbacks() {
		count[foldedReason(f)] += f.Count
		v.Folded += f.Count
	}
	for k, n := range count {
		v.ByReason = append(v.ByReason, ReasonCount{k, n})
	}
	sort.Slice(v.ByReason, func(i, j int) bool {
		a, b := v.ByReason[i], v.ByReason[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Reason < b.Reason
	})
	return v
}

// Side names the side of a connection that sent in direction d.
func Side(d track.Dir) string {
	if d == track.DirS2C {
		return "server"
	}
	return "client"
}

// declineRow is c's line of smc,decline and the reason it is counted under.
func declineRow(c *track.Conn) (Decline, string) {
	fb := &c.Fallback
	r := Decline{ID: c.ID, Client: addrString(c.Client), Server: addrString(c.Server),
		Cause: fb.Cause.String(), Stage: fb.Stage.String(), Frame: fb.Frame, OutOfSync: fb.OutOfSync, By: Side(fb.By), Facts: *fb}
	var reason string
	switch fb.Cause {
	case track.CauseDecline:
		r.Code, r.Name, r.Meaning = fmt.Sprintf("%#08x", fb.Code), fb.CodeName(), fb.CodeMeaning()
		reason = fb.CodeText() + " (" + r.By + ")"
	case track.CauseDeclineCut:
		// Who declined, and when, is in its header; its code is not in
		// the capture: absent, not 0.
		r.Meaning = fb.Cause.String()
		reason = "code not captured (" + r.By + ")"
	case track.CauseNoOptionSYNACK:
		// Same meaning as the client's local reason 0x03010000 PEERNOSMC.
		code := decode.DeclinePeerNoSMC
		r.Code, r.Name, r.Meaning = fmt.Sprintf("%#08x", uint32(code)), code.String(), "server did not answer the SMC option: "+code.Meaning()
		reason = "no SMC option on SYN-ACK (" + r.Code + " " + r.Name + " locally)"
	case track.CauseUncaptured:
		// Who declined, and when, is in the bytes the capture missed.
		r.By, r.Stage = "-", "-"
		r.Meaning, reason = fb.Cause.String(), fb.Cause.String()
	default:
		r.Meaning = fb.Cause.String()
		reason = r.Meaning
	}
	return r, reason
}

// foldedReason is the reason a folded fallback is counted under, as for a
// listed one.
func foldedReason(f track.FoldedFallback) string {
	if f.Other {
		return fmt.Sprintf("other reasons (more than %d distinct among the folded connections)", track.MaxFoldedReasons)
	}
	_, reason := declineRow(&track.Conn{Outcome: track.OutcomeFallback, Fallback: track.Fallback{Cause: f.Cause, Code: f.Code, By: f.By}})
	return reason
}
