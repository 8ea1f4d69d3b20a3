package track

import "github.com/smcscope/smcscope/output"

// The tracker plugs into smcdump's hook as it is.
var _ output.Tracker = (*Tracker)(nil)
