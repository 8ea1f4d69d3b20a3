package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// ANCK's SMC dump device: with a device set (SMC_NETLINK_SET_DUMP_DEV),
// the kernel copies each CDC it sends or receives, and the payload it
// places in or takes from the RMB, into Ethernet/IPv4/UDP frames it
// transmits on that (dummy) device (smc_dump_fill_skb_header and
// smc_dump_cdc_msg, ANCK net/smc/smc_stats.c). The UDP 4-tuple is the
// connection's TCP 4-tuple seen from the sender of the data; the UDP
// payload is struct smc_dumphdr and the data. The struct's definition is
// not in any public ANCK source: what is known is the order its fields are
// set in (magic as htonl, hdr_ver, smc_ver, mode, type, len as htons,
// reserved zeroed), so the fixed part is read as magic(4) hdr_ver(1)
// smc_ver(1) mode(1) type(1) len(2) and checked (len must equal the UDP
// payload), and the header's size, with the reserved bytes, is learned
// from a frame that carries a CDC, whose data has a known size
// (sizeof(struct smc_cdc_msg), 48 with padding; SMC-D's 32). Every
// inference is said in -V (smc.dump.hdr_len_source).

// DumpMagic is smc_dumphdr.magic, htonl(0xCFD3E7A5).
var DumpMagic = [4]byte{0xCF, 0xD3, 0xE7, 0xA5}

// dumpFixedLen is the part of struct smc_dumphdr read field by field.
const dumpFixedLen = 10

// Sizes of the CDC a dump carries: struct smc_cdc_msg is 44 bytes on the
// wire, 48 in memory (union smc_cdc_cursor is __aligned(8)); struct
// smcd_cdc_msg is 32.
const (
	dumpCDCLenR = 48
	dumpCDCLenD = 32
)

// dumpAssumedHdrLen is the header size taken before any CDC frame taught
// it: the fixed part rounded up to 8 bytes (16) is the likeliest, with
// reserved[] filling it.
const dumpAssumedHdrLen = 16

// IsDump reports whether a UDP payload is a dump device's.
func IsDump(p []byte) bool { return len(p) >= 4 && [4]byte(p[:4]) == DumpMagic }

// DumpKind says what a dump frame carries.
type DumpKind uint8

// Dump frame contents.
const (
	DumpRaw DumpKind = iota // SMC_DUMP_T_RAW_DATA: RMB or send-buffer bytes
	DumpCDC                 // SMC_DUMP_T_CDC_MSG: a CDC message
)

// DumpLearner carries what one capture's dump frames taught: the header
// size and the type value of a CDC frame, from the first frame that
// carried one. The zero value knows nothing.
type DumpLearner struct {
	HdrLen  int
	CDCType uint8
	Frame   int // the frame they were learned from (0: not yet)
}

// DumpHdr is the header of a dump device frame (struct smc_dumphdr).
type DumpHdr struct {
	layers.BaseLayer
	HdrVer uint8  // offset 4: SMC_DUMP_VER
	SMCVer uint8  // offset 5: lgr->smc_version (1 or 2)
	Mode   uint8  // offset 6: 1 SMC-R, 2 SMC-D
	Type   uint8  // offset 7: SMC_DUMP_T_RAW_DATA or SMC_DUMP_T_CDC_MSG (values not public)
	Len    uint16 // offset 8: header and data
	// HdrLen is where the data starts; HdrFrom says how it is known: the
	// frame number of the CDC it was learned from (this frame's own when
	// it is one), or 0 when it is assumed (no CDC frame seen yet).
	HdrLen  int
	HdrFrom int
	Kind    DumpKind
}

// LayerType returns LayerTypeSMCDump.
func (d *DumpHdr) LayerType() gopacket.LayerType { return LayerTypeSMCDump }

// CanDecode returns LayerTypeSMCDump.
func (d *DumpHdr) CanDecode() gopacket.LayerClass { return LayerTypeSMCDump }

