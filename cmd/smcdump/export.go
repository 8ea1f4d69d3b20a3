package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/numfmt"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/output/follow"
)

// exportTCP runs smcdump -r FILE --export-tcp OUT: the capture with every
// SMC-R connection written as the TCP connection its application saw
// (follow.Export). It reads a file twice, so it takes no live capture,
// and it prints no frames.
func exportTCP(ctx context.Context, o output.Options, out string) error {
	switch {
	case o.Read == "" || o.Read == "-":
		return &output.UsageError{Msg: "--export-tcp: needs -r FILE (it reads the capture twice)"}
	case o.Format != "" || o.Verbose || o.Hex || len(o.Views) > 0 || len(o.Fields) > 0 || o.DisplayFilter != "" || o.Write != "":
		return &output.UsageError{Msg: "--export-tcp: -T, -e, -V, -x, -Y, -w and -z shape other output; export alone"}
	}
	if st, err := os.Stat(o.Read); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A second open of a FIFO waits for a writer that has gone.
		return fmt.Errorf("%s: not a regular file (%s): --export-tcp reads the capture twice; save it to a file first", o.Read, fileKind(st.Mode()))
	}
	st, err := follow.Export(ctx, o.Read, out)
	// A file cut short or read past its damage was exported all the same
	// (its error follows): what the export holds is said first.
	written := st.Passed+st.Replaced > 0 && (errors.Is(err, capture.ErrTruncatedFile) || errors.Is(err, capture.ErrCorruptRecord))
	if err != nil && !written {
		return err
	}
	if !o.Quiet {
		fmt.Fprintf(os.Stderr, "smcdump: %s: %s as TCP (%s), %s passed through, %d replaced",
			out, numfmt.Count(st.Conns, "SMC-R connection"), numfmt.Count(st.Segments, "segment"), numfmt.Count(st.Passed, "frame"), st.Replaced)
		if st.NoTuple > 0 {
			fmt.Fprintf(os.Stderr, ", %d joined mid-stream not exported (no 4-tuple)", st.NoTuple)
		}
		if st.GapsBytes > 0 {
			fmt.Fprintf(os.Stderr, ", %d bytes missing in the capture", st.GapsBytes)
		}
		fmt.Fprintln(os.Stderr)
	}
	return err
}

// fileKind names a file's type for a message.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}
