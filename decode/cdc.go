package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// CDCCursor is a producer or consumer cursor: the byte offset Count inside
// an RMBE, and Wrap, the number of completed passes over it (§4.2).
type CDCCursor struct {
	Wrap  uint16
	Count uint32
}

// CDCProdFlags is byte 24 of a CDC (smc_cdc_producer_flags; §4.3).
type CDCProdFlags uint8

// Producer flags.
const (
	CDCWriteBlocked       CDCProdFlags = 0x80 // write_blocked: no room in the peer's RMBE
	CDCUrgentPending      CDCProdFlags = 0x40 // urg_data_pending
	CDCUrgentPresent      CDCProdFlags = 0x20 // urg_data_present
	CDCConsUpdateReq      CDCProdFlags = 0x10 // cons_curs_upd_req
	CDCFailoverValidation CDCProdFlags = 0x08 // failover_validation (seq = last CDC on the failed link - 1)
)

// CDCConnFlags is byte 25 of a CDC (smc_cdc_conn_state_flags; §4.3).
type CDCConnFlags uint8

// Connection state flags.
const (
	CDCPeerDoneWriting CDCConnFlags = 0x80 // peer_done_writing: shutdown(SHUT_WR)
	CDCPeerConnClosed  CDCConnFlags = 0x40 // peer_conn_closed: close()
	CDCPeerConnAbort   CDCConnFlags = 0x20 // peer_conn_abort: abnormal close
)

var cdcProdFlagNames = [...]struct {
	f    CDCProdFlags
	name string
}{
	{CDCWriteBlocked, "write-blocked"}, {CDCUrgentPending, "urgent-pending"},
	{CDCUrgentPresent, "urgent-present"}, {CDCConsUpdateReq, "cons-update-requested"},
	{CDCFailoverValidation, "failover-validation"},
}

var cdcConnFlagNames = [...]struct {
	f    CDCConnFlags
	name string
}{
	{CDCPeerDoneWriting, "peer-done-writing"}, {CDCPeerConnClosed, "peer-conn-closed"},
	{CDCPeerConnAbort, "peer-conn-abort"},
}

// CDCType is the type byte of every CDC message (SMC_CDC_MSG_TYPE,
// net/smc/smc_cdc.h); every other first byte of an SMC-R SEND is an LLC type.
const CDCType = cdcType

// CDC is an SMC-R Connection Data Control message: 44 bytes, type 0xFE,
// sent as RC SEND Only on the link's QP after the RDMA WRITEs it announces
// (Linux struct smc_cdc_msg, net/smc/smc_cdc.h).
type CDC struct {
	layers.BaseLayer
	Type      uint8        // offset 0: 0xFE
	Length    uint8        // offset 1: 44
	Seq       uint16       // offset 2: per connection and direction, first = 1
	Token     uint32       // offset 4: the receiver's RMBE alert token
	Prod      CDCCursor    // offset 8: bytes written into the receiver's RMBE
	Cons      CDCCursor    // offset 16: bytes consumed from the sender's own RMBE
	ProdFlags CDCProdFlags // offset 24
	ConnFlags CDCConnFlags // offset 25
	// Credits is byte 26: reserved upstream, ANCK's receive-queue credits
	// returned to the peer (struct smc_cdc_msg, ANCK net/smc/smc_cdc.h).
	// Shown only where ANCK is set.
	Credits uint8
	// ANCK is set by the capture reader (never by decoding) on a queue
	// pair an ANCK handshake with credits set up, and on the dump device.
	ANCK bool
	// Cut is how many bytes of the message the capture holds when its snap
	// length cut it short (DecodeCut), 0 for a whole message; Credits is
	// then shown only where it holds byte 26.
	Cut int
}

// CDCCreditsEnd is where ANCK's credits byte ends (Captured tells whether
// a cut CDC holds it).
const CDCCreditsEnd = cdcCreditsOff + 1

// cdcFieldsEnd is where the fields every CDC carries end (the connection
// state flags at 25): a cut message is decoded only when it holds them.
const cdcFieldsEnd = 26

