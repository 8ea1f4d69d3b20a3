package output

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// TestFieldsDoNotAllocate: a -T fields line (after the reader is warm)
// must not allocate, for TCP/CLC and RoCE frames alike.
func TestFieldsDoNotAllocate(t *testing.T) {
	names := []string{"frame.number", "frame.time_epoch", "eth.src", "ip.src", "ip.dst", "tcp.srcport",
		"roce.bth.psn", "roce.bth.opcode", "smc.cdc.prod.count", "smc.llc.type", "roce.icrc.ok"}
	p := &fieldsPrinter{w: bufio.NewWriter(io.Discard), sep: "\t"}
	var ids []decode.FieldID
	for _, n := range names {
		d, ok := decode.LookupField(n)
		if !ok {
			t.Fatalf("no field %s", n)
		}
		p.defs = append(p.defs, d)
		ids = append(ids, d.ID)
	}
	p.index()
	for i, fr := range readFrames(t, pingpong, 40) {
		n := i + 1
		if n < 14 { // RoCE frames only: replaying a TCP segment is a retransmission
			continue
		}
		src := &replay{data: fr.Data, ci: fr.CI}
		r, err := capture.NewReader("a", src, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		r.SetFieldDemand(ids)
		line := func() {
			f, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			p.frame(f)
		}
		line()
		if a := testing.AllocsPerRun(100, line); a != 0 {
			t.Errorf("frame %d: %v allocations per -T fields line", n, a)
		}
	}
}

// replay serves one frame forever.
type replay struct {
	data []byte
	ci   gopacket.CaptureInfo
}

func (r *replay) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	return r.data, r.ci, nil
}

// TestVerboseDoesNotAllocate: -V's field tree of a RoCE frame (after the
// printer is warm) must not allocate: it did, for every field's value and
// every frame's tree, and collected garbage ~80 times a 200 MiB run.
func TestVerboseDoesNotAllocate(t *testing.T) {
	var base time.Time
	p := &textPrinter{w: bufio.NewWriter(io.Discard), verbose: true, base: &base}
	for i, fr := range readFrames(t, pingpong, 40) {
		n := i + 1
		if n < 14 { // RoCE frames only: replaying a TCP segment is a retransmission
			continue
		}
		r, err := capture.NewReader("a", &replay{data: fr.Data, ci: fr.CI}, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		tree := func() {
			f, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			p.frame(f)
		}
		tree()
		if a := testing.AllocsPerRun(100, tree); a != 0 {
			t.Errorf("frame %d: %v allocations per -V frame", n, a)
		}
	}
}
