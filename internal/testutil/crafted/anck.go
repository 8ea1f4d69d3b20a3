package crafted

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// ANCKVector is a capture of SMC-R as Alibaba's kernel (ANCK) sends it,
// made from the lab's upstream captures with the project's serializers:
// no ANCK kernel runs here. Shows says what it holds; testdata/anck/README.md
// cites the ANCK source for each byte.
type ANCKVector struct {
	Name  string
	Shows string
	Build func(t testing.TB) string
	// Finding: the expert finding the vector is the capture of, if any.
	Finding string
}

// Frames of pingpong.pcap the ANCK vectors edit (see also expert.go).
const (
	ppSYNACK     = 6  // TCP SYN-ACK with the SMC option
	ppAcceptCLC  = 10 // CLC Accept (server)
	ppConfirmReq = 14 // LLC CONFIRM_LINK request (server), the first RoCE frame
	ppConfirmRsp = 16 // LLC CONFIRM_LINK response (client)
)

// Offsets in struct smcr_clc_msg_accept_confirm and its first-contact
// extension (ANCK net/smc/smc_clc.h).
const (
	accRMBESize    = 50
	accInitCredits = 51  // ANCK init_credits
	accFCE         = 104 // struct smc_clc_first_contact_ext_v2x
	fceMaxLinks    = 37
	fceVendor      = 40 // vendor_exp_options, struct smc_clc_vendor_opt_ali
)

// Hosts of the lab's captures: 10.10.0.1 the server, 10.10.0.2 the client.
const (
	hostServer byte = 1
	hostClient byte = 2
)

// ANCKVectors are the captures of testdata/anck.
var ANCKVectors = []ANCKVector{
	{"handshake-credits", "an ANCK first contact: SMCO SYN-ACK, Alibaba vendor options (credits agreed), init_credits in Accept/Confirm and ADD_LINK, credits in CDCs, an ANNOUNCE_CREDITS", func(t testing.TB) string {
		return write(t, "handshake-credits", anckCredits(t, 64, 64, 0))
	}, ""},
	{"rwwi", "a write-with-immediate link group: every data transfer an RDMA WRITE with Immediate (DATA, DATA_WITH_FLAGS, DATA_CR, DATA_WITH_FLAGS_CR, CTRL at close), no CDC SENDs, a 16 KiB RMBE that wraps", func(t testing.TB) string {
		return write(t, "rwwi", anckRWWI(t))
	}, ""},
	{"credits-starved", "the client returns no credit until the server has used all 64 it granted, and then 250 ms late: smc.credits.starved", func(t testing.TB) string {
		return write(t, "credits-starved", anckCredits(t, 64, 64, 250*time.Millisecond))
	}, "smc.credits.starved"},
	{"credits-decline", "an ANCK client's Decline SMC_CLC_DECL_CREDITSERR (0x09990004)", func(t testing.TB) string {
		return anckDecline(t, "credits-decline", decode.DeclineCreditsErr)
	}, "smc.credits.decline"},
	{"vendor-decline", "an ANCK server's Decline SMC_CLC_DECL_VENDORERR (0x0303000c)", func(t testing.TB) string {
		return anckDecline(t, "vendor-decline", decode.DeclineVendorErr)
	}, ""},
	{"dump-device", "what the client's dump device shows of the credits connection: its CDCs sent, the server's CDCs and the data they announce, after the TCP/CLC handshake captured on the NIC", func(t testing.TB) string {
		return testutil.WriteFrames(t, "dump-device.pcap", layers.LinkTypeEthernet, anckDump(t))
	}, ""},
	{"dump-damaged", "dump-device with four CDC frames damaged as a capture file is (dump frames carry no checksum): a sequence number 16384 ahead, a producer wrap 256 ahead, an abort flag mid-stream, a consumer count past the RMBE: smc.dump.damaged", func(t testing.TB) string {
		return testutil.WriteFrames(t, "dump-damaged.pcap", layers.LinkTypeEthernet, DumpDamaged(t, anckDump(t), DumpDamages...))
	}, "smc.dump.damaged"},
}

