package smcnl

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// The Write* functions print the kernel state this package parses as
// stable "key=value" lines, one object per line, for people and for
// scripts that grep them (the lab's verification does). Keys never change
// meaning; new keys are appended. Free-form strings are always quoted;
// numbers, enum names, addresses and cursors never are.

// kv accumulates one line.
type kv struct {
	b []byte
}

func (l *kv) word(w string) *kv {
	l.sep()
	l.b = append(l.b, w...)
	return l
}

func (l *kv) sep() {
	if len(l.b) > 0 {
		l.b = append(l.b, ' ')
	}
}

func (l *kv) u(k string, v uint64) *kv {
	l.sep()
	l.b = append(l.b, k...)
	l.b = append(l.b, '=')
	l.b = strconv.AppendUint(l.b, v, 10)
	return l
}

func (l *kv) x(k string, v uint64, width int) *kv {
	l.sep()
	l.b = fmt.Appendf(l.b, "%s=0x%0*x", k, width, v)
	return l
}

func (l *kv) s(k, v string) *kv {
	l.sep()
	l.b = append(l.b, k...)
	l.b = append(l.b, '=')
	l.b = strconv.AppendQuote(l.b, v)
	return l
}

func (l *kv) v(k string, v fmt.Stringer) *kv {
	l.sep()
	l.b = append(l.b, k...)
	l.b = append(l.b, '=')
	l.b = append(l.b, v.String()...)
	return l
}

func (l *kv) bool(k string, v bool) *kv {
	var n uint64
	if v {
		n = 1
	}
	return l.u(k, n)
}

func (l *kv) flush(w *bufio.Writer) {
	l.b = append(l.b, '\n')
	_, _ = w.Write(l.b)
	l.b = l.b[:0]
}

// WriteSockets prints one "socket ..." line per socket and a final
// "sockets=N".
func WriteSockets(w io.Writer, ss []Socket) error {
	bw := bufio.NewWriter(w)
	var l kv
	for _, s := range ss {
		l.word("socket").v("state", s.State).v("mode", s.Mode).u("family", uint64(s.Family)).
			u("shutdown", uint64(s.Shutdown)).v("src", s.Src).v("dst", s.Dst).
			u("ifindex", uint64(s.IfIndex)).x("cookie", s.Cookie, 1).u("uid", uint64(s.UID)).
			u("inode", s.Inode).x("fallback", uint64(s.FallbackReason), 8).
			x("peer_diag", uint64(s.PeerDiagnosis), 8)
		if c := s.Conn; c != nil {
			l.x("token", uint64(c.Token), 1).u("sndbuf", uint64(c.SndBufSize)).u("rmbe", uint64(c.RMBESize)).
				u("peer_rmbe", uint64(c.PeerRMBESize)).v("rx_prod", c.RxProd).v("rx_cons", c.RxCons).
				v("tx_prod", c.TxProd).v("tx_cons", c.TxCons).
				x("rx_prod_flags", uint64(c.RxProdFlags), 2).x("rx_conn_flags", uint64(c.RxConnStateFlags), 2).
				x("tx_prod_flags", uint64(c.TxProdFlags), 2).x("tx_conn_flags", uint64(c.TxConnStateFlags), 2).
				v("tx_prep", c.TxPrep).v("tx_sent", c.TxSent).v("tx_fin", c.TxFin)
		}
		if g := s.LGR; g != nil {
			l.v("role", g.Role).u("link_id", uint64(g.LinkID)).s("ib_dev", g.IBDev).u("ib_port", uint64(g.IBPort)).
				s("gid", g.GID).s("peer_gid", g.PeerGID)
		}
		if d := s.DMB; d != nil {
			l.u("dmb_link_id", uint64(d.LinkID)).x("dmb_gid", d.MyGID, 16).x("dmb_peer_gid", d.PeerGID, 16).
				x("dmb_token", d.Token, 16).x("dmb_peer_token", d.PeerToken, 16)
		}
		l.flush(bw)
	}
	l.u("sockets", uint64(len(ss))).flush(bw)
	return bw.Flush()
}

