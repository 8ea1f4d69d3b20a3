package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/rdmastats"
	"github.com/smcscope/smcscope/smcnl"
)

// Options says where a Monitor reads from. The zero value reads nothing:
// set Kernel (DialKernel, ReplayKernel) and/or Wire, and the roots.
type Options struct {
	Kernel Kernel // nil: no kernel view (a capture replay on any machine)
	// KernelErr says why Kernel is nil or partial (shown as the source's detail).
	KernelErr error
	Wire      *Wire  // nil: no wire view
	SysfsRoot string // "" skips RDMA devices; "/sys" on a live host
	ProcRoot  string // "" skips process owners and sysctls; "/proc" on a live host
	Tracer    *Tracer
	TracerErr error // why there is no Tracer (shown as the events source's detail)
	// Remote, when set, is another host's exporter (http://HOST:9714):
	// Refresh returns its /snapshot.json and reads nothing here.
	Remote string
	// RemoteHTTP is the client that reaches Remote (TLS, auth); nil: the
	// default client.
	RemoteHTTP *http.Client
	// Addrs lists the host's own addresses (Host sets the interfaces');
	// nil: only those its SMC sockets and links show, and a recording's
	// (ReplayKernel's HostFile).
	Addrs func() []netip.Addr
	// HostName names the host instead of the kernel's SMC host name (a
	// replay's, or one that is not the name the fleet knows it by).
	HostName string
	Now      func() time.Time
}

// Monitor makes Snapshots, keeping what rates, sparklines and events need
// between them. Refresh is safe for one goroutine at a time.
type Monitor struct {
	o    Options
	mu   sync.Mutex
	rdma rdmaState
	prev *Snapshot
	// listen indexes this refresh's kernel rows that listen, for
	// listenerFamilies: a pass over every row to find the few listeners
	// cost as much as a pass over their 35 MB.
	listen []int32
	// listed counts this refresh's kernel rows on each link group
	// (rowTally.listed).
	listed map[lgrAt]int
	// scratch is kernelConns's, reused by each refresh.
	scratch rowScratch
	log     []Event
	// wireFrames is how many frames the tracker had taken at the last
	// refresh: the wire's events up to it are in the log already.
	wireFrames int
	wireGen    int // the replay's restarts seen
	// lost remembers the links a kernel link group lost (see LinkDeleted).
	lost map[string][]LinkRow
	// logged holds the wire findings already in the log (by finding and
	// object): one decided late, or seen again, is not logged twice.
	logged map[string]bool
	// kernelExpert counts the kernel's findings since the start.
	kernelExpert map[expert.ID]uint64
	// procs are the traced processes' sums since the start.
	procs map[int]*procTotals
	// tgids maps the threads the tracepoints named to their processes.
	tgids map[int]int
}

// New returns a Monitor over o.
func New(o Options) *Monitor {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Monitor{o: o, lost: map[string][]LinkRow{}, logged: map[string]bool{}, kernelExpert: map[expert.ID]uint64{}}
}

// Close releases the kernel connections, tracer and capture.
func (m *Monitor) Close() error {
	var err error
	if m.o.Kernel != nil {
		err = m.o.Kernel.Close()
	}
	if m.o.Tracer != nil {
		err = errors.Join(err, m.o.Tracer.Close())
	}
	if m.o.Wire != nil {
		err = errors.Join(err, m.o.Wire.Close())
	}
	return err
}

// Wire returns the wire source, nil without one.
func (m *Monitor) Wire() *Wire { return m.o.Wire }

