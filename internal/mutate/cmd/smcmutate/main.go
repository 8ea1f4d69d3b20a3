// Command smcmutate writes damaged copies of a capture, as the
// differential test makes them: go run ./internal/mutate/cmd/smcmutate
// -seed 1 -n 50 -o /tmp/variants samples/pingpong.pcap. With -list it only
// prints the mutations; with -m "drop 7" it writes that one (any mutation
// as -list names them, seed and -n aside).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/internal/mutate"
)

var page = cli.Page{
	Name:     "smcmutate",
	Summary:  "write damaged copies of a capture, as the differential test makes them",
	Synopsis: []string{"[-seed S] [-n N] [-o DIR] [-list] [-m MUTATION] CAPTURE"},
}

func main() {
	fs := flag.NewFlagSet(page.Name, flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "seed of the mutations")
	n := fs.Int("n", 50, "how many variants")
	out := fs.String("o", ".", "directory the variants are written to")
	list := fs.Bool("list", false, "print the mutations, write nothing")
	only := fs.String("m", "", `write only this mutation, as -list names it ("drop 7", "drop 40-7204", "dup 3", "flip 27:66^0x40", "cut 12", "start 40", "oneway 1", "skew 2000us", "mirror vlan 100", "step 40-5000ms", "twice 5000us")`)
	err := cli.Parse(fs, os.Args[1:])
	if err == nil && fs.NArg() != 1 {
		err = &cli.UsageError{Tool: page.Name, Msg: "want exactly one CAPTURE"}
	}
	if code, exit := cli.Done(err, page, fs, os.Stdout, os.Stderr); exit {
		os.Exit(code)
	}
	if err := run(fs.Arg(0), *seed, *n, *out, *list, *only); err != nil {
		fmt.Fprintln(os.Stderr, "smcmutate:", err)
		os.Exit(1)
	}
}

func run(path string, seed uint64, n int, out string, list bool, only string) error {
	var one []mutate.Mutation
	if only != "" {
		m, err := mutate.Parse(only)
		if err != nil {
			return err
		}
		one = []mutate.Mutation{m}
	}
	frames, lt, err := mutate.ReadFile(path)
	if err != nil {
		return err
	}
	ms := mutate.Generate(seed, frames, n)
	if one != nil {
		ms = one
	}
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for i, m := range ms {
		if list {
			fmt.Println(m)
			continue
		}
		name := filepath.Join(out, fmt.Sprintf("%s-%04d-%s.pcap", base, i+1, strings.NewReplacer(" ", "_", ":", "_", "^", "x", "/", "of", "+", "p").Replace(m.String())))
		if err := mutate.WriteFile(name, lt, m.Apply(frames)); err != nil {
			return err
		}
		fmt.Println(name, m)
	}
	return nil
}
