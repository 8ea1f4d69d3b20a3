package browser

import (
	"context"
	"errors"
	"io"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/filter"
)

// filterFrames is how many frames a batch of filterBatches holds: enough
// for its hand-offs to cost nothing beside decoding them.
const filterFrames = 2048

// filterBatches is Filter's pass over a file without tracker fields on
// jobs goroutines: one reads the frames in batches, carrying in order
// what a frame's decode depends on (capture.Reader.ReadBatch), the others
// decode and match each batch with a filter of their own; the matches
// are joined in frame order. What it returns is what the one-goroutine
// pass returns, error included.
func filterBatches(ctx context.Context, r *capture.Reader, flt *filter.Filter, upTo, jobs int) ([]int32, error) {
	type batch struct {
		cb    capture.Batch
		match []int32
		err   error
		done  chan struct{}
	}
	n := 2 * jobs
	free := make(chan *batch, n)
	for range n {
		free <- &batch{done: make(chan struct{}, 1)}
	}
	work, order := make(chan *batch, n), make(chan *batch, n)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(work)
		defer close(order)
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		for {
			var b *batch
			select {
			case b = <-free:
			case <-quit:
				return
			}
			r.ReadBatch(&b.cb, filterFrames, nil)
			work <- b // never blocks: n places for n batches
			order <- b
			if b.cb.Err != nil {
				return
			}
		}
	}()
	for range jobs {
		// A filter may keep state while it matches: one each.
		f, err := filter.Compile(flt.String())
		if err != nil {
			close(quit)
			wg.Wait()
			return nil, err
		}
		dec := r.NewBatchDecoder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
			for b := range work {
				b.match, b.err = matchBatch(dec, &b.cb, f, upTo, b.match[:0])
				b.done <- struct{}{}
			}
		}()
	}
	defer func() {
		close(quit)
		for range order { // the batches in flight, so that the reader ends
		}
		wg.Wait()
	}()
	var out []int32
	for b := range order {
		<-b.done
		out = append(out, b.match...)
		err := b.err
		if err == nil {
			err = b.cb.Err
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r.Release(&b.cb)
		free <- b
	}
	return out, ctx.Err()
}

// matchBatch decodes b's frames with dec and appends the numbers of those
// f matches, up to frame upTo (0: every one); a fault of the mapped file
// is the frame's error.
func matchBatch(dec *capture.BatchDecoder, b *capture.Batch, f *filter.Filter, upTo int, out []int32) (_ []int32, err error) {
	defer func() {
		if v := recover(); v != nil {
			if !capture.IsFault(v) {
				panic(v)
			}
			err = dec.FaultError(v)
		}
	}()
	dec.Reset(b)
	for fr := dec.Next(); fr != nil; fr = dec.Next() {
		if upTo > 0 && fr.Number > upTo {
			return out, io.EOF
		}
		rec := fr.Fields()
		rec.Frame = fr.Data // "frame contains"
		if f.Match(rec) {
			out = append(out, int32(fr.Number))
		}
	}
	return out, nil
}

// filterJobs is how many goroutines a filter pass decodes on: one per CPU
// the process may use (GOMAXPROCS follows the affinity mask).
func filterJobs() int { return runtime.GOMAXPROCS(0) }
