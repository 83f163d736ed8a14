/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_sim private: the fabric, its nodes, ports and links, and what the
 * other files need from fabric.c (QP lookup, faults, clock, counters),
 * topo.c (building, links) and route.c (carrying MADs).
 *
 * Locking legend for the fields below (hw.h has the CQ lock, C):
 *
 * I: set before the fabric is visible to anyone, read-only afterwards.
 * F: kmad_sim_fabric.lock.  A spinlock taken with interrupts disabled, in
 *    any context.  No other lock of the sim is acquired while it is held,
 *    so it may be taken inside C.  The one call out of the sim made with
 *    it held is kmad_device_port_changed() (SMA Sets, link changes, as a
 *    driver reports a port event from its interrupt handler), which takes
 *    kmad's own port and address-handle cache locks and queues work;
 *    kmad calls no sim operation under those.  It guards everything the subnet
 *    manager can change through the SMA (PortInfo, P_Keys, GUIDs, LFTs,
 *    MFTs, VLArbitrationTables, SwitchInfo), link states and the published QPs.
 * M: kmad_sim_fabric.devices_mutex.  Process context.  Held around every
 *    change of an HCA's device (registration, removal) and around every
 *    use of an HCA's &kmad_device outside kmad's own callbacks (settle),
 *    so the device cannot be freed under such a use.  The clock's use
 *    (kmad_sim_advance_clock(), which kmad's handlers may call while
 *    settle holds M) holds a count instead, &sim_node.clock_users, that
 *    the removal waits for.  Fields
 *    marked "F, M" are written with both held and may be read with either.
 * A: atomic, no lock.
 *
 * Lifetime of a port's QPs as seen from the fabric: create_qp publishes
 * the QP in its port's qps[] (F); destroy_qp unpublishes it, then waits
 * for every reference taken through kmad_sim_qp_get() to be dropped.  An
 * HCA whose device is being removed is unreachable (lookups fail) although
 * its QPs are still published until kmad destroys them.
 */
#ifndef KMAD_SIM_FABRIC_H
#define KMAD_SIM_FABRIC_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <kmad/sim.h>
#include <kmad/wire.h>

struct sim_qp;

#define SIM_NUM_QPS		2
/* The QP number of a port's raw QP (raw.c): routed beside QP0 and QP1. */
#define SIM_RAW_QPN		SIM_NUM_QPS
#define SIM_PERMISSIVE_LID	0xffff
/* Unicast LIDs are 1-0xBFFF; 0xC000-0xFFFE are multicast (IBTA 4.1.3). */
#define SIM_MCAST_LID_BASE	0xc000
#define SIM_SM_LID		1
#define SIM_NAME_MAX		32
#define SIM_DESC_MAX		64
/* Ports numbers are 1-254 (port 255 is reserved in LFTs, IBTA 14.2.5.10). */
#define SIM_MAX_PORTS		254
/* An HCA has 1 or 2 ports (&kmad_sim_config.hca_ports). */
#define SIM_HCA_MAX_PORTS	2
/* LinearFDBCap: each switch forwards LIDs 0 to SIM_LFT_CAP - 1. */
#define SIM_LFT_CAP		4096
#define SIM_LFT_BLOCK		64
#define SIM_LFT_NONE		0xff
/*
 * MulticastFDBCap: each switch has a port mask for MLIDs 0xC000 to
 * 0xC000 + SIM_MFT_CAP - 1, in blocks of 32 MLIDs, each mask 16 ports
 * wide per position (IBTA 14.2.5.12).
 */
#define SIM_MFT_CAP		1024
#define SIM_MFT_BLOCK		32
#define SIM_MFT_PORTS_PER_POS	16
/*
 * VLArbitrationHighCap and LowCap of every port that has the tables (HCA
 * ports, switch external ports): 8 entries each, of 2 bytes.
 */
#define SIM_VLARB_CAP		8
/* P_Key table and GUIDInfo sizes of every port (PartitionCap, GUIDCap). */
#define SIM_PKEYS		64
#define SIM_PKEY_BLOCK		32
#define SIM_GUIDS		8
#define SIM_DEFAULT_PKEY	0xffff
/* GRH NextHeader of an IBA packet (IBTA 8.3.1). */
#define SIM_GRH_NEXT_HDR_IBA	0x1b

