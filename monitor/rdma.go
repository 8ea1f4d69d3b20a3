package monitor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/smcscope/smcscope/rdmastats"
	"github.com/smcscope/smcscope/smcnl"
)

// historyLen is how many rates a counter keeps for its sparkline.
const historyLen = 60

// gidMaxAge is how long a refresh may show GID tables read earlier.
const gidMaxAge = 30 * time.Second

// portKey names one port of one device.
type portKey struct {
	dev  string
	port int
}

// rdmaState keeps what rates and sparklines need between refreshes, and
// the GID tables of the last full read.
type rdmaState struct {
	prev     rdmastats.Snapshot
	havePrev bool
	history  map[rdmastats.Key][]float64

	gids      map[portKey][]rdmastats.GIDEntry // nil: read them on the next refresh
	gidsRead  time.Time
	gidsPorts string // the devices, ports and their states when gids were read
}

// read reads every device. The GID tables, most of the files (1024 per rxe
// port, see rdmastats.FS.WithoutGIDs), come from the last full read unless
// it is older than gidMaxAge or a device or port came, went or changed
// state since: addresses, and so GIDs, change with the links under them.
func (st *rdmaState) read(fs rdmastats.FS, now time.Time) ([]rdmastats.Device, error) {
	if st.gids != nil && now.Sub(st.gidsRead) < gidMaxAge {
		devs, err := fs.WithoutGIDs().Devices()
		if err != nil {
			st.gids = nil
			return nil, err
		}
		if portStates(devs) == st.gidsPorts {
			for i := range devs {
				for j := range devs[i].Ports {
					p := &devs[i].Ports[j]
					p.GIDs = st.gids[portKey{devs[i].Name, p.Port}]
				}
			}
			return devs, nil
		}
	}
	devs, err := fs.Devices()
	if err != nil {
		st.gids = nil
		return nil, err
	}
	st.gids = map[portKey][]rdmastats.GIDEntry{}
	for _, d := range devs {
		for _, p := range d.Ports {
			st.gids[portKey{d.Name, p.Port}] = p.GIDs
		}
	}
	st.gidsRead, st.gidsPorts = now, portStates(devs)
	return devs, nil
}

// portStates lists every device's ports with their states, in one string.
func portStates(devs []rdmastats.Device) string {
	var b strings.Builder
	for _, d := range devs {
		b.WriteString(d.Name)
		for _, p := range d.Ports {
			fmt.Fprintf(&b, " %d:%s/%s", p.Port, p.State, p.PhysState)
		}
		b.WriteByte(';')
	}
	return b.String()
}

func sourceName(s rdmastats.Source) string {
	if s == rdmastats.SourcePMA {
		return "pma"
	}
	return "hw"
}

// devices reads every RDMA device and turns counters into rates against
// the previous refresh. smcDevs (SMC_NETLINK_GET_DEV_SMCR) says which
// devices SMC uses and the ports' PNET IDs and link counts; smcKnown says
// it was read (else whether SMC uses a device is not known).
func (st *rdmaState) devices(fs rdmastats.FS, now time.Time, smcDevs []smcnl.Device, smcKnown bool) ([]DeviceRow, error) {
	devs, err := st.read(fs, now)
	if err != nil {
		return nil, err
	}
	snap := rdmastats.SnapshotOf(devs, now)
	rates := map[rdmastats.Key]rdmastats.Rate{}
	if st.havePrev {
		if rs, err := rdmastats.Rates(st.prev, snap, snap.Time.Sub(st.prev.Time)); err == nil {
			for _, r := range rs {
				rates[r.Key] = r
			}
		}
	}
	st.prev, st.havePrev = snap, true
	if st.history == nil {
		st.history = map[rdmastats.Key][]float64{}
	}
	smcByName := map[string]smcnl.Device{}
	for _, d := range smcDevs {
		smcByName[d.IBName] = d
	}
	var out []DeviceRow
	for _, d := range devs {
		row := DeviceRow{Kind: DeviceRDMA, Name: d.Name, Driver: d.Driver, Parent: d.Parent}
		for _, e := range d.Errors {
			row.CounterErrors = append(row.CounterErrors, e.Error())
		}
		sd, used := smcByName[d.Name]
		row.SMC, row.SMCKnown, row.Critical = used, smcKnown || used, sd.Critical
		for _, p := range d.Ports {
			pr := PortRow{Port: p.Port, State: p.State, Active: p.StateID == 4, PhysState: p.PhysState, Rate: p.RateText, NetDevs: p.Netdevs()}
			for _, g := range p.GIDs {
				pr.GIDs = append(pr.GIDs, g.GID.String()+" ("+g.Type.String()+")")
			}
			for _, sp := range sd.Ports {
				if int(sp.Number) == p.Port {
					pr.PNETID, pr.PNETIDByUser, pr.Links = sp.PNETID, sp.PNETIDByUser, sp.LinkCount
				}
			}
			pr.Counters = append(st.counters(d.Name, p.Port, rdmastats.SourcePMA, p.Counters, rates),
				st.counters(d.Name, p.Port, rdmastats.SourceHW, p.HWCounters, rates)...)
			row.Ports = append(row.Ports, pr)
		}
		if len(d.HWCounters) > 0 {
			row.Ports = append(row.Ports, PortRow{Port: 0, State: "device", Counters: st.counters(d.Name, 0, rdmastats.SourceHW, d.HWCounters, rates)})
		}
		out = append(out, row)
	}
	return out, nil
}

func (st *rdmaState) counters(dev string, port int, src rdmastats.Source, cs rdmastats.Counters, rates map[rdmastats.Key]rdmastats.Rate) []Counter {
	names := make([]string, 0, len(cs))
	for n := range cs {
		if n == "lifespan" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Counter, 0, len(names))
	for _, n := range names {
		k := rdmastats.Key{Device: dev, Port: port, Source: src, Name: n}
		c := Counter{Name: n, Source: sourceName(src), Value: cs[n], Unit: rdmastats.UnitOf(n)}
		if h := rdmastats.Classify(n); h != rdmastats.HealthNone {
			c.Health = h.String()
		}
		if r, ok := rates[k]; ok {
			c.Delta, c.Rate = r.Delta, r.PerSecond
			c.Moving = c.Health != "" && r.Delta > 0
			h := append(st.history[k], r.PerSecond)
			if len(h) > historyLen {
				h = h[len(h)-historyLen:]
			}
			st.history[k] = h
			c.History = append([]float64(nil), h...)
		}
		out = append(out, c)
	}
	return out
}

func trimNL(b []byte) string { return strings.TrimSpace(string(b)) }