// DecodeCut decodes data, the start of a CDC of wire bytes that the
// capture's snap length cut short, when it holds the fields every CDC
// carries (up to its flags, byte 25): only the credits byte and reserved
// bytes may be missing, and the credits are then not shown. A message held
// whole is decoded as by DecodeFromBytes; a shorter start is an error.
func (c *CDC) DecodeCut(data []byte, wire int) error {
	if wire <= len(data) || len(data) >= smcMsgLen || len(data) < cdcFieldsEnd {
		// Whole, or too short: as DecodeFromBytes decodes (or refuses) it.
		return c.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	}
	if wire < smcMsgLen {
		*c = CDC{}
		return BadLength("CDC", "length", 1, "a "+strconv.Itoa(wire)+"-byte SEND on the wire, want 44")
	}
	*c = CDC{}
	if c.Type, c.Length = data[0], data[1]; c.Type != cdcType || c.Length != smcMsgLen {
		err := c.headerErr()
		*c = CDC{}
		return err
	}
	c.fields(data)
	if len(data) > cdcCreditsOff {
		c.Credits = data[cdcCreditsOff]
	}
	c.Contents, c.Cut = data, len(data)
	return nil
}

// Captured reports whether the message holds its bytes up to offset end:
// always for a whole message, up to where the capture cut it for one it
// cut.
func (c *CDC) Captured(end int) bool { return c.Cut == 0 || end <= c.Cut }

// SentZero returns the bytes of the message its sender sends as zeros,
// as offsets from its first byte, each span from its first to before its
// second (struct smc_cdc_msg in net/smc/smc_cdc.h: each cursor's reserved
// half-word, the reserved bytes after the flags, the first of which is
// ANCK's credits byte on its queue pairs, ANCK's own).
func (c *CDC) SentZero() [3][2]int {
	z := [3][2]int{{8, 10}, {16, 18}, {cdcCreditsOff, smcMsgLen}}
	if c.ANCK {
		z[2][0]++
	}
	return z
}

// LayerType returns LayerTypeCDC.
func (c *CDC) LayerType() gopacket.LayerType { return LayerTypeCDC }

// CanDecode returns LayerTypeCDC.
func (c *CDC) CanDecode() gopacket.LayerClass { return LayerTypeCDC }

// NextLayerType returns LayerTypeZero: a CDC fills its SEND.
func (c *CDC) NextLayerType() gopacket.LayerType { return payloadOrZero(c.Payload) }

// DecodeFromBytes decodes a CDC from an RC SEND payload. Reserved bits and
// bytes are not checked: a vendor kernel puts credits there (§5.9).
// DecodeFromBytes decodes one CDC. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (c *CDC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := c.decode(data, df); err != nil {
		*c = CDC{}
		return err
	}
	return nil
}

func (c *CDC) decode(data []byte, df gopacket.DecodeFeedback) error {
	*c = CDC{}
	if len(data) < 2 {
		df.SetTruncated()
		return Truncated("CDC", "length", len(data), 2, len(data))
	}
	if c.Type, c.Length = data[0], data[1]; c.Type != cdcType || c.Length != smcMsgLen {
		return c.headerErr()
	}
	if len(data) < smcMsgLen {
		df.SetTruncated()
		return Truncated("CDC", "", len(data), smcMsgLen, len(data))
	}
	c.fields(data)
	c.Credits = data[cdcCreditsOff]
	c.Contents = data[:smcMsgLen]
	c.Payload = data[smcMsgLen:]
	return nil
}

// headerErr is the error of a type or length byte (Type, Length) not a
// CDC's.
func (c *CDC) headerErr() error {
	if c.Type != cdcType {
		return &Error{Layer: "CDC", Field: "type", Offset: 0, Err: ErrUnknownType,
			Detail: "type 0x" + string(appendHexPad(nil, uint64(c.Type), 2)) + ", want 0xfe"}
	}
	if c.Length != smcMsgLen {
		return BadLength("CDC", "length", 1, "length "+strconv.Itoa(int(c.Length))+", want 44")
	}
	return nil
}