// DumpDamage is a byte of a dumped CDC of dump-device.pcap (frame Frame)
// changed as a damaged capture file changes it: XORed with Xor at offset
// Off of struct smc_cdc_msg (net/smc/smc_cdc.h: seqno at 2, the producer
// cursor's wrap at 10, the consumer cursor's count at 20, the connection
// state flags at 25).
type DumpDamage struct {
	Frame int
	What  string
	Off   int
	Xor   byte
}

// DumpDamages are dump-damaged.pcap's: CDCs of the client (103, 202) and
// of the server (150, 300).
var DumpDamages = []DumpDamage{
	{103, "sequence number 16384 ahead", 2, 0x40},
	{150, "producer wrap 256 ahead", 10, 0x01},
	{202, "peer_conn_abort set mid-stream", 25, byte(decode.CDCPeerConnAbort)},
	{300, "consumer count past the RMBE", 20, 0x80},
}

// DumpDamaged applies damages to a dump device capture fs (as
// dump-device.pcap) in place and returns fs.
func DumpDamaged(t testing.TB, fs []testutil.Packet, damages ...DumpDamage) []testutil.Packet {
	t.Helper()
	const at = 14 + 20 + 8 + dumpHdrLen // Ethernet, IPv4, UDP, struct smc_dumphdr
	for _, dm := range damages {
		d := fs[dm.Frame-1].Data
		if len(d) < at+44 || d[at] != decode.CDCType {
			t.Fatalf("dump-device frame %d is not a dumped CDC", dm.Frame)
		}
		d[at+dm.Off] ^= dm.Xor
	}
	return fs
}

// anckCLC makes pingpong's handshake ANCK's: the server's SYN-ACK carries
// "SMCO", the Proposal offers valid/credits/rwwi under the Alibaba OUI,
// Accept and Confirm agree to agreed with maxLinks and grant the initial
// credits (the server's to the client: srv; the client's to the server:
// cli), and rmbeSize (compressed, 0 = 16 KiB) when not negative.
func anckCLC(t testing.TB, fs []testutil.Packet, agreed decode.AliOptions, maxLinks uint8, srv, cli uint8, rmbeSize int) {
	t.Helper()
	d := fs[ppSYNACK-1].Data
	const tcpOpts = 14 + 20 + 20
	found := false
	for i := tcpOpts; i+6 <= len(d); i++ {
		if d[i] == 254 && d[i+1] == 6 && d[i+2] == 0xE2 && d[i+5] == 0xD9 {
			d[i+5], found = 0xD6, true // TCPOPT_SMC_OK_MAGIC
			break
		}
	}
	if !found {
		t.Fatal("pingpong.pcap's SYN-ACK has no SMC option")
	}
	FixIPv4TCP(d)
	resizeCLC(t, fs, ppProposal, func(m []byte) []byte {
		copy(m[52:55], decode.AlibabaOUI[:])
		m[55], m[56] = 0, byte(decode.AliValid|decode.AliCredits|decode.AliRWWI)
		return m
	})
	for n, credits := range map[int]uint8{ppAcceptCLC: srv, ppConfirmCLC: cli} {
		resizeCLC(t, fs, n, func(m []byte) []byte {
			m[accInitCredits] = credits
			m[accFCE+fceMaxLinks] = maxLinks
			m[accFCE+fceVendor] = byte(agreed)
			if rmbeSize >= 0 {
				m[accRMBESize] = byte(rmbeSize)<<4 | m[accRMBESize]&0x0f
			}
			return m
		})
	}
}