// NextLayerType returns LayerTypeZero: the data is read through Data.
func (d *DumpHdr) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a dump frame's UDP payload on its own: the
// header size is learned from it if it is a CDC, else assumed.
func (d *DumpHdr) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	var l DumpLearner
	return d.DecodeWith(data, &l, 0)
}

// DecodeWith decodes a dump frame's UDP payload with what earlier frames
// of its capture taught (l), and teaches l from it. frame is its number.
func (d *DumpHdr) DecodeWith(data []byte, l *DumpLearner, frame int) error {
	*d = DumpHdr{}
	if len(data) < dumpFixedLen {
		return Truncated("SMC dump", "header", len(data), dumpFixedLen, len(data))
	}
	if !IsDump(data) {
		return &Error{Layer: "SMC dump", Field: "magic", Offset: 0, Err: ErrUnknownType, Detail: "no 0xcfd3e7a5 magic"}
	}
	d.HdrVer, d.SMCVer, d.Mode, d.Type = data[4], data[5], data[6], data[7]
	d.Len = binary.BigEndian.Uint16(data[8:10])
	if int(d.Len) != len(data) {
		return BadLength("SMC dump", "len", 8, "len "+strconv.Itoa(int(d.Len))+" is not the UDP payload's "+
			strconv.Itoa(len(data))+" bytes: the header layout inferred from ANCK's source does not hold")
	}
	cdcLen := dumpCDCLenR
	if d.Mode == 2 {
		cdcLen = dumpCDCLenD
	}
	// A CDC frame: data of a CDC's size starting with its type byte (and,
	// SMC-R, its length byte), after a header at least the fixed part.
	h := len(data) - cdcLen
	looksCDC := h >= dumpFixedLen && h <= 64 && data[h] == cdcType && (d.Mode == 2 || data[h+1] == smcMsgLen)
	switch {
	case l.Frame != 0:
		d.HdrLen, d.HdrFrom = l.HdrLen, l.Frame
		if d.Type == l.CDCType {
			d.Kind = DumpCDC
		}
	case looksCDC:
		*l = DumpLearner{HdrLen: h, CDCType: d.Type, Frame: frame}
		if frame == 0 {
			l.Frame = -1 // learned, from a frame without a number
		}
		d.HdrLen, d.HdrFrom, d.Kind = h, l.Frame, DumpCDC
	default:
		d.HdrLen = dumpAssumedHdrLen
	}
	if d.HdrLen > len(data) {
		return Truncated("SMC dump", "data", len(data), d.HdrLen, len(data))
	}
	if d.Kind == DumpCDC && len(data)-d.HdrLen != cdcLen {
		return BadLength("SMC dump", "len", 8, "a CDC frame (type "+strconv.Itoa(int(d.Type))+") with "+
			strconv.Itoa(len(data)-d.HdrLen)+" bytes of data, want "+strconv.Itoa(cdcLen))
	}
	d.Contents, d.Payload = data[:d.HdrLen], data[d.HdrLen:]
	return nil
}

// CDCBytes returns the CDC message of a CDC frame (SMC-R: the 44 bytes of
// the wire message, without the padding).
func (d *DumpHdr) CDCBytes() []byte {
	if d.Kind != DumpCDC {
		return nil
	}
	if d.Mode == 2 {
		return d.Payload
	}
	return d.Payload[:smcMsgLen]
}

var (
	fDumpHdrVer  = Field(OwnerDump, "smc.dump.hdr_ver", KindUint, "dump header version (SMC_DUMP_VER)", At(4, 1))
	fDumpSMCVer  = Field(OwnerDump, "smc.dump.smc_ver", KindUint, "SMC version of the link group (1 or 2)", At(5, 1))
	fDumpMode    = Field(OwnerDump, "smc.dump.mode", KindUint, "1 SMC-R, 2 SMC-D", Enum(dumpModeName), At(6, 1))
	fDumpType    = Field(OwnerDump, "smc.dump.type", KindUint, "dump data type (SMC_DUMP_T_*; its values are not public: see smc.dump.kind)", At(7, 1))
	fDumpLen     = Field(OwnerDump, "smc.dump.len", KindUint, "header and data length", At(8, 2))
	fDumpKind    = Field(OwnerDump, "smc.dump.kind", KindString, "what the frame carries: cdc (a CDC message) or data (RMB/send-buffer bytes)")
	fDumpHdrLen  = Field(OwnerDump, "smc.dump.hdr_len", KindUint, "dump header size (struct smc_dumphdr; inferred, see smc.dump.hdr_len_source)")
	fDumpHdrFrom = Field(OwnerDump, "smc.dump.hdr_len_source", KindString, "how the header size is known: learned from a CDC frame, or assumed")
	fDumpDataLen = Field(OwnerDump, "smc.dump.data_len", KindUint, "data bytes after the header")
)

