package decode

import (
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// TestICRCEveryWay runs the ICRC tests with each implementation this
// machine has turned off in turn: in place under AVX-512, the scratch
// buffer folded by AVX-512, by SSE, and hash/crc32 alone.
func TestICRCEveryWay(t *testing.T) {
	fold, foldZ, directZ := haveFold, haveFoldZ, haveDirectZ
	defer func() { haveFold, haveFoldZ, haveDirectZ = fold, foldZ, directZ }()
	for _, w := range []struct {
		name                 string
		fold, foldZ, directZ bool
	}{
		{"scratch-avx512", fold, foldZ, false},
		{"scratch-sse", fold, false, false},
		{"crc32", false, false, false},
	} {
		t.Run(w.name, func(t *testing.T) {
			haveFold, haveFoldZ, haveDirectZ = w.fold, w.foldZ, w.directZ
			for _, f := range []func(*testing.T){TestICRCEveryPacket, TestICRCWorkedExample, TestICRCMasking,
				TestICRCFraming, TestICRCRoCEv1, TestICRCSizes} {
				f(t)
			}
		})
	}
}

// foldSum agrees with hash/crc32 on every length it takes, split between
// its two pieces every way, on random bytes, ones, sparse bytes in zeros
// and bytes with their top bit set, with each fold the machine has.
func TestFoldAgreesWithCRC32(t *testing.T) {
	if !haveFold {
		t.Skip("no PCLMULQDQ")
	}
	canZ := haveFoldZ
	defer func() { haveFoldZ = canZ }()
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 16*foldMax)
	for _, z := range []bool{false, true} {
		if z && !canZ {
			t.Log("no AVX-512 VPCLMULQDQ: icrcFoldZ not checked")
			continue
		}
		haveFoldZ = z
		for round := range 24 {
			for i := range buf {
				switch round % 4 {
				case 0:
					buf[i] = byte(rng.Uint32())
				case 1:
					buf[i] = 0xFF
				case 2:
					buf[i] = 0
					if rng.IntN(50) == 0 {
						buf[i] = byte(rng.Uint32())
					}
				default:
					buf[i] = byte(rng.Uint32()) | 0x80
				}
			}
			for n := 16; n <= len(buf); n += 16 {
				want := crc32.Update(^uint32(0), crc32.IEEETable, buf[:n])
				for _, cut := range []int{0, 16, n / 32 * 16, n - 16, n} {
					if cut < 0 || cut > n {
						continue
					}
					if got := foldSum(buf[:cut], buf[cut:n]); got != want {
						t.Fatalf("avx512 %v, round %d, %d bytes cut at %d: %#08x, want %#08x", z, round, n, cut, got, want)
					}
				}
			}
		}
	}
}

func BenchmarkICRCSum(b *testing.B) {
	canZ := haveFoldZ
	for _, n := range []int{64, 96, 128, 256, 1088} {
		buf := make([]byte, n)
		for i := range buf {
			buf[i] = byte(i)
		}
		b.Run(fmt.Sprint("crc32/", n), func(b *testing.B) {
			var s uint32
			for b.Loop() {
				s += crc32.Update(^uint32(0), crc32.IEEETable, buf)
			}
			sinkCRC = s
		})
		for _, z := range []bool{false, true} {
			if z && !canZ {
				continue
			}
			b.Run(fmt.Sprint("fold", map[bool]string{false: "X", true: "Z"}[z], "/", n), func(b *testing.B) {
				defer func() { haveFoldZ = canZ }()
				haveFoldZ = z
				var s uint32
				for b.Loop() {
					s += foldSum(buf[:64], buf[64:])
				}
				sinkCRC = s
			})
		}
	}
}

var sinkCRC uint32

func BenchmarkICRCStored(b *testing.B) {
	pkt := make([]byte, 100)
	for i := range pkt {
		pkt[i] = byte(i)
	}
	var c ICRC
	for _, n := range []int{44, 84} {
		b.Run(fmt.Sprint("copied/", n), func(b *testing.B) {
			var s uint32
			for b.Loop() {
				buf := c.buf[icrcZeros : icrcZeros+n]
				copy(buf[4:], pkt[:n-4])
				buf[5], buf[12] = 0xFF, 0xFF
				s += c.sum(buf)
			}
			sinkCRC = s
		})
		b.Run(fmt.Sprint("held/", n), func(b *testing.B) {
			var s uint32
			buf := c.buf[icrcZeros : icrcZeros+n]
			copy(buf[4:], pkt[:n-4])
			for b.Loop() {
				s += c.sum(buf)
			}
			sinkCRC = s
		})
	}
}

