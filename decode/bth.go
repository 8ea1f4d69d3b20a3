package decode

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// BTHOpcode is the 8-bit InfiniBand transport opcode: the top three bits
// name the transport service (RC, UC, RD, UD, CNP, XRC), the low five the
// operation (IBTA vol. 1 table 38; Linux
// include/rdma/ib_pack.h IB_OPCODE_*).
type BTHOpcode uint8

// Transport services, the high three bits of a BTHOpcode.
const (
	TransportRC  = 0x00 // IB_OPCODE_RC, reliable connected (SMC-R uses only this)
	TransportUC  = 0x20 // IB_OPCODE_UC
	TransportRD  = 0x40 // IB_OPCODE_RD; Mellanox DC reuses this range with other headers (Wireshark: "DC")
	TransportUD  = 0x60 // IB_OPCODE_UD
	TransportCNP = 0x80 // IB_OPCODE_CNP, RoCEv2 congestion notification
	TransportXRC = 0xA0 // IB_OPCODE_XRC
)

// Operations, the low five bits of a BTHOpcode; RC values, the other
// transports reuse the same numbers.
const (
	OpSendFirst          BTHOpcode = 0x00 // IB_OPCODE_SEND_FIRST
	OpSendMiddle         BTHOpcode = 0x01 // IB_OPCODE_SEND_MIDDLE
	OpSendLast           BTHOpcode = 0x02 // IB_OPCODE_SEND_LAST
	OpSendLastImm        BTHOpcode = 0x03 // IB_OPCODE_SEND_LAST_WITH_IMMEDIATE
	OpSendOnly           BTHOpcode = 0x04 // IB_OPCODE_SEND_ONLY
	OpSendOnlyImm        BTHOpcode = 0x05 // IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE
	OpWriteFirst         BTHOpcode = 0x06 // IB_OPCODE_RDMA_WRITE_FIRST
	OpWriteMiddle        BTHOpcode = 0x07 // IB_OPCODE_RDMA_WRITE_MIDDLE
	OpWriteLast          BTHOpcode = 0x08 // IB_OPCODE_RDMA_WRITE_LAST
	OpWriteLastImm       BTHOpcode = 0x09 // IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE
	OpWriteOnly          BTHOpcode = 0x0A // IB_OPCODE_RDMA_WRITE_ONLY
	OpWriteOnlyImm       BTHOpcode = 0x0B // IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE
	OpReadRequest        BTHOpcode = 0x0C // IB_OPCODE_RDMA_READ_REQUEST
	OpReadResponseFirst  BTHOpcode = 0x0D // IB_OPCODE_RDMA_READ_RESPONSE_FIRST
	OpReadResponseMiddle BTHOpcode = 0x0E // IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE
	OpReadResponseLast   BTHOpcode = 0x0F // IB_OPCODE_RDMA_READ_RESPONSE_LAST
	OpReadResponseOnly   BTHOpcode = 0x10 // IB_OPCODE_RDMA_READ_RESPONSE_ONLY
	OpAcknowledge        BTHOpcode = 0x11 // IB_OPCODE_ACKNOWLEDGE
	OpAtomicAcknowledge  BTHOpcode = 0x12 // IB_OPCODE_ATOMIC_ACKNOWLEDGE
	OpCompareSwap        BTHOpcode = 0x13 // IB_OPCODE_COMPARE_SWAP
	OpFetchAdd           BTHOpcode = 0x14 // IB_OPCODE_FETCH_ADD
	OpResync             BTHOpcode = 0x15 // RD only (IBTA RESYNC); reserved for RC/XRC
	OpSendLastInv        BTHOpcode = 0x16 // IB_OPCODE_SEND_LAST_WITH_INVALIDATE
	OpSendOnlyInv        BTHOpcode = 0x17 // IB_OPCODE_SEND_ONLY_WITH_INVALIDATE
	OpFlush              BTHOpcode = 0x1C // IB_OPCODE_FLUSH (IBTA 1.5, rxe)
	OpAtomicWrite        BTHOpcode = 0x1D // IB_OPCODE_ATOMIC_WRITE (IBTA 1.5, rxe)
	OpCNP                BTHOpcode = 0x81 // IB_OPCODE_CNP
)

