// Command smctop is the live SMC dashboard and Prometheus exporter: SMC
// sockets joined to their link groups, links, RDMA devices and counters,
// from the kernel, a live interface or a capture replay.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/smcscope/smcscope/fleet"
	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/top"
)

// config is the parsed command line.
type config struct {
	interval time.Duration
	iface    string
	read     string
	speed    float64
	once     bool
	count    int // 0: no --count, the dashboard (or the exporter alone)
	format   string
	listen   string
	noTUI    bool
	sysfs    string
	procfs   string
	tracefs  string
	recorded string
	prom     string // --prometheus: the fleet view
	remote   string // --remote: another host's exporter
	// The exporter's TLS and basic auth, and /snapshot.json off.
	webConfig  string
	noSnapshot bool
	// httpConfig: how --prometheus and --remote connect (TLS, auth);
	// exporterConfig: how the fleet view reaches each host's exporter.
	httpConfig     string
	exporterConfig string
	// hostName and hostAddrs name this host in smc_host_info, replacing
	// what the kernel (or a recording) says.
	hostName  string
	hostAddrs addrList
}

// addrList is --host-address: IP addresses, comma-separated.
type addrList []netip.Addr

func (l *addrList) String() string {
	var s []string
	for _, a := range *l {
		s = append(s, a.String())
	}
	return strings.Join(s, ",")
}

func (l *addrList) Set(v string) error {
	*l = nil
	for _, f := range strings.Split(v, ",") {
		a, err := netip.ParseAddr(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("--host-address %q: want IP addresses, comma-separated (%q is not one)", v, f)
		}
		*l = append(*l, a)
	}
	return nil
}

// dashboard reports whether cfg runs the interactive dashboard.
func (c config) dashboard() bool { return c.count == 0 && !c.noTUI }

// newFlags defines smctop's flags over c (the man page and completions are
// made from the same set: docs.go).
func newFlags(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("smctop", flag.ContinueOnError)
	fs.DurationVar(&c.interval, "interval", 2*time.Second, "refresh `INTERVAL` (positive)")
	fs.StringVar(&c.iface, "i", "", "also decode live traffic on `IFACE` (needs CAP_NET_RAW)")
	fs.StringVar(&c.read, "r", "", "replay capture `FILE` through the dashboard instead of the kernel")
	fs.Float64Var(&c.speed, "speed", 0, "with -r: replay at `N` times the capture's pace (0: as fast as possible)")
	fs.BoolVar(&c.once, "once", false, "print one snapshot of every view and exit")
	fs.IntVar(&c.count, "count", 0, "print `N` (1 or more) snapshots, one per interval, and exit (events accumulate across them; with -r: one per interval of capture time, at once, ending with the capture)")
	fs.StringVar(&c.format, "o", "text", "--once/--count output `FORMAT`: text, json (--count: one JSON array) or jsonl (one line per snapshot)")
	fs.StringVar(&c.listen, "listen", "", "serve Prometheus /metrics on `ADDR` (e.g. 127.0.0.1:9714; port 0 picks one, printed on stderr)")
	fs.BoolVar(&c.noTUI, "no-tui", false, "with --listen: run the exporter only")
	fs.StringVar(&c.webConfig, "web.config.file", "", "with --listen: TLS and basic auth for every endpoint from `FILE` (node_exporter's web config format)")
	fs.BoolVar(&c.noSnapshot, "web.disable-snapshot", false, "with --listen: do not serve /snapshot.json (connections and process names); /metrics stays")
	fs.StringVar(&c.exporterConfig, "exporter.config.file", "", "with --prometheus: how enter reaches a host's exporter for its dashboard, from `FILE` in Prometheus' http_config format (a tls_config makes it https)")
	fs.StringVar(&c.httpConfig, "http.config.file", "", "with --prometheus or --remote: how to connect, from `FILE` in Prometheus' http_config format (tls_config, basic_auth with password_file, bearer_token_file ...)")
	fs.StringVar(&c.hostName, "host-name", "", "name this host `NAME` in smc_host_info and the fleet view (default: the kernel's SMC host name, a recording's, else the system's)")
	fs.Var(&c.hostAddrs, "host-address", "this host's own `ADDRS` (comma-separated) in smc_host_info, by which the fleet view finds it as another host's peer (default: its interfaces', or a recording's host.json; its SMC sockets' and links' are added)")
	fs.StringVar(&c.sysfs, "path.sysfs", "/sys", "sysfs mount `PATH`")
	fs.StringVar(&c.procfs, "path.procfs", "/proc", "procfs mount `PATH`")
	fs.StringVar(&c.tracefs, "path.tracefs", "/sys/kernel/tracing", "tracefs mount `PATH` (empty: no tracepoints)")
	fs.StringVar(&c.recorded, "netlink-replay", "", "read the kernel's SMC state from a recording `DIR` (smcnl/testdata layout)")
	fs.StringVar(&c.remote, "remote", "", "show another host: its exporter's snapshot (smctop --listen there) at `URL`, http://HOST:9714")
	fs.StringVar(&c.prom, "prometheus", "", "the fleet view: every host's exporter read from the Prometheus server at `URL` (hosts, link groups joined across hosts, who declined whom)")
	return fs
}

