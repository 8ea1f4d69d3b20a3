//go:build !linux

package output

import "runtime"

// usableCPUs is the number of CPUs this process may run on.
func usableCPUs() int { return runtime.NumCPU() }
