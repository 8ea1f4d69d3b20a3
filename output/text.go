package output

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/numfmt"
)

// textPrinter writes "N  time  src -> dst  PROTO  summary", one line per
// frame (one per CLC message when a segment completes several), optionally
// followed by the -V field tree and the -x hex dump.
type textPrinter struct {
	w       *bufio.Writer
	verbose bool
	hex     bool
	base    *time.Time
	line    []byte
	ends    endpointCache
	cols    []columns.Column // -o column.format: the line's columns (nil: the default line)
	tree    treeScratch      // -V
}

// textLineRoom is the room in the writer's buffer in which a line is
// appended in place: a line longer than that is appended there all the
// same, into a new array the writer then copies.
const textLineRoom = 512

// headersOnly reports whether the printer reads no more of a frame of the
// direct path's kinds than the layers capture.Reader.SetDirectFeed fills:
// the default line, without -V's tree, -x's bytes or -o's fields.
func (p *textPrinter) headersOnly() bool { return !p.verbose && !p.hex && p.cols == nil }

func (p *textPrinter) begin() error { return nil }
func (p *textPrinter) end() error   { return nil }

func (p *textPrinter) frame(f *capture.Frame) error {
	line := func(clc int) {
		// Straight into the writer's buffer where it has room: copied
		// there once less.
		inPlace := p.w.Available() >= textLineRoom
		dst := p.line[:0]
		if inPlace {
			dst = p.w.AvailableBuffer()
		}
		if p.cols != nil {
			dst = appendColumns(dst, f, *p.base, clc, p.cols)
		} else {
			dst = appendLine(dst, f, *p.base, clc, &p.ends)
		}
		if !inPlace {
			p.line = dst // grown, for the next line
		}
		p.w.Write(dst)
	}
	if len(f.CLC) == 0 {
		line(-1)
	}
	for i := range f.CLC {
		line(i)
	}
	if p.verbose {
		writeTree(p.w, f, &p.tree)
	}
	if p.hex {
		writeHex(p.w, f.Data)
	}
	if p.verbose || p.hex {
		p.w.WriteByte('\n')
	}
	return nil
}

// AppendLine appends the text line of frame f (newline included). clc
// selects which of f.CLC the line describes; -1 describes the frame.
// Times are seconds since base.
func AppendLine(dst []byte, f *capture.Frame, base time.Time, clc int) []byte {
	return appendLine(dst, f, base, clc, nil)
}

// appendLine is AppendLine with the endpoints of recent lines remembered
// in ends (nil: none).
func appendLine(dst []byte, f *capture.Frame, base time.Time, clc int, ends *endpointCache) []byte {
	dst = numfmt.AppendInt(dst, int64(f.Number))
	dst = append(dst, "  "...)
	d := since(f.CI.Timestamp, base)
	if base.IsZero() {
		d = 0
	}
	dst = AppendSeconds(dst, d, f.ColumnDigits())
	dst = append(dst, "  "...)
	dst = ends.appendEndpoints(dst, f)
	dst = append(dst, "  "...)
	dst = append(dst, Protocol(f, clc)...)
	dst = append(dst, "  "...)
	dst = AppendInfo(dst, f, clc)
	return append(dst, '\n')
}

// appendCarrier appends, for a frame a mirror session or an overlay
// carried, who carried it: " [ERSPAN II session 7 seq 45]". The line is
// the carried frame's, as in tshark's columns; in a capture that holds a
// frame and its mirrored copy, this is what tells them apart (tcpdump
// prints the carrier's headers first).
func appendCarrier(dst []byte, f *capture.Frame) []byte {
	t := f.Tunnel
	if t == nil {
		return dst
	}
	dst = t.AppendName(append(dst, " ["...))
	if t.HasSeq {
		dst = numfmt.AppendInt(append(dst, " seq "...), int64(t.Seq))
	}
	if t.Outer() {
		// Nested: the session that numbered it is the outer one.
		s := &t.Session
		dst = s.AppendName(append(dst, " in "...))
		dst = numfmt.AppendInt(append(dst, " seq "...), int64(s.Seq))
	}
	return append(dst, ']')
}

