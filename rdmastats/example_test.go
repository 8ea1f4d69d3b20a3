package rdmastats_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/smcscope/smcscope/rdmastats"
)

func ExampleFS_Devices() {
	devs, err := rdmastats.NewFS("testdata/sys").Devices()
	if errors.Is(err, rdmastats.ErrNoDevices) {
		fmt.Println("no RDMA devices")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			fmt.Printf("%s/%d %s %s %s netdevs=%v\n", d.Name, p.Port, p.State, p.LinkLayer, p.RateText, p.Netdevs())
			for _, g := range p.GIDs {
				fmt.Printf("  gid[%d] %s %s\n", g.Index, g.GID.Addr(), g.Type)
			}
		}
	}
	// Output:
	// mlx5_0/1 ACTIVE Ethernet 25 Gb/sec (1X EDR) netdevs=[enp59s0f0]
	//   gid[0] fe80::ba59:9fff:fed9:6c1e RoCE v1
	//   gid[1] fe80::ba59:9fff:fed9:6c1e RoCE v2
	//   gid[2] ::ffff:192.168.10.11 RoCE v1
	//   gid[3] ::ffff:192.168.10.11 RoCE v2
	// rxe0/1 ACTIVE Ethernet 2.5 Gb/sec (1X SDR) netdevs=[eth0]
	//   gid[0] fe80::5054:ff:fe0a:2 RoCE v2
	//   gid[1] ::ffff:10.10.0.2 RoCE v2
}

func ExampleRates() {
	key := rdmastats.Key{Device: "rxe0", Port: 1, Source: rdmastats.SourceHW}
	at := func(k rdmastats.Key, name string) rdmastats.Key { k.Name = name; return k }
	prev := rdmastats.Snapshot{Values: map[rdmastats.Key]uint64{
		at(key, "rdma_sends"):          516,
		at(key, "completer_retry_err"): 0,
		at(key, "rcvd_seq_err"):        9,
	}}
	cur := rdmastats.Snapshot{Values: map[rdmastats.Key]uint64{
		at(key, "rdma_sends"):          1016,
		at(key, "completer_retry_err"): 3,
		at(key, "rcvd_seq_err"):        1, // went backwards: device re-created
		at(key, "send_err"):            0, // not in prev: no rate yet
	}}
	rates, _ := rdmastats.Rates(prev, cur, 10*time.Second)
	for _, r := range rates {
		fmt.Printf("%-20s %-6s %6.1f/s health=%s unhealthy=%v\n", r.Name, r.Status, r.PerSecond, r.Health(), r.Unhealthy())
	}
	// Output:
	// completer_retry_err  ok        0.3/s health=retransmit unhealthy=true
	// rcvd_seq_err         reset     0.1/s health=retransmit unhealthy=true
	// rdma_sends           ok       50.0/s health=none unhealthy=false
	// send_err             absent    0.0/s health=error unhealthy=false
}

// ExampleFS_PortForNetdev joins an SMC-R link, which names its netdev, to
// the RNIC port whose counters to show.
func ExampleFS_PortForNetdev() {
	fsys := rdmastats.NewFS("testdata/sys")
	dev, port, err := fsys.PortForNetdev("eth0")
	if err != nil {
		fmt.Println(err)
		return
	}
	d, _ := fsys.Device(dev)
	p, _ := d.Port(port)
	sends, _ := p.HWCounters.Get("rdma_sends")
	_, hasPMA := p.Counters.Get("port_xmit_data")
	fmt.Printf("eth0 -> %s/%d rdma_sends=%d pma=%v lifespan=%v\n", dev, port, sends, hasPMA, p.HWLifespan)
	_, _, err = fsys.PortForNetdev("eth9")
	fmt.Println(err)
	// Output:
	// eth0 -> rxe0/1 rdma_sends=516 pma=false lifespan=12ms
	// no RDMA device for netdev "eth9": file does not exist
}
