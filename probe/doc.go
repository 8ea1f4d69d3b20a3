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
// server never replies with more bytes than it received, but for one
// 8-byte notice, and closes a connection whose message is shorter than 4
// or longer than its limit. The notice comes before the server closes a
// connection for a reason the client's user should read: a header with
// the no-reply flag (which no echo has) and a size below 4 that is the
// code (1: refused at --max-conns, 2: a message above --max-msg, 3: a
// request over --request-timeout), then a 4-byte value (the limit; for
// 3, milliseconds). The client reports it (ServerNotice) instead of
// guessing why the connection closed.
//
// # Server limits
//
// The server serves at most --max-conns connections. Between requests a
// connection may be idle for --idle; each request, from its first byte to
// the last byte of its reply, must complete within --request-timeout,
// however steadily its bytes trickle in, so a client that sends a byte
// before each idle timeout (Slowloris) cannot keep its connection.
//
// At the limit a new connection takes the place of one that has completed
// no request within the last second (ShedAfter), and is refused, with a
// notice, only when every connection has: busy clients are never shed.
// Slow connections go first: one with a request begun and not finished
// (in part read, or in part waiting in its socket when its handler has not
// read yet), or one that completed no request within a second of its
// accept. So clients that trickle bytes and reconnect whenever dropped
// only take each other's slots; a good client's connection, new or idle,
// is never shed while a slow one is held. After them, idle connections
// (requests completed, none in the last second) go before new ones
// (accepted within the second, nothing sent yet). Within these two ranks,
// a connection of a client address holding more than its share of the
// table (--max-conns over the number of addresses, the newcomer's
// included) goes first, then the one longest without a completed request.
// This is what nginx and HAProxy do against Slowloris (a request header
// timeout, idle keep-alive connections closed before new ones are
// refused, per-address limits), but with no fixed per-address limit:
// clients behind one NAT address may fill the table while it has room,
// and only lose to others once it is full. Known limits: a good client
// whose first request is larger than one read brings counts as slow
// until that request completes; connections that send nothing are, for
// their first second, told from a client about to send only by age.
//
// The accept loop never waits for a client. The bookkeeping is one atomic
// add per request (and a flag on the path of a request that the first read
// does not bring whole, which sets a deadline anyway); ranking the
// connections, a peek at the sockets of new ones included, is done only
// at the limit.
//
// # Mode proof
//
// While each connection is open, Prove looks it up in the kernel's SMC
// sock_diag dump (through smcnl) by socket inode or cookie, never by
// 4-tuple: IPPROTO_SMC sockets report all-zero addresses. The proof
// names SMC-R with its link (RDMA device, port, GIDs, link ID) and the link
// group ID from SMC_GEN_NETLINK, SMC-D, or a fallback with the local
// reason and the peer's diagnosis (decode.DeclineCode names and meanings).
// --require smc and --check decide with Proof.Require, whose error is a
// *FallbackError (errors.As) or wraps ErrNotProven (errors.Is).
// Proofs carry the SMC-R alert token, the key of the connection's CDC
// messages, so a capture can be matched with the kernel (the server logs
// it per accepted connection). --diag prints each connection's whole
// sock_diag line (SocketLiner), cursors included, after the last reply and
// before the close, when the cursors are final and the socket still listed.
//
// # Allocation
//
// The measuring loop (Pinger.Ping) and the server's echo loop do not
// allocate: buffers and the sample slice are sized before the loop, and each
// timestamp is one monotonic clock read (time.Since a fixed base).
//
// # Blocking sockets
//
// Connections use blocking descriptors, not the Go netpoller: the kernel
// wakes the thread sleeping in read(2) directly, as with sockperf, and a
// send that fits the socket buffer is one raw non-blocking sendto(2). The
// read is an ordinary system call, so a peer that stalls never holds up
// the rest of the process; what would make it costly is avoided: smcping
// keeps one P (GOMAXPROCS) more than the goroutines that can wait in reads
// at once, so that the runtime lets each keep its P through the call, and
// bounds an idle read by a watchdog instead of a socket receive timeout,
// whose kernel timer would be armed around every read. This keeps
// smcping's loopback TCP RTT within about 3 % of sockperf's on one CPU
// (BENCH.md). GOMAXPROCS set in the environment is left as it is.
//
// Where round trips take milliseconds (SMC-R between emulated guests, a
// long path), two more things keep the Go runtime's sysmon from taking
// the P of a reading goroutine, which it does to a goroutine that has not
// passed through the scheduler for 10 ms, or that has been in one system
// call that long: the measuring loops yield to the scheduler every
// millisecond, and while waits are between 2 and 100 ms a read that waits
// is split into system calls of a few milliseconds each by a receive
// timeout (yield.go).
// Together they brought smcping's CPU per round trip near sockperf's on
// the lab's SMC-R path (BENCH.md).
//
// # Exit codes
//
// smcping exits 0 on success, 1 when the run failed (including a fallback
// under --require smc or --check) and 2 on a usage error.
//
// # Entry points
//
// ParseArgs turns smcping's command line into Options; Run executes them.
// Server, Dial, Listen, Pinger and Summarize are the building blocks.
package probe