// anckCredits is pingpong.pcap in a link group with credits (no write
// with immediate): the client grants the server cli credits, the server
// the client srv. Each CDC returns the credits its sender owes once they
// reach ANCK's credits_update_limit (max(64/10, 5) = 6), or all of them
// while the peer is at 0 (smc_wr_rx_credits_need_announce_frequent);
// ADD_LINK carries 64; the server announces the CONFIRM_LINK response's
// credit by ANNOUNCE_CREDITS. With starve, the client returns nothing
// until the server holds none, and that CDC and every frame after it come
// starve late.
func anckCredits(t testing.TB, srv, cli uint8, starve time.Duration) []testutil.Packet {
	t.Helper()
	fs := pingpong(t)
	anckCLC(t, fs, decode.AliValid|decode.AliCredits, 2, srv, cli, -1)
	rb := newRebuilder()
	rb.rebuild(t, fs, func(i int, f testutil.Packet, src byte) {
		d := f.Data
		if m := d[RoCESMCOff:]; d[bthOff] == opSendOnly && decode.LLCType(m[0]).Base() == decode.LLCAddLink {
			m[llcInitCreditsOff] = 64
		}
		rb.request(t, src, f)
		if i+1 == ppConfirmRsp {
			// The server's worker announces the credit the response
			// used (one SEND of the client): an ANNOUNCE_CREDITS with
			// the response flag, as credits_announce_work sends it.
			l := decode.LLC{Type: decode.LLCAnnounceCredits, Length: 44, Response: true}
			l.AnnounceCredits.Credits = 1
			ann := roceFrame(t, fs[ppConfirmReq-1].Data, decode.BTH{Opcode: decode.BTHOpcode(opSendOnly), AckReq: true}, &l)
			rb.extra(t, hostServer, testutil.Packet{CI: later1(f.CI, 200*time.Microsecond), Data: ann})
		}
	})
	out := rb.out
	// Credits each side owes the other: one per SEND received.
	owe := map[byte]int{}
	have := map[byte]int{hostServer: int(cli), hostClient: int(srv)}
	for i, f := range out {
		d := f.Data
		if !isRoCE(d) || d[bthOff] != opSendOnly {
			continue
		}
		src := d[RoCEIPOff+15]
		dst := hostServer + hostClient - src
		m := d[RoCESMCOff:]
		due := owe[src] >= 6 || have[dst] <= 8
		if starve > 0 && src == hostClient {
			due = have[dst] == 0
			if due {
				later(out, i+1, starve)
				starve = 0
			}
		}
		if m[0] == decode.CDCType && owe[src] > 0 && due {
			m[26] = byte(owe[src]) // the CDC's ANCK credits byte
			have[dst] += owe[src]
			owe[src] = 0
			FixICRC(t, d)
		}
		if decode.LLCType(m[0]) == decode.LLCAnnounceCredits {
			have[dst] += int(m[4])
			owe[src] -= int(m[4])
		}
		have[src]--
		owe[dst]++
	}
	return out
}