// appendColumns is appendLine in the columns of a layout (-o
// column.format): each column's text, two spaces apart, padded or cut to
// its width where it has one. Info keeps the line's problem notes (a
// frame.error is in every output mode).
func appendColumns(dst []byte, f *capture.Frame, base time.Time, clc int, cols []columns.Column) []byte {
	var src, to Endpoint
	ends := false // src and to are the frame's
	for i, c := range cols {
		if (c.Kind == columns.Source || c.Kind == columns.Destination) && !ends {
			src, to = Endpoints(f)
			ends = true
		}
		if i > 0 {
			dst = append(dst, "  "...)
		}
		start := len(dst)
		switch c.Kind {
		case columns.No:
			dst = numfmt.AppendInt(dst, int64(f.Number))
		case columns.Time:
			d := since(f.CI.Timestamp, base)
			if base.IsZero() {
				d = 0
			}
			dst = AppendSeconds(dst, d, f.ColumnDigits())
		case columns.Source:
			dst = src.AppendTo(dst)
		case columns.Destination:
			dst = to.AppendTo(dst)
		case columns.Protocol:
			dst = append(dst, Protocol(f, clc)...)
		case columns.Length:
			dst = numfmt.AppendInt(dst, int64(f.CI.Length))
		case columns.Info:
			dst = AppendInfo(dst, f, clc)
		case columns.Field:
			dst = append(dst, columns.FieldText(f.Fields(), c.Field)...)
		}
		if c.Width > 0 {
			dst = fitWidth(dst, start, c.Width, i == len(cols)-1)
		}
	}
	return append(dst, '\n')
}

// fitWidth pads dst[start:] with spaces to width characters (not the
// line's last column: no trailing blanks), or cuts it to width with an
// ellipsis, as the browser's list does.
func fitWidth(dst []byte, start, width int, last bool) []byte {
	n := utf8.RuneCount(dst[start:])
	if n <= width {
		for ; n < width && !last; n++ {
			dst = append(dst, ' ')
		}
		return dst
	}
	cut := start
	for range width - 1 {
		_, size := utf8.DecodeRune(dst[cut:])
		cut += size
	}
	return append(dst[:cut], "…"...)
}

// since is t.Sub(base) for the times of a capture. Sub checks every result
// for overflow by adding it back, which was a tenth of a text line's cost;
// times under a century apart cannot overflow, and others go to Sub.
func since(t, base time.Time) time.Duration {
	ds := t.Unix() - base.Unix()
	if ds > 3e9 || ds < -3e9 {
		return t.Sub(base)
	}
	return time.Duration(ds)*time.Second + time.Duration(t.Nanosecond()-base.Nanosecond())
}

// AppendSeconds appends d in seconds with as many decimals as digits
// says (a frame's ColumnDigits: the capture's resolution, as tshark's
// time columns follow it), rounded to the last one.
func AppendSeconds(dst []byte, d time.Duration, digits uint8) []byte {
	switch {
	case digits == 6:
		return appendSeconds(dst, d)
	case digits >= 9 && d >= 0:
		// Nanosecond captures (pcapng's default in Linux tools): no
		// rounding, and divisions by a constant, which compile to
		// multiplies where the general path's by a variable power of ten
		// cost a tenth of a line.
		ns := uint64(d)
		dst = numfmt.AppendUint(dst, ns/1e9)
		return numfmt.AppendPadded(append(dst, '.'), ns%1e9, 9)
	}
	digits = min(digits, 9)
	ns := int64(d)
	if ns < 0 {
		if ns == math.MinInt64 {
			return strconv.AppendFloat(dst, d.Seconds(), 'f', int(digits), 64)
		}
		dst, ns = append(dst, '-'), -ns
	}
	q := int64(pow10[9-digits])
	u := uint64((ns/q + (ns%q*2)/q)) // ns/q rounded half up, without overflow
	p := pow10[digits]
	dst = numfmt.AppendUint(dst, u/p)
	if digits == 0 {
		return dst
	}
	return numfmt.AppendPadded(append(dst, '.'), u%p, int(digits))
}

