// Command smcdump is a tshark-like dissector for SMC-R captures: TCP SMC
// option, CLC handshake, RoCE LLC/CDC/RDMA traffic. See output.Options.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/gcfloor"
	"github.com/smcscope/smcscope/output"
)

// newFlags defines smcdump's flags over o and the rest (the man page and
// completions are made from the same set: docs.go).
func newFlags(o *output.Options, format *string, interactive *bool, keep *int, export *string, bo *browseOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("smcdump", flag.ContinueOnError)
	fs.StringVar(&o.Read, "r", "", "read capture `FILE` (pcap or pcapng, gzipped or not; a FIFO or - for stdin is read as it arrives)")
	fs.StringVar(&o.Iface, "i", "", "capture live on `IFACE` (needs CAP_NET_RAW)")
	fs.StringVar(&o.Write, "w", "", "write selected frames to pcapng `FILE`")
	fs.IntVar(&o.Count, "c", 0, "stop after `N` selected frames (-I: read the first N frames)")
	fs.IntVar(&o.Jobs, "j", 0, "decode a file on `N` goroutines (at most 256), output in frame order (0: one per CPU this process may use; 1: one goroutine; live captures, stdin and -z with -c use one)")
	fs.Bool("n", false, "no name resolution: smcdump never resolves names (taken for tshark's -nr FILE)")
	fs.BoolVar(&o.All, "a", false, "show all frames, not only SMC-relevant ones")
	fs.BoolVar(&o.Quiet, "q", false, "print no frames (only the -z views)")
	fs.BoolVar(&o.Verbose, "V", false, "print the field tree of each frame")
	fs.BoolVar(&o.Hex, "x", false, "print a hex dump of each frame")
	fs.StringVar(format, "T", "", "output `FORMAT`: text, json, jsonl, fields")
	fs.Func("e", "`FIELD` to print with -T fields (repeatable; -G fields lists them)", func(s string) error {
		o.Fields = append(o.Fields, s)
		return nil
	})
	fs.Func("E", "-T fields `OPTION`: separator=, header=y|n, aggregator=, quote=d|s|n, occurrence=f|l|a", o.ParseSeparatorOption)
	fs.StringVar(&o.Glossary, "G", "", "print a glossary of `KIND`: fields")
	fs.StringVar(&o.DisplayFilter, "Y", "", "display filter `EXPR` (e.g. smc.clc.type == 4)")
	fs.StringVar(&o.CaptureFilter, "f", "", "live capture filter: pcap-filter `EXPR` (via tcpdump) or bpf:RAW")
	fs.IntVar(&o.Snaplen, "s", 0, "live snap length in `BYTES` (0: whole frames)")
	fs.BoolVar(interactive, "I", false, "browse the capture interactively (with -r FILE, a FIFO, - for stdin, or -i IFACE; -w FILE is the export file)")
	fs.BoolVar(&bo.tail, "tail", false, "with -I -r FILE: follow FILE as it grows (as tail -f) until you quit")
	fs.Func("o", "setting `NAME:VALUE`: column.format:SPEC sets the columns of the text lines and of -I's packet list, SPEC a comma-separated list of [TITLE=]NAME[:WIDTH], NAME a column (No., Time, Source, Destination, Protocol, Length, Info) or a field of -G fields", bo.set)
	fs.BoolVar(&bo.noConfig, "no-config", false, "with -I: ignore the saved column layout, time format and filter history, and save none")
	fs.StringVar(export, "export-tcp", "", "write the capture to pcapng `FILE` with every SMC-R connection as the TCP connection its application saw (with -r)")
	fs.IntVar(keep, "K", defaultKeep, "keep the newest `N` ended connections whole for -z views and smc.conn.* fields (older ones are folded into the totals; each costs 4-20 KiB)")
	fs.Func("z", "tracker view `SPEC` (repeatable):"+viewHelp(), func(s string) error {
		o.Views = append(o.Views, s)
		return nil
	})
	return fs
}

// gcFloor is the runtime's memory below which the collector does not run
// while the live heap is below half of it (package gcfloor): a capture's
// run with little state then never collects; its resident size grows
// by the garbage, up to that.
const gcFloor = 32 << 20

func main() {
	gcfloor.Set(gcFloor)
	var (
		o           output.Options
		format      string
		interactive bool
		keep        = defaultKeep
		export      string
		bo          browseOptions
	)
	fs := newFlags(&o, &format, &interactive, &keep, &export, &bo)
	if code, exit := cli.Done(cli.Parse(fs, os.Args[1:]), page, fs, os.Stdout, os.Stderr); exit {
		os.Exit(code)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "smcdump: unexpected argument %q\n", fs.Arg(0))
		os.Exit(2)
	}
	o.Program = "smcdump"
	o.Format = output.Format(format)
	if countZero(fs, o.Count) {
		// 0 is the default, no limit; asked for, it is a mistake, as
		// tcpdump and tshark take it.
		fmt.Fprintln(os.Stderr, "smcdump: -c 0: want a positive count")
		os.Exit(2)
	}
	if keep < 1 {
		fmt.Fprintf(os.Stderr, "smcdump: -K %d: need at least 1 connection\n", keep)
		os.Exit(2)
	}
	o.NewTracker = func(views []string) (output.Tracker, error) { return newTracker(views, keep) }
	if bo.columns != "" && !interactive {
		// The text lines take any field; the browser checks its own.
		o.Columns, _ = columns.Parse(bo.columns, nil) // checked by bo.set
	}
	o.Progress = o.Read != "" && o.Read != "-" && term.IsTerminal(int(os.Stderr.Fd()))

	ctx, stop := cli.NotifyContext(context.Background())
	run := output.Run
	if interactive {
		run = func(ctx context.Context, o output.Options) error { return browse(ctx, o, bo) }
	} else if bo.tail || bo.noConfig {
		fmt.Fprintln(os.Stderr, "smcdump: --tail and --no-config are for the browser (-I); try 'smcdump --help'")
		os.Exit(2)
	} else if o.Read == "-" && term.IsTerminal(int(os.Stdin.Fd())) {
		// A capture is binary: from the terminal, the run would wait for
		// what no one types.
		fmt.Fprintln(os.Stderr, "smcdump: -r -: stdin is the terminal; pipe a capture in (tcpdump -w - ... | smcdump -r -)")
		os.Exit(2)
	} else if export != "" {
		run = func(ctx context.Context, o output.Options) error { return exportTCP(ctx, o, export) }
	}
	err := run(ctx, o)
	stop()
	if err != nil {
		// Every error the same way: smcdump: FILE: frame N (file offset
		// 0x..): what, or smcdump: -FLAG: what.
		fmt.Fprintln(os.Stderr, "smcdump: "+err.Error())
	}
	code := output.ExitCode(err)
	switch {
	case interactive:
		code = cli.ExitStatus(ctx, code)
	case o.Read != "":
		// A capture read to its end is the job; stopped before it, what
		// was printed is a part, and a script must be able to tell.
		var se *cli.SignalError
		if errors.As(context.Cause(ctx), &se) {
			fmt.Fprintf(os.Stderr, "smcdump: %s: stopped by %s before the capture's end: what was read is printed\n", o.Read, se.Name())
			code = 128 + int(se.Signal)
		}
	}
	os.Exit(code)
}

// countZero reports whether -c was given as 0.
func countZero(fs *flag.FlagSet, count int) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "c" })
	return given && count == 0
}
