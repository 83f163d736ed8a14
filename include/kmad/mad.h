/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad: the API for in-kernel MAD clients (ULPs).
 *
 * A ULP finds ports through a &struct kmad_client (or kmad_port_get()),
 * registers &struct kmad_agent s on a port's QP0 (SMI) or QP1 (GSI),
 * allocates &struct kmad_send_buf s, fills and posts them, and gets exactly
 * one send_handler callback per posted send.  Unsolicited MADs for the
 * agent's class, version and methods, and responses to its requests, come
 * to its recv_handler.  An unsolicited MAD (a request, or a response
 * given as unsolicited to an agent without @rmpp_version) that finds 1024
 * MADs (or 32 MiB of RMPP messages) waiting for the agent's recv_handler
 * is dropped and counted (requests_dropped_backlog,
 * Documentation/ulp-guide.rst), as a full receive queue drops it under
 * ib_mad; an RMPP message whose last segment kmad has ACKed is queued all
 * the same.
 *
 * Callback context: send_handler and recv_handler run in process context on
 * kmad's workqueue, never from inside a kmad call the ULP makes (post,
 * cancel, modify, free, unregister...), so a ULP may hold its own locks
 * around post, cancel, modify and free.  Not around unregister: it waits
 * for the agent's handlers to be called (every send's callback, the
 * queued receives), so a lock one of them takes, held around
 * kmad_unregister_agent(), deadlocks, as with ib_mad.  Every handler of
 * an agent runs from that agent's own work item, never from a CQ drain,
 * so a handler may sleep and wait for kmad:
 * it may post, cancel and free send buffers, call kmad_port_get(),
 * register clients (their add callbacks then run later, from kmad's event
 * workqueue), and register or unregister any *other* agent, also during
 * device removal.  Unregistering its own agent from its handler is
 * refused with -EDEADLK (never a hang).  Handlers of two agents must not
 * unregister each other's agent (nor any cycle of agents): each would wait
 * for the other's handler to return, as with two locks taken in opposite
 * orders; kmad does not detect it.  A handler must not call
 * kmad_unregister_client(): it runs the client's remove callbacks under
 * the lock a device removal holds while its own remove callbacks wait for
 * agents' handlers (kmad warns once, and goes on).
 *
 * Bad pointers: every call that takes an agent, a send buffer or a
 * received MAD treats NULL and an error pointer (what a failed
 * kmad_register_agent(), kmad_alloc_send_buf() or kmad_create_response()
 * returned) alike: kmad_free_send_buf() and kmad_free_recv() ignore them,
 * kmad_unregister_agent() returns 0 for NULL and -EINVAL for an error
 * pointer, kmad_agent_get_stats() and kmad_agent_set_flow_limit() warn
 * once and do nothing, the others return -EINVAL (or an error pointer;
 * NULL from kmad_send_buf_seg(), 0 from kmad_send_buf_seg_count()).
 * The same for a port: kmad_port_put() ignores it, the calls returning an
 * int give -EINVAL, kmad_port_dev_name() NULL, the other port getters 0
 * (false, %KMAD_LINK_LAYER_INFINIBAND).  Clients: kmad_register_client()
 * of a client registered already gives -EBUSY, and from a client
 * callback -EDEADLK; kmad_unregister_client() ignores NULL and a client
 * not registered (warns once and ignores the call from a client
 * callback).
 *
 * Calling context: kmad_post_send(), kmad_cancel_send(), kmad_modify_send(),
 * kmad_alloc_send_buf(), kmad_alloc_send_buf_rmpp() and
 * kmad_create_response() with GFP_ATOMIC, kmad_send_buf_seg_count(),
 * kmad_send_buf_seg(), kmad_send_buf_set_dr_path(), kmad_free_send_buf(),
 * kmad_free_recv(), kmad_dest_from_wc(), kmad_agent_get_stats(),
 * kmad_agent_set_flow_limit(), kmad_port_query_gid(),
 * kmad_port_query_pkey() and the port getters (kmad_port_lid() and the
 * like) may be called in any context but hard interrupt: process context,
 * softirq (timers, tasklets), and with interrupts disabled under the
 * ULP's own spin_lock_irqsave() (as ib_cm calls ib_mad).  They never
 * sleep.  Everything else (registration, unregistration, client calls,
 * kmad_port_get(), kmad_port_put(), kmad_port_query_smp(),
 * kmad_port_modify_cap(), the allocations with GFP_KERNEL) needs process
 * context.
 *
 * Send life cycle, as the contract requires:
 *
 * - A send that expects a response (timeout_ms != 0) holds two references:
 *   one for its send completion and one for its response or timeout.  A
 *   send without a timeout holds one.  (An RMPP send holds the second
 *   one in any case, for the end of its transfer: the final ACK.)
 * - Cancel drops the response reference only if a timeout was set (or
 *   the send is an RMPP one); from then on no response matches the send.
 * - send_handler runs exactly once per successfully posted send, and never
 *   before the hardware has completed the send.  A send the hardware does
 *   not hold (it waits for a send queue slot or an address handle, or to
 *   be sent again after a QP error) and that is canceled, flushed or
 *   answered meanwhile ends at once, never sent (again).
 * - A response that arrives before the send completion waits for it: the
 *   ULP sees recv_handler for the response, then send_handler, both after
 *   the send completion (or at once, if the hardware does not hold the
 *   send, as above).
 * - A response matches an outstanding request of the agent by TID and
 *   management class, and only if it came back to the address the request
 *   left from (ib_mad's rule): a request sent with a GRH is matched only by
 *   a response with a GRH whose DGID is the request's source GID (the
 *   port's GID at the request's sgid_index, read when the response
 *   arrives, as ib_mad reads it); a
 *   request without a GRH only by a response without one whose
 *   destination path bits equal the request's source path bits
 *   (&kmad_dest.src_path_bits) in the port's LMC bits.  Directed-route
 *   SMPs are not checked.  The
 *   responder's own LID is not checked: IBTA lets it answer from any LID
 *   of its LMC range.  A response that fails the check is dropped as
 *   unmatched, except an RMPP-active one for an agent without
 *   @rmpp_version (&struct kmad_agent_reg), which gets it as unsolicited,
 *   as ib_mad does.
 * - An RMPP send (kmad_alloc_send_buf_rmpp(), Documentation/rmpp.rst)
 *   is one send for these rules: one send_handler call, after the send
 *   completion of every segment it posted; it ends at the receiver's
 *   final ACK (or at its response after it, for a request with a
 *   timeout), a STOP or ABORT (%KMAD_SEND_REMOTE_ABORT), or as any send.
 * - kmad_unregister_agent() first marks the agent unregistering, under
 *   the agent's lock: every kmad_post_send() from then on fails with
 *   -ESHUTDOWN.  In the same hold of the lock it ends every send not
 *   ended yet with %KMAD_SEND_FLUSHED (no response matches one, no
 *   deadline retries or times one out from the mark on) and then waits:
 *   every send whose kmad_post_send()
 *   returned 0 gets its callback before unregister returns; after it
 *   returns no handler runs.  A MAD queued for the agent's recv_handler
 *   before the mark is still handed to it while unregister waits; none
 *   is queued after the mark: a request found for the agent before the
 *   mark is answered as one no agent takes for its method (status
 *   0x0008 on QP1, 0x000C on QP0: the class was registered when it
 *   arrived), or dropped if RMPP already ACKed it whole; a response is
 *   unmatched.
 */
