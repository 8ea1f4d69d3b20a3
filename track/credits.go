package track

import (
	"fmt"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// ANCK (Alibaba Cloud Linux) gives SMC-R links credit-based flow control
// of the receive queues (smc_wr_tx_get_credit and smc_wr_tx_put_credits,
// ANCK net/smc/smc_wr.c): a side may post a SEND (LLC, CDC) or an RDMA
// WRITE with Immediate only while it holds a credit for a receive WQE of
// its peer. It starts with the peer's init_credits (CLC Accept/Confirm for
// the first link, ADD_LINK for the others), spends one per such message,
// and gets credits back in the peer's CDCs (byte 26), write-with-immediate
// immediates (the _CR opcodes) and LLC ANNOUNCE_CREDITS. The tracker keeps
// the same count from the wire, per link and direction.

// Credits is one direction's sender's count of the peer's receive-queue
// credits, as the wire shows it.
type Credits struct {
	Known    bool // the link's credits are on and their start was seen
	Init     int  // granted at the start (the peer's init_credits)
	Now      int  // held after the last frame
	Min      int  // the fewest held
	Returned int  // given back by the peer
	Spent    int  // messages that took one
	// Overdrawn counts messages sent with none held: returns the capture
	// did not show (the count is then only a lower bound) or a sender
	// that did not wait.
	Overdrawn int
	// Starved: times the sender held none until the peer returned some;
	// Longest the longest such time, LongestFrame the frame that ended it.
	Starved      int
	StarvedFor   time.Duration // all of them
	Longest      time.Duration
	LongestFrame int
	// longestAtLeast: the capture's clock stepped back within Longest,
	// a lower bound (Snapshot.Unmeasured).
	longestAtLeast bool
	zeroSince      int64 // when it reached 0 (0: it holds some)
	zeroFrame      int
	// blind counts the messages that took or gave back credits while
	// the count was not known: none since a cut CDC made it unknown,
	// and its whole copy takes the count up again (uncutCredits).
	blind int
}

// starveWarn is how long a sender may hold no credit before it is a
// finding: a round trip's wait is the mechanism working.
const starveWarn = 10 * time.Millisecond

// startCredits gives the sender of direction d the peer's init_credits.
func (l *Link) startCredits(d Dir, init uint8) {
	if init == 0 {
		return // credits off for this link (ANCK: credits_enable needs init_credits != 0)
	}
	n := int(init)
	l.Credits[d] = Credits{Known: true, Init: n, Now: n, Min: n}
}

// spendCredit follows a message of direction d that used one of the
// peer's receive WQEs.
func (t *Tracker) spendCredit(l *Link, d Dir, in *input) {
	c := &l.Credits[d]
	if !c.Known {
		c.blind++
		return
	}
	c.Spent++
	if c.Now == 0 {
		c.Overdrawn++
		return
	}
	c.Now--
	c.Min = min(c.Min, c.Now)
	if c.Now == 0 {
		c.zeroSince, c.zeroFrame = in.ns, in.number
	}
}

// returnCredits follows credits the sender of direction d gives back to
// its peer (the peer may send that many more in direction d.Reverse()).
func (t *Tracker) returnCredits(l *Link, d Dir, n uint8, in *input) {
	c := &l.Credits[d.Reverse()]
	if n == 0 {
		return
	}
	if !c.Known {
		c.blind++
		return
	}
	c.Returned += int(n)
	c.Now += int(n)
	if c.zeroSince == 0 {
		return
	}
	dur := time.Duration(in.ns - c.zeroSince)
	if dur > c.Longest {
		c.LongestFrame = in.number
	}
	t.longest(&c.Longest, &c.longestAtLeast, c.zeroSince, in.ns)
	c.zeroSince = 0
	c.Starved++
	c.StarvedFor += dur
	if dur >= starveWarn {
		t.raise(&l.expert, expert.CreditsStarved, in)
		l.addHistory(in, textEvent(fmt.Sprintf("%s held no receive-queue credit for %s (since frame %d)",
			linkSideName(l, d.Reverse()), dur.Round(time.Microsecond), c.zeroFrame)))
	}
}

// linkSideName names the sender of direction d of a link.
func linkSideName(l *Link, d Dir) string {
	switch {
	case l.Inferred && d == DirC2S:
		return "A"
	case l.Inferred:
		return "B"
	case d == DirC2S:
		return "the client"
	}
	return "the server"
}

// credits follows what a request of direction d does to the link's
// credits: a SEND First/Only or a write with immediate takes one, and
// what it carries gives some back.
func (t *Tracker) credits(l *Link, d Dir, in *input) {
	if !l.lgr.Credits {
		return
	}
	r := &in.roce
	switch op := r.opcode; {
	case op == opSendFirst || op == opSendOnly || op == opSendOnlyInv || op == opWriteOnlyImm || op == opWriteLastImm:
		t.spendCredit(l, d, in)
	default:
		return
	}
	t.creditsBack(l, d, in)
}

// creditsBack follows what a request of direction d of a link whose group
// counts credits gives back (its CDC, immediate or ANNOUNCE_CREDITS).
func (t *Tracker) creditsBack(l *Link, d Dir, in *input) {
	r := &in.roce
	switch {
	case r.hasCDC && r.cdc.anck && r.cdc.creditsCut:
		// The snap length cut what it gave back: the count is not
		// known from here on (absent is not zero), unless the CDC's
		// whole copy comes next (uncutCredits).
		c, rc := &l.Credits[d.Reverse()], &l.RC[d]
		if c.Known {
			rc.creditsWas, rc.cutPSN, rc.cut = *c, r.psn, cutCredits
		}
		c.Known = false
	case r.hasCDC && r.cdc.anck:
		t.returnCredits(l, d, r.cdc.credits, in)
	case r.hasRWWI && r.rwwi.hasCredits:
		t.returnCredits(l, d, r.rwwi.credits, in)
	case r.hasLLC && r.llc.typ == decode.LLCAnnounceCredits:
		t.returnCredits(l, d, r.llc.credits, in)
	}
}

// uncutCredits follows the credits a CDC whole gives back, of direction
// d, whose copy cut inside its credits field was followed before
// (creditsBack): the count it made unknown is taken up again where
// nothing took or gave back credits since.
func (t *Tracker) uncutCredits(l *Link, d Dir, in *input) {
	rc, c := &l.RC[d], &l.Credits[d.Reverse()]
	if c.Known || c.blind != rc.creditsWas.blind {
		return
	}
	*c = rc.creditsWas
	t.creditsBack(l, d, in)
}
