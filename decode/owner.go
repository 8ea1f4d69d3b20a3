package decode

// Owner is what fills a field: a layer of this package, the frame reader
// (package capture) or the tracker (package track). Consumers ask the
// catalogue, not the field's name, which layers a set of fields needs
// (capture decodes only those) and under which heading -V shows a field.
type Owner uint8

// Owners, in the order the -V tree meets them.
const (
	OwnerUnknown Owner = iota
	OwnerFrame
	OwnerTunnel // a mirror's or an overlay's encapsulation (package capture)
	OwnerEthernet
	OwnerVLAN
	OwnerIP
	OwnerTCP
	OwnerUDP
	OwnerGRH
	OwnerBTH
	OwnerRDETH
	OwnerXRCETH
	OwnerRETH
	OwnerAETH
	OwnerImmDt
	OwnerIETH
	OwnerDETH
	OwnerICRC      // the ICRC as carried in the frame's last 4 bytes
	OwnerICRCCheck // roce.icrc.ok: the ICRC recomputed over the frame
	OwnerCLC
	OwnerLLC
	OwnerCDC
	OwnerRWWI      // ANCK's write-with-immediate, read from the ImmDt
	OwnerDump      // ANCK's dump device header (its CDC is OwnerCDC)
	OwnerTrackConn // tracker: the frame's connection
	OwnerTrackLGR  // tracker: its link group
	OwnerTrackLink // tracker: its link
	OwnerTrackRC   // tracker: RC transport analysis of its queue pair
	OwnerTrack     // tracker: frames it could not attach
	// OwnerTrackExpert: the tracker's findings on the frame (package
	// expert's catalogue), last in the tree as Wireshark's Expert Info.
	OwnerTrackExpert
	NumOwners // the number of owners, for tables indexed by Owner
)

var owners = [NumOwners]struct{ key, title string }{
	OwnerUnknown:     {"?", "?"},
	OwnerFrame:       {"frame", "Frame"},
	OwnerTunnel:      {"tunnel", "Tunnel"},
	OwnerEthernet:    {"eth", "Ethernet"},
	OwnerVLAN:        {"vlan", "802.1Q VLAN"},
	OwnerIP:          {"ip", "Internet Protocol"},
	OwnerTCP:         {"tcp", "TCP"},
	OwnerUDP:         {"udp", "UDP"},
	OwnerGRH:         {"roce.grh", "RoCE GRH"},
	OwnerBTH:         {"roce.bth", "RoCE BTH"},
	OwnerRDETH:       {"roce.rdeth", "RoCE RDETH"},
	OwnerXRCETH:      {"roce.xrceth", "RoCE XRCETH"},
	OwnerRETH:        {"roce.reth", "RoCE RETH"},
	OwnerAETH:        {"roce.aeth", "RoCE AETH"},
	OwnerImmDt:       {"roce.immdt", "RoCE IMMDT"},
	OwnerIETH:        {"roce.ieth", "RoCE IETH"},
	OwnerDETH:        {"roce.deth", "RoCE DETH"},
	OwnerICRC:        {"roce.icrc", "RoCE ICRC"},
	OwnerICRCCheck:   {"roce.icrc", "RoCE ICRC"},
	OwnerCLC:         {"smc.clc", "SMC CLC"},
	OwnerLLC:         {"smc.llc", "SMC LLC"},
	OwnerCDC:         {"smc.cdc", "SMC CDC"},
	OwnerRWWI:        {"smc.rwwi", "SMC-R write with immediate (ANCK)"},
	OwnerDump:        {"smc.dump", "SMC dump device (ANCK)"},
	OwnerTrackConn:   {"smc.conn", "SMC CONN"},
	OwnerTrackLGR:    {"smc.lgr", "SMC LGR"},
	OwnerTrackLink:   {"smc.link", "SMC LINK"},
	OwnerTrackRC:     {"smc.rc", "SMC RC"},
	OwnerTrack:       {"smc.track", "SMC TRACK"},
	OwnerTrackExpert: {"smc.expert", "SMC Expert Info"},
}

// Key is the field-name prefix the owner's fields share ("smc.llc").
func (o Owner) Key() string { return owners[o].key }

// Title is the heading of the owner's fields in the -V tree.
func (o Owner) Title() string { return owners[o].title }

// String is the owner's key.
func (o Owner) String() string { return o.Key() }

// Tracker reports whether the tracker fills the field, not the frame
// reader.
func (o Owner) Tracker() bool { return o >= OwnerTrackConn && o < NumOwners }
