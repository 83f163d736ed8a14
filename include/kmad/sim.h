/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_sim: kmad's simulated fabric, a provider (see <kmad/provider.h>)
 * with devices, ports, QP0/QP1, CQs and links that deliver MADs.
 *
 * Two modes:
 *
 * - %KMAD_SIM_ASYNC: sends are transmitted from a workqueue after a
 *   configurable latency; completions raise CQ events by themselves.  For
 *   stress tests, demos and benchmarks.
 * - %KMAD_SIM_STEP: nothing happens until the caller steps it.  A posted
 *   send waits on its QP's "wire" until kmad_sim_complete_send(); a CQ
 *   event is only recorded as pending until kmad_sim_fire_cq_event(); time
 *   moves only with kmad_sim_advance_clock().  Every interleaving is then a
 *   reproducible sequence of calls.  What a step sets off in kmad (its CQ
 *   drain after a fired event, its callbacks, the timeouts a clock
 *   advance makes due) runs from kmad's workqueues: call
 *   kmad_sim_settle() before checking it.  kmad also drains a CQ without
 *   an event when it has reason to (a QP error, a refused post, an
 *   address handle that failed), so an event held back may later find
 *   its CQ empty.
 *
 * A fabric is a small InfiniBand subnet: HCAs (kmad devices with one or
 * two ports) and switches, cabled by a topology, with static LIDs and
 * linear forwarding tables computed when it is built (or none, for a
 * subnet manager to assign: &kmad_sim_config.no_sm), and firmware on
 * every port (an SMA on QP0 and a PMA on QP1) that answers Get and Set
 * requests before kmad sees them.  Documentation/simulated-fabric.rst
 * describes the topologies, the LID plan, routing and the firmware.
 *
 * Nodes are numbered HCAs first: node i < kmad_sim_num_devices() is the
 * HCA "<name><i>" (also called device i below), then the switches
 * "<name>sw<j>" are nodes kmad_sim_num_devices() + j.
 *
 * QPs are addressed by (device index, qpn): qpn 0 or 1 are the QPs of port
 * 1, KMAD_SIM_QP(port, qpn) those of another port of a two-port HCA.
 *
 * Conventions of the control functions: an argument that names nothing
 * (NULL or error-pointer fabric, device or node index out of range, qpn
 * not 0 or 1, a port the node does not have, n past the end of a list)
 * gives -EINVAL; a device that was removed, or a QP kmad has not created,
 * gives -ENODEV; the call then changes nothing.  Functions that return a
 * count return 0 then, those that fill a structure of counters fill it
 * with zeros, and the void ones (kmad_sim_remove_device(),
 * kmad_sim_advance_clock(), kmad_sim_settle(), kmad_sim_destroy()) do
 * nothing.  Two exceptions, as their comments say: kmad_sim_complete_ah()
 * returns -ENOENT when fewer calls are held (a removed device has none),
 * and kmad_sim_hold_queries() sets its hold on a removed device too.
 * The controls may be called from several threads at once; two
 * kmad_sim_complete_send() calls on one QP may then transmit out of post
 * order (one caller per QP keeps it), and an arm hook already taken by an
 * arming may still run after kmad_sim_set_arm_hook() removed it.  A
 * failure or hold a test set (kmad_sim_fail_modify_qp() of the error
 * state, kmad_sim_hold_queries()) stays in force through a device's
 * removal, which then waits: a test ends it before it ends.  Removing a
 * device leaves its node in the fabric, links and all: what reads the node
 * rather than kmad's device -- its GID table (kmad_sim_port_gid()), its
 * counters (kmad_sim_get_stats(), kmad_sim_get_port_stats(),
 * kmad_sim_get_ah_stats()), the node and link queries -- still reads it,
 * the counters as they were at the removal (nothing reaches the node any
 * more; the flush of its QPs is counted).
 */
#ifndef KMAD_SIM_H
#define KMAD_SIM_H

#include <linux/jiffies.h>
#include <linux/types.h>
#include <kmad/provider.h>

struct kmad_sim_fabric;

/*
 * Step mode: the virtual clock (&kmad_provider_ops.now) starts here, like
 * jiffies, so that it wraps 32 bits five minutes into a test.
 */
#define KMAD_SIM_CLOCK_START	((u64)INITIAL_JIFFIES)