#ifndef KMAD_MAD_H
#define KMAD_MAD_H

#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/types.h>
#include <kmad/wire.h>

struct kmad_port;
struct kmad_agent;

/** KMAD_METHODS - methods per class (the RESP bit excluded). */
#define KMAD_METHODS 128

/**
 * KMAD_MAX_CLASS_VERSION - class versions an agent registers for are
 * below this.  IBTA's classes have versions 1 and 2; ib_mad's limit
 * (MAX_MGMT_VERSION) is 0x83, for OPA's 0x80 and 0x81.
 */
#define KMAD_MAX_CLASS_VERSION 8

/**
 * enum kmad_qp_type - which QP an agent is registered on.
 * @KMAD_QPT_SMI: QP0, subnet management packets.
 * @KMAD_QPT_GSI: QP1, general services.
 */
enum kmad_qp_type {
	KMAD_QPT_SMI = 0,
	KMAD_QPT_GSI = 1,
};

/**
 * struct kmad_client - a ULP that wants to know about ports.
 * @name: for messages and debugfs.
 * @add: called for every port, present or later added; return 0, or an
 *	error to ignore the port.  *@data is passed back to @remove.  kmad
 *	allocates its record of each port before any add call, so that an
 *	allocation failure fails kmad_register_client() (-ENOMEM, no add
 *	called) or the device's registration as a whole, never one add.
 * @remove: called when a port goes away or the client unregisters.  The
 *	client must unregister its agents on @port before returning.
 * @port_changed: optional; called after each port event the provider
 *	reports (kmad_device_port_changed(), kmad_device_port_reregister()):
 *	a new LID, LMC or SM LID, a changed GID or P_Key table, the subnet
 *	manager's request that the port's clients register with it again,
 *	or an event that changed none of these (kmad_ib: port active or
 *	down).  kmad does not say what changed, and reports close together
 *	may give one call: read the values with kmad_port_lid(),
 *	kmad_port_lmc(), kmad_port_sm_lid(), kmad_port_query_gid(),
 *	kmad_port_query_pkey() and kmad_port_reregisters() (which moves after
 *	a PortInfo ClientReregister, IBTA 14.4.11: a new SM, or one that
 *	lost its state; several close together may move it once).  A client
 *	that subscribed to reports (InformInfo) or joined multicast groups
 *	keeps the count, LID and SM LID it last saw (from @add on) and does
 *	so again when one of them has moved, as ib_sa's users do.  Runs in
 *	process context on a kmad workqueue, never before @add or after
 *	@remove for the port; may also tell of a change @add already saw.
 * @list: kmad's; do not touch.
 *
 * The three callbacks run under kmad's client lock, serialized with one
 * another and with client and device registration: they must not register
 * or unregister clients or devices, or call kmad_device_flush().  kmad
 * catches the client calls (kmad_register_client() returns -EDEADLK,
 * kmad_unregister_client() warns and does nothing).  They may call
 * kmad_port_get(), which does not take that lock.
 */
