package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/smcscope/smcscope/smcnl"
)

const usage = `usage:
  smclab ueid add NAME | ueid del NAME | ueid flush | ueid list
  smclab pnet add PNETID NETDEV|- [IBDEV [PORT]] | pnet del PNETID | pnet flush | pnet list [-json]
  smclab diag|lgr|dev|stats|fallback|sysinfo [-json]
  smclab wait-lgr-gone [-keep N] SECONDS
  smclab wait-smctop FILE SECONDS [-pid PID] [-links N] [-event KIND[/SOURCE]]... [-traced] [-settled PID] [-after N] [-calls PID:N]
  smclab record DIR
  smclab slow-reader [-port N] [-chunk BYTES] [-pause DURATION] [-wait DURATION]
  smclab http-serve [-port N] [-once] [-wait DURATION] [-tcp] | http-get [-tcp] ADDR:PORT PATH
`

type usageError string

func (e usageError) Error() string { return string(e) }

// run executes one smclab command, writing its output to w.
func run(args []string, w io.Writer) error {
	if len(args) == 0 {
		return usageError("no command")
	}
	cmd, rest := args[0], args[1:]
	asJSON := len(rest) == 1 && rest[0] == "-json"
	switch cmd {
	case "diag", "lgr", "dev", "stats", "fallback", "sysinfo":
		if len(rest) > 0 && !asJSON {
			return usageError(fmt.Sprintf("%s: unexpected arguments %q", cmd, rest))
		}
	}
	switch cmd {
	case "ueid":
		return ueid(rest, w)
	case "pnet":
		return pnet(rest, w)
	case "diag":
		ss, err := smcnl.Sockets()
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, ss)
		}
		return smcnl.WriteSockets(w, ss)
	case "lgr", "dev", "stats", "fallback", "sysinfo":
		c, err := smcnl.Dial()
		if err != nil {
			return err
		}
		defer c.Close()
		return genl(c, cmd, asJSON, w)
	case "wait-lgr-gone":
		keep := 0
		if len(rest) == 3 && rest[0] == "-keep" {
			k, err := strconv.Atoi(rest[1])
			if err != nil || k < 0 {
				return usageError(fmt.Sprintf("wait-lgr-gone: bad -keep %q", rest[1]))
			}
			keep, rest = k, rest[2:]
		}
		if len(rest) != 1 {
			return usageError("wait-lgr-gone: need [-keep N] SECONDS")
		}
		secs, err := strconv.ParseFloat(rest[0], 64)
		if err != nil || secs < 0 {
			return usageError(fmt.Sprintf("wait-lgr-gone: bad SECONDS %q", rest[0]))
		}
		return waitLGRGone(time.Duration(secs*float64(time.Second)), keep, w)
	case "wait-smctop":
		file, d, pid, want, err := parseWaitSmctop(rest)
		if err != nil {
			return err
		}
		return waitSmctop(file, d, pid, want, w)
	case "record":
		if len(rest) != 1 {
			return usageError("record: need DIR")
		}
		return record(rest[0], w)
	case "slow-reader":
		r, err := parseSlowReader(rest)
		if err != nil {
			return err
		}
		return r.run(w)
	case "http-serve":
		return httpServe(rest, w)
	case "http-get":
		return httpGet(rest, w)
	}
	return usageError(fmt.Sprintf("unknown command %q", cmd))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func ueid(args []string, w io.Writer) error {
	if len(args) == 0 {
		return usageError("ueid: need add|del|flush|list")
	}
	c, err := smcnl.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	switch {
	case args[0] == "add" && len(args) == 2:
		name, err := smcnl.NormalizeUEID(args[1])
		if err != nil {
			return err
		}
		existed := 0
		if err := c.AddUEID(name); errors.Is(err, os.ErrExist) {
			existed = 1
		} else if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "ueid=%q existed=%d\n", name, existed)
		return err
	case args[0] == "del" && len(args) == 2:
		return c.RemoveUEID(args[1])
	case args[0] == "flush" && len(args) == 1:
		return c.FlushUEIDs()
	case args[0] == "list" && len(args) == 1:
		us, err := c.UEIDs()
		if err != nil {
			return err
		}
		for _, u := range us {
			fmt.Fprintf(w, "ueid=%q\n", u)
		}
		_, err = fmt.Fprintf(w, "ueids=%d\n", len(us))
		return err
	}
	return usageError(fmt.Sprintf("ueid: bad arguments %q", args))
}