/**
 * enum kmad_sim_mode - how the fabric moves.
 * @KMAD_SIM_ASYNC: by itself, from a workqueue.
 * @KMAD_SIM_STEP: only when stepped by the caller.
 */
enum kmad_sim_mode {
	KMAD_SIM_ASYNC,
	KMAD_SIM_STEP,
};

/**
 * enum kmad_sim_notify - CQ notification behaviour, as HCAs differ.
 * @KMAD_SIM_NOTIFY_IBTA: arming raises an event only for a CQE that
 *	arrives after arming ("next CQE only").
 * @KMAD_SIM_NOTIFY_MISSED: arming raises an event at once if a CQE arrived
 *	since the last event and is still unreaped ("missed events").
 */
enum kmad_sim_notify {
	KMAD_SIM_NOTIFY_IBTA,
	KMAD_SIM_NOTIFY_MISSED,
};

/*
 * The longest packet kmad_sim_inject() takes (an IB MTU).  A MAD is
 * %KMAD_MAD_SIZE bytes and so is every receive buffer kmad posts: a longer
 * packet fits none, and its receive completes with %KMAD_WC_LOC_ERR.
 */
#define KMAD_SIM_MAX_PACKET	4096

/*
 * KMAD_SIM_QP() - the qpn argument of the control functions for QP @qpn
 * (0 or 1) of port @port of an HCA; KMAD_SIM_QP(1, qpn) is plain @qpn.
 */
#define KMAD_SIM_QP(port, qpn)	((((u32)(port) - 1) << 16) | (u32)(qpn))

/**
 * enum kmad_sim_topology - built-in topologies.
 * @KMAD_SIM_TOPO_PAIR: two HCAs linked back to back, port to port.
 * @KMAD_SIM_TOPO_STAR: &kmad_sim_config.hcas HCAs around one switch.
 * @KMAD_SIM_TOPO_TREE: a root switch with &kmad_sim_config.leaves leaf
 *	switches, the HCAs spread over the leaves.
 * @KMAD_SIM_TOPO_FATTREE: two levels: &kmad_sim_config.spines spine
 *	switches and &kmad_sim_config.leaves leaf switches, every leaf
 *	cabled to every spine, the HCAs spread over the leaves.
 */
enum kmad_sim_topology {
	KMAD_SIM_TOPO_PAIR,
	KMAD_SIM_TOPO_STAR,
	KMAD_SIM_TOPO_TREE,
	KMAD_SIM_TOPO_FATTREE,
};

/**
 * enum kmad_sim_ah - whether the fabric's devices use address handles.
 * @KMAD_SIM_AH_NONE: no create_ah() (kmad keeps no cache), the default.
 * @KMAD_SIM_AH_AUTO: create_ah() succeeds at once.
 * @KMAD_SIM_AH_HOLD: each create_ah() waits until the test ends it with
 *	kmad_sim_complete_ah() (kmad_sim_ah_pending() counts them); the
 *	device's removal fails those still held with -ENODEV.
 */
enum kmad_sim_ah {
	KMAD_SIM_AH_NONE,
	KMAD_SIM_AH_AUTO,
	KMAD_SIM_AH_HOLD,
};

/* Defaults and limits of the topology sizes. */
#define KMAD_SIM_DEFAULT_HCAS	4
#define KMAD_SIM_DEFAULT_LEAVES	2
#define KMAD_SIM_MAX_HCAS	64
#define KMAD_SIM_MAX_LEAVES	16
/*
 * fattree: up to 2048 HCAs on up to 128 leaves and 32 spines, at most 253
 * ports per leaf (spines + HCA ports on it), every LID below 4096
 * (LinearFDBCap).
 */
#define KMAD_SIM_DEFAULT_SPINES		2
#define KMAD_SIM_MAX_FATTREE_HCAS	2048
#define KMAD_SIM_MAX_FATTREE_LEAVES	128
#define KMAD_SIM_MAX_SPINES		32

/**
 * enum kmad_sim_node_type - kinds of node, with their IBTA NodeType values.
 * @KMAD_SIM_NODE_HCA: a channel adapter, registered with kmad.
 * @KMAD_SIM_NODE_SWITCH: a switch; its management port 0 has its LID.
 */