var pow10 = [10]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// appendSeconds appends d in seconds with six decimals, as
// strconv.AppendFloat(d.Seconds(), 'f', 6) does, from the integer
// nanoseconds: the float path was a tenth of the cost of a line. A time
// exactly half a microsecond off (where the float's rounding is its own),
// a negative one, and one of over 13 days (2^50 ns: beyond it the float's
// precision nears a nanosecond, and with it the rounding of near-ties)
// take the float path.
func appendSeconds(dst []byte, d time.Duration) []byte {
	ns := int64(d)
	if ns < 0 || ns >= 1<<50 || ns%1000 == 500 {
		return strconv.AppendFloat(dst, d.Seconds(), 'f', 6, 64)
	}
	us := (ns + 500) / 1000
	dst = numfmt.AppendUint(dst, uint64(us/1e6))
	return numfmt.AppendPadded(append(dst, '.'), uint64(us%1e6), 6)
}

// endpointCache remembers the endpoint text of the last two IPv4
// address and port pairs: a RoCE link's two directions, or a TCP
// connection's, fill most lines, and copying their text costs a third of
// formatting it.
type endpointCache struct {
	keys [2]endpointKey
	text [2][]byte
	next int
}

// endpointKey is what the endpoint text of a plain IPv4 line is made of.
type endpointKey struct {
	addrs uint64 // source and destination address
	ports uint32 // TCP source and destination port
	tcp   bool
	valid bool
}

// appendEndpoints appends appendEndpoints(dst, f), from the cache when a
// recent line had the same endpoints (c may be nil: no cache).
func (c *endpointCache) appendEndpoints(dst []byte, f *capture.Frame) []byte {
	ip := f.IPv4
	if c == nil || ip == nil || f.GRH != nil || len(ip.SrcIP) != 4 || len(ip.DstIP) != 4 {
		return appendEndpoints(dst, f)
	}
	k := endpointKey{addrs: uint64(binary.BigEndian.Uint32(ip.SrcIP))<<32 | uint64(binary.BigEndian.Uint32(ip.DstIP)), valid: true}
	if sp, dp, ok := ports(f); ok {
		k.ports, k.tcp = uint32(sp)<<16|uint32(dp), true
	}
	for i := range c.keys {
		if c.keys[i] == k {
			return append(dst, c.text[i]...)
		}
	}
	n := len(dst)
	dst = appendEndpoints(dst, f)
	i := c.next
	c.next = (i + 1) % len(c.keys)
	c.keys[i], c.text[i] = k, append(c.text[i][:0], dst[n:]...)
	return dst
}

func appendEndpoints(dst []byte, f *capture.Frame) []byte {
	if f.IPv4 != nil && f.GRH == nil && len(f.IPv4.SrcIP) == 4 && len(f.IPv4.DstIP) == 4 {
		dst = numfmt.AppendIPv4(dst, [4]byte(f.IPv4.SrcIP))
		dst = appendPort(dst, f)
		dst = append(dst, " -> "...)
		dst = numfmt.AppendIPv4(dst, [4]byte(f.IPv4.DstIP))
		return appendPortDst(dst, f)
	}
	src, to := Endpoints(f)
	dst = src.AppendTo(dst)
	dst = append(dst, " -> "...)
	return to.AppendTo(dst)
}

// Endpoint is one end of a frame as its text line names it: an IP address
// or GID, with the port of a TCP segment, or a MAC address when the frame
// has no IP. Lists sort on it (Compare), not on its text.
type Endpoint struct {
	Kind EndpointKind
	Addr netip.Addr // KindAddr
	Port uint16     // KindAddr of a TCP segment (HasPort)
	// HasPort says Port is a TCP port (port 0 is one too).
	HasPort bool
	MAC     [6]byte // KindMAC
}

// EndpointKind says which of Endpoint's fields name it.
type EndpointKind uint8

