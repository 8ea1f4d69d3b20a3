// Package smcnl reads the Linux kernel's live SMC state: SMC sockets through
// sock_diag (NETLINK_SOCK_DIAG, family AF_SMC) and link groups, links,
// devices, statistics and EIDs through the generic netlink family
// SMC_GEN_NETLINK. It speaks netlink with mdlayher/netlink and
// mdlayher/genetlink and keeps no package-level state.
//
// # Entry points
//
// Sockets dumps every SMC socket of the caller's network namespace, with
// mode (SMC-R, SMC-D or TCP fallback), fallback reason, connection cursors
// and the SMC-R link:
//
//	ss, err := smcnl.Sockets()
//	for _, s := range ss {
//		fmt.Println(s.Src, s.Dst, s.Mode, s.FallbackReason)
//	}
//
// Dial resolves SMC_GEN_NETLINK and returns a Conn for everything else:
//
//	c, err := smcnl.Dial()
//	defer c.Close()
//	err = c.AddUEID("SMC-LAB-UEID")  // needs CAP_NET_ADMIN
//	lgrs, err := c.LinkGroupsR()     // link groups with their links
//
// DialPNET resolves the legacy SMC_PNETID family, the PNET table that ties
// netdevs and RDMA device ports to one physical network (a host with two
// RoCE devices needs it; so does using a device for lo):
//
//	p, err := smcnl.DialPNET()
//	err = p.AddPNETID(smcnl.PNETEntry{PNETID: "LABNET", EthName: "eth1", IBName: "rxe1"})
//	es, err := p.PNETIDs()
//
// NewConn, NewDiagConn and NewPNETConn accept existing connections, so tests run against
// genltest and nltest fakes without root or SMC. The Parse* functions decode
// single reply messages and are what the fuzz targets exercise.
//
// WriteSockets, WriteLinkGroups, WriteDevices, WriteStats,
// WriteFallbackStats and WriteSysInfo print what the others return as
// stable key=value lines, one object a line: what smclab prints, the lab's
// scripts grep and smcping --diag quotes.
//
// # Errors
//
// A kernel without SMC_GEN_NETLINK (before 5.11, or smc not loaded), without
// smc_diag, or without a newer command gives an *UnsupportedError, which
// matches ErrNotSupported: "SMC_GEN_NETLINK not supported (requires >=
// 5.11)". EPERM and EACCES match os.ErrPermission, ENODEV matches
// os.ErrNotExist, and the errno itself stays reachable with errors.Is.
//
// # Kernel quirks handled here
//
//   - sock_diag reports family 43 for IPv4 and IPv6 AF_SMC sockets, so the
//     address words decide. IPPROTO_SMC sockets (6.11+) report the inet
//     family (2 or 10), their ports, inode and cookie, but all-zero
//     addresses (seen in the lab on 6.12): find a socket by Inode or
//     Cookie, never by address. An all-zero pair (an IPv6 listener on ::,
//     seen in the lab) cannot be told from IPv4 and is reported as 0.0.0.0.
//   - V2_COMMON attributes are numbered from 0, so type 0 is data, not UNSPEC.
//   - NLA_UINT attributes (SNDBUF_ALLOC, RMB_ALLOC) are 4 or 8 bytes; the
//     SMC-D CHID is documented u16 and sent as u32.
//   - Link UIDs are 4 raw bytes read as a native u32.
//   - Stored EIDs are 32 blank-padded bytes; they are returned trimmed.
//
// Unknown attributes are ignored, so newer kernels do not break parsing.
//
// # Recordings
//
// Conn.SetRecorder, DiagConn.SetRecorder and PNETConn.SetRecorder hand the
// raw replies to a callback; smclab record (lab/guest/smclab) stores them
// with AppendMessages, and the tests replay testdata/<scenario>/*.bin
// (Replay, ReplaySockets, ReplayPNET).
package smcnl
