package probe

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options is smcping's command line. The zero value is not useful; get one
// from ParseArgs.
type Options struct {
	// Server side.
	Server      bool
	TCPOnly     bool
	Listen      netip.Addr
	MaxMessage  int
	MaxConns    int
	IdleTimeout time.Duration
	// RequestTimeout bounds each request as a whole (--request-timeout).
	RequestTimeout time.Duration

	// Both sides.
	Port    uint16
	TCPPort uint16 // baseline TCP port; default Port+1
	Proto   Proto

	// Client side.
	Host       string
	Count      int           // messages per connection, size and mode (-n)
	Duration   time.Duration // per size, instead of Count (-t)
	Sizes      []int         // message sizes, header included (-m)
	Interval   time.Duration // pacing; 0 is back to back (-i)
	Parallel   int           // connections per mode (-P)
	Warmup     int           // unrecorded pings per connection and size
	Compare    []Proto       // --compare: protocols measured interleaved with Proto
	Round      int           // messages per mode per round when comparing
	Hist       bool
	LogFile    string
	Diag       bool   // --diag: print each connection's sock_diag line at the end
	Bandwidth  bool   // --bw
	Require    string // "" or "smc"
	Check      bool
	Output     string // "text" or "json"
	Timeout    time.Duration
	MaxSamples int // per mode and size in -t mode, over all connections
}

// MaxClientMessage bounds -m so a typo cannot make the client allocate gigabytes.
const MaxClientMessage = 64 << 20

// ErrUsage wraps every command-line error; smcping exits 2 on it.
var ErrUsage = errors.New("usage")

const usageText = `usage:
  smcping -s [-p PORT] [--tcp-port PORT] [--tcp] [--proto smc|ipproto] [--listen ADDR]
             [--max-msg BYTES] [--max-conns N] [--idle DURATION] [--request-timeout DURATION]
  smcping HOST[:PORT] [-n N | -t DURATION] [-m SIZES] [-i INTERVAL] [-P N] [--warmup N]
             [--proto smc|ipproto|tcp] [--compare tcp[,ipproto|smc]] [--bw] [--hist] [--log FILE] [--diag]
             [--require smc] [--check] [-o text|json] [--timeout DURATION]

The server listens for SMC on PORT (default 5000) and for the plain TCP
baseline on --tcp-port (default PORT+1, 0 disables); with --tcp both are
plain TCP, so the server is not SMC-capable at all.
SIZES is one size, a list "64,1024,8192" or a range of powers of two
"64-65536"; a size counts the 4-byte smcping header (minimum 4).
-n counts messages per connection, per size and per protocol.
--compare runs the other protocols in alternating rounds with the first;
TCP goes to --tcp-port, AF_SMC and IPPROTO_SMC both to PORT.
`