struct kmad_client {
	const char *name;
	int (*add)(struct kmad_client *client, struct kmad_port *port,
		   void **data);
	void (*remove)(struct kmad_client *client, struct kmad_port *port,
		       void *data);
	void (*port_changed)(struct kmad_client *client,
			     struct kmad_port *port, void *data);
	struct list_head list;
};

int kmad_register_client(struct kmad_client *client);
void kmad_unregister_client(struct kmad_client *client);

struct kmad_port *kmad_port_get(const char *dev_name, u8 port_num);
void kmad_port_put(struct kmad_port *port);
const char *kmad_port_dev_name(const struct kmad_port *port);
u8 kmad_port_num(const struct kmad_port *port);
u16 kmad_port_lid(const struct kmad_port *port);
u8 kmad_port_lmc(const struct kmad_port *port);
u16 kmad_port_sm_lid(const struct kmad_port *port);
u32 kmad_port_reregisters(const struct kmad_port *port);

/**
 * union kmad_gid - a 128-bit GID, in network byte order.
 * @raw: the 16 bytes.
 * @global: subnet prefix and interface ID.
 * @global.subnet_prefix: upper 64 bits.
 * @global.interface_id: lower 64 bits (the port GUID for GID index 0 on IB).
 */
union kmad_gid {
	u8 raw[16];
	struct {
		__be64 subnet_prefix;
		__be64 interface_id;
	} global;
};

/**
 * enum kmad_link_layer - what a port's link is.
 * @KMAD_LINK_LAYER_INFINIBAND: InfiniBand: LID routed, GRH optional,
 *	QP0 exists.
 * @KMAD_LINK_LAYER_ETHERNET: RoCE: LIDs are 0 and mean nothing, every
 *	packet carries a GRH, there is no QP0.
 */
enum kmad_link_layer {
	KMAD_LINK_LAYER_INFINIBAND,
	KMAD_LINK_LAYER_ETHERNET,
};

enum kmad_link_layer kmad_port_link_layer(const struct kmad_port *port);
bool kmad_port_has_smi(const struct kmad_port *port);
int kmad_port_qp_num(const struct kmad_port *port, enum kmad_qp_type qpt,
		     u32 *qpn);
/*
 * kmad_port_query_gid() and kmad_port_query_pkey() return 0; -ENODEV once
 * the device is gone (whatever the index); else -EINVAL for an index past
 * the end of the table (a provider without query_pkey has one P_Key,
 * 0xffff at index 0; one without query_gid no GID), -EAGAIN for an empty
 * GID entry, or the provider's error.
 */
int kmad_port_query_gid(struct kmad_port *port, unsigned int index,
			union kmad_gid *gid);
int kmad_port_query_pkey(struct kmad_port *port, unsigned int index,
			 u16 *pkey);
int kmad_port_modify_cap(struct kmad_port *port, u32 set, u32 clear);
/*
 * kmad_port_query_smp(): a SubnGet answered by the port's own SMA through
 * the provider, as a driver asks its firmware: no MAD on the wire, no
 * M_Key check; process context, may sleep.  Returns the MAD status
 * (>= 0), -EOPNOTSUPP if the provider cannot or the port has no QP0 (send
 * a local directed-route SMP instead), -ENODEV once the device is gone,
 * -EINVAL for anything but a SubnGet.
 */
int kmad_port_query_smp(struct kmad_port *port, struct kmad_smp *smp);

