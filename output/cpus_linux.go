package output

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// usableCPUs is the number of CPUs this process may run on: its affinity
// mask (taskset, cgroup cpusets), which runtime.NumCPU also reads but only
// once, at start.
func usableCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		if n := set.Count(); n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
}
