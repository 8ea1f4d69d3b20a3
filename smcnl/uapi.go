package smcnl

// Numbers from the kernel's include/uapi/linux/smc.h, smc_diag.h and
// sock_diag.h, with the C names kept in comments so grep finds them.
// Layouts: the structs of include/uapi/linux/smc_diag.h and the netlink
// policies of net/smc/smc_netlink.c; quirks: doc.go.

// Generic netlink family.
const (
	familyName    = "SMC_GEN_NETLINK" // SMC_GENL_FAMILY_NAME
	familyVersion = 1                 // SMC_GENL_FAMILY_VERSION
)

// Generic netlink commands (enum SMC_NETLINK_*).
const (
	cmdGetSysInfo        = 1  // SMC_NETLINK_GET_SYS_INFO
	cmdGetLGRSMCR        = 2  // SMC_NETLINK_GET_LGR_SMCR
	cmdGetLinkSMCR       = 3  // SMC_NETLINK_GET_LINK_SMCR
	cmdGetLGRSMCD        = 4  // SMC_NETLINK_GET_LGR_SMCD
	cmdGetDevSMCD        = 5  // SMC_NETLINK_GET_DEV_SMCD
	cmdGetDevSMCR        = 6  // SMC_NETLINK_GET_DEV_SMCR
	cmdGetStats          = 7  // SMC_NETLINK_GET_STATS
	cmdGetFallbackStats  = 8  // SMC_NETLINK_GET_FBACK_STATS
	cmdDumpUEID          = 9  // SMC_NETLINK_DUMP_UEID
	cmdAddUEID           = 10 // SMC_NETLINK_ADD_UEID
	cmdRemoveUEID        = 11 // SMC_NETLINK_REMOVE_UEID
	cmdFlushUEID         = 12 // SMC_NETLINK_FLUSH_UEID
	cmdDumpSEID          = 13 // SMC_NETLINK_DUMP_SEID
	cmdDumpHSLimitation  = 16 // SMC_NETLINK_DUMP_HS_LIMITATION
	cmdEnableHSLimit     = 17 // SMC_NETLINK_ENABLE_HS_LIMITATION
	cmdDisableHSLimit    = 18 // SMC_NETLINK_DISABLE_HS_LIMITATION
	maxEIDLen            = 32 // SMC_MAX_EID_LEN
	ueidAttrLen          = maxEIDLen + 1
	ibDeviceNameMax      = 64 // IB_DEVICE_NAME_MAX
	diagGIDLen           = 40 // smc_diag_linkinfo.gid[40]
	smcDiagReqLen        = 52 // sizeof(struct smc_diag_req)
	smcDiagMsgLen        = 64 // sizeof(struct smc_diag_msg)
	smcDiagConnInfoLen   = 76 // sizeof(struct smc_diag_conninfo)
	smcDiagLGRInfoLen    = 147
	smcDiagDMBInfoLen    = 56 // sizeof(struct smcd_diag_dmbinfo) since the GID extension
	smcDiagDMBInfoOldLen = 40 // before the GID extension (6.9)
	smcDiagFallbackLen   = 8  // sizeof(struct smc_diag_fallback)
)

// Top-level attributes of every reply (enum SMC_GEN_*).
const (
	genSysInfo  = 1 // SMC_GEN_SYS_INFO
	genLGRSMCR  = 2 // SMC_GEN_LGR_SMCR
	genLinkSMCR = 3 // SMC_GEN_LINK_SMCR
	genLGRSMCD  = 4 // SMC_GEN_LGR_SMCD
	genDevSMCD  = 5 // SMC_GEN_DEV_SMCD
	genDevSMCR  = 6 // SMC_GEN_DEV_SMCR
	genStats    = 7 // SMC_GEN_STATS
	genFbStats  = 8 // SMC_GEN_FBACK_STATS
)