var bthOpNames = [32]string{
	0x00: "SEND First", 0x01: "SEND Middle", 0x02: "SEND Last",
	0x03: "SEND Last with Immediate", 0x04: "SEND Only", 0x05: "SEND Only with Immediate",
	0x06: "RDMA WRITE First", 0x07: "RDMA WRITE Middle", 0x08: "RDMA WRITE Last",
	0x09: "RDMA WRITE Last with Immediate", 0x0A: "RDMA WRITE Only",
	0x0B: "RDMA WRITE Only with Immediate", 0x0C: "RDMA READ Request",
	0x0D: "RDMA READ Response First", 0x0E: "RDMA READ Response Middle",
	0x0F: "RDMA READ Response Last", 0x10: "RDMA READ Response Only",
	0x11: "Acknowledge", 0x12: "Atomic Acknowledge", 0x13: "CmpSwap", 0x14: "FetchAdd",
	0x15: "RESYNC", 0x16: "SEND Last with Invalidate", 0x17: "SEND Only with Invalidate",
	0x1C: "FLUSH", 0x1D: "ATOMIC WRITE",
}

var bthTransportNames = [8]string{"RC", "UC", "RD", "UD", "CNP", "XRC", "", ""}

// Transport returns the transport bits (TransportRC ... TransportXRC).
func (o BTHOpcode) Transport() uint8 { return uint8(o) & 0xE0 }

// Op returns the operation bits, as the RC opcode with the same operation.
func (o BTHOpcode) Op() BTHOpcode { return o & 0x1F }

// Valid reports whether IBTA defines the opcode (manufacturer-specific
// 0xC0-0xFF and reserved codes are not).
func (o BTHOpcode) Valid() bool { return opcodeInfo[o].valid }

// validOf is Valid worked out from the opcode's transport and operation.
func (o BTHOpcode) validOf() bool {
	op := o.Op()
	switch o.Transport() {
	case TransportRC, TransportXRC:
		return op <= OpFetchAdd || op == OpSendLastInv || op == OpSendOnlyInv ||
			(o.Transport() == TransportRC && (op == OpFlush || op == OpAtomicWrite))
	case TransportUC:
		return op <= OpWriteOnlyImm
	case TransportRD:
		return op <= OpResync
	case TransportUD:
		return op == OpSendOnly || op == OpSendOnlyImm
	case TransportCNP:
		return o == OpCNP
	}
	return false
}

// String gives the Wireshark-like name, e.g. "RC SEND Only",
// "RC RDMA WRITE First", "RC Acknowledge", "UD SEND Only", "CNP".
func (o BTHOpcode) String() string { return opcodeStrings[o] }

// opcodeStrings is every opcode's String, made once: -V names the opcode
// of every RoCE frame.
var opcodeStrings = func() (s [256]string) {
	for o := range s {
		s[o] = string(BTHOpcode(o).nameOf(nil))
	}
	return s
}()

// appendName appends the opcode's String.
func (o BTHOpcode) appendName(dst []byte) []byte { return append(dst, opcodeStrings[o]...) }

// nameOf appends the opcode's name made from its transport and operation.
func (o BTHOpcode) nameOf(dst []byte) []byte {
	if o == OpCNP {
		return append(dst, "CNP"...)
	}
	t := bthTransportNames[o>>5]
	if !o.Valid() {
		if t == "" {
			t = "vendor"
		}
		dst = append(dst, t...)
		dst = append(dst, " reserved(0x"...)
		dst = appendHexPad(dst, uint64(o), 2)
		return append(dst, ')')
	}
	dst = append(dst, t...)
	dst = append(dst, ' ')
	return append(dst, bthOpNames[o.Op()]...)
}

// opcodeName is the Enum function of the roce.bth.opcode field.
func opcodeName(v uint64) string {
	if v > 0xFF {
		return ""
	}
	return BTHOpcode(v).String()
}

// IsSend reports SEND First/Middle/Last/Only with or without immediate or
// invalidate.
func (o BTHOpcode) IsSend() bool {
	op := o.Op()
	return o.Valid() && o != OpCNP && (op <= OpSendOnlyImm || op == OpSendLastInv || op == OpSendOnlyInv)
}