enum kmad_sim_node_type {
	KMAD_SIM_NODE_HCA = 1,
	KMAD_SIM_NODE_SWITCH = 2,
};

/**
 * struct kmad_sim_node_info - what a node is.
 * @type: HCA or switch.
 * @num_ports: physical ports, numbered from 1.
 * @lid: a switch's LID, or the current LID of an HCA's port 1.
 * @guid: NodeGUID.
 * @name: device name of an HCA, "<name>sw<j>" for a switch.
 */
struct kmad_sim_node_info {
	enum kmad_sim_node_type type;
	u8 num_ports;
	u16 lid;
	u64 guid;
	char name[32];
};

/**
 * struct kmad_sim_config - how to build a fabric.
 * @name: device name prefix; devices are "<name>0", "<name>1", ...
 * @topology: which topology.
 * @hcas: star and tree: number of HCAs, 1 to %KMAD_SIM_MAX_HCAS (fattree:
 *	%KMAD_SIM_MAX_FATTREE_HCAS) (0:
 *	%KMAD_SIM_DEFAULT_HCAS).  A pair always has two.
 * @leaves: tree: number of leaf switches, 1 to %KMAD_SIM_MAX_LEAVES (0:
 *	%KMAD_SIM_DEFAULT_LEAVES); fattree: 1 to
 *	%KMAD_SIM_MAX_FATTREE_LEAVES.
 * @spines: fattree: number of spine switches, 1 to %KMAD_SIM_MAX_SPINES
 *	(0: %KMAD_SIM_DEFAULT_SPINES).
 * @hca_ports: ports per HCA, 1 or 2 (0: 1).  Every port is cabled: in a
 *	pair port p to port p, in a star and a tree both to the same switch.
 * @mode: async or step.
 * @notify: initial notification behaviour of every CQ.
 * @latency_us: async mode: delay from post to transmission.
 * @sq_depth: send slots per QP (0: kmad's default; at most
 *	%KMAD_MAX_QP_DEPTH, or kmad_sim_create() returns -EINVAL).
 * @rq_depth: receive buffers per QP (0: kmad's default; at most
 *	%KMAD_MAX_QP_DEPTH).
 * @cq_depth: CQEs per CQ (0: the depth kmad asks for, large enough for
 *	sq_depth + rq_depth; at most twice %KMAD_MAX_QP_DEPTH).  A smaller
 *	value makes overflows possible:
 *	see &kmad_sim_stats.cq_overflows.
 * @qp_created: optional, for tests: called each time kmad has created a
 *	QP, before kmad moves it to RTS, arms its CQ or posts a receive
 *	buffer, with the fabric (also while kmad_sim_create() builds it),
 *	the device index, the QP in the qpn form of the control functions
 *	and @qp_created_arg.  It runs in kmad's context (process context,
 *	device registration) with the fabric's device mutex and kmad's
 *	device lock held: it may call the control functions on that QP,
 *	e.g. kmad_sim_set_arm_hook() to act at kmad's first arming of its
 *	CQ, and kmad_sim_advance_clock(), but not kmad_sim_settle(),
 *	kmad_sim_remove_device() or kmad_sim_destroy(), nor register kmad
 *	clients (each would wait for itself).
 * @qp_created_arg: its argument.
 * @bridge_add: optional, for tests: the devices then have
 *	&kmad_provider_ops.bridge_add and bridge_del, as a provider whose
 *	QP1 is another MAD layer's (kmad_ib): kmad's bridge_add calls this
 *	with the device's index, the port, the QP type and the registration
 *	(process context, the port's registration mutex held, as provider.h
 *	says), and its return is bridge_add's; bridge_del does nothing.  The
 *	fabric itself stays as it is: a send marked
 *	&kmad_hw_send.from_qp1 leaves from the device's QP1 as any other.
 * @bridge_arg: its argument.
 * @link_layer: %KMAD_LINK_LAYER_INFINIBAND (0, the default) or
 *	%KMAD_LINK_LAYER_ETHERNET: every HCA port is then a RoCE port: LID 0
 *	to kmad, no QP0, every MAD must carry a GRH (a send without one
 *	completes with %KMAD_WC_LOC_ERR) and goes to the port whose GID is
 *	its DGID.
 * @ah: address handles, &enum kmad_sim_ah.
 * @no_sm: an SM-less fabric: no LID plan and no forwarding tables.  Every
 *	LID and MasterSMLID is 0, every LFT entry discards (LinearFDBTop 0),
 *	and cabled ports come up Init with PortPhysicalState LinkUp, so that
 *	a subnet manager (OpenSM, over kmad_umad; or a test by directed
 *	route) has to assign LIDs, program the switches and bring the ports
 *	to Armed and Active through the SMA.  LID-routed MADs then follow
 *	the LFTs it programmed.  false (0): the static plan, every port
 *	Active, as if an SM had done that already.
 * @traps: a switch whose port's link goes down or comes up by
 *	kmad_sim_set_link() (a cable pulled or plugged) sends its SM a
 *	SubnTrap(Notice) 128, "link state changed" (IBTA 14.2.5.1), as
 *	ibsim's switches do: LID-routed from its LID to its MasterSMLID (none
 *	while either is 0, none on Ethernet), once (a real switch repeats
 *	it until the SM's TrapRepress; this one never repeats, and takes a
 *	TrapRepress and ignores it).  And each endport (HCA port, switch
 *	port 0) whose M_Key check refuses an SMP sends its SM a Trap 256,
 *	"Bad M_Key", from its LID, once, and one that drops a MAD for its
 *	P_Key or Q_Key a Trap 257 "Bad P_Key" or 258 "Bad Q_Key".  false
 *	(0): no traps (the SM finds the change at its next sweep, from
 *	SwitchInfo.PortStateChange).
 * @minimal_ops: the devices offer kmad only the provider ops provider.h
 *	requires, plus now() in step mode (its clock): no query_gid,
 *	query_pkey, query_smp or modify_port_cap, and with &kmad_sim_config.ah
 *	%KMAD_SIM_AH_NONE no address handles either -- how kmad runs on a
 *	minimal third-party provider.  The fabric itself still carries GRHs
 *	and P_Keys (an Ethernet fabric could then send nothing: every RoCE
 *	send needs a GRH).
 */
