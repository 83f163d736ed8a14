/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_sim private: the simulated hardware, CQs (cq.c) and QPs (hw.c),
 * and the helpers fabric.c and step.c use to drive them.
 *
 * Locking legend (I, F, A as in fabric.h):
 *
 * C: sim_cq.lock.  A spinlock taken with interrupts disabled, in any
 *    context (kmad posts with its own spinlock held).  It guards the CQ
 *    (ring, notification state, arm hook) and also the state, queues and
 *    counters of every QP that completes on that CQ: one lock covers a QP
 *    and the CQ its CQEs go to, so a CQE is always added in the same
 *    critical section as the work request it completes leaves its queue.
 *    CQ locks are never nested with each other; F may be taken inside C.
 *    No kmad function is called with C held: events reach kmad from
 *    &sim_cq.event_work and &sim_qp.fatal_work, or from control functions
 *    after they drop C.
 *
 * A send is on exactly one of its QP's lists: @wire from post until its
 * CQE is produced, @free_sends otherwise; likewise a receive slot is on
 * @recvs from post until its CQE, @free_recvs otherwise.  The CQE is made
 * in the same critical section that moves the slot back.
 */
#ifndef KMAD_SIM_HW_H
#define KMAD_SIM_HW_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <kmad/provider.h>
#include <kmad/sim.h>

#include "fabric.h"

struct sim_qp;

/**
 * struct sim_send - a send slot.
 * @node: on &sim_qp.wire or &sim_qp.free_sends (C).
 * @cqe: kmad's completion context.
 * @mad: kmad's buffer; read at transmission, as DMA would.
 * @len: its length.
 * @dlid: destination LID.
 * @remote_qpn: destination QP.
 * @remote_qkey: Q_Key.
 * @sl: service level.
 * @pkey_index: P_Key index.
 * @attr: the whole address, GRH included (&kmad_hw_send.ah_attr).
 * @ah: the address handle it was posted with, held while on the wire,
 *	or NULL (C).
 * @due: async mode: jiffies from which it may be transmitted.
 */
struct sim_send {
	struct list_head node;
	struct kmad_cqe *cqe;
	const void *mad;
	u32 len;
	u16 dlid;
	u32 remote_qpn;
	u32 remote_qkey;
	u8 sl;
	u16 pkey_index;
	struct kmad_ah_attr attr;
	struct sim_ah *ah;
	unsigned long due;
};

/**
 * struct sim_recv - a receive slot.
 * @node: on &sim_qp.recvs or &sim_qp.free_recvs (C).
 * @cqe: kmad's completion context.
 * @buf: kmad's buffer.
 * @len: its size.
 */
struct sim_recv {
	struct list_head node;
	struct kmad_cqe *cqe;
	void *buf;
	u32 len;
};

/**
 * struct sim_cqe - a CQ ring entry.
 * @wc: the completion kmad polls.
 * @owner: the QP whose work request it completes; a QP's entries are
 *	removed from the ring when it is reset or destroyed.
 */
struct sim_cqe {
	struct kmad_wc wc;
	struct sim_qp *owner;
};

/**
 * struct sim_cq - a simulated CQ.
 * @kcq: kmad's CQ, NULL for a raw QP's (raw.c) (I).
 * @sdev: its device (I).
 * @port: the port of its QPs (kmad gives each port its own CQ): set by
 *	the first create_qp() on it, under C, and never changed; read with
 *	READ_ONCE() (NULL before).
 * @lock: C.
 * @ring: @depth entries (I pointer, C contents).
 * @depth: ring size, the depth kmad asked for (I).
 * @limit: depth advertised to tests, at most @depth; a CQE arriving when
 *	@limit are unpolled is an overflow (I).
 * @head: index of the oldest unpolled CQE (C).
 * @count: unpolled CQEs (C).
 * @notify: notification behaviour (C).
 * @armed: req_notify_cq() was called and no event has been raised since
 *	(C).
 * @unreaped_since_event: a CQE added since the last event was raised is
 *	still in the ring (C).  Exact because the ring is FIFO: those CQEs
 *	are the newest, so the flag clears when the ring empties.
 * @event_pending: step mode: an event was raised and not yet delivered by
 *	kmad_sim_fire_cq_event() (C).
 * @arm_hook: called at the start of the next req_notify_cq(), then
 *	cleared (C).
 * @arm_hook_arg: its argument (C).
 * @event_work: delivers a raised event to kmad (async mode, teardown).
 */