/**
 * struct kmad_reg_req - what an agent registers to receive.
 * @mgmt_class: management class; 0 registers a send-only agent (its
 *	@method_mask, if any, ignored: ib_mad refuses class 0) that gets
 *	no unsolicited requests: only responses to its own requests (and,
 *	without @rmpp_version, the RMPP-active ones that match none of them,
 *	see @rmpp_version).
 * @class_version: class version, 1-7: 0 is no class's and 8 on no IB
 *	class's (kmad refuses both, -EINVAL, where ib_mad takes 0 to 0x82).
 *	For a class with one version (kmad_mgmt_class_version(): SMP 1,
 *	SA 2, PerfMgt 1, CM 2, CongMgt 2) MADs of any other version are
 *	dropped on receipt, so a registration for another version, which
 *	is taken (as ib_mad takes it), gets no unsolicited MAD.
 * @method_mask: bit m set: unsolicited requests with method m come here;
 *	at least one bit.  MADs with a method IBTA reserves (0x00, 0x04,
 *	0x08-0x0F), or one their class does not define (a PerfMgt Report,
 *	an SMP Send...), are dropped on receipt (kmad_mad_validate(), the
 *	rules at the top of wire.c): such bits are taken but never used, so
 *	a mask with every bit set (bitmap_fill()) takes every method.
 * @oui: for vendor classes 0x30-0x4F: the vendor's OUI.
 * @rmpp_version: 0: kmad passes the agent's MADs through as single
 *	256-byte MADs, RMPP header and all, for the agent to do RMPP itself
 *	if it wants (user-level RMPP, as ib_mad allows it): a multi-segment
 *	response to one of its requests completes the request with its first
 *	segment, and every later RMPP-active response packet with its hi_tid
 *	that matches no request of it (the later segments, ACK, STOP, ABORT)
 *	comes to its recv_handler as unsolicited (request NULL), if it has
 *	one; kmad ACKs none of them.  %KMAD_RMPP_VERSION: kmad does
 *	RMPP (IBTA 13.6, Documentation/rmpp.rst) for the agent: sends from
 *	kmad_alloc_send_buf_rmpp() are segmented and sent in windows,
 *	RMPP-active DATA segments it receives are reassembled and handed to
 *	recv_handler as one buffer (&kmad_recv_wc.mad_len), and the ACK,
 *	STOP and ABORT packets of its transfers are kmad's.  Only on QP1
 *	(no SMP class has the RMPP header), for classes with an RMPP header
 *	(kmad_mgmt_class_has_rmpp()) or a send-only agent (@mgmt_class 0);
 *	any other value, class or QP is -EINVAL.
 */
struct kmad_reg_req {
	u8 mgmt_class;
	u8 class_version;
	DECLARE_BITMAP(method_mask, KMAD_METHODS);
	u8 oui[3];
	u8 rmpp_version;
};

/**
 * enum kmad_send_status - how a send ended.
 * @KMAD_SEND_OK: sent, and the expected response (if any) was received.
 * @KMAD_SEND_RESP_TIMEOUT: no response within timeout_ms, retries used up.
 * @KMAD_SEND_CANCELED: canceled by kmad_cancel_send() or
 *	kmad_modify_send(buf, 0).
 * @KMAD_SEND_FLUSHED: its agent unregistered or its port went away.
 * @KMAD_SEND_LOCAL_ERROR: the hardware failed to send it.
 * @KMAD_SEND_REMOTE_ABORT: an RMPP send the receiver stopped (STOP) or
 *	aborted (ABORT), or that kmad aborted because the receiver broke
 *	the protocol (Documentation/rmpp.rst).
 */
enum kmad_send_status {
	KMAD_SEND_OK,
	KMAD_SEND_RESP_TIMEOUT,
	KMAD_SEND_CANCELED,
	KMAD_SEND_FLUSHED,
	KMAD_SEND_LOCAL_ERROR,
	KMAD_SEND_REMOTE_ABORT,
};

/**
 * struct kmad_grh_attr - the global route of a send (its GRH).
 * @dgid: destination GID.
 * @flow_label: flow label (20 bits).
 * @sgid_index: index of the source GID in the port's GID table.
 * @hop_limit: hop limit (0 is replaced by 64 for a GID-routed send
 *	on an Ethernet port, where 0 would not leave the host).
 * @traffic_class: traffic class.
 */
struct kmad_grh_attr {
	union kmad_gid dgid;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
};

