package capture

import (
	"encoding/binary"
	"errors"
	"maps"
	"net/netip"

	"github.com/smcscope/smcscope/decode"
)

// A Reader remembers which queue pairs carry SMC-R, so that every SEND on
// such a queue pair is decoded as the SMC message it must be (RFC 7609: an
// SMC-R link's QPs carry only LLC and CDC messages, struct smc_llc_msg and
// struct smc_cdc_msg in Linux) and a damaged one is reported as a decode
// error in every output mode, instead of passing as opaque RDMA data
// because the payload classifier (decode.SMCPayloadType) turned it down.
//
// A queue pair is learned from what names it: the GID and QPN that a CLC
// Accept or Confirm (SMC-R) or an LLC CONFIRM_LINK or ADD_LINK announces
// for its sender, and the destination of any SEND that decoded as LLC or
// CDC. Only destinations are keyed: a SEND's BTH names the receiver's QP.

// qpKey is a queue pair by the address packets to it carry: the IPv6 (or
// IPv4-mapped) destination of RoCEv2, the destination GID of RoCEv1.
// The address is two big-endian halves, not a [16]byte: a struct with an
// array is passed in memory, and one built on the stack with narrow stores
// and read back wide stalls the CPU (store forwarding fails) on every CDC.
type qpKey struct {
	hi, lo uint64
	qpn    uint32
}

// keyAddr is the qpKey address of a 16-byte address.
func keyAddr(k *qpKey, a [16]byte) {
	k.hi, k.lo = binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(a[8:])
}

// keyIPv4 is the qpKey address of an IPv4 address (IPv4-mapped, as RoCEv2
// GIDs are).
func keyIPv4(k *qpKey, ip []byte) {
	k.hi, k.lo = 0, 0xffff<<32|uint64(binary.BigEndian.Uint32(ip))
}

// maxSMCQPs bounds the set on a long live capture; when it is full it is
// emptied and relearned from the next LLC/CDC of each link.
const maxSMCQPs = 4096

// qpFlags is what an ANCK handshake agreed for the link a queue pair
// belongs to (decode.AliOptions): upstream links have none.
type qpFlags uint8

const (
	qpCredits qpFlags = 1 << iota // receive-queue credits: CDC byte 26, ADD_LINK byte 36
	qpRWWI                        // write-with-immediate
)

type smcQPs struct {
	m map[qpKey]qpFlags
	// recent holds the last keys added or found, so that the steady
	// stream of CDCs on a few links costs a comparison, not a map lookup.
	recent      [4]qpKey
	recentFlags [4]qpFlags
	next        int
	// shared: m is also another smcQPs's (snapshot), to be copied before
	// it is written.
	shared bool
}

// snapshot returns a copy of s that goes on independently of s: the map
// is copied by whichever of the two writes to it first.
func (s *smcQPs) snapshot() smcQPs {
	s.shared = true
	return *s
}

func (s *smcQPs) lookup(k qpKey) (qpFlags, bool) {
	for i := range s.recent {
		if s.recent[i] == k {
			return s.recentFlags[i], true
		}
	}
	if fl, ok := s.m[k]; ok {
		s.remember(k, fl)
		return fl, true
	}
	return 0, false
}

// add learns k, with the ANCK flags fl added to what it had.
func (s *smcQPs) add(k qpKey, fl qpFlags) { s.addFlags(k, fl) }

// addFlags is add, returning the flags k has now.
func (s *smcQPs) addFlags(k qpKey, fl qpFlags) qpFlags {
	fl, _ = s.addKnown(k, fl)
	return fl
}

// addKnown is addFlags, also reporting whether k was known with fl.
func (s *smcQPs) addKnown(k qpKey, fl qpFlags) (qpFlags, bool) {
	if old, ok := s.lookup(k); ok && old|fl == old {
		return old, true
	} else if ok {
		fl |= old
		for i := range s.recent {
			if s.recent[i] == k {
				s.recentFlags[i] = fl
			}
		}
	}
	switch {
	case s.m == nil || len(s.m) >= maxSMCQPs:
		s.m, s.shared = make(map[qpKey]qpFlags), false
	case s.shared:
		s.m, s.shared = maps.Clone(s.m), false
	}
	s.m[k] = fl
	s.remember(k, fl)
	return fl, false
}

func (s *smcQPs) remember(k qpKey, fl qpFlags) {
	s.recent[s.next], s.recentFlags[s.next] = k, fl
	s.next = (s.next + 1) % len(s.recent)
}

func (s *smcQPs) addAnnounced(gid netip.Addr, qpn uint32, fl qpFlags) {
	if gid.IsValid() && qpn != 0 {
		k := qpKey{qpn: qpn}
		keyAddr(&k, gid.As16())
		s.add(k, fl)
	}
}

// aliFlags are the queue-pair flags of an ANCK Accept or Confirm: what its
// first-contact extension agreed (ANCK smc_lgr_create: write-with-immediate
// only in a v2 link group of at most one link).
func aliFlags(c *decode.CLC) qpFlags {
	o, ok := c.Accept.Alibaba(c)
	if !ok {
		return 0
	}
	var fl qpFlags
	if o.Credits() && c.Accept.InitCredits != 0 {
		fl |= qpCredits
	}
	if o.RWWI() && c.Version >= 2 && c.Accept.FCE.MaxLinks <= 1 {
		fl |= qpRWWI
	}
	return fl
}

