// Package probe is the engine behind smcping: it opens real SMC connections
// (AF_SMC with SMCPROTO_SMC/SMC6, or IPPROTO_SMC on Linux >= 6.11) and plain
// TCP connections over the same path, runs a ping-pong or a one-way stream
// over them, and proves for every SMC connection which mode the kernel
// really chose (SMC-R, SMC-D or a TCP fallback with its reason) through
// SMC sock_diag.
//
// # Wire protocol
//
// Every message starts with a 4-byte big-endian header: bit 31 is the
// no-reply flag, bits 0..30 the total message length in bytes, header
// included (so -m 64 puts exactly 64 bytes on the stream each way, as
// sockperf's -m does). The server echoes a message without the flag byte
// for byte, and discards one with the flag (the stream mode of --bw). The
// server never replies with more bytes than it received and closes a
// connection whose message is shorter than 4 or longer than its limit.
//
// # Allocation
//
// The measuring loop (Pinger.Ping) and the server's echo loop do not
// allocate: buffers and the sample slice are sized before the loop, and
// timestamps come from the monotonic clock (time.Now/time.Since).
//
// # Entry points
//
// ParseArgs turns smcping's command line into Options; Run executes them.
// Server, Dial, Listen, Pinger and Summarize are the building blocks.
package probe