// Refresh reads every source once and returns the joined snapshot. A
// source that fails is marked unavailable with its error; the others
// still fill the snapshot.
func (m *Monitor) Refresh() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.o.Remote != "" {
		return m.remote()
	}
	now := m.o.Now()
	s := Snapshot{Time: now}
	if m.prev != nil {
		s.Interval = now.Sub(m.prev.Time)
	}
	var smcDevs []smcnl.Device
	smcrErr := errors.New("the kernel was not read")
	m.listen, m.listed = nil, nil
	smcd := smcdDevices{err: smcrErr}
	kernelRows := 0 // the kernel's rows come first, joined already
	if k := m.o.Kernel; k != nil {
		s.Origin = "kernel"
		smcDevs, smcrErr = m.kernel(&s, k)
		kernelRows = len(s.Conns)
		smcd.devs, smcd.err = k.DevicesD()
	} else {
		why := "not read"
		if m.o.KernelErr != nil {
			why = m.o.KernelErr.Error()
		}
		s.Sources = append(s.Sources, Source{Name: SourceSockDiag, Detail: why}, Source{Name: SourceNetlink, Detail: why})
	}
	if m.o.SysfsRoot != "" {
		devs, err := m.rdma.devices(rdmastats.NewFS(m.o.SysfsRoot), now, smcDevs, smcrErr == nil)
		switch {
		case errors.Is(err, rdmastats.ErrNoDevices) || (err == nil && len(devs) == 0):
			s.Sources = append(s.Sources, Source{Name: SourceRDMASysfs, Detail: "no RDMA devices"})
		case err != nil:
			s.Sources = append(s.Sources, Source{Name: SourceRDMASysfs, Detail: err.Error()})
		default:
			s.Devices = devs
			s.Sources = append(s.Sources, Source{Name: SourceRDMASysfs, Available: true, Detail: m.o.SysfsRoot})
		}
		dibs, err := smcnl.DIBSDevices(m.o.SysfsRoot)
		switch {
		case err != nil:
			s.Sources = append(s.Sources, Source{Name: "dibs_sysfs", Detail: err.Error()})
		case len(dibs) > 0:
			s.Sources = append(s.Sources, Source{Name: "dibs_sysfs", Available: true, Detail: fmt.Sprintf("%d DIBS devices (SMC-D)", len(dibs))})
			s.Devices = append(s.Devices, joinDIBS(&s, dibs, smcd)...)
		}
	}
	var listeners map[uint16][2]bool
	if m.o.ProcRoot != "" {
		want := map[uint64]bool{}
		for _, c := range s.Conns {
			if c.Inode != 0 {
				want[c.Inode] = true
			}
		}
		owners := socketOwners(m.o.ProcRoot, want)
		for i := range s.Conns {
			if o, ok := owners[s.Conns[i].Inode]; ok {
				s.Conns[i].PID, s.Conns[i].Comm = o.PID, o.Comm
			}
		}
		s.Settings = smcSysctls(m.o.ProcRoot)
		listeners = tcpListeners(m.o.ProcRoot)
		s.Sources = append(s.Sources, Source{Name: SourceProcfs, Available: true, Detail: m.o.ProcRoot})
	}
	if w := m.o.Wire; w != nil {
		m.wire(&s, w)
	}
	listenerFamilies(s.Conns, m.listen, listeners)
	m.keepLost(&s)
	joinConns(s.Conns[kernelRows:], s.LinkGroups)
	if kernelRows < len(s.Conns) {
		sortConns(s.Conns) // the kernel's rows alone come sorted (kernelConns)
	}
	conns, tally := m.carry(&s)
	s.Host = m.host(&s, tally.addrs)
	m.rates(&s)
	s.Overview = overview(&s, tally)
	if t := m.o.Tracer; t != nil {
		if t.Msgs {
			m.throughput(&s, t.DrainMsgs())
			s.Sources = append(s.Sources, Source{Name: SourceThroughput, Available: true, Detail: "tracefs smc:smc_tx_sendmsg, smc:smc_rx_recvmsg per process (and per connection where a process has one)"})
		} else {
			s.Sources = append(s.Sources, Source{Name: SourceThroughput, Detail: "cursor differences only (" + t.MsgsErr.Error() + ")"})
		}
		s.Sources = append(s.Sources, Source{Name: SourceEvents, Available: true, Detail: "tracefs smc:smc_switch_to_fallback, smc:smcr_link_down, and snapshot differences"})
		m.log = appendEvents(m.log, m.o.Tracer.Drain()...)
		// Tracepoints report fallbacks and link-down themselves; the
		// differences add the rest.
		for _, e := range diffEvents(m.prev, &s, conns) {
			if e.Kind != EventFallback && e.Kind != EventLinkDown {
				m.log = appendEvents(m.log, e)
				m.countKernel(e)
			}
		}
	} else {
		why := "snapshot differences"
		if m.o.TracerErr != nil {
			why += " (no tracepoints: " + m.o.TracerErr.Error() + ")"
			s.Sources = append(s.Sources, Source{Name: SourceThroughput, Detail: "cursor differences only (no tracepoints: " + m.o.TracerErr.Error() + ")"})
		}
		switch {
		case m.o.Wire != nil && m.o.Kernel == nil && m.o.SysfsRoot == "":
			why = "the capture's frames"
		case m.o.Wire != nil:
			why = "the capture's frames, and " + why + " of the kernel and the RNICs"
		}
		s.Sources = append(s.Sources, Source{Name: SourceEvents, Available: true, Detail: why})
		evs := diffEvents(m.prev, &s, conns)
		m.log = appendEvents(m.log, evs...)
		for _, e := range evs {
			m.countKernel(e)
		}
	}
	if m.o.Kernel != nil || m.o.SysfsRoot != "" {
		s.Expert = append(s.Expert, catalogueCounts(expert.FromKernel, func(d expert.Def) uint64 { return m.kernelExpert[d.ID] })...)
	}
	s.Events = append([]Event{}, m.log...)
	s.nonNil()
	snap := s
	m.prev = &snap
	return s
}

