/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_sim private: the firmware of the simulated ports, an SMA (sma.c)
 * and a PMA (pma.c), and the attribute layouts they encode.
 *
 * Attributes are encoded at explicit byte offsets with the unaligned
 * big-endian accessors rather than as C structures: several IBTA layouts
 * (NodeInfo's GUIDs at bytes 4, 12 and 20) are not naturally aligned, and
 * the offsets below read directly against the tables of IBTA Volume 1.
 *
 * Both are called from route.c with no lock held; the SMA takes F, the
 * PMA works on atomic counters only.
 */
#ifndef KMAD_SIM_FW_H
#define KMAD_SIM_FW_H

#include <linux/types.h>
#include <kmad/wire.h>

#include "fabric.h"

/* NodeInfo (IBTA 14.2.5.3), byte offsets in the SMP data. */
enum sim_ni_offset {
	SIM_NI_BASE_VERSION	= 0,
	SIM_NI_CLASS_VERSION	= 1,
	SIM_NI_NODE_TYPE	= 2,
	SIM_NI_NUM_PORTS	= 3,
	SIM_NI_SYS_GUID		= 4,
	SIM_NI_NODE_GUID	= 12,
	SIM_NI_PORT_GUID	= 20,
	SIM_NI_PARTITION_CAP	= 28,
	SIM_NI_DEVICE_ID	= 30,
	SIM_NI_REVISION		= 32,
	SIM_NI_LOCAL_PORT	= 36,
	SIM_NI_VENDOR_ID	= 37,
};

/* SwitchInfo (IBTA 14.2.5.4). */
enum sim_si_offset {
	SIM_SI_LFDB_CAP		= 0,
	SIM_SI_RFDB_CAP		= 2,
	SIM_SI_MFDB_CAP		= 4,
	SIM_SI_LFDB_TOP		= 6,
	SIM_SI_DEFAULT_PORT	= 8,
	SIM_SI_DEF_MCAST_PRI	= 9,
	SIM_SI_DEF_MCAST_NOT_PRI = 10,
	SIM_SI_LIFE_STATE	= 11,	/* LifeTimeValue 7-3, PortStateChange 2 */
	SIM_SI_LIDS_PER_PORT	= 12,
	SIM_SI_PART_ENF_CAP	= 14,
	SIM_SI_FLAGS		= 16,
	SIM_SI_MFDB_TOP		= 18,
};

#define SIM_SI_PORT_STATE_CHANGE	0x04
#define SIM_SI_LIFE_MASK		0xf8
#define SIM_SI_LIFE_DEFAULT		(18 << 3)

/* PortInfo (IBTA 14.2.5.6); the comments give the sub-fields, MSB first. */
enum sim_pi_offset {
	SIM_PI_MKEY		= 0,
	SIM_PI_GID_PREFIX	= 8,
	SIM_PI_LID		= 16,
	SIM_PI_SM_LID		= 18,
	SIM_PI_CAP_MASK		= 20,
	SIM_PI_DIAG_CODE	= 24,
	SIM_PI_MKEY_LEASE	= 26,
	SIM_PI_LOCAL_PORT	= 28,
	SIM_PI_WIDTH_ENABLED	= 29,
	SIM_PI_WIDTH_SUPPORTED	= 30,
	SIM_PI_WIDTH_ACTIVE	= 31,
	SIM_PI_SPEED_STATE	= 32,	/* LinkSpeedSupported 4, PortState 4 */
	SIM_PI_PHYS_DOWNDEF	= 33,	/* PortPhysicalState 4, LinkDownDef 4 */
	SIM_PI_MKEYPROT_LMC	= 34,	/* M_KeyProtectBits 2, resv 3, LMC 3 */
	SIM_PI_SPEED_ACT_ENA	= 35,	/* LinkSpeedActive 4, Enabled 4 */
	SIM_PI_MTU_SMSL		= 36,	/* NeighborMTU 4, MasterSMSL 4 */
	SIM_PI_VLCAP_INIT	= 37,	/* VLCap 4, InitType 4 */
	SIM_PI_VL_HIGH_LIMIT	= 38,
	SIM_PI_VL_ARB_HIGH_CAP	= 39,
	SIM_PI_VL_ARB_LOW_CAP	= 40,
	SIM_PI_INITREPLY_MTUCAP	= 41,	/* InitTypeReply 4, MTUCap 4 */
	SIM_PI_VLSTALL_HOQ	= 42,	/* VLStallCount 3, HOQLife 5 */
	SIM_PI_OPVLS_ENF	= 43,	/* OperationalVLs 4, enforcement 4 */
	SIM_PI_MKEY_VIOL	= 44,
	SIM_PI_PKEY_VIOL	= 46,
	SIM_PI_QKEY_VIOL	= 48,
	SIM_PI_GUID_CAP		= 50,
	SIM_PI_REREG_TIMEOUT	= 51,	/* ClientReregister 1, resv 2, SubnetTimeOut 5 */
	SIM_PI_RESP_TIME	= 52,	/* resv 3, RespTimeValue 5 */
	SIM_PI_ERR_THRESHOLDS	= 53,
};

/* What the simulated ports support, in PortInfo encodings. */
#define SIM_PORT_WIDTHS			0x03	/* 1x, 4x */
#define SIM_PORT_SPEEDS			0x07	/* 2.5, 5, 10 Gb/s */
#define SIM_PORT_MTU_CAP		4	/* 2048 bytes */
#define SIM_PORT_VL_CAP			1	/* VL0 */
/* VLArbitrationTable (IBTA 14.2.5.9): modifier bits 31-16 name a block. */
#define SIM_VLARB_LOW_0_31		1
#define SIM_VLARB_LOW_32_63		2
#define SIM_VLARB_HIGH_0_31		3
#define SIM_VLARB_HIGH_32_63		4
#define SIM_VLARB_BLOCK			32	/* entries per block */
#define SIM_VLARB_WEIGHT_MAX		255
#define SIM_PORT_RESP_TIME		8
/* CapabilityMask: IsSystemImageGUIDSupported (bit 11). */
#define SIM_PORT_CAP_MASK		0x00000800

/* NodeInfo values. */
#define SIM_VENDOR_ID			KMAD_OPENIB_OUI
#define SIM_DEVICE_ID_HCA		0x5a01
#define SIM_DEVICE_ID_SWITCH		0x5a02
#define SIM_REVISION			1

/*
 * PMA attributes: their data starts at byte 64 of the MAD, after the
 * common header and 40 reserved bytes (IBTA 16.1.2).
 */
#define SIM_PMA_DATA			64

/* PortCounters (IBTA 16.1.4.4), byte offsets in the PMA data. */
enum sim_pc_offset {
	SIM_PC_PORT_SELECT	= 1,
	SIM_PC_COUNTER_SELECT	= 2,
	SIM_PC_SYMBOL_ERRORS	= 4,
	SIM_PC_LINK_ERR_RECOVERY = 6,
	SIM_PC_LINK_DOWNED	= 7,
	SIM_PC_RCV_ERRORS	= 8,
	SIM_PC_RCV_REMPHYS_ERRORS = 10,
	SIM_PC_RCV_SW_RELAY_ERRORS = 12,
	SIM_PC_XMIT_DISCARDS	= 14,
	SIM_PC_XMIT_CONSTRAINT	= 16,
	SIM_PC_RCV_CONSTRAINT	= 17,
	SIM_PC_COUNTER_SELECT2	= 18,
	SIM_PC_LINK_OVERRUN	= 19,
	SIM_PC_QP1_DROPPED	= 20,
	SIM_PC_VL15_DROPPED	= 22,
	SIM_PC_XMIT_DATA	= 24,
	SIM_PC_RCV_DATA		= 28,
	SIM_PC_XMIT_PKTS	= 32,
	SIM_PC_RCV_PKTS		= 36,
	SIM_PC_XMIT_WAIT	= 40,
};

/* PortCountersExtended (IBTA 16.1.4.11). */
enum sim_pce_offset {
	SIM_PCE_PORT_SELECT	= 1,
	SIM_PCE_COUNTER_SELECT	= 2,
	SIM_PCE_COUNTERS	= 8,	/* enum sim_pce order, 8 bytes each */
};

/* PMA ClassPortInfo CapabilityMask: AllPortSelect, IsExtendedWidth. */
#define SIM_PMA_CAP_ALL_PORT_SELECT	0x0100
#define SIM_PMA_CAP_EXT_WIDTH		0x0200
#define SIM_PMA_RESP_TIME		18
#define SIM_PMA_ALL_PORTS		0xff

/*
 * On the wire a MAD travels in a UD packet: LRH (8 bytes), BTH (12),
 * DETH (8), the MAD, ICRC (4), and a GRH (%KMAD_GRH_BYTES) after the LRH
 * when it has one.  PortXmitData and PortRcvData count these bytes
 * divided by 4 (IBTA 16.1.4.4): 72 words for a 256-byte MAD, 82 with a
 * GRH.
 */
#define SIM_PKT_OVERHEAD		32

/* sma.c */
int kmad_sim_sma(struct sim_port *in, struct kmad_smp *smp,
		 struct sim_port *refused[2]);

/* pma.c */
u16 kmad_sim_pma(struct sim_port *in, struct kmad_mad *mad);

/* topo.c */
void kmad_sim_link_bounce_locked(struct sim_port *port);
void kmad_sim_port_set_state_locked(struct sim_port *port, u8 state,
				    bool subn_set);

#endif /* KMAD_SIM_FW_H */
