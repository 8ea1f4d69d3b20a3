// Command mkbig writes a large pcap for benchmarks by repeating real
// captures: each round appends every input again with its timestamps moved
// past the end of the previous input, so time stays monotonic and the
// traffic is the kernel's own, only more of it.
//
//	go run ./bench/mkbig -o /tmp/big.pcap -size 200 testdata/reference/pingpong.pcap
//
// By default every round is a byte-exact copy, so a round's TCP
// connections reuse the previous round's 4-tuples. With -distinct each
// round's connections get client ports of their own (the TCP checksum is
// updated for it), so a capture of many short connections can be built:
//
//	go run ./bench/mkbig -distinct -o /tmp/conns.pcap -size 1024 \
//	    samples/fallback-nosmc.pcap samples/decline-nordma.pcap samples/pingpong.pcap@40
//
// An input named FILE@N is repeated only in every N-th round (rounds 0, N,
// 2N, ...), to mix a large capture sparingly among small ones.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

type frame struct {
	ci    gopacket.CaptureInfo
	data  []byte
	input int // index of the input file
	every int // repeated in rounds 0, every, 2*every, ...
	// TCP frames with -distinct: offset of the TCP header in data, the
	// connection's index among the inputs' connections, and which port is
	// the client's. tcpOff is -1 for other frames.
	tcpOff    int
	conn      int
	clientSrc bool
}

// options of one run.
type options struct {
	size     int64 // stop after the round that passes this many bytes
	distinct bool  // rewrite client ports per round
}

func main() {
	out := flag.String("o", "", "output pcap")
	sizeMB := flag.Int64("size", 200, "stop after the round that passes this many MiB")
	distinct := flag.Bool("distinct", false, "give each round's TCP connections client ports of their own (checksums fixed), so rounds are new connections")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mkbig -o out.pcap [-size MiB] [-distinct] in.pcap[@N]...")
		os.Exit(2)
	}
	n, err := run(*out, options{size: *sizeMB << 20, distinct: *distinct}, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkbig:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "mkbig: %s: %d frames\n", *out, n)
}

// Client ports of -distinct: the range Linux picks ephemeral ports from
// can be narrow, any unprivileged port will do for a capture. A 4-tuple
// comes back after this many connections, long after it closed.
const (
	portLo = 1024
	portN  = 65536 - portLo
)

// run writes rounds of the inputs until the file holds at least o.size
// bytes and returns the number of frames written.
func run(out string, o options, inputs []string) (int, error) {
	frames, lt, err := load(inputs)
	if err != nil {
		return 0, err
	}
	if len(frames) == 0 {
		return 0, errors.New("inputs hold no frames")
	}
	conns := 0
	if o.distinct {
		conns = findTCP(frames, lt)
	}
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		return 0, err
	}
	var (
		written, total = 0, int64(24)
		buf            []byte
		next           int   // connections numbered so far (-distinct)
		port           []int // this round's port per input connection, -1 = not in the round
		// Each input of a round starts 1 ms after the previous one ended,
		// whatever the time it was captured at, so time only goes forward.
		at = frames[0].ci.Timestamp
	)
	for round := 0; total < o.size; round++ {
		if o.distinct {
			port = roundPorts(frames, conns, round, &next, port)
		}
		for lo := 0; lo < len(frames); {
			hi := lo + 1
			for hi < len(frames) && frames[hi].input == frames[lo].input {
				hi++
			}
			in := frames[lo:hi]
			lo = hi
			if round%in[0].every != 0 {
				continue
			}
			shift := at.Sub(in[0].ci.Timestamp)
			for _, fr := range in {
				ci := fr.ci
				ci.Timestamp = ci.Timestamp.Add(shift)
				data := fr.data
				if o.distinct && fr.tcpOff >= 0 {
					buf = append(buf[:0], data...)
					setClientPort(buf[fr.tcpOff:], fr.clientSrc, uint16(port[fr.conn]))
					data = buf
				}
				if err := w.WritePacket(ci, data); err != nil {
					return written, fmt.Errorf("%s: round %d: %w", out, round, err)
				}
				written++
				total += 16 + int64(len(data))
			}
			at = in[len(in)-1].ci.Timestamp.Add(shift + time.Millisecond)
		}
	}
	if err := bw.Flush(); err != nil {
		return written, err
	}
	return written, f.Close()
}

// roundPorts numbers the connections of the inputs in this round and
// gives each the next client port.
func roundPorts(frames []frame, conns int, round int, next *int, port []int) []int {
	port = port[:0]
	for range conns {
		port = append(port, -1)
	}
	for _, fr := range frames {
		if fr.tcpOff < 0 || round%fr.every != 0 || port[fr.conn] >= 0 {
			continue
		}
		port[fr.conn] = portLo + *next%portN
		*next++
	}
	return port
}

