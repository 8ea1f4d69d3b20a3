package capture

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/smcscope/smcscope/internal/mutate"
)

// FuzzFile feeds arbitrary bytes as a capture file: the reader must end with
// a frame stream and then io.EOF or one error, never panic or loop, whatever
// the header, record lengths or frame contents. Seeds are the first frames of
// real captures, so mutations start from valid pcap framing.
func FuzzFile(f *testing.F) {
	for _, name := range []string{pingpong, declineRDM, fallback, noUEID, publicRoCE, negTFO} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	// pcapng framing too, with a second interface of another link type.
	ng := ngWrite(f, readRaw(f, pingpong)[:20], layers.LinkTypeEthernet, 9)
	f.Add(ng)
	blocks := ngBlocksOf(f, ng)
	idb := blocks[1]
	f.Add(append(append(bytes.Clone(ng[:blocks[5].off]), ng[idb.off:idb.off+idb.len]...), ng[blocks[5].off:]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewFileReader("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		defer r.Close()
		for i := 0; i < 10000; i++ {
			fr, err := r.Next()
			if err != nil {
				return
			}
			fr.Fields()
		}
		t.Fatal("more than 10000 frames from a fuzz input")
	})
}

// FuzzFrame feeds arbitrary bytes as one Ethernet frame, twice (so CLC
// reassembly sees a retransmission), through the full decoder and field
// extraction. Seeds are real SMC frames: SYN with the option, CLC, LLC,
// CDC, RDMA WRITE, ACK.
func FuzzFrame(f *testing.F) {
	for _, fr := range readRaw(f, pingpong)[:40] {
		f.Add(fr.Data)
	}
	for _, fr := range readRaw(f, declineRDM)[:12] {
		f.Add(fr.Data)
	}
	// Frames a mirror or an overlay carried (tunnel.go): ERSPAN III with
	// its T bit, VXLAN.
	inner := readRaw(f, pingpong)[8].Data
	f.Add(mutate.Carry("erspan3", inner, 1, true))
	f.Add(mutate.Carry("vxlan", inner, 0, false))
	f.Fuzz(func(t *testing.T, data []byte) {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(data), Length: len(data)}
		// The third copy as a snap length would have cut a longer frame
		// (the cut decoders: BTH, LLC, CDC as far as captured).
		cut := ci
		cut.Length += 1 + len(data)%97
		src := &sliceSource{frames: []rawFrame{{CI: ci, Data: data}, {CI: ci, Data: data}, {CI: cut, Data: data}}}
		r, err := NewReader("fuzz", src, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for {
			fr, err := r.Next()
			if err != nil {
				return
			}
			fr.Fields()
			fr.SMCRelevant()
			fr.ICRCMend()
			fr.ICRCMendSMC()
			fr.LengthMend()
		}
	})
}

// FuzzBatchAsNext: a capture file read in batches (ReadBatch, of 3
// frames) and decoded by a BatchDecoder gives the frames Next gives, field
// for field, and the same end: what smcdump -j and the browser's filter
// pass rely on. A pcap or pcapng file is read by read(2) in lean batches
// of the chunks it is read into (of 97 and 400 bytes too: records and
// blocks cut at a chunk's end, and longer than one), whose frames the
// decoder reads again from the chunk; other files (gzip) in batches of
// copies of their frames.
func FuzzBatchAsNext(f *testing.F) {
	for _, name := range []string{pingpong, declineRDM, "../samples/smcd-loopback.pcapng"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 8192)])
	}
	// pingpong's first frames as pcapng.
	src, err := Open(pingpong)
	if err != nil {
		f.Fatal(err)
	}
	var ng bytes.Buffer
	w, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		f.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		fr, err := src.Next()
		if err != nil {
			f.Fatal(err)
		}
		if err := w.WritePacket(fr.CI, fr.Data); err != nil {
			f.Fatal(err)
		}
	}
	src.Close()
	w.Flush()
	f.Add(ng.Bytes())
	dir := f.TempDir()
	frame := func(out *bytes.Buffer, fr *Frame) {
		fmt.Fprintf(out, "%d %d %d %d %x %v %v %v %v\n", fr.Number, fr.UnixNano(), fr.CI.Length, fr.CI.InterfaceIndex, fr.Data, fr.Err, fr.RecordErr, fr.Fields().IDs, fr.Fields().Vals)
	}
	end := func(out *bytes.Buffer, r *Reader, err error) string {
		if err == io.EOF {
			err = r.Damage()
		}
		fmt.Fprintf(out, "end: %v\n", err)
		return out.String()
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := dir + "/f.pcap"
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			how   string
			chunk int
		}{{"chunks", 0}, {"small chunks", 97}, {"chunks of a few records", 400}} {
			how := w.how
			func() {
				r, err := Open(path)
				if err != nil {
					return
				}
				var next bytes.Buffer
				for i := 0; ; i++ {
					fr, err := r.Next()
					if err != nil {
						end(&next, r, err)
						break
					}
					if i == 10000 {
						t.Fatal("more than 10000 frames from a fuzz input")
					}
					frame(&next, fr)
				}
				r.Close()
				if r, err = Open(path); err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				r.SetChunkSize(w.chunk)
				dec := r.NewBatchDecoder()
				var batched bytes.Buffer
				// Each batch is decoded once the next two are read, as
				// batches in flight are: a chunk filled again while a
				// batch still held it shows.
				var ring [3]Batch
				for k := 0; ; k++ {
					if k == 10000 {
						t.Fatalf("%s: more than 10000 batches\nNext\n%s\nbatches\n%s", how, next.String(), batched.String())
					}
					b := &ring[k%3]
					r.ReadBatch(b, 3, nil)
					if k >= 2 {
						dec.Reset(&ring[(k-2)%3])
						for fr := dec.Next(); fr != nil; fr = dec.Next() {
							frame(&batched, fr)
						}
					}
					if b.Err != nil {
						for j := max(0, k-1); j <= k; j++ {
							dec.Reset(&ring[j%3])
							for fr := dec.Next(); fr != nil; fr = dec.Next() {
								frame(&batched, fr)
							}
						}
						end(&batched, r, b.Err)
						break
					}
				}
				if next.String() != batched.String() {
					t.Fatalf("%s: Next\n%s\nbatches\n%s", how, next.String(), batched.String())
				}
			}()
		}
	})
}