struct kmad_sim_config {
	const char *name;
	enum kmad_sim_topology topology;
	unsigned int hcas;
	unsigned int leaves;
	unsigned int spines;
	unsigned int hca_ports;
	enum kmad_sim_mode mode;
	enum kmad_sim_notify notify;
	unsigned int latency_us;
	unsigned int sq_depth;
	unsigned int rq_depth;
	unsigned int cq_depth;
	void (*qp_created)(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn, void *arg);
	void *qp_created_arg;
	int (*bridge_add)(struct kmad_sim_fabric *fab, unsigned int dev,
			  u8 port_num, enum kmad_qp_type qpt,
			  const struct kmad_reg_req *req, void *arg);
	void *bridge_arg;
	enum kmad_link_layer link_layer;
	enum kmad_sim_ah ah;
	bool no_sm;
	bool traps;
	bool minimal_ops;
};

/**
 * struct kmad_sim_rx - how an injected MAD arrives (kmad_sim_inject_rx()).
 * @slid: source LID to report.
 * @src_qpn: source QP to report.
 * @dlid_path_bits: destination path bits to report.
 * @grh_present: the packet has a GRH, written in the buffer's GRH area.
 * @sgid: its source GID.
 * @dgid: its destination GID.
 * @flow_label: its flow label.
 * @traffic_class: its traffic class.
 * @hop_limit: its hop limit.
 */
struct kmad_sim_rx {
	u16 slid;
	u32 src_qpn;
	u8 dlid_path_bits;
	bool grh_present;
	union kmad_gid sgid;
	union kmad_gid dgid;
	u32 flow_label;
	u8 traffic_class;
	u8 hop_limit;
};

/**
 * struct kmad_sim_ah_stats - a device's address handles (all ports).
 * @created: create_ah() calls that succeeded.
 * @failed: create_ah() calls that failed.
 * @destroyed: destroy_ah() calls.
 * @destroyed_busy: destroy_ah() calls for a handle a send on the wire
 *	still used (kmad must never make one).
 */
struct kmad_sim_ah_stats {
	u64 created;
	u64 failed;
	u64 destroyed;
	u64 destroyed_busy;
};