func dumpModeName(u uint64) string {
	switch u {
	case 1:
		return "SMC-R"
	case 2:
		return "SMC-D"
	}
	return ""
}

// HdrSource says how HdrLen is known, for -V.
func (d *DumpHdr) HdrSource() string {
	switch {
	case d.HdrFrom > 0:
		return "inferred from the size of the CDC in frame " + strconv.Itoa(d.HdrFrom)
	case d.HdrFrom < 0:
		return "inferred from the size of a CDC frame"
	}
	return "assumed " + strconv.Itoa(dumpAssumedHdrLen) + " (no CDC frame seen yet to learn it from)"
}

// AppendFields adds the smc.dump.* fields.
func (d *DumpHdr) AppendFields(r *Record) {
	r.AddUint(fDumpHdrVer, uint64(d.HdrVer))
	r.AddUint(fDumpSMCVer, uint64(d.SMCVer))
	r.AddUint(fDumpMode, uint64(d.Mode))
	r.AddUint(fDumpType, uint64(d.Type))
	r.AddUint(fDumpLen, uint64(d.Len))
	r.AddString(fDumpKind, d.kindName())
	r.AddUint(fDumpHdrLen, uint64(d.HdrLen))
	r.AddString(fDumpHdrFrom, d.HdrSource())
	r.AddUint(fDumpDataLen, uint64(len(d.Payload)))
}

func (d *DumpHdr) kindName() string {
	if d.Kind == DumpCDC {
		return "cdc"
	}
	return "data"
}

// AppendSummary appends "dump SMC-Rv2 data 1024 B" or, for a CDC frame,
// "dump SMC-Rv2 CDC"; "header assumed" when its size is a guess.
func (d *DumpHdr) AppendSummary(dst []byte) []byte {
	dst = append(dst, "dump "...)
	if n := dumpModeName(uint64(d.Mode)); n != "" {
		dst = append(dst, n...)
	} else {
		dst = append(dst, "mode "...)
		dst = numfmt.AppendUint(dst, uint64(d.Mode))
	}
	dst = append(dst, 'v')
	dst = numfmt.AppendUint(dst, uint64(d.SMCVer))
	if d.Kind == DumpCDC {
		dst = append(dst, " CDC"...)
	} else {
		dst = append(dst, " data "...)
		dst = numfmt.AppendUint(dst, uint64(len(d.Payload)))
		dst = append(dst, " B"...)
	}
	if d.HdrFrom == 0 {
		dst = append(dst, " (header size assumed)"...)
	}
	return dst
}

// SerializeDump builds a dump frame's UDP payload as ANCK's
// smc_dump_fill_skb_header would under the inferred layout, with a
// header of hdrLen bytes (test vectors are made with it).
func SerializeDump(hdrLen int, smcVer, mode, typ uint8, data []byte) []byte {
	b := make([]byte, hdrLen+len(data))
	copy(b, DumpMagic[:])
	b[4], b[5], b[6], b[7] = 1, smcVer, mode, typ
	binary.BigEndian.PutUint16(b[8:], uint16(len(b)))
	copy(b[hdrLen:], data)
	return b
}

func decodeSMCDump(data []byte, p gopacket.PacketBuilder) error {
	d := &DumpHdr{}
	if err := d.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(d)
	return nil
}