// pnet changes or lists the PNET table: which netdevs and RDMA ports
// share a physical network (two rxe devices, or a device for lo).
func pnet(args []string, w io.Writer) error {
	if len(args) == 0 {
		return usageError("pnet: need add|del|flush|list")
	}
	var e smcnl.PNETEntry
	switch {
	case args[0] == "add" && len(args) >= 3 && len(args) <= 5:
		e.PNETID = args[1]
		if args[2] != "-" {
			e.EthName = args[2]
		}
		if len(args) >= 4 {
			e.IBName = args[3]
		}
		if len(args) == 5 {
			p, err := strconv.ParseUint(args[4], 10, 8)
			if err != nil || p == 0 {
				return usageError(fmt.Sprintf("pnet add: bad PORT %q", args[4]))
			}
			e.IBPort = uint8(p)
		}
	case args[0] == "del" && len(args) == 2, args[0] == "flush" && len(args) == 1:
	case args[0] == "list" && (len(args) == 1 || len(args) == 2 && args[1] == "-json"):
	default:
		return usageError(fmt.Sprintf("pnet: bad arguments %q", args))
	}
	c, err := smcnl.DialPNET()
	if err != nil {
		return err
	}
	defer c.Close()
	switch args[0] {
	case "add":
		if err := c.AddPNETID(e); err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "pnet=%q eth=%q ib=%q\n", e.PNETID, e.EthName, e.IBName)
		return err
	case "del":
		return c.RemovePNETID(args[1])
	case "flush":
		return c.FlushPNETIDs()
	}
	es, err := c.PNETIDs()
	if err != nil {
		return err
	}
	if len(args) == 2 {
		return writeJSON(w, es)
	}
	for _, e := range es {
		fmt.Fprintf(w, "pnet=%q eth=%q ib=%q ib_port=%d\n", e.PNETID, e.EthName, e.IBName, e.IBPort)
	}
	_, err = fmt.Fprintf(w, "pnets=%d\n", len(es))
	return err
}

func genl(c *smcnl.Conn, cmd string, asJSON bool, w io.Writer) error {
	switch cmd {
	case "lgr":
		rs, err := c.LinkGroupsR()
		if err != nil {
			return err
		}
		// SMC-D is absent on most hosts; its absence is not an error here.
		ds, err := c.LinkGroupsD()
		if err != nil && !errors.Is(err, smcnl.ErrNotSupported) {
			return err
		}
		if asJSON {
			return writeJSON(w, map[string]any{"smcr": rs, "smcd": ds})
		}
		return smcnl.WriteLinkGroups(w, rs, ds)
	case "dev":
		rs, err := c.DevicesR()
		if err != nil {
			return err
		}
		ds, err := c.DevicesD()
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, map[string]any{"smcr": rs, "smcd": ds})
		}
		if err := smcnl.WriteDevices(w, "smcr", rs); err != nil {
			return err
		}
		return smcnl.WriteDevices(w, "smcd", ds)
	case "stats":
		s, err := c.Stats()
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, s)
		}
		return smcnl.WriteStats(w, s)
	case "fallback":
		f, err := c.FallbackStats()
		if err != nil {
			return err
		}
		if asJSON {
			return writeJSON(w, f)
		}
		return smcnl.WriteFallbackStats(w, f)
	}
	s, err := c.SysInfo()
	if err != nil {
		return err
	}
	us, err := c.UEIDs()
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, map[string]any{"sysinfo": s, "ueids": us})
	}
	return smcnl.WriteSysInfo(w, s, us)
}