// carry carries each row's history over from the previous refresh, in
// one pass over the rows (at 100,000 rows each pass costs): when a kernel
// socket entered its state and when its unconfirmed send data began to
// stand still (ConnRow.StateSince, Cursors.UnconfirmedSince), and the
// per-second rates of its cursors. s's rows must be sorted by key, as
// the previous refresh's are, to be paired with them. It returns the
// sockets' events (diffEvents) and the rows' tally, for the overview and
// the host.
func (m *Monitor) carry(s *Snapshot) (*connDiff, *rowTally) {
	tally := &rowTally{listed: m.listed}
	conns := &connDiff{}
	var prev []ConnRow
	var prevTime time.Time
	if m.prev != nil {
		prev, prevTime = m.prev.Conns, m.prev.Time
	}
	mg := keyMerge{prev: prev}
	rates := m.prev != nil && s.Interval > 0
	perWire, carryWire := m.wireRate(s, rates)
	per := perOver(s.Interval.Seconds())
	for i := range s.Conns {
		c := &s.Conns[i]
		tally.add(c)
		var p *ConnRow
		if j := mg.next(c.Key); j >= 0 {
			p = &prev[j]
		}
		if c.Source == SourceKernel {
			since(c, p, s.Time)
		}
		if m.prev != nil {
			conns.add(c, p, prevTime, s.Time)
		}
		rate := per
		if c.Source == SourceWire {
			rate = perWire
		}
		switch {
		case p != nil && c.Source == SourceWire && carryWire:
			c.RxRate, c.TxRate, c.RateUnknown = p.RxRate, p.TxRate, p.RateUnknown
		case p == nil, !rates, rate == nil:
			c.RateUnknown = true
		default:
			c.RxRate, c.TxRate, c.RateUnknown = rate(c.RxBytes, p.RxBytes), rate(c.TxBytes, p.TxBytes), false
		}
	}
	return conns, tally
}

// wireRate is how a wire row's rate is measured at s (rates: the refresh
// before is there, and time passed): over the capture's time since that
// refresh. Before the capture's first frame there is none (per nil).
// Where the capture's time stood, a replay is paused or ended: the rate
// of the refresh before stands (carry); a live capture had no frame,
// and nothing moved over the refresh's interval, which measures it then.
func (m *Monitor) wireRate(s *Snapshot, rates bool) (per func(cur, old uint64) float64, carry bool) {
	switch {
	case !rates || m.prev.WireTime.IsZero():
		return nil, false
	case s.WireTime.After(m.prev.WireTime):
		return perOver(s.WireTime.Sub(m.prev.WireTime).Seconds()), false
	case !s.WireTime.Equal(m.prev.WireTime):
		return nil, false
	case m.o.Wire != nil && m.o.Wire.Live():
		return perOver(s.Interval.Seconds()), false
	}
	return nil, true
}

// rowTally is what the overview and the host need of the rows, taken in
// carry's pass: a pass of their own over 100,000 rows cost each a few
// milliseconds of memory traffic.
type rowTally struct {
	conns Overview // the rows' counts: Conns, Listening, SMCR, ...
	// listed counts the kernel's rows on each link group: kernelConns
	// counts them by link as it makes them, cheaper than a map update a
	// row on a host whose rows come in no order of groups.
	listed map[lgrAt]int
	// addrs are the kernel rows' source addresses, each once.
	addrs    []netip.Addr
	seenAddr map[netip.Addr]bool
}

// lgrAt names a kernel link group by its kind (SMC-D or SMC-R) and ID,
// as its key does ("lgrd:%08x", "lgr:%08x"): a kernel row on a group has
// its group's mode and ID, which are cheaper to hash than the key.
type lgrAt uint64

func groupAt(kind Mode, id LGRID) lgrAt {
	if kind == ModeSMCD {
		return 1<<32 | lgrAt(id)
	}
	return lgrAt(id)
}

// add counts the row c.
func (t *rowTally) add(c *ConnRow) {
	o := &t.conns
	switch {
	case c.State == StateClosed && c.Source == SourceWire:
		o.Ended++
	case c.Mode == ModeListen:
		o.Listening++
	default:
		switch c.Mode {
		case ModeSMCR:
			o.SMCR++
		case ModeSMCD:
			o.SMCD++
		case ModeFallback:
			o.Fallback++
		case ModeFailed:
			o.Failed++
		default:
			o.Pending++
		}
		o.Conns++
	}
	if c.Source != SourceKernel {
		return
	}
	if !c.AddrHidden {
		// Sockets repeat the host's few addresses: the last one is
		// compared before the set is looked at.
		a := c.Src.Addr().Unmap()
		if n := len(t.addrs); n > 0 && t.addrs[n-1] == a {
			return
		}
		if t.seenAddr == nil {
			t.seenAddr = map[netip.Addr]bool{}
		}
		if !t.seenAddr[a] {
			t.seenAddr[a] = true
			t.addrs = append(t.addrs, a)
		}
	}
}