/**
 * struct kmad_dest - where a send goes.
 * @dlid: destination LID; KMAD_PERMISSIVE_LID for directed-route SMPs
 *	whose directed part starts here (a DrSLID, for a request, or a
 *	DrDLID, for a response, that is permissive; else the LID where it
 *	starts).  0 on an Ethernet (RoCE) port, where @grh routes the send.
 * @sl: service level, 0 to %KMAD_MAX_SL (kmad_post_send() refuses more).
 * @grh_present: send with a GRH built from @grh.  Required on an Ethernet
 *	port (kmad_post_send() fails with -EINVAL without it); refused for
 *	SMPs, which never carry a GRH.
 * @remote_qpn: destination QP: 0 for SMPs, 1 for GMPs (or a redirected QP).
 * @remote_qkey: Q_Key; KMAD_QP1_QKEY for QP1.
 * @pkey_index: P_Key index: an entry of the port's P_Key table
 *	(kmad_port_query_pkey() reads it; both it and kmad_post_send()
 *	refuse an index past its end with -EINVAL).  kmad_create_response()
 *	sets the index the request arrived with.
 * @from_qp1: send from the port's real QP1, through the MAD layer that
 *	owns it, instead of from kmad's own QP (whose number may not be 1,
 *	see kmad_qp_set_hw_num()).  Set by kmad_create_response() (and for
 *	kmad's own "unsupported" answers) for requests that arrived there,
 *	through the provider's bridge (&kmad_recv_wc.bridged), so that the
 *	requester sees the response come from QP1, as IBTA has it.  Only
 *	valid on QP1 of a provider with a bridge (&kmad_provider_ops.bridge_add):
 *	kmad_post_send() fails with -EINVAL on any other, and on every
 *	request but a Send posted without a timeout: a response (or an
 *	RMPP transfer's ACKs) would reach the other MAD layer, which
 *	matches it against its own requests' TIDs, not kmad's (and could
 *	complete one of them).  A Send gets no response (a CM peer answers
 *	with a new Send, which the bridge passes to kmad's agents).
 * @src_path_bits: the low LMC bits of the port's LID to send from (the
 *	source LID is the port's base LID with these bits, masked to its
 *	LMC: 0 is the base LID), as &rdma_ah_attr's path bits.  A response
 *	to it must come back to them (the request's path bits, within the
 *	LMC, are one of the things it is matched by).
 *	kmad_create_response() sets them to the bits the request was sent
 *	to (&kmad_recv_wc.dlid_path_bits), so that it is answered from the
 *	LID it reached, as ib_mad answers.
 * @grh: the global route; read only with @grh_present.
 *
 * The members are ordered to leave no holes (40 bytes): every send buffer
 * carries one.
 */
struct kmad_dest {
	u16 dlid;
	u8 sl;
	bool grh_present;
	u32 remote_qpn;
	u32 remote_qkey;
	u16 pkey_index;
	bool from_qp1;
	u8 src_path_bits;
	struct kmad_grh_attr grh;
};

/** KMAD_MAX_SL - the highest service level (four bits on the wire). */
#define KMAD_MAX_SL 15

/** KMAD_PERMISSIVE_LID - the permissive LID, for directed-route SMPs. */
#define KMAD_PERMISSIVE_LID 0xffff

/**
 * KMAD_MAX_TIMEOUT_MS - the longest response timeout, in milliseconds
 * (2^31 - 1, 24.8 days): msecs_to_jiffies() makes any longer one an
 * infinite timeout, so kmad_post_send() and kmad_modify_send() refuse it.
 */
#define KMAD_MAX_TIMEOUT_MS INT_MAX

/**
 * struct kmad_send_buf - a MAD to send, owned by the ULP between
 * kmad_alloc_send_buf() and kmad_free_send_buf().
 * @agent: the agent it was allocated for; set by kmad_alloc_send_buf(),
 *	never changed by the ULP.
 * @mad: the 256-byte MAD, filled by the ULP before posting (of an RMPP
 *	buffer: segment 1, see kmad_send_buf_seg()).
 * @dest: destination.
 * @timeout_ms: 0: no response expected; else how long to wait for one
 *	after each transmission, at most %KMAD_MAX_TIMEOUT_MS.  A response
 *	(kmad_mad_is_response()) waits for none: kmad_post_send() refuses
 *	one with a timeout (-EINVAL), except an RMPP response, for which it
 *	is only the ACK timeout.  kmad_modify_send() sets it to its new
 *	timeout, as ib_modify_mad() does (to 0 when that cancels the send).
 *	For an RMPP send also the wait for each ACK (at most 2 s; 2 s when
 *	0), Documentation/rmpp.rst.
 * @retries: how many times to resend after a timeout (same TID); for an
 *	RMPP send, after an ACK timeout, from the last segment acknowledged
 *	(an ACK that acknowledges more gives them back).  Each resend counts
 *	in &kmad_agent_stats.retries.
 * @context: for the ULP.
 *
 * A posted buffer must not be changed or freed until its send_handler has
 * run; it may then be freed (also from inside send_handler) or posted
 * again.  kmad reads @dest while the send is posted (to address it, each
 * time it is transmitted, and to check where its response came back to),
 * rather than keep a copy.  Only kmad allocates one: the calls that take
 * a send buffer refuse a structure the caller made itself (its @mad not
 * kmad's) before reading past it: -EINVAL, NULL or 0, and a warning from
 * kmad_free_send_buf().
 */
