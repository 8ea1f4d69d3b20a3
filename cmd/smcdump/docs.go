package main

import (
	"strings"
	"unicode"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/cli"
	"github.com/smcscope/smcscope/track"
)

// page is smcdump's man page and completion words besides its flags.
var page = cli.Page{
	Name:    "smcdump",
	Summary: "decode SMC (Shared Memory Communications) captures, like tshark",
	Synopsis: []string{
		"-r FILE [-a] [-c N] [-V] [-x] [-Y EXPR] [-o column.format:SPEC] [-T text|json|jsonl|fields [-e FIELD]...] [-z VIEW]...",
		"-i IFACE [-f FILTER] [-w FILE]",
		"-I -r FILE|FIFO|- [--tail] [-o column.format:SPEC] [--no-config] | -I -i IFACE",
		"-G fields",
	},
	Description: []string{
		"smcdump decodes every SMC frame of a capture: the TCP SMC option, CLC Proposal/Accept/Confirm/Decline (v1, v2, v2.1, SMC-R and SMC-D, decline codes by kernel name), RoCEv1 and RoCEv2 (BTH and extension headers, the ICRC), LLC v1 and v2 and CDC. A tracker ties TCP connections to their links, link groups and CDC streams; its views (-z) list connections, links, link groups, declines, one connection's timeline and its application bytes (smc,follow, reassembled from RDMA WRITEs and CDC cursors).",
		"Display filters (-Y) use Wireshark's syntax over smcdump's fields (-G fields lists them). Bad input gets one line naming the file, frame and offset; a damaged capture is decoded up to the damage.",
		"-I opens the capture browser: the packet list, the field tree and the hex dump of the selected frame, filters, follow a connection, the tracker's panes, export; ? lists its keys.",
	},
	Examples: []cli.Example{
		{What: "smcdump -r smc.pcap", Means: "one line per SMC-relevant frame"},
		{What: "smcdump -nqr smc.pcap -z smc,expert,warn", Means: "tshark's grouped letters: the warnings and errors of the capture"},
		{What: "smcdump -r smc.pcap -Y 'smc.clc.type == 4'", Means: "the CLC Declines, with their reasons"},
		{What: "smcdump -r smc.pcap -q -z smc,conns -z smc,lgr", Means: "the connections and link groups"},
		{What: "smcdump -r smc.pcap -q -z smc,follow,1", Means: "what the application of connection 1 sent and received, as tshark's -z follow,tcp,ascii"},
		{What: "smcdump -r smc.pcap --export-tcp tcp.pcapng", Means: "the capture with each SMC-R connection as the TCP connection its application saw, for Wireshark's dissectors"},
		{What: "smcdump -i eth0 -w smc.pcapng", Means: "capture SMC traffic live"},
		{What: "tcpdump -i eth0 -U -w - | smcdump -r -", Means: "decode what another capture program writes, each frame printed as it arrives (a FIFO works the same way; Ctrl-C or SIGTERM ends it, what was read printed)"},
		{What: "tcpdump -i eth0 -w - | smcdump -I -r -", Means: "browse what another capture program writes, as it arrives (a FIFO works the same way)"},
		{What: "smcdump -I --tail -r growing.pcap", Means: "browse a file another program is still writing, following it as it grows"},
		{What: "smcdump -r smc.pcap -o 'column.format:No.,Time,Seq=smc.cdc.seq:6,smc.conn.id,Protocol,Info'", Means: "text lines in these columns, any field of -G fields among them (tshark's -o gui.column.format)"},
		{What: "smcdump -I -r smc.pcap -o 'column.format:No.,Time,Seq=smc.cdc.seq:6,smc.conn.id,Info'", Means: "the browser with these columns (o edits them, C adds the tree's field; the layout is kept for the next start)"},
	},
	Exit: []cli.Example{
		{What: "0", Means: "done (single frames that do not decode are flagged, not fatal)"},
		{What: "1", Means: "the capture could not be read"},
		{What: "2", Means: "a bad flag or filter, -I without a terminal, -r - from the terminal, or a capture cut short (what was read is printed)"},
		{What: "129, 143", Means: "-I ended by SIGHUP or SIGTERM (128 + the signal, as a shell reports it), after the terminal was restored"},
		{What: "129, 130, 143", Means: "reading a capture (-r), stopped by SIGHUP, SIGINT or SIGTERM before its end: what was read is printed (a live capture, -i, ends with 0 on SIGINT)"},
	},
	SeeAlso: []string{"smctop(1)", "smcping(1)", "tshark(1)", "pcap-filter(7)"},
	Values: map[string][]string{
		"T": {"text", "json", "jsonl", "fields"},
		"G": {"fields"},
		"z": viewWords(),
	},
	Groups: []cli.Group{
		{Title: "Input", Flags: []string{"r", "i", "f", "s", "c", "n", "j"}},
		{Title: "Output", Flags: []string{"T", "e", "E", "o", "V", "x", "a", "q", "w", "export-tcp", "G"}},
		{Title: "Filters and tracker views", Flags: []string{"Y", "z", "K"}},
		{Title: "Browser", Flags: []string{"I", "tail", "no-config"}},
	},
}

// viewWords are the -z completions, from the tracker's own list of views:
// a view whose last part is a placeholder (smc,timeline,CONN) completes to
// its prefix, the expert view's severity floor to each severity.
func viewWords() []string {
	var words []string
	for _, v := range track.Views() {
		spec := v[0]
		i := strings.LastIndexByte(spec, ',')
		if last := spec[i+1:]; strings.IndexFunc(last, unicode.IsLower) >= 0 {
			words = append(words, spec)
			continue
		}
		if spec[:i] != track.ViewExpert {
			words = append(words, spec[:i+1])
			continue
		}
		for s := expert.Chat; s <= expert.Error; s++ {
			words = append(words, spec[:i+1]+s.String())
		}
	}
	return words
}
