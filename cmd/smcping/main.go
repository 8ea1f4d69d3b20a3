// Command smcping measures SMC-R (AF_SMC) round trips against TCP on the
// same path and proves which mode each connection really used. See
// package probe for the protocol and the options.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/probe"
)

func main() {
	os.Exit(run())
}

func run() int {
	opt, err := probe.ParseArgs(os.Args[1:])
	if code, exit := cli.Done(err, page, probe.FlagSet(), os.Stdout, os.Stderr); exit {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), cli.EndSignals()...)
	defer stop()
	err = probe.Run(ctx, opt, os.Stdout, os.Stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, probe.ErrUsage): // --log FILE that cannot be created
		fmt.Fprintf(os.Stderr, "smcping: %v\n", err)
		return 2
	case opt.Server && ctx.Err() != nil:
		return 0
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "smcping: interrupted")
		return 1
	}
	fmt.Fprintf(os.Stderr, "smcping: %v\n", err)
	return 1
}