/*
 * IBTA PortInfo.PortState and PortPhysicalState values (14.2.5.6) the
 * simulated ports take.
 */
enum sim_port_state {
	SIM_PS_DOWN = 1,
	SIM_PS_INIT = 2,
	SIM_PS_ARMED = 3,
	SIM_PS_ACTIVE = 4,
};

enum sim_phys_state {
	SIM_PHYS_SLEEP = 1,
	SIM_PHYS_POLLING = 2,
	SIM_PHYS_DISABLED = 3,
	SIM_PHYS_LINKUP = 5,
};

/**
 * enum sim_dev_state - whether an HCA's device exists.
 * @SIM_DEV_ABSENT: no device: never created, or removed and freed.
 * @SIM_DEV_LIVE: registered with kmad; MADs reach it.
 * @SIM_DEV_REMOVING: being unregistered; its device still exists but
 *	nothing reaches it any more.
 */
enum sim_dev_state {
	SIM_DEV_ABSENT,
	SIM_DEV_LIVE,
	SIM_DEV_REMOVING,
};

/*
 * enum sim_stat - index of a counter in &sim_port.stats; each is the
 * &struct kmad_sim_stats field of the same name.
 */
enum sim_stat {
	SIM_STAT_SENT,
	SIM_STAT_DELIVERED,
	SIM_STAT_DROPPED_NO_RECV,
	SIM_STAT_DROPPED_NO_ROUTE,
	SIM_STAT_DROPPED_FAULT,
	SIM_STAT_DUPLICATED,
	SIM_STAT_CORRUPTED,
	SIM_STAT_SEND_ERRORS,
	SIM_STAT_CQ_EVENTS,
	SIM_STAT_DROPPED_BAD_QKEY,
	SIM_STAT_DROPPED_BAD_PKEY,
	SIM_STAT_RECV_ERRORS,
	SIM_STAT_CQ_OVERFLOWS,
	SIM_STAT_DROPPED_LINK,
	SIM_STAT_DROPPED_SMI,
	SIM_STAT_FW_ANSWERED,
	SIM_STAT_COUNT,
};

/*
 * enum sim_ctr - the raw traffic and error counters of a physical port,
 * which the PMA reports (pma.c): 64 bits, never cleared; the PMA keeps
 * its own baselines.
 */
enum sim_ctr {
	SIM_CTR_XMIT_DATA,	/* 4-byte words transmitted */
	SIM_CTR_RCV_DATA,	/* 4-byte words received */
	SIM_CTR_XMIT_PKTS,
	SIM_CTR_RCV_PKTS,
	SIM_CTR_XMIT_DISCARDS,	/* could not transmit: link or state */
	SIM_CTR_RCV_ERRORS,	/* DLID not this port's */
	SIM_CTR_RELAY_ERRORS,	/* a switch could not forward it */
	SIM_CTR_VL15_DROPPED,	/* SMP with no QP0 receive buffer */
	SIM_CTR_LINK_DOWNED,	/* link went down */
	SIM_CTR_QKEY_VIOLATIONS,
	SIM_CTR_PKEY_VIOLATIONS,
	SIM_CTR_COUNT,
};

/*
 * enum sim_pce - the counters of PortCountersExtended, in the order of
 * their CounterSelect bits (IBTA 16.1.4.11); every simulated packet is
 * unicast, so the unicast ones count what the packet ones count and the
 * multicast ones stay 0.
 */
enum sim_pce {
	SIM_PCE_XMIT_DATA,
	SIM_PCE_RCV_DATA,
	SIM_PCE_XMIT_PKTS,
	SIM_PCE_RCV_PKTS,
	SIM_PCE_UNI_XMIT_PKTS,
	SIM_PCE_UNI_RCV_PKTS,
	SIM_PCE_MCAST_XMIT_PKTS,
	SIM_PCE_MCAST_RCV_PKTS,
	SIM_PCE_COUNT,
};