// fields reads the fields every CDC carries, from data's first 26 bytes.
func (c *CDC) fields(data []byte) {
	_ = data[25]
	c.Seq = binary.BigEndian.Uint16(data[2:4])
	c.Token = binary.BigEndian.Uint32(data[4:8])
	c.Prod = CDCCursor{Wrap: binary.BigEndian.Uint16(data[10:12]), Count: binary.BigEndian.Uint32(data[12:16])}
	c.Cons = CDCCursor{Wrap: binary.BigEndian.Uint16(data[18:20]), Count: binary.BigEndian.Uint32(data[20:24])}
	c.ProdFlags = CDCProdFlags(data[24])
	c.ConnFlags = CDCConnFlags(data[25])
}

// AppendFields adds the smc.cdc.* fields.
func (c *CDC) AppendFields(r *Record) {
	r.AddUint(fCDCSeq, uint64(c.Seq))
	r.AddUint(fCDCToken, uint64(c.Token))
	r.AddUint(fCDCProdWrap, uint64(c.Prod.Wrap))
	r.AddUint(fCDCProdCount, uint64(c.Prod.Count))
	r.AddUint(fCDCConsWrap, uint64(c.Cons.Wrap))
	r.AddUint(fCDCConsCount, uint64(c.Cons.Count))
	r.AddUint(fCDCProdFlags, uint64(c.ProdFlags))
	r.AddUint(fCDCConnFlags, uint64(c.ConnFlags))
	r.AddBool(fCDCWriteBlocked, c.ProdFlags&CDCWriteBlocked != 0)
	r.AddBool(fCDCUrgentPending, c.ProdFlags&CDCUrgentPending != 0)
	r.AddBool(fCDCUrgentPresent, c.ProdFlags&CDCUrgentPresent != 0)
	r.AddBool(fCDCConsUpdateReq, c.ProdFlags&CDCConsUpdateReq != 0)
	r.AddBool(fCDCFailover, c.ProdFlags&CDCFailoverValidation != 0)
	r.AddBool(fCDCPeerDoneWriting, c.ConnFlags&CDCPeerDoneWriting != 0)
	r.AddBool(fCDCPeerConnClosed, c.ConnFlags&CDCPeerConnClosed != 0)
	r.AddBool(fCDCPeerConnAbort, c.ConnFlags&CDCPeerConnAbort != 0)
	if c.ANCK && c.Captured(CDCCreditsEnd) {
		r.AddUint(fCDCCredits, uint64(c.Credits))
	}
}

// AppendSummary appends e.g. "CDC seq 1 token 1 prod 0/64 cons 0/88
// [write-blocked]"; the bracket lists the flags that are set.
func (c *CDC) AppendSummary(dst []byte) []byte {
	dst = append(dst, "CDC seq "...)
	dst = numfmt.AppendUint(dst, uint64(c.Seq))
	dst = append(dst, " token "...)
	dst = numfmt.AppendUint(dst, uint64(c.Token))
	dst = append(dst, " prod "...)
	dst = c.Prod.append(dst)
	dst = append(dst, " cons "...)
	dst = c.Cons.append(dst)
	if c.ANCK && c.Captured(CDCCreditsEnd) {
		dst = append(dst, " credits "...)
		dst = numfmt.AppendUint(dst, uint64(c.Credits))
	}
	return appendCaptured(c.appendFlags(dst), c.Cut, smcMsgLen)
}

// appendCaptured appends, for a message of length bytes the snap length
// cut after cut bytes (0: whole), " [cut of length bytes captured]".
func appendCaptured(dst []byte, cut, length int) []byte {
	if cut == 0 {
		return dst
	}
	dst = append(dst, " ["...)
	dst = numfmt.AppendInt(dst, int64(cut))
	dst = append(dst, " of "...)
	dst = numfmt.AppendInt(dst, int64(length))
	return append(dst, " bytes captured]"...)
}

func (c *CDC) appendFlags(dst []byte) []byte {
	if c.ProdFlags&0xF8 == 0 && c.ConnFlags&0xE0 == 0 {
		return dst
	}
	sep := byte('[')
	dst = append(dst, ' ')
	for _, n := range cdcProdFlagNames {
		if c.ProdFlags&n.f != 0 {
			dst = append(append(dst, sep), n.name...)
			sep = ' '
		}
	}
	for _, n := range cdcConnFlagNames {
		if c.ConnFlags&n.f != 0 {
			dst = append(append(dst, sep), n.name...)
			sep = ' '
		}
	}
	return append(dst, ']')
}