// directSum, reading a packet in place, agrees with the masked copy at
// every length it takes, with the packet at the very start of a page
// after one that may not be read, inside it, and at the very end of one
// before such a page: it reads in place where its loads stay on pkt's
// pages, and touches nothing outside pkt.
func TestDirectSumInPlace(t *testing.T) {
	for _, c := range []struct {
		name string
		have bool
		sum  func([]byte) (uint32, bool)
		max  int
		// inside: a packet at at of n bytes must be read in place.
		inside func(at, n, page int) bool
	}{
		{"Z", haveDirectZ, directSum, 16*foldMax - 20, func(at, n, page int) bool {
			return at%page >= 20 && (at+n)%page <= page-63 && (at+n)%page != 0
		}},
		{"X", haveFold, directSumX, directXMax, func(at, n, page int) bool { return at%page >= 19 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !c.have {
				t.Skip("not on this CPU")
			}
			testDirectSum(t, c.sum, c.max, c.inside)
		})
	}
}

func testDirectSum(t *testing.T, sum func([]byte) (uint32, bool), most int, inside func(at, n, page int) bool) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 5*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(mem)
	// Pages 0, 2 and 4 may not be touched; 1 and 3 hold the packets.
	for _, g := range []int{0, 2, 4} {
		if err := syscall.Mprotect(mem[g*page:(g+1)*page], syscall.PROT_NONE); err != nil {
			t.Skip(err)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 40; n <= most && n <= page; n++ {
		// Start of page 1, inside it (every distance from the page's
		// start that a read before the packet could cross), end of page 3.
		ats := []int{page, page + 100, 4*page - n}
		for d := 1; d < 24; d++ {
			ats = append(ats, page+d)
		}
		for _, at := range ats {
			if at+n > 2*page && at < 3*page {
				continue // too long to lie inside page 1
			}
			// What lies before the packet is not the message's.
			for i := at - 24; i < at; i++ {
				if g := i / page; g == 1 || g == 3 {
					mem[i] = byte(rng.Uint32())
				}
			}
			pkt := mem[at : at+n]
			for i := range pkt {
				pkt[i] = byte(rng.Uint32())
			}
			msg := append([]byte{0xFF, 0xFF, 0xFF, 0xFF}, pkt...)
			for _, o := range []int{1, 8, 10, 11, 26, 27, 32} {
				msg[4+o] = 0xFF
			}
			want := crc32.Update(^uint32(0), crc32.IEEETable, msg)
			got, ok := sum(pkt)
			if ok && got != want {
				t.Fatalf("%d bytes at %#x: %#08x, want %#08x", n, at, got, want)
			}
			if inside(at, n, page) && !ok {
				t.Fatalf("%d bytes at %#x, inside its page: not read in place", n, at)
			}
		}
	}
}

// BenchmarkDirectSum: the in-place ICRC of packets inside a page of a
// buffer the benchmark has touched, as a mapped capture's are (an ACK, a
// CDC, a 1 KiB WRITE); BenchmarkICRCRoCEv2's packets may end near a page
// the collector has not touched, which takes the copy.
func BenchmarkDirectSum(b *testing.B) {
	sum, most := directSum, 16*foldMax-20
	if !haveDirectZ {
		if !haveFold {
			b.Skip("no PCLMULQDQ")
		}
		sum, most = directSumX, directXMax
	}
	buf := make([]byte, 3*os.Getpagesize())
	for i := range buf {
		buf[i] = byte(i)
	}
	for _, n := range []int{44, 84, 1100} {
		if n > most {
			continue // RoCEv2 takes another way
		}
		start := os.Getpagesize() + 100 - int(uintptr(unsafe.Pointer(&buf[0])))%os.Getpagesize()
		pkt := buf[start : start+n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var s uint32
			for b.Loop() {
				c, ok := sum(pkt)
				if !ok {
					b.Fatal("not read in place")
				}
				s += c
			}
			sinkCRC = s
		})
	}
}