// SYS_INFO nest (enum SMC_NLA_SYS_*).
const (
	sysVer       = 1 // SMC_NLA_SYS_VER u8
	sysRel       = 2 // SMC_NLA_SYS_REL u8
	sysIsISMV2   = 3 // SMC_NLA_SYS_IS_ISM_V2 u8
	sysLocalHost = 4 // SMC_NLA_SYS_LOCAL_HOST string
	sysSEID      = 5 // SMC_NLA_SYS_SEID string
	sysIsSMCRV2  = 6 // SMC_NLA_SYS_IS_SMCR_V2 u8
)

// EID tables (enum SMC_NLA_EID_TABLE_*, SMC_NLA_SEID_*, SMC_NLA_HS_LIMITATION_*).
const (
	eidTableEntry  = 1 // SMC_NLA_EID_TABLE_ENTRY string
	seidEntry      = 1 // SMC_NLA_SEID_ENTRY string
	seidEnabled    = 2 // SMC_NLA_SEID_ENABLED u8
	hsLimitEnabled = 1 // SMC_NLA_HS_LIMITATION_ENABLED u8
)

// LGR_SMCR nest (enum SMC_NLA_LGR_R_*).
const (
	lgrRID          = 1  // SMC_NLA_LGR_R_ID u32
	lgrRRole        = 2  // SMC_NLA_LGR_R_ROLE u8
	lgrRType        = 3  // SMC_NLA_LGR_R_TYPE u8
	lgrRPNETID      = 4  // SMC_NLA_LGR_R_PNETID string
	lgrRVLANID      = 5  // SMC_NLA_LGR_R_VLAN_ID u8
	lgrRConnsNum    = 6  // SMC_NLA_LGR_R_CONNS_NUM u32
	lgrRV2Common    = 7  // SMC_NLA_LGR_R_V2_COMMON nest
	lgrRV2          = 8  // SMC_NLA_LGR_R_V2 nest
	lgrRNetCookie   = 9  // SMC_NLA_LGR_R_NET_COOKIE u64
	lgrRBufType     = 11 // SMC_NLA_LGR_R_BUF_TYPE u8
	lgrRSndBufAlloc = 12 // SMC_NLA_LGR_R_SNDBUF_ALLOC uint
	lgrRRMBAlloc    = 13 // SMC_NLA_LGR_R_RMB_ALLOC uint
)

// V2_COMMON nest (enum SMC_NLA_LGR_V2_*). The kernel enum has no UNSPEC, so
// the numbering starts at 0 and VER really is attribute type 0.
const (
	lgrV2Ver      = 0 // SMC_NLA_LGR_V2_VER u8
	lgrV2Rel      = 1 // SMC_NLA_LGR_V2_REL u8
	lgrV2OS       = 2 // SMC_NLA_LGR_V2_OS u8
	lgrV2NegEID   = 3 // SMC_NLA_LGR_V2_NEG_EID string
	lgrV2PeerHost = 4 // SMC_NLA_LGR_V2_PEER_HOST string
)

// LGR_SMCR V2 nest (enum SMC_NLA_LGR_R_V2_*).
const (
	lgrRV2Direct   = 1 // SMC_NLA_LGR_R_V2_DIRECT u8
	lgrRV2MaxConns = 2 // SMC_NLA_LGR_R_V2_MAX_CONNS u8
	lgrRV2MaxLinks = 3 // SMC_NLA_LGR_R_V2_MAX_LINKS u8
)

// LINK_SMCR nest (enum SMC_NLA_LINK_*).
const (
	linkID      = 1  // SMC_NLA_LINK_ID u8
	linkIBDev   = 2  // SMC_NLA_LINK_IB_DEV string
	linkIBPort  = 3  // SMC_NLA_LINK_IB_PORT u8
	linkGID     = 4  // SMC_NLA_LINK_GID string
	linkPeerGID = 5  // SMC_NLA_LINK_PEER_GID string
	linkConnCnt = 6  // SMC_NLA_LINK_CONN_CNT u32
	linkNetDev  = 7  // SMC_NLA_LINK_NET_DEV u32 ifindex
	linkUID     = 8  // SMC_NLA_LINK_UID u32
	linkPeerUID = 9  // SMC_NLA_LINK_PEER_UID u32
	linkState   = 10 // SMC_NLA_LINK_STATE u32
)

