package inorder

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

type batch struct {
	n    int // the batch's number, as read
	sum  int // what Work made of it
	last bool
}

// pass is a Pass over total batches on jobs goroutines whose Work takes a
// random while, writing the batches' numbers to got.
func pass(jobs, total int, got *[]int, stopAt int) (*Pass[*batch], *atomic.Int32) {
	var inWork atomic.Int32
	next := 0
	p := &Pass[*batch]{
		Jobs: jobs, InFlight: 3 * jobs,
		New: func() *batch { return &batch{} },
		Read: func(b *batch) bool {
			b.n, b.sum = next, 0
			next++
			b.last = next == total
			return b.last
		},
		Work: func(job int, b *batch) {
			if job < 0 || job >= jobs {
				panic("job out of range")
			}
			inWork.Add(1)
			for range rand.IntN(50) {
				runtime.Gosched()
			}
			b.sum = b.n * 2
			inWork.Add(-1)
		},
		Write: func(b *batch) bool {
			if b.sum != b.n*2 {
				panic("written before its work was done")
			}
			*got = append(*got, b.n)
			return b.n == stopAt
		},
	}
	return p, &inWork
}

func TestOrder(t *testing.T) {
	for _, jobs := range []int{1, 2, 5} {
		var got []int
		p, inWork := pass(jobs, 500, &got, -1)
		p.Run()
		if len(got) != 500 {
			t.Fatalf("jobs %d: %d batches written, want 500", jobs, len(got))
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("jobs %d: batch %d written %dth", jobs, n, i)
			}
		}
		if n := inWork.Load(); n != 0 {
			t.Errorf("jobs %d: Run returned with %d batches in Work", jobs, n)
		}
	}
}

func TestStop(t *testing.T) {
	for _, jobs := range []int{1, 2, 5} {
		var got []int
		p, inWork := pass(jobs, 500, &got, 117)
		p.Run()
		if len(got) != 118 || got[117] != 117 {
			t.Fatalf("jobs %d: %d batches written, the last %d; want 118, the last 117", jobs, len(got), got[len(got)-1])
		}
		if n := inWork.Load(); n != 0 {
			t.Errorf("jobs %d: Run returned with %d batches in Work", jobs, n)
		}
	}
}

// A pass whose only batch is its last.
func TestOneBatch(t *testing.T) {
	var got []int
	p, _ := pass(2, 1, &got, -1)
	p.Run()
	if len(got) != 1 {
		t.Fatalf("%d batches written, want 1", len(got))
	}
}

// Work runs on several goroutines at once: with two jobs, one Work waits
// until the other has begun.
func TestWorkSideBySide(t *testing.T) {
	started := make(chan struct{})
	var once atomic.Bool
	reads := 0
	p := &Pass[*batch]{
		Jobs: 2, InFlight: 2,
		New: func() *batch { return &batch{} },
		Read: func(b *batch) bool {
			b.n = reads
			reads++
			return reads == 2
		},
		Work: func(_ int, b *batch) {
			if b.n == 0 {
				select {
				case <-started: // batch 1's Work, on the other goroutine
				case <-time.After(time.Minute):
					t.Error("batch 1 was not worked on while batch 0 was")
				}
				return
			}
			if once.CompareAndSwap(false, true) {
				close(started)
			}
		},
		Write: func(*batch) bool { return false },
	}
	p.Run()
}