/**
 * struct kmad_sim_faults - fault injection for transmitted MADs (both
 * modes; percentages are 0-100 and drawn per MAD).
 * @drop_pct: the MAD is lost on the wire (the send still completes).
 * @dup_pct: the MAD is delivered twice (each copy makes the whole trip).
 * @corrupt_pct: one byte of the MAD's header is flipped.
 * @send_err_pct: the send completes with %KMAD_WC_LOC_ERR, nothing sent:
 *	counted in &kmad_sim_stats.send_errors, not in &kmad_sim_stats.sent.
 * @delay_us: async mode: extra delivery delay.
 */
struct kmad_sim_faults {
	unsigned int drop_pct;
	unsigned int dup_pct;
	unsigned int corrupt_pct;
	unsigned int send_err_pct;
	unsigned int delay_us;
};

/**
 * struct kmad_sim_stats - per-port simulation counters.
 * @sent: sends of this port's QPs that completed successfully, i.e.
 *	were transmitted (also if then lost, @dropped_fault); not firmware
 *	answers, and not sends that completed with an error (@send_errors).
 * @delivered: MADs placed in a receive buffer.
 * @dropped_no_recv: arrived with no receive buffer posted.
 * @dropped_no_route: no port with the destination LID on the link.
 * @dropped_fault: dropped by fault injection, or lost on purpose by
 *	kmad_sim_complete_send() with deliver false.
 * @duplicated: sends of this port's QPs that fault injection delivered
 *	twice (once here; each copy counts where it arrives).
 * @corrupted: corrupted by fault injection.
 * @send_errors: sends of this port's QPs completed with an error
 *	status: failed by fault injection or kmad_sim_complete_send(), not
 *	sendable (no GRH on Ethernet, no GID at the send's sgid_index), or
 *	flushed by a QP in error (also when posted to one).
 * @cq_events: completion events delivered to kmad (kmad_cq_event() calls).
 * @dropped_bad_qkey: arrived on QP1 with a Q_Key other than
 *	%KMAD_QP1_QKEY.
 * @dropped_bad_pkey: arrived on a QP other than QP0 (or for the PMA)
 *	with a P_Key that matches no entry of the port's P_Key table
 *	(IBTA 10.9.3: same low 15 bits, and at least one of the two a full
 *	member; 0x0000 and 0x8000 match nothing).
 * @recv_errors: arrived but longer than the receive buffer; the receive
 *	completed with %KMAD_WC_LOC_ERR.
 * @cq_overflows: CQEs that arrived at a CQ already holding
 *	&kmad_sim_config.cq_depth unpolled CQEs.  The QP that owns the
 *	first one goes to the error state (reported with pr_err) and kmad
 *	gets %KMAD_QP_EVENT_FATAL; its flush CQEs may overflow in turn.
 *	The CQE itself is kept (the ring is as deep as kmad asked), so kmad
 *	still gets one CQE per work request.
 * @dropped_link: lost at a port whose link is down (kmad_sim_set_link(),
 *	or disabled by a PortInfo Set), or, being no SMP, at a port whose
 *	PortState does not let it through (IBTA: only SMPs pass a port that
 *	is not Active, or Armed for receiving).
 * @dropped_smi: directed-route SMPs discarded by the hop checks of
 *	<kmad/smi.h>.
 * @fw_answered: requests answered by this port's firmware (its SMA or
 *	PMA; for a switch, counted on port 0).
 *
 * @sent, @send_errors, @duplicated and @corrupted count on the port whose
 * QP the send was posted on (kmad_sim_get_stats(): port 1 only).
 * A MAD that is lost on the way counts on the port that sent it (kmad's
 * send, or the firmware's response): @dropped_fault, @dropped_no_route
 * (no LFT entry, a DLID no port has, a routing loop, or the destination
 * device is gone), @dropped_link, and @dropped_smi for a discard by a
 * switch.  One that reaches its destination port counts there:
 * @delivered, @dropped_no_recv, @dropped_bad_qkey, @dropped_bad_pkey,
 * @recv_errors, @fw_answered, and @dropped_smi for a discard by the SMA's own checks.
 * The traffic that crossed each link is counted per port by the PMA
 * (PortCounters, PortCountersExtended), not here.
 */