// LGR_SMCD nest (enum SMC_NLA_LGR_D_*).
const (
	lgrDID          = 1  // SMC_NLA_LGR_D_ID u32
	lgrDGID         = 2  // SMC_NLA_LGR_D_GID u64
	lgrDPeerGID     = 3  // SMC_NLA_LGR_D_PEER_GID u64
	lgrDVLANID      = 4  // SMC_NLA_LGR_D_VLAN_ID u8
	lgrDConnsNum    = 5  // SMC_NLA_LGR_D_CONNS_NUM u32
	lgrDPNETID      = 6  // SMC_NLA_LGR_D_PNETID string
	lgrDCHID        = 7  // SMC_NLA_LGR_D_CHID u16, sent as u32
	lgrDV2Common    = 9  // SMC_NLA_LGR_D_V2_COMMON nest
	lgrDExtGID      = 10 // SMC_NLA_LGR_D_EXT_GID u64
	lgrDPeerExtGID  = 11 // SMC_NLA_LGR_D_PEER_EXT_GID u64
	lgrDSndBufAlloc = 12 // SMC_NLA_LGR_D_SNDBUF_ALLOC uint
	lgrDDMBAlloc    = 13 // SMC_NLA_LGR_D_DMB_ALLOC uint
)

// DEV_SMCR / DEV_SMCD nest (enum SMC_NLA_DEV_*) and its PORT nests.
const (
	devUseCnt    = 1  // SMC_NLA_DEV_USE_CNT u32
	devIsCrit    = 2  // SMC_NLA_DEV_IS_CRIT u8
	devPCIFID    = 3  // SMC_NLA_DEV_PCI_FID u32
	devPCICHID   = 4  // SMC_NLA_DEV_PCI_CHID u16
	devPCIVendor = 5  // SMC_NLA_DEV_PCI_VENDOR u16
	devPCIDevice = 6  // SMC_NLA_DEV_PCI_DEVICE u16
	devPCIID     = 7  // SMC_NLA_DEV_PCI_ID string
	devPort      = 8  // SMC_NLA_DEV_PORT nest
	devPort2     = 9  // SMC_NLA_DEV_PORT2 nest
	devIBName    = 10 // SMC_NLA_DEV_IB_NAME string

	portPNETUsr = 1 // SMC_NLA_DEV_PORT_PNET_USR u8
	portPNETID  = 2 // SMC_NLA_DEV_PORT_PNETID string
	portNetDev  = 3 // SMC_NLA_DEV_PORT_NETDEV u32
	portState   = 4 // SMC_NLA_DEV_PORT_STATE u8
	portValid   = 5 // SMC_NLA_DEV_PORT_VALID u8
	portLnkCnt  = 6 // SMC_NLA_DEV_PORT_LNK_CNT u32
)

