// Package monitor builds the live view of a host's SMC: every SMC socket
// joined to its link, link group, RDMA device and port counters, with
// rates, events and the settings that matter, as one typed Snapshot.
//
// The join follows the kernel's own keys: sock_diag gives each socket's
// inode, cookie and first link (struct smc_diag_lgrinfo: ibdev, port,
// GIDs), SMC_GEN_NETLINK gives every link group with all its links, and
// rdmastats gives the ports' counters. IPPROTO_SMC sockets (Linux 6.11+)
// come with family 2/10 and all-zero addresses, so sockets are keyed by
// inode and cookie, never by their 4-tuple.
//
// The same Snapshot is made from a capture (Options.Wire): the tracker's
// connections, links and link groups stand in for the kernel's, so the
// dashboard and the exporter work on a machine without SMC. Its rows are
// copied from package track/rows, the rows smcdump's views show, so both
// tools tell one capture the same way (internal/agree holds them to it).
//
// # Absent values
//
// A value neither the kernel nor the capture gave is absent, never a
// made-up zero: omitted from JSON (omitempty/omitzero; a list is empty),
// "-" on screen, and no Prometheus series. A token, RMBE size, link UID,
// link-group ID, link number, buffer size or v2.1 limit is never 0 when
// known, so 0 means absent. A link or group without a known number is
// named by what the capture shows of it (LinkRow.Name, LinkGroupRow.Name).
//
// Snapshot is shown elsewhere: tui/top places it in the dashboard's
// screens and prints it as text, encoding/json writes it as JSON, package
// metrics exports it to Prometheus. Every one reads its typed fields:
// modes, states, roles, event kinds and link-group IDs are typed values
// with one spelling each, and nothing is parsed back from display text.
package monitor