// IsWrite reports RDMA WRITE First/Middle/Last/Only (with or without immediate).
func (o BTHOpcode) IsWrite() bool {
	op := o.Op()
	return o.Valid() && o != OpCNP && op >= OpWriteFirst && op <= OpWriteOnlyImm
}

// HasImmDt reports whether an ImmDt header is somewhere after the BTH.
func (o BTHOpcode) HasImmDt() bool {
	if !o.Valid() || o == OpCNP {
		return false
	}
	switch o.Op() {
	case OpSendLastImm, OpSendOnlyImm, OpWriteLastImm, OpWriteOnlyImm:
		return true
	}
	return false
}

// extLen is the total size of the extension headers that IBTA places after
// the BTH for this opcode (RDETH, DETH, XRCETH, RETH, AETH, ImmDt, IETH,
// AtomicETH, AtomicAckETH), so the BTH can find the data without the
// extension layers.
func (o BTHOpcode) extLen() int { return int(opcodeInfo[o].ext) }

// opcodeInfo is, per opcode, what decoding a BTH asks of it for every
// packet (Valid, extLen), made once: the two switches were a quarter of
// the BTH's decoding, which every RoCE frame of every mode pays, and ran
// again in its summary.
var opcodeInfo = func() (t [256]struct {
	valid bool
	ext   uint8
}) {
	for o := range t {
		t[o].valid, t[o].ext = BTHOpcode(o).validOf(), uint8(BTHOpcode(o).extLenOf())
	}
	return t
}()

// extLenOf is extLen worked out from the opcode's transport and operation.
func (o BTHOpcode) extLenOf() int {
	n := 0
	switch o.Transport() {
	case TransportRD:
		n = bthRDETHLen
		if op := o.Op(); op < OpReadResponseFirst || op > OpAtomicAcknowledge {
			n += dethLen
		}
	case TransportUD:
		n = dethLen
	case TransportXRC:
		if op := o.Op(); op < OpReadResponseFirst || op > OpAtomicAcknowledge {
			n = bthXRCETHLen
		}
	case TransportCNP:
		return 0
	}
	switch o.Op() {
	case OpSendLastImm, OpSendOnlyImm, OpWriteLastImm:
		n += 4
	case OpWriteFirst, OpWriteOnly, OpReadRequest, OpAtomicWrite:
		n += rethLen
	case OpWriteOnlyImm:
		n += rethLen + 4
	case OpReadResponseFirst, OpReadResponseLast, OpReadResponseOnly, OpAcknowledge:
		n += aethLen
	case OpAtomicAcknowledge:
		n += aethLen + 8
	case OpCompareSwap, OpFetchAdd:
		n += 28
	case OpSendLastInv, OpSendOnlyInv:
		n += 4
	case OpFlush:
		n += rethLen + 4
	}
	return n
}

const (
	bthLen       = 12
	icrcLen      = 4
	bthRDETHLen  = 4 // RD: EE context, folded into the BTH layer
	bthXRCETHLen = 4 // XRC: XRC SRQ number, folded into the BTH layer
)