// anckRWWI is pingpong.pcap in a write-with-immediate link group (one
// link: ANCK's smc_lgr_create allows it only with max_links 1, so the
// ADD_LINK exchange goes) with 16 KiB RMBEs: each data WRITE and the CDC
// that announced it become one RDMA WRITE with Immediate (two where the
// data crosses the end of the RMBE), a CDC without data a zero-length
// one, the closing CDCs CTRL immediates. The opcodes rotate over DATA_CR,
// DATA, DATA_WITH_FLAGS_CR and DATA_WITH_FLAGS; the _CR ones return the
// credits their sender owes.
func anckRWWI(t testing.TB) []testutil.Packet {
	t.Helper()
	const rmbe = 16 << 10
	fs := pingpong(t)
	anckCLC(t, fs, decode.AliValid|decode.AliCredits|decode.AliRWWI, 1, 64, 64, 0)
	rb := newRebuilder()
	pending := map[byte]*testutil.Packet{} // the data WRITE a CDC is to announce
	lastCons := map[byte]uint32{}
	off := map[byte]int{} // next write offset in the peer's RMBE
	turn := map[byte]int{}
	owe := map[byte]uint8{}
	ops := [...]decode.RWWIOp{decode.RWWIDataCredits, decode.RWWIData, decode.RWWIDataFlagsCreds, decode.RWWIDataFlags}
	rb.rebuild(t, fs, func(_ int, f testutil.Packet, src byte) {
		d := f.Data
		dst := hostServer + hostClient - src
		psn := bthPSN(d)
		switch op := d[bthOff]; {
		case op == opWriteOnly:
			p := f
			pending[src] = &p
			rb.merged(src, psn)
		case op == opSendOnly && d[RoCESMCOff] == decode.CDCType:
			var cdc decode.CDC
			if err := cdc.DecodeFromBytes(d[RoCESMCOff:], gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			w := decode.RWWI{Token: uint8(cdc.Token), DiffCons: cdc.Cons.Count - lastCons[src]}
			lastCons[src] = cdc.Cons.Count
			if cdc.ConnFlags != 0 {
				w.Op, w.ProdFlags, w.ConnFlags, w.DiffCons = decode.RWWICtrl, cdc.ProdFlags, cdc.ConnFlags, 0
			} else {
				w.Op = ops[turn[src]%len(ops)]
				turn[src]++
				if w.Op == decode.RWWIDataCredits || w.Op == decode.RWWIDataFlagsCreds {
					w.Credits, owe[src] = owe[src], 0
				}
			}
			wr := pending[src]
			pending[src] = nil
			var data []byte
			va, rkey, ci := uint64(0), uint32(0), f.CI
			if wr != nil {
				var reth decode.RETH
				if err := reth.DecodeFromBytes(wr.Data[RoCESMCOff:], gopacket.NilDecodeFeedback); err != nil {
					t.Fatal(err)
				}
				data = reth.Payload[:reth.DMALen]
				base := reth.VA &^ (64<<10 - 1) // pingpong's RMBs are 64 KiB aligned
				va, rkey, ci = base, reth.RKey, wr.CI
			}
			chunks := [][]byte{data}
			if o := off[src]; o+len(data) > rmbe {
				chunks = [][]byte{data[:rmbe-o], data[rmbe-o:]}
			}
			for i, c := range chunks {
				wi := w
				if i > 0 {
					wi = decode.RWWI{Token: w.Token, Op: decode.RWWIData}
				}
				reth := decode.RETH{VA: va + uint64(off[src]), RKey: rkey, DMALen: uint32(len(c))}
				if wr == nil {
					reth.VA = 0
				}
				frame := roceFrame(t, d, decode.BTH{Opcode: decode.BTHOpcode(opWriteOnlyImm), AckReq: true},
					&reth, &decode.ImmDt{Imm: decode.MakeRWWI(wi)}, gopacket.Payload(c))
				rb.extra(t, src, testutil.Packet{CI: later1(ci, time.Duration(i)*time.Microsecond), Data: frame})
				off[src] = (off[src] + len(c)) % rmbe
				owe[dst]++
			}
			rb.mapLast(src, psn, wr != nil)
		case op == opSendOnly && decode.LLCType(d[RoCESMCOff]).Base() == decode.LLCAddLink:
			rb.drop(src, psn) // one link only: no ADD_LINK
		case op == opSendOnly && decode.LLCType(d[RoCESMCOff]).Base() == decode.LLCConfirmLink:
			d[RoCESMCOff+34] = 1 // max_links, as the CLC agreed
			rb.request(t, src, f)
		default:
			rb.request(t, src, f)
		}
	})
	return rb.out
}

// anckDecline is decline-nordma.pcap with the client's Proposal ANCK's
// and the server's Decline code set to code.
func anckDecline(t testing.TB, name string, code decode.DeclineCode) string {
	t.Helper()
	fs := declineNordma(t)
	resizeCLC(t, fs, dnProposal, func(m []byte) []byte {
		copy(m[52:55], decode.AlibabaOUI[:])
		m[55], m[56] = 0, byte(decode.AliValid|decode.AliCredits|decode.AliRWWI)
		return m
	})
	resizeCLC(t, fs, dnDecline, func(m []byte) []byte {
		binary.BigEndian.PutUint32(m[16:], uint32(code))
		return m
	})
	return write(t, name, fs)
}

// Dump device frames (ANCK smc_dump_fill_skb_header): the header size and
// type values are not public; the vector uses a 16-byte header and types
// 1 (data) and 2 (CDC), which the decoder must learn, not know.
const (
	dumpHdrLen  = 16
	dumpTypeRaw = 1
	dumpTypeCDC = 2
)

// anckDump is what the client's dump device records of the credits
// connection (anckCredits), after the handshake the NIC's capture shows:
// each CDC the client sends (TX, as smc_cdc_msg_send dumps it before
// posting), and for each CDC of the server the data it announces
// (smc_dump_raw_data) then the CDC (smc_cdc_msg_recv_action), all from
// the sender's TCP address and port to the receiver's.
func anckDump(t testing.TB) []testutil.Packet {
	t.Helper()
	fs := anckCredits(t, 64, 64, 0)
	var out []testutil.Packet
	var cli, srv [6]byte                              // IPv4 address and TCP port
	mac := []byte{0x02, 0x00, 0x5e, 0x00, 0x53, 0x01} // the dummy device's
	var data []byte                                   // the server's data not yet announced
	for i, f := range fs {
		d := f.Data
		if !isRoCE(d) {
			if i < ppConfirmCLC && len(d) > RoCEIPOff+40 && d[RoCEIPOff+9] == 6 { // the handshake, on the NIC
				out = append(out, f)
				to := RoCEIPOff + 20
				if d[to+13]&0x02 != 0 && d[to+13]&0x10 == 0 { // SYN: client to server
					copy(cli[:4], d[RoCEIPOff+12:])
					copy(cli[4:], d[to:to+2])
					copy(srv[:4], d[RoCEIPOff+16:])
					copy(srv[4:], d[to+2:to+4])
				}
			}
			continue
		}
		src := d[RoCEIPOff+15]
		from, to := srv, cli
		if src == hostClient {
			from, to = cli, srv
		}
		switch {
		case d[bthOff] == opWriteOnly && src == hostServer:
			var reth decode.RETH
			if err := reth.DecodeFromBytes(d[RoCESMCOff:], gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			data = append(data, reth.Payload[:reth.DMALen]...)
		case d[bthOff] == opSendOnly && d[RoCESMCOff] == decode.CDCType:
			if len(data) > 0 {
				out = append(out, testutil.Packet{CI: f.CI, Data: dumpFrame(t, mac, from, to, dumpTypeRaw, data)})
				data = nil
			}
			cdc := append(append([]byte(nil), d[RoCESMCOff:RoCESMCOff+44]...), 0, 0, 0, 0) // sizeof(struct smc_cdc_msg)
			out = append(out, testutil.Packet{CI: f.CI, Data: dumpFrame(t, mac, from, to, dumpTypeCDC, cdc)})
		}
	}
	for i := range out {
		out[i].CI.CaptureLength, out[i].CI.Length = len(out[i].Data), len(out[i].Data)
	}
	return out
}

// dumpFrame is one dump device frame from the TCP endpoint from (address,
// port) to to.
func dumpFrame(t testing.TB, mac []byte, from, to [6]byte, typ uint8, data []byte) []byte {
	t.Helper()
	eth := layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeIPv4}
	ip := layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: from[:4], DstIP: to[:4]}
	udp := layers.UDP{SrcPort: layers.UDPPort(binary.BigEndian.Uint16(from[4:])), DstPort: layers.UDPPort(binary.BigEndian.Uint16(to[4:]))}
	buf := gopacket.NewSerializeBuffer()
	// ANCK leaves the IPv4 and UDP checksums 0 (CHECKSUM_UNNECESSARY).
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &eth, &ip, &udp,
		gopacket.Payload(decode.SerializeDump(dumpHdrLen, 2, 1, typ, data))); err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// RC opcodes and offsets the ANCK vectors use.