// setClientPort writes the client's port into a TCP header and updates its
// checksum incrementally (RFC 1624): the ports are not in the IP
// pseudo-header, so the IP header and the rest of the segment stay valid.
func setClientPort(tcp []byte, clientSrc bool, p uint16) {
	off := 2 // destination port
	if clientSrc {
		off = 0
	}
	old := binary.BigEndian.Uint16(tcp[off:])
	binary.BigEndian.PutUint16(tcp[off:], p)
	sum := uint32(^binary.BigEndian.Uint16(tcp[16:])) + uint32(^old) + uint32(p)
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(tcp[16:], ^uint16(sum))
}

// findTCP locates each TCP frame's header and numbers the connections of
// the inputs (one per 4-tuple and input), returning how many there are.
// The client is the sender of the tuple's first SYN without ACK; without
// one (a capture that starts mid-connection) the side with the higher
// port, the ephemeral one.
func findTCP(frames []frame, lt layers.LinkType) int {
	type tuple struct {
		input int
		a, b  netip.AddrPort
	}
	type conn struct {
		index  int
		client netip.AddrPort
		syn    bool
	}
	seen := map[tuple]*conn{}
	of := make([]*conn, len(frames))
	src := make([]netip.AddrPort, len(frames))
	for i := range frames {
		fr := &frames[i]
		fr.tcpOff = -1
		p := gopacket.NewPacket(fr.data, lt, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		tl, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if !ok || len(tl.Contents) < 20 {
			continue
		}
		var sa, da netip.Addr
		switch ip := p.NetworkLayer().(type) {
		case *layers.IPv4:
			sa, _ = netip.AddrFromSlice(ip.SrcIP)
			da, _ = netip.AddrFromSlice(ip.DstIP)
		case *layers.IPv6:
			sa, _ = netip.AddrFromSlice(ip.SrcIP)
			da, _ = netip.AddrFromSlice(ip.DstIP)
		default:
			continue
		}
		s := netip.AddrPortFrom(sa, uint16(tl.SrcPort))
		d := netip.AddrPortFrom(da, uint16(tl.DstPort))
		k := tuple{fr.input, s, d}
		if d.Compare(s) < 0 {
			k.a, k.b = d, s
		}
		c := seen[k]
		if c == nil {
			c = &conn{index: len(seen), client: s}
			if s.Port() < d.Port() {
				c.client = d
			}
			seen[k] = c
		}
		if tl.SYN && !tl.ACK && !c.syn {
			c.client, c.syn = s, true
		}
		fr.tcpOff = cap(fr.data) - cap(tl.Contents)
		of[i], src[i] = c, s
	}
	// A SYN may come after other segments of its tuple (a retransmission
	// or a capture started during the handshake), so the side is decided
	// once every frame was seen.
	for i := range frames {
		if c := of[i]; c != nil {
			frames[i].conn, frames[i].clientSrc = c.index, src[i] == c.client
		}
	}
	return len(seen)
}

// parseInput splits "FILE@N" into the file and N (1 without a suffix).
func parseInput(arg string) (string, int, error) {
	i := strings.LastIndexByte(arg, '@')
	if i < 0 {
		return arg, 1, nil
	}
	if _, err := os.Stat(arg); err == nil {
		return arg, 1, nil // a file whose name holds '@'
	}
	n, err := strconv.Atoi(arg[i+1:])
	if err != nil || n < 1 {
		return "", 0, fmt.Errorf("%s: want FILE or FILE@N with N >= 1", arg)
	}
	return arg[:i], n, nil
}

// load reads every input into memory (they are small samples) and checks
// that they share one link type.
func load(inputs []string) ([]frame, layers.LinkType, error) {
	var frames []frame
	var lt layers.LinkType
	for i, arg := range inputs {
		name, every, err := parseInput(arg)
		if err != nil {
			return nil, 0, err
		}
		in, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		r, err := pcapgo.NewReader(in)
		if err != nil {
			in.Close()
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		if i == 0 {
			lt = r.LinkType()
		} else if r.LinkType() != lt {
			in.Close()
			return nil, 0, fmt.Errorf("%s: link type %v, want %v like %s", name, r.LinkType(), lt, inputs[0])
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err == io.EOF {
				break
			}
			if err != nil {
				in.Close()
				return nil, 0, fmt.Errorf("%s: frame %d: %w", name, len(frames)+1, err)
			}
			frames = append(frames, frame{ci: ci, data: data, input: i, every: every, tcpOff: -1})
		}
		in.Close()
	}
	return frames, lt, nil
}