/**
 * struct sim_pinfo - the settable part of a port's PortInfo (F), in IBTA
 * encodings.  Fields only a switch's external port or only an endport
 * (HCA port, switch port 0) has are kept for all and ignored where
 * IBTA says they are reserved.
 * @mkey: M_Key.
 * @gid_prefix: GidPrefix.
 * @lid: LID (endports).
 * @sm_lid: MasterSMLID (endports).
 * @mkey_lease: M_KeyLeasePeriod.
 * @mkey_protect: M_KeyProtectBits.
 * @lmc: LMC (endports).
 * @sm_sl: MasterSMSL.
 * @width_enabled: LinkWidthEnabled.
 * @speed_enabled: LinkSpeedEnabled.
 * @down_default: LinkDownDefaultState.
 * @neighbor_mtu: NeighborMTU.
 * @vl_stall_hoq: VLStallCount (bits 7-5) and HOQLife (4-0).
 * @op_vls: OperationalVLs.
 * @subnet_timeout: SubnetTimeOut.
 * @vl_high_limit: VLHighLimit.
 * @enforce: PartitionEnforcementInbound, PartitionEnforcementOutbound,
 *	FilterRawInbound, FilterRawOutbound (bits 3-0 of byte 43).
 * @err_thresholds: LocalPhyErrors (bits 7-4) and OverrunErrors (3-0).
 */
struct sim_pinfo {
	u64 mkey;
	u64 gid_prefix;
	u16 lid;
	u16 sm_lid;
	u16 mkey_lease;
	u8 mkey_protect;
	u8 lmc;
	u8 sm_sl;
	u8 width_enabled;
	u8 speed_enabled;
	u8 down_default;
	u8 neighbor_mtu;
	u8 vl_stall_hoq;
	u8 op_vls;
	u8 subnet_timeout;
	u8 vl_high_limit;
	u8 enforce;
	u8 err_thresholds;
};

struct sim_node;

/**
 * struct sim_port - a port of a node: a physical port (1 to num_ports) or
 * a switch's management port 0.
 * @node: its node (I).
 * @num: its port number (I).
 * @peer: the port at the other end of its cable, or NULL (I).
 * @cable_up: the cable works; kmad_sim_set_link() changes it on both
 *	ends (F).
 * @disabled: PortPhysicalState was set to Disabled (F).
 * @asleep: PortPhysicalState was set to Sleep (F).
 * @state: PortState, &enum sim_port_state; port 0 is always Active (F).
 * @pi: the rest of PortInfo (F).
 * @cap_set: CapabilityMask bits set by kmad_port_modify_cap(), e.g. IsSM
 *	(F).
 * @pkeys: P_KeyTable (F).
 * @guids: GUIDInfo; entry 0 is the port GUID (F).
 * @mkey_violations: PortInfo.M_KeyViolations: SMPs this endport's M_Key
 *	check refused, saturating at 0xFFFF (F).
 * @pi_viol_base: PortInfo P_KeyViolations and Q_KeyViolations: the raw
 *	%SIM_CTR_PKEY_VIOLATIONS and %SIM_CTR_QKEY_VIOLATIONS when a Set
 *	last wrote 0 to them (F).
 * @mkey_lease_end: when the M_Key lease runs out (fabric time, jiffies or
 *	step-mode clock), after which M_KeyProtectBits read 0; 0 while the
 *	lease timer is stopped (F).
 * @vlarb: VLArbitrationTable, the low-priority table then the high one,
 *	%SIM_VLARB_CAP entries each in IBTA encoding (VL in the low nibble
 *	of the first byte, Weight in the second); unused on a switch's
 *	port 0 (F).
 * @qps: an HCA port's published QPs by QP number, kmad's and the raw
 *	one (F).
 * @stats: simulation counters; they outlive the device (A).
 * @ctr: PMA counters, &enum sim_ctr (A).
 * @pc_base: PortCounters: the raw value of each counter when it was last
 *	cleared (A).
 * @pce_base: the same for PortCountersExtended, &enum sim_pce (A).
 */
