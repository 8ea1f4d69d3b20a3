// Package track follows SMC-R across a capture in one streaming pass: it
// ties each TCP connection (SYN option, CLC handshake, fallback) to the RoCE
// link and link group it was placed on, and follows the connection's CDC
// stream and RDMA WRITEs on that link.
//
// The observer sees both ends of a link group, so the server's and the
// client's view of one group are a single LinkGroup here, and a link is one
// Link with a client->server and a server->client direction. The server is
// the link-group owner (it sends CONFIRM_LINK and ADD_LINK requests).
//
// Correlation keys (the kernel's own: struct smc_connection's alert tokens, QP numbers, link UIDs): a connection by its TCP 4-tuple;
// a link on the wire by (IP source, IP destination, BTH DestQP) per
// direction, because QPNs repeat across hosts and devices; a CDC by the
// receiver's alert token inside the link group; an RDMA WRITE by the
// receiver's RMB rkey on that link (from CLC, CONFIRM_RKEY or ADD_LINK).
//
// A capture that starts mid-connection still works: the first LLC or CDC
// on an unknown QP creates a link ("joined mid-stream", roles A/B until an
// LLC request or a later CLC handshake settles them), CDC streams become
// connections, WRITEs are tied to the CDC that follows them, and an RMBE
// size no CLC announced is learned at the first cursor wrap. Frames seen
// before any of this was possible are counted in Stats.Unattached.
//
// Use: New, then Feed every frame in capture order (and AppendFields right
// after Feed for the smc.conn.*/smc.link.*/smc.lgr.* fields of -Y and -e),
// then Snapshot: typed values only. Package track/rows makes the rows
// every surface shows from it (the -z views smc,conns smc,links smc,lgr
// smc,decline smc,timeline,CONN, which package output/zview prints, the
// browser's panes and smctop's wire rows).
// Timelines are recorded only for the connections named in
// Options.Timeline; OptionsForViews sets it from -z specs.
//
// With Options.Stream the tracker also reassembles each SMC-R
// connection's application bytes per direction (stream.go): RDMA WRITE
// packets kept at their RMBE offset until the CDC producer cursor
// releases them, handed to the StreamSink in order with gaps marked;
// package output/follow shows and exports them.
//
// Memory does not grow with the capture: connections idle for longer than
// Options.IdleTimeout leave the live tables, links of deleted groups leave
// the wire-key table, and the oldest ended connections beyond
// Options.MaxClosed (ended: both sides closed, or idle for IdleTimeout),
// the oldest of any beyond Options.MaxConns (default 4096), and the oldest
// links and link groups beyond their caps are folded:
// only their sums stay, and the views list the newest and count every
// connection in their totals (Snapshot.Totals: by outcome, fallback reason,
// bytes and state).
package track