const (
	opSendOnly        = 0x04
	opWriteOnly       = 0x0A
	opWriteOnlyImm    = 0x0B
	opWriteFirst      = 0x06
	opWriteLastImm    = 0x09
	llcInitCreditsOff = 36 // ADD_LINK init_credits (ANCK struct smc_llc_msg_add_link)
)

func isRoCE(d []byte) bool {
	return len(d) > RoCESMCOff && d[RoCEIPOff+9] == 17 && binary.BigEndian.Uint16(d[RoCEIPOff+22:]) == 4791
}

func later1(ci gopacket.CaptureInfo, d time.Duration) gopacket.CaptureInfo {
	ci.Timestamp = ci.Timestamp.Add(d)
	return ci
}

// roceFrame builds an RC packet on tmpl's link (its Ethernet, IPv4 and
// UDP headers, BTH QP): the BTH b (opcode, AckReq) with tmpl's QP and
// P_Key, then ls; lengths, IPv4 checksum and ICRC are made right. The PSN
// is set by the rebuilder.
func roceFrame(t testing.TB, tmpl []byte, b decode.BTH, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	var old decode.BTH
	if err := old.DecodeFromBytes(tmpl[bthOff:], gopacket.NilDecodeFeedback); err != nil {
		t.Fatal(err)
	}
	b.DestQP, b.PKey, b.TVer = old.DestQP, old.PKey, old.TVer
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, append([]gopacket.SerializableLayer{&b}, ls...)...); err != nil {
		t.Fatal(err)
	}
	d := append(append([]byte(nil), tmpl[:bthOff]...), buf.Bytes()...)
	fixRoCELengths(t, d)
	return d
}