// runFleet is smctop --prometheus: the fleet's dashboard, or its
// snapshots with --once/--count.
func runFleet(c config) int {
	url, err := fleet.ParseURL(c.prom)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 2
	}
	hc, url, err := fleet.HTTPClient(url, c.httpConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 2
	}
	fc := &fleet.Client{URL: url, HTTP: hc}
	ex, err := exporters(c.exporterConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 2
	}
	ctx, stop := cli.NotifyContext(context.Background())
	defer stop()
	if c.count > 0 {
		return runFleetCount(ctx, fc, c)
	}
	if err := top.RunFleet(ctx, fc, c.interval, ex); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 1
	}
	return cli.ExitStatus(ctx, 0)
}

// parseArgs parses and checks the command line. Its errors are one line
// naming the flag, for exit status 2, or cli's requests for the help and
// the version.
func parseArgs(args []string) (config, error) {
	var c config
	fs := newFlags(&c)
	if err := cli.Parse(fs, args); err != nil {
		return c, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q: smctop takes flags only; try 'smctop --help'", fs.Arg(0))
	case c.interval <= 0:
		return c, fmt.Errorf("--interval: must be positive, got %v", c.interval)
	case set["count"] && c.count < 1:
		return c, fmt.Errorf("--count: must be 1 or more, got %d (without --count the dashboard runs)", c.count)
	case c.once && set["count"]:
		return c, errors.New("--once and --count: use one (--once prints one snapshot)")
	case c.format != "text" && c.format != "json" && c.format != "jsonl":
		return c, fmt.Errorf("-o: unknown format %q (text, json, jsonl)", c.format)
	case set["o"] && !c.once && !set["count"]:
		return c, errors.New("-o: only with --once or --count N")
	case math.IsNaN(c.speed) || math.IsInf(c.speed, 0) || c.speed < 0:
		return c, fmt.Errorf("--speed: must be a finite number ≥ 0, got %v", c.speed)
	case set["speed"] && c.read == "":
		return c, errors.New("--speed: only with -r FILE")
	case c.read != "" && c.iface != "":
		return c, errors.New("-r and -i: use one (a capture or a live interface)")
	case c.read != "" && c.recorded != "":
		return c, errors.New("-r and --netlink-replay: use one (a capture replay does not read the kernel)")
	case c.noTUI && c.listen == "":
		return c, errors.New("--no-tui: only with --listen ADDR (without the dashboard the exporter is all that runs)")
	case c.prom != "" && (c.read != "" || c.iface != "" || c.recorded != "" || c.listen != ""):
		return c, errors.New("--prometheus: the fleet view reads Prometheus only (not with -r, -i, --netlink-replay or --listen)")
	case c.remote != "" && (c.read != "" || c.iface != "" || c.recorded != "" || c.listen != "" || c.prom != ""):
		return c, errors.New("--remote: shows another host's exporter only (not with -r, -i, --netlink-replay, --listen or --prometheus)")
	case (c.webConfig != "" || c.noSnapshot) && c.listen == "":
		return c, errors.New("--web.config.file, --web.disable-snapshot: only with --listen ADDR")
	case c.exporterConfig != "" && c.prom == "":
		return c, errors.New("--exporter.config.file: only with --prometheus URL")
	case c.httpConfig != "" && c.prom == "" && c.remote == "":
		return c, errors.New("--http.config.file: only with --prometheus URL or --remote URL")
	case (c.hostName != "" || set["host-address"]) && (c.read != "" || c.remote != "" || c.prom != ""):
		return c, errors.New("--host-name, --host-address: name the host whose kernel is read (not with -r, --remote or --prometheus)")
	case c.listen != "" && (c.once || set["count"]):
		return c, errors.New("--listen: not with --once or --count (use --listen ADDR --no-tui for the exporter alone)")
	}
	if c.once {
		c.count = 1
	}
	return c, nil
}

func main() { os.Exit(run(os.Args[1:])) }