// WriteLinkGroups prints one "lgr ..." line per SMC-R link group followed
// by one "link ..." line per link, then "lgr_smcd ..." lines, and a final
// "lgrs=N lgrs_smcd=M".
func WriteLinkGroups(w io.Writer, rs []LinkGroupR, ds []LinkGroupD) error {
	bw := bufio.NewWriter(w)
	var l kv
	for _, g := range rs {
		l.word("lgr").x("id", uint64(g.ID), 1).v("role", g.Role).v("type", g.Type).s("pnetid", g.PNETID).
			u("vlan", uint64(g.VLANID)).u("conns", uint64(g.Conns)).x("net_cookie", g.NetCookie, 1).
			u("buf_type", uint64(g.BufType)).u("sndbuf_alloc", g.SndBufAlloc).u("rmb_alloc", g.RMBAlloc)
		writeV2Common(&l, g.V2Common)
		if v := g.V2; v != nil {
			l.bool("direct", v.Direct).u("max_conns", uint64(v.MaxConns)).u("max_links", uint64(v.MaxLinks))
		}
		l.u("links", uint64(len(g.Links))).flush(bw)
		for _, k := range g.Links {
			l.word("link").x("lgr", uint64(g.ID), 1).u("id", uint64(k.ID)).v("state", k.State).
				s("ib_dev", k.IBDev).u("ib_port", uint64(k.IBPort)).u("netdev", uint64(k.NetDev)).
				u("conns", uint64(k.ConnCount)).x("uid", uint64(k.UID), 8).x("peer_uid", uint64(k.PeerUID), 8).
				s("gid", k.GID).s("peer_gid", k.PeerGID).flush(bw)
		}
	}
	for _, g := range ds {
		l.word("lgr_smcd").x("id", uint64(g.ID), 1).x("gid", g.GID, 16).x("peer_gid", g.PeerGID, 16).
			u("vlan", uint64(g.VLANID)).u("conns", uint64(g.Conns)).s("pnetid", g.PNETID).
			u("chid", uint64(g.CHID)).u("sndbuf_alloc", g.SndBufAlloc).u("dmb_alloc", g.DMBAlloc)
		writeV2Common(&l, g.V2Common)
		l.flush(bw)
	}
	l.u("lgrs", uint64(len(rs))).u("lgrs_smcd", uint64(len(ds))).flush(bw)
	return bw.Flush()
}

func writeV2Common(l *kv, v *V2Common) {
	if v == nil {
		return
	}
	l.u("v2_ver", uint64(v.Version)).u("v2_rel", uint64(v.Release)).u("peer_os", uint64(v.PeerOS)).
		s("neg_eid", v.NegotiatedEID).s("peer_host", v.PeerHost)
}

// WriteDevices prints one "dev ..." line per device; kind is "smcr" or "smcd".
func WriteDevices(w io.Writer, kind string, ds []Device) error {
	bw := bufio.NewWriter(w)
	var l kv
	for _, d := range ds {
		l.word("dev").word("kind="+kind).s("ib_name", d.IBName).u("use_cnt", uint64(d.UseCount)).
			bool("crit", d.Critical).s("pci_id", d.PCIID).x("pci_vendor", uint64(d.PCIVendor), 4).
			x("pci_device", uint64(d.PCIDevice), 4).u("pci_fid", uint64(d.PCIFID)).u("pci_chid", uint64(d.PCICHID))
		for _, p := range d.Ports {
			pre := "port" + strconv.Itoa(int(p.Number)) + "_"
			l.u(pre+"netdev", uint64(p.NetDev)).bool(pre+"active", p.Active).bool(pre+"valid", p.Valid).
				s(pre+"pnetid", p.PNETID).bool(pre+"pnet_usr", p.PNETIDByUser).u(pre+"links", uint64(p.LinkCount))
		}
		l.flush(bw)
	}
	return bw.Flush()
}

