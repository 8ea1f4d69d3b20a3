package main

import "github.com/smcscope/smcscope/internal/cli"

// page is smctop's man page and completion words besides its flags
// (deploy/man/smctop.1 and deploy/completions/, made by docs_test.go).
var page = cli.Page{
	Name:    "smctop",
	Summary: "the live SMC dashboard and Prometheus exporter",
	Synopsis: []string{
		"[--interval D] [-i IFACE] [--listen ADDR]",
		"--once | --count N [-o text|json|jsonl]",
		"-r FILE [--speed N]",
		"--listen ADDR --no-tui",
		"--remote URL | --prometheus URL [--once | --count N]",
	},
	Description: []string{
		"smctop shows every SMC socket of this host (Shared Memory Communications, SMC-R over RDMA and SMC-D over ISM or the DIBS loopback; AF_SMC and IPPROTO_SMC) joined to its link, link group, RDMA device, port and counters: from sock_diag, SMC generic netlink, sysfs, procfs and the smc: tracepoints in a private tracefs instance. A capture (-r) or a live interface (-i) is read by smcdump's tracker and shown the same way, from the client's side.",
		"The dashboard has six views (overview, connections, linkgroups, devices, events, processes); ? lists the keys and what each column of the current view means. Without a terminal it says to use --once, --count N or --listen ADDR --no-tui (the fleet view: --once or --count N).",
		"With --listen it serves Prometheus metrics (smc_*) on /metrics; the alert rules and the Grafana dashboard are in the source's deploy/ directory.",
	},
	Examples: []cli.Example{
		{What: "smctop", Means: "the dashboard of this host (root for process names and tracepoints)"},
		{What: "smctop --once -o json", Means: "one snapshot of every view, for scripts"},
		{What: "smctop -r capture.pcap --speed 10", Means: "replay a capture through the dashboard: space pauses, . steps, ] and [ seek, R restarts"},
		{What: "smctop --listen 127.0.0.1:9714 --no-tui", Means: "the Prometheus exporter alone"},
		{What: "smctop --listen :9714 --no-tui --web.config.file /etc/smcscope/web.yml", Means: "the exporter over TLS with basic auth (node_exporter's web config format)"},
		{What: "smctop --prometheus https://prom:9090 --http.config.file prom.yml", Means: "the fleet view through TLS and auth set as in a Prometheus scrape config"},
		{What: "smctop --netlink-replay rec/ --host-address 10.0.0.1 --listen :9714 --no-tui", Means: "export a recorded host as the fleet knows it: its address, by which other hosts' peers find it"},
	},
	Exit: []cli.Example{
		{What: "0", Means: "done"},
		{What: "1", Means: "a source could not be read, or a write failed"},
		{What: "2", Means: "a bad flag, no terminal for the dashboard, or a capture damaged (what was read is printed first)"},
		{What: "129, 143", Means: "the dashboard ended by SIGHUP or SIGTERM (128 + the signal, as a shell reports it), after the terminal was restored; the exporter alone (--no-tui) exits 0 on SIGTERM"},
		{What: "129, 130, 143", Means: "--once or --count replaying a capture (-r), stopped by SIGHUP, SIGINT or SIGTERM before its end: the snapshots show what was read (a FIFO's writer need not write again for the signal to count)"},
	},
	SeeAlso: []string{"smcdump(1)", "smcping(1)", "ss(8)", "rdma(8)"},
	Values:  map[string][]string{"o": {"text", "json", "jsonl"}},
	Groups: []cli.Group{
		{Title: "Source (default: this host's kernel)", Flags: []string{"r", "speed", "i", "netlink-replay", "remote", "prometheus", "http.config.file", "exporter.config.file"}},
		{Title: "Dashboard and snapshots", Flags: []string{"interval", "once", "count", "o"}},
		{Title: "Prometheus exporter", Flags: []string{"listen", "no-tui", "web.config.file", "web.disable-snapshot", "host-name", "host-address"}},
		{Title: "Paths", Flags: []string{"path.sysfs", "path.procfs", "path.tracefs"}},
	},
}