// BTH is the InfiniBand Base Transport Header of a RoCEv1 or RoCEv2 packet
// (IBTA vol. 1 §9.2), together with what sits at the two ends of the
// transport payload: it removes the pad bytes and the 4-byte ICRC from its
// Payload and keeps the ICRC value. The RD and XRC headers that come right
// after the BTH (RDETH, XRCETH) have no layer of their own and are decoded
// here too.
//
// Contents holds the BTH (plus RDETH/XRCETH); Payload holds the extension
// headers and data, without pad and ICRC.
type BTH struct {
	layers.BaseLayer
	Opcode   BTHOpcode // offset 0
	SE       bool      // offset 1 0x80: solicited event (set on every SMC SEND)
	M        bool      // offset 1 0x40: migration state
	PadCount uint8     // offset 1 0x30: pad bytes before the ICRC
	TVer     uint8     // offset 1 0x0F: transport header version (0)
	PKey     uint16    // offset 2: partition key
	FECN     bool      // offset 4 0x80 (RoCEv2 leaves congestion marking to IP ECN)
	BECN     bool      // offset 4 0x40; 0x3F and offset 8 0x7F are reserved, ignored as IBTA asks
	DestQP   uint32    // offset 5, 24 bits
	AckReq   bool      // offset 8 0x80
	PSN      uint32    // offset 9, 24 bits
	// EEContext is the RDETH end-to-end context of an RD packet (24 bits).
	EEContext uint32
	// XRCSRQ is the XRCETH shared receive queue number of an XRC request.
	XRCSRQ uint32
	// ICRC is the invariant CRC as transmitted: the last 4 bytes read
	// little-endian, so it compares directly with ICRCRoCEv2/ICRCRoCEv1.
	ICRC uint32
	// TrailerCut: the packet's last bytes were not captured (a snap
	// length cut it), so there is no ICRC: its field is left out.
	// DecodeCut sets it, or the decoder of the frame.
	TrailerCut bool
	// ExtCut: the snap length cut the packet inside its extension
	// headers (a WRITE's RETH, an ACK's AETH), which are then not
	// decoded: the BTH's fields are the packet's, nothing after them is
	// (Payload is empty, Contents holds the headers' bytes captured).
	// DecodeCut sets it, for RC and UC packets.
	ExtCut bool
	// wirePay is the payload's length on the wire when DecodeCut cut it
	// short (0: Payload is whole).
	wirePay int
}

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// DecodeFromBytes decodes the BTH from the UDP payload (RoCEv2) or the GRH
// payload (RoCEv1), which must end with the ICRC.
// DecodeFromBytes decodes one BTH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := b.decode(data, df, 0); err != nil {
		*b = BTH{}
		return err
	}
	return nil
}

// DecodeCut decodes a BTH whose packet the capture's snap length cut:
// data is what the capture holds of it, wire its length on the wire (the
// UDP payload's, RoCEv2; the GRH's, RoCEv1). The payload is then the bytes
// captured of it, up to its pad and ICRC, which are not read (TrailerCut),
// and the SMC message it carries is classified by its length on the wire
// (NextLayerType, DataWireLen). A packet held whole is decoded as by
// DecodeFromBytes.
func (b *BTH) DecodeCut(data []byte, wire int, df gopacket.DecodeFeedback) error {
	if wire <= len(data) {
		return b.DecodeFromBytes(data, df)
	}
	if err := b.decode(data[:len(data):len(data)], df, wire); err != nil {
		*b = BTH{}
		if errors.Is(err, ErrTruncated) && len(data) >= bthLen && len(data) >= bthLen+BTHOpcode(data[0]).extLen() {
			// The headers were captured: the packet on the wire is
			// too short for them, its pad and ICRC (the UDP or GRH
			// length), which no snap length did.
			err = BadLength("BTH", "length", 0, "packet of "+strconv.Itoa(wire)+
				" bytes on the wire (UDP/GRH length): too short for its headers, pad and ICRC")
		}
		return err
	}
	return nil
}

