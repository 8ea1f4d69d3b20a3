package browser

import (
	"net/netip"

	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// The capture reader decodes a SEND on a queue pair it has learned to be
// an SMC-R link as SMC "by fact", even when the payload classifier turns
// it down (a malformed LLC or CDC is then a frame.error). Index.Decode
// reads a frame with only its connection's handshake before it, and a
// frame on a link often has no connection (LLC) or one whose handshake
// does not name the queue pair (a second link, added by ADD_LINK): the
// reader would not know the queue pair and show the frame as plain RDMA.
// So the index remembers, for each frame the first pass decoded by fact,
// the frame that taught its queue pair, and Decode replays that one too.

// qpKey is a queue pair by the address packets to it carry, as the reader
// keys it (capture's roceDst: the GRH's destination GID, or the IPv4
// destination mapped to IPv6, or the IPv6 destination).
type qpKey struct {
	addr [16]byte
	qpn  uint32
}

// maxTeachers bounds the queue pairs remembered on a long capture; past
// it, frames of new queue pairs are decoded as the classifier says.
const maxTeachers = 1 << 16

// qpTeachers is the first frame that proved or announced each queue pair.
type qpTeachers struct {
	first  map[qpKey]int32
	recent [4]qpKey // a CDC stream's few queue pairs cost no map lookup
	next   int
}

func (t *qpTeachers) teach(k qpKey, n int32) {
	for _, r := range t.recent {
		if r == k {
			return
		}
	}
	t.recent[t.next], t.next = k, (t.next+1)%len(t.recent)
	if _, ok := t.first[k]; !ok && len(t.first) < maxTeachers {
		if t.first == nil {
			t.first = map[qpKey]int32{}
		}
		t.first[k] = n
	}
}

func (t *qpTeachers) announce(gid netip.Addr, qpn uint32, n int32) {
	if gid.IsValid() && qpn != 0 {
		t.teach(qpKey{gid.As16(), qpn}, n)
	}
}

// learn notes what frame n teaches about SMC-R queue pairs and returns the
// frame that taught the queue pair of a frame decoded by fact (0: none).
func (t *qpTeachers) learn(f *capture.Frame, n int32) (teacher int32) {
	for _, c := range f.CLC {
		// A refused message (Malformed, shown for its fields) sets up no
		// queue pair, as in capture.
		if (c.Type == decode.CLCTypeAccept || c.Type == decode.CLCTypeConfirm) && c.TypeV1 != decode.SMCTypeD && c.Malformed == nil {
			t.announce(c.Accept.GID, c.Accept.QPN, n)
		}
	}
	if f.Dump != nil && f.Dump.HdrFrom > 0 && int32(f.Dump.HdrFrom) != n {
		// ANCK's dump device: the frame whose CDC taught the header size.
		return int32(f.Dump.HdrFrom)
	}
	anck := f.RWWI != nil || f.CDC != nil && f.CDC.ANCK || f.LLC != nil && f.LLC.ANCK
	if f.BTH == nil || (f.LLC == nil && f.CDC == nil && !f.SMCMalformed && f.RWWI == nil) {
		return 0
	}
	k, ok := qpDst(f)
	if !ok {
		return 0
	}
	// Decoded by fact, or read as ANCK's because of what the handshake
	// that set up the queue pair agreed (capture's smcQPs flags).
	if anck || f.SMCMalformed || f.BTH.SMCType() == gopacket.LayerTypePayload {
		teacher = t.first[k]
	}
	if f.LLC != nil && f.LLC.StepCaptured() { // as capture's smcQPs
		switch f.LLC.Type.Base() {
		case decode.LLCConfirmLink:
			t.announce(f.LLC.ConfirmLink.GID, f.LLC.ConfirmLink.QPN, n)
		case decode.LLCAddLink:
			t.announce(f.LLC.AddLink.GID, f.LLC.AddLink.QPN, n)
		}
	}
	if f.LLC != nil || f.CDC != nil {
		t.teach(k, n)
	}
	return teacher
}

// qpDst is the key of the queue pair f's BTH is sent to.
func qpDst(f *capture.Frame) (qpKey, bool) {
	k := qpKey{qpn: f.BTH.DestQP}
	switch {
	case f.GRH != nil:
		k.addr = f.GRH.DGID.As16()
	case f.IPv4 != nil && f.IPv4.DstIP.To4() != nil:
		k.addr = netip.AddrFrom4([4]byte(f.IPv4.DstIP.To4())).As16()
	case f.IPv6 != nil && len(f.IPv6.DstIP) == 16:
		k.addr = [16]byte(f.IPv6.DstIP)
	default:
		return k, false
	}
	return k, true
}