struct kmad_send_buf {
	struct kmad_agent *agent;
	struct kmad_mad *mad;
	struct kmad_dest dest;
	unsigned int timeout_ms;
	unsigned int retries;
	void *context[2];
};

/**
 * struct kmad_send_wc - what send_handler is told.
 * @send_buf: the send.
 * @status: how it ended.
 */
struct kmad_send_wc {
	struct kmad_send_buf *send_buf;
	enum kmad_send_status status;
};

/**
 * struct kmad_recv_grh - the GRH a MAD arrived with.
 * @sgid: the sender's GID.
 * @dgid: the GID it was sent to (one of this port's).
 * @flow_label: flow label.
 * @traffic_class: traffic class.
 * @hop_limit: hop limit left on arrival.
 * @dgid_index_valid: the provider told which entry of the port's GID
 *	table the MAD arrived at: @dgid_index.  On a RoCE port that is
 *	@dgid on the network device (VLAN) and of the RoCE type the MAD
 *	came with, as ib_core's ib_init_ah_attr_from_wc() picks it.  An
 *	answer (kmad_create_response(), kmad_dest_from_wc()) then names
 *	that entry as its source; otherwise the lowest entry holding @dgid.
 *	(kmad_ib builds a RoCE handle on the entry's v2 twin where the port
 *	has RoCE v2, for every send: Documentation/kmad_ib.rst.)
 * @dgid_index: that entry.
 */
struct kmad_recv_grh {
	union kmad_gid sgid;
	union kmad_gid dgid;
	u32 flow_label;
	u8 traffic_class;
	u8 hop_limit;
	bool dgid_index_valid;
	u8 dgid_index;
};

/**
 * struct kmad_recv_wc - a received MAD, owned by the ULP from recv_handler
 * until kmad_free_recv().
 * @mad: the MAD (validated header): @mad_len bytes.
 * @mad_len: %KMAD_MAD_SIZE, or for an RMPP message kmad reassembled (an
 *	agent registered with &kmad_reg_req.rmpp_version): its first
 *	segment whole, then the data of every later segment (each from
 *	kmad_rmpp_hdr_len() of the class on), contiguous, ending where the
 *	PayloadLength of the message ends -- the layout ib_umad gives user
 *	space.  An RMPP message of one segment keeps its 256-byte buffer,
 *	but its @mad_len, too, ends where its PayloadLength does (36 +
 *	PayloadLength; %KMAD_MAD_SIZE for a PayloadLength above 220).
 * @slid: sender's LID (0 on an Ethernet port).
 * @src_qpn: sender's QP.
 * @sl: service level.
 * @pkey_index: P_Key index.
 * @qpt: the QP it arrived on.
 * @dlid_path_bits: the low LMC bits of the LID it was sent to.
 * @grh_present: it carried a GRH (always on an Ethernet port).
 * @grh: that GRH; read only with @grh_present.
 * @bridged: it arrived at the port's real QP1, owned by another MAD layer,
 *	and came through the provider's bridge (kmad_device_bridge_recv()):
 *	kmad_create_response() answers it from there (&kmad_dest.from_qp1).
 */
struct kmad_recv_wc {
	const struct kmad_mad *mad;
	size_t mad_len;
	u16 slid;
	u32 src_qpn;
	u8 sl;
	u16 pkey_index;
	enum kmad_qp_type qpt;
	u8 dlid_path_bits;
	bool grh_present;
	struct kmad_recv_grh grh;
	bool bridged;
};

/**
 * typedef kmad_send_handler - a send ended.
 * @agent: the agent that posted it.
 * @wc: which send and how it ended.
 */
typedef void (*kmad_send_handler)(struct kmad_agent *agent,
				  struct kmad_send_wc *wc);

/**
 * typedef kmad_recv_handler - a MAD arrived for the agent.
 * @agent: the agent.
 * @request: for a response, the agent's send it matched (still owned by
 *	kmad until its send_handler); NULL for an unsolicited MAD.
 * @wc: the MAD; release it with kmad_free_recv().
 */