// since carries over when the kernel row c, p in the previous refresh,
// entered its state and when its unconfirmed send data began to stand
// still (ConnRow.StateSince, Cursors.UnconfirmedSince).
func since(c, p *ConnRow, now time.Time) {
	// A kernel key ("inode:", "cookie:") is never a wire row's.
	if p != nil && p.Source != SourceKernel {
		p = nil
	}
	c.StateSince = now
	if p != nil && p.State == c.State {
		c.StateSince = p.StateSince
	}
	if cur := c.Cursors; cur != nil && cur.TxUnconfirmed > 0 {
		cur.UnconfirmedSince = now
		if p != nil && p.Cursors != nil && p.Cursors.TxUnconfirmed > 0 && p.Cursors.RxCons == cur.RxCons {
			cur.UnconfirmedSince = p.Cursors.UnconfirmedSince
		}
	}
}

// countKernel counts a kernel event that is a finding.
func (m *Monitor) countKernel(e Event) {
	if e.Finding == 0 || e.Source == EventFromWire {
		return
	}
	m.kernelExpert[expert.ID(e.Finding)]++
}

// remote fetches another host's snapshot from its exporter; a host that
// does not answer is a snapshot whose remote source says why.
func (m *Monitor) remote() Snapshot {
	url := strings.TrimRight(m.o.Remote, "/") + "/snapshot.json"
	fail := func(err error) Snapshot {
		s := Snapshot{Time: m.o.Now(), Origin: "remote " + m.o.Remote, Sources: []Source{{Name: SourceRemote, Detail: err.Error()}}}
		s.nonNil()
		return s
	}
	c := m.o.RemoteHTTP
	if c == nil {
		c = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fail(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("%s: HTTP %d", url, resp.StatusCode))
	}
	var s Snapshot
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(&s); err != nil {
		return fail(fmt.Errorf("%s: %w", url, err))
	}
	s.Origin = "remote " + m.o.Remote + " (" + s.Origin + ")"
	s.nonNil()
	return s
}

// wire adds the capture's rows to s, its fallbacks where the kernel's
// statistics are not read, and its new events to the log.
func (m *Monitor) wire(s *Snapshot, w *Wire) {
	paused, speed, gen, at := w.Replay()
	if gen != m.wireGen {
		// The replay began again: its events will be read again, with
		// its frames.
		m.wireGen, m.wireFrames = gen, 0
		m.log = slices.DeleteFunc(m.log, func(e Event) bool { return e.Source == EventFromWire })
		clear(m.logged)
	}
	snap := w.Snapshot()
	v := readWire(&snap)
	s.Conns = append(s.Conns, v.conns...)
	s.LinkGroups = append(s.LinkGroups, v.groups...)
	frames, last, done, err := w.Progress()
	s.WireTime = last
	detail := fmt.Sprintf("%s: %d frames", w.Name(), frames)
	if done {
		detail += ", ended"
	}
	// A capture cut short or read past its damage gave the rows of what
	// it holds: a source read, whose error is its detail's.
	src := Source{Name: SourceWireName, Available: err == nil || frames > 0, Detail: detail, Frames: frames, Ended: done, Paused: paused}
	if !w.Live() {
		src.Speed, src.Clock = speed, at
	}
	if err != nil {
		src.Detail += ": " + err.Error()
		src.Error = err.Error()
	} else if n := w.Note(); n != "" {
		src.Error = n
	}
	s.Sources = append(s.Sources, src)
	if s.Origin == "" {
		s.Origin = w.Name()
	} else {
		s.Origin += "+" + w.Name()
	}
	if s.Kernel == nil {
		// A capture stands in for the kernel's fallback statistics: each
		// side's reason, counted as that side's kernel counts it. The
		// total also counts the fallbacks whose reason the capture
		// missed (track.CauseUncaptured), listed under no reason.
		s.Fallbacks = append(s.Fallbacks, v.fallbacks...)
		s.Overview.FallbacksTotal += v.totals.ClientFallbacks + v.totals.ServerFallbacks
		s.Overview.SuccessTotal, s.Overview.JoinedSMC = uint64(v.success), uint64(v.joined)
		s.WireTotals = &v.totals
	}
	var fresh []Event
	for _, e := range v.events {
		if e.Frame > m.wireFrames {
			fresh = append(fresh, e)
		}
	}
	for _, e := range v.findings {
		if k := e.Finding.String() + "|" + e.Conn + "|" + e.LGR + "|" + strconv.Itoa(int(e.Link)); !m.logged[k] {
			m.logged[k] = true
			fresh = append(fresh, e)
		}
	}
	s.Expert = append(s.Expert, v.expert...)
	m.wireFrames = snap.Stats.Frames
	m.log = appendEvents(m.log, fresh...)
}