struct sim_port {
	struct sim_node *node;
	u8 num;
	struct sim_port *peer;
	bool cable_up;
	bool disabled;
	bool asleep;
	u8 state;
	struct sim_pinfo pi;
	u32 cap_set;
	u16 pkeys[SIM_PKEYS];
	u64 guids[SIM_GUIDS];
	u16 mkey_violations;
	u64 pi_viol_base[2];
	u64 mkey_lease_end;
	u8 vlarb[2][SIM_VLARB_CAP][2];
	struct sim_qp *qps[SIM_RAW_QPN + 1];
	atomic64_t stats[SIM_STAT_COUNT];
	atomic64_t ctr[SIM_CTR_COUNT];
	atomic64_t pc_base[SIM_CTR_COUNT];
	atomic64_t pce_base[SIM_PCE_COUNT];
};

/**
 * struct sim_node - an HCA or a switch.
 * @fab: its fabric (I).
 * @index: its index in &kmad_sim_fabric.nodes (I).
 * @type: HCA or switch (I).
 * @name: the device name of an HCA, "<name>sw<j>" for a switch (I).
 * @desc: NodeDescription (I).
 * @guid: NodeGUID; port p's GUID is @guid + p (I).
 * @num_ports: physical ports (I).
 * @state: whether an HCA's device exists (F, M).
 * @kdev: an HCA's device, while @state is not SIM_DEV_ABSENT (F, M).
 * @lft: a switch's linear forwarding table, %SIM_LFT_CAP entries (I
 *	pointer, F contents).
 * @lft_top: LinearFDBTop (F).
 * @mft: a switch's multicast forwarding table, %SIM_MFT_CAP MLIDs of
 *	@mft_positions port masks each, MLID 0xC000 first: entry
 *	mlid_index * @mft_positions + position (I pointer, F contents).
 * @mft_positions: port mask positions, one per 16 ports from port 0 (I).
 * @default_port: SwitchInfo.DefaultPort, stored only (F).
 * @life_state: SwitchInfo byte 11: LifeTimeValue (bits 7-3) and
 *	PortStateChange (bit 2) (F).
 * @hold_queries: an HCA's query_gid() calls wait while set
 *	(kmad_sim_hold_queries()) (A).
 * @queries_waiting: query_gid() calls waiting for that (A).
 * @clock_users: kmad_sim_advance_clock() calls using @kdev now, taken
 *	while the device is live; its removal waits for none (F).
 * @ports: ports 0 to @num_ports; an HCA does not use port 0.
 */
struct sim_node {
	struct kmad_sim_fabric *fab;
	unsigned int index;
	enum kmad_sim_node_type type;
	char name[SIM_NAME_MAX];
	char desc[SIM_DESC_MAX];
	u64 guid;
	u8 num_ports;
	enum sim_dev_state state;
	struct kmad_device *kdev;
	u8 *lft;
	u16 lft_top;
	u16 *mft;
	u8 mft_positions;
	u8 default_port;
	u8 life_state;
	atomic_t hold_queries;
	atomic_t queries_waiting;
	unsigned int clock_users;
	struct sim_port ports[];
};

/**
 * struct kmad_sim_fabric - a simulated fabric.
 * @name: name prefix of its devices (I).
 * @cfg: the configuration it was built from, defaults filled in; cfg.name
 *	is @name (I).
 * @ops: provider operations of its devices, per mode (I).
 * @wq: runs transmissions (async mode), CQ event deliveries and fatal QP
 *	events (I).
 * @lock: F, see above.
 * @devices_mutex: M, see above.
 * @clock: step mode: the virtual jiffies counter (F).
 * @faults: fault injection settings (F).
 * @rnd: fault injection PRNG, seeded at creation so that a step-mode run
 *	is reproducible (F).
 * @wire_sends: sends posted and not yet completed, on every QP (A).
 * @wire_idle: woken when @wire_sends drops to zero.
 * @clock_idle: woken when a node's &sim_node.clock_users drops to zero.
 * @progress: bumped whenever a work request, CQE or event moves; settle
 *	stops when a round leaves it unchanged (A).
 * @ops_buf: what @ops points to: the mode's operations, plus create_ah()
 *	and destroy_ah() with &kmad_sim_config.ah (I).
 * @ah_held: held create_ah() calls, &struct sim_ah_req, oldest first (F).
 * @ah_stats: per HCA, &struct kmad_sim_ah_stats counters (A).
 * @netlist_dir: its directory in kmad_sim's debugfs, or an error
 *	pointer (netlist.c; set after the fabric is built, read at destroy).
 * @trap_tid: the TID of the last trap a switch sent (F).
 * @num_hcas: HCA nodes, which come first in @nodes (I).
 * @num_nodes: all nodes (I).
 * @nodes: the nodes (I).
 */
