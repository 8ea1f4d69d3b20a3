// Command readloop is bench/compare.sh's reference: the pcap read loop with
// nothing decoded. It reads every frame of a pcap with pcapgo's zero-copy
// reader behind the same 256 KiB buffer as smcdump's capture reader and
// prints how many frames and bytes it saw. A tool that decodes cannot read
// a file faster than this loop, so compare.sh gives every tool's frames/s
// as a fraction of it.
//
//	go run ./bench/readloop big.pcap
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket/pcapgo"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: readloop file.pcap")
		os.Exit(2)
	}
	frames, bytes, err := readAll(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "readloop:", err)
		os.Exit(1)
	}
	fmt.Printf("%d frames %d bytes\n", frames, bytes)
}

// readAll reads the pcap name to its end and returns the number of frames
// and of captured bytes in them.
func readAll(name string) (frames, bytes int64, err error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<18))
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", name, err)
	}
	for {
		data, _, err := r.ZeroCopyReadPacketData()
		if err == io.EOF {
			return frames, bytes, nil
		}
		if err != nil {
			return frames, bytes, fmt.Errorf("%s: frame %d: %w", name, frames+1, err)
		}
		frames++
		bytes += int64(len(data))
	}
}