// keepLost keeps listing the links a kernel link group lost, as
// LinkDeleted, while the group has fewer than two active links: a failed
// over group reads "link 2 DELETED" (smc_link_up 0) until a second link
// is active again or the group ends, instead of showing one healthy-looking
// link. A link listed again by the kernel is no longer lost.
func (m *Monitor) keepLost(s *Snapshot) {
	prev := map[string]*LinkGroupRow{}
	if m.prev != nil {
		for i := range m.prev.LinkGroups {
			prev[m.prev.LinkGroups[i].Key] = &m.prev.LinkGroups[i]
		}
	}
	lost := map[string][]LinkRow{}
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		if g.Source != SourceKernel || g.Kind != ModeSMCR {
			continue
		}
		have := map[uint8]bool{}
		active := 0
		for _, l := range g.Links {
			have[l.ID] = true
			if l.Active {
				active++
			}
		}
		var gone []LinkRow
		if p := prev[g.Key]; p != nil {
			for _, l := range p.Links {
				if have[l.ID] {
					continue
				}
				have[l.ID] = true
				if l.State != LinkDeleted {
					l.State, l.Active, l.Conns, l.Since = LinkDeleted, false, 0, s.Time
				}
				gone = append(gone, l)
			}
		}
		for _, l := range m.lost[g.Key] {
			if !have[l.ID] {
				have[l.ID] = true
				gone = append(gone, l)
			}
		}
		if active >= 2 || len(gone) == 0 {
			continue
		}
		sort.Slice(gone, func(i, j int) bool { return gone[i].ID < gone[j].ID })
		lost[g.Key] = gone
		g.Links = append(g.Links, gone...)
		sort.SliceStable(g.Links, func(i, j int) bool { return g.Links[i].ID < g.Links[j].ID })
	}
	m.lost = lost
}

// unsetNodename is the kernel's node name before anyone set one
// (UTS_NODENAME): SMC sends it as its host name then, but it names no host.
const unsetNodename = "(none)"

// host names the host and the addresses its SMC traffic uses; conns are
// the kernel rows' source addresses (rowTally).
func (m *Monitor) host(s *Snapshot, conns []netip.Addr) HostInfo {
	var h HostInfo
	rec, _ := m.o.Kernel.(replayKernel)
	if k := m.o.Kernel; k != nil {
		if s.System != nil && s.System.LocalHost != unsetNodename {
			h.Name = s.System.LocalHost
		}
		if h.Name == "" && rec.host != nil {
			h.Name = rec.host.Name
		}
		if h.Name == "" && m.o.ProcRoot != "" {
			h.Name, _ = os.Hostname()
		}
	}
	if m.o.HostName != "" {
		h.Name = m.o.HostName
	}
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) {
		a = a.Unmap()
		if a.IsValid() && !a.IsUnspecified() && !a.IsLoopback() && !seen[a] {
			seen[a] = true
			h.Addresses = append(h.Addresses, a.String())
		}
	}
	if m.o.Addrs != nil {
		for _, a := range m.o.Addrs() {
			add(a)
		}
	} else if rec.host != nil {
		for _, s := range rec.host.Addresses {
			add(netip.MustParseAddr(s)) // checked by readHostFile
		}
	}
	for _, a := range conns {
		add(a)
	}
	for _, g := range s.LinkGroups {
		for _, l := range g.Links {
			if g.Source == SourceKernel {
				add(gidAddr(l.GID))
			}
		}
	}
	sort.Strings(h.Addresses)
	return h
}

// interfaceAddrs lists this host's interface addresses.
func interfaceAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// gidAddr is the IP address in a RoCEv2 GID as SMC netlink writes it
// ("0000:...:ffff:0a0a:0001"); invalid for other GIDs.
func gidAddr(gid string) netip.Addr {
	a, err := netip.ParseAddr(gid)
	if err != nil {
		return netip.Addr{}
	}
	return a
}

// smcdDevices is the kernel's SMC-D device list (GET_DEV_SMCD) and why it
// is missing when it is.
type smcdDevices struct {
	devs []smcnl.Device
	err  error
}

