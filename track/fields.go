package track

import (
	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// Tracker fields for -T fields, -V and -Y. They describe what the tracker
// knew when the frame went by (one pass): an early frame of a connection
// has outcome "pending" even if the connection later fell back.
var (
	fConnID       = decode.Field(decode.OwnerTrackConn, "smc.conn.id", decode.KindUint, "tracker connection number of this frame (smc,conns)")
	fConnDir      = decode.Field(decode.OwnerTrackConn, "smc.conn.dir", decode.KindString, "direction of this frame in its connection or link: C->S or S->C (A->B/B->A when roles are unknown)")
	fConnOutcome  = decode.Field(decode.OwnerTrackConn, "smc.conn.outcome", decode.KindUint, "connection outcome so far: 0 pending, 1 SMC-R, 2 SMC-D, 3 fallback, 4 unknown (joined mid-stream), 5 failed (no SMC, no fallback)", decode.Enum(outcomeEnum))
	fConnFallback = decode.Field(decode.OwnerTrackConn, "smc.conn.fallback.reason", decode.KindUint, "decline code of the connection's fallback (0x03010000 when the SYN-ACK lacked the SMC option)", decode.Hex(), decode.Enum(declineEnum))
	fConnInferred = decode.Field(decode.OwnerTrackConn, "smc.conn.inferred", decode.KindBool, "connection was built from CDCs alone (its handshake is not in the capture)")
	fConnBytes    = decode.Field(decode.OwnerTrackConn, "smc.conn.bytes", decode.KindUint, "bytes produced so far in this frame's direction (from CDC producer cursors)")
	fConnCDCs     = decode.Field(decode.OwnerTrackConn, "smc.conn.cdcs", decode.KindUint, "CDCs so far in this frame's direction")
	fCDCBytes     = decode.Field(decode.OwnerTrackConn, "smc.conn.cdc_bytes", decode.KindUint, "bytes this CDC's producer cursor advanced (wrap-aware)")
	fLGRID        = decode.Field(decode.OwnerTrackLGR, "smc.lgr.id", decode.KindUint, "tracker link-group number of this frame (smc,lgr)")
	fLinkID       = decode.Field(decode.OwnerTrackLink, "smc.link.id", decode.KindUint, "tracker link number of this frame (smc,links)")
	fLinkNum      = decode.Field(decode.OwnerTrackLink, "smc.link.num", decode.KindUint, "link number on the wire (LLC link ID) of this frame's link")
	fLinkState    = decode.Field(decode.OwnerTrackLink, "smc.link.state", decode.KindUint, "state of this frame's link after it", decode.Enum(linkStateEnum))
	fRetrans      = decode.Field(decode.OwnerTrackRC, "smc.rc.retrans", decode.KindBool, "RC request packet with a PSN seen before (retransmission)")
	fPSNGap       = decode.Field(decode.OwnerTrackRC, "smc.rc.psn_gap", decode.KindUint, "packets missing before this one: its PSN jumped ahead by this much")
	fOutOfSeq     = decode.Field(decode.OwnerTrackRC, "smc.rc.out_of_seq", decode.KindBool, "RC request packet ahead of the PSN its responder expects, as far as the capture showed when it went by: the responder drops it (it NAKs the first of a run, PSN sequence error) and the requester sends it again; unless a later ACK shows that the capture only missed the PSNs before it (smc.rc.not_captured)")
	fNotCaptured  = decode.Field(decode.OwnerTrackRC, "smc.rc.not_captured", decode.KindUint, "request PSNs the capture never showed that the responder took, as this frame tells: an ACK or NAK that covers them, or a request so far past them that the requester cannot have gone back; the capture point missed them, the network did not lose them")
	fOutOfOrder   = decode.Field(decode.OwnerTrackRC, "smc.rc.out_of_order", decode.KindBool, "RC request packet first seen after later PSNs of its direction: lost before the capture point and sent again, or overtaken")
	fStreamOffset = decode.Field(decode.OwnerTrackConn, "smc.stream.offset", decode.KindUint, "stream offset of this RDMA WRITE packet's first application byte: bytes the sender wrote in this direction before it (counted from the first CDC seen for a connection joined mid-stream)")
	fStreamLen    = decode.Field(decode.OwnerTrackConn, "smc.stream.len", decode.KindUint, "application bytes this RDMA WRITE packet carries into its connection's stream")
	fStream       = decode.Field(decode.OwnerTrackConn, "smc.stream", decode.KindBytes, "the application bytes this RDMA WRITE packet carries")
	fUnattached   = decode.Field(decode.OwnerTrack, "smc.track.unattached", decode.KindBool, "RoCE frame the tracker could not tie to a connection when it went by")
)

func outcomeEnum(u uint64) string {
	if u > uint64(OutcomeFailed) {
		return ""
	}
	return Outcome(u).String()
}

func declineEnum(u uint64) string {
	if u > 0xFFFFFFFF {
		return ""
	}
	return decode.DeclineCode(u).EnumLabel()
}

func linkStateEnum(u uint64) string {
	if u > uint64(LinkDeleted) {
		return ""
	}
	return LinkState(u).String()
}

// AppendFields adds the tracker's fields for f, which must be the frame
// last passed to Feed (call it right after Feed, before the next frame).
func (t *Tracker) AppendFields(f *capture.Frame, r *decode.Record) {
	if !t.opts.Unshared {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if f == nil {
		return
	}
	a := &t.cur
	if fa := &t.fastCur; fa.frame == f.Number && fa.frame != 0 {
		fast := fa.attribution()
		a = &fast
		a.placed, a.rmbeAt = fastPlaced(a, f)
	} else if a.frame != f.Number {
		return
	}
	if a.unattached {
		r.AddBool(fUnattached, true)
	}
	if c := a.theConn(); c != nil {
		r.AddUint(fConnID, uint64(c.ID))
		r.AddString(fConnDir, dirName(a.dir, c.Inferred && (c.link == nil || c.link.Inferred)))
		r.AddUint(fConnOutcome, uint64(c.Outcome))
		switch {
		case c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseDecline:
			r.AddUint(fConnFallback, uint64(c.Fallback.Code))
		case c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseNoOptionSYNACK:
			r.AddUint(fConnFallback, uint64(decode.DeclinePeerNoSMC))
		}
		if c.Inferred {
			r.AddBool(fConnInferred, true)
		}
		fl := &c.Flow[a.dir]
		r.AddUint(fConnBytes, fl.Bytes)
		r.AddUint(fConnCDCs, uint64(fl.CDCs))
		if c.LGR != 0 && !a.hasLink {
			r.AddUint(fLGRID, uint64(c.LGR))
		}
		if a.placed {
			appendStream(r, c, a, f)
		}
	} else if l := a.theLink(); l != nil {
		r.AddString(fConnDir, dirName(a.dir, l.Inferred))
	}
	if a.hasCDC {
		r.AddUint(fCDCBytes, a.cdcBytes)
	}
	if l := a.theLink(); l != nil {
		r.AddUint(fLGRID, uint64(l.LGR))
		r.AddUint(fLinkID, uint64(l.ID))
		if l.LinkID != 0 {
			r.AddUint(fLinkNum, uint64(l.LinkID))
		}
		r.AddUint(fLinkState, uint64(l.State))
	}
	if a.retrans {
		r.AddBool(fRetrans, true)
	}
	if a.psnGap > 0 {
		r.AddUint(fPSNGap, uint64(a.psnGap))
	}
	if a.outOfSeq {
		r.AddBool(fOutOfSeq, true)
	}
	if a.outOfOrder {
		r.AddBool(fOutOfOrder, true)
	}
	if a.notCaptured > 0 {
		r.AddUint(fNotCaptured, uint64(a.notCaptured))
	}
	if a.expert != 0 {
		appendExpert(r, a.expert)
	}
}

func dirName(d Dir, inferred bool) string {
	if inferred {
		if d == DirC2S {
			return "A->B"
		}
		return "B->A"
	}
	return d.String()
}

// HasFindings reports whether a finding was raised on f, the frame last
// passed to Feed. smcdump's -Y reads it: a frame that carries a finding
// belongs to the SMC story even when it is not SMC itself (the TCP FIN
// that ends a handshake without its link, the data after a Decline).
func (t *Tracker) HasFindings(f *capture.Frame) bool {
	if !t.opts.Unshared {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	if f == nil {
		return false
	}
	if fa := &t.fastCur; fa.frame == f.Number && fa.frame != 0 {
		return fa.attribution().expert != 0
	}
	return t.cur.frame == f.Number && t.cur.expert != 0
}