// WriteStats prints one "key=value" line per counter, zeros included, so a
// script can diff two snapshots line by line.
func WriteStats(w io.Writer, s Stats) error {
	bw := bufio.NewWriter(w)
	var l kv
	for _, tt := range []struct {
		name string
		t    *TechStats
	}{{"smcr", &s.SMCR}, {"smcd", &s.SMCD}} {
		t, p := tt.t, tt.name+"."
		for _, h := range []struct {
			name string
			h    *Histogram
		}{{"tx_rmb_size", &t.TxRMBSize}, {"rx_rmb_size", &t.RxRMBSize}, {"tx_pload_size", &t.TxPayloadSize}, {"rx_pload_size", &t.RxPayloadSize}} {
			for i, v := range h.h {
				l.u(p+h.name+"."+HistogramLabels[i], v).flush(bw)
			}
		}
		for _, r := range []struct {
			name string
			r    *RMBStats
		}{{"tx_rmb_stats", &t.TxRMBStats}, {"rx_rmb_stats", &t.RxRMBStats}} {
			q := p + r.name + "."
			for _, c := range []struct {
				k string
				v uint64
			}{{"buf_size_small_peer", r.r.SizeSmallPeer}, {"buf_size_small", r.r.SizeSmall}, {"buf_full_peer", r.r.FullPeer},
				{"buf_full", r.r.Full}, {"reuse", r.r.Reuse}, {"alloc", r.r.Alloc}, {"dgrade", r.r.Downgrade}} {
				l.u(q+c.k, c.v).flush(bw)
			}
		}
		for _, c := range []struct {
			k string
			v uint64
		}{{"clnt_v1_succ", t.ClientV1Succ}, {"clnt_v2_succ", t.ClientV2Succ}, {"srv_v1_succ", t.ServerV1Succ},
			{"srv_v2_succ", t.ServerV2Succ}, {"sendpage", t.SendpageCount}, {"splice", t.SpliceCount},
			{"cork", t.CorkCount}, {"nodelay", t.NodelayCount}, {"urg_data", t.UrgDataCount},
			{"rx_bytes", t.RxBytes}, {"tx_bytes", t.TxBytes}, {"rx_cnt", t.RxCount}, {"tx_cnt", t.TxCount},
			{"rx_rmb_usage", t.RxRMBUsage}, {"tx_rmb_usage", t.TxRMBUsage}} {
			l.u(p+c.k, c.v).flush(bw)
		}
	}
	l.u("clnt_hs_err", s.ClientHSErrCount).flush(bw)
	l.u("srv_hs_err", s.ServerHSErrCount).flush(bw)
	return bw.Flush()
}

// WriteFallbackStats prints "fallback_total server=N client=M" and one
// "fallback side=... code=0x... count=N" line per reason.
func WriteFallbackStats(w io.Writer, f FallbackStats) error {
	bw := bufio.NewWriter(w)
	var l kv
	l.word("fallback_total").u("server", f.ServerTotal).u("client", f.ClientTotal).flush(bw)
	for _, side := range []struct {
		name string
		rs   []FallbackReason
	}{{"server", f.Server}, {"client", f.Client}} {
		for _, r := range side.rs {
			l.word("fallback").word("side="+side.name).x("code", uint64(r.Code), 8).u("count", uint64(r.Count)).flush(bw)
		}
	}
	return bw.Flush()
}

// WriteSysInfo prints one "sysinfo ..." line and one "ueid=..." line per
// user EID.
func WriteSysInfo(w io.Writer, s SysInfo, ueids []string) error {
	bw := bufio.NewWriter(w)
	var l kv
	l.word("sysinfo").u("ver", uint64(s.Version)).u("rel", uint64(s.Release)).bool("ism_v2", s.ISMv2).
		bool("smcr_v2", s.SMCRv2).s("local_host", s.LocalHost).s("seid", s.SEID).u("ueids", uint64(len(ueids))).flush(bw)
	for _, u := range ueids {
		l.s("ueid", u).flush(bw)
	}
	return bw.Flush()
}
