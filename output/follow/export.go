package follow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/track"
)

// Export reads the capture in twice and writes out (pcapng): every
// SMC-R connection as the plain TCP connection its application saw (its
// 4-tuple, a handshake, its bytes in order as segments with sequence
// numbers and checksums right, a gap where the capture lacks bytes, FIN
// at its SMC close; stamped with the times of the CDCs that released the
// bytes, each with a comment naming its SMC frames), and every other
// frame unchanged: fallback connections, non-SMC traffic. The RoCE frames
// of SMC-R links and the TCP segments of the connections exported (their
// CLC handshake) are left out: the synthesized connection replaces them.
//
// The first pass finds the connections (their 4-tuples) whose streams the
// second one writes, so that their own TCP segments can be left out as
// they come; neither pass holds a stream.
func Export(ctx context.Context, in, out string) (st ExportStats, err error) {
	tuples := map[[2]netip.AddrPort]bool{}
	if _, err := eachFrame(ctx, in, tupleSink(tuples), nil); err != nil && !errors.Is(err, capture.ErrTruncatedFile) {
		return st, err
	}
	// A file cut short is exported up to the cut, and a file damaged in
	// places past its damage, as smcdump prints them; the second pass
	// returns the same error after writing what it read.
	f, err := os.Create(out)
	if err != nil {
		return st, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	x := &exporter{tuples: tuples, conns: map[int]*tcpConn{}, st: &st}
	damage, err := eachFrame(ctx, in, x, func(r *capture.Reader, fr *capture.Frame, onLink bool) error {
		if x.w == nil {
			if err := x.open(f, r.LinkType()); err != nil {
				return err
			}
		}
		if x.err != nil {
			return x.err
		}
		if onLink || x.smcTCP(fr) {
			st.Replaced++
			return nil
		}
		st.Passed++
		return x.w.WritePacket(fr.CI, fr.Data)
	})
	if x.w != nil {
		if ferr := x.w.Flush(); err == nil {
			err = ferr
		}
	}
	if err == nil {
		err = x.err
	}
	if err == nil {
		err = damage
	}
	return st, err
}

// ExportStats counts what Export wrote.
type ExportStats struct {
	Conns     int // SMC-R connections written as TCP
	Segments  int // synthesized frames
	Passed    int // frames passed through unchanged
	Replaced  int // frames left out: RoCE of SMC-R links, TCP of exported connections
	NoTuple   int // connections with bytes but no 4-tuple (the capture joined them mid-stream): not exported
	GapsBytes uint64
}

// eachFrame feeds every frame of the capture to a tracker with sink and
// then calls fn (when set) with it and whether the tracker tied it to an
// SMC-R link. Read to its end, it returns the file's damage that the
// reader read past (capture.Reader.Damage), if any, apart from an error
// that ended the read.
func eachFrame(ctx context.Context, name string, sink track.StreamSink, fn func(*capture.Reader, *capture.Frame, bool) error) (damage, err error) {
	r, err := capture.OpenContext(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tr := track.New(track.Options{Unshared: true, Stream: sink})
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			// What the tracker held for copies that did not come is
			// followed now, as smcdump's -z views follow it.
			tr.EndCapture(time.Time{})
			return r.Damage(), nil
		}
		if err != nil {
			return nil, err
		}
		tr.Feed(f)
		if fn != nil {
			if err := fn(r, f, tr.OnLink()); err != nil {
				return nil, err
			}
		}
	}
}

// tupleSink collects the 4-tuples of connections with stream bytes.
type tupleSink map[[2]netip.AddrPort]bool

func (m tupleSink) StreamChunk(ch *track.StreamChunk) {
	if c := ch.Conn; c.Client.IsValid() && c.Server.IsValid() {
		m[[2]netip.AddrPort{c.Client, c.Server}] = true
	}
}

// exporter is Export's second pass: a stream sink that writes segments.
type exporter struct {
	w      *pcapgo.NgWriter
	ethIf  int // interface of the synthesized frames (Ethernet)
	tuples map[[2]netip.AddrPort]bool
	conns  map[int]*tcpConn
	st     *ExportStats
	buf    gopacket.SerializeBuffer
	err    error
}

// tcpConn is one synthesized connection: the next sequence number each
// side sends (client, server).
type tcpConn struct {
	client, server netip.AddrPort
	next           [2]uint32
	fin            [2]bool
}

// Initial sequence numbers of the synthesized connections: any will do;
// fixed ones make the export reproducible.
const clientISN, serverISN = 0x10000000, 0x20000000

var (
	macClient = net.HardwareAddr{0x02, 0x53, 0x4d, 0x43, 0x00, 0x01}
	macServer = net.HardwareAddr{0x02, 0x53, 0x4d, 0x43, 0x00, 0x02}
)

// open starts the output with an interface of the input's link type for
// the frames passed through and, unless that is Ethernet, a second one
// for the synthesized frames.
func (x *exporter) open(f *os.File, lt layers.LinkType) error {
	w, err := pcapgo.NewNgWriterInterface(f, pcapgo.NgInterface{Name: "capture", LinkType: lt, SnapLength: 0}, pcapgo.NgWriterOptions{
		SectionInfo: pcapgo.NgSectionInfo{Application: "smcdump --export-tcp"},
	})
	if err != nil {
		return err
	}
	x.w = w
	if lt != layers.LinkTypeEthernet {
		if x.ethIf, err = w.AddInterface(pcapgo.NgInterface{Name: "smc-as-tcp", LinkType: layers.LinkTypeEthernet}); err != nil {
			return err
		}
	}
	x.buf = gopacket.NewSerializeBuffer()
	return nil
}