// The endpoint kinds, in the order Compare sorts them.
const (
	EndpointNone EndpointKind = iota // no Ethernet, IP or GID: "?"
	EndpointMAC
	EndpointAddr
)

// Endpoints returns the source and destination of frame f: the GIDs of a
// RoCEv1 frame, else the IPv4 or IPv6 addresses (with TCP ports), else the
// Ethernet addresses.
func Endpoints(f *capture.Frame) (src, dst Endpoint) {
	switch {
	case f.GRH != nil:
		src, dst = Endpoint{Kind: EndpointAddr, Addr: f.GRH.SGID}, Endpoint{Kind: EndpointAddr, Addr: f.GRH.DGID}
	case f.IPv4 != nil:
		src, dst = Endpoint{Kind: EndpointAddr, Addr: addrOf(f.IPv4.SrcIP)}, Endpoint{Kind: EndpointAddr, Addr: addrOf(f.IPv4.DstIP)}
	case f.IPv6 != nil:
		src, dst = Endpoint{Kind: EndpointAddr, Addr: addrOf(f.IPv6.SrcIP)}, Endpoint{Kind: EndpointAddr, Addr: addrOf(f.IPv6.DstIP)}
	case f.Eth != nil:
		src, dst = Endpoint{Kind: EndpointMAC}, Endpoint{Kind: EndpointMAC}
		copy(src.MAC[:], f.Eth.SrcMAC)
		copy(dst.MAC[:], f.Eth.DstMAC)
		return src, dst
	default:
		return src, dst
	}
	if sp, dp, ok := ports(f); ok {
		src.Port, src.HasPort = sp, true
		dst.Port, dst.HasPort = dp, true
	}
	return src, dst
}

// AppendTo appends the endpoint as the text line writes it: an IPv6
// address with a port in brackets ([fd00:10::2]:57284), since its own
// colons would make the port ambiguous; "?" for none.
func (e Endpoint) AppendTo(dst []byte) []byte {
	switch {
	case e.Kind == EndpointNone:
		return append(dst, '?')
	case e.Kind == EndpointMAC:
		return appendMAC(dst, e.MAC[:])
	case !e.HasPort:
		return e.Addr.AppendTo(dst)
	case e.Addr.Is6():
		dst = e.Addr.AppendTo(append(dst, '['))
		dst = append(dst, ']')
	default:
		dst = e.Addr.AppendTo(dst)
	}
	return numfmt.AppendUint(append(dst, ':'), uint64(e.Port))
}

func (e Endpoint) String() string { return string(e.AppendTo(nil)) }

// Compare orders endpoints by kind, address (IPv4 before IPv6, as
// netip.Addr.Compare does), port and MAC.
func (e Endpoint) Compare(o Endpoint) int {
	if e.Kind != o.Kind {
		return int(e.Kind) - int(o.Kind)
	}
	if c := e.Addr.Compare(o.Addr); c != 0 {
		return c
	}
	if e.Port != o.Port {
		return int(e.Port) - int(o.Port)
	}
	return bytes.Compare(e.MAC[:], o.MAC[:])
}

// appendPort and appendPortDst append ":port" of a TCP segment, or of a
// frame of ANCK's dump device (its UDP ports are the TCP connection's).
func appendPort(dst []byte, f *capture.Frame) []byte {
	if p, _, ok := ports(f); ok {
		return numfmt.AppendUint(append(dst, ':'), uint64(p))
	}
	return dst
}

func appendPortDst(dst []byte, f *capture.Frame) []byte {
	if _, p, ok := ports(f); ok {
		return numfmt.AppendUint(append(dst, ':'), uint64(p))
	}
	return dst
}

// ports are the ports a line names: a TCP segment's, or the connection's
// of a dump device frame.
func ports(f *capture.Frame) (src, dst uint16, ok bool) {
	if t := f.TCPHeader(); t != nil {
		return uint16(t.SrcPort), uint16(t.DstPort), true
	}
	if f.Dump != nil && f.UDP != nil {
		return uint16(f.UDP.SrcPort), uint16(f.UDP.DstPort), true
	}
	return 0, 0, false
}