// decode decodes a packet of wire bytes of which data holds the first;
// wire 0: data is the whole packet.
func (b *BTH) decode(data []byte, df gopacket.DecodeFeedback, wire int) error {
	*b = BTH{}
	cut := wire > len(data)
	n := len(data)
	if cut {
		n = wire
	}
	if n < bthLen+icrcLen || len(data) < bthLen {
		df.SetTruncated()
		return Truncated("BTH", "", len(data), bthLen+icrcLen, len(data))
	}
	_ = data[11]
	b.Opcode = BTHOpcode(data[0])
	b.SE = data[1]&0x80 != 0
	b.M = data[1]&0x40 != 0
	b.PadCount = data[1] >> 4 & 0x03
	b.TVer = data[1] & 0x0F
	b.PKey = binary.BigEndian.Uint16(data[2:4])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.DestQP = u24(data[5:])
	b.AckReq = data[8]&0x80 != 0
	b.PSN = u24(data[9:])
	end := n - icrcLen
	if !cut {
		b.ICRC = binary.LittleEndian.Uint32(data[end:])
	}
	if !opcodeInfo[b.Opcode].valid {
		err := ErrReserved
		if b.Opcode >= 0xC0 {
			err = ErrUnknownType
		}
		return &Error{Layer: "BTH", Field: "opcode", Offset: 0, Err: err,
			Detail: "opcode 0x" + string(appendHexPad(nil, uint64(b.Opcode), 2))}
	}
	if cut && len(data) < bthLen+b.Opcode.extLen() {
		// The BTH was captured and its extension headers cut: a
		// reliable or unreliable connection's BTH (whose extension
		// headers all come after it) is the packet's, what follows is
		// not read. Other transports' packets are taken whole or not.
		ext := b.Opcode.extLen()
		if tr := b.Opcode.Transport(); tr != TransportRC && tr != TransportUC || n-icrcLen-int(b.PadCount) < bthLen+ext {
			df.SetTruncated()
			return Truncated("BTH", "extension headers", bthLen, ext, len(data)-bthLen)
		}
		b.TrailerCut, b.ExtCut, b.wirePay = true, true, n-icrcLen-int(b.PadCount)-bthLen
		b.Contents, b.Payload = data, data[len(data):]
		return nil
	}
	hdr := bthLen
	switch b.Opcode.Transport() {
	case TransportRD:
		if end < hdr+bthRDETHLen {
			df.SetTruncated()
			return Truncated("BTH", "rdeth", hdr, bthRDETHLen, end-hdr)
		}
		b.EEContext = u24(data[13:])
		hdr += bthRDETHLen
	case TransportXRC:
		if op := b.Opcode.Op(); op < OpReadResponseFirst || op > OpAtomicAcknowledge {
			if end < hdr+bthXRCETHLen {
				df.SetTruncated()
				return Truncated("BTH", "xrceth", hdr, bthXRCETHLen, end-hdr)
			}
			b.XRCSRQ = u24(data[13:])
			hdr += bthXRCETHLen
		}
	}
	payEnd := end - int(b.PadCount)
	if payEnd < hdr {
		df.SetTruncated()
		return Truncated("BTH", "padcnt", 1, hdr+int(b.PadCount)+icrcLen, len(data))
	}
	if need := b.Opcode.extLen() - (hdr - bthLen); payEnd-hdr < need {
		df.SetTruncated()
		return Truncated("BTH", "extension headers", hdr, need, payEnd-hdr)
	}
	if cut {
		b.TrailerCut, b.wirePay = true, payEnd-hdr
		payEnd = min(payEnd, len(data))
	}
	b.Contents = data[:hdr]
	b.Payload = data[hdr:payEnd]
	return nil
}

// SMCType is SMCPayloadType of Data, told by the message's length on the
// wire for a packet DecodeCut cut.
func (b *BTH) SMCType() gopacket.LayerType { return smcPayloadType(b.Data(), b.DataWireLen()) }

// DataWireLen is the length on the wire of Data: len(Data()) but for a
// packet DecodeCut cut short.
func (b *BTH) DataWireLen() int {
	switch {
	case b.wirePay == 0:
		return len(b.Data())
	case b.ExtCut:
		return b.wirePay - b.Opcode.extLen()
	}
	return b.wirePay - (b.Opcode.extLen() - (len(b.Contents) - bthLen))
}

// Data returns the application data of the packet: the bytes after every
// extension header, without pad and ICRC (for an SMC WRITE, the bytes
// placed in the peer's RMBE; for an SMC SEND, the LLC or CDC message).
func (b *BTH) Data() []byte {
	n := b.Opcode.extLen() - (len(b.Contents) - bthLen)
	if n > len(b.Payload) {
		return nil
	}
	return b.Payload[n:]
}

// NextLayerType follows the IBTA header chain for the opcode. The payload
// of RC SEND First/Only is offered to SMCPayloadType; WRITE data is
// application data and stays gopacket.Payload.
func (b *BTH) NextLayerType() gopacket.LayerType {
	if len(b.Payload) == 0 || b.ExtCut {
		return gopacket.LayerTypeZero
	}
	if b.wirePay != 0 {
		return bthNextCut(b.Opcode, b.Payload, b.wirePay)
	}
	return bthNext(b.Opcode, b.Payload)
}

// bthNextCut is bthNext for a payload the capture cut: an SMC message is
// told by its length on the wire, wire.
func bthNextCut(o BTHOpcode, payload []byte, wire int) gopacket.LayerType {
	if (o.Op() == OpSendFirst || o.Op() == OpSendOnly) && o.Transport() == TransportRC {
		return smcPayloadType(payload, wire)
	}
	return bthNext(o, payload)
}

