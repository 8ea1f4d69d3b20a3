// Package track follows SMC-R across a capture in one streaming pass: it
// ties each TCP connection (SYN option, CLC handshake, fallback) to the RoCE
// link and link group it was placed on, and follows the connection's CDC
// stream and RDMA WRITEs on that link.
//
// The observer sees both ends of a link group, so the server's and the
// client's view of one group are a single LinkGroup here, and a link is one
// Link with a client->server and a server->client direction.
//
// Correlation keys (smc-wire-format §6.1): a connection by its TCP 4-tuple;
// a link on the wire by (IP source, IP destination, BTH DestQP) per
// direction, because QPNs repeat across hosts and devices; a CDC by the
// receiver's alert token inside the link group; an RDMA WRITE by the
// receiver's RMB rkey on that link (from CLC, CONFIRM_RKEY or ADD_LINK).
//
// Memory grows with the number of connections and links, not frames: only
// counters and a bounded per-connection timeline (when asked for) are kept,
// connections idle for longer than Options.IdleTimeout leave the live
// tables, and Options.MaxConns caps how many finished ones stay for the
// views.
package track