// joinDIBS names the DIBS device of each SMC-D socket and link group (the
// device whose GID they carry) and returns the devices' rows, each used
// by SMC as the kernel says (DeviceRow.SMC) with its PNET ID.
func joinDIBS(s *Snapshot, devs []smcnl.DIBSDevice, smcd smcdDevices) []DeviceRow {
	byGID := map[string]int{}
	rows := make([]DeviceRow, len(devs))
	for i, d := range devs {
		driver := d.Driver
		if driver == "" && d.Name == "lo" {
			// The loopback has no bus device, so no driver link.
			driver = "dibs loopback"
		}
		rows[i] = DeviceRow{Kind: DeviceDIBS, Name: d.Name, Driver: driver, GID: d.GID, FabricID: d.FabricID, Ports: []PortRow{}}
		byGID[d.GID] = i
		// GET_DEV_SMCD names a device by its parent's PCI ID
		// (smc_set_pci_values); the loopback has no parent and is never
		// listed.
		rows[i].SMCKnown = smcd.err == nil
		for _, sd := range smcd.devs {
			if d.Parent != "" && sd.PCIID == d.Parent {
				rows[i].SMC = true
				for _, p := range sd.Ports {
					rows[i].PNETID, rows[i].PNETIDByUser = p.PNETID, p.PNETIDByUser
				}
			}
		}
		if rows[i].PNETID == "" && s.System != nil {
			// A device SMC netlink does not list shows its PNET ID only in
			// the PNET table, where a user put it (smc_pnet -I lo).
			for _, e := range s.System.PNET {
				if e.Device == d.Name || d.Parent != "" && e.Device == d.Parent {
					rows[i].PNETID, rows[i].PNETIDByUser = e.PNETID, true
				}
			}
		}
	}
	for i := range s.Conns {
		c := &s.Conns[i]
		if j, ok := byGID[c.Link().GID]; ok && c.Mode == ModeSMCD {
			// A kernel row shares its ConnLink with the rows of its
			// link group and GIDs, which are on the same device.
			c.ConnLink.DIBSDev = rows[j].Name
			rows[j].Conns++
			if c.Source == SourceKernel {
				rows[j].SMC, rows[j].SMCKnown = true, true
			}
		}
	}
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		if j, ok := byGID[g.GID]; ok && g.Kind == ModeSMCD {
			g.DIBSDev = rows[j].Name
			if g.Source == SourceKernel {
				rows[j].SMC, rows[j].SMCKnown = true, true
			}
		}
	}
	return rows
}

// nonNil makes every list of s a list, empty when there is nothing:
// JSON readers get [] (jq '.devices[]' works), never null.
func (s *Snapshot) nonNil() {
	if s.Sources == nil {
		s.Sources = []Source{}
	}
	if s.Conns == nil {
		s.Conns = []ConnRow{}
	}
	if s.LinkGroups == nil {
		s.LinkGroups = []LinkGroupRow{}
	}
	for i := range s.LinkGroups {
		g := &s.LinkGroups[i]
		if g.Links == nil {
			g.Links = []LinkRow{}
		}
		if g.History == nil {
			g.History = []Event{}
		}
	}
	if s.Devices == nil {
		s.Devices = []DeviceRow{}
	}
	if s.Fallbacks == nil {
		s.Fallbacks = []ReasonCount{}
	}
	if s.Expert == nil {
		s.Expert = []ExpertCount{}
	}
	if s.Processes == nil {
		s.Processes = []ProcessRow{}
	}
	if s.Events == nil {
		s.Events = []Event{}
	}
	if s.Settings == nil {
		s.Settings = []Setting{}
	}
}

// kernel fills the kernel's part of s and returns SMC's RDMA devices.
func (m *Monitor) kernel(s *Snapshot, k Kernel) ([]smcnl.Device, error) {
	src := func(name SourceName, err error, detail string) {
		if err != nil {
			s.Sources = append(s.Sources, Source{Name: name, Detail: err.Error()})
			return
		}
		s.Sources = append(s.Sources, Source{Name: name, Available: true, Detail: detail})
	}
	socks, err := k.Sockets()
	src(SourceSockDiag, err, fmt.Sprintf("%d SMC sockets", len(socks)))
	var names map[uint32]string
	if m.o.SysfsRoot != "" {
		names = readIfIndexes(m.o.SysfsRoot)
	}
	netdev := func(i uint32) string {
		if n, ok := names[i]; ok {
			return n
		}
		if i == 0 {
			return ""
		}
		return fmt.Sprintf("if%d", i)
	}
	gs, err := k.LinkGroupsR()
	src(SourceNetlink, err, "SMC_GEN_NETLINK")
	s.LinkGroups = slices.Grow(s.LinkGroups, len(gs))
	for _, g := range gs {
		s.LinkGroups = append(s.LinkGroups, kernelLGR(g, netdev))
	}
	if gd, err := k.LinkGroupsD(); err == nil {
		for _, g := range gd {
			s.LinkGroups = append(s.LinkGroups, kernelLGRD(g))
		}
	}
	// The rows are made once the link groups are known, to be joined to
	// them as they are made (Refresh joins the wire's rows).
	s.Conns, m.listen, m.listed = kernelConns(socks, newLinkIndex(s.LinkGroups), &m.scratch)
	devs, devErr := k.DevicesR()
	if st, err := k.Stats(); err == nil {
		ks := &KernelStats{
			SMCR:           techTotals(st.SMCR),
			SMCD:           techTotals(st.SMCD),
			ClientHSErrors: st.ClientHSErrCount,
			ServerHSErrors: st.ServerHSErrCount,
			BuffersFull: st.SMCR.RxRMBStats.Full + st.SMCR.TxRMBStats.Full + st.SMCR.TxRMBStats.FullPeer +
				st.SMCD.RxRMBStats.Full + st.SMCD.TxRMBStats.Full + st.SMCD.TxRMBStats.FullPeer,
		}
		s.Kernel = ks
	}
	if fb, err := k.FallbackStats(); err == nil {
		if s.Kernel != nil {
			s.Kernel.ClientFallbacks, s.Kernel.ServerFallbacks = fb.ClientTotal, fb.ServerTotal
		}
		for _, r := range fb.Server {
			s.Fallbacks = append(s.Fallbacks, ReasonCount{Side: RoleServer, Reason: reason(r.Code), Count: uint64(r.Count)})
		}
		for _, r := range fb.Client {
			s.Fallbacks = append(s.Fallbacks, ReasonCount{Side: RoleClient, Reason: reason(r.Code), Count: uint64(r.Count)})
		}
	}
	if on, err := k.HSLimitation(); err == nil {
		s.Overview.HSLimitation = &on
	}
	s.System = system(k)
	return devs, devErr
}