// STATS nest (enum SMC_NLA_STATS_*), per-technology nest
// (SMC_NLA_STATS_T_*), size histograms (SMC_NLA_STATS_PLOAD_*) and RMB
// counters (SMC_NLA_STATS_RMB_*).
const (
	statsSMCDTech     = 1 // SMC_NLA_STATS_SMCD_TECH nest
	statsSMCRTech     = 2 // SMC_NLA_STATS_SMCR_TECH nest
	statsClntHSErrCnt = 3 // SMC_NLA_STATS_CLNT_HS_ERR_CNT u64
	statsSrvHSErrCnt  = 4 // SMC_NLA_STATS_SRV_HS_ERR_CNT u64

	techTxRMBSize    = 1  // SMC_NLA_STATS_T_TX_RMB_SIZE nest
	techRxRMBSize    = 2  // SMC_NLA_STATS_T_RX_RMB_SIZE nest
	techTxPloadSize  = 3  // SMC_NLA_STATS_T_TXPLOAD_SIZE nest
	techRxPloadSize  = 4  // SMC_NLA_STATS_T_RXPLOAD_SIZE nest
	techTxRMBStats   = 5  // SMC_NLA_STATS_T_TX_RMB_STATS nest
	techRxRMBStats   = 6  // SMC_NLA_STATS_T_RX_RMB_STATS nest
	techClntV1Succ   = 7  // SMC_NLA_STATS_T_CLNT_V1_SUCC
	techClntV2Succ   = 8  // SMC_NLA_STATS_T_CLNT_V2_SUCC
	techSrvV1Succ    = 9  // SMC_NLA_STATS_T_SRV_V1_SUCC
	techSrvV2Succ    = 10 // SMC_NLA_STATS_T_SRV_V2_SUCC
	techSendpageCnt  = 11 // SMC_NLA_STATS_T_SENDPAGE_CNT
	techSpliceCnt    = 12 // SMC_NLA_STATS_T_SPLICE_CNT
	techCorkCnt      = 13 // SMC_NLA_STATS_T_CORK_CNT
	techNdlyCnt      = 14 // SMC_NLA_STATS_T_NDLY_CNT
	techUrgDataCnt   = 15 // SMC_NLA_STATS_T_URG_DATA_CNT
	techRxBytes      = 16 // SMC_NLA_STATS_T_RX_BYTES
	techTxBytes      = 17 // SMC_NLA_STATS_T_TX_BYTES
	techRxCnt        = 18 // SMC_NLA_STATS_T_RX_CNT
	techTxCnt        = 19 // SMC_NLA_STATS_T_TX_CNT
	techRxRMBUsage   = 20 // SMC_NLA_STATS_T_RX_RMB_USAGE (6.10+)
	techTxRMBUsage   = 21 // SMC_NLA_STATS_T_TX_RMB_USAGE (6.10+)
	histBuckets      = 9  // SMC_NLA_STATS_PLOAD_8K .. SMC_NLA_STATS_PLOAD_G_1024K
	rmbSizeSmPeerCnt = 1  // SMC_NLA_STATS_RMB_SIZE_SM_PEER_CNT
	rmbSizeSmCnt     = 2  // SMC_NLA_STATS_RMB_SIZE_SM_CNT
	rmbFullPeerCnt   = 3  // SMC_NLA_STATS_RMB_FULL_PEER_CNT
	rmbFullCnt       = 4  // SMC_NLA_STATS_RMB_FULL_CNT
	rmbReuseCnt      = 5  // SMC_NLA_STATS_RMB_REUSE_CNT
	rmbAllocCnt      = 6  // SMC_NLA_STATS_RMB_ALLOC_CNT
	rmbDgradeCnt     = 7  // SMC_NLA_STATS_RMB_DGRADE_CNT
)

// FBACK_STATS nest (enum SMC_NLA_FBACK_STATS_*).
const (
	fbType    = 1 // SMC_NLA_FBACK_STATS_TYPE u8, 1 server
	fbSrvCnt  = 2 // SMC_NLA_FBACK_STATS_SRV_CNT u64
	fbClntCnt = 3 // SMC_NLA_FBACK_STATS_CLNT_CNT u64
	fbRsnCode = 4 // SMC_NLA_FBACK_STATS_RSN_CODE u32
	fbRsnCnt  = 5 // SMC_NLA_FBACK_STATS_RSN_CNT u16
)

// sock_diag (linux/sock_diag.h, linux/smc_diag.h).
const (
	netlinkSockDiag  = 4  // NETLINK_SOCK_DIAG
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	afSMC            = 43 // AF_SMC
	afINET           = 2  // AF_INET
	afINET6          = 10 // AF_INET6

	diagConnInfo = 1 // SMC_DIAG_CONNINFO
	diagLGRInfo  = 2 // SMC_DIAG_LGRINFO
	diagShutdown = 3 // SMC_DIAG_SHUTDOWN
	diagDMBInfo  = 4 // SMC_DIAG_DMBINFO
	diagFallback = 5 // SMC_DIAG_FALLBACK

	// diag_ext is a bitmask of 1<<(ext-1).
	diagExtAll = 1<<(diagConnInfo-1) | 1<<(diagLGRInfo-1) | 1<<(diagDMBInfo-1)
)
