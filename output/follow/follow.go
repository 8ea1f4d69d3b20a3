// Package follow shows the application bytes of SMC-R connections that
// the tracker reassembles (track.Options.Stream): View is smcdump's
// -z smc,follow,CONN[,MODE], in the layouts of tshark's
// -z follow,tcp,MODE; Exporter (--export-tcp) writes every connection as
// the plain TCP connection its application saw. Both cut a stream into the
// same segments (Segments), so that tshark's follow of an exported
// capture shows what View shows.
package follow

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/track"
)

// Mode is how View shows the bytes, as tshark's follow modes.
type Mode string

const (
	ModeASCII Mode = "ascii"
	ModeHex   Mode = "hex"
	ModeRaw   Mode = "raw"
	ModeYAML  Mode = "yaml"
)

// SegmentMax is the most bytes of a stream one exported TCP segment (and
// one chunk of View) carries: a stream's bytes come released a CDC at a
// time, up to an RMBE (hundreds of KiB), more than an IPv4 packet holds.
const SegmentMax = 16384

// Segments calls fn with data cut into pieces of at most SegmentMax bytes.
func Segments(data []byte, fn func([]byte)) {
	for len(data) > 0 {
		n := min(len(data), SegmentMax)
		fn(data[:n])
		data = data[n:]
	}
}

// View is one -z smc,follow,CONN[,MODE]: a track.StreamSink that renders
// the chunks of one connection as they come, and writes them with
// tshark's header and footer at the end (WriteTo). The rendered body goes
// to a temporary file beyond spoolMem bytes: a stream is not held in
// memory.
type View struct {
	spec string
	conn string // tracker ID or ip:port
	id   int    // the connection's ID once seen
	mode Mode

	seen           bool
	client, server netip.AddrPort
	off            [2]uint64 // bytes shown per direction (hex offsets)
	body           spool
}

// Parse makes the view of a -z smc,follow argument "CONN[,MODE]" (spec is
// the whole -z argument, for errors).
func Parse(spec, arg string) (*View, error) {
	conn, m, _ := strings.Cut(arg, ",")
	mode := Mode(m)
	switch mode {
	case "":
		mode = ModeASCII
	case ModeASCII, ModeHex, ModeRaw, ModeYAML:
	default:
		return nil, fmt.Errorf("%q: mode %q is not ascii, hex, raw or yaml", spec, m)
	}
	if conn == "" {
		return nil, fmt.Errorf("%q needs a connection: smc,follow,ID or smc,follow,IP:PORT (see smc,conns)", spec)
	}
	v := &View{spec: spec, conn: conn, mode: mode}
	if id, err := strconv.Atoi(conn); err == nil {
		v.id = id
	} else if _, err := netip.ParseAddrPort(conn); err != nil {
		return nil, fmt.Errorf("%q: connection %q is neither a tracker ID nor IP:PORT", spec, conn)
	}
	return v, nil
}

// Spec is the -z argument the view was made from.
func (v *View) Spec() string { return v.spec }

// StreamChunk renders ch when it belongs to the view's connection.
func (v *View) StreamChunk(ch *track.StreamChunk) {
	c := ch.Conn
	if v.id != 0 && c.ID != v.id {
		return
	}
	if v.id == 0 {
		if c.Client.String() != v.conn && c.Server.String() != v.conn {
			return
		}
		v.id = c.ID
	}
	v.seen, v.client, v.server = true, c.Client, c.Server
	if ch.End {
		return
	}
	if ch.Data == nil {
		v.gap(ch)
		return
	}
	Segments(ch.Data, func(b []byte) { v.chunk(ch, b) })
}

// chunk renders one segment's bytes as tshark renders a TCP segment's
// (ui/cli/tap-follow.c): the server's (node 1) indented by a tab.
func (v *View) chunk(ch *track.StreamChunk, b []byte) {
	w := &v.body
	ind := indent(ch.Dir)
	switch v.mode {
	case ModeASCII:
		fmt.Fprintf(w, "%s%d\n", ind, len(b))
		w.Write(append(Printable(make([]byte, 0, len(b)+1), b), '\n'))
	case ModeHex:
		hexDump(w, ind, v.off[ch.Dir], b)
	case ModeRaw:
		fmt.Fprintf(w, "%s%s\n", ind, hex.EncodeToString(b))
	case ModeYAML:
		fmt.Fprintf(w, "  - packet: %d\n    peer: %d\n    timestamp: %d.%09d\n    data: !!binary |\n",
			ch.Frame, ch.Dir, ch.Time.Unix(), ch.Time.Nanosecond())
		enc := base64.StdEncoding.EncodeToString(b)
		for len(enc) > 0 {
			n := min(len(enc), 76)
			fmt.Fprintf(w, "      %s\n", enc[:n])
			enc = enc[n:]
		}
	}
	v.off[ch.Dir] += uint64(len(b))
}

