// Command mkbig writes a large pcap for benchmarks by repeating real
// captures: each round appends every input again with its timestamps moved
// past the end of the previous round, so time stays monotonic and the
// traffic is the kernel's own, only more of it.
//
//	go run ./bench/mkbig -o /tmp/big.pcap -size 200 testdata/reference/pingpong.pcap
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

type frame struct {
	ci   gopacket.CaptureInfo
	data []byte
}

func main() {
	out := flag.String("o", "", "output pcap")
	sizeMB := flag.Int64("size", 200, "stop after the round that passes this many MiB")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: mkbig -o out.pcap [-size MiB] in.pcap...")
		os.Exit(2)
	}
	n, err := run(*out, *sizeMB<<20, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkbig:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "mkbig: %s: %d frames\n", *out, n)
}

// run writes rounds of the inputs until the file holds at least size bytes
// and returns the number of frames written.
func run(out string, size int64, inputs []string) (int, error) {
	frames, lt, err := load(inputs)
	if err != nil {
		return 0, err
	}
	if len(frames) == 0 {
		return 0, errors.New("inputs hold no frames")
	}
	f, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriterNanos(bw)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		return 0, err
	}
	span := frames[len(frames)-1].ci.Timestamp.Sub(frames[0].ci.Timestamp) + time.Millisecond
	written, total := 0, int64(24)
	for round := 0; total < size; round++ {
		shift := time.Duration(round) * span
		for _, fr := range frames {
			ci := fr.ci
			ci.Timestamp = ci.Timestamp.Add(shift)
			if err := w.WritePacket(ci, fr.data); err != nil {
				return written, fmt.Errorf("%s: round %d: %w", out, round, err)
			}
			written++
			total += 16 + int64(len(fr.data))
		}
	}
	if err := bw.Flush(); err != nil {
		return written, err
	}
	return written, f.Close()
}

// load reads every input into memory (they are small samples) and checks
// that they share one link type.
func load(inputs []string) ([]frame, layers.LinkType, error) {
	var frames []frame
	var lt layers.LinkType
	for i, name := range inputs {
		in, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		r, err := pcapgo.NewReader(in)
		if err != nil {
			in.Close()
			return nil, 0, fmt.Errorf("%s: %w", name, err)
		}
		if i == 0 {
			lt = r.LinkType()
		} else if r.LinkType() != lt {
			in.Close()
			return nil, 0, fmt.Errorf("%s: link type %v, want %v like %s", name, r.LinkType(), lt, inputs[0])
		}
		for {
			data, ci, err := r.ReadPacketData()
			if err == io.EOF {
				break
			}
			if err != nil {
				in.Close()
				return nil, 0, fmt.Errorf("%s: frame %d: %w", name, len(frames)+1, err)
			}
			frames = append(frames, frame{ci, data})
		}
		in.Close()
	}
	return frames, lt, nil
}
