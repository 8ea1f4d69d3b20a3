package capture

import (
	"strings"

	"github.com/smcscope/smcscope/decode"
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

// groupPrefixes maps field-name prefixes to groups; the first match wins,
// so longer prefixes come first.
var groupPrefixes = []struct {
	prefix string
	g      fieldGroup
}{
	{"roce.icrc.ok", gICRC},
	{"roce.icrc", gBTH}, {"roce.bth.", gBTH}, {"roce.rdeth.", gBTH}, {"roce.xrceth.", gBTH},
	{"roce.grh.", gGRH}, {"roce.reth.", gRETH}, {"roce.aeth.", gAETH}, {"roce.immdt", gImmDt},
	{"roce.ieth.", gIETH}, {"roce.deth.", gDETH},
	{"smc.llc.", gLLC}, {"smc.cdc.", gCDC}, {"smc.clc.", gCLC},
	{"frame.", gFrame}, {"eth.", gEth}, {"vlan.", gVLAN}, {"ip.", gIP}, {"tcp.", gTCP}, {"udp.", gUDP},
}

func groupOf(name string) fieldGroup {
	for _, p := range groupPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.g
		}
	}
	return gAll // unknown owner: fill everything rather than miss it
}

// FrameField reports whether Frame.Fields fills field id (as opposed to
// fields other packages, such as the tracker, add to the record).
func FrameField(id decode.FieldID) bool { return groupOf(decode.Def(id).Name) != gAll }

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
	var (
		g fieldGroup
		w frameFieldSet
	)
	for _, id := range ids {
		gi := groupOf(decode.Def(id).Name)
		g |= gi
		switch gi {
		case gFrame:
			w |= frameFieldBit(id)
		case gAll:
			w = wAllFrame
		}
	}
	r.frame.demand, r.frame.frameFields = g, w
	if w == wAllFrame || g&gAll == gAll {
		r.frame.rec.WantOnly(nil)
	} else {
		r.frame.rec.WantOnly(ids)
	}
	r.noICRC = g&gICRC == 0
}
