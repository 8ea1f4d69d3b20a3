package probe

import (
	"errors"
	"flag"
	"fmt"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/smcscope/smcscope/internal/cli"
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
	Digest     bool   // --digest: seeded payloads; each connection's bytes and SHA-256 written and read
	Bandwidth  bool   // --bw
	Require    string // "" or "smc"
	Check      bool
	Output     string // "text" or "json"
	Timeout    time.Duration
	MaxSamples int // per mode and size in -t mode, over all connections
}

// MaxClientMessage bounds -m so a typo cannot make the client allocate gigabytes.
const MaxClientMessage = 64 << 20

// ErrUsage is matched (errors.Is) by every command-line error; smcping
// exits 2 on it. The error itself is one line that names the flag and the
// value as given.
var ErrUsage = errors.New("usage")

// usageError is a command-line error: its message alone, Is ErrUsage.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// rawValue keeps a flag's text as given: ParseArgs converts and checks it
// after parsing, so that a bad value is one line naming the flag, the value
// and the bound it missed (-n 0: want at least 1), which a typed flag
// cannot say.
type rawValue struct{ s string }

func (v *rawValue) String() string {
	if v == nil {
		return ""
	}
	return v.s
}

func (v *rawValue) Set(s string) error { v.s = s; return nil }

// flagName spells a flag as the usage does: -n, --warmup.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagStrings are the flags read as text and parsed after the flag set.
type flagStrings struct{ listen, proto, sizes, durT, intv, compare string }

// defineFlags defines smcping's flags over o (the man page and completions
// are made from the same set: FlagSet).
func defineFlags(o *Options) (*flag.FlagSet, map[string]*rawValue, *flagStrings) {
	v := &flagStrings{}
	fs := flag.NewFlagSet("smcping", flag.ContinueOnError)
	raw := map[string]*rawValue{}
	// num and dur register flags read after parsing (intFlag, durFlag).
	num := func(name string, def int, usage string) {
		raw[name] = &rawValue{strconv.Itoa(def)}
		fs.Var(raw[name], name, usage)
	}
	dur := func(name string, def time.Duration, usage string) {
		raw[name] = &rawValue{def.String()}
		fs.Var(raw[name], name, usage)
	}
	fs.BoolVar(&o.Server, "s", false, "run the server")
	fs.BoolVar(&o.TCPOnly, "tcp", false, "server: plain TCP only, not SMC-capable")
	fs.StringVar(&v.listen, "listen", "0.0.0.0", "server: listen on `ADDR`")
	num("max-msg", DefaultMaxMessage, "server: largest message accepted, in `BYTES`")
	num("max-conns", DefaultMaxConns, "server: `N` connections served at once; at the limit a new one takes the slot of a slow, idle or new one, never of one busy in the last second")
	dur("idle", DefaultIdleTimeout, "server: close connections idle for `DURATION` between requests")
	dur("request-timeout", DefaultRequestTimeout, "server: close a connection whose request (first byte to reply) takes longer than `DURATION`")
	num("p", DefaultPort, "`PORT` of the SMC server")
	num("tcp-port", -1, "`PORT` of the TCP baseline (default PORT+1; server: 0 disables)")
	fs.StringVar(&v.proto, "proto", "smc", "socket `KIND`: smc (AF_SMC), ipproto (IPPROTO_SMC, Linux >= 6.11), tcp")
	num("n", 1000, "`N` messages per connection, size and protocol")
	fs.StringVar(&v.durT, "t", "", "run each size for `DURATION` instead of -n (\"5s\", or seconds); with --compare each protocol gets it, as with -n")
	fs.StringVar(&v.sizes, "m", "64", "message `SIZES` in bytes: N, N,M,... or LO-HI (powers of two)")
	fs.StringVar(&v.intv, "i", "0", "`INTERVAL` between pings (\"1ms\"); 0 is back to back")
	num("P", 1, "`N` parallel connections per protocol")
	num("warmup", 100, "`N` unrecorded pings per connection and size")
	fs.StringVar(&v.compare, "compare", "", "`PROTOS` measured interleaved in the same run: tcp (the baseline, on --tcp-port), ipproto, smc; comma-separated")
	num("round", 100, "`N` messages per protocol per round with --compare")
	fs.BoolVar(&o.Hist, "hist", false, "print a histogram per size and protocol")
	fs.StringVar(&o.LogFile, "log", "", "write every sample to CSV `FILE`")
	fs.BoolVar(&o.Diag, "diag", false, "print each connection's kernel state (sock_diag: token, cursors) at the end, before closing")
	fs.BoolVar(&o.Digest, "digest", false, "payloads from a generator seeded per connection (no message repeats another), and at the end each connection's bytes and SHA-256 written and read")
	fs.BoolVar(&o.Bandwidth, "bw", false, "one-way stream throughput instead of ping-pong")
	fs.StringVar(&o.Require, "require", "", "`MODE` required of every connection: smc (else exit 1)")
	fs.BoolVar(&o.Check, "check", false, "one connection, print one OK/FAIL line about its mode")
	fs.StringVar(&o.Output, "o", "text", "output `FORMAT`: text or json")
	dur("timeout", 5*time.Second, "connect timeout `DURATION`")
	num("max-samples", 1_000_000, "-t mode: keep at most `N` samples per size and protocol")

	return fs, raw, v
}

// FlagSet returns smcping's flags, for its help, man page and completions.
func FlagSet() *flag.FlagSet {
	fs, _, _ := defineFlags(&Options{})
	return fs
}