typedef void (*kmad_recv_handler)(struct kmad_agent *agent,
				  struct kmad_send_buf *request,
				  struct kmad_recv_wc *wc);

/**
 * struct kmad_agent - a registered agent (read-only for the ULP).
 * @port: its port.
 * @qpt: its QP.
 * @hi_tid: the upper 32 bits kmad puts in the TID of its requests: 1 to
 *	2^24 - 1, as ib_mad's (the TID's top byte stays 0).
 * @send_handler: called once per posted send.
 * @recv_handler: called for matched responses and unsolicited MADs.
 * @context: the ULP's.
 */
struct kmad_agent {
	struct kmad_port *port;
	enum kmad_qp_type qpt;
	u32 hi_tid;
	kmad_send_handler send_handler;
	kmad_recv_handler recv_handler;
	void *context;
};

/*
 * kmad_register_agent() returns the agent or an ERR_PTR (the full list in
 * its kernel-doc, drivers/kmad/agent.c): -EINVAL for a NULL port or
 * send_handler (required even for a send-only agent, where ib_mad takes
 * NULL), a NULL recv_handler with a class, an unknown qpt, an SMP class
 * on QP1 or a GMP class on QP0, a reserved class (0x02, 0x50-0x80,
 * 0x82-0xFF), class version 0 or above 7, an empty method mask (register
 * class 0 for a send-only agent, whatever its mask; ib_mad takes an empty
 * mask, and refuses class 0), an OUI
 * missing for a class 0x30-0x4F or given to another class, a bad
 * rmpp_version; -EBUSY if a method overlaps another agent's registration
 * of the class, version and OUI, or if no hi_tid is free (2^24 - 1
 * agents); -EOPNOTSUPP for QP0 on a port without one; -ENODEV if the
 * port is going away; -ENOMEM; and, on a provider that passes requests
 * on from another MAD layer (provider.h, bridge_add), any error of its
 * bridge_add() (kmad_ib: -EBUSY if an ib_mad agent holds a method of the
 * registration, -EOPNOTSUPP for a QP0 class other than 0x01 on an
 * InfiniBand port, -ENOMEM).  kmad_unregister_agent()
 * returns 0, -EINVAL (error pointer) or -EDEADLK (from the agent's own
 * handler).
 */
struct kmad_agent *kmad_register_agent(struct kmad_port *port,
				       enum kmad_qp_type qpt,
				       const struct kmad_reg_req *req,
				       kmad_send_handler send_handler,
				       kmad_recv_handler recv_handler,
				       void *context);
int kmad_unregister_agent(struct kmad_agent *agent);

/**
 * struct kmad_agent_stats - an agent's counters since it registered (also
 * shown in debugfs, port<N>/stats).
 * @posted: sends posted.
 * @completed: send_handler calls.
 * @responses: responses matched to the agent's requests.
 * @unsolicited: unsolicited MADs given to its recv_handler.
 * @timeouts: sends ended with %KMAD_SEND_RESP_TIMEOUT.
 * @retries: resends after a timeout: one per expiry that resends, also
 *	an RMPP send's resend after an ACK timeout (whose retries an ACK
 *	gives back: this counter is never lowered).
 * @canceled: sends ended as %KMAD_SEND_CANCELED.
 * @flushed: sends ended as %KMAD_SEND_FLUSHED.
 * @timeout_late_max_us: the longest delay seen from a send's last
 *	deadline to its %KMAD_SEND_RESP_TIMEOUT callback, in microseconds
 *	(deadlines are kept in jiffies: the resolution is one tick); U64_MAX
 *	for one too long to count in u64 nanoseconds (only a provider's
 *	virtual clock jumps that far).
 */
struct kmad_agent_stats {
	u64 posted;
	u64 completed;
	u64 responses;
	u64 unsolicited;
	u64 timeouts;
	u64 retries;
	u64 canceled;
	u64 flushed;
	u64 timeout_late_max_us;
};

void kmad_agent_get_stats(struct kmad_agent *agent,
			  struct kmad_agent_stats *stats);

/*
 * Solicited flow control (Documentation/send-lifecycle.rst): a request
 * with a timeout of the SA, CM or SMP class (not RMPP-active for an agent
 * registered with an rmpp_version: an agent doing RMPP itself has its
 * RMPP-active requests counted, as upstream's is_solicited_fc_mad())
 * holds one of
 * its agent's slots until its response, timeout, cancel or error; a post
 * with no slot free is accepted (0) and waits, in posting order, until
 * one frees: only then is it sent and does its timeout start.  Limits per
 * agent from kmad's module parameters flow_limit_sa (16), flow_limit_cm,
 * flow_limit_smp and flow_limit_send_only (128), by registered class;
 * other classes, and agents without a recv_handler, have none.  0 is no
 * limit.
 */