// smcTCP reports whether f is a TCP segment of a connection exported.
func (x *exporter) smcTCP(f *capture.Frame) bool {
	if f.TCP == nil {
		return false
	}
	var src, dst netip.Addr
	switch {
	case f.IPv4 != nil:
		src, _ = netip.AddrFromSlice(f.IPv4.SrcIP)
		dst, _ = netip.AddrFromSlice(f.IPv4.DstIP)
	case f.IPv6 != nil:
		src, _ = netip.AddrFromSlice(f.IPv6.SrcIP)
		dst, _ = netip.AddrFromSlice(f.IPv6.DstIP)
	}
	a := netip.AddrPortFrom(src.Unmap(), uint16(f.TCP.SrcPort))
	b := netip.AddrPortFrom(dst.Unmap(), uint16(f.TCP.DstPort))
	return x.tuples[[2]netip.AddrPort{a, b}] || x.tuples[[2]netip.AddrPort{b, a}]
}

// StreamChunk writes the segments of a chunk (the handshake before a
// connection's first).
func (x *exporter) StreamChunk(ch *track.StreamChunk) {
	if x.err != nil || x.w == nil {
		return
	}
	c := ch.Conn
	tc := x.conns[c.ID]
	if tc == nil {
		if !c.Client.IsValid() || !c.Server.IsValid() {
			x.st.NoTuple++
			x.conns[c.ID] = &tcpConn{} // counted once
			return
		}
		tc = &tcpConn{client: c.Client, server: c.Server, next: [2]uint32{clientISN, serverISN}}
		x.conns[c.ID] = tc
		x.st.Conns++
		note := fmt.Sprintf("smc: connection %d (tracker), handshake synthesized at its first CDC (frame %d)", c.ID, ch.Frame)
		x.segment(tc, ch, track.DirC2S, flags{syn: true}, nil, note)
		tc.next[0]++
		x.segment(tc, ch, track.DirS2C, flags{syn: true, ack: true}, nil, note)
		tc.next[1]++
		x.segment(tc, ch, track.DirC2S, flags{ack: true}, nil, note)
	}
	if !tc.client.IsValid() {
		return
	}
	d := ch.Dir
	switch {
	case ch.End:
		if !tc.fin[d] {
			x.segment(tc, ch, d, flags{fin: true, ack: true}, nil, fmt.Sprintf("smc: connection %d %v closed by CDC frame %d", c.ID, d, ch.Frame))
			tc.next[d]++
			tc.fin[d] = true
		}
		if tc.fin[0] && tc.fin[1] {
			// Both sides closed: nothing more comes for it, and the
			// export's memory follows the open connections.
			delete(x.conns, c.ID)
		}
	case ch.Data == nil:
		// The bytes are missing: their sequence numbers are skipped, as a
		// capture that missed a segment shows it ("previous segment not
		// captured"). A gap of unknown length cannot be placed.
		tc.next[d] += uint32(ch.Gap)
		x.st.GapsBytes += ch.Gap
	default:
		note := fmt.Sprintf("smc: connection %d %v, released by CDC frame %d, from RDMA WRITE frames %s", c.ID, d, ch.Frame, frameList(ch.Writes))
		Segments(ch.Data, func(b []byte) {
			x.segment(tc, ch, d, flags{ack: true, psh: true}, b, note)
			tc.next[d] += uint32(len(b))
		})
	}
}

type flags struct{ syn, ack, psh, fin bool }

// segment writes one synthesized TCP segment of direction d.
func (x *exporter) segment(tc *tcpConn, ch *track.StreamChunk, d track.Dir, fl flags, payload []byte, note string) {
	if x.err != nil {
		return
	}
	src, dst, smac, dmac := tc.client, tc.server, macClient, macServer
	if d == track.DirS2C {
		src, dst, smac, dmac = dst, src, dmac, smac
	}
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()),
		Seq: tc.next[d], SYN: fl.syn, ACK: fl.ack, PSH: fl.psh, FIN: fl.fin, Window: 65535,
	}
	if fl.ack {
		tcp.Ack = tc.next[d^1]
	}
	eth := &layers.Ethernet{SrcMAC: smac, DstMAC: dmac}
	var net gopacket.NetworkLayer
	var ls []gopacket.SerializableLayer
	if src.Addr().Is4() {
		eth.EthernetType = layers.EthernetTypeIPv4
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice(), Flags: layers.IPv4DontFragment}
		net, ls = ip, []gopacket.SerializableLayer{eth, ip}
	} else {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		net, ls = ip, []gopacket.SerializableLayer{eth, ip}
	}
	if err := tcp.SetNetworkLayerForChecksum(net); err != nil {
		x.err = err
		return
	}
	ls = append(ls, tcp, gopacket.Payload(payload))
	if err := gopacket.SerializeLayers(x.buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		x.err = fmt.Errorf("frame %d: synthesizing connection %d: %w", ch.Frame, ch.Conn.ID, err)
		return
	}
	data := x.buf.Bytes()
	ci := gopacket.CaptureInfo{Timestamp: ch.Time, CaptureLength: len(data), Length: len(data), InterfaceIndex: x.ethIf}
	x.st.Segments++
	x.err = x.w.WritePacketWithOptions(ci, data, pcapgo.NgPacketOptions{Comments: []string{note}})
}

// frameList names frames compactly: "12,14-17".
func frameList(fs []int) string {
	var b strings.Builder
	for i := 0; i < len(fs); {
		j := i
		for j+1 < len(fs) && fs[j+1] == fs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(fs[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(fs[j]))
		}
		i = j + 1
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}
