package capture

import (
	"github.com/smcscope/smcscope/decode"
	"slices"
)

// fieldGroup is a set of layers whose fields Frame.Fields fills. Filling
// every field of every layer costs more than decoding the frame, so a
// consumer that needs a few fields (-T fields, -Y) names them and the other
// layers are skipped.
type fieldGroup uint32

const (
	gFrame fieldGroup = 1 << iota
	gEth
	gVLAN
	gIP
	gTCP
	gUDP
	gGRH
	gBTH
	gRETH
	gAETH
	gImmDt
	gIETH
	gDETH
	gICRC // roce.icrc.ok: needs the ICRC recomputed
	gLLC
	gCDC
	gCLC
	gRWWI
	gDump
	gTunnel
	gAll fieldGroup = 1<<iota - 1
)

// frameFieldSet selects frame.* fields one by one: frame.number alone is
// the usual -T fields column and the others would triple its cost.
type frameFieldSet uint8

const (
	wNumber frameFieldSet = 1 << iota
	wTime
	wLen // frame.len and frame.cap_len
	wCut
	wError
	wAllFrame frameFieldSet = 1<<iota - 1
)

func frameFieldBit(id decode.FieldID) frameFieldSet {
	switch id {
	case fFrameNumber:
		return wNumber
	case fFrameTime:
		return wTime
	case fFrameLen, fFrameCapLen:
		return wLen
	case fFrameCut:
		return wCut
	case fFrameError:
		return wError
	}
	return wAllFrame // a frame.* field registered elsewhere: keep all
}

// ownerGroups maps each field owner to the layers the frame reader must
// fill for it. Tracker owners map to gAll: the tracker reads every layer.
var ownerGroups = [decode.NumOwners]fieldGroup{
	decode.OwnerUnknown: gAll,
	decode.OwnerFrame:   gFrame, decode.OwnerTunnel: gTunnel, decode.OwnerEthernet: gEth, decode.OwnerVLAN: gVLAN,
	decode.OwnerIP: gIP, decode.OwnerTCP: gTCP, decode.OwnerUDP: gUDP,
	decode.OwnerGRH: gGRH, decode.OwnerBTH: gBTH, decode.OwnerRDETH: gBTH, decode.OwnerXRCETH: gBTH,
	decode.OwnerRETH: gRETH, decode.OwnerAETH: gAETH, decode.OwnerImmDt: gImmDt,
	decode.OwnerIETH: gIETH, decode.OwnerDETH: gDETH,
	decode.OwnerICRC:      gBTH,  // read from the trailer with the BTH
	decode.OwnerICRCCheck: gICRC, // needs the ICRC recomputed
	decode.OwnerCLC:       gCLC, decode.OwnerLLC: gLLC, decode.OwnerCDC: gCDC,
	decode.OwnerRWWI: gRWWI, decode.OwnerDump: gDump,
	decode.OwnerTrackConn: gAll, decode.OwnerTrackLGR: gAll, decode.OwnerTrackLink: gAll,
	decode.OwnerTrackRC: gAll, decode.OwnerTrack: gAll, decode.OwnerTrackExpert: gAll,
}

func groupOf(id decode.FieldID) fieldGroup { return ownerGroups[decode.Def(id).Owner] }

// FrameField reports whether Frame.Fields fills field id (as opposed to
// fields other packages, such as the tracker, add to the record).
func FrameField(id decode.FieldID) bool { return !decode.Def(id).Owner.Tracker() }

// FrameFields is ids' frame fields (FrameField), each once: what a
// direct plan (CompileDirect) of a display filter's record holds, the
// tracker adding its own.
func FrameFields(ids []decode.FieldID) []decode.FieldID {
	var out []decode.FieldID
	for _, id := range ids {
		if FrameField(id) && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// SetFieldDemand limits Frame.Fields to the layers that carry the given
// fields (nil: every field, the default). The ICRC is then recomputed only
// when roce.icrc.ok is among them.
func (r *Reader) SetFieldDemand(ids []decode.FieldID) {
	if ids == nil {
		r.frame.demand, r.frame.frameFields = gAll, wAllFrame
		r.frame.rec.WantOnly(nil)
		r.noICRC = false
		return
	}
	g, w, _ := demandOf(ids)
	r.frame.demand, r.frame.frameFields = g, w
	if w == wAllFrame || g&gAll == gAll {
		r.frame.rec.WantOnly(nil)
	} else {
		r.frame.rec.WantOnly(ids)
	}
	r.noICRC = g&gICRC == 0
}

// DemandDepth is how deep frames must be decoded for a consumer that reads
// the fields ids and nothing else (nil: every field), for Reader.SetDepth.
// A decode error is a frame.error wherever it lies, and the ICRC is only
// checked on a frame decoded whole (a truncated extension header is not a
// verdict), so those take every layer; so do the tracker's fields.
func DemandDepth(ids []decode.FieldID) Depth {
	g, w, tracker := demandOf(ids)
	if ids == nil || tracker {
		return DepthAll
	}
	switch {
	case g&(gLLC|gCDC|gICRC|gRWWI|gDump) != 0 || w&wError != 0:
		return DepthAll
	case g&(gRETH|gAETH|gImmDt|gIETH|gDETH) != 0:
		return DepthTransport
	}
	return DepthBTH
}

// SetDepth decodes frames down to depth (DepthAll, the default, decodes
// every layer), for the decoders of every link type. Only a consumer that
// reads nothing but a record's fields may go shallower (DemandDepth): the
// tracker, say, reads every layer of every frame.
func (r *Reader) SetDepth(depth Depth) {
	r.depth = depth
	r.dec.SetDepth(depth)
	r.first.SetDepth(depth)
	for _, d := range r.decs {
		if d != nil {
			d.SetDepth(depth)
		}
	}
}

// demandOf returns the layers and frame fields that Frame.Fields must fill
// for ids, and whether some of ids are the tracker's. The tracker adds its
// fields itself, from the layers it reads (its caller decodes every layer
// for it): they need no field of the frame's, nor the ICRC.
func demandOf(ids []decode.FieldID) (g fieldGroup, w frameFieldSet, tracker bool) {
	for _, id := range ids {
		if !FrameField(id) {
			tracker = true
			continue
		}
		gi := groupOf(id)
		g |= gi
		switch gi {
		case gFrame:
			w |= frameFieldBit(id)
		case gAll:
			w = wAllFrame
		}
	}
	return g, w, tracker
}