func (cc CDCCursor) append(dst []byte) []byte {
	dst = numfmt.AppendUint(dst, uint64(cc.Wrap))
	dst = append(dst, '/')
	return numfmt.AppendUint(dst, uint64(cc.Count))
}

func decodeCDC(data []byte, p gopacket.PacketBuilder) error {
	c := &CDC{}
	if err := c.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(c)
	return nextOrDone(p, c.NextLayerType(), c.Payload)
}

// CDC fields (struct smc_cdc_msg, smc_cdc_producer_flags and smc_cdc_conn_state_flags in net/smc/smc_cdc.h).
// Places: seqno at 2, token at 4, the two 8-byte union smc_cdc_cursor at 8
// and 16 (reserved, wrap, count), the flag bytes at 24 and 25 (the bit
// fields of struct smc_cdc_producer_flags and smc_cdc_conn_state_flags in
// net/smc/smc.h, whose __BIG_ENDIAN_BITFIELD order is the wire's:
// write_blocked and peer_done_writing are bit 0x80).
var (
	fCDCSeq             = Field(OwnerCDC, "smc.cdc.seq", KindUint, "CDC sequence number", At(2, 2))
	fCDCToken           = Field(OwnerCDC, "smc.cdc.token", KindUint, "CDC alert token of the receiving connection", Hex(), At(4, 4))
	fCDCProdWrap        = Field(OwnerCDC, "smc.cdc.prod.wrap", KindUint, "CDC producer cursor wrap count", At(10, 2))
	fCDCProdCount       = Field(OwnerCDC, "smc.cdc.prod.count", KindUint, "CDC producer cursor byte offset in the receiver's RMBE", At(12, 4))
	fCDCConsWrap        = Field(OwnerCDC, "smc.cdc.cons.wrap", KindUint, "CDC consumer cursor wrap count", At(18, 2))
	fCDCConsCount       = Field(OwnerCDC, "smc.cdc.cons.count", KindUint, "CDC consumer cursor byte offset in the sender's RMBE", At(20, 4))
	fCDCProdFlags       = Field(OwnerCDC, "smc.cdc.prod_flags", KindUint, "CDC producer flags byte", Hex(), At(24, 1))
	fCDCConnFlags       = Field(OwnerCDC, "smc.cdc.conn_flags", KindUint, "CDC connection state flags byte", Hex(), At(25, 1))
	fCDCWriteBlocked    = Field(OwnerCDC, "smc.cdc.flags.write_blocked", KindBool, "CDC: sender blocked, peer RMBE full", At(24, 1, Bits(uint64(CDCWriteBlocked))))
	fCDCUrgentPending   = Field(OwnerCDC, "smc.cdc.flags.urgent_pending", KindBool, "CDC: urgent data pending", At(24, 1, Bits(uint64(CDCUrgentPending))))
	fCDCUrgentPresent   = Field(OwnerCDC, "smc.cdc.flags.urgent_present", KindBool, "CDC: urgent data present", At(24, 1, Bits(uint64(CDCUrgentPresent))))
	fCDCConsUpdateReq   = Field(OwnerCDC, "smc.cdc.flags.cons_update_req", KindBool, "CDC: consumer cursor update requested", At(24, 1, Bits(uint64(CDCConsUpdateReq))))
	fCDCFailover        = Field(OwnerCDC, "smc.cdc.flags.failover_validation", KindBool, "CDC: failover validation", At(24, 1, Bits(uint64(CDCFailoverValidation))))
	fCDCPeerDoneWriting = Field(OwnerCDC, "smc.cdc.flags.peer_done_writing", KindBool, "CDC: peer done writing (shutdown write)", At(25, 1, Bits(uint64(CDCPeerDoneWriting))))
	fCDCPeerConnClosed  = Field(OwnerCDC, "smc.cdc.flags.peer_conn_closed", KindBool, "CDC: peer connection closed", At(25, 1, Bits(uint64(CDCPeerConnClosed))))
	fCDCPeerConnAbort   = Field(OwnerCDC, "smc.cdc.flags.peer_conn_abort", KindBool, "CDC: peer connection aborted", At(25, 1, Bits(uint64(CDCPeerConnAbort))))
)