struct sim_cq {
	struct kmad_cq *kcq;
	struct sim_dev *sdev;
	struct sim_port *port;
	spinlock_t lock;		/* C: see the legend above */
	struct sim_cqe *ring;
	unsigned int depth;
	unsigned int limit;
	unsigned int head;
	unsigned int count;
	enum kmad_sim_notify notify;
	bool armed;
	bool unreaped_since_event;
	bool event_pending;
	void (*arm_hook)(void *arg);
	void *arm_hook_arg;
	struct work_struct event_work;
};

/**
 * struct sim_qp - a simulated QP.
 * @kqp: kmad's QP, NULL for a raw QP (raw.c) (I).
 * @cq: the CQ its sends and receives complete on; its lock is C (I).
 * @sdev: its device (I).
 * @port: its port (I).
 * @qpn: 0 or 1, or SIM_RAW_QPN for a raw QP (I).
 * @sq_depth: send slots (I).
 * @rq_depth: receive slots (I).
 * @users: references: one for being published, one per kmad_sim_qp_get()
 *	(A).
 * @unused: completed when @users drops to zero (destroy_qp waits for it).
 * @state: RESET, RTS or ERR (C).
 * @wire: posted sends without a CQE yet, in post order (C).
 * @wire_len: length of @wire (C).
 * @recvs: posted receive buffers, in post order (C).
 * @free_sends: unused send slots (C).
 * @free_recvs: unused receive slots (C).
 * @sq_unpolled: sends posted whose CQE kmad has not polled; a send queue
 *	slot is busy until then, as on an HCA (C).
 * @rq_unpolled: the same for receives (C).
 * @modify_fails: per target state, how many of the next modify_qp()
 *	calls to it fail (kmad_sim_fail_modify_qp()) (C).
 * @post_recv_fails: how many of the next post_recv() calls fail
 *	(kmad_sim_fail_post_recv()) (C).
 * @post_send_fails: the same for post_send() (kmad_sim_fail_post_send())
 *	(C).
 * @send_slots: @sq_depth send slots (I).
 * @recv_slots: @rq_depth receive slots (I).
 * @tx_work: async mode: transmits @wire in order once each send is due.
 * @fatal_work: reports %KMAD_QP_EVENT_FATAL after a CQ overflow.
 */
struct sim_qp {
	struct kmad_qp *kqp;
	struct sim_cq *cq;
	struct sim_dev *sdev;
	struct sim_port *port;
	u32 qpn;
	unsigned int sq_depth;
	unsigned int rq_depth;
	refcount_t users;
	struct completion unused;
	enum kmad_qp_state state;
	struct list_head wire;
	unsigned int wire_len;
	struct list_head recvs;
	struct list_head free_sends;
	struct list_head free_recvs;
	unsigned int sq_unpolled;
	unsigned int rq_unpolled;
	unsigned int modify_fails[KMAD_QPS_ERR + 1];
	unsigned int post_recv_fails;
	unsigned int post_send_fails;
	struct sim_send *send_slots;
	struct sim_recv *recv_slots;
	struct delayed_work tx_work;
	struct work_struct fatal_work;
};

/**
 * enum sim_rx_result - what became of a MAD that reached a QP.
 * @SIM_RX_DELIVERED: placed in the next receive buffer.
 * @SIM_RX_NO_RECV: no receive buffer posted (or the QP is not in RTS).
 * @SIM_RX_TOO_LONG: longer than the buffer; the receive completed with
 *	%KMAD_WC_LOC_ERR.
 */
