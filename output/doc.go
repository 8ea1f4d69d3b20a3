// Package output is smcdump: it reads a capture (file, stdin or live),
// selects frames (SMC-relevant ones unless All, then the -Y filter) and
// prints them as text lines, a -V field tree, a -x hex dump, JSON, JSON
// lines or -T fields columns, or saves them with -w. The connection
// tracker plugs in through the Tracker hook (-z views, smc.conn.* fields).
// cmd/smcdump only parses flags into Options and calls Run.
//
// Only the fields the output reads are filled (Reader.SetFieldDemand), and
// -T fields formats into reused buffers, so the per-frame path does not
// allocate. Exit statuses: see ExitCode.
package output
