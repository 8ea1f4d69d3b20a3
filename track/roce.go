package track

import (
	"fmt"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

func (t *Tracker) newLGR(in *input, inferred bool) *LinkGroup {
	t.nextLGR++
	if n := len(t.spareLGRs); n > 0 {
		// A folded group that nothing points to (recycle): its maps and
		// lists serve again, emptied.
		g := t.spareLGRs[n-1]
		t.spareLGRs = t.spareLGRs[:n-1]
		clear(g.tokens[0])
		clear(g.tokens[1])
		clear(g.pendingRKeys)
		clear(g.links)
		clear(g.conns)
		*g = LinkGroup{
			ID: t.nextLGR, Inferred: inferred, FirstFrame: in.number, Start: in.ts(),
			tokens: g.tokens, pendingRKeys: g.pendingRKeys, expert: g.expert[:0],
			Links: g.Links[:0], Conns: g.Conns[:0], links: g.links[:0], conns: g.conns[:0],
		}
		t.lgrs = append(t.lgrs, g)
		return g
	}
	g := &LinkGroup{
		ID: t.nextLGR, Inferred: inferred, FirstFrame: in.number, Start: in.ts(),
		tokens:       [2]map[uint32]*Conn{{}, {}},
		pendingRKeys: make(map[rkeyKey][]rkeyOther),
	}
	t.lgrs = append(t.lgrs, g)
	return g
}

func (t *Tracker) newLink(g *LinkGroup, in *input, inferred bool) *Link {
	t.nextLink++
	var l *Link
	if n := len(t.spareLinks); n > 0 {
		// A folded link that nothing points to (recycle): its history and
		// rkey maps serve again, emptied.
		l = t.spareLinks[n-1]
		t.spareLinks = t.spareLinks[:n-1]
		clear(l.hist)
		clear(l.rkeys[0])
		clear(l.rkeys[1])
		*l = Link{hist: l.hist[:0], rkeys: l.rkeys, Conns: l.Conns[:0], expert: l.expert[:0]}
	} else {
		l = &Link{}
	}
	l.ID, l.LGR, l.lgr, l.Inferred, l.FirstFrame, l.Start, l.lastNS, l.history = t.nextLink, g.ID, g, inferred, in.number, in.ts(), in.ns, &t.history
	g.links = append(g.links, l)
	g.Links = append(g.Links, l.ID)
	t.links = append(t.links, l)
	return l
}

// keyLink makes frames with wire key k resolve to direction d of l. The
// expected first PSN comes from the sender's CLC/ADD_LINK value.
func (t *Tracker) keyLink(l *Link, d Dir, k qpKey) {
	t.byQP[k] = linkRef{l, d}
	t.clearQPCache()
	l.keys[d], l.keyed[d] = k, true
	delete(t.unknownQP, k)
	if e := l.end(d); e.PSN != 0 && !l.RC[d].havePSN {
		l.RC[d].nextPSN, l.RC[d].havePSN = e.PSN, true
	}
}

// end returns the sending side of direction d.
func (l *Link) end(d Dir) *LinkEnd {
	if d == DirC2S {
		return &l.Client
	}
	return &l.Server
}

// linkByID finds the newest link of g with the given link number.
func (g *LinkGroup) linkByID(id uint8) *Link {
	for i := len(g.links) - 1; i >= 0; i-- {
		if g.links[i].LinkID == id {
			return g.links[i]
		}
	}
	return nil
}

// roce handles one RoCE packet: find the link direction by (IP src, IP
// dst, DestQP), follow the RC PSN sequence, then the SMC content.
func (t *Tracker) roce(in *input) {
	r := &in.roce
	t.stats.RoCE++
	ref, ok := t.lookupQP(&r.key)
	if !ok {
		if ref, ok = t.resolveUnknown(in, r.key); !ok {
			t.cur.unattached = true
			if r.icrcBad {
				t.raise(&t.expert, expert.BadICRC, in)
			}
			return
		}
	}
	l, d := ref.link, ref.dir
	if r.icrcBad {
		// Followed all the same: what the sender meant is still what it
		// says; the finding says that the receiving RNIC dropped it.
		t.raise(&l.expert, expert.BadICRC, in)
	}
	t.cur.setLink(l)
	t.cur.dir = d
	l.LastFrame, l.lastNS = in.number, in.ns
	rc := &l.RC[d]
	if !isRequest(r.opcode) {
		if r.hasAETH {
			t.ack(l, d, in)
		}
		return
	}
	if rc.havePSN {
		switch dd := psnDiff(r.psn, rc.nextPSN); {
		case dd < 0:
			rc.Retrans++
			t.stats.Retrans++
			t.cur.retrans = true
			t.raise(&l.expert, expert.RCRetransmission, in)
			if r.hasLLC {
				// The same message on the same PSN: the transport sent it
				// again, the peer acts on it once (llc never sees it).
				t.raiseText(&l.expert, expert.LLCRetransmitted, in, func() string { return llcName(&r.llc) })
			}
			if c := rc.connOf(r.psn); c != nil {
				t.touchConn(c, in, d)
				if t.recording(c) {
					t.note(c, in, d, "RoCE", fmt.Sprintf("retransmission PSN %#06x", r.psn))
				}
			}
			return
		case dd > 0:
			rc.PSNGaps++
			rc.PSNMissing += int(dd)
			t.cur.psnGap = int(dd)
			t.raise(&l.expert, expert.PSNGap, in)
		}
	}
	rc.havePSN, rc.nextPSN = true, (r.psn+1)&0xFFFFFF
	rc.Packets++
	rc.lastPSN = r.psn
	switch op := r.opcode; {
	case r.hasLLC:
		rc.Sends++
		rc.LLCs++
		t.stats.LLC++
		t.llc(l, d, in)
	case r.hasCDC:
		rc.Sends++
		rc.CDCs++
		t.stats.CDC++
		t.cdc(l, d, in)
	case r.malformed:
		rc.Sends++
		t.stats.Malformed++
		t.raise(&l.expert, expert.Malformed, in)
	case op >= opWriteFirst && op <= opWriteOnlyImm:
		rc.WritePkts++
		t.write(l, d, in)
	case op <= 0x05 || op == 0x16 || op == opSendOnlyInv:
		rc.Sends++
	}
	if c := t.cur.theConn(); c != nil {
		rc.remember(r.psn, c)
	}
}

func (t *Tracker) lookupQP(k *qpKey) (linkRef, bool) {
	if ref, ok := t.cachedQP(k); ok {
		return ref, true
	}
	ref, ok := t.byQP[*k]
	if ok {
		t.qpCache[t.qpNext%len(t.qpCache)] = qpCacheEntry{*k, ref}
		t.qpNext++
	}
	return ref, ok
}

// cachedQP looks k up in qpCache only.
func (t *Tracker) cachedQP(k *qpKey) (linkRef, bool) {
	for i := range t.qpCache {
		if e := &t.qpCache[i]; e.ref.link != nil && e.key.eq(k) {
			return e.ref, true
		}
	}
	return linkRef{}, false
}

// resolveUnknown handles a packet whose wire key no CLC or LLC announced:
// either it is the first packet of the unseen direction of a link built
// from traffic, or an LLC/CDC proves an SMC-R link the capture joined late.
// Other packets (ACKs, WRITEs, non-SMC RoCE) on unknown keys only count.
func (t *Tracker) resolveUnknown(in *input, key qpKey) (linkRef, bool) {
	r := &in.roce
	smc := r.hasLLC || r.hasCDC
	pair := addrPair{key.dst, key.src}
	if cands := t.halfLinks[pair]; len(cands) > 0 {
		var pick *Link
		for _, l := range cands {
			kd := l.knownDir()
			// An ACK for the last request of the known direction pairs them
			// without doubt.
			if r.hasAETH && l.RC[kd].Packets > 0 && r.psn == l.RC[kd].lastPSN {
				pick = l
			}
		}
		if pick == nil && smc {
			pick = cands[len(cands)-1]
		}
		if pick != nil {
			t.removeHalf(pair, pick)
			d := pick.knownDir().Reverse()
			e := pick.end(d.Reverse())
			e.QPN = uint32(key.qpn)
			t.keyLink(pick, d, key)
			return linkRef{pick, d}, true
		}
	}
	if !smc {
		u := t.unknownQP[key]
		if u == nil && len(t.unknownQP) < maxUnknownQPs {
			u = &unknownQP{}
			t.unknownQP[key] = u
		}
		if u != nil {
			u.frames++
			u.last = in.ns
		}
		return linkRef{}, false
	}
	g := t.newLGR(in, true)
	l := t.newLink(g, in, true)
	l.Client.Addr, l.Server.Addr, l.Server.QPN = key.src.netip(), key.dst.netip(), uint32(key.qpn)
	l.addHistory(in, textEvent("first seen mid-stream: link setup not in the capture"))
	if u := t.unknownQP[key]; u != nil {
		l.addHistory(in, histEvent{kind: LinkEventEarlier, n: u.frames})
	}
	t.keyLink(l, DirC2S, key)
	t.halfLinks[addrPair{key.src, key.dst}] = append(t.halfLinks[addrPair{key.src, key.dst}], l)
	t.stats.InferredLinks++
	return linkRef{l, DirC2S}, true
}

func (l *Link) knownDir() Dir {
	if l.keyed[DirC2S] {
		return DirC2S
	}
	return DirS2C
}

func (t *Tracker) removeHalf(p addrPair, l *Link) {
	c := t.halfLinks[p]
	for i, x := range c {
		if x == l {
			c = append(c[:i], c[i+1:]...)
			break
		}
	}
	if len(c) == 0 {
		delete(t.halfLinks, p)
	} else {
		t.halfLinks[p] = c
	}
}

// ack counts an RC acknowledgement and ties it to the connection whose
// request it acknowledges.
func (t *Tracker) ack(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	rc.Acks++
	switch (r.syndrome >> 5) & 3 {
	case 1:
		rc.RNRs++
		t.raise(&l.expert, expert.RNRNAK, in)
	case 3:
		rc.NAKs++
		if code := r.syndrome & 0x1F; int(code) < len(rc.NAKCodes) {
			rc.NAKCodes[code]++
		}
		t.raise(&l.expert, expert.NAK, in)
	}
	rev := &l.RC[d.Reverse()]
	if c := rev.connOf(r.psn); c != nil {
		t.touchConn(c, in, d)
		if t.recording(c) {
			kind := "ACK"
			switch (r.syndrome >> 5) & 3 {
			case 1:
				kind = "RNR NAK"
			case 3:
				kind = "NAK " + decode.NAKCode(r.syndrome&0x1F).String()
			}
			t.note(c, in, d, "RoCE "+kind, fmt.Sprintf("for PSN %#06x MSN %d", r.psn, r.msn))
		}
	}
}

// flip swaps client and server in a link group built from traffic alone:
// its first seen direction was taken as client->server, and an LLC request
// (only the server sends CONFIRM_LINK and ADD_LINK requests), a CLC
// handshake or another group's orientation says otherwise. All links of
// the group turn together; once the roles are known they stay.
func (t *Tracker) flip(g *LinkGroup, in *input) bool {
	if !g.Inferred || g.rolesKnown {
		return false
	}
	for _, l := range g.links {
		l.Client, l.Server = l.Server, l.Client
		l.RC[0], l.RC[1] = l.RC[1], l.RC[0]
		l.keys[0], l.keys[1] = l.keys[1], l.keys[0]
		l.keyed[0], l.keyed[1] = l.keyed[1], l.keyed[0]
		l.rkeys[0], l.rkeys[1] = l.rkeys[1], l.rkeys[0]
		l.llcPend[0], l.llcPend[1] = l.llcPend[1], l.llcPend[0]
		for d := range 2 {
			if l.keyed[d] {
				t.byQP[l.keys[d]] = linkRef{l, Dir(d)}
			}
		}
	}
	t.clearQPCache()
	g.tokens[0], g.tokens[1] = g.tokens[1], g.tokens[0]
	pending := make(map[rkeyKey][]rkeyOther, len(g.pendingRKeys))
	for k, v := range g.pendingRKeys {
		pending[rkKey(k.link, Dir(k.dir).Reverse(), k.rkey)] = v
	}
	g.pendingRKeys = pending
	g.ServerPeerID, g.ClientPeerID = g.ClientPeerID, g.ServerPeerID
	g.ServerLGRID, g.ClientLGRID = g.ClientLGRID, g.ServerLGRID
	for _, c := range g.conns {
		c.Flow[0], c.Flow[1] = c.Flow[1], c.Flow[0]
		c.tokens[0], c.tokens[1] = c.tokens[1], c.tokens[0]
		c.hasTok[0], c.hasTok[1] = c.hasTok[1], c.hasTok[0]
		c.ClientEP, c.ServerEP = c.ServerEP, c.ClientEP
		for i := range c.Timeline {
			c.Timeline[i].Dir ^= 1
		}
	}
	if l := t.cur.theLink(); l != nil && l.lgr == g {
		t.cur.dir ^= 1
	}
	for _, l := range g.links {
		l.addHistory(in, textEvent("roles identified: client and server were the other way round"))
	}
	return true
}

// settle records that g's roles are known (from an LLC request or a CLC
// handshake), so the A/B labels become client/server.
func (g *LinkGroup) settle() {
	g.rolesKnown = true
	for _, l := range g.links {
		l.Inferred = false
	}
}

// llcName names an LLC message as sent: "DELETE_LINK_V2 req".
func llcName(m *llcIn) string {
	if m.resp {
		return m.typ.String() + " resp"
	}
	return m.typ.String() + " req"
}
