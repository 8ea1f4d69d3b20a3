package browser

import (
	"context"
	"errors"
	"io"
	"runtime"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/inorder"
)

// filterFrames is how many frames a batch of filterBatches holds: enough
// for its hand-offs to cost nothing beside decoding them.
const filterFrames = 2048

// filterBatches is Filter's pass over a file without tracker fields on
// jobs goroutines (an inorder.Pass): the frames are read in batches,
// carrying in order what a frame's decode depends on
// (capture.Reader.ReadBatch), each batch decoded and matched with a filter
// of the goroutine's own, and the matches joined in frame order. What it
// returns is what the one-goroutine pass returns, error included.
func filterBatches(ctx context.Context, r *capture.Reader, flt *filter.Filter, upTo, jobs int) ([]int32, error) {
	type batch struct {
		cb    capture.Batch
		match []int32
		err   error
	}
	decs := make([]*capture.BatchDecoder, jobs)
	flts := make([]*filter.Filter, jobs)
	for i := range jobs {
		// A filter may keep state while it matches: one each.
		f, err := filter.Compile(flt.String())
		if err != nil {
			return nil, err
		}
		decs[i], flts[i] = r.NewBatchDecoder(), f
	}
	var (
		out    []int32
		outErr error
		done   bool // the pass ended at the end of the file or an error
	)
	pass := inorder.Pass[*batch]{
		Jobs: jobs, InFlight: 2 * jobs,
		New: func() *batch { return &batch{} },
		Read: func(b *batch) bool {
			r.ReadBatch(&b.cb, filterFrames, nil)
			return b.cb.Err != nil
		},
		Work: func(job int, b *batch) {
			b.match, b.err = matchBatch(decs[job], &b.cb, flts[job], upTo, b.match[:0])
		},
		Write: func(b *batch) bool {
			out = append(out, b.match...)
			err := b.err
			if err == nil {
				err = b.cb.Err
			}
			switch {
			case errors.Is(err, io.EOF):
				done = true
				return true
			case err != nil:
				outErr, done = err, true
				return true
			case ctx.Err() != nil:
				return true
			}
			return false
		},
	}
	pass.Run()
	if !done {
		outErr = ctx.Err()
	}
	return out, outErr
}

// matchBatch decodes b's frames with dec and appends the numbers of those
// f matches, up to frame upTo (0: every one).
func matchBatch(dec *capture.BatchDecoder, b *capture.Batch, f *filter.Filter, upTo int, out []int32) ([]int32, error) {
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