// addrOf converts without allocating; a length other than 4 or 16 gives the
// zero Addr.
func addrOf(ip []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a
}

const hexDigits = "0123456789abcdef"

func appendMAC(dst []byte, m []byte) []byte {
	for i, b := range m {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
	}
	return dst
}

// lineLayer is the layer a text line describes: the highest decoded.
type lineLayer uint8

const (
	layerNone lineLayer = iota
	layerCLC
	layerLLC
	layerCDC
	layerRoCE
	layerTCP
	layerUDP
	layerIPv4
	layerIPv6
	layerEth
	layerRWWI // ANCK's write-with-immediate
	layerDump // ANCK's dump device (data; a CDC is layerCDC)
)

// layerNames are the PROTO column's words.
var layerNames = [...]string{"?", "CLC", "LLC", "CDC", "RoCE", "TCP", "UDP", "IPv4", "IPv6", "ETH", "RWWI", "DUMP"}

// topLayer is the layer frame f's line describes (its clc-th CLC message
// when clc >= 0).
func topLayer(f *capture.Frame, clc int) lineLayer {
	switch {
	case clc >= 0:
		return layerCLC
	case f.LLC != nil:
		return layerLLC
	case f.CDC != nil:
		return layerCDC
	case f.RWWI != nil:
		return layerRWWI
	case f.Dump != nil:
		return layerDump
	case f.BTH != nil:
		return layerRoCE
	case f.TCP != nil, f.TCPCut != nil:
		return layerTCP
	case f.UDP != nil:
		return layerUDP
	case f.IPv4 != nil:
		return layerIPv4
	case f.IPv6 != nil:
		return layerIPv6
	case f.Eth != nil:
		return layerEth
	}
	return layerNone
}

// Protocol is the PROTO column of frame f's line (of its clc-th CLC
// message when clc >= 0): the highest layer decoded.
func Protocol(f *capture.Frame, clc int) string { return layerNames[topLayer(f, clc)] }

// AppendInfo appends what the line says after the PROTO column: the
// summary of the highest decoded layer, who carried the frame and what
// makes it less than the whole truth (cut, bad ICRC, decode errors). clc
// selects one of f.CLC; -1 on a segment that completes several CLC
// messages joins their summaries by " | " (one row per frame, as the
// browser lists them), the notes said once.
func AppendInfo(dst []byte, f *capture.Frame, clc int) []byte {
	if clc < 0 && len(f.CLC) > 0 {
		for i := range f.CLC {
			if i > 0 {
				dst = append(dst, " | "...)
			}
			dst = appendLayerSummary(dst, f, i, topLayer(f, i))
		}
	} else {
		dst = appendLayerSummary(dst, f, clc, topLayer(f, clc))
	}
	return appendProblems(appendCarrier(dst, f), f)
}

// appendLayerSummary writes the summary of layer l, with the RoCE
// transport header after SMC messages.
func appendLayerSummary(dst []byte, f *capture.Frame, clc int, l lineLayer) []byte {
	switch l {
	case layerCLC:
		return f.CLC[clc].AppendSummary(dst)
	case layerLLC:
		dst = f.LLC.AppendSummary(dst)
		return appendRoCE(append(dst, " | "...), f)
	case layerCDC:
		dst = f.CDC.AppendSummary(dst)
		if f.Dump != nil {
			return f.Dump.AppendSummary(append(dst, " | "...))
		}
		return appendRoCE(append(dst, " | "...), f)
	case layerRWWI:
		dst = f.RWWI.AppendSummary(dst)
		return appendRoCE(append(dst, " | "...), f)
	case layerDump:
		return f.Dump.AppendSummary(dst)
	case layerRoCE:
		// BTH's summary starts with "RoCE ", which the PROTO column says.
		n := len(dst)
		dst = appendRoCE(dst, f)
		if len(dst) >= n+5 && string(dst[n:n+5]) == "RoCE " {
			dst = append(dst[:n], dst[n+5:]...)
		}
		return dst
	case layerTCP:
		return appendTCP(dst, f)
	case layerUDP:
		dst = numfmt.AppendUint(dst, uint64(f.UDP.SrcPort))
		dst = append(dst, " -> "...)
		dst = numfmt.AppendUint(dst, uint64(f.UDP.DstPort))
		return appendLen(dst, len(f.UDP.Payload))
	case layerIPv4:
		dst = append(dst, "proto "...)
		return numfmt.AppendUint(dst, uint64(f.IPv4.Protocol))
	case layerIPv6:
		dst = append(dst, "next header "...)
		return numfmt.AppendUint(dst, uint64(f.IPv6.NextHeader))
	case layerEth:
		dst = append(dst, "type 0x"...)
		return numfmt.AppendHex(dst, uint64(f.Eth.EthernetType))
	}
	return append(dst, "undecoded"...)
}

