package decode

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// CLCType is the CLC message type at offset 4 (struct smc_clc_msg_hdr, net/smc/smc_clc.h).
type CLCType uint8

// CLC message types, net/smc/smc_clc.h.
const (
	CLCTypeProposal CLCType = 1 // SMC_CLC_PROPOSAL
	CLCTypeAccept   CLCType = 2 // SMC_CLC_ACCEPT
	CLCTypeConfirm  CLCType = 3 // SMC_CLC_CONFIRM
	CLCTypeDecline  CLCType = 4 // SMC_CLC_DECLINE
)

func (t CLCType) String() string {
	switch t {
	case CLCTypeProposal:
		return "Proposal"
	case CLCTypeAccept:
		return "Accept"
	case CLCTypeConfirm:
		return "Confirm"
	case CLCTypeDecline:
		return "Decline"
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// SMCType is the 2-bit SMC type ("path") of the CLC header: offered types in
// a Proposal, the chosen one in Accept/Confirm (struct smc_clc_msg_hdr, net/smc/smc_clc.h).
type SMCType uint8

// SMC types, net/smc/smc_clc.h.
const (
	SMCTypeR SMCType = 0 // SMC_TYPE_R: SMC-R only
	SMCTypeD SMCType = 1 // SMC_TYPE_D: SMC-D only
	SMCTypeN SMCType = 2 // SMC_TYPE_N: neither
	SMCTypeB SMCType = 3 // SMC_TYPE_B: both
)

func (t SMCType) String() string {
	switch t {
	case SMCTypeR:
		return "SMC-R"
	case SMCTypeD:
		return "SMC-D"
	case SMCTypeN:
		return "none"
	case SMCTypeB:
		return "SMC-R+SMC-D"
	}
	return "smctype(" + strconv.Itoa(int(t)) + ")"
}

// HasR reports whether t includes SMC-R.
func (t SMCType) HasR() bool { return t == SMCTypeR || t == SMCTypeB }

// HasD reports whether t includes SMC-D.
func (t SMCType) HasD() bool { return t == SMCTypeD || t == SMCTypeB }

// CLC eyecatchers, "SMCR" and "SMCD" in EBCDIC. Linux accepts either one at
// the start and in the trailer of every message (net/smc/smc_clc.c smc_clc_wait_msg checks either eyecatcher).
var (
	EyecatcherSMCR = [4]byte{0xE2, 0xD4, 0xC3, 0xD9}
	EyecatcherSMCD = [4]byte{0xE2, 0xD4, 0xC3, 0xC4}
)

func clcValidEyecatcher(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	e := [4]byte(b[:4])
	return e == EyecatcherSMCR || e == EyecatcherSMCD
}

func clcEyecatcherName(e [4]byte) string {
	switch e {
	case EyecatcherSMCR:
		return "SMCR"
	case EyecatcherSMCD:
		return "SMCD"
	}
	// Not fmt: an e[:] that escapes would move e to the heap on every call.
	return hex.EncodeToString(e[:])
}

// CLC framing, net/smc/smc_clc.h and smc_clc_wait_msg in net/smc/smc_clc.c:
// every message is a struct smc_clc_msg_hdr (8 bytes, the length at offset
// 5 counting the whole message) and ends with a struct smc_clc_msg_trail (4
// bytes), so no length below 12 can be a message.
const (
	clcHeaderLen = 8
	// CLCHeaderLength is the bytes of the header (struct smc_clc_msg_hdr).
	CLCHeaderLength = clcHeaderLen
	clcTrailerLen   = 4
	clcMinLen       = clcHeaderLen + clcTrailerLen

	// CLCMinLength is the smallest length a CLC message can have: header
	// and trailer.
	CLCMinLength = clcMinLen
	// CLCMaxLength bounds the length a stream framer believes. Linux reads
	// any length (smc_clc_wait_msg drains what exceeds its buffer), but the
	// largest message it sends, a v2 Proposal (struct
	// smc_clc_msg_proposal_area with 8 UEIDs and 8 ISM GIDs), is under
	// 1 KiB; a length beyond this is damage, not a message worth waiting for.
	CLCMaxLength = 4096
)

// CLCFraming is what the first bytes of a TCP stream say about a CLC
// message there; see CLCFrame.
type CLCFraming uint8

// CLCFrame results.
const (
	CLCNotCLC    CLCFraming = iota // no eyecatcher: not a CLC message
	CLCNeedMore                    // an eyecatcher prefix, or fewer than 7 bytes: wait for more
	CLCFramed                      // a message of the returned length starts here
	CLCBadLength                   // an eyecatcher then a length outside CLCMinLength..CLCMaxLength
)

// CLCFrame frames a CLC message at the start of b, the next bytes of a TCP
// stream: the one rule stream reassemblers and trackers share. For
// CLCFramed and CLCBadLength, n is the length field.
func CLCFrame(b []byte) (n int, f CLCFraming) {
	p := b[:min(len(b), 4)]
	if !clcPrefixOf(p, EyecatcherSMCR) && !clcPrefixOf(p, EyecatcherSMCD) {
		return 0, CLCNotCLC
	}
	if len(b) < 7 {
		return 0, CLCNeedMore
	}
	n = int(binary.BigEndian.Uint16(b[5:7]))
	if n < CLCMinLength || n > CLCMaxLength {
		return n, CLCBadLength
	}
	return n, CLCFramed
}

func clcPrefixOf(p []byte, e [4]byte) bool {
	for i, x := range p {
		if x != e[i] {
			return false
		}
	}
	return true
}

// CLCBadLengthError is the error for a message CLCFrame reports as
// CLCBadLength, in the form DecodeFromBytes uses.
func CLCBadLengthError(b []byte) error {
	n, f := CLCFrame(b)
	if f != CLCBadLength {
		return nil
	}
	name := "CLC"
	if len(b) > 4 {
		name = (&CLC{Type: CLCType(b[4])}).layerName()
	}
	if n < CLCMinLength {
		return BadLength(name, "length", 5, fmt.Sprintf("length %d is shorter than header and trailer (%d)", n, CLCMinLength))
	}
	return BadLength(name, "length", 5, fmt.Sprintf("length %d exceeds the largest CLC message (%d)", n, CLCMaxLength))
}

// CLC is one CLC message (net/smc/smc_clc.h, RFC 7609): the handshake SMC runs in
// the TCP stream before switching to RDMA or ISM. Only the body that matches
// Type is meaningful; the others are zero.
//
// Contents is the message (Length bytes); Payload is whatever followed it
// in the input (another CLC message, or application data after a fallback).
type CLC struct {
	layers.BaseLayer
	// Offset 0, 4 bytes: "SMCR" or "SMCD" in EBCDIC.
	Eyecatcher [4]byte
	// Offset 4, 1 byte.
	Type CLCType
	// Offset 5, 2 bytes: total length including header and trailer.
	Length uint16
	// Offset 7, mask 0xF0.
	Version uint8
	// Offset 7, mask 0x08: first contact in Accept/Confirm, out of sync in
	// a Decline, high bit of TypeV2 in a v2 Proposal.
	Flag bool
	// Offset 7, mask 0x0C: SMC v2 types offered (v2 Proposal only).
	TypeV2 SMCType
	// Offset 7, mask 0x03: SMC v1 types offered (Proposal) or the type chosen
	// (Accept/Confirm).
	TypeV1 SMCType

	Proposal CLCProposal
	Accept   CLCAccept // Accept and Confirm
	Decline  CLCDecline

	// Offset Length-4, 4 bytes. Linux does not check it on a Decline, so
	// neither does DecodeFromBytes; see TrailerValid.
	Trailer [4]byte

	// Malformed is the error of a message DecodePartial decoded: what a
	// kernel of today refuses in it. Always nil after DecodeFromBytes.
	Malformed error

	// Cut is how many bytes of the message the capture holds when its snap
	// length cut the message short (DecodeCut), 0 for a whole message:
	// only the fields within them are set, shown and summarised; the
	// trailer is not among them.
	Cut int

	// ANCK is set by the capture reader (never by decoding) on the
	// messages of a handshake whose Proposal carried the Alibaba vendor
	// OUI: only then are the bytes ANCK redefines read as ANCK's
	// (init_credits, the agreed vendor options, decline 0x0303000c).
	ANCK bool
}

// LayerType returns LayerTypeCLC.
func (c *CLC) LayerType() gopacket.LayerType { return LayerTypeCLC }

// CanDecode returns LayerTypeCLC.
func (c *CLC) CanDecode() gopacket.LayerClass { return LayerTypeCLC }

// NextLayerType returns LayerTypeZero: nothing is encapsulated in CLC.
// Bytes after the message are left in Payload for the stream framer.
func (c *CLC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// FirstContact reports the first-contact flag of an Accept or Confirm (the
// connection creates a new link group).
func (c *CLC) FirstContact() bool {
	return (c.Type == CLCTypeAccept || c.Type == CLCTypeConfirm) && c.Flag
}

// OutOfSync reports the out-of-sync flag of a Decline (the receiver must
// drop its link group).
func (c *CLC) OutOfSync() bool { return c.Type == CLCTypeDecline && c.Flag }

// TrailerValid reports whether the trailer is a valid eyecatcher. It is
// always true for decoded Proposals, Accepts and Confirms.
func (c *CLC) TrailerValid() bool { return clcValidEyecatcher(c.Trailer[:]) }

// layerName names the message for errors, e.g. "CLC Accept".
func (c *CLC) layerName() string {
	switch c.Type {
	case CLCTypeProposal:
		return "CLC Proposal"
	case CLCTypeAccept:
		return "CLC Accept"
	case CLCTypeConfirm:
		return "CLC Confirm"
	case CLCTypeDecline:
		return "CLC Decline"
	}
	return "CLC"
}

// CLCMessageLength frames CLC messages in a TCP stream: it reports the
// length field of the message starting at b. ok is false while fewer than 7
// bytes are present, when b does not start with an eyecatcher, or when the
// length is too small to hold a header and trailer (so a caller cutting
// messages out of a stream always advances).
func CLCMessageLength(b []byte) (n int, ok bool) {
	if len(b) < 7 {
		return 0, false
	}
	n = int(binary.BigEndian.Uint16(b[5:7]))
	if !clcValidEyecatcher(b) {
		return n, false
	}
	return n, n >= clcMinLen
}

// DecodeFromBytes decodes one CLC message from the start of data. It does
// not allocate unless it returns an error; after an error c is zero.
func (c *CLC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	err := c.decode(data, df)
	if err != nil {
		*c = CLC{}
	}
	return err
}

// DecodePartial decodes a message DecodeFromBytes rejects as far as its
// bytes go, for display: a kernel of today would refuse it, but its
// header, and its body up to the fault, still say what the sender meant
// (often an older kernel's shape). It returns DecodeFromBytes's error, and
// false with c zero when not even the header and length frame a message
// in data; otherwise Contents is the message, Malformed is the error, and
// every field decoded before the fault is set (AppendFields and
// AppendSummary show only those). A message DecodeFromBytes accepts
// decodes as it would there, with a nil error.
func (c *CLC) DecodePartial(data []byte) (bool, error) {
	err := c.decode(data, gopacket.NilDecodeFeedback)
	if err == nil {
		return true, nil
	}
	if c.Contents == nil {
		*c = CLC{}
		return false, err
	}
	c.Malformed = err
	return true, err
}

// DecodeCut decodes data, the start of a message that the capture's snap
// length cut short (its length field claims more than data holds), as far
// as it goes: the header, and of the body the fields that lie wholly in
// data (a Proposal's, of each of its areas and lists those wholly in
// data; an Accept's or Confirm's; a Decline's). Cut is len(data). What
// the capture did not keep is neither checked nor shown: a field absent
// is not a zero. It reports false, c
// zero, when data is not the start of a message of a known type (its
// header's error) or is whole (DecodePartial's).
func (c *CLC) DecodeCut(data []byte) (bool, error) {
	err := c.decode(data, gopacket.NilDecodeFeedback)
	if len(data) < clcHeaderLen || int(c.Length) <= len(data) || !errors.Is(err, ErrTruncated) {
		// Whole, shorter than a header, or refused before its length.
		if err == nil {
			err = errors.New("CLC: DecodeCut of a whole message")
		}
		*c = CLC{}
		return false, err
	}
	c.Contents, c.Payload, c.Cut = data, nil, len(data)
	switch c.Type {
	case CLCTypeProposal:
		c.Proposal.decodeCut(c, data)
	case CLCTypeAccept, CLCTypeConfirm:
		c.Accept.decodeCut(c, data)
	case CLCTypeDecline:
		c.Decline.decodeCut(c, data)
	}
	return true, nil
}

// StepCaptured reports whether the capture holds what a handshake takes
// from the message: of an Accept or Confirm its sender's endpoint but for
// its initial PSN (SMC-R: up to its RMB's address, offset 60 of struct
// smc_clc_msg_accept_confirm; SMC-D: up to its link ID, 32), of a Decline
// its reason; a Proposal's header says what it offers. Always true for a
// whole message; for one the snap length cut (Cut), whether it was cut
// after them.
func (c *CLC) StepCaptured() bool {
	need := clcHeaderLen
	switch {
	case c.Type == CLCTypeDecline:
		need = 20
	case c.Type == CLCTypeProposal:
	case c.TypeV1 == SMCTypeD:
		need = 32
	default:
		need = 60
	}
	return c.Cut == 0 || need <= c.Cut
}

func (c *CLC) decode(data []byte, df gopacket.DecodeFeedback) error {
	*c = CLC{}
	if len(data) >= 4 && !clcValidEyecatcher(data) {
		return &Error{Layer: "CLC", Field: "eyecatcher", Offset: 0, Err: ErrBadEyecatcher,
			Detail: fmt.Sprintf("% x", data[:4])}
	}
	if len(data) < clcHeaderLen {
		df.SetTruncated()
		return Truncated("CLC", "header", 0, clcHeaderLen, len(data))
	}
	c.Eyecatcher = [4]byte(data[:4])
	c.Type = CLCType(data[4])
	c.Length = binary.BigEndian.Uint16(data[5:7])
	b7 := data[7]
	c.Version = b7 >> 4
	c.Flag = b7&0x08 != 0
	c.TypeV2 = SMCType(b7 >> 2 & 0x03)
	c.TypeV1 = SMCType(b7 & 0x03)
	name := c.layerName()
	l := int(c.Length)
	if l >= clcMinLen && l <= len(data) {
		// Framed: DecodePartial shows the header even when what follows
		// is refused.
		c.Contents, c.Payload = data[:l], data[l:]
		c.Trailer = [4]byte(data[l-clcTrailerLen : l])
	}
	if c.Type < CLCTypeProposal || c.Type > CLCTypeDecline {
		return &Error{Layer: name, Field: "type", Offset: 4, Err: ErrUnknownType,
			Detail: "type " + strconv.Itoa(int(c.Type))}
	}
	if c.Version == 0 {
		// Linux rejects version 0 (smc_clc_wait_msg); there is no layout for it.
		return &Error{Layer: name, Field: "version", Offset: 7, Err: ErrUnknownType, Detail: "version 0"}
	}
	if l < clcMinLen {
		return BadLength(name, "length", 5, fmt.Sprintf("length %d is shorter than header and trailer (%d)", l, clcMinLen))
	}
	if l > len(data) {
		df.SetTruncated()
		return Truncated(name, "length", 5, l, len(data))
	}
	msg := data[:l]
	var err error
	switch c.Type {
	case CLCTypeProposal:
		err = c.Proposal.decode(c, msg)
	case CLCTypeAccept, CLCTypeConfirm:
		err = c.Accept.decode(c, msg)
	case CLCTypeDecline:
		err = c.Decline.decode(c, msg)
	}
	// The trailer after the body, so that DecodePartial has the body of
	// a message whose trailer is damaged; Linux does not check a
	// Decline's.
	if err == nil && c.Type != CLCTypeDecline && !clcValidEyecatcher(c.Trailer[:]) {
		err = &Error{Layer: name, Field: "trailer", Offset: l - clcTrailerLen, Err: ErrBadEyecatcher,
			Detail: fmt.Sprintf("% x", c.Trailer[:])}
	}
	return err
}

func decodeCLC(data []byte, p gopacket.PacketBuilder) error {
	c := &CLC{}
	if err := c.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(c)
	if len(c.Payload) > 0 {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return nil
}

// Fields of the common header (struct smc_clc_msg_hdr), placed from the
// message's start: eyecatcher, type, length, then one byte of version
// (0xf0), typev2 (0x0c) and typev1 (0x03), the __BIG_ENDIAN_BITFIELD order
// being the wire's; the trailer (struct smc_clc_msg_trail) ends the message.
var (
	fCLCEyecatcher = Field(OwnerCLC, "smc.clc.eyecatcher", KindString, "CLC eyecatcher (SMCR or SMCD, EBCDIC)", At(0, 4))
	fCLCType       = Field(OwnerCLC, "smc.clc.type", KindUint, "CLC message type (1 Proposal, 2 Accept, 3 Confirm, 4 Decline)",
		Enum(func(u uint64) string { return CLCType(u).String() }), At(4, 1))
	fCLCLength  = Field(OwnerCLC, "smc.clc.length", KindUint, "CLC message length including header and trailer", At(5, 2))
	fCLCVersion = Field(OwnerCLC, "smc.clc.version", KindUint, "SMC version of the CLC header (1 or 2)", At(7, 1, Bits(0xf0)))
	fCLCPath    = Field(OwnerCLC, "smc.clc.path", KindUint, "SMC v1 type: offered (Proposal) or chosen (Accept/Confirm): 0 SMC-R, 1 SMC-D, 2 none, 3 both",
		Enum(func(u uint64) string { return SMCType(u).String() }), At(7, 1, Bits(0x03)))
	fCLCTrailer = Field(OwnerCLC, "smc.clc.trailer", KindString, "CLC trailer eyecatcher (SMCR or SMCD; raw hex if invalid)", At(-4, 4))
)

// AppendFields adds every field of the message to r: of one the snap
// length cut (Cut), those whose place lies in the captured bytes.
func (c *CLC) AppendFields(r *Record) {
	r.addCaptured(c.Cut > 0, c.Contents, c.appendFields)
}

func (c *CLC) appendFields(r *Record) {
	r.AddString(fCLCEyecatcher, clcEyecatcherName(c.Eyecatcher))
	r.AddUint(fCLCType, uint64(c.Type))
	r.AddUint(fCLCLength, uint64(c.Length))
	r.AddUint(fCLCVersion, uint64(c.Version))
	if c.Type != CLCTypeDecline {
		r.AddUint(fCLCPath, uint64(c.TypeV1))
	}
	switch c.Type {
	case CLCTypeProposal:
		c.Proposal.appendFields(c, r)
	case CLCTypeAccept, CLCTypeConfirm:
		c.Accept.appendFields(c, r)
	case CLCTypeDecline:
		c.Decline.appendFields(c, r)
	}
	if c.Cut == 0 {
		r.AddString(fCLCTrailer, clcEyecatcherName(c.Trailer))
	}
}

// AppendSummary appends a one-line description, e.g.
// `CLC Accept SMC-Rv2 first-contact QPN 0x11 token 1 rkey 0x3a9 ...`.
func (c *CLC) AppendSummary(dst []byte) []byte {
	dst = append(dst, c.layerName()...)
	switch c.Type {
	case CLCTypeProposal:
		dst = c.Proposal.appendSummary(c, dst)
	case CLCTypeAccept, CLCTypeConfirm:
		dst = c.Accept.appendSummary(c, dst)
	case CLCTypeDecline:
		dst = c.Decline.appendSummary(c, dst)
	}
	return appendCaptured(dst, c.Cut, int(c.Length))
}

// String returns the summary line.
func (c *CLC) String() string { return string(c.AppendSummary(nil)) }

// clcAppendMode appends e.g. "SMC-Rv2" for a chosen type and version.
func clcAppendMode(dst []byte, t SMCType, version uint8) []byte {
	switch t {
	case SMCTypeR:
		dst = append(dst, "SMC-R"...)
	case SMCTypeD:
		dst = append(dst, "SMC-D"...)
	default:
		dst = append(dst, t.String()...)
		dst = append(dst, ' ')
	}
	dst = append(dst, 'v')
	return numfmt.AppendUint(dst, uint64(version))
}

// Shared field encodings (struct smc_clc_msg_local and friends, net/smc/smc_clc.h).

// clcGID reads a 16-byte GID as an address; RoCEv2 GIDs are IPv4-mapped.
func clcGID(b []byte) netip.Addr { return netip.AddrFrom16([16]byte(b[:16])) }

// RMBESizeBytes expands the 4-bit compressed RMBE/DMBE size: 1 << (n+14).
func RMBESizeBytes(n uint8) uint64 { return 1 << (uint64(n&0x0f) + 14) }

// QPMTUBytes expands the IB MTU enum (1 = 256 ... 5 = 4096); 0 if invalid.
func QPMTUBytes(m uint8) uint64 {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m
}

// OSTypeName names the OS type of a first-contact extension or v2 Decline.
func OSTypeName(t uint8) string {
	switch t {
	case 1:
		return "z/OS"
	case 2:
		return "Linux"
	case 3:
		return "AIX"
	case 15:
		return "unknown"
	}
	return ""
}

func clcOSTypeEnum(u uint64) string { return OSTypeName(uint8(u)) }

// clcTrimBlanks drops the blank (and NUL) padding of EIDs and hostnames.
func clcTrimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == 0) {
		b = b[:len(b)-1]
	}
	return b
}

func clcIsZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// AppendPeerID appends a Linux peer ID as instance@MAC (2 random bytes and
// the MAC of the first RoCE port, struct smc_clc_msg_local; smc_ib.c's
// local_systemid), the instance in decimal as hwipl/smc prints it; every
// view of a peer ID (the CLC line, the link group rows) writes it so.
func AppendPeerID(dst []byte, id [8]byte) []byte {
	dst = numfmt.AppendUint(dst, uint64(binary.BigEndian.Uint16(id[:2])))
	dst = append(dst, '@')
	return clcAppendMAC(dst, id[2:])
}

func clcAppendMAC(dst []byte, mac []byte) []byte {
	const digits = "0123456789abcdef"
	for i, x := range mac {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, digits[x>>4], digits[x&0xf])
	}
	return dst
}

func clcAppendHex(dst []byte, u uint64) []byte {
	return appendHexPad(append(dst, '0', 'x'), u, 0)
}

// clcAppendSize renders a power-of-two byte count as 64KiB / 1MiB.
func clcAppendSize(dst []byte, n uint64) []byte {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return append(numfmt.AppendUint(dst, n>>20), "MiB"...)
	case n >= 1<<10 && n%(1<<10) == 0:
		return append(numfmt.AppendUint(dst, n>>10), "KiB"...)
	}
	return append(numfmt.AppendUint(dst, n), 'B')
}

// clcAppendQuoted quotes EIDs and hostnames, escaping anything that is not
// printable ASCII, since they come straight off the wire.
func clcAppendQuoted(dst []byte, b []byte) []byte {
	const digits = "0123456789abcdef"
	dst = append(dst, '"')
	for _, x := range b {
		switch {
		case x == '"' || x == '\\':
			dst = append(dst, '\\', x)
		case x >= 0x20 && x < 0x7f:
			dst = append(dst, x)
		default:
			dst = append(dst, '\\', 'x', digits[x>>4], digits[x&0xf])
		}
	}
	return append(dst, '"')
}
