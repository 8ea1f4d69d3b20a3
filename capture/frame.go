package capture

import (
	"bytes"
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// ICRCStatus is the result of recomputing a RoCE packet's invariant CRC.
type ICRCStatus struct {
	Checked bool   // the frame was complete enough to compute it
	OK      bool   // computed == carried, and IPSumBad false
	Got     uint32 // carried in the packet
	Want    uint32 // computed
	// IPSumBad: the ICRC matches, but the IPv4 header's checksum fails
	// (decode.IPv4HeaderSumOK) in a field the ICRC leaves out (type of
	// service, TTL, the checksum): the receiver drops the packet all
	// the same, so OK is false. IPSum is then the checksum carried and
	// the one computed.
	IPSumBad bool
	IPSum    [2]uint16
}

// icrcStatus is the verdict on a RoCEv2 packet whose IP header is ip and
// whose ICRC is got, computed want (err: the ICRC's error, nil or
// decode.ErrBadICRC): an IPv4 header whose checksum fails makes it bad.
// The direct path, whose headers are IPv4's 20 bytes, checks them inline.
func icrcStatus(ip []byte, got, want uint32, err error) ICRCStatus {
	s := ICRCStatus{Checked: true, OK: err == nil, Got: got, Want: want}
	if s.OK && !decode.IPv4HeaderSumOK(ip) {
		s.ipSumBad(ip)
	}
	return s
}

// ipSumBad makes s the verdict on a packet whose IPv4 header ip fails its
// checksum.
func (s *ICRCStatus) ipSumBad(ip []byte) {
	s.OK, s.IPSumBad = false, true
	s.IPSum[0], s.IPSum[1] = decode.IPv4HeaderSum(ip)
}

// icrcIP is the RoCEv2 packet (its IP header on) of a frame whose ICRC
// fails where its IPv4 header checksum holds; nil for other frames.
func (f *Frame) icrcIP() []byte {
	s := &f.ICRC
	if !s.Checked || s.OK || s.IPSumBad || f.GRH != nil {
		return nil
	}
	switch {
	case f.direct != 0:
		return f.Data[dIP:] // the direct path's IPv4 over Ethernet, no layers made
	case f.IPv4 != nil:
		return f.Data[cap(f.Data)-cap(f.IPv4.Contents):]
	case f.IPv6 != nil:
		return f.Data[cap(f.Data)-cap(f.IPv6.Contents):]
	}
	return nil
}

// ICRCMend is the one byte of a RoCEv2 frame whose ICRC fails that
// explains the failure (decode.MendICRCRoCEv2), with its offset in Data;
// false where no one byte does, and for other frames.
func (f *Frame) ICRCMend() (decode.ICRCMend, bool) {
	ip := f.icrcIP()
	if ip == nil {
		return decode.ICRCMend{}, false
	}
	m, ok := decode.MendICRCRoCEv2(ip, f.ICRC.Got, f.ICRC.Want)
	m.Off += len(f.Data) - len(ip)
	return m, ok
}

// ICRCMendAs tells whether the RoCEv2 frame, whose ICRC fails, was sent
// with k's addresses, DestQP and PSN (decode.MendICRCRoCEv2As): exact
// where its ICRC then verifies, else with m, one byte more, offset in
// Data. False for other frames.
func (f *Frame) ICRCMendAs(k decode.ICRCKey) (m decode.ICRCMend, exact, ok bool) {
	ip := f.icrcIP()
	if ip == nil {
		return decode.ICRCMend{}, false, false
	}
	m, exact, ok = decode.MendICRCRoCEv2As(ip, k)
	if ok && !exact {
		m.Off += len(f.Data) - len(ip)
	}
	return m, exact, ok
}

// ICRCMendSMC tells whether the RoCEv2 frame of a whole CDC or LLC
// message, whose ICRC fails, was sent with the bytes its sender sends as
// zeros zero (decode.CDC.SentZero, decode.LLC.SentZero,
// decode.MendICRCRoCEv2Zeroed): exact where its ICRC then verifies, else
// with m, one byte more, offset in Data. False for other frames, and for
// an LLC message the frame does not hold (one put together from several
// SENDs).
func (f *Frame) ICRCMendSMC() (m decode.ICRCMend, exact, ok bool) {
	ip := f.icrcIP()
	var msg []byte
	var spans [8][2]int
	sent := spans[:0]
	switch {
	case ip == nil:
		return decode.ICRCMend{}, false, false
	case f.CDC != nil && f.CDC.Cut == 0:
		msg = f.CDC.Contents
		z := f.CDC.SentZero()
		sent = append(sent, z[:]...)
	case f.LLC != nil && f.LLC.Cut == 0:
		msg = f.LLC.Contents
		sent = f.LLC.SentZero(sent)
	}
	base := len(f.Data) - len(ip) // ip's offset in Data
	at := cap(f.Data) - cap(msg)  // the message's offset in Data
	if len(msg) == 0 || len(sent) == 0 || cap(msg) > cap(f.Data) || &f.Data[:cap(f.Data)][at] != &msg[0] {
		return decode.ICRCMend{}, false, false
	}
	for i := range sent {
		sent[i][0] += at - base
		sent[i][1] += at - base
	}
	m, exact, ok = decode.MendICRCRoCEv2Zeroed(ip, sent)
	if ok && !exact {
		m.Off += base
	}
	return m, exact, ok
}

// LengthMend reports whether the RoCEv2 packet of a frame whose IP or UDP
// length claims more than it holds (LengthBad) was sent as the frame holds
// it but for those lengths: with the lengths the frame's size gives, its
// ICRC, which covers them, verifies, and the IP length claims no less
// than the frame holds (the layers above were decoded from all of it).
// Then every other byte is the sender's, and only the lengths were
// damaged.
func (f *Frame) LengthMend() bool {
	if !f.LengthBad || f.BTH == nil || f.Cut {
		return false
	}
	var ip []byte
	var hdr int
	switch {
	case f.IPv4 != nil:
		ip = f.Data[cap(f.Data)-cap(f.IPv4.Contents):]
		hdr = len(f.IPv4.Contents)
	case f.IPv6 != nil:
		ip = f.Data[cap(f.Data)-cap(f.IPv6.Contents):]
		hdr = 40
	default:
		return false
	}
	if len(ip) < hdr+8 || len(ip) > 0xFFFF {
		return false
	}
	// An IP length that claims less than the frame holds cut what was
	// decoded of the packet: the layers above are not the sender's.
	if f.IPv4 != nil && int(f.IPv4.Length) < len(ip) || f.IPv6 != nil && 40+int(f.IPv6.Length) < len(ip) {
		return false
	}
	p := bytes.Clone(ip)
	if f.IPv4 != nil {
		binary.BigEndian.PutUint16(p[2:4], uint16(len(p)))
	} else {
		binary.BigEndian.PutUint16(p[4:6], uint16(len(p)-40))
	}
	binary.BigEndian.PutUint16(p[hdr+4:hdr+6], uint16(len(p)-hdr))
	_, err := decode.ICRCRoCEv2(p)
	return err == nil
}

// Frame is one captured frame and what was decoded from it. A Reader reuses
// one Frame: its slices and layer pointers are valid until the next call to
// Next. Layer pointers are nil when the layer is absent from this frame.
type Frame struct {
	Number   int // 1-based position in the capture
	CI       gopacket.CaptureInfo
	Data     []byte
	LinkType layers.LinkType
	Decoded  []gopacket.LayerType

	Eth  *layers.Ethernet
	VLAN []layers.Dot1Q // outer tag first
	SLL  *layers.LinuxSLL
	SLL2 *layers.LinuxSLL2
	IPv4 *layers.IPv4
	IPv6 *layers.IPv6
	TCP  *layers.TCP
	// TCPCut is a TCP header the snap length cut inside its options
	// (TCP is nil then): its fixed 20 bytes and the options whole in the
	// capture, no payload. Shown and filtered like a TCP header; the
	// tracker and the CLC reassembler read TCP only, as its options (the
	// SMC option among them) and its payload are not all there.
	TCPCut *layers.TCP
	UDP    *layers.UDP
	// Tunnel: the frame was carried by a mirror session or an overlay
	// (ERSPAN, GRE, VXLAN, Geneve); the layers above are the carried
	// frame's.
	Tunnel *Tunnel

	// RoCE and SMC layers (GRH, BTH, ..., LLC, CDC) and CLC messages.
	SMCLayers

	ICRC ICRCStatus
	// TCPSum is the TCP checksum of a segment of a connection followed as
	// SMC from its SYN, checked while its CLC handshake is followed
	// (SMCFlow) and after it (clcAssembler.after): Checked and OK where it
	// verifies, Checked and not OK where the segment is damaged, IPSumBad
	// where its IPv4 header is (see sumHistory.judge for when a checksum
	// that fails is damage; the segment is read all the same).
	TCPSum TCPSumStatus
	// SMCOption: this TCP SYN or SYN-ACK carried the SMC option.
	SMCOption bool
	// SMCO: the option is ANCK's SYN-ACK "SMCO" (decode.SMCOptionKind).
	SMCO bool
	// SMCFlow: this TCP segment belongs to a connection followed as SMC
	// (its SYN carried the option, or it started with a CLC message).
	SMCFlow bool
	// NotCLC: with this segment, the reassembled stream of a connection
	// followed as SMC reached bytes that are not CLC where a message would
	// start: application data, so the CLC handshake is over (or, before
	// any CLC, never began). Said once per connection, on the segment that
	// completed those bytes in sequence, which is not always the segment
	// that carries them (out of order).
	NotCLC bool
	// CLCErr holds decode errors of CLC messages completed by this frame
	// and of the LLC or CDC messages of its RoCE packet, notes
	// (*SwallowedError) on CLC messages that lie inside the length of an
	// earlier message, and notes (ErrMended) on fields the capture damaged
	// that the frame is read past as sent (a CLC message's, its EtherType):
	// the frame's errors but for Err, which ends its layers.
	CLCErr []error
	// CLCInside[i] says that CLC[i] lies inside the length an earlier
	// message of its direction claims (a *SwallowedError in CLCErr says
	// which): decoded, but no step of the handshake.
	CLCInside []bool
	// SMCMalformed: an RC SEND on a queue pair known to be an SMC-R link
	// did not decode as the LLC or CDC message it must be (the error is
	// in Err).
	SMCMalformed bool
	// SMCCredits: with SMCMalformed, the SEND's queue pair is one an ANCK
	// handshake with credits set up: the message, as sent, is ANCK's
	// (decode.CDC.ANCK).
	SMCCredits bool
	// Cut: the capture kept fewer bytes than were on the wire (snaplen).
	Cut bool
	// Truncated: a layer needed more bytes than the frame holds.
	Truncated bool
	// LengthBad: the frame is whole (not Cut) and its IPv4 total length,
	// IPv6 payload length or UDP length claims more bytes than it holds
	// (the error is in Err): a receiver drops such a packet (Linux's
	// ip_rcv_core and __udp4_lib_rcv, an RNIC's parser), so nothing in it
	// reached the peer.
	LengthBad bool
	// icrcDue: the direct path left ICRC unchecked (Reader.SetLazyICRC).
	// It sits in the padding before Err: beside ICRC it would grow the
	// Frame by 8 bytes, which every frame's reset and copy pay.
	icrcDue bool
	// Err is the first decode error of the frame's headers, with context.
	Err error
	// RecordErr: the frame's record header contradicts itself (a
	// *RecordError: original length below the captured length); the frame
	// was decoded from the bytes captured.
	RecordErr error

	clcRaw [][]byte // CLC messages completed by this frame, not yet decoded
	// clcRawInside[i]: clcRaw[i] lies inside an earlier message (CLCInside).
	clcRawInside []bool
	// clcRawANCK[i]: clcRaw[i] belongs to an ANCK handshake (decode.CLC.ANCK).
	clcRawANCK  []bool
	rec         decode.Record
	recSet      bool
	demand      fieldGroup    // layers whose fields Fields fills
	frameFields frameFieldSet // frame.* fields Fields fills
	// direct: the direct path read the frame (Reader.SetDirect); the bits
	// are the decode.Owner of its layers.
	direct uint32
	// plan, for a direct frame of a Reader that SetDirectRecords, makes
	// its record (Fields).
	plan *DirectPlan
	ns   int64 // UnixNano
	// digits is how many decimal places of the time the capture resolves
	// (frame.time_epoch prints them): 6 for a microsecond pcap, 9 for a
	// nanosecond one, a pcapng interface's if_tsresol.
	digits uint8
	// shown is how many decimals the time columns print (ColumnDigits).
	shown uint8
}

// UnixNano is CI.Timestamp in Unix nanoseconds, worked out when the frame
// was read: a consumer that keeps frame times as numbers (the tracker,
// on every frame) gets them without time.Time's arithmetic.
func (f *Frame) UnixNano() int64 { return f.ns }

// TimeDigits is how many decimal places of the frame's time the capture
// resolves: 6 for a microsecond pcap, 9 for a nanosecond one, a pcapng
// interface's if_tsresol (9 for finer and binary resolutions, times
// being whole nanoseconds).
func (f *Frame) TimeDigits() uint8 { return f.digits }

// ColumnDigits is how many decimals a time column (the text lines', the
// browser's list) prints, as Wireshark's follow the capture's precision:
// TimeDigits, but for a pcapng binary resolution 2^-e the decimals that
// resolution reaches, floor(e·log10 2) (3 for 2^-10), not the nanoseconds
// its times are held in.
func (f *Frame) ColumnDigits() uint8 { return f.shown }

func (f *Frame) reset() {
	f.Decoded = f.Decoded[:0]
	f.Eth, f.VLAN, f.SLL, f.SLL2 = nil, nil, nil, nil
	f.IPv4, f.IPv6, f.TCP, f.UDP = nil, nil, nil, nil
	f.TCPCut = nil
	f.Tunnel = nil
	f.SMCLayers.reset()
	f.ICRC, f.icrcDue = ICRCStatus{}, false
	f.TCPSum = TCPSumStatus{}
	f.SMCOption, f.SMCO = false, false
	f.SMCFlow = false
	f.CLC = f.CLC[:0]
	f.CLCErr = f.CLCErr[:0]
	f.CLCInside = f.CLCInside[:0]
	f.clcRawInside = f.clcRawInside[:0]
	f.clcRawANCK = f.clcRawANCK[:0]
	f.SMCMalformed, f.SMCCredits = false, false
	f.NotCLC = false
	f.clcRaw = f.clcRaw[:0]
	f.Cut = f.CI.CaptureLength < f.CI.Length
	f.Truncated = false
	f.LengthBad = false
	f.Err = nil
	f.RecordErr = nil
	f.recSet = false
	f.direct = 0
}

// TCPHeader is the frame's TCP header for showing it: TCP, or TCPCut
// where the snap length cut it inside its options; nil without one.
func (f *Frame) TCPHeader() *layers.TCP {
	if f.TCP != nil {
		return f.TCP
	}
	return f.TCPCut
}

// SMCOptionShown is what the frame's SYN or SYN-ACK says of the SMC
// option (SMCOption, SMCO): of a header the snap length cut inside its
// options (TCPCut), only an option kept is known, known false otherwise
// (absent, not "none"). Not asked on the per-frame path but of a cut
// header.
func (f *Frame) SMCOptionShown() (smc, smco, known bool) {
	if f.TCPCut == nil {
		return f.SMCOption, f.SMCO, true
	}
	smc, smco = decode.SMCOptionKind(f.TCPCut.Options)
	return smc, smco, smc
}

// TCPWireLen is how many payload bytes the frame's TCP segment had on the
// wire: by its IP length when the snap length cut the frame, else the
// bytes captured (also when the IP layer cannot say more).
func (f *Frame) TCPWireLen() int {
	t := f.TCPHeader()
	if t == nil {
		return 0
	}
	n := len(t.Payload)
	if !f.Cut {
		return n
	}
	hdr := int(t.DataOffset) * 4 // a cut header's Contents are the bytes kept
	wire := n
	switch {
	case f.IPv4 != nil:
		wire = int(f.IPv4.Length) - int(f.IPv4.IHL)*4 - hdr
	case f.IPv6 != nil && f.IPv6.NextHeader == layers.IPProtocolTCP:
		wire = int(f.IPv6.Length) - hdr
	}
	return max(wire, n)
}

// NetworkFlow is the IP flow of the frame (zero Flow when there is no IP).
func (f *Frame) NetworkFlow() gopacket.Flow {
	switch {
	case f.IPv4 != nil:
		return f.IPv4.NetworkFlow()
	case f.IPv6 != nil:
		return f.IPv6.NetworkFlow()
	}
	return gopacket.Flow{}
}

// SMCRelevant reports whether the frame belongs to SMC: a TCP SYN with the
// SMC option or answering one (a SYN-ACK without it is the fallback
// evidence), a CLC message or a damaged segment of the handshake that
// carries them (TCPSum), or any RoCE packet (LLC, CDC, RDMA WRITE,
// ACK/NAK all ride on the BTH), or a frame of ANCK's dump device.
func (f *Frame) SMCRelevant() bool {
	return f.direct != 0 || f.SMCOption || (f.SMCFlow && f.TCP.SYN) || len(f.CLC) > 0 || len(f.CLCErr) > 0 ||
		f.TCPSum.Damaged() || f.BTH != nil || f.GRH != nil || f.Dump != nil
}

// FieldWant is the field demand of the frame's record (decode.Record.Want;
// nil: every field), for fields added to another record in its place.
func (f *Frame) FieldWant() []bool { return f.rec.Want }

// Fields returns the frame's field record (frame.*, eth.*, ip.*, tcp.*,
// udp.*, then every decoded SMC/RoCE layer's fields), filled on first use.
func (f *Frame) Fields() *decode.Record {
	if f.recSet {
		return &f.rec
	}
	f.recSet = true
	r := &f.rec
	r.Reset()
	if f.direct != 0 && f.plan != nil {
		f.plan.AppendRecord(r, f)
		return r
	}
	appendBaseFields(r, f)
	appendRoCEFields(r, f)
	return r
}