func appendLen(dst []byte, n int) []byte {
	dst = append(dst, " len "...)
	return numfmt.AppendInt(dst, int64(n))
}

func appendRoCE(dst []byte, f *capture.Frame) []byte {
	dst = f.BTH.AppendSummary(dst)
	if f.RETH != nil {
		dst = append(dst, ' ')
		dst = f.RETH.AppendSummary(dst)
	}
	if f.LLC == nil && f.CDC == nil && f.AETH == nil && f.RETH == nil {
		dst = appendLen(dst, f.BTH.DataWireLen()) // as sent: a cut frame says so apart
	}
	return dst
}

func appendTCP(dst []byte, f *capture.Frame) []byte {
	t := f.TCPHeader()
	dst = append(dst, '[')
	n := len(dst)
	flag := func(on bool, name string) {
		if !on {
			return
		}
		if len(dst) > n {
			dst = append(dst, ", "...)
		}
		dst = append(dst, name...)
	}
	flag(t.SYN, "SYN")
	flag(t.FIN, "FIN")
	flag(t.RST, "RST")
	flag(t.PSH, "PSH")
	flag(t.ACK, "ACK")
	dst = append(dst, "] seq "...)
	dst = numfmt.AppendUint(dst, uint64(t.Seq))
	dst = appendLen(dst, f.TCPWireLen()) // as sent: a cut frame says so apart
	if t.SYN {
		switch smc, smco, known := f.SMCOptionShown(); {
		case smco:
			dst = append(dst, " SMC option (ANCK SMCO)"...)
		case smc:
			dst = append(dst, " SMC option"...)
		case !known:
			dst = append(dst, " SMC option not captured (options cut)"...)
		default:
			dst = append(dst, " no SMC option"...)
		}
	}
	return dst
}

// appendBadIPSum says an IPv4 header's checksum fails: sum is the one
// carried and the one computed.
func appendBadIPSum(dst []byte, sum [2]uint16) []byte {
	dst = append(dst, " [bad IPv4 header checksum 0x"...)
	dst = numfmt.AppendHexPadded(dst, uint64(sum[0]), 4)
	dst = append(dst, ", computed 0x"...)
	dst = numfmt.AppendHexPadded(dst, uint64(sum[1]), 4)
	return append(dst, ']')
}