func fixRoCELengths(t testing.TB, d []byte) {
	t.Helper()
	ip := d[RoCEIPOff:]
	binary.BigEndian.PutUint16(ip[2:], uint16(len(d)-RoCEIPOff))
	binary.BigEndian.PutUint16(ip[24:], uint16(len(d)-RoCEIPOff-20))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^csum(0, ip[:20]))
	FixICRC(t, d)
}

// rebuilder writes a capture's RC requests with new PSNs, each side's
// numbered on from its first, as frames are added, merged or dropped, and
// the acknowledgements to the PSNs that replace the ones they acked.
type rebuilder struct {
	next    map[byte]uint32
	started map[byte]bool
	psn     map[byte]map[uint32]uint32 // old request PSN -> new, per requester
	lastAck map[byte]uint32            // per requester, the last PSN acked
	out     []testutil.Packet
}

func newRebuilder() *rebuilder {
	return &rebuilder{next: map[byte]uint32{}, started: map[byte]bool{},
		psn: map[byte]map[uint32]uint32{hostServer: {}, hostClient: {}}, lastAck: map[byte]uint32{}}
}

// rebuild feeds fs through r: frames other than RC requests pass
// (acknowledgements renumbered), each request goes to fn with its index
// and its sender (the last byte of its IPv4 source).
func (r *rebuilder) rebuild(t testing.TB, fs []testutil.Packet, fn func(i int, f testutil.Packet, src byte)) {
	for i, f := range fs {
		switch d := f.Data; {
		case !isRoCE(d):
			r.out = append(r.out, f)
		case d[bthOff] == opACK:
			r.ack(t, f)
		default:
			fn(i, f, d[RoCEIPOff+15])
		}
	}
}

func (r *rebuilder) start(src byte, old uint32) {
	if !r.started[src] {
		r.started[src], r.next[src] = true, old
	}
}

