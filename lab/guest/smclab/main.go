// Command smclab reads and changes SMC kernel state inside the lab guests:
// user EIDs, SMC sockets (sock_diag), link groups and links, devices,
// statistics, and raw netlink recordings for smcnl/testdata; waits for
// smctop's -o jsonl stream to show a state (the lab waits on events, never
// on sleeps); and serves one AF_SMC connection as a slow reader (the
// slow-reader scenario: the peer's RMBE fills, its CDCs say write-blocked).
//
//	smclab ueid add NAME | ueid del NAME | ueid flush | ueid list
//	smclab pnet add PNETID NETDEV|- [IBDEV [PORT]] | pnet del PNETID | pnet flush | pnet list [-json]
//	smclab diag [-json]
//	smclab lgr [-json]
//	smclab dev [-json]
//	smclab stats [-json]
//	smclab fallback [-json]
//	smclab sysinfo [-json]
//	smclab wait-lgr-gone [-keep N] SECONDS
//	smclab wait-smctop FILE SECONDS [-pid PID] [-links N] [-event KIND[/SOURCE]]... [-traced] [-settled PID] [-after N] [-calls PID:N]
//	smclab record DIR
//	smclab slow-reader [-port N] [-chunk BYTES] [-pause DURATION] [-wait DURATION]
//	smclab http-serve [-port N] [-once] [-wait DURATION] [-tcp] | http-get [-tcp] ADDR:PORT PATH
//
// Text output is stable key=value lines (see smcnl.Write*). Exit status: 0
// done, 1 failed, 2 usage.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	err := run(os.Args[1:], os.Stdout)
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "smclab: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	os.Exit(1)
}
