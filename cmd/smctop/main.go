// Command smctop is the live SMC dashboard and Prometheus exporter: SMC
// sockets joined to their link groups, links, RDMA devices and counters,
// from the kernel, a live interface or a capture replay.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

func main() {
	fs := flag.NewFlagSet("smctop", flag.ContinueOnError)
	interval := fs.Duration("interval", 2*time.Second, "refresh `INTERVAL`")
	iface := fs.String("i", "", "also decode live traffic on `IFACE` (needs CAP_NET_RAW)")
	read := fs.String("r", "", "replay capture `FILE` through the dashboard instead of the kernel")
	speed := fs.Float64("speed", 0, "replay at `N` times the capture's pace (0: as fast as possible)")
	once := fs.Bool("once", false, "print one snapshot of every view and exit")
	count := fs.Int("count", 0, "print `N` snapshots, one per interval, and exit (events accumulate across them)")
	format := fs.String("o", "text", "--once/--count output `FORMAT`: text, json or jsonl (one line per snapshot)")
	listen := fs.String("listen", "", "serve Prometheus /metrics on `ADDR` (e.g. 127.0.0.1:9714)")
	noTUI := fs.Bool("no-tui", false, "with --listen: run the exporter only")
	sysfs := fs.String("path.sysfs", "/sys", "sysfs mount `PATH`")
	procfs := fs.String("path.procfs", "/proc", "procfs mount `PATH`")
	tracefs := fs.String("path.tracefs", "/sys/kernel/tracing", "tracefs mount `PATH` (empty: no tracepoints)")
	recorded := fs.String("netlink-replay", "", "read the kernel's SMC state from a recording `DIR` (smcnl/testdata layout)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			os.Exit(0)
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 || (*format != "text" && *format != "json" && *format != "jsonl") {
		fmt.Fprintln(os.Stderr, "smctop: usage: smctop [--once [-o text|json]] [-r FILE | -i IFACE] [--listen ADDR]; -h lists the flags")
		os.Exit(2)
	}
	if !*once && *count <= 0 && !*noTUI {
		if err := tui.CheckTerminal(); err != nil {
			fmt.Fprintln(os.Stderr, "smctop: no terminal: the dashboard needs one; use --once, --count N or --listen ADDR --no-tui")
			os.Exit(2)
		}
	}
	var o monitor.Options
	switch {
	case *read != "":
		o = monitor.Options{KernelErr: fmt.Errorf("replaying %s, not reading the kernel", *read)}
	case *recorded != "":
		k, err := monitor.ReplayKernel(*recorded)
		o = monitor.Options{Kernel: k, KernelErr: err, SysfsRoot: *sysfs}
	default:
		tfs := *tracefs
		if *once {
			tfs = "" // one snapshot has no time for tracepoints to fire
		}
		o = monitor.Host(*sysfs, *procfs, tfs)
	}
	if *read != "" || *iface != "" {
		w, err := monitor.OpenWire(*read, *iface, "", *speed)
		if err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			os.Exit(1)
		}
		o.Wire = w
	}
	m := monitor.New(o)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := 0
	if *once {
		*count = 1
	}
	if *count > 0 {
		code = runCount(ctx, m, *format, *interval, *count)
	} else if err := runLive(ctx, m, *interval, *listen, *noTUI); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
		code = 1
	}
	stop()
	// Close removes the tracefs instance and its enabled tracepoints.
	if err := m.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
	}
	os.Exit(code)
}