// request sends f with the requester's next PSN.
func (r *rebuilder) request(t testing.TB, src byte, f testutil.Packet) {
	old := bthPSN(f.Data)
	r.start(src, old)
	if p, ok := r.psn[src][old]; ok { // sent again: on its new PSN again
		d := append([]byte(nil), f.Data...)
		setPSN(d, p)
		FixICRC(t, d)
		f.Data = d
		r.out = append(r.out, f)
		return
	}
	r.psn[src][old] = r.next[src]
	r.extra(t, src, f)
}

// extra sends a frame that replaces or adds to the originals.
func (r *rebuilder) extra(t testing.TB, src byte, f testutil.Packet) {
	d := append([]byte(nil), f.Data...)
	setPSN(d, r.next[src]&0xFFFFFF)
	FixICRC(t, d)
	f.Data = d
	f.CI.CaptureLength, f.CI.Length = len(d), len(d)
	r.out = append(r.out, f)
	r.next[src]++
}

// merged: the original request old is sent as part of a later frame.
func (r *rebuilder) merged(src byte, old uint32) { r.start(src, old) }

// mapLast: the original request old (and the one before it, when write)
// was replaced by the frames just sent.
func (r *rebuilder) mapLast(src byte, old uint32, write bool) {
	r.psn[src][old] = (r.next[src] - 1) & 0xFFFFFF
	if write {
		r.psn[src][(old-1)&0xFFFFFF] = r.psn[src][old]
	}
}

// drop: the original request old is not sent.
func (r *rebuilder) drop(src byte, old uint32) { r.start(src, old) }

// ack sends an acknowledgement of the requester's PSN it now stands for,
// once: acks of requests merged into one, or dropped, are left out.
func (r *rebuilder) ack(t testing.TB, f testutil.Packet) {
	req := f.Data[RoCEIPOff+19] // the ACK goes to the requester
	p, ok := r.psn[req][bthPSN(f.Data)]
	if !ok || (r.lastAck[req] == p && len(r.out) > 0) {
		return
	}
	r.lastAck[req] = p
	d := append([]byte(nil), f.Data...)
	setPSN(d, p)
	FixICRC(t, d)
	f.Data = d
	r.out = append(r.out, f)
}

// RWWIMultiPacket is the rwwi vector with the client's first write with
// immediate (frame 18, 24 bytes) sent as two packets: RDMA WRITE First
// (BTH, RETH for the whole 24 bytes, 12 bytes) and RDMA WRITE Last with
// Immediate (BTH, ImmDt, 12 bytes), as a requester splits a message
// longer than the path MTU; the later PSNs of the client move up by one.
// It returns the path, in t.TempDir().
func RWWIMultiPacket(t testing.TB) string {
	t.Helper()
	const target = 18
	fs := anckRWWI(t)
	rb := newRebuilder()
	rb.rebuild(t, fs, func(i int, f testutil.Packet, src byte) {
		d := f.Data
		switch {
		case i+1 == target:
			var reth decode.RETH
			if err := reth.DecodeFromBytes(d[RoCESMCOff:], gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			imm, data := binary.BigEndian.Uint32(reth.Payload), reth.Payload[4:4+reth.DMALen]
			old := bthPSN(d)
			rb.start(src, old)
			first := roceFrame(t, d, decode.BTH{Opcode: decode.BTHOpcode(opWriteFirst)}, &reth, gopacket.Payload(data[:12]))
			rb.extra(t, src, testutil.Packet{CI: f.CI, Data: first})
			last := roceFrame(t, d, decode.BTH{Opcode: decode.BTHOpcode(opWriteLastImm), AckReq: true}, &decode.ImmDt{Imm: imm}, gopacket.Payload(data[12:]))
			rb.extra(t, src, testutil.Packet{CI: later1(f.CI, time.Microsecond), Data: last})
			rb.mapLast(src, old, false)
		default:
			rb.request(t, src, f)
		}
	})
	return write(t, "rwwi-multipacket", rb.out)
}