// Printable appends b to dst as tshark's follow ascii mode shows it:
// printable ASCII, line feeds and carriage returns as they are, every other
// byte as a dot.
func Printable(dst, b []byte) []byte {
	for _, x := range b {
		if x == '\n' || x == '\r' || x >= 0x20 && x < 0x7f {
			dst = append(dst, x)
		} else {
			dst = append(dst, '.')
		}
	}
	return dst
}

// GapText says what a gap chunk lacks, as Wireshark marks a TCP gap.
func GapText(ch *track.StreamChunk) string {
	n := "unknown number of"
	if ch.Gap > 0 {
		n = strconv.FormatUint(ch.Gap, 10)
	}
	return fmt.Sprintf("[%s bytes missing in capture file: %s]", n, ch.Cause)
}

// gap renders bytes the capture does not hold the way Wireshark's Follow
// Stream marks a TCP gap, with the cause; a gap of unknown length says so.
func (v *View) gap(ch *track.StreamChunk) {
	text := GapText(ch)
	if v.mode == ModeYAML {
		fmt.Fprintf(&v.body, "  # peer %d, frame %d: %s\n", ch.Dir, ch.Frame, text)
		return
	}
	fmt.Fprintf(&v.body, "%s%s\n", indent(ch.Dir), text)
	v.off[ch.Dir] += ch.Gap
}

func indent(d track.Dir) string {
	if d == track.DirS2C {
		return "\t"
	}
	return ""
}

// hexDump writes b as tshark's follow hex mode: 16 bytes a line, offset
// counted per direction.
func hexDump(w io.Writer, ind string, off uint64, b []byte) {
	var line []byte
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		line = append(line[:0], ind...)
		line = fmt.Appendf(line, "%08X  ", off+uint64(i))
		for j := range 16 {
			if j == 8 {
				line = append(line, ' ')
			}
			if j < len(row) {
				line = fmt.Appendf(line, "%02x ", row[j])
			} else {
				line = append(line, "   "...)
			}
		}
		line = append(line, ' ')
		for j, x := range row {
			if j == 8 {
				line = append(line, ' ')
			}
			if x >= 0x20 && x < 0x7f {
				line = append(line, x)
			} else {
				line = append(line, '.')
			}
		}
		w.Write(append(line, '\n'))
	}
}

// WriteTo writes the view: tshark's frame of "=" lines with the follow
// type, the filter that selects the connection and its two nodes (client
// first), then the chunks; yaml mode is a YAML document (peers, packets).
// A side the capture never named (joined mid-stream) is "-".
func (v *View) WriteTo(w io.Writer) (int64, error) {
	if !v.seen {
		return 0, fmt.Errorf("%s: no SMC-R connection %s with stream bytes (see smc,conns)", v.spec, v.conn)
	}
	cw := &countWriter{w: w}
	if v.mode == ModeYAML {
		fmt.Fprintf(cw, "peers:\n")
		for i, ap := range []netip.AddrPort{v.client, v.server} {
			host, port := "-", "-"
			if ap.IsValid() {
				host, port = ap.Addr().String(), strconv.Itoa(int(ap.Port()))
			}
			fmt.Fprintf(cw, "  - peer: %d\n    host: %s\n    port: %s\n", i, host, port)
		}
		fmt.Fprintf(cw, "packets:\n")
	} else {
		fmt.Fprintf(cw, "\n%s\nFollow: smc,%s\nFilter: smc.conn.id eq %d\nNode 0: %s\nNode 1: %s\n",
			rule, v.mode, v.id, node(v.client), node(v.server))
	}
	if err := v.body.copyTo(cw); err != nil {
		return cw.n, err
	}
	if v.mode != ModeYAML {
		fmt.Fprintln(cw, rule)
	}
	return cw.n, cw.err
}

// Close removes the view's temporary file, if it made one.
func (v *View) Close() error { return v.body.close() }

const rule = "==================================================================="

func node(ap netip.AddrPort) string {
	if !ap.IsValid() {
		return "-"
	}
	return ap.String()
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
	return n, err
}

// spoolMem is how much of a rendered stream stays in memory; the rest
// goes to a temporary file.
const spoolMem = 1 << 20

// spool is a buffer that moves to a temporary file when it grows past
// spoolMem.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	err  error
}

func (s *spool) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.file == nil && s.mem.Len()+len(b) > spoolMem {
		if s.file, s.err = os.CreateTemp("", "smcdump-follow-*"); s.err != nil {
			s.err = fmt.Errorf("spooling the followed stream: %w", s.err)
			return 0, s.err
		}
		if _, s.err = s.mem.WriteTo(s.file); s.err != nil {
			return 0, s.err
		}
	}
	if s.file != nil {
		var n int
		n, s.err = s.file.Write(b)
		return n, s.err
	}
	return s.mem.Write(b)
}

func (s *spool) copyTo(w io.Writer) error {
	if s.err != nil {
		return s.err
	}
	if s.file == nil {
		_, err := w.Write(s.mem.Bytes())
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(w, s.file)
	return err
}

func (s *spool) close() error {
	if s.file == nil {
		return nil
	}
	name := s.file.Name()
	s.file.Close()
	s.file = nil
	return os.Remove(name)
}