struct kmad_sim_stats {
	u64 sent;
	u64 delivered;
	u64 dropped_no_recv;
	u64 dropped_no_route;
	u64 dropped_fault;
	u64 duplicated;
	u64 corrupted;
	u64 send_errors;
	u64 cq_events;
	u64 dropped_bad_qkey;
	u64 dropped_bad_pkey;
	u64 recv_errors;
	u64 cq_overflows;
	u64 dropped_link;
	u64 dropped_smi;
	u64 fw_answered;
};

/*
 * Life cycle.  create registers every device with kmad and returns the
 * fabric or an ERR_PTR(); destroy unregisters them (kmad flushes every
 * outstanding send) and frees all.
 */
struct kmad_sim_fabric *kmad_sim_create(const struct kmad_sim_config *cfg);
void kmad_sim_destroy(struct kmad_sim_fabric *fab);
unsigned int kmad_sim_num_devices(const struct kmad_sim_fabric *fab);
struct kmad_device *kmad_sim_device(struct kmad_sim_fabric *fab,
				    unsigned int dev);
/* Unregister one device (its ports go away) while the rest keeps going. */
void kmad_sim_remove_device(struct kmad_sim_fabric *fab, unsigned int dev);

/* Nodes, ports and links (both modes; any context). */
unsigned int kmad_sim_num_nodes(const struct kmad_sim_fabric *fab);
int kmad_sim_node_info(struct kmad_sim_fabric *fab, unsigned int node,
		       struct kmad_sim_node_info *info);
u16 kmad_sim_port_lid(struct kmad_sim_fabric *fab, unsigned int node,
		      u8 port);
int kmad_sim_link_peer(struct kmad_sim_fabric *fab, unsigned int node,
		       u8 port, unsigned int *peer_node, u8 *peer_port);
int kmad_sim_set_link(struct kmad_sim_fabric *fab, unsigned int node,
		      u8 port, bool up);
void kmad_sim_get_port_stats(struct kmad_sim_fabric *fab, unsigned int node,
			     u8 port, struct kmad_sim_stats *stats);
/*
 * The fabric built at module load from the module parameters, or NULL
 * (topology=none).  Valid while kmad_sim is loaded.
 */
struct kmad_sim_fabric *kmad_sim_default_fabric(void);

/*
 * Both modes.  Each control's kernel-doc is in drivers/kmad/sim/ (step.c,
 * fabric.c, addr.c); in short:
 */
/* The notification behaviour of a QP's CQ, from its next CQE or arming. */
int kmad_sim_set_notify(struct kmad_sim_fabric *fab, unsigned int dev,
			u32 qpn, enum kmad_sim_notify notify);
/* Fault injection for every later transmission of the fabric. */
int kmad_sim_set_faults(struct kmad_sim_fabric *fab,
			const struct kmad_sim_faults *faults);
/*
 * A MAD arrives at a QP as if from the wire (no links, firmware, faults or
 * Q_Key check): -ENOBUFS without a receive buffer, -EMSGSIZE for a @len
 * above %KMAD_MAD_SIZE (the receive completes with %KMAD_WC_LOC_ERR).
 */
int kmad_sim_inject(struct kmad_sim_fabric *fab, unsigned int dev, u32 qpn,
		    const void *mad, size_t len, u16 slid, u32 src_qpn);
int kmad_sim_inject_rx(struct kmad_sim_fabric *fab, unsigned int dev,
		       u32 qpn, const void *mad, size_t len,
		       const struct kmad_sim_rx *rx);
/* Entry @index of an HCA port's GID table, read from the node. */
int kmad_sim_port_gid(struct kmad_sim_fabric *fab, unsigned int dev, u8 port,
		      unsigned int index, union kmad_gid *gid);
void kmad_sim_get_ah_stats(struct kmad_sim_fabric *fab, unsigned int dev,
			   struct kmad_sim_ah_stats *stats);
/*
 * The QP goes to the error state: its sends, then its receives, complete
 * with %KMAD_WC_FLUSH_ERR; kmad then gets %KMAD_QP_EVENT_FATAL (not with
 * _no_event).
 */
int kmad_sim_qp_error(struct kmad_sim_fabric *fab, unsigned int dev,
		      u32 qpn);
int kmad_sim_qp_error_no_event(struct kmad_sim_fabric *fab, unsigned int dev,
			       u32 qpn);
/* kmad's next @count moves of the QP to @state fail (-EIO); 0 ends it. */
int kmad_sim_fail_modify_qp(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, enum kmad_qp_state state,
			    unsigned int count);
