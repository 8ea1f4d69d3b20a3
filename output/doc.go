// Package output is smcdump: it reads a capture (file, stdin or live),
// selects frames (SMC-relevant ones unless All, then the -Y filter) and
// prints them as text lines, a -V field tree, a -x hex dump, JSON, JSON
// lines or -T fields columns, or saves them with -w. cmd/smcdump only parses
// flags into Options and calls Run.
package output
