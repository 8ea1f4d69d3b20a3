package track

import (
	"fmt"
	"time"

	"github.com/smcscope/smcscope/decode"
)

// What was pending when the capture ended: the step the capture shows
// last, what Linux sends next and how long it waits for it. A capture cut
// in the middle of a handshake or a link's setup otherwise says nothing,
// and the person reading it cannot tell an SMC that never worked from a
// capture that stopped too early (expert.EndedPending).

const (
	// clcWait: each side waits this long for the peer's next CLC message
	// (CLC_WAIT_TIME, net/smc/smc_clc.h), then falls back to TCP.
	clcWait = 6 * time.Second
	// llcWaitFirst: the client waits this long for the server's
	// CONFIRM_LINK of a new link group's first link
	// (SMC_LLC_WAIT_FIRST_TIME, net/smc/smc_llc.h), then declines with
	// TIMEOUT_CL.
	llcWaitFirst = 5 * time.Second
	// synRetry is TCP's first SYN retransmission timeout (TCP_TIMEOUT_INIT,
	// include/net/tcp.h).
	synRetry = time.Second
)

// pendingStep is a step that was pending when the capture ended.
type pendingStep struct {
	last  string        // the last step the capture shows
	at    int64         // its time (Unix ns)
	next  string        // what comes next
	wait  time.Duration // how long Linux waits for it
	after string        // what Linux does when the wait is over
}

// pendingAtEnd is the handshake step c waited for when the capture ended
// (l is its link, or nil); ok is false for a connection whose handshake
// was decided (SMC, fallback, failed), that TCP ended, or that was joined
// mid-stream.
func (c *Conn) pendingAtEnd(l *Link) (p pendingStep, ok bool) {
	if c.Outcome != OutcomePending || c.Inferred || c.clcUncaptured {
		return p, false // a handshake the capture missed bytes of says so (roce.rc.not_captured)
	}
	for d := range c.Flow {
		if c.Flow[d].FIN || c.Flow[d].RST {
			return p, false
		}
	}
	ns := func(t time.Time) int64 {
		if t.IsZero() {
			return c.lastNS
		}
		return t.UnixNano()
	}
	last := decode.CLCType(0)
	if n := len(c.CLCTypes); n > 0 {
		last = decode.CLCType(c.CLCTypes[n-1])
	}
	if c.AwaitingLink && l != nil && l.State == LinkConfirming {
		if q := l.llcPend[DirS2C][0]; q.frame != 0 && q.typ.Base() == decode.LLCConfirmLink {
			return pendingStep{fmt.Sprintf("the server's %s req (frame %d)", q.typ, q.frame), q.ns, "the client's CONFIRM_LINK response",
				llcWait, fmt.Sprintf("the server sends a CLC Decline %#08x TIMEOUT_CL and both fall back to TCP", uint32(decode.DeclineTimeoutCL))}, true
		}
	}
	switch {
	case c.AwaitingLink && c.FirstContact:
		return pendingStep{"CLC Confirm", ns(c.TConfirm), "the server's CONFIRM_LINK request over RoCE, on the new link group's first link",
			llcWaitFirst, fmt.Sprintf("the client sends a CLC Decline %#08x TIMEOUT_CL and both fall back to TCP", uint32(decode.DeclineTimeoutCL))}, true
	case c.AwaitingLink:
		return pendingStep{"CLC Confirm", ns(c.TConfirm), "traffic on the link group's link (its first link's CONFIRM_LINK)",
			llcWaitFirst, "the connection falls back to TCP"}, true
	case last == decode.CLCTypeProposal:
		return pendingStep{"CLC Proposal", ns(c.TProposal), "the server's CLC Accept or Decline",
			clcWait, "the client falls back to TCP"}, true
	case last == decode.CLCTypeAccept:
		return pendingStep{"CLC Accept", ns(c.TAccept), "the client's CLC Confirm or Decline",
			clcWait, "the server falls back to TCP"}, true
	case last != 0:
		return p, false
	case c.SeenSYNACK && c.offeredSMC() && c.OptionSYNACK:
		return pendingStep{"SYN-ACK with the SMC option", c.lastNS, "the client's CLC Proposal",
			clcWait, "the server falls back to TCP"}, true
	case c.SeenSYN && !c.SeenSYNACK && c.OptionSYN:
		return pendingStep{"SYN with the SMC option", c.lastNS, "the server's SYN-ACK",
			synRetry, "the client sends the SYN again"}, true
	}
	return p, false
}

// text says what p was and how long the capture went on after it.
func (p pendingStep) text(end int64) string {
	after := time.Duration(end - p.at)
	s := fmt.Sprintf("last seen: %s; the capture ended %s later; next expected: %s; Linux waits %g s for it, then %s",
		p.last, fmtDur(after), p.next, p.wait.Seconds(), p.after)
	if after >= p.wait {
		s += " (that is not in the capture either)"
	}
	return s
}

// llcPendingAtEnd is the text of l's LLC request that waited for its
// response when the capture ended, shorter than Linux waits, or "".
func (l *Link) llcPendingAtEnd(end int64) (frame int, at int64, text string) {
	if l.oneWay() {
		return 0, 0, "" // the responses' side is not in the capture
	}
	for d := range l.llcPend {
		for _, p := range l.llcPend[d] {
			if p.frame == 0 || end-p.ns >= int64(llcWait) {
				continue
			}
			if l.State == LinkConfirming && p.typ.Base() == decode.LLCConfirmLink && len(l.Conns) > 0 {
				continue // its connections say it (Conn.pendingAtEnd)
			}
			step := pendingStep{p.typ.String() + fmt.Sprintf(" req (frame %d)", p.frame), p.ns, "its response", llcWait,
				"the requester gives up the flow (for TEST_LINK and the first link: takes the link down)"}
			return p.frame, p.ns, step.text(end)
		}
	}
	return 0, 0, ""
}

// addedUnconfirmed reports whether l was added to its group and waited
// longer than Linux waits for its CONFIRM_LINK exchange (by now, or by its
// deletion) without it: the server's wait times out and the link goes
// (smc_llc_srv_conf_link, net/smc/smc_llc.c). A link deleted or its group
// ended sooner was not given the time; one the capture missed requests
// of may have been confirmed out of its sight.
func (l *Link) addedUnconfirmed(now int64) bool {
	if !l.added || l.wasUp || l.uncaptured || l.State == LinkRejected || l.oneWay() {
		// (oneWay: the side that accepts or rejects is not in the capture.)
		return false
	}
	until := now
	if l.State == LinkDeleted && l.endNS != 0 {
		until = l.endNS
	}
	return until-l.Start.UnixNano() >= int64(llcWait)
}

// addPendingAtEnd is the text of a link added to its group whose
// CONFIRM_LINK exchange had not finished when the capture ended, shorter
// than Linux waits for it, or "".
func (l *Link) addPendingAtEnd(end int64) string {
	if (l.State != LinkAdding && l.State != LinkAdded) || end-l.Start.UnixNano() >= int64(llcWait) || l.oneWay() {
		return ""
	}
	step := pendingStep{"ADD_LINK " + map[bool]string{true: "accepted", false: "request"}[l.State == LinkAdded], l.Start.UnixNano(),
		"the CONFIRM_LINK exchange on the new link", llcWait, "the group goes on without the link (DELETE_LINK)"}
	return step.text(end)
}

// fmtDur writes a duration as smcscope's details do: milliseconds below
// a second.
func fmtDur(d time.Duration) string {
	if d < time.Second {
		return msText(d.Nanoseconds())
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}
