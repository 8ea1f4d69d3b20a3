package main

import "github.com/smcscope/smcscope/internal/cli"

// page is smcping's man page and completion words besides its flags.
var page = cli.Page{
	Name:    "smcping",
	Summary: "real SMC connections: prove their mode, measure their latency against TCP",
	Synopsis: []string{
		"-s [-p PORT] [--tcp-port PORT] [--tcp] [--proto smc|ipproto] [--listen ADDR] [--max-msg BYTES] [--max-conns N] [--idle DURATION] [--request-timeout DURATION]",
		"HOST[:PORT] [-n N | -t DURATION] [-m SIZES] [-i INTERVAL] [-P N] [--warmup N] [--proto smc|ipproto|tcp] [--compare tcp[,ipproto|smc]] [--bw] [--hist] [--log FILE] [--diag] [--require smc] [-o text|json] [--timeout DURATION]",
		"HOST --check",
	},
	Description: []string{
		"smcping opens SMC connections (AF_SMC or IPPROTO_SMC) to an smcping server, proves from the kernel's own view (sock_diag) which mode each connection really used (SMC-R, SMC-D, or TCP fallback with the reason by kernel name), and measures ping-pong latency or one-way bandwidth, against plain TCP on the same path when asked (--compare tcp).",
		"The server answers every request within --request-timeout from its first byte. At --max-conns a new client takes the slot of a slow connection (a request begun and not finished, or none within a second of connecting), else of an idle or new one, those of an address holding more than its share of the table first; it is refused only when every connection completed a request within the last second, and then says why.",
	},
	Examples: []cli.Example{
		{What: "smcping -s", Means: "the server: SMC on port 5000, the TCP baseline on 5001"},
		{What: "smcping 10.0.0.1 --check", Means: "one connection, one line: OK SMC-R ... or FAIL with the reason"},
		{What: "smcping 10.0.0.1 -n 1000 -m 64,4096 --compare tcp", Means: "latency of SMC against TCP, interleaved in one run"},
	},
	Exit: []cli.Example{
		{What: "0", Means: "done"},
		{What: "1", Means: "a connection failed, or --require smc did not hold"},
		{What: "2", Means: "a bad flag or value"},
	},
	SeeAlso: []string{"smctop(1)", "smcdump(1)", "sockperf(1)"},
	Values: map[string][]string{
		"proto":   {"smc", "ipproto", "tcp"},
		"o":       {"text", "json"},
		"compare": {"tcp", "ipproto", "smc"},
		"require": {"smc"},
	},
	Groups: []cli.Group{
		{Title: "Server", Flags: []string{"s", "listen", "tcp", "max-msg", "max-conns", "idle", "request-timeout"}},
		{Title: "Both", Flags: []string{"p", "tcp-port", "proto"}},
		{Title: "Client", Flags: []string{"n", "t", "m", "i", "P", "warmup", "compare", "round", "bw", "check", "require", "timeout", "max-samples"}},
		{Title: "Client output", Flags: []string{"o", "hist", "log", "diag", "digest"}},
	},
	Notes: []string{
		"The server listens for SMC on PORT (default 5000) and for the plain TCP baseline on --tcp-port (default PORT+1, 0 disables); with --tcp both are plain TCP, so the server is not SMC-capable at all.",
		"SIZES is one size, a list \"64,1024,8192\" or a range of powers of two \"64-65536\"; a size counts the 4-byte smcping header (minimum 4). -n counts messages per connection, per size and per protocol. --compare runs the other protocols in alternating rounds with the first; TCP goes to --tcp-port, AF_SMC and IPPROTO_SMC both to PORT.",
		"At --max-conns the server gives a new connection the slot of a slow one (a request begun and not finished, or none within a second of its accept), else of an idle or new one, those of a client address holding more than its share first; it refuses only when all are busy.",
	},
}
