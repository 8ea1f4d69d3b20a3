// Package capture reads frames from pcap/pcapng files, stdin or a live
// interface, decodes them with one reusable gopacket DecodingLayerParser
// chain (Ethernet, VLAN, Linux SLL/SLL2, raw IP, IPv4/IPv6, TCP/UDP and the
// RoCE/SMC layers of package decode) and reassembles the TCP byte stream of
// SMC connections far enough to cut out their CLC messages.
//
// A Reader hands out one *Frame that is reused: everything it points to is
// valid until the next call to Next. Consumers that keep data copy it.
package capture