func bthNext(o BTHOpcode, payload []byte) gopacket.LayerType {
	switch o.Transport() {
	case TransportUD:
		return LayerTypeDETH
	case TransportRD:
		if op := o.Op(); op < OpReadResponseFirst || op > OpAtomicAcknowledge {
			return LayerTypeDETH
		}
	case TransportCNP:
		return gopacket.LayerTypePayload
	}
	switch o.Op() {
	case OpSendFirst, OpSendOnly:
		if o.Transport() == TransportRC {
			return SMCPayloadType(payload)
		}
	case OpSendLastImm, OpSendOnlyImm, OpWriteLastImm:
		return LayerTypeImmDt
	case OpWriteFirst, OpWriteOnly, OpWriteOnlyImm, OpReadRequest, OpFlush, OpAtomicWrite:
		return LayerTypeRETH
	case OpReadResponseFirst, OpReadResponseLast, OpReadResponseOnly, OpAcknowledge, OpAtomicAcknowledge:
		return LayerTypeAETH
	case OpSendLastInv, OpSendOnlyInv:
		return LayerTypeIETH
	}
	return gopacket.LayerTypePayload
}

// AppendFields adds the roce.bth.* fields and roce.icrc (the transmitted
// value; roce.icrc.ok is added by whoever verifies it).
func (b *BTH) AppendFields(r *Record) {
	r.AddUint(fBTHOpcode, uint64(b.Opcode))
	r.AddBool(fBTHSE, b.SE)
	r.AddBool(fBTHM, b.M)
	r.AddUint(fBTHPadCnt, uint64(b.PadCount))
	r.AddUint(fBTHTVer, uint64(b.TVer))
	r.AddUint(fBTHPKey, uint64(b.PKey))
	r.AddBool(fBTHFECN, b.FECN)
	r.AddBool(fBTHBECN, b.BECN)
	r.AddUint(fBTHDestQP, uint64(b.DestQP))
	r.AddBool(fBTHAckReq, b.AckReq)
	r.AddUint(fBTHPSN, uint64(b.PSN))
	switch b.Opcode.Transport() {
	case TransportRD:
		r.AddUint(fBTHEEContext, uint64(b.EEContext))
	case TransportXRC:
		if len(b.Contents) > bthLen {
			r.AddUint(fBTHXRCSRQ, uint64(b.XRCSRQ))
		}
	}
	// An ImmDt behind another extension header (WRITE Only with
	// Immediate, UD/RD with Immediate) has no layer of its own; report it
	// here so that roce.immdt is there whichever header carries it.
	if imm, ok := b.Imm(); ok && len(b.Payload) > 0 && bthNext(b.Opcode, b.Payload) != LayerTypeImmDt {
		r.AddUint(fImmDt, uint64(imm))
	}
	if !b.TrailerCut {
		r.AddUint(fICRC, uint64(b.ICRC))
	}
}

// AppendSummary appends the one-line meaning, e.g.
// "RoCE RC SEND Only QP 0x000011 PSN 0xa6ac2e" or, for an RC
// Acknowledge (whose AETH syndrome it reads from its own payload),
// "RoCE RC ACK QP 0x000011 PSN 0xddf8a2". RETH/AETH summaries continue
// the line.
func (b *BTH) AppendSummary(dst []byte) []byte {
	dst = append(dst, "RoCE "...)
	if b.Opcode.Op() == OpAcknowledge && b.Opcode.Valid() && b.Opcode != OpCNP && len(b.Payload) >= aethLen {
		dst = append(dst, bthTransportNames[b.Opcode>>5]...)
		dst = append(dst, ' ')
		dst = AETHSyndrome(b.Payload[0]).appendName(dst)
	} else {
		dst = b.Opcode.appendName(dst)
	}
	dst = append(dst, " QP 0x"...)
	dst = numfmt.AppendHex24(dst, b.DestQP)
	dst = append(dst, " PSN 0x"...)
	return numfmt.AppendHex24(dst, b.PSN)
}

// decodeBTH is the gopacket.Decoder behind LayerTypeBTH.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	b := &BTH{}
	if err := b.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(b)
	return nextOrDone(p, b.NextLayerType(), b.Payload)
}

// nextOrDone hands the rest of the packet to the next decoder, or stops
// when nothing is left.
func nextOrDone(p gopacket.PacketBuilder, next gopacket.LayerType, payload []byte) error {
	if len(payload) == 0 || next == gopacket.LayerTypeZero {
		return nil
	}
	return p.NextDecoder(next)
}