// ParseArgs parses smcping's arguments; HOST may come before, between or
// after the flags. It returns flag.ErrHelp for -h and cli.ErrVersion for
// --version, which the caller answers, and writes nothing.
func ParseArgs(args []string) (Options, error) {
	o := Options{}
	fs, raw, v := defineFlags(&o)
	if err := cli.Parse(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, cli.ErrVersion) {
			return o, err
		}
		return o, usagef("%v", err)
	}
	pos := fs.Args()
	listen, proto, sizes, durT, intv, compare := v.listen, v.proto, v.sizes, v.durT, v.intv, v.compare
	// intFlag reads a number flag, at least lo.
	intFlag := func(name string, lo int) (int, error) {
		s := raw[name].s
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, usagef("%s %q: not a whole number", flagName(name), s)
		}
		if n < lo {
			return 0, usagef("%s %d: want at least %d", flagName(name), n, lo)
		}
		return n, nil
	}
	// durFlag reads a duration flag, above 0.
	durFlag := func(name string) (time.Duration, error) {
		s := raw[name].s
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, usagef("%s %q: not a duration (e.g. 5s, 250ms)", flagName(name), s)
		}
		if d <= 0 {
			return 0, usagef("%s %s: want a duration above 0", flagName(name), s)
		}
		return d, nil
	}
	var err error
	if o.Proto, err = ParseProto(proto); err != nil {
		return o, usagef("--proto %q: %v", proto, err)
	}
	port, err := intFlag("p", 0)
	if err != nil {
		return o, err
	}
	// The server may ask the kernel for a port (-p 0, logged at start).
	if port > 65535 || (port == 0 && !o.Server) {
		return o, usagef("-p %d: not a port", port)
	}
	o.Port = uint16(port)
	tcpPort, err := intFlag("tcp-port", -1)
	if err != nil {
		return o, err
	}
	if tcpPort > 65535 {
		return o, usagef("--tcp-port %d: not a port", tcpPort)
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
	if o.Timeout, err = durFlag("timeout"); err != nil {
		return o, err
	}
	if o.Server {
		if len(pos) > 0 {
			return o, usagef("-s takes no HOST (got %q)", pos[0])
		}
		if o.Listen, err = netip.ParseAddr(listen); err != nil {
			return o, usagef("--listen %q: not an IP address", listen)
		}
		if o.Proto == ProtoTCP {
			o.TCPOnly = true
		}
		if o.MaxMessage, err = intFlag("max-msg", HeaderLen); err != nil {
			return o, err
		}
		if o.MaxConns, err = intFlag("max-conns", 1); err != nil {
			return o, err
		}
		if o.IdleTimeout, err = durFlag("idle"); err != nil {
			return o, err
		}
		if o.RequestTimeout, err = durFlag("request-timeout"); err != nil {
			return o, err
		}
		baseline()
		return o, nil
	}
	if o.TCPOnly {
		return o, usagef("--tcp is a server flag; use --proto tcp on the client")
	}
	if len(pos) != 1 {
		return o, usagef("want exactly one HOST[:PORT], got %d", len(pos))
	}
	if o.Host, err = splitHostPort(pos[0], &o.Port); err != nil {
		return o, usagef("%v", err)
	}
	if o.Sizes, err = ParseSizes(sizes); err != nil {
		return o, usagef("-m %q: %v", sizes, err)
	}
	if durT != "" {
		if o.Duration, err = parseSeconds(durT); err != nil || o.Duration <= 0 {
			return o, usagef("-t %q: want a positive duration", durT)
		}
	}
	if o.Interval, err = parseSeconds(intv); err != nil || o.Interval < 0 {
		return o, usagef("-i %q: want a duration >= 0", intv)
	}
	if compare != "" {
		for name := range strings.SplitSeq(compare, ",") {
			p, err := ParseProto(strings.TrimSpace(name))
			if err != nil {
				return o, usagef("--compare %q: %v", compare, err)
			}
			if p != o.Proto && !slices.Contains(o.Compare, p) {
				o.Compare = append(o.Compare, p)
			}
		}
	}
	switch o.Require {
	case "", "smc":
	default:
		return o, usagef("--require %q: only \"smc\" is known", o.Require)
	}
	if o.Require == "smc" && !o.Proto.IsSMC() {
		return o, usagef("--require smc with --proto tcp can never succeed")
	}
	if o.Output != "text" && o.Output != "json" {
		return o, usagef("-o %q: want text or json", o.Output)
	}
	for _, f := range []struct {
		name string
		dst  *int
		lo   int
	}{{"n", &o.Count, 1}, {"P", &o.Parallel, 1}, {"warmup", &o.Warmup, 0}, {"round", &o.Round, 1}, {"max-samples", &o.MaxSamples, 1}} {
		if *f.dst, err = intFlag(f.name, f.lo); err != nil {
			return o, err
		}
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
		a, err := parseSize(lo, part)
		if err != nil {
			return nil, err
		}
		if !isRange {
			out = append(out, a)
			continue
		}
		b, err := parseSize(hi, part)
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

// parseSize reads one size, s, of part (a size or a LO-HI range), which
// an error names: "-1" is part "-1" with an empty LO, not a size "".
func parseSize(s, part string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (a number of bytes from %d to %d, N,M,... or LO-HI)", part, HeaderLen, MaxClientMessage)
	}
	if n < HeaderLen || n > MaxClientMessage {
		return 0, fmt.Errorf("size %d outside [%d, %d]", n, HeaderLen, MaxClientMessage)
	}
	return n, nil
}