// appendProblems flags what makes the line less than the whole truth.
func appendProblems(dst []byte, f *capture.Frame) []byte {
	if t := f.Tunnel; t != nil && t.Truncated && t.Claimed > 0 {
		dst = append(dst, " [cut by the mirror: "...)
		dst = append(dst, t.Kind.String()...)
		dst = numfmt.AppendInt(append(dst, " carried "...), int64(t.Carried))
		dst = numfmt.AppendInt(append(dst, " of "...), int64(t.Claimed))
		dst = append(dst, " bytes]"...)
	} else if t != nil && t.Truncated {
		dst = append(dst, " [cut by the mirror: "...)
		dst = append(dst, t.Kind.String()...)
		dst = append(dst, " T bit]"...)
	} else if f.Cut {
		dst = append(dst, " [cut by snaplen: "...)
		dst = numfmt.AppendInt(dst, int64(f.CI.CaptureLength))
		dst = append(dst, " of "...)
		dst = numfmt.AppendInt(dst, int64(f.CI.Length))
		dst = append(dst, " bytes]"...)
	}
	if f.TCPSum.Checked && !f.TCPSum.OK {
		dst = append(dst, " [bad TCP checksum 0x"...)
		dst = numfmt.AppendHexPadded(dst, uint64(f.TCPSum.Got), 4)
		dst = append(dst, ", computed 0x"...)
		dst = numfmt.AppendHexPadded(dst, uint64(f.TCPSum.Want), 4)
		dst = append(dst, ']')
	}
	if f.TCPSum.IPSumBad {
		dst = appendBadIPSum(dst, f.IPv4Sum())
	}
	if f.ICRC.IPSumBad {
		dst = appendBadIPSum(dst, f.ICRC.IPSum)
	} else if f.ICRC.Checked && !f.ICRC.OK {
		dst = append(dst, " [bad ICRC 0x"...)
		dst = appendHex32(dst, f.ICRC.Got)
		dst = append(dst, ", computed 0x"...)
		dst = appendHex32(dst, f.ICRC.Want)
		if m, ok := f.ICRCMend(); ok {
			// The one byte that explains it (decode.MendICRCRoCEv2).
			dst = appendSentAs(append(dst, ": "...), m)
		} else if m, exact, ok := f.ICRCMendSMC(); ok {
			// A CDC's or LLC message's bytes its sender sends as zeros,
			// and perhaps one more (capture.Frame.ICRCMendSMC).
			if f.CDC != nil {
				dst = append(dst, ": CDC reserved bytes sent as zeros"...)
			} else {
				dst = append(dst, ": LLC reserved bytes sent as zeros"...)
			}
			if !exact {
				dst = appendSentAs(append(dst, ", "...), m)
			}
		}
		dst = append(dst, ']')
	}
	if f.RecordErr != nil {
		dst = append(dst, " [error: "...)
		dst = append(dst, f.RecordErr.Error()...)
		dst = append(dst, ']')
	}
	if f.Err != nil {
		dst = append(dst, " [error: "...)
		dst = append(dst, f.Err.Error()...)
		dst = append(dst, ']')
	}
	for _, e := range f.CLCErr {
		dst = append(dst, " [error: "...)
		dst = append(dst, e.Error()...)
		dst = append(dst, ']')
	}
	return dst
}

// appendSentAs appends "byte 77 sent as 0x12": m's offset in the frame and
// the value its sender sent there.
func appendSentAs(dst []byte, m decode.ICRCMend) []byte {
	dst = append(dst, "byte "...)
	dst = strconv.AppendInt(dst, int64(m.Off), 10)
	dst = append(dst, " sent as 0x"...)
	return numfmt.AppendHexPadded(dst, uint64(m.Sent), 2)
}

func appendHex32(dst []byte, v uint32) []byte {
	for s := 28; s >= 0; s -= 4 {
		dst = append(dst, hexDigits[v>>uint(s)&15])
	}
	return dst
}

// writeTree prints the -V tree: the frame's fields grouped by layer, each
// with its displayed value and description.
func writeTree(w *bufio.Writer, f *capture.Frame, ts *treeScratch) {
	r := f.Fields()
	walkTree(f, ts, func(o decode.Owner) {
		w.WriteString("  ")
		w.WriteString(o.Title())
		w.WriteString(" (")
		w.WriteString(o.Key())
		w.WriteString(")\n")
	}, func(i int, d decode.FieldDef) {
		w.WriteString("      ")
		w.WriteString(d.Name)
		w.WriteString(" = ")
		if w.Available() < displayRoom {
			w.Flush() // an error stays in w, for the run's last Flush
		}
		w.Write(r.Vals[i].AppendDisplay(w.AvailableBuffer(), d))
		if d.Desc != "" {
			w.WriteString("    (")
			w.WriteString(d.Desc)
			w.WriteString(")")
		}
		w.WriteByte('\n')
	})
}

