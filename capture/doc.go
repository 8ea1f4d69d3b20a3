// Package capture reads frames from pcap/pcapng files (gzip too), stdin or
// a live interface, decodes them with one reusable gopacket
// DecodingLayerParser chain (Ethernet, 802.1Q/QinQ, Linux SLL/SLL2, raw
// IP, IPv4/IPv6, TCP/UDP and the RoCE/SMC layers of package decode) and
// reassembles the TCP byte stream of SMC connections far enough to cut out
// their CLC messages (gopacket/reassembly, only for streams whose SYN
// carried the SMC option or that start with a CLC eyecatcher).
//
// A Reader hands out one *Frame that is reused: everything it points to is
// valid until the next call to Next. Consumers that keep data copy it.
//
// Damage is reported, not hidden: a truncated or corrupt file yields the
// frames before the damage, then a *FileError naming the frame and file
// offset; a frame cut by the snap length is flagged (Frame.Cut) and
// decoded as far as it goes.
//
// Live capture uses an AF_PACKET socket (pcapgo.EthernetHandle, no cgo).
// There is no BPF compiler in pure Go, so the default SMC filter
// (DefaultFilterExpr) is embedded precompiled, and a -f expression is
// compiled by running tcpdump -ddd when tcpdump is installed; raw
// instructions can always be given as "bpf:N,code jt jf k,...". The
// libpcap RDMA sniffer (ibverbs devices such as mlx5_0) is behind the
// rdmasniff build tag (cgo).
package capture