func techTotals(t smcnl.TechStats) TechTotals {
	buf := func(r smcnl.RMBStats) BufferEvents {
		return BufferEvents{SizeSmall: r.SizeSmall, SizeSmallPeer: r.SizeSmallPeer, Full: r.Full, FullPeer: r.FullPeer,
			Reuse: r.Reuse, Alloc: r.Alloc, Downgrade: r.Downgrade}
	}
	var rxUse, txUse *uint64
	if t.RMBUsageKnown {
		rxUse, txUse = &t.RxRMBUsage, &t.TxRMBUsage
	}
	return TechTotals{
		ClientSuccess: t.ClientV1Succ + t.ClientV2Succ, ServerSuccess: t.ServerV1Succ + t.ServerV2Succ,
		ClientV1Success: t.ClientV1Succ, ClientV2Success: t.ClientV2Succ,
		ServerV1Success: t.ServerV1Succ, ServerV2Success: t.ServerV2Succ,
		RxBytes: t.RxBytes, TxBytes: t.TxBytes, RxCount: t.RxCount, TxCount: t.TxCount,
		RxRMBUsage: rxUse, TxRMBUsage: txUse,
		Calls: SpecialCalls{Sendpage: t.SendpageCount, Splice: t.SpliceCount, Cork: t.CorkCount,
			Nodelay: t.NodelayCount, UrgentData: t.UrgDataCount},
		RxBuffer: buf(t.RxRMBStats), TxBuffer: buf(t.TxRMBStats),
		RxBufferSizes: SizeHistogram(t.RxRMBSize), TxBufferSizes: SizeHistogram(t.TxRMBSize),
		RxPayloadSizes: SizeHistogram(t.RxPayloadSize), TxPayloadSizes: SizeHistogram(t.TxPayloadSize),
	}
}

// system reads the kernel's SMC system information, EIDs and PNET table;
// nil when none of them could be read.
func system(k Kernel) *SystemInfo {
	var si SystemInfo
	var read bool
	note := func(what string, err error) bool {
		if err != nil {
			si.Errors = append(si.Errors, what+": "+err.Error())
			return false
		}
		read = true
		return true
	}
	if v, err := k.SysInfo(); note("sys_info", err) {
		si.Version, si.Release, si.SMCRv2, si.SMCDv2, si.LocalHost = v.Version, v.Release, v.SMCRv2, v.ISMv2, strings.TrimSpace(v.LocalHost)
	}
	if v, err := k.SEID(); note("seid", err) && v.Reported {
		si.SEID = &SEID{EID: v.EID, Enabled: v.Enabled}
	}
	if v, err := k.UEIDs(); note("ueid", err) {
		si.UEIDs = append([]string{}, v...)
	}
	if v, err := k.PNETIDs(); note("pnet", err) {
		si.PNET = make([]PNETRow, 0, len(v))
		for _, e := range v {
			si.PNET = append(si.PNET, PNETRow{PNETID: e.PNETID, NetDev: e.EthName, Device: e.IBName, DevPort: e.IBPort})
		}
	}
	if !read {
		return nil
	}
	return &si
}

// perOver returns the per-second rate of a counter over dt seconds.
func perOver(dt float64) func(cur, old uint64) float64 {
	return func(cur, old uint64) float64 {
		if cur < old || dt <= 0 {
			return 0 // counter reset (module reload), or no time passed
		}
		return float64(cur-old) / dt
	}
}

