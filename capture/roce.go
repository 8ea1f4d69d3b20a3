package capture

import (
	"encoding/binary"
	"errors"

	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/decode"
)

// SMCLayers are the RoCE and SMC layers of a frame, embedded in Frame so
// that f.BTH, f.CDC, f.CLC read naturally. Pointers are nil when the layer
// is absent from the frame.
type SMCLayers struct {
	GRH   *decode.GRH
	BTH   *decode.BTH
	RETH  *decode.RETH
	AETH  *decode.AETH
	ImmDt *decode.ImmDt
	IETH  *decode.IETH
	DETH  *decode.DETH
	LLC   *decode.LLC
	CDC   *decode.CDC
	// RWWI is the immediate of an RDMA WRITE with Immediate on a queue
	// pair known to be an SMC-R link: ANCK's write-with-immediate.
	RWWI *decode.RWWI
	// Dump is the header of a frame of ANCK's SMC dump device (its CDC, if
	// it carries one, is in CDC).
	Dump *decode.DumpHdr
	// CLC holds the CLC messages this frame completed in its TCP stream
	// (reassembled across segments; several when one segment carries more).
	CLC []*decode.CLC

	clcPool []*decode.CLC // reused message structs behind CLC
}

func (s *SMCLayers) reset() {
	s.GRH, s.BTH, s.RETH, s.AETH, s.ImmDt, s.IETH, s.DETH, s.LLC, s.CDC = nil, nil, nil, nil, nil, nil, nil, nil, nil
	s.RWWI, s.Dump = nil, nil
	s.CLC = s.CLC[:0]
}

// roceLayers owns the decoder's RoCE/SMC layer structs.
type roceLayers struct {
	grh   decode.GRH
	bth   decode.BTH
	reth  decode.RETH
	aeth  decode.AETH
	imm   decode.ImmDt
	ieth  decode.IETH
	deth  decode.DETH
	llc   decode.LLC
	cdc   decode.CDC
	rwwi  decode.RWWI
	noICR bool // skip the ICRC check
	// matched: the frame's ICRC is known to match (checked by the Reader
	// that read it into a Batch), so the check gives that verdict
	// without computing it again.
	matched bool
	icrc    decode.ICRC
	// asSent holds a RoCEv2 packet as sent for its ICRC (sentIPv4).
	asSent []byte
}

func (r *roceLayers) attach(t gopacket.LayerType, f *Frame) {
	switch t {
	case decode.LayerTypeGRH:
		f.GRH = &r.grh
	case decode.LayerTypeBTH:
		f.BTH = &r.bth
	case decode.LayerTypeRETH:
		f.RETH = &r.reth
	case decode.LayerTypeAETH:
		f.AETH = &r.aeth
	case decode.LayerTypeImmDt:
		f.ImmDt = &r.imm
	case decode.LayerTypeIETH:
		f.IETH = &r.ieth
	case decode.LayerTypeDETH:
		f.DETH = &r.deth
	case decode.LayerTypeLLC:
		f.LLC = &r.llc
	case decode.LayerTypeCDC:
		f.CDC = &r.cdc
	}
}

// checkICRC recomputes the invariant CRC of a complete RoCE packet. The
// network header is found by capacity arithmetic: every layer's Contents is
// a subslice of f.Data, so this costs no copy.
func (r *roceLayers) checkICRC(f *Frame) {
	if r.noICR || f.Cut || f.Truncated {
		return
	}
	var (
		want uint32
		err  error
	)
	var ip []byte // an IPv4 header, whose checksum the ICRC leaves out
	switch {
	case r.matched && (f.GRH != nil || f.IPv4 != nil || f.IPv6 != nil):
		want = f.BTH.ICRC
	case f.GRH != nil:
		want, err = r.icrc.RoCEv1(f.Data[cap(f.Data)-cap(f.GRH.Contents):])
	case f.IPv4 != nil:
		ip = f.Data[cap(f.Data)-cap(f.IPv4.Contents):]
		if sent := r.sentIPv4(ip, f.IPv4.IHL); sent != nil {
			want, err = r.icrc.RoCEv2(sent)
			ip = ip[:20] // IPv4HeaderSumOK over the plain header's bytes held
			break
		}
		want, err = r.icrc.RoCEv2(ip)
	case f.IPv6 != nil:
		want, err = r.icrc.RoCEv2(f.Data[cap(f.Data)-cap(f.IPv6.Contents):])
	default:
		return
	}
	if err != nil && !errors.Is(err, decode.ErrBadICRC) {
		return // not computable (length fields disagree): not a verdict
	}
	f.ICRC = icrcStatus(ip, f.BTH.ICRC, want, err)
}