void kmad_agent_set_flow_limit(struct kmad_agent *agent, unsigned int limit);

struct kmad_send_buf *kmad_alloc_send_buf(struct kmad_agent *agent,
					  const struct kmad_dest *dest,
					  gfp_t gfp);
void kmad_free_send_buf(struct kmad_send_buf *buf);

/**
 * KMAD_RMPP_MAX_DATA_LEN - the most data one RMPP send carries (64 MiB),
 * for kmad_alloc_send_buf_rmpp().
 */
#define KMAD_RMPP_MAX_DATA_LEN	(64U << 20)

struct kmad_send_buf *kmad_alloc_send_buf_rmpp(struct kmad_agent *agent,
					       const struct kmad_dest *dest,
					       unsigned int hdr_len,
					       size_t data_len, gfp_t gfp);
/*
 * kmad_send_buf_seg_count() is 1 for a buffer from kmad_alloc_send_buf().
 * kmad_send_buf_seg() returns segment @seg_num, 1 to the count (1 is
 * &kmad_send_buf.mad), and NULL for 0 or a number past the count.
 */
unsigned int kmad_send_buf_seg_count(const struct kmad_send_buf *buf);
struct kmad_mad *kmad_send_buf_seg(struct kmad_send_buf *buf,
				   unsigned int seg_num);
int kmad_send_buf_set_dr_path(struct kmad_send_buf *buf, const u8 *path,
			      u8 hop_cnt);
/*
 * Return codes (the full lists in their kernel-doc, drivers/kmad/send.c):
 *
 * - kmad_post_send(): 0, and send_handler will run once; else nothing is
 *   sent, no callback runs and the MAD is left as it was.  -EINVAL for a
 *   bad buffer, one already posted (until its send_handler has run), a
 *   bad address or timeout (&kmad_dest, %KMAD_MAX_TIMEOUT_MS), a response
 *   with a timeout (not an RMPP one: &kmad_send_buf.timeout_ms); -EBUSY for
 *   a request (with or without a timeout) with the TID of another request
 *   of the agent that still waits for its response (a response could not
 *   tell them apart: give each request its own TID; ib_mad takes the
 *   second and matches the response to either; kmad does not check
 *   against requests posted without a timeout, which wait for none), or an
 *   RMPP request whose transfer another one to the same peer has;
 *   -ESHUTDOWN once kmad_unregister_agent() of the agent has started
 *   (not one refused with -EDEADLK), or once its port has started going
 *   away (device removal).
 * - kmad_cancel_send(): 0 if this call ended it (its callback follows with
 *   %KMAD_SEND_CANCELED); -EALREADY if its outcome was decided already (a
 *   response matched, it timed out, failed, was canceled or flushed, even
 *   if its callback has not run yet); -EINVAL if it is not posted (never,
 *   or its callback has run or is being called: the send is the ULP's
 *   again just before its send_handler is called).
 * - kmad_modify_send(): 0; -EINVAL if it is not posted, or (@timeout_ms
 *   not 0) waits for no response (posted without a timeout: there is no
 *   timeout to change, where ib_modify_mad() returns 0 and changes
 *   nothing), or for a
 *   @timeout_ms above %KMAD_MAX_TIMEOUT_MS; -EALREADY as for cancel.
 *   With @timeout_ms 0 it is kmad_cancel_send().
 *
 * Once kmad_unregister_agent() has returned, a buffer of that agent may
 * only be freed (kmad_free_send_buf()): the agent is gone, and posting,
 * canceling or modifying it is a use after free, as with ib_mad.
 * Freeing a buffer or a received MAD twice is a bug kmad does not catch.
 *
 * A directed-route SMP advances its hop pointer when posted (the SMI
 * send step): to post the same buffer again, set its path again with
 * kmad_send_buf_set_dr_path() first (a repost as it is gets -EINVAL, or
 * for a one-hop path goes out with a hop pointer past its path).
 */
int kmad_post_send(struct kmad_send_buf *buf);
int kmad_cancel_send(struct kmad_send_buf *buf);
int kmad_modify_send(struct kmad_send_buf *buf, unsigned int timeout_ms);

void kmad_free_recv(struct kmad_recv_wc *wc);
int kmad_dest_from_wc(struct kmad_port *port, const struct kmad_recv_wc *wc,
		      struct kmad_dest *dest);
struct kmad_send_buf *kmad_create_response(struct kmad_agent *agent,
					   const struct kmad_recv_wc *req,
					   gfp_t gfp);

#endif /* KMAD_MAD_H */
