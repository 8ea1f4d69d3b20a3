//go:build unix

package capture

import (
	"os"
	"syscall"
)

// mapFile maps the whole of f read-only, for a Reader that reads the
// records in place: no read(2) copying the file into a buffer, no buffer
// to refill. It reports false for what cannot be mapped (not a regular
// file, empty, or mmap refused); the caller then reads f as a stream.
func mapFile(f *os.File) ([]byte, bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 || st.Size() != int64(int(st.Size())) {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, false
	}
	// Read front to back: the kernel reads ahead and drops what was read.
	_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL)
	// Map it page by page: a huge page of the page cache mapped at once
	// would put up to 2 MiB more in the resident set than the releases
	// (releaseMapped) leave, by chance of how the file was cached.
	_ = syscall.Madvise(b, syscall.MADV_NOHUGEPAGE)
	return b, true
}

func unmapFile(b []byte) error { return syscall.Munmap(b) }

// releaseMapped drops the pages of b from the process: a file read front
// to back through a mapping would otherwise count whole in its resident
// memory. The page cache keeps them; touching b again faults them back.
func releaseMapped(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