// run is smctop; it returns the exit status: 0, 1 when a source or
// the output failed, 2 for a bad command line, no terminal, or (as
// smcdump) a capture damaged part-way, whose snapshots are still printed.
func run(args []string) int {
	c, err := parseArgs(args)
	if code, exit := cli.Done(err, page, newFlags(&config{}), os.Stdout, os.Stderr); exit {
		return code
	}
	if err := checkFiles(c); err != nil {
		// Said before the terminal: a user without one is told first
		// what no terminal would mend.
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		return 1
	}
	if c.dashboard() {
		if err := tui.CheckTerminal(); err != nil {
			advice := "--once, --count N or --listen ADDR --no-tui"
			if c.prom != "" {
				advice = "--once or --count N" // the fleet view has no exporter of its own
			}
			fmt.Fprintln(os.Stderr, "smctop: no terminal: the dashboard needs one; use "+advice)
			return 2
		}
	}
	if c.prom != "" {
		return runFleet(c)
	}
	// Before the capture is opened: a FIFO's reads wait for its writer,
	// and only the context ends that wait.
	ctx, stop := cli.NotifyContext(context.Background())
	defer stop()
	var o monitor.Options
	switch {
	case c.remote != "":
		url, err := fleet.ParseURL(c.remote)
		if err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+strings.Replace(err.Error(), "--prometheus", "--remote", 1))
			return 2
		}
		hc, url, err := fleet.HTTPClient(url, c.httpConfig)
		if err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			return 2
		}
		o = monitor.Options{Remote: url, RemoteHTTP: hc}
	case c.read != "":
		o = monitor.Options{KernelErr: fmt.Errorf("replaying %s, not reading the kernel", c.read)}
	case c.recorded != "":
		k, err := monitor.ReplayKernel(c.recorded)
		if err != nil {
			fmt.Fprintf(os.Stderr, "smctop: --netlink-replay %s: %v\n", c.recorded, err)
			return 1
		}
		o = monitor.Options{Kernel: k, SysfsRoot: c.sysfs}
	default:
		tfs := c.tracefs
		if c.count == 1 {
			tfs = "" // one snapshot has no time for tracepoints to fire
		}
		o = monitor.Host(c.sysfs, c.procfs, tfs)
	}
	if c.hostName != "" {
		o.HostName = c.hostName
	}
	if len(c.hostAddrs) > 0 {
		as := []netip.Addr(c.hostAddrs)
		o.Addrs = func() []netip.Addr { return as }
	}
	if c.read != "" || c.iface != "" {
		w, err := monitor.OpenWireContext(ctx, c.read, c.iface, "", c.speed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			if damaged(err) {
				return 2 // as smcdump: a damaged file, not a missing one
			}
			return 1
		}
		o.Wire = w
	}
	m := monitor.New(o)
	code := 0
	if c.count > 0 {
		code = runCount(ctx, m, c)
	} else if err := runLive(ctx, m, c); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		code = 1
	}
	stop()
	if c.dashboard() {
		// The exporter alone (--no-tui) ends with 0 on SIGTERM: systemd
		// stops it so, and would count 143 as a failed stop.
		code = cli.ExitStatus(ctx, code)
	}
	// Close removes the tracefs instance and its enabled tracepoints.
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
	}
	return code
}

// checkFiles says what is wrong with the capture (-r: missing,
// unreadable, a directory) or the recording (--netlink-replay: missing,
// not a directory) c names, before anything else runs. A recording is
// read lazily, file by file, where a wrong directory would only show as a
// missing source. A FIFO is not opened here: its open waits for the
// writer.
func checkFiles(c config) error {
	if c.recorded != "" {
		st, err := os.Stat(c.recorded)
		if err == nil && !st.IsDir() {
			err = errors.New("not a directory")
		}
		if err != nil {
			return fmt.Errorf("--netlink-replay %s: %v", c.recorded, unwrapPath(err))
		}
	}
	if c.read == "" || c.read == "-" {
		return nil
	}
	st, err := os.Stat(c.read)
	if err == nil && st.IsDir() {
		err = errors.New("is a directory")
	}
	if err == nil && st.Mode().IsRegular() {
		var f *os.File
		if f, err = os.Open(c.read); err == nil {
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %v", c.read, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the path an *os.PathError repeats, for messages that
// name it already.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// listen binds the exporter's address and says where it listens: with
// port 0 only the bound address tells a scraper where to go.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	fmt.Fprintf(os.Stderr, "smctop: serving /metrics on %s\n", ln.Addr())
	return ln, nil
}

// exporters is how the fleet view reaches the hosts' exporters: from an
// http_config file, https when it sets TLS.
func exporters(file string) (top.Exporters, error) {
	if file == "" {
		return top.Exporters{}, nil
	}
	hc, tls, err := fleet.HTTPClientFile(file)
	if err != nil {
		return top.Exporters{}, fmt.Errorf("--exporter.config.file %s: %w", file, err)
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return top.Exporters{Scheme: scheme, HTTP: hc}, nil
}
