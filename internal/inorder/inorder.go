// Package inorder runs a pass over a capture's batches of frames on
// several goroutines: the batches are read one at a time in capture order,
// worked on side by side, and written one at a time in capture order.
//
// Every goroutine plays every part in turn: it takes a free batch, reads it
// while holding the reader, works on it, and hands it to the writer; the
// first goroutine to find the next batch in order ready writes it, and
// every ready one after it, while the others go on. A reader or writer
// goroutine of its own would compete for the CPUs with the workers: a
// goroutine readied through a channel waits in a run queue behind a
// worker that runs until preempted (10 ms), and the workers run dry
// meanwhile; the batch its reader touched would also be worked on another
// CPU, its bytes fetched again between the caches.
package inorder

import (
	"runtime"
	"sync"
)

// Pass is one pass over batches of type B.
type Pass[B any] struct {
	// Jobs is the number of goroutines (at least 1), InFlight the number
	// of batches (at least Jobs): it bounds the memory the pass holds.
	Jobs, InFlight int
	// New makes one of the InFlight batches.
	New func() B
	// Read fills b with the next batch, in capture order, one call at a
	// time, and reports whether b is the last (it is still worked on and
	// written).
	Read func(b B) (last bool)
	// Work works on b on goroutine number job (0 to Jobs-1), alongside
	// the other goroutines.
	Work func(job int, b B)
	// Write writes b, in capture order, one call at a time, and reports
	// whether the pass stops there (the batches after it are dropped).
	Write func(b B) (stop bool)
}

// readSpins bounds how long a goroutine waits for the reader before it
// parks: each spin a runtime.Gosched, about 100 ns when there is nothing
// else to run. A goroutine waits there only while another reads a batch
// (tens to hundreds of microseconds), with nothing else to do: parked, it
// would be woken a context switch later, and its CPU idle meanwhile
// (parking at once in Lock was 10-40 % slower for smcdump -j 2, a busy
// spin no quicker).
const readSpins = 4000

// Run runs the pass; it returns once the last batch is written or Write
// stopped it, every goroutine done.
func (p *Pass[B]) Run() {
	s := &state[B]{p: p, free: make(chan *slot[B], p.InFlight), quit: make(chan struct{}),
		ring: make([]*slot[B], p.InFlight)}
	for range p.InFlight {
		s.free <- &slot[B]{b: p.New()}
	}
	var wg sync.WaitGroup
	for job := range p.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				var sl *slot[B]
				select {
				case <-s.quit:
					return
				case sl = <-s.free:
				}
				if !s.read(sl) {
					return
				}
				p.Work(job, sl.b)
				s.commit(sl)
			}
		}()
	}
	wg.Wait()
}

// slot is a batch and its place in capture order.
type slot[B any] struct {
	b   B
	seq int
}

type state[B any] struct {
	p    *Pass[B]
	free chan *slot[B]
	quit chan struct{} // closed when Write stops the pass

	// The reader's: the place of the next batch, and whether the last
	// was read.
	rmu   sync.Mutex
	seq   int
	ended bool

	// The writer's: batch number k waits in ring[k % len(ring)] until
	// those before it are written; one goroutine at a time writes.
	wmu     sync.Mutex
	ring    []*slot[B]
	next    int
	writing bool
	stopped bool
}

// read reads the next batch into sl; false once the last was read or the
// pass stopped, sl then unused.
func (s *state[B]) read(sl *slot[B]) bool {
	for i := 0; !s.rmu.TryLock(); i++ {
		if i == readSpins {
			s.rmu.Lock()
			break
		}
		runtime.Gosched()
	}
	defer s.rmu.Unlock()
	select {
	case <-s.quit:
		return false
	default:
	}
	if s.ended {
		return false
	}
	s.ended = s.p.Read(sl.b)
	sl.seq = s.seq
	s.seq++
	return true
}

// commit hands the worked batch sl to the writer, and writes in capture
// order every batch that is ready when no other goroutine is writing.
func (s *state[B]) commit(sl *slot[B]) {
	s.wmu.Lock()
	s.ring[sl.seq%len(s.ring)] = sl
	if s.writing {
		s.wmu.Unlock()
		return
	}
	s.writing = true
	for !s.stopped {
		k := s.next % len(s.ring)
		sl := s.ring[k]
		if sl == nil {
			break
		}
		s.ring[k] = nil
		s.next++
		// Written with the lock released: the others leave their
		// batches meanwhile and go on.
		s.wmu.Unlock()
		stop := s.p.Write(sl.b)
		s.wmu.Lock()
		if stop {
			s.stopped = true
			close(s.quit)
			break
		}
		s.free <- sl // never blocks: a place for every batch
	}
	s.writing = false
	s.wmu.Unlock()
}
