package tsharkdiff

import (
	"fmt"
	"slices"
	"strings"
)

// mapping pairs one datum as smcdump names it with the tshark field(s) that
// carry it. Values of several fields on one side are concatenated in order:
// tshark spreads one datum over per-message names (smc.accept.server.rmb.rkey
// in an Accept, smc.confirm.client.rmb.rkey in a Confirm), and only one of
// them is present in a frame.
type mapping struct {
	layer  string // group for the coverage check: BTH, RETH, AETH, DETH, ImmDt, IETH, CLC, CDC, TCP, LLC
	ours   []string
	theirs []string
	kind   valKind
	// conv turns a normalised tshark value into smcdump's unit (tshark shows
	// the raw 4-bit RMBE size code, smcdump the size in bytes).
	conv func(string) (string, error)
	// derive, when set, computes tshark's side from the whole frame row
	// instead of concatenating theirs; note records that a known tshark
	// quirk was worked around in this frame (see wantQuirks).
	derive func(row fieldRow, note func(quirk string)) []string
}

// The mappings. Field names on the tshark side are those of Wireshark 4.0
// (tshark -G fields); smcdump's are from its catalogue (smcdump -G fields).
// Fields that only one tool decodes are left out: BTH FECN/BECN (tshark 4.0
// has no such fields), GRH (no capture here carries RoCEv1), atomic ETHs
// (smcdump does not decode them), and v1-only CLC areas tshark shows as
// flags without their own name.
var mappings = []mapping{
	// InfiniBand Base Transport Header (IBA 9.2).
	{layer: "BTH", ours: []string{"roce.bth.opcode"}, theirs: []string{"infiniband.bth.opcode"}, kind: vUint},
	{layer: "BTH", ours: []string{"roce.bth.se"}, theirs: []string{"infiniband.bth.se"}, kind: vBool},
	{layer: "BTH", ours: []string{"roce.bth.m"}, theirs: []string{"infiniband.bth.m"}, kind: vBool},
	{layer: "BTH", ours: []string{"roce.bth.padcnt"}, theirs: []string{"infiniband.bth.padcnt"}, kind: vUint},
	{layer: "BTH", ours: []string{"roce.bth.tver"}, theirs: []string{"infiniband.bth.tver"}, kind: vUint},
	{layer: "BTH", ours: []string{"roce.bth.pkey"}, theirs: []string{"infiniband.bth.p_key"}, kind: vUint},
	{layer: "BTH", ours: []string{"roce.bth.dqpn"}, theirs: []string{"infiniband.bth.destqp"}, kind: vUint},
	{layer: "BTH", ours: []string{"roce.bth.ackreq"}, theirs: []string{"infiniband.bth.a"}, kind: vBool},
	{layer: "BTH", ours: []string{"roce.bth.psn"}, theirs: []string{"infiniband.bth.psn"}, kind: vUint},
	// RETH, AETH, DETH, ImmDt, IETH.
	{layer: "RETH", ours: []string{"roce.reth.va"}, theirs: []string{"infiniband.reth.va"}, kind: vUint},
	{layer: "RETH", ours: []string{"roce.reth.rkey"}, theirs: []string{"infiniband.reth.r_key"}, kind: vUint},
	{layer: "RETH", ours: []string{"roce.reth.len"}, theirs: []string{"infiniband.reth.dmalen"}, kind: vUint},
	{layer: "AETH", ours: []string{"roce.aeth.syndrome"}, theirs: []string{"infiniband.aeth.syndrome"}, kind: vUint},
	{layer: "AETH", ours: []string{"roce.aeth.type"}, theirs: []string{"infiniband.aeth.syndrome.opcode"}, kind: vUint},
	{layer: "AETH", ours: []string{"roce.aeth.code"}, kind: vUint, theirs: []string{
		"infiniband.aeth.syndrome.credit_count", "infiniband.aeth.syndrome.timer", "infiniband.aeth.syndrome.error_code"}},
	{layer: "AETH", ours: []string{"roce.aeth.msn"}, theirs: []string{"infiniband.aeth.msn"}, kind: vUint},
	{layer: "DETH", ours: []string{"roce.deth.qkey"}, theirs: []string{"infiniband.deth.q_key"}, kind: vUint},
	{layer: "DETH", ours: []string{"roce.deth.srcqp"}, theirs: []string{"infiniband.deth.srcqp"}, kind: vUint},
	// tshark 4.0 gives the ImmDt header item and the value inside it the
	// same name (infiniband.immdt, both 4 bytes), so every value comes twice.
	{layer: "ImmDt", ours: []string{"roce.immdt"}, theirs: []string{"infiniband.immdt"}, kind: vUintBytes,
		derive: dedupPairs("infiniband.immdt", "immdt-named-twice")},
	{layer: "IETH", ours: []string{"roce.ieth.rkey"}, theirs: []string{"infiniband.ieth"}, kind: vUintBytes,
		derive: dedupPairs("infiniband.ieth", "ieth-named-twice")},

	// TCP SMC option. tshark 4.0 reads the RFC 6994 ExID as 16 bits
	// (0xe2d4, "Shared Memory communications over RMDA protocol") and the
	// other half of the 32-bit SMC ExID 0xE2D4C3D9 as data (c3d9), so
	// tshark's side is derived from both; smcdump reports 0 on a SYN
	// without the option (the fallback evidence).
	{layer: "TCP", ours: []string{"tcp.smc_option"}, kind: vBool,
		theirs: []string{"tcp.flags.syn", "tcp.options.experimental.exid", "tcp.options.experimental.data"},
		derive: deriveSMCOption},

	// CLC header (struct smc_clc_msg_hdr). tshark reuses smc.proposal.smc.version
	// for the version of Accept and Confirm.
	{layer: "CLC", ours: []string{"smc.clc.type"}, theirs: []string{"smc.clc_msg"}, kind: vUint},
	// smc.length also names the CDC length byte (44), so only CLC frames count.
	{layer: "CLC", ours: []string{"smc.clc.length"}, theirs: []string{"smc.clc_msg", "smc.length"}, kind: vUint,
		derive: func(row fieldRow, _ func(string)) []string {
			if len(row["smc.clc_msg"]) == 0 {
				return nil
			}
			return row["smc.length"]
		}},
	{layer: "CLC", ours: []string{"smc.clc.version"}, theirs: []string{"smc.proposal.smc.version", "smc.decline.smc.version"}, kind: vUint},
	// Proposal.
	{layer: "CLC", ours: []string{"smc.clc.proposal.release"}, theirs: []string{"smc.proposal.smc.version.relnum"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.seid_present"}, theirs: []string{"smc.proposal.smc.seid"}, kind: vBool},
	{layer: "CLC", ours: []string{"smc.clc.proposal.eid_count"}, theirs: []string{"smc.proposal.eid.count"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ism_gid_count"}, theirs: []string{"smc.proposal.ismv2_gid_count"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.v2_ext_offset"}, theirs: []string{"smc.proposal.smcv2_ext_offset"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.smcd_v2_ext_offset"}, theirs: []string{"smc.proposal.smcdv2_ext_offset"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.rocev2_gid"}, theirs: []string{"smc.proposal.rocev2.gid.ipv4", "smc.proposal.rocev2.gid.ipv6"}, kind: vAddr},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ipv4_prefix"}, theirs: []string{"smc.outgoing.interface.subnet.mask"}, kind: vAddr},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ipv4_prefix_len"}, theirs: []string{"smc.outgoing.interface.subnet.mask.number.of.significant.bits"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ipv6_prefix_count"}, theirs: []string{"smc.proposal.ipv6.prefix.count"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ipv6_prefix"}, theirs: []string{"smc.proposal.ipv6.prefix.value"}, kind: vAddr},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ipv6_prefix_len"}, theirs: []string{"smc.proposal.ipv6.prefix.length"}, kind: vUint},
	// Fields shared by Proposal, Accept, Confirm (and Decline for the peer ID).
	{layer: "CLC", ours: []string{"smc.clc.peer_id"}, kind: vU64Bytes, theirs: []string{
		"smc.proposal.sender.client.peer.id", "smc.accept.sender.server.peer.id", "smc.confirm.sender.client.peer.id", "smc.sender.peer.id"}},
	{layer: "CLC", ours: []string{"smc.clc.gid"}, kind: vAddr, theirs: []string{
		"smc.proposal.client.preferred.gid", "smc.accept.server.preferred.gid", "smc.client.gid"}},
	{layer: "CLC", ours: []string{"smc.clc.mac"}, kind: vMAC, theirs: []string{
		"smc.proposal.client.preferred.mac", "smc.accept.server.preferred.mac", "smc.confirm.client.mac"}},
	{layer: "CLC", ours: []string{"smc.clc.eid"}, theirs: []string{"smc.proposal.eid", "smc.accept.eid", "smc.confirm.eid"}, kind: vText},
	// SMC-D (struct smc_clc_msg_smcd, smc_clc_v2_extension's GID/CHID list and the
	// Accept/Confirm's smcd area, net/smc/smc_clc.h). A Proposal's native ISM GID and
	// CHID come first, then one entry per SMC-Dv2 GID (an Emulated-ISM device, the
	// DIBS loopback, takes two: GID and its extension, each with the CHID); tshark
	// names them alike.
	{layer: "CLC", ours: []string{"smc.clc.proposal.ism_gid", "smc.clc.proposal.smcd_gid"}, theirs: []string{"smc.proposal.ism.gid"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.proposal.ism_chid", "smc.clc.proposal.smcd_chid"}, theirs: []string{"smc.proposal.smc.chid"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.smcd.gid"}, theirs: []string{"smc.accept.sender.server.ism.gid", "smc.confirm.sender.client.ism.gid"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.smcd.dmb_token"}, theirs: []string{"smc.accept.dmb.token", "smc.confirm.dmb.token"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.smcd.dmbe_idx"}, theirs: []string{"smc.accept.dmbe.conn.index", "smc.confirm.dmbe.conn.index"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.smcd.dmbe_size"}, theirs: []string{"smc.accept.dmbe.buffer.size", "smc.confirm.dmbe.buffer.size"}, kind: vUint, conv: rmbeSize},
	// The link-group ID: smcdump keeps the 4 bytes in the sender's host order
	// (memcpy of lgr->id), tshark reads them as a big-endian number.
	{layer: "CLC", ours: []string{"smc.clc.smcd.link_id"}, theirs: []string{"smc.accept.server.linkid", "smc.confirm.client.linkid"}, kind: vU64Bytes},
	{layer: "CLC", ours: []string{"smc.clc.smcd.chid"}, theirs: []string{"smc.accept.smc.chid", "smc.confirm.smc.chid"}, kind: vUint},
	// Accept and Confirm (SMC-R).
	// tshark files the first-contact flag of a v2 Accept under
	// smc.proposal.first.contact.
	{layer: "CLC", ours: []string{"smc.clc.first_contact"}, kind: vBool, theirs: []string{
		"smc.proposal.first.contact", "smc.accept.first.contact", "smc.confirm.first.contact"}},
	{layer: "CLC", ours: []string{"smc.clc.qpn"}, theirs: []string{"smc.accept.server.qp.number", "smc.confirm.client.qp.number"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.rkey"}, theirs: []string{"smc.accept.server.rmb.rkey", "smc.confirm.client.rmb.rkey"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.rmbe_idx"}, theirs: []string{"smc.accept.server.tcp.conn.index", "smc.confirm.client.tcp.conn.index"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.alert_token"}, theirs: []string{"smc.accept.server.rmb.element.alert.token", "smc.client.rmb.element.alert.token"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.rmbe_size"}, theirs: []string{"smc.accept.rmb.buffer.size", "smc.confirm.rmb.buffer.size"}, kind: vUint, conv: rmbeSize},
	{layer: "CLC", ours: []string{"smc.clc.mtu"}, theirs: []string{"smc.accept.qp.mtu.value", "smc.confirm.qp.mtu.value"}, kind: vUint, conv: mtuBytes},
	{layer: "CLC", ours: []string{"smc.clc.rmb_va"}, theirs: []string{"smc.accept.server.rmb.virtual.address", "smc.client.rmb.virtual.address"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.psn"}, theirs: []string{"smc.accept.initial.psn", "smc.initial.psn"}, kind: vUint},
	// First Contact Extension (v2).
	{layer: "CLC", ours: []string{"smc.clc.fce.direct"}, theirs: []string{"smc.accept.v2_lg.type"}, kind: vBool},
	{layer: "CLC", ours: []string{"smc.clc.fce.os_type"}, theirs: []string{"smc.accept.os.type", "smc.confirm.os.type"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.fce.release"}, theirs: []string{"smc.accept.smc.version.relnum", "smc.confirm.smc.version.relnum"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.fce.hostname"}, theirs: []string{"smc.accept.peer.host.name", "smc.confirm.peer.host.name"}, kind: vText},
	{layer: "CLC", ours: []string{"smc.clc.gid_count"}, theirs: []string{"smc.confirm.gid.list.entry_count"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.gid_list"}, theirs: []string{"smc.confirm.gid.list.entry"}, kind: vAddr},
	// SMC v2.1 (struct smc_clc_first_contact_ext_v2x): tshark 4.0 predates v2.1 and shows
	// the max_conns, max_links and feature_mask bytes of Proposal, Accept
	// and Confirm as "Reserved". They are compared with the bytes of the
	// 16-byte smc.reserved occurrence that holds them (the last one that
	// long in the frame), counted as quirk "fce-v2.1-reserved".
	{layer: "CLC", ours: []string{"smc.clc.proposal.max_conns", "smc.clc.fce.max_conns"}, kind: vUint,
		theirs: v21Fields, derive: deriveV21(0, 1)},
	{layer: "CLC", ours: []string{"smc.clc.proposal.max_links", "smc.clc.fce.max_links"}, kind: vUint,
		theirs: v21Fields, derive: deriveV21(1, 1)},
	{layer: "CLC", ours: []string{"smc.clc.proposal.feature_mask", "smc.clc.fce.feature_mask"}, kind: vUint,
		theirs: v21Fields, derive: deriveV21(2, 2)},
	// Decline.
	// A v2 Decline's four extra diagnosis slots carry the same tshark name
	// as the peer diagnosis.
	{layer: "CLC", ours: []string{"smc.clc.decline.reason", "smc.clc.decline.extra_diag"}, theirs: []string{"smc.peer.diag.info"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.decline.os_type"}, theirs: []string{"smc.decline.os.type"}, kind: vUint},
	{layer: "CLC", ours: []string{"smc.clc.out_of_sync"}, theirs: []string{"smc.decline.osync"}, kind: vBool},

	// CDC (struct smc_cdc_msg). tshark 4.0 names the producer and the
	// consumer cursor alike (smc.rmbe.ctrl.prod.wrap.seq twice, then
	// smc.rmbe.ctrl.peer.prod.curs twice), so both of ours are concatenated.
	{layer: "CDC", ours: []string{"smc.cdc.seq"}, theirs: []string{"smc.rmbe.ctrl.seqno"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.token"}, theirs: []string{"smc.rmbe.ctrl.alert.token"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.prod.wrap", "smc.cdc.cons.wrap"}, theirs: []string{"smc.rmbe.ctrl.prod.wrap.seq"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.prod.count", "smc.cdc.cons.count"}, theirs: []string{"smc.rmbe.ctrl.peer.prod.curs"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.prod_flags"}, theirs: []string{"smc.rmbe.ctrl.conn.rw.status.flags"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.conn_flags"}, theirs: []string{"smc.rmbe.ctrl.peer.conn.state.flags"}, kind: vUint},
	{layer: "CDC", ours: []string{"smc.cdc.flags.write_blocked"}, theirs: []string{"smc.rmbe.ctrl.write.blocked"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.urgent_pending"}, theirs: []string{"smc.rmbe.ctrl.urgent.pending"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.urgent_present"}, theirs: []string{"smc.rmbe.ctrl.urgent.present"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.cons_update_req"}, theirs: []string{"smc.rmbe.ctrl.cons.update.requested"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.failover_validation"}, theirs: []string{"smc.rmbe.ctrl.failover.validation"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.peer_done_writing"}, theirs: []string{"smc.rmbe.ctrl.peer.sending.done"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.peer_conn_closed"}, theirs: []string{"smc.rmbe.ctrl.peer.closed.conn"}, kind: vBool},
	{layer: "CDC", ours: []string{"smc.cdc.flags.peer_conn_abort"}, theirs: []string{"smc.rmbe.ctrl.peer.abnormal.close"}, kind: vBool},

	// LLC. Only the message type is compared: no capture here holds an
	// SMC v1 LLC message (the v1 LLC bytes in testdata/vectors are hex, not
	// pcaps), and tshark 4.0 decodes no SMC-Rv2 LLC message at all (see the
	// exceptions).
	{layer: "LLC", ours: []string{"smc.llc.type"}, theirs: []string{"smc.llc_msg"}, kind: vUint},
}

// dedupPairs undoes tshark's naming of a header and its only value alike:
// when field's values come in equal pairs, one of each pair is kept.
func dedupPairs(field, quirk string) func(fieldRow, func(string)) []string {
	return func(row fieldRow, note func(string)) []string {
		v := row[field]
		if len(v)%2 != 0 {
			return v
		}
		out := make([]string, 0, len(v)/2)
		for i := 0; i < len(v); i += 2 {
			if v[i] != v[i+1] {
				return v
			}
			out = append(out, v[i])
		}
		if len(out) > 0 {
			note(quirk)
		}
		return out
	}
}

// deriveSMCOption rebuilds tcp.smc_option from tshark's 16-bit ExID view.
func deriveSMCOption(row fieldRow, note func(string)) []string {
	exids, data := row["tcp.options.experimental.exid"], row["tcp.options.experimental.data"]
	found := false
	for i, e := range exids {
		u, err := parseUint(e)
		if err != nil || u != 0xe2d4 || i >= len(data) {
			continue
		}
		if d := strings.ToLower(strings.ReplaceAll(data[i], ":", "")); strings.HasPrefix(d, "c3d9") {
			found = true
			note("tcp-exid-16bit")
		}
	}
	syn := row["tcp.flags.syn"]
	switch {
	case found:
		return []string{"1"}
	case len(syn) > 0 && (syn[0] == "1" || syn[0] == "True"):
		return []string{"0"}
	}
	return nil
}

// v21Fields are what deriveV21 reads: the Reserved bytes, and the release
// numbers that say whether the sender speaks v2.1 at all.
var v21Fields = []string{"smc.clc_msg", "smc.reserved", "smc.proposal.smcv2.type",
	"smc.proposal.smc.version.relnum", "smc.accept.smc.version.relnum", "smc.confirm.smc.version.relnum"}

// deriveV21 reads n bytes at off of the v2.1 area tshark calls Reserved.
func deriveV21(off, n int) func(fieldRow, func(string)) []string {
	return func(row fieldRow, note func(string)) []string {
		if len(row["smc.clc_msg"]) == 0 {
			return nil
		}
		v21 := false
		for _, f := range v21Fields[3:] {
			for _, r := range row[f] {
				if u, err := parseUint(r); err == nil && u >= 1 {
					v21 = true
				}
			}
		}
		if !v21 {
			return nil
		}
		// In an SMC-D Proposal the v2.1 area is the first 16-byte Reserved; the
		// last is the SMC-Dv2 extension's own reserved bytes (struct
		// smc_clc_smcd_v2_extension), which follow the EIDs.
		smcdProposal := slices.Equal(row["smc.proposal.smcv2.type"], []string{"1"})
		var area string
		for _, r := range row["smc.reserved"] {
			if h := strings.ReplaceAll(r, ":", ""); len(h) == 32 && (area == "" || !smcdProposal) {
				area = h
			}
		}
		if area == "" {
			return nil
		}
		note("fce-v2.1-reserved")
		return []string{fmt.Sprintf("0x%s", area[2*off:2*(off+n)])}
	}
}

// rmbeSize expands the compressed RMBE size: 16 KiB << code (smc_core.c,
// smc_uncompress_bufsize).
func rmbeSize(s string) (string, error) {
	u, err := parseUint(s)
	if err != nil || u > 15 {
		return "", fmt.Errorf("bad RMBE size code %q", s)
	}
	return fmt.Sprint(uint64(16384) << u), nil
}

// mtuBytes expands the IB MTU enum: 1 = 256 ... 5 = 4096 (IBA 9.6.3).
func mtuBytes(s string) (string, error) {
	u, err := parseUint(s)
	if err != nil || u < 1 || u > 5 {
		return "", fmt.Errorf("bad MTU code %q", s)
	}
	return fmt.Sprint(uint64(256) << (u - 1)), nil
}
