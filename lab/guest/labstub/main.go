// Command labstub is the lab's own small oracle inside the guests: an AF_SMC/TCP echo
// server and ping-pong client, and a reader of the kernel's SMC view (smc_diag, SMC
// generic netlink). It is deliberately independent of the project's packages so that the
// ground truth the lab records does not come from the code under test.
//
// Usage:
//
//	labstub serve [-p 5000] [-tcp] [-6]
//	labstub client -addr 10.10.0.1:5000 [-n 500] [-m 64] [-P 1] [-bulk BYTES] [-pause-after N -pause-file F]
//	labstub ueid-add NAME
//	labstub pnet-add PNETID NETDEV IBDEV
//	labstub report          (sysinfo, stats, fallback stats, link groups, links, sockets)
//	labstub wait-lgr-gone SECONDS
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: labstub serve|client|ueid-add|pnet-add|report|wait-lgr-gone ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "client":
		err = client(os.Args[2:])
	case "ueid-add":
		if len(os.Args) != 3 {
			err = fmt.Errorf("ueid-add needs NAME")
			break
		}
		err = ueidAdd(os.Args[2])
	case "pnet-add":
		if len(os.Args) != 5 {
			err = fmt.Errorf("pnet-add needs PNETID NETDEV IBDEV")
			break
		}
		err = pnetAdd(os.Args[2], os.Args[3], os.Args[4])
	case "report":
		err = report(os.Stdout)
	case "wait-lgr-gone":
		err = waitLgrGone(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "labstub:", err)
		os.Exit(1)
	}
}