struct kmad_sim_fabric {
	char *name;
	struct kmad_sim_config cfg;
	const struct kmad_provider_ops *ops;
	struct workqueue_struct *wq;
	spinlock_t lock;		/* F: see the legend above */
	struct mutex devices_mutex;	/* M: see the legend above */
	u64 clock;
	struct kmad_sim_faults faults;
	struct rnd_state rnd;
	atomic_t wire_sends;
	wait_queue_head_t wire_idle;
	wait_queue_head_t clock_idle;
	atomic_t progress;
	struct kmad_provider_ops ops_buf;
	struct list_head ah_held;
	atomic64_t (*ah_stats)[4];
	struct dentry *netlist_dir;
	u64 trap_tid;
	unsigned int num_hcas;
	unsigned int num_nodes;
	struct sim_node *nodes[];
};

/**
 * struct sim_dev - kmad_device_priv() of a simulated HCA.
 * @fab: its fabric (I).
 * @node: its node (I).
 * @teardown: set once, before the device is unregistered: CQ events are
 *	then delivered at once even in step mode, so that kmad's teardown
 *	never waits for a step that cannot come.  Written with WRITE_ONCE()
 *	before a pass that takes every one of the device's CQ locks; read
 *	under a CQ lock (hw.c).
 */
struct sim_dev {
	struct kmad_sim_fabric *fab;
	struct sim_node *node;
	bool teardown;
};

/**
 * struct sim_packet - a MAD on the wire, or injected as if it were.
 * @len: length of @mad.
 * @slid: source LID.
 * @dlid: destination LID.
 * @src_qpn: sending QP.
 * @dst_qpn: destination QP.
 * @qkey: Q_Key.
 * @sl: service level (four bits: kmad refuses more).
 * @pkey: the P_Key it carries: the sender's table entry at the send's
 *	P_Key index.
 * @pkey_index: set where it arrives: the receiving port's entry that
 *	@pkey matched (sim_keys_ok()), reported in the receive completion.
 * @copies: how many times it is delivered (2 when duplicated).
 * @by_gid: @dlid was found from @dgid (the send's DLID was 0): no path
 *	bits to report.
 * @grh: it carries a GRH: the fields below.
 * @sgid: source GID.
 * @dgid: destination GID.
 * @flow_label: flow label.
 * @tclass: traffic class.
 * @hop_limit: hop limit.
 * @mad: the MAD, copied from kmad's buffer at transmission.
 *
 * The LIDs are the fabric's own (topo.c's plan), also on an Ethernet
 * fabric, where they only carry packets through the switches and kmad
 * never sees them.
 */
struct sim_packet {
	u32 len;
	u16 slid;
	u16 dlid;
	u32 src_qpn;
	u32 dst_qpn;
	u32 qkey;
	u8 sl;
	u16 pkey;
	u16 pkey_index;
	unsigned int copies;
	bool by_gid;
	bool grh;
	union kmad_gid sgid;
	union kmad_gid dgid;
	u32 flow_label;
	u8 tclass;
	u8 hop_limit;
	u8 path_bits;
	u8 mad[KMAD_MAD_SIZE];
};

/**
 * struct sim_ah - an address handle of a simulated device.
 * @ref: one for its creation (dropped by destroy_ah), one per send on a
 *	wire that uses it (A).
 * @dead: destroy_ah() was called (A, set once).
 * @sdev: its device (I).
 */