// waitLGRGone polls until at most keep SMC-R link groups are left: the
// kernel frees a link group some seconds after its last connection, and the
// next scenario must not reuse it.
func waitLGRGone(d time.Duration, keep int, w io.Writer) error {
	c, err := smcnl.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	for {
		rs, err := c.LinkGroupsR()
		if err != nil {
			return err
		}
		if len(rs) <= keep {
			_, err := fmt.Fprintf(w, "lgr_gone=1 lgrs=%d after_ms=%d\n", len(rs), time.Since(start).Milliseconds())
			return err
		}
		if time.Since(start) >= d {
			fmt.Fprintf(w, "lgr_gone=0 lgrs=%d after_ms=%d\n", len(rs), time.Since(start).Milliseconds())
			return fmt.Errorf("wait-lgr-gone: %d link group(s) left after %v", len(rs), d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// record writes each command's netlink replies to DIR/<name>.bin, the
// messages back to back as the kernel framed them, for smcnl/testdata.
func record(dir string, w io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	save := func(name string, msgs []netlink.Message) {
		b := smcnl.AppendMessages(nil, msgs)
		p := filepath.Join(dir, name+".bin")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			fmt.Fprintf(w, "record=%q error=%q\n", name, err.Error())
			return
		}
		fmt.Fprintf(w, "record=%q messages=%d bytes=%d\n", name, len(msgs), len(b))
	}
	var failed int
	note := func(name string, err error) {
		if errors.Is(err, smcnl.ErrNotSupported) {
			fmt.Fprintf(w, "record=%q unsupported=%q\n", name, err.Error())
			return
		}
		if err != nil {
			failed++
			fmt.Fprintf(w, "record=%q error=%q\n", name, err.Error())
		}
	}

	d, err := smcnl.DialDiag()
	if err != nil {
		note("diag", err)
	} else {
		d.SetRecorder(func(m []netlink.Message) { save("diag", m) })
		_, err = d.Sockets()
		note("diag", err)
		d.Close()
	}

	// The PNET table (SMC_PNETID family): which devices a PNET ID ties
	// together, and the PNET ID of a device that has no netlink listing
	// of its own (the DIBS loopback).
	if p, err := smcnl.DialPNET(); err != nil {
		note("pnet", err)
	} else {
		p.SetRecorder(func(m []netlink.Message) { save("pnet", m) })
		_, err = p.PNETIDs()
		note("pnet", err)
		p.Close()
	}

	c, err := smcnl.Dial()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	defer c.Close()
	var cur string
	c.SetRecorder(func(_ uint8, m []netlink.Message) { save(cur, m) })
	for _, step := range []struct {
		name string
		fn   func() error
	}{
		{"sysinfo", func() error { _, err := c.SysInfo(); return err }},
		{"ueid", func() error { _, err := c.UEIDs(); return err }},
		{"seid", func() error { _, err := c.SEID(); return err }},
		{"hs_limitation", func() error { _, err := c.HSLimitation(); return err }},
		{"links", func() error { _, err := c.LinkGroupsR(); return err }},
		{"lgr_smcd", func() error { _, err := c.LinkGroupsD(); return err }},
		{"dev_smcr", func() error { _, err := c.DevicesR(); return err }},
		{"dev_smcd", func() error { _, err := c.DevicesD(); return err }},
		{"stats", func() error { _, err := c.Stats(); return err }},
		{"fallback", func() error { _, err := c.FallbackStats(); return err }},
	} {
		cur = step.name
		note(step.name, step.fn())
	}
	if err := recordHost(dir, w); err != nil {
		note("host", err)
	}
	if failed > 0 {
		return fmt.Errorf("record: %d command(s) failed", failed)
	}
	return nil
}

// recordHost writes the host's name and interface addresses beside the
// replies (monitor.HostFile, its HostInfo as JSON): a replay of the
// recording then names the host and its addresses as the live exporter
// did, so a fleet view over replays can tell which host a peer address is.
func recordHost(dir string, w io.Writer) error {
	name, err := os.Hostname()
	if err != nil {
		return err
	}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	h := struct {
		Name      string   `json:"name,omitempty"`
		Addresses []string `json:"addresses,omitempty"`
	}{Name: name}
	for _, a := range as {
		p, err := netip.ParsePrefix(a.String())
		if err != nil {
			continue
		}
		if ip := p.Addr().Unmap(); !ip.IsLoopback() {
			h.Addresses = append(h.Addresses, ip.String())
		}
	}
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "host.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "record=%q addresses=%d\n", "host", len(h.Addresses))
	return nil
}