// rates fills the per-second values of the kernel's counters against the
// previous snapshot (the rows' are carry's).
func (m *Monitor) rates(s *Snapshot) {
	p := m.prev
	if p == nil || s.Interval <= 0 {
		return
	}
	per := perOver(s.Interval.Seconds())
	oldFB := map[string]uint64{}
	for _, r := range p.Fallbacks {
		oldFB[string(r.Side)+fmt.Sprint(r.Reason.Code)] = r.Count
	}
	for i, r := range s.Fallbacks {
		if o, ok := oldFB[string(r.Side)+fmt.Sprint(r.Reason.Code)]; ok {
			s.Fallbacks[i].Rate = per(r.Count, o)
		}
	}
	if s.Kernel != nil && p.Kernel != nil {
		k, o := s.Kernel, p.Kernel
		rate := func(now, before uint64) *float64 {
			r := per(now, before)
			return &r
		}
		s.Overview.HandshakeErrorRate = rate(k.ClientHSErrors+k.ServerHSErrors, o.ClientHSErrors+o.ServerHSErrors)
		s.Overview.FallbackRate = rate(k.ClientFallbacks+k.ServerFallbacks, o.ClientFallbacks+o.ServerFallbacks)
		s.Overview.SuccessRate = rate(k.SMCR.ClientSuccess+k.SMCR.ServerSuccess+k.SMCD.ClientSuccess+k.SMCD.ServerSuccess,
			o.SMCR.ClientSuccess+o.SMCR.ServerSuccess+o.SMCD.ClientSuccess+o.SMCD.ServerSuccess)
		s.Overview.RxBytesRate = rate(k.SMCR.RxBytes+k.SMCD.RxBytes, o.SMCR.RxBytes+o.SMCD.RxBytes)
		s.Overview.TxBytesRate = rate(k.SMCR.TxBytes+k.SMCD.TxBytes, o.SMCR.TxBytes+o.SMCD.TxBytes)
	}
}

// overview counts what the first screen shows: what exists now; t is the
// rows' tally.
func overview(s *Snapshot, t *rowTally) Overview {
	o := s.Overview
	c := t.conns
	o.Ended += c.Ended
	o.Listening += c.Listening
	o.SMCR += c.SMCR
	o.SMCD += c.SMCD
	o.Fallback += c.Fallback
	o.Failed += c.Failed
	o.Pending += c.Pending
	o.Conns += c.Conns
	for _, g := range s.LinkGroups {
		if g.Deleted {
			continue
		}
		o.LinkGroups++
		for _, l := range g.Links {
			if l.State == LinkDeleted {
				o.LinksLost++
				continue
			}
			o.Links++
			switch {
			case l.Active:
				o.LinksActive++
			case l.State == LinkNotKnown:
				o.LinksUnknown++
			}
		}
		switch {
		case g.Kind != ModeSMCR || g.Redundant:
		case g.RedundancyUnknown:
			o.RedundancyUnknown++
		default:
			o.NoRedundancy++
		}
	}
	for _, d := range s.Devices {
		if d.Kind == DeviceDIBS {
			o.DIBSDevices++
			continue
		}
		o.RNICs++
		for _, p := range d.Ports {
			if p.Port == 0 {
				continue
			}
			if p.Active {
				o.PortsActive++
			} else {
				o.PortsDown++
			}
			for _, c := range p.Counters {
				if c.Moving {
					o.ErrorCounters++
				}
			}
		}
	}
	// Connections the kernel's groups hold beyond the sockets it lists on
	// them (Overview.UnlistedConns): known only when both were read.
	up := map[SourceName]bool{}
	for _, src := range s.Sources {
		up[src.Name] = up[src.Name] || src.Available
	}
	if up[SourceSockDiag] && up[SourceNetlink] {
		listed := t.listed
		n := 0
		for _, g := range s.LinkGroups {
			if at := groupAt(g.Kind, g.ID); g.Source == SourceKernel && int(g.Conns) > listed[at] {
				n += int(g.Conns) - listed[at]
			}
		}
		o.UnlistedConns = &n
	}
	if k := s.Kernel; k != nil {
		hs := k.ClientHSErrors + k.ServerHSErrors
		o.HandshakeErrors = &hs
		o.FallbacksTotal = k.ClientFallbacks + k.ServerFallbacks
		o.SuccessTotal = k.SMCR.ClientSuccess + k.SMCR.ServerSuccess + k.SMCD.ClientSuccess + k.SMCD.ServerSuccess
	}
	return o
}

// Host opens the live sources of this host: kernel (sock_diag and SMC
// netlink), sysfs and procfs at the given roots, and the SMC tracepoints
// in a private tracefs instance when tracefs is writable (root).
func Host(sysfs, procfs, tracefs string) Options {
	o := Options{SysfsRoot: sysfs, ProcRoot: procfs, Addrs: interfaceAddrs}
	k, err := DialKernel()
	o.Kernel, o.KernelErr = k, err
	if tracefs != "" {
		t, err := StartTracer(tracefs, fmt.Sprintf("smcscope-%d", os.Getpid()))
		o.Tracer, o.TracerErr = t, err
	}
	return o
}