struct sim_ah {
	struct kref ref;
	bool dead;
	struct sim_dev *sdev;
};

/**
 * struct sim_ah_req - a create_ah() a %KMAD_SIM_AH_HOLD fabric holds.
 * @entry: on &kmad_sim_fabric.ah_held (F).
 * @node: the node it is for (I).
 * @done: completed by kmad_sim_complete_ah() or the device's removal.
 * @err: the result to return (F).
 */
struct sim_ah_req {
	struct list_head entry;
	struct sim_node *node;
	struct completion done;
	int err;
};

/**
 * struct sim_verdict - what fault injection does to one transmitted MAD.
 * @send_err: the send fails locally; nothing goes on the wire.
 * @drop: lost on the wire.
 * @corrupt: byte @corrupt_at of the header is flipped.
 * @dup: delivered twice.
 * @corrupt_at: offset of the flipped byte, below %KMAD_MAD_HDR_SIZE.
 */
struct sim_verdict {
	bool send_err;
	bool drop;
	bool corrupt;
	bool dup;
	unsigned int corrupt_at;
};

static inline bool sim_eth(const struct kmad_sim_fabric *fab)
{
	return fab->cfg.link_layer == KMAD_LINK_LAYER_ETHERNET;
}

static inline bool sim_is_switch(const struct sim_node *node)
{
	return node->type == KMAD_SIM_NODE_SWITCH;
}

static inline void sim_port_count(struct sim_port *port, enum sim_stat stat)
{
	atomic64_inc(&port->stats[stat]);
}

static inline void sim_ctr_add(struct sim_port *port, enum sim_ctr ctr,
			       u64 n)
{
	atomic64_add(n, &port->ctr[ctr]);
}

static inline void sim_progress(struct kmad_sim_fabric *fab)
{
	atomic_inc(&fab->progress);
}

/* fabric.c */
struct sim_port *kmad_sim_port(struct kmad_sim_fabric *fab, unsigned int node,
			       u8 port);
struct sim_qp *kmad_sim_qp_get(struct kmad_sim_fabric *fab, unsigned int dev,
			       u32 qpn);
int kmad_sim_publish_qp(struct sim_qp *qp);
void kmad_sim_unpublish_qp(struct sim_qp *qp);
void kmad_sim_draw_faults(struct kmad_sim_fabric *fab, struct sim_verdict *v);
unsigned long kmad_sim_send_delay(struct kmad_sim_fabric *fab);
u64 kmad_sim_clock(struct kmad_sim_fabric *fab);
u16 kmad_sim_port_lid_of(struct sim_port *port);
int kmad_sim_port_gid_locked(struct sim_port *port, unsigned int index,
			     union kmad_gid *gid);
struct sim_port *kmad_sim_find_gid(struct kmad_sim_fabric *fab,
				   const union kmad_gid *gid);
void kmad_sim_pinfo_attr(const struct sim_pinfo *pi,
			 struct kmad_port_attr *attr);
void kmad_sim_report_port_locked(struct sim_port *port,
				 const struct kmad_port_attr *was);

/* topo.c */
int kmad_sim_topo_size(const struct kmad_sim_config *cfg,
		       unsigned int *num_hcas, unsigned int *num_switches);
int kmad_sim_topo_build(struct kmad_sim_fabric *fab);
int kmad_sim_fattree_check(const struct kmad_sim_config *cfg);
void kmad_sim_topo_free(struct kmad_sim_fabric *fab);
bool kmad_sim_phys_up(const struct sim_port *port);
void kmad_sim_link_update_locked(struct sim_port *port, u8 up_state);
u8 kmad_sim_link_up_state(const struct kmad_sim_fabric *fab);

/* netlist.c */
void kmad_sim_netlist_add(struct kmad_sim_fabric *fab);
void kmad_sim_netlist_remove(struct kmad_sim_fabric *fab);

/* route.c */
void kmad_sim_route(struct sim_qp *src, const struct sim_packet *pkt);
void kmad_sim_switch_trap(struct kmad_sim_fabric *fab, struct sim_node *sw);

#endif /* KMAD_SIM_FABRIC_H */