// BTH fields (IBTA vol. 1 §9.2). PSN and QPN show in hex in -V, as
// tshark does, and stay decimal in -T fields. Places: the 12-byte BTH
// (SE, M, PadCnt and TVer share byte 1; FECN and BECN byte 4; AckReq byte
// 8); RDETH and XRCETH (§9.3), which this package folds into the BTH
// layer, are one reserved byte and a 24-bit number; the ICRC is the
// packet's last 4 bytes, little-endian (§7.8.1).
var (
	fBTHOpcode    = Field(OwnerBTH, "roce.bth.opcode", KindUint, "BTH opcode (transport and operation)", Hex(), Enum(opcodeName), At(0, 1), WiresharkName("infiniband.bth.opcode"))
	fBTHSE        = Field(OwnerBTH, "roce.bth.se", KindBool, "BTH solicited event", At(1, 1, Bits(0x80)), WiresharkName("infiniband.bth.se"))
	fBTHM         = Field(OwnerBTH, "roce.bth.m", KindBool, "BTH migration state", At(1, 1, Bits(0x40)), WiresharkName("infiniband.bth.m"))
	fBTHPadCnt    = Field(OwnerBTH, "roce.bth.padcnt", KindUint, "BTH pad count (bytes before the ICRC)", At(1, 1, Bits(0x30)), WiresharkName("infiniband.bth.padcnt"))
	fBTHTVer      = Field(OwnerBTH, "roce.bth.tver", KindUint, "BTH transport header version", At(1, 1, Bits(0x0f)), WiresharkName("infiniband.bth.tver"))
	fBTHPKey      = Field(OwnerBTH, "roce.bth.pkey", KindUint, "BTH partition key", Hex(), At(2, 2), WiresharkName("infiniband.bth.p_key"))
	fBTHFECN      = Field(OwnerBTH, "roce.bth.fecn", KindBool, "BTH forward explicit congestion notification", At(4, 1, Bits(0x80)))
	fBTHBECN      = Field(OwnerBTH, "roce.bth.becn", KindBool, "BTH backward explicit congestion notification", At(4, 1, Bits(0x40)))
	fBTHDestQP    = Field(OwnerBTH, "roce.bth.dqpn", KindUint, "BTH destination queue pair number", Hex(), At(5, 3), WiresharkName("infiniband.bth.destqp"))
	fBTHAckReq    = Field(OwnerBTH, "roce.bth.ackreq", KindBool, "BTH acknowledge request", At(8, 1, Bits(0x80)), WiresharkName("infiniband.bth.a"))
	fBTHPSN       = Field(OwnerBTH, "roce.bth.psn", KindUint, "BTH packet sequence number", Hex(), At(9, 3), WiresharkName("infiniband.bth.psn"))
	fBTHEEContext = Field(OwnerRDETH, "roce.rdeth.eecnxt", KindUint, "RDETH end-to-end context (RD only)", Hex(), At(1, 3))
	fBTHXRCSRQ    = Field(OwnerXRCETH, "roce.xrceth.srq", KindUint, "XRCETH XRC shared receive queue (XRC only)", Hex(), At(1, 3))
	fICRC         = Field(OwnerICRC, "roce.icrc", KindUint, "ICRC as transmitted (little-endian trailer)", Hex(), At(0, 4, LE()))
)

// Imm returns the immediate data of an opcode that carries an ImmDt. It
// works also where the ImmDt is not the first extension header (WRITE
// Only with Immediate, UD SEND Only with Immediate), which the ImmDt layer
// cannot be reached for.
func (b *BTH) Imm() (uint32, bool) {
	p := b.ImmBytes()
	if p == nil {
		return 0, false
	}
	return binary.BigEndian.Uint32(p), true
}

// ImmBytes returns the 4 bytes of the ImmDt wherever it lies (Imm), or
// nil.
func (b *BTH) ImmBytes() []byte {
	if !b.Opcode.HasImmDt() {
		return nil
	}
	// ImmDt is always the last extension header.
	off := b.Opcode.extLen() - (len(b.Contents) - bthLen) - immDtLen
	if off < 0 || off+immDtLen > len(b.Payload) {
		return nil
	}
	return b.Payload[off : off+immDtLen]
}