/* kmad's next @count post_recv() calls fail (-ENOMEM); 0 ends it. */
int kmad_sim_fail_post_recv(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, unsigned int count);
/* kmad's next @count post_send() calls fail (-ENOMEM); 0 ends it. */
int kmad_sim_fail_post_send(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn, unsigned int count);
/* query_gid() calls on the HCA spin until released; returns how many do. */
int kmad_sim_hold_queries(struct kmad_sim_fabric *fab, unsigned int dev,
			  bool hold);
/* The counters of the device's port 1. */
void kmad_sim_get_stats(struct kmad_sim_fabric *fab, unsigned int dev,
			struct kmad_sim_stats *stats);

/* Step mode. */
/* Sends waiting on a QP's wire (in async mode: not yet transmitted). */
unsigned int kmad_sim_pending_sends(struct kmad_sim_fabric *fab,
				    unsigned int dev, u32 qpn);
/* Returns the number of bytes copied (not 0, unless @len is 0) on success. */
int kmad_sim_peek_send(struct kmad_sim_fabric *fab, unsigned int dev,
		       u32 qpn, unsigned int n, void *mad, size_t len);
/*
 * Send @n on the wire (0: the oldest) completes: %KMAD_WC_SUCCESS transmits
 * it (lost on the wire, counted dropped_fault, if !@deliver), any other
 * status completes it with that status and transmits nothing.
 */
int kmad_sim_complete_send(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn, unsigned int n,
			   enum kmad_wc_status status, bool deliver);
/* CQEs of the QP's CQ that kmad has not polled yet. */
unsigned int kmad_sim_cqes(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn);
/* The QP's CQ raised an event kmad_sim_fire_cq_event() has not fired. */
bool kmad_sim_event_pending(struct kmad_sim_fabric *fab, unsigned int dev,
			    u32 qpn);
/*
 * Deliver the CQ's pending event to kmad (-ENOENT if none); @force: deliver
 * one even if none is pending (a spurious event), also in async mode.
 */
int kmad_sim_fire_cq_event(struct kmad_sim_fabric *fab, unsigned int dev,
			   u32 qpn, bool force);
/* @hook(@arg) runs once, at the start of the CQ's next req_notify_cq(). */
int kmad_sim_set_arm_hook(struct kmad_sim_fabric *fab, unsigned int dev,
			  u32 qpn, void (*hook)(void *arg), void *arg);
/*
 * Moves the virtual clock @ms forward and tells kmad; also from kmad's
 * handlers (it takes no mutex).
 */
void kmad_sim_advance_clock(struct kmad_sim_fabric *fab, unsigned int ms);
/* KMAD_SIM_AH_HOLD (either mode). */
/* create_ah() calls of the device the fabric holds. */
unsigned int kmad_sim_ah_pending(struct kmad_sim_fabric *fab,
				 unsigned int dev);
/* Ends held call @n (0: the oldest) with @err (0 creates the handle). */
int kmad_sim_complete_ah(struct kmad_sim_fabric *fab, unsigned int dev,
			 unsigned int n, int err);
/*
 * Waits until kmad's work is done and, in async mode, no send is on a
 * wire (sleeps).  In step mode sends stay on their wires for the test;
 * kmad's own delayed retries (a QP's recovery, a receive refill) are not
 * waited for.  Not from kmad's handlers or callbacks.
 */
void kmad_sim_settle(struct kmad_sim_fabric *fab);

/*
 * Raw QPs (drivers/kmad/sim/raw.c): a QP pair on port 1 of two HCAs of an
 * asynchronous fabric, posted to and polled through the provider's data
 * path alone, without kmad: the bare transport kmad_bench compares kmad
 * with.  Destroy the pair before the fabric, and before removing either of
 * its HCAs.
 */
struct kmad_sim_raw;

struct kmad_sim_raw *kmad_sim_raw_create(struct kmad_sim_fabric *fab,
					 unsigned int dev_req,
					 unsigned int dev_resp);
void kmad_sim_raw_destroy(struct kmad_sim_raw *raw);
int kmad_sim_raw_round_trip(struct kmad_sim_raw *raw,
			    unsigned int timeout_ms);

#endif /* KMAD_SIM_H */