// ParseArgs parses smcping's arguments; HOST may come before, between or
// after the flags. flag.ErrHelp is returned for -h.
func ParseArgs(args []string, stderr io.Writer) (Options, error) {
	o := Options{}
	fs := flag.NewFlagSet("smcping", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	var (
		port, tcpPort                   int
		listen, proto, sizes, dur, intv string
		idle, reqTimeout, timeout       time.Duration
		compare                         string
	)
	fs.BoolVar(&o.Server, "s", false, "run the server")
	fs.BoolVar(&o.TCPOnly, "tcp", false, "server: plain TCP only, not SMC-capable")
	fs.StringVar(&listen, "listen", "0.0.0.0", "server: listen address")
	fs.IntVar(&o.MaxMessage, "max-msg", DefaultMaxMessage, "server: largest message accepted, bytes")
	fs.IntVar(&o.MaxConns, "max-conns", DefaultMaxConns, "server: connections served at once")
	fs.DurationVar(&idle, "idle", DefaultIdleTimeout, "server: close connections idle this long between requests")
	fs.DurationVar(&reqTimeout, "request-timeout", DefaultRequestTimeout, "server: close a connection whose request (first byte to reply) takes longer")
	fs.IntVar(&port, "p", DefaultPort, "port of the SMC server")
	fs.IntVar(&tcpPort, "tcp-port", -1, "port of the TCP baseline (default PORT+1; server: 0 disables)")
	fs.StringVar(&proto, "proto", "smc", "socket kind: smc (AF_SMC), ipproto (IPPROTO_SMC, Linux >= 6.11), tcp")
	fs.IntVar(&o.Count, "n", 1000, "messages per connection, size and protocol")
	fs.StringVar(&dur, "t", "", "run each size for this long instead of -n (\"5s\", or seconds)")
	fs.StringVar(&sizes, "m", "64", "message sizes in bytes: N, N,M,... or LO-HI (powers of two)")
	fs.StringVar(&intv, "i", "0", "interval between pings (\"1ms\"); 0 is back to back")
	fs.IntVar(&o.Parallel, "P", 1, "parallel connections per protocol")
	fs.IntVar(&o.Warmup, "warmup", 100, "unrecorded pings per connection and size")
	fs.StringVar(&compare, "compare", "", "protocols measured interleaved in the same run: tcp (the baseline, on --tcp-port), ipproto, smc; comma-separated")
	fs.IntVar(&o.Round, "round", 100, "messages per protocol per round with --compare")
	fs.BoolVar(&o.Hist, "hist", false, "print a histogram per size and protocol")
	fs.StringVar(&o.LogFile, "log", "", "write every sample to this CSV file")
	fs.BoolVar(&o.Diag, "diag", false, "print each connection's kernel state (sock_diag: token, cursors) at the end, before closing")
	fs.BoolVar(&o.Bandwidth, "bw", false, "one-way stream throughput instead of ping-pong")
	fs.StringVar(&o.Require, "require", "", "\"smc\": fail (exit 1) unless every connection uses SMC")
	fs.BoolVar(&o.Check, "check", false, "one connection, print one OK/FAIL line about its mode")
	fs.StringVar(&o.Output, "o", "text", "output: text or json")
	fs.DurationVar(&timeout, "timeout", 5*time.Second, "connect timeout")
	fs.IntVar(&o.MaxSamples, "max-samples", 1_000_000, "-t mode: most samples kept per size and protocol")

	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return o, err
			}
			return o, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	usage := func(format string, a ...any) (Options, error) {
		return o, fmt.Errorf("%w: "+format, append([]any{ErrUsage}, a...)...)
	}
	var err error
	if o.Proto, err = ParseProto(proto); err != nil {
		return usage("--proto: %v", err)
	}
	// The server may ask the kernel for a port (-p 0, logged at start).
	if port < 0 || port > 65535 || (port == 0 && !o.Server) {
		return usage("-p %d: not a port", port)
	}
	o.Port = uint16(port)
	if tcpPort < -1 || tcpPort > 65535 {
		return usage("--tcp-port %d: not a port", tcpPort)
	}
	// The baseline port follows the SMC port, also one given as HOST:PORT.
	baseline := func() {
		switch {
		case tcpPort >= 0:
			o.TCPPort = uint16(tcpPort)
		case o.Port == 0:
			o.TCPPort = 0
		case o.Port < 65535:
			o.TCPPort = o.Port + 1
		default:
			o.TCPPort = o.Port - 1
		}
	}
	o.IdleTimeout, o.RequestTimeout, o.Timeout = idle, reqTimeout, timeout
	if o.Server {
		if len(pos) > 0 {
			return usage("-s takes no HOST (got %q)", pos[0])
		}
		if o.Listen, err = netip.ParseAddr(listen); err != nil {
			return usage("--listen: %v", err)
		}
		if o.Proto == ProtoTCP {
			o.TCPOnly = true
		}
		if o.MaxMessage < HeaderLen || o.MaxConns < 1 || idle <= 0 || reqTimeout <= 0 {
			return usage("--max-msg >= %d, --max-conns >= 1, --idle > 0 and --request-timeout > 0 required", HeaderLen)
		}
		baseline()
		return o, nil
	}
	if o.TCPOnly {
		return usage("--tcp is a server flag; use --proto tcp on the client")
	}
	if len(pos) != 1 {
		return usage("want exactly one HOST[:PORT], got %d", len(pos))
	}
	if o.Host, err = splitHostPort(pos[0], &o.Port); err != nil {
		return usage("%v", err)
	}
	if o.Sizes, err = ParseSizes(sizes); err != nil {
		return usage("-m: %v", err)
	}
	if dur != "" {
		if o.Duration, err = parseSeconds(dur); err != nil || o.Duration <= 0 {
			return usage("-t %q: want a positive duration", dur)
		}
	}
	if o.Interval, err = parseSeconds(intv); err != nil || o.Interval < 0 {
		return usage("-i %q: want a duration >= 0", intv)
	}
	if compare != "" {
		for name := range strings.SplitSeq(compare, ",") {
			p, err := ParseProto(strings.TrimSpace(name))
			if err != nil {
				return usage("--compare: %v", err)
			}
			if p != o.Proto && !slices.Contains(o.Compare, p) {
				o.Compare = append(o.Compare, p)
			}
		}
	}
	switch o.Require {
	case "", "smc":
	default:
		return usage("--require %q: only \"smc\" is known", o.Require)
	}
	if o.Require == "smc" && !o.Proto.IsSMC() {
		return usage("--require smc with --proto tcp can never succeed")
	}
	if o.Output != "text" && o.Output != "json" {
		return usage("-o %q: want text or json", o.Output)
	}
	if o.Count < 1 || o.Parallel < 1 || o.Warmup < 0 || o.Round < 1 || o.MaxSamples < 1 || timeout <= 0 {
		return usage("-n, -P, --round, --max-samples >= 1, --warmup >= 0 and --timeout > 0 required")
	}
	baseline()
	return o, nil
}

// splitHostPort accepts "host", "host:port", "[v6]:port" and a bare IPv6 address.
func splitHostPort(s string, port *uint16) (string, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String(), nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		*port = ap.Port()
		return ap.Addr().String(), nil
	}
	host, p, ok := strings.Cut(s, ":")
	if !ok {
		if s == "" {
			return "", errors.New("empty HOST")
		}
		return s, nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || host == "" {
		return "", fmt.Errorf("%q: want HOST[:PORT]", s)
	}
	*port = uint16(n)
	return host, nil
}

// parseSeconds accepts Go durations ("250ms") and plain seconds ("5", "0.5")
// as sockperf's -t does.
func parseSeconds(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	return time.ParseDuration(s)
}

// ParseSizes parses -m: "64", "64,1024,8192", or "64-65536" meaning every
// power of two from 64 to 65536 (both ends must be powers of two). The
// result is sorted and without duplicates.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseSize(lo)
		if err != nil {
			return nil, err
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b, err := parseSize(hi)
		if err != nil {
			return nil, err
		}
		if bits.OnesCount(uint(a)) != 1 || bits.OnesCount(uint(b)) != 1 || a > b {
			return nil, fmt.Errorf("range %q: want LO-HI, powers of two, LO <= HI", part)
		}
		for v := a; v <= b; v *= 2 {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseSize(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("size %q: not a number", s)
	}
	if n < HeaderLen || n > MaxClientMessage {
		return 0, fmt.Errorf("size %d outside [%d, %d]", n, HeaderLen, MaxClientMessage)
	}
	return n, nil
}