enum sim_rx_result {
	SIM_RX_DELIVERED,
	SIM_RX_NO_RECV,
	SIM_RX_TOO_LONG,
};

/* hw.c */
extern const struct kmad_provider_ops kmad_sim_async_ops;
extern const struct kmad_provider_ops kmad_sim_step_ops;

/* Take a reference; only while the QP is published, under F. */
static inline void sim_qp_get(struct sim_qp *qp)
{
	refcount_inc(&qp->users);
}

void kmad_sim_qp_put(struct sim_qp *qp);
struct sim_qp *kmad_sim_qp_alloc(struct sim_dev *sdev, u8 port_num, u32 qpn,
				 struct sim_cq *cq, unsigned int sq_depth,
				 unsigned int rq_depth);
void kmad_sim_qp_free(struct sim_qp *qp);
int kmad_sim_qp_modify(struct sim_qp *qp, enum kmad_qp_state state);
int kmad_sim_qp_post_send(struct sim_qp *qp, const struct kmad_hw_send *wr);
int kmad_sim_qp_post_recv(struct sim_qp *qp, const struct kmad_hw_recv *wr);
struct sim_send *kmad_sim_wire_nth(struct sim_qp *qp, unsigned int n);
bool kmad_sim_tx_locked(struct sim_qp *qp, struct sim_send *s,
			enum kmad_wc_status status, bool deliver,
			struct sim_packet *pkt);
void kmad_sim_qp_error_locked(struct sim_qp *qp);
enum sim_rx_result kmad_sim_qp_receive(struct sim_qp *qp,
				       const struct sim_packet *pkt);

/* addr.c */
int kmad_sim_query_gid(struct kmad_device *kdev, u8 port_num,
		       unsigned int index, union kmad_gid *gid);
int kmad_sim_query_pkey(struct kmad_device *kdev, u8 port_num,
			unsigned int index, u16 *pkey);
int kmad_sim_query_smp(struct kmad_device *kdev, u8 port_num,
		       struct kmad_smp *smp);
int kmad_sim_bridge_add(struct kmad_device *kdev, u8 port_num,
			enum kmad_qp_type qpt, const struct kmad_reg_req *req);
void kmad_sim_bridge_del(struct kmad_device *kdev, u8 port_num,
			 enum kmad_qp_type qpt, const struct kmad_reg_req *req);
/* sma.c */
int kmad_sim_modify_port_cap(struct kmad_device *kdev, u8 port_num, u32 set,
			     u32 clear);
int kmad_sim_create_ah(struct kmad_device *kdev, u8 port_num,
		       const struct kmad_ah_attr *attr, void **ah);
void kmad_sim_destroy_ah(struct kmad_device *kdev, u8 port_num, void *ah);
void kmad_sim_ah_put(struct sim_ah *ah);
void kmad_sim_ah_release_held(struct kmad_sim_fabric *fab,
			      struct sim_node *node);

/* cq.c */
int kmad_sim_create_cq(struct kmad_cq *kcq, unsigned int depth);
void kmad_sim_destroy_cq(struct kmad_cq *kcq);
int kmad_sim_poll_cq(struct kmad_cq *kcq, int nent, struct kmad_wc *wc);
struct sim_cq *kmad_sim_cq_alloc(struct sim_dev *sdev, unsigned int depth);
void kmad_sim_cq_free(struct sim_cq *cq);
int kmad_sim_cq_poll(struct sim_cq *cq, int nent, struct kmad_wc *wc);
int kmad_sim_req_notify_cq(struct kmad_cq *kcq, unsigned int flags);
void kmad_sim_cq_add_locked(struct sim_cq *cq, struct sim_qp *owner,
			    const struct kmad_wc *wc);
void kmad_sim_cq_clean_locked(struct sim_cq *cq, struct sim_qp *owner);
void kmad_sim_cq_deliver_event(struct sim_cq *cq);
void kmad_sim_cq_teardown(struct sim_cq *cq);

#endif /* KMAD_SIM_HW_H */
