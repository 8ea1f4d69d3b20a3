package cli

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// FuzzExpand: no command line makes Expand panic, and what it accepts the
// flag package reads without an unknown flag or a missing value (a bad
// value is the flag's to report).
func FuzzExpand(f *testing.F) {
	for _, s := range []string{"-nr f.pcap", "-c2", "-qz smc,conns", "-nc=5 -- -x", "host -n -5 -", "-r -odd", "--once -interval=2s", "-nV=false", "---x", "-=", "-\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		fs := tsharkFlags()
		out, err := Expand(fs, args)
		if err != nil {
			var ue *UsageError
			if !errors.As(err, &ue) && !errors.Is(err, flag.ErrHelp) && !errors.Is(err, ErrVersion) {
				t.Fatalf("Expand(%q) = %v: not a usage error", args, err)
			}
			return
		}
		fs.SetOutput(io.Discard)
		// The flag package's errors are text only; its value errors all
		// begin "invalid".
		if err := fs.Parse(out); err != nil && !strings.HasPrefix(err.Error(), "invalid ") {
			t.Fatalf("Expand(%q) = %q, which the flag package refuses: %v", args, out, err)
		}
	})
}