// roceDst returns the key of the queue pair f's BTH is sent to.
func roceDst(f *Frame) (qpKey, bool) {
	k := qpKey{qpn: f.BTH.DestQP}
	switch {
	case f.GRH != nil:
		keyAddr(&k, f.GRH.DGID.As16())
	case f.IPv4 != nil && len(f.IPv4.DstIP) >= 4:
		keyIPv4(&k, f.IPv4.DstIP.To4())
	case f.IPv6 != nil && len(f.IPv6.DstIP) == 16:
		keyAddr(&k, [16]byte(f.IPv6.DstIP))
	default:
		return k, false
	}
	return k, true
}

// learnCLC records the queue pairs an SMC-R Accept or Confirm announces.
func (s *smcQPs) learnCLC(c *decode.CLC) {
	if (c.Type == decode.CLCTypeAccept || c.Type == decode.CLCTypeConfirm) && c.TypeV1 != decode.SMCTypeD {
		s.addAnnounced(c.Accept.GID, c.Accept.QPN, aliFlags(c))
	}
}

// roce learns from or applies the set to one RoCE frame: an LLC or CDC
// proves its destination QP is SMC-R (and CONFIRM_LINK / ADD_LINK announce
// the sender's); an RC SEND the classifier did not take, on a known QP, is
// decoded as SMC.
func (s *smcQPs) roce(r *roceLayers, f *Frame) {
	o := f.BTH.Opcode
	rwwi := o.IsWrite() && o.HasImmDt() && o.Transport() == decode.TransportRC
	if f.LLC == nil && f.CDC == nil && !rwwi && !f.UnclassifiedSend() {
		return // an ACK or a plain WRITE: nothing to learn or apply (most frames)
	}
	k, ok := roceDst(f)
	if !ok {
		return
	}
	fl, known := s.lookup(k)
	credits := fl&qpCredits != 0
	switch {
	case f.LLC != nil || f.CDC != nil:
		if f.LLC != nil && f.LLC.StepCaptured() {
			// A link a handshake of ANCK set up passes its flags to the
			// links its LLC adds (ANCK keeps them per link group). A
			// message the snap length cut before its GID and QPN
			// announces nothing.
			switch f.LLC.Type.Base() {
			case decode.LLCConfirmLink:
				s.addAnnounced(f.LLC.ConfirmLink.GID, f.LLC.ConfirmLink.QPN, fl)
			case decode.LLCAddLink:
				s.addAnnounced(f.LLC.AddLink.GID, f.LLC.AddLink.QPN, fl)
			}
		}
		if !known {
			s.add(k, 0)
		}
	case !known:
		return
	case rwwi:
		// RDMA WRITE with Immediate on an SMC-R link: no upstream kernel
		// sends one there, ANCK sends nothing else in a link group with
		// write-with-immediate.
		if imm, ok := f.BTH.Imm(); ok {
			r.rwwi = decode.ParseRWWI(imm)
			f.RWWI = &r.rwwi
		}
		return
	default:
		r.decodeSMC(f)
		f.SMCCredits = f.SMCMalformed && credits
	}
	if f.CDC != nil {
		f.CDC.ANCK = credits
	}
	if f.LLC != nil {
		f.LLC.ANCK = credits
	}
}

// UnclassifiedSend reports an RC SEND First/Only whose payload the SMC
// classifier did not take for an LLC or CDC message: on a queue pair known
// to carry SMC that is a malformed SMC message, not opaque data.
func (f *Frame) UnclassifiedSend() bool {
	if f.BTH == nil || f.LLC != nil || f.CDC != nil || f.BTH.Opcode.Transport() != decode.TransportRC {
		return false
	}
	op := f.BTH.Opcode.Op()
	return (op == decode.OpSendOnly || op == decode.OpSendFirst) && len(f.BTH.Data()) > 0
}

// decodeSMC decodes an unclassified SEND on a queue pair known to be an
// SMC-R link as the SMC message its first byte names: no guessing, and a
// message that does not decode is reported in f.Err with its field and
// offset, and flagged in f.SMCMalformed.
func (r *roceLayers) decodeSMC(f *Frame) {
	p := f.BTH.Data()
	// A message the snap length cut is decoded as far as captured.
	wire := f.BTH.DataWireLen()
	isCDC, err := decode.DecodeSMCSend(p, wire, &r.cdc, &r.llc)
	switch {
	case err != nil:
	case isCDC:
		f.CDC = &r.cdc
		f.Decoded = append(f.Decoded, decode.LayerTypeCDC)
	default:
		f.LLC = &r.llc
		f.Decoded = append(f.Decoded, decode.LayerTypeLLC)
	}
	if err != nil && f.Cut && errors.Is(err, decode.ErrTruncated) {
		// The snap length cut the message before what can be read of it,
		// the sender did not: not malformed, and nothing of it is
		// followed (tshark's "packet size limited during capture").
		err = nil
	}
	if err != nil {
		f.SMCMalformed = true
		if f.Err == nil {
			f.Err = err
		}
	}
	f.recSet = false // the record must be rebuilt with the new layer
}