// sentIPv4 is the RoCEv2 packet at ip (an IPv4 header on) as it was sent
// where the decoder read its header otherwise than the capture holds it,
// nil elsewhere: a version and header length byte it read as the plain
// header's, its checksum verifying so (versionIHLDamaged, ihl the header
// length read), or a total length of 0, which layers.IPv4 reads as the
// frame's rest (a segmentation offload's convention; no RNIC sends one)
// or one the capture damaged to claim more (longLengthDamaged), in a plain
// header (RoCEv2 carries no IPv4 options).
// The ICRC covers both fields; the header's checksum over the bytes held
// (icrcStatus) then says the copy is damaged, as for a damaged TTL.
func (r *roceLayers) sentIPv4(ip []byte, ihl uint8) []byte {
	mendVersion := ip[0] != 0x45 && ihl == 5
	mendLength := ihl == 5 && len(ip) >= 20 && len(ip) <= 0xFFFF && (ip[2]|ip[3] == 0 || longLengthDamaged(ip))
	if !mendVersion && !mendLength {
		return nil
	}
	r.asSent = append(r.asSent[:0], ip...)
	if mendVersion {
		r.asSent[0] = 0x45
	}
	if mendLength {
		binary.BigEndian.PutUint16(r.asSent[2:4], uint16(len(ip)))
	}
	return r.asSent
}

// appendRoCEFields adds the fields of every RoCE/SMC layer of the frame
// and of its CLC messages, in wire order.
func appendRoCEFields(r *decode.Record, f *Frame) {
	g := f.demand
	if f.GRH != nil && g&gGRH != 0 {
		f.GRH.AppendFields(r)
	}
	if f.BTH != nil && g&gBTH != 0 {
		f.BTH.AppendFields(r)
	}
	if f.DETH != nil && g&gDETH != 0 {
		f.DETH.AppendFields(r)
	}
	if f.RETH != nil && g&gRETH != 0 {
		f.RETH.AppendFields(r)
	}
	if f.AETH != nil && g&gAETH != 0 {
		f.AETH.AppendFields(r)
	}
	if f.ImmDt != nil && g&gImmDt != 0 {
		f.ImmDt.AppendFields(r)
	}
	if f.RWWI != nil && g&gRWWI != 0 {
		f.RWWI.AppendFields(r)
	}
	if f.IETH != nil && g&gIETH != 0 {
		f.IETH.AppendFields(r)
	}
	if f.ICRC.Checked && g&gICRC != 0 {
		decode.AppendICRCField(r, f.ICRC.OK || f.ICRC.IPSumBad) // the ICRC's own verdict
	}
	if f.LLC != nil && g&gLLC != 0 {
		f.LLC.AppendFields(r)
	}
	if f.Dump != nil && g&gDump != 0 {
		f.Dump.AppendFields(r)
	}
	if f.CDC != nil && g&gCDC != 0 {
		f.CDC.AppendFields(r)
	}
	for i := 0; i < len(f.CLC) && g&gCLC != 0; i++ {
		f.CLC[i].AppendFields(r)
	}
}

// decodeCLCs decodes the messages the reassembler completed in this frame.
// A message that fails to decode is reported in CLCErr (the frame's
// error, what a kernel of today refuses); if its header frames it, it is
// also in CLC as far as it decodes (decode.CLC.DecodePartial, Malformed
// set), so that its fields stay visible. The queue pairs of a valid SMC-R
// Accept or Confirm join qps; a refused one sets up no queue pair.
func decodeCLCs(f *Frame, qps *smcQPs) {
	for j, raw := range f.clcRaw {
		i := len(f.CLC)
		if i == len(f.clcPool) {
			f.clcPool = append(f.clcPool, new(decode.CLC))
		}
		c := f.clcPool[i]
		var ok bool
		var err error
		if l, _ := decode.CLCMessageLength(raw); l > len(raw) {
			// The start of a message the snap length cut (clcStream).
			ok, err = c.DecodeCut(raw)
		} else {
			ok, err = c.DecodePartial(raw)
		}
		c.ANCK = f.clcRawANCK[j]
		if err != nil {
			f.CLCErr = append(f.CLCErr, err)
		}
		if !ok {
			continue
		}
		f.CLC = append(f.CLC, c)
		f.CLCInside = append(f.CLCInside, f.clcRawInside[j])
		if err == nil {
			qps.learnCLC(c)
		}
	}
}

// layer returns the decoder's layer for typ, or nil when typ is not one of
// the RoCE/SMC layers or lies below depth.
func (r *roceLayers) layer(typ gopacket.LayerType, depth Depth) gopacket.DecodingLayer {
	switch typ {
	case decode.LayerTypeGRH:
		return &r.grh
	case decode.LayerTypeRETH:
		return &r.reth
	case decode.LayerTypeAETH:
		return &r.aeth
	case decode.LayerTypeImmDt:
		return &r.imm
	case decode.LayerTypeIETH:
		return &r.ieth
	case decode.LayerTypeDETH:
		return &r.deth
	}
	if depth >= DepthTransport {
		return nil
	}
	switch typ {
	case decode.LayerTypeLLC:
		return &r.llc
	case decode.LayerTypeCDC:
		return &r.cdc
	}
	return nil
}
