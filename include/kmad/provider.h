/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad provider interface: what an HCA driver (or kmad's simulated fabric)
 * implements so that kmad can send and receive MADs through it.
 *
 * A provider allocates a &struct kmad_device, describes its ports, and
 * registers it.  kmad then creates, per port, one CQ and one QP for each of
 * QP0 (SMI, unless the port has no_smi) and QP1 (GSI), posts receive
 * buffers, and from then on drives the hardware only through &struct
 * kmad_provider_ops.
 *
 * Contexts and rules every provider follows:
 *
 * - post_send(), post_recv() and now() may be called in any context but
 *   hard interrupt: from softirq, and with interrupts disabled (kmad calls
 *   post_send() under its irq-safe QP lock, from whatever context a ULP
 *   posts in).  They must not sleep and must take their own locks with
 *   interrupts disabled.  They must not call back into kmad (no completion
 *   handling inside a post): completions are reported only by CQEs that
 *   kmad polls, after the provider signals kmad_cq_event().
 * - The MAD buffer of a posted send stays valid, and unchanged, until kmad
 *   has polled that send's completion: the provider may read it at any
 *   time up to generating the CQE (as DMA would).  A receive buffer
 *   belongs to the provider from post_recv() until its CQE is polled.
 * - Every posted work request produces exactly one CQE, in post order per
 *   queue, unless the QP is destroyed: a QP moved to the error state
 *   completes everything outstanding with %KMAD_WC_FLUSH_ERR.  A
 *   %KMAD_WC_FLUSH_ERR completion on a running QP kmad did not move there
 *   starts kmad's recovery, which moves the QP to %KMAD_QPS_ERR itself (a
 *   send queue error state that keeps receiving is fine), waits until
 *   every work request has completed, then resets it to RTS.  A move to
 *   the error state or a reset that fails is tried again with backoff, five
 *   tries in all, after which kmad gives the QP up (its sends end with a
 *   local error; kmad_priv.h, enum kmad_qp_run): a provider that does not
 *   flush receives on its own must let the move to the error state
 *   succeed.
 * - req_notify_cq() arms the CQ for one completion event.  Providers
 *   differ, as HCAs do, in whether a CQE that arrived before arming raises
 *   the event; kmad's drain loop works with either (cq_drain() in
 *   drivers/kmad/qp.c: after arming it always polls once more).
 * - kmad_cq_event() and kmad_qp_event() may be called from any context,
 *   including hard interrupt context; kmad_cq_event() also from inside
 *   post_send() or post_recv() (a work request completed at once, as a
 *   post to a QP in the error state is): it only counts and queues
 *   kmad's drain, which polls later.  Never for a CQ after destroy_cq(),
 *   or a QP after destroy_qp(), has returned: the event would queue work
 *   in memory kmad_device_free() frees (a provider whose events come from
 *   another layer's callbacks waits for those to end in destroy, as
 *   kmad_ib does with synchronize_rcu()).
 * - kmad_device_unregister() is never called from inside an op (it waits
 *   for kmad's work items and SRCU readers, which may be running that
 *   op): a provider that must unregister from one defers it to a work
 *   item.  Unregister waits, without a time limit, until the provider
 *   has given back every posted work request (a CQE each), retrying
 *   modify_qp(%KMAD_QPS_ERR) meanwhile: a device that vanished must still
 *   complete everything in software.  Meanwhile other devices register
 *   and unregister and clients register; a client unregistering then
 *   waits for it if it has the device's ports, and the device's name
 *   stays taken (-EEXIST) until its clients have been told it went.
 * - A port whose LID, LMC or SM LID changes once kmad_device_register()
 *   has been called (the subnet manager assigned them; also while it
 *   runs, from the provider's event handler) is reported with
 *   kmad_device_port_changed(), also from any context; a changed GID or
 *   P_Key table too (kmad then forgets its cached address handles of that
 *   port).  The subnet
 *   manager's request that the port's clients register again
 *   (ClientReregister) with kmad_device_port_reregister(), after the new
 *   attributes.
 * - Receive buffers hold a 40-byte GRH area in front of the MAD, as verbs
 *   UD receives do: the provider writes the GRH there when the packet had
 *   one (and sets %KMAD_WC_GRH), and the MAD at offset 40.
 * - Address handles: a provider that needs them (a real HCA) implements
 *   create_ah() and destroy_ah().  kmad calls them only in process context
 *   (they may sleep, e.g. to resolve a RoCE destination MAC) and keeps
 *   the handles in a per-port cache, so that post_send(), which may run
 *   in atomic context, finds the handle ready.  A send whose handle is
 *   not ready waits, in kmad, until a work item has created it.
 */
#ifndef KMAD_PROVIDER_H
#define KMAD_PROVIDER_H

#include <linux/types.h>
#include <kmad/mad.h>

struct module;
struct kmad_device;
struct kmad_cq;
struct kmad_qp;

/**
 * enum kmad_qp_state - the QP states kmad uses.
 * @KMAD_QPS_RESET: not usable; nothing posted.
 * @KMAD_QPS_RTS: ready to send and receive.
 * @KMAD_QPS_ERR: error: outstanding work completes with %KMAD_WC_FLUSH_ERR,
 *	new posts fail or are flushed at once.
 */
enum kmad_qp_state {
	KMAD_QPS_RESET,
	KMAD_QPS_RTS,
	KMAD_QPS_ERR,
};

/**
 * enum kmad_qp_event_type - asynchronous QP events a provider reports.
 * @KMAD_QP_EVENT_FATAL: the QP went to the error state on its own.
 */
enum kmad_qp_event_type {
	KMAD_QP_EVENT_FATAL,
};

/**
 * enum kmad_wc_status - work completion status.
 * @KMAD_WC_SUCCESS: the work request completed.
 * @KMAD_WC_FLUSH_ERR: flushed because the QP is in the error state.
 * @KMAD_WC_LOC_ERR: a local error failed this work request only.
 */
enum kmad_wc_status {
	KMAD_WC_SUCCESS,
	KMAD_WC_FLUSH_ERR,
	KMAD_WC_LOC_ERR,
};

/**
 * enum kmad_wc_flags - &kmad_wc.wc_flags.
 * @KMAD_WC_GRH: receives: the GRH area of the buffer holds the packet's GRH.
 * @KMAD_WC_GID_INDEX: receives, with %KMAD_WC_GRH: &kmad_wc.gid_index is
 *	the entry of the port's GID table the packet arrived at.  Optional;
 *	for a RoCE port whose GID may be in several entries (one per VLAN
 *	device, per RoCE type), which only the provider can tell apart.
 */
enum kmad_wc_flags {
	KMAD_WC_GRH = 1 << 0,
	KMAD_WC_GID_INDEX = 1 << 1,
};

/** KMAD_GRH_BYTES - the GRH area in front of every receive buffer. */
#define KMAD_GRH_BYTES 40

/**
 * struct kmad_wire_grh - a GRH as it arrives in a receive buffer (IBTA
 * 8.3.1; RoCEv2 providers write the IPv6 or IPv4-mapped header so that
 * @sgid and @dgid are right, as verbs do).
 * @version_tclass_flow: IP version (4 bits), traffic class (8), flow
 *	label (20).
 * @paylen: payload length.
 * @next_hdr: next header (0x1b for IBA).
 * @hop_limit: hop limit.
 * @sgid: source GID.
 * @dgid: destination GID.
 */
struct kmad_wire_grh {
	__be32 version_tclass_flow;
	__be16 paylen;
	u8 next_hdr;
	u8 hop_limit;
	union kmad_gid sgid;
	union kmad_gid dgid;
} __packed;

/**
 * enum kmad_wc_opcode - what kind of work request completed.
 * @KMAD_WC_SEND: a send.
 * @KMAD_WC_RECV: a receive.
 */
enum kmad_wc_opcode {
	KMAD_WC_SEND,
	KMAD_WC_RECV,
};

/**
 * enum kmad_cq_notify_flags - flags for &kmad_provider_ops.req_notify_cq.
 * @KMAD_CQ_NEXT_COMP: arm for the next completion.
 * @KMAD_CQ_REPORT_MISSED_EVENTS: return a positive value if completions may
 *	have been missed (the CQ is not empty).  kmad does not ask for it
 *	today (it polls once more after every arming); a provider that
 *	honours it costs nothing.
 */
enum kmad_cq_notify_flags {
	KMAD_CQ_NEXT_COMP = 1 << 0,
	KMAD_CQ_REPORT_MISSED_EVENTS = 1 << 1,
};

struct kmad_wc;

/**
 * struct kmad_cqe - completion context embedded in every work request.
 * @done: called by kmad's CQ drain for the work request's completion.
 *
 * A provider copies the pointer from the work request into
 * &kmad_wc.cqe; kmad finds its own object with container_of().
 */
struct kmad_cqe {
	void (*done)(struct kmad_cq *cq, struct kmad_wc *wc);
};

/**
 * struct kmad_wc - a work completion, filled by &kmad_provider_ops.poll_cq.
 * @cqe: the &kmad_wc.cqe of the completed work request.
 * @status: completion status.
 * @opcode: send or receive.
 * @byte_len: receives: bytes placed in the buffer, the GRH area included
 *	(%KMAD_GRH_BYTES + the MAD's length).
 * @src_qpn: receives: the sender's QP number.
 * @slid: receives: the sender's LID.
 * @sl: receives: service level.
 * @pkey_index: receives: P_Key index the packet matched.
 * @wc_flags: receives: &enum kmad_wc_flags.
 * @dlid_path_bits: receives: the low LMC bits of the destination LID.
 * @gid_index: receives, with %KMAD_WC_GID_INDEX: the GID table entry of
 *	the GRH's DGID the packet arrived at (&kmad_recv_grh.dgid_index):
 *	kmad answers from it.
 */
struct kmad_wc {
	struct kmad_cqe *cqe;
	enum kmad_wc_status status;
	enum kmad_wc_opcode opcode;
	u32 byte_len;
	u32 src_qpn;
	u16 slid;
	u8 sl;
	u16 pkey_index;
	u8 wc_flags;
	u8 dlid_path_bits;
	u8 gid_index;
};

/**
 * struct kmad_ah_attr - an address, as kmad caches address handles.
 * @dlid: destination LID (0 on an Ethernet port).
 * @sl: service level.
 * @grh_present: with a GRH built from @grh.
 * @grh: the global route.
 * @from_qp1: for sends from the port's real QP1 (&kmad_hw_send.from_qp1),
 *	or from its real QP0 (every send of QP0 on a provider with
 *	&kmad_provider_ops.bridge_add): a provider makes the handle for the
 *	QP that sends them (in the protection domain of the other MAD
 *	layer's special QPs).
 * @src_path_bits: the low LMC bits of the port's LID to send from
 *	(already masked to the port's LMC; 0: the base LID), as
 *	rdma_ah_set_path_bits().
 *
 * Compared with memcmp(): kmad zeroes the whole structure, padding
 * included, before filling it.
 */
struct kmad_ah_attr {
	u16 dlid;
	u8 sl;
	bool grh_present;
	struct kmad_grh_attr grh;
	bool from_qp1;
	u8 src_path_bits;
};

/**
 * struct kmad_hw_send - a send work request as given to the provider.
 * @cqe: completion context to report in the send's &struct kmad_wc.
 * @mad: the MAD to transmit; valid until the send's CQE is polled.
 * @len: length of @mad in bytes (256 for kmad).
 * @dlid: destination LID; 0xffff (permissive) for directed-route SMPs.
 * @remote_qpn: destination QP: 0 for SMPs, 1 for most GMPs, any QPN for
 *	a response to a MAD that came from another QP (a redirected QP, a
 *	peer's own UD QP).
 * @remote_qkey: Q_Key (QP1 traffic; ignored on QP0).
 * @sl: service level.
 * @pkey_index: P_Key index.
 * @ah_attr: the whole address (@dlid and @sl again, and the GRH).
 * @ah: the provider's address handle for @ah_attr, from create_ah();
 *	NULL for a provider without create_ah().  Valid until the send's
 *	CQE has been polled.
 * @from_qp1: send it from the port's real QP1, through the MAD layer that
 *	owns it (&kmad_dest.from_qp1; only on a provider with @bridge_add:
 *	kmad refuses it on others before post_send).  On such a provider
 *	kmad sets it for every send of QP0 too (a ULP cannot set it there):
 *	the real QP0 is the other layer's as well, and every SMP leaves
 *	from it.  The
 *	send still completes with one CQE on the QP's CQ, polled with
 *	poll_cq() like any other, once that layer reports the send done,
 *	never before (or, where the provider hands that layer a copy of
 *	the MAD, as kmad_ib does for SMP requests, once kmad's buffer is no
 *	longer read: Documentation/kmad_ib.rst); it need not keep post
 *	order with the QP's other
 *	sends, and the QP's error state does not flush it (it completes as
 *	the other layer reports it).  It must still complete while the QP
 *	is in error: kmad waits for every posted send's CQE after
 *	modify_qp(%KMAD_QPS_ERR), before a recovery resets the QP and
 *	before it calls destroy_qp (a provider that held it back until
 *	destroy_qp would hang the device's removal).
 * @expects_resp: a request posted with a timeout: kmad waits for a
 *	response with its TID (the upper 32 bits are the agent's hi_tid),
 *	its timer starting at this send's completion.  Set on every
 *	transmission of it, retries included.  A provider that sends through
 *	another MAD layer (@from_qp1) needs it: that layer passes a response
 *	on only for a send of its own that waits for one (kmad_ib's QP0,
 *	Documentation/kmad_ib.rst).  Others ignore it.
 *
 * The provider copies what it needs during post_send(); the structure
 * itself is not valid after the call returns.
 */
struct kmad_hw_send {
	struct kmad_cqe *cqe;
	const void *mad;
	u32 len;
	u16 dlid;
	u32 remote_qpn;
	u32 remote_qkey;
	u8 sl;
	u16 pkey_index;
	const struct kmad_ah_attr *ah_attr;
	void *ah;
	bool from_qp1;
	bool expects_resp;
};

/**
 * struct kmad_hw_recv - a receive work request.
 * @cqe: completion context to report in the receive's &struct kmad_wc.
 * @buf: where to place an incoming packet: %KMAD_GRH_BYTES of GRH area,
 *	then the MAD.
 * @len: size of @buf (GRH area included).
 */
struct kmad_hw_recv {
	struct kmad_cqe *cqe;
	void *buf;
	u32 len;
};

/**
 * struct kmad_provider_ops - operations a provider implements.
 * @owner: module that implements them.
 * @create_cq: set up provider state for @cq with room for @depth CQEs.
 *	Process context.
 * @destroy_cq: tear it down.  Called after the CQ's QPs are destroyed.
 * @create_qp: set up QP @qp (number kmad_qp_num()) whose sends and receives
 *	complete on @cq, with @sq_depth send and @rq_depth receive slots.
 *	The QP starts in %KMAD_QPS_RESET.  Process context.  A provider whose
 *	hardware QP has another number (a UD QP standing in for QP1 beside
 *	the kernel's own MAD layer, with Q_Key %KMAD_QP1_QKEY) reports it
 *	with kmad_qp_set_hw_num(): peers see it as the source QP of kmad's
 *	sends, and responses come back to it.
 * @destroy_qp: tear it down; no CQE for it may be generated afterwards.
 * @modify_qp: move @qp to @state.  Moving to %KMAD_QPS_ERR flushes all
 *	outstanding work; moving to %KMAD_QPS_RESET forgets it (kmad only does
 *	that after it has reaped the flush completions).  Process context.
 * @post_send: queue one send.  Any context but hard interrupt, possibly
 *	with interrupts disabled; must not sleep.  Returns 0, or a negative
 *	errno if the send was not queued (no CQE will come for it then; the
 *	send ends with %KMAD_SEND_LOCAL_ERROR, retries or not).  On a QP in
 *	the error state a provider should accept the send and flush it (a
 *	%KMAD_WC_FLUSH_ERR CQE): kmad then sends it again after recovery.
 * @post_recv: queue one receive buffer.  Same context as @post_send.
 * @poll_cq: move up to @nent completions into @wc; return how many (0 to
 *	@nent; a negative value counts as an empty CQ).
 * @req_notify_cq: arm @cq; see &enum kmad_cq_notify_flags.  Returns 0, or
 *	with %KMAD_CQ_REPORT_MISSED_EVENTS a positive value if the CQ may hold
 *	completions that will raise no event.  It must not fail once the CQ
 *	exists (kmad fails the QP's creation if the first arming fails; after
 *	that an arming that failed would leave the CQ silent, and sends would
 *	wait for completions no event announces).
 * @now: optional: the device's clock in jiffies; any context but hard
 *	interrupt, interrupts possibly disabled.  A provider with a
 *	virtual clock (the simulated fabric's step mode) implements it and
 *	calls kmad_device_clock_changed() after moving the clock forward;
 *	without it kmad uses jiffies and kernel timers.  It never goes
 *	backwards.  With it, send and RMPP deadlines pass only at
 *	kmad_device_clock_changed(); QP recovery backoff, receive refill
 *	retries and address handle expiry stay on jiffies.
 * @query_gid: read entry @index of the port's GID table; -EINVAL past its
 *	end, -EAGAIN for an empty entry.  Any context but hard interrupt,
 *	also with interrupts disabled (kmad_post_send() reads the source GID
 *	of a GRH send); must not sleep.  Optional: without it a port has no
 *	GIDs.
 * @query_pkey: read entry @index of the port's P_Key table; -EINVAL past
 *	its end.  Any context but hard interrupt; must not sleep.  Optional: without it a
 *	port's table is the default P_Key 0xffff alone.
 * @create_ah: optional: make an address handle for @attr on @port_num and
 *	store it in *@ah.  Process context; may sleep.  An error fails the
 *	sends waiting for it with %KMAD_SEND_LOCAL_ERROR.
 * @destroy_ah: release it; process context, after every send that used it
 *	has completed.  Required with @create_ah.
 * @bridge_add: optional, for a provider whose ports' real QP1 (and QP0)
 *	belong to another MAD layer (the kernel's ib_mad): a ULP registers
 *	an agent for unsolicited requests of @req's class, version, methods
 *	(and OUI) on @qpt of @port_num; ask that layer to pass such requests
 *	on, with kmad_device_bridge_recv() (QP1) or
 *	kmad_device_bridge_recv_qp() (either QP), and send what kmad marks
 *	&kmad_hw_send.from_qp1 (responses to them, every send of QP0)
 *	through it.  An error fails the registration with it
 *	(-EBUSY: the other layer has a user of one of the methods;
 *	-EOPNOTSUPP: the provider does not carry such MADs).
 *	Process context, may sleep; kmad holds the port's registration
 *	mutex, so it must not call kmad's registration functions.
 * @bridge_del: that agent is going: undo @bridge_add for @req.  Process
 *	context, same mutex held.  Not called once kmad_device_unregister()
 *	has returned; a provider drops its bridges itself before it calls
 *	kmad_device_unregister(), and must then take a @bridge_del (from
 *	agents flushed by the unregister) of a bridge it already dropped.
 * @modify_port_cap: optional: set the bits @set, then clear the bits
 *	@clear, of the CapabilityMask the port's SMA reports in PortInfo
 *	(as ib_modify_port() does for IsSM); see kmad_port_modify_cap().
 *	Process context, may sleep.  Return 0 or an error.
 * @query_smp: optional: answer @smp, a SubnGet of the port's own SMA,
 *	filling its data, as firmware answers its driver's own query
 *	without the M_Key check (mlx4's and mthca's MAD_IFC "ignore
 *	M_Key"); see kmad_port_query_smp().  Process context; may sleep.
 *	Return the MAD status (0 or an IBTA status, >= 0), or a negative
 *	error.
 */
struct kmad_provider_ops {
	struct module *owner;
	int (*create_cq)(struct kmad_cq *cq, unsigned int depth);
	void (*destroy_cq)(struct kmad_cq *cq);
	int (*create_qp)(struct kmad_qp *qp, struct kmad_cq *cq,
			 unsigned int sq_depth, unsigned int rq_depth);
	void (*destroy_qp)(struct kmad_qp *qp);
	int (*modify_qp)(struct kmad_qp *qp, enum kmad_qp_state state);
	int (*post_send)(struct kmad_qp *qp, const struct kmad_hw_send *wr);
	int (*post_recv)(struct kmad_qp *qp, const struct kmad_hw_recv *wr);
	int (*poll_cq)(struct kmad_cq *cq, int nent, struct kmad_wc *wc);
	int (*req_notify_cq)(struct kmad_cq *cq, unsigned int flags);
	u64 (*now)(struct kmad_device *dev);
	int (*query_gid)(struct kmad_device *dev, u8 port_num,
			 unsigned int index, union kmad_gid *gid);
	int (*query_pkey)(struct kmad_device *dev, u8 port_num,
			  unsigned int index, u16 *pkey);
	int (*create_ah)(struct kmad_device *dev, u8 port_num,
			 const struct kmad_ah_attr *attr, void **ah);
	void (*destroy_ah)(struct kmad_device *dev, u8 port_num, void *ah);
	int (*bridge_add)(struct kmad_device *dev, u8 port_num,
			  enum kmad_qp_type qpt,
			  const struct kmad_reg_req *req);
	void (*bridge_del)(struct kmad_device *dev, u8 port_num,
			   enum kmad_qp_type qpt,
			   const struct kmad_reg_req *req);
	int (*modify_port_cap)(struct kmad_device *dev, u8 port_num,
			       u32 set, u32 clear);
	int (*query_smp)(struct kmad_device *dev, u8 port_num,
			 struct kmad_smp *smp);
};

/* The largest LMC (IBTA: 3 bits), and the most send or receive slots per
 * QP (as ib_mad's IB_MAD_QP_MAX_SIZE).
 */
#define KMAD_MAX_LMC		7
#define KMAD_MAX_QP_DEPTH	8192

/**
 * struct kmad_port_attr - what a provider tells kmad about a port.
 * @lid: base LID (0 while unassigned).
 * @lmc: LID mask control, 0 to %KMAD_MAX_LMC.
 * @sm_lid: LID of the subnet manager.
 * @sq_depth: send slots per QP kmad may use (0: kmad's default; at most
 *	%KMAD_MAX_QP_DEPTH).
 * @rq_depth: receive buffers per QP kmad keeps posted (0: default; at most
 *	%KMAD_MAX_QP_DEPTH).
 * @link_layer: InfiniBand or Ethernet (RoCE).  Fixed once registered.
 * @no_smi: the port has no QP0 kmad can use (always so on Ethernet): kmad
 *	creates no SMI QP, and registering an SMI agent fails with
 *	-EOPNOTSUPP.  Fixed once registered.
 * @gid_tbl_len: entries in the GID table (read with query_gid()).
 * @pkey_tbl_len: entries in the P_Key table (read with query_pkey()): at
 *	least 1 (the default P_Key) when the provider has query_pkey;
 *	kmad_device_set_port_attr() refuses 0, and kmad_device_register() a
 *	port left with 0 (never described).  A send's P_Key index must be
 *	below it.
 *
 * kmad_device_port_changed() reads lid, lmc and sm_lid, and takes a call
 * as a sign that GIDs or P_Keys may have changed.
 */
struct kmad_port_attr {
	u16 lid;
	u8 lmc;
	u16 sm_lid;
	u32 sq_depth;
	u32 rq_depth;
	enum kmad_link_layer link_layer;
	bool no_smi;
	u32 gid_tbl_len;
	u32 pkey_tbl_len;
};

struct kmad_device *kmad_device_alloc(const struct kmad_provider_ops *ops,
				      const char *name, u8 num_ports,
				      size_t priv_size);
void *kmad_device_priv(struct kmad_device *dev);
const char *kmad_device_name(const struct kmad_device *dev);
int kmad_device_set_port_attr(struct kmad_device *dev, u8 port_num,
			      const struct kmad_port_attr *attr);
int kmad_device_register(struct kmad_device *dev);
void kmad_device_unregister(struct kmad_device *dev);
void kmad_device_free(struct kmad_device *dev);
int kmad_device_port_changed(struct kmad_device *dev, u8 port_num,
			     const struct kmad_port_attr *attr);
int kmad_device_port_reregister(struct kmad_device *dev, u8 port_num);
void kmad_device_clock_changed(struct kmad_device *dev);
void kmad_device_flush(struct kmad_device *dev);
int kmad_device_bridge_recv(struct kmad_device *dev, u8 port_num,
			    const struct kmad_wc *wc, const void *grh,
			    const void *mad, u32 mad_len);
int kmad_device_bridge_recv_qp(struct kmad_device *dev, u8 port_num,
			       enum kmad_qp_type qpt, const struct kmad_wc *wc,
			       const void *grh, const void *mad, u32 mad_len);

void kmad_cq_event(struct kmad_cq *cq);
void kmad_cq_set_priv(struct kmad_cq *cq, void *priv);
void *kmad_cq_priv(const struct kmad_cq *cq);
struct kmad_device *kmad_cq_device(const struct kmad_cq *cq);

void kmad_qp_event(struct kmad_qp *qp, enum kmad_qp_event_type event);
void kmad_qp_set_priv(struct kmad_qp *qp, void *priv);
void *kmad_qp_priv(const struct kmad_qp *qp);
u32 kmad_qp_num(const struct kmad_qp *qp);
void kmad_qp_set_hw_num(struct kmad_qp *qp, u32 qpn);
u32 kmad_qp_hw_num(const struct kmad_qp *qp);
u8 kmad_qp_port_num(const struct kmad_qp *qp);
struct kmad_device *kmad_qp_device(const struct kmad_qp *qp);

#endif /* KMAD_PROVIDER_H */