// displayRoom is the room writeTree leaves in the writer's buffer for a
// value it appends there in place: a longer one (a long byte string) is
// appended to a new array, which the writer then copies.
const displayRoom = 256

// walkTree goes through frame f's -V tree in order: heading for each
// layer (or CLC message), field for each of its fields, i being the
// field's index in f.Fields() and f.FieldSpans(). A field of a layer
// whose heading was shown earlier in the frame joins it, so that a layer
// is one node even when its fields are not added together: the ICRC's
// value comes with the BTH, its verdict after the headers that follow
// (it was two "RoCE ICRC" nodes).
func walkTree(f *capture.Frame, ts *treeScratch, heading func(decode.Owner), field func(i int, d decode.FieldDef)) {
	r := f.Fields()
	gs, of := ts.groups[:0], ts.of[:0]
	cur := -1
	for _, id := range r.IDs {
		d := decode.Def(id)
		g := d.Owner.Key()
		if cur >= 0 && gs[cur].key == g && id != gs[cur].first {
			of = append(of, int32(cur))
			continue
		}
		j := -1
		if cur < 0 || gs[cur].key != g {
			for k := range gs {
				if gs[k].key == g {
					j = k // the layer's latest node
				}
			}
		}
		if j >= 0 && id != gs[j].first {
			of = append(of, int32(j))
			continue
		}
		gs = append(gs, treeGroup{owner: d.Owner, key: g, first: id})
		cur = len(gs) - 1
		of = append(of, int32(cur))
	}
	ts.groups, ts.of = gs, of
	for k, g := range gs {
		heading(g.owner)
		for i, gi := range of {
			if int(gi) == k {
				field(i, decode.Def(r.IDs[i]))
			}
		}
	}
}

// treeScratch is walkTree's memory, kept from frame to frame: a node of
// the tree for each layer, and each field's node.
type treeScratch struct {
	groups []treeGroup
	of     []int32
}

type treeGroup struct {
	owner decode.Owner
	key   string
	first decode.FieldID // its first field: seen again, a second message of the layer
}

// TreeLayer is one heading of a frame's -V field tree with its fields.
type TreeLayer struct {
	Title, Key string
	Fields     []TreeField
}

// TreeField is one field of the tree: its index in the frame's Fields()
// and FieldSpans(), its name, its value as -V writes it, and what it is.
type TreeField struct {
	Index             int
	Name, Value, Desc string
}

// Tree returns the -V field tree of frame f as typed layers (the capture
// browser's field pane shows the same catalogue).
func Tree(f *capture.Frame) []TreeLayer {
	var out []TreeLayer
	r := f.Fields()
	walkTree(f, &treeScratch{}, func(o decode.Owner) {
		out = append(out, TreeLayer{Title: o.Title(), Key: o.Key()})
	}, func(i int, d decode.FieldDef) {
		l := &out[len(out)-1]
		l.Fields = append(l.Fields, TreeField{Index: i, Name: d.Name, Value: r.Vals[i].Display(d), Desc: d.Desc})
	})
	return out
}

// writeHex prints a tshark-style hex dump: offset, 16 bytes, ASCII.
func writeHex(w *bufio.Writer, b []byte) {
	var line []byte
	for off := 0; off < len(b); off += 16 {
		line = line[:0]
		for s := 12; s >= 0; s -= 4 {
			line = append(line, hexDigits[off>>uint(s)&15])
		}
		line = append(line, "  "...)
		end := min(off+16, len(b))
		for i := off; i < off+16; i++ {
			if i < end {
				line = append(line, hexDigits[b[i]>>4], hexDigits[b[i]&15], ' ')
			} else {
				line = append(line, "   "...)
			}
			if i == off+7 {
				line = append(line, ' ')
			}
		}
		line = append(line, ' ')
		for _, c := range b[off:end] {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			line = append(line, c)
		}
		line = append(line, '\n')
		w.Write(line)
	}
}

// Hex returns the -x hex dump of b.
func Hex(b []byte) string {
	var s strings.Builder
	w := bufio.NewWriter(&s)
	writeHex(w, b)
	w.Flush()
	return s.String()
}
