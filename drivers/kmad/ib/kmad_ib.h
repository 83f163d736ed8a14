/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_ib: a kmad provider over ib_core.  Shared definitions.
 *
 * Objects, and who frees them:
 * - &struct kmad_ib_dev lives in the kmad device's provider area
 *   (kmad_device_priv()); main.c creates it when ib_core adds a device to
 *   our client and tears it down when ib_core removes it.
 * - &struct kmad_ib_cq and &struct kmad_ib_qp are allocated by the
 *   create_cq and create_qp ops and freed by destroy_cq and destroy_qp.
 * - &struct kmad_ib_wr: one per work request slot of a QP, in an array
 *   owned by the QP.  A slot is free, or holds one posted send or receive
 *   from the post until its completion is polled.
 *
 * - A send through ib_mad, from the port's real QP1
 *   (&kmad_hw_send.from_qp1) or QP0 (every send of the SMI QP), also holds
 *   a slot, with no DMA mapping, and an ib_mad send buffer (freed in our
 *   ib_mad send handler) until ib_mad reports it done; the slot then waits
 *   on its CQ's software completion list until poll_cq() returns it.
 * - The SMI QP is software only (smi.c): a receive kmad posts holds a slot
 *   until the QP is flushed; a request of it that waits for a response
 *   gives its slot back at once (completed through the software list) and
 *   leaves a &struct kmad_ib_smp in ib_mad until ib_mad reports that copy
 *   done.
 *
 * Locks: Q (&kmad_ib_qp.lock, irq-safe) guards a QP's free slot list, the
 * DMA state of its slots, the SMI QP's state, lingering list and feeders;
 * S (&kmad_ib_cq.sw_lock, irq-safe) a CQ's software completion list.
 * Neither is held while taking the other, or while calling kmad or
 * ib_mad: ib_cancel_mad() is called without Q, on a lingering copy held
 * by a reference (smi.c).
 */
#ifndef KMAD_IB_H
#define KMAD_IB_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <kmad/provider.h>

/* Work requests per QP kmad keeps posted, at most (clamped to the HCA's). */
#define KMAD_IB_SQ_DEPTH	128
#define KMAD_IB_RQ_DEPTH	256

struct kmad_ib_dev;

/**
 * struct kmad_ib_port - per-port state.
 * @kdev: our device.
 * @port_num: the ib_core (and kmad) port number.
 * @change_work: reads the port's attributes after an ib_core port event
 *	and reports them with kmad_device_port_changed(), then a client
 *	reregister (@rereg) with kmad_device_port_reregister() (also when
 *	the read failed).
 * @rereg: bit 0: an IB_EVENT_CLIENT_REREGISTER not yet reported.
 * @bridge_lock: B, see bridge.c.
 * @bridges: the port's ib_mad agents standing in for kmad agents (B).
 * @bridges_dead: the device is going: no more bridges (B).
 * @qp1_agent: a send-only ib_mad agent on the port's QP1, through which
 *	kmad's responses to bridged requests leave (&kmad_hw_send.from_qp1);
 *	NULL if ib_mad refused it.  Registered before the kmad device,
 *	unregistered after it.
 * @qp0_agent: on an InfiniBand port, an ib_mad agent on the port's QP0
 *	with no registration, through which every send of kmad's SMI QP
 *	leaves and the responses to its requests come back (smi.c); NULL on
 *	a RoCE port or if ib_mad refused it: the port is then registered
 *	with no_smi.  Same lifetime as @qp1_agent.
 * @smi_tid: the lower half of the TID of the last request of the SMI QP
 *	given to ib_mad, with or without a response wait (smi.c).
 */
struct kmad_ib_port {
	struct kmad_ib_dev *kdev;
	u8 port_num;
	struct work_struct change_work;
	unsigned long rereg;
	struct mutex bridge_lock;	/* B: @bridges, @bridges_dead */
	struct list_head bridges;
	bool bridges_dead;
	struct ib_mad_agent *qp1_agent;
	struct ib_mad_agent *qp0_agent;
	atomic_t smi_tid;
};

/**
 * struct kmad_ib_dev - a kmad device standing for one ib_core device.
 * @ibdev: the ib_core device.
 * @dev: the kmad device (this structure is its provider area).
 * @pd: protection domain of every QP and AH.
 * @event_handler: ib_core's asynchronous events of @ibdev.
 * @live: the kmad device is registered: events queue the port's work
 *	(before, they are only noted; kmad_ib_add_one() queues it then).
 * @num_ports: entries of @ports.
 * @ports: one per port.
 */
struct kmad_ib_dev {
	struct ib_device *ibdev;
	struct kmad_device *dev;
	struct ib_pd *pd;
	struct ib_event_handler event_handler;
	bool live;
	u8 num_ports;
	struct kmad_ib_port ports[];
};

/**
 * struct kmad_ib_cq - a kmad CQ: an ib_core CQ with our own event handler.
 * @cq: the ib_core CQ.
 * @kcq: kmad's CQ.
 * @sw_lock: S, see the top of this file.
 * @sw_done: slots of sends from the real QP1 that ib_mad reported done,
 *	oldest first, for poll_cq() (S).
 */
struct kmad_ib_cq {
	struct ib_cq *cq;
	struct kmad_cq *kcq;
	spinlock_t sw_lock;	/* S: @sw_done */
	struct list_head sw_done;
};

/**
 * struct kmad_ib_wr - a work request slot.
 * @cqe: ib_core's completion context; &ib_wc.wr_cqe points here.
 * @kcqe: kmad's completion context of the work request in the slot.
 * @qp: the QP owning the slot.
 * @next: next free slot (Q), while free.
 * @buf: the buffer posted.
 * @dma: its DMA address.
 * @len: its length.
 * @dir: its DMA direction.
 * @busy: posted, not yet polled (Q).
 * @sw: completes through the CQ's software list: a send through ib_mad,
 *	or a receive of the SMI QP (Q).
 * @recv: a receive of the SMI QP (Q).
 * @held: that receive is held, not yet flushed (Q).
 * @msg: a send's ib_mad buffer, until ib_mad reports it done.
 * @sw_entry: in &kmad_ib_cq.sw_done once completed (S).
 * @sw_status: how it ended.
 */
struct kmad_ib_wr {
	struct ib_cqe cqe;
	struct kmad_cqe *kcqe;
	struct kmad_ib_qp *qp;
	struct kmad_ib_wr *next;
	void *buf;
	u64 dma;
	u32 len;
	enum dma_data_direction dir;
	bool busy;
	bool sw;
	bool recv;
	bool held;
	struct ib_mad_send_buf *msg;
	struct list_head sw_entry;
	enum kmad_wc_status sw_status;
};

/**
 * struct kmad_ib_qp - a kmad QP: a UD QP standing in for QP1, or a
 * software QP standing in for QP0 (smi.c).
 * @qp: the ib_core QP; NULL for the SMI QP.
 * @kqp: kmad's QP.
 * @kdev: our device.
 * @icq: its CQ.
 * @port_num: the port.
 * @ibmad_sends: its sends through ib_mad (QP1 or QP0) that ib_mad has
 *	not reported done, and whose handler has not finished, lingering
 *	requests of the SMI QP included; destroy waits for none.
 * @smi: the SMI QP: no @qp, every send through ib_mad's QP0.
 * @state: the state kmad last moved it to (Q for the SMI QP).
 * @lingering: SMI QP: its &struct kmad_ib_smp still in ib_mad (Q).
 * @feeding: SMI QP: responses being given to kmad now (Q); moving to the
 *	error state waits for none.
 * @lock: Q, see the top of this file.
 * @free: free slots (Q).
 * @nr_wrs: entries of @wrs.
 * @wrs: the slots.
 */
struct kmad_ib_qp {
	struct ib_qp *qp;
	struct kmad_qp *kqp;
	struct kmad_ib_dev *kdev;
	struct kmad_ib_cq *icq;
	u8 port_num;
	atomic_t ibmad_sends;
	bool smi;
	enum kmad_qp_state state;
	struct list_head lingering;
	unsigned int feeding;
	spinlock_t lock;	/* Q: @free and the slots */
	struct kmad_ib_wr *free;
	unsigned int nr_wrs;
	struct kmad_ib_wr *wrs;
};

static inline struct kmad_ib_dev *kmad_ib_dev(struct kmad_device *dev)
{
	return kmad_device_priv(dev);
}

/* verbs.c */
int kmad_ib_create_cq(struct kmad_cq *kcq, unsigned int depth);
void kmad_ib_destroy_cq(struct kmad_cq *kcq);
int kmad_ib_create_qp(struct kmad_qp *kqp, struct kmad_cq *kcq,
		      unsigned int sq_depth, unsigned int rq_depth);
void kmad_ib_destroy_qp(struct kmad_qp *kqp);
int kmad_ib_modify_qp(struct kmad_qp *kqp, enum kmad_qp_state state);
int kmad_ib_post_send(struct kmad_qp *kqp, const struct kmad_hw_send *wr);
int kmad_ib_post_recv(struct kmad_qp *kqp, const struct kmad_hw_recv *wr);
int kmad_ib_poll_cq(struct kmad_cq *kcq, int nent, struct kmad_wc *wc);
int kmad_ib_req_notify_cq(struct kmad_cq *kcq, unsigned int flags);
void kmad_ib_mad_send_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *send_wc);
int kmad_ib_post_via_mad(struct kmad_ib_qp *iqp, struct ib_mad_agent *agent,
			 const struct kmad_hw_send *wr, const __be64 *tid);
struct kmad_ib_wr *kmad_ib_wr_get_sw_locked(struct kmad_ib_qp *iqp,
					    struct kmad_cqe *kcqe);
void kmad_ib_wr_put_locked(struct kmad_ib_qp *iqp, struct kmad_ib_wr *w);
void kmad_ib_sw_complete(struct kmad_ib_wr *w, enum kmad_wc_status status);
void kmad_ib_qp_reclaim(struct kmad_ib_qp *iqp);
enum kmad_wc_status kmad_ib_wc_status(enum ib_wc_status status);
void kmad_ib_grh_fixup(struct kmad_ib_dev *kdev, u8 port_num,
		       const struct ib_wc *iwc, void *grh, struct kmad_wc *wc);

/* smi.c */
int kmad_ib_smi_qp_init(struct kmad_ib_qp *iqp);
int kmad_ib_smi_modify_qp(struct kmad_ib_qp *iqp, enum kmad_qp_state state);
int kmad_ib_smi_post_send(struct kmad_ib_qp *iqp,
			  const struct kmad_hw_send *wr);
int kmad_ib_smi_post_recv(struct kmad_ib_qp *iqp,
			  const struct kmad_hw_recv *wr);
void kmad_ib_smi_cancel_lingering(struct kmad_ib_qp *iqp);
void kmad_ib_smi_linger_done(struct ib_mad_send_wc *send_wc);
void kmad_ib_smi_recv_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_buf *send_buf,
			      struct ib_mad_recv_wc *rwc);

/* bridge.c */
int kmad_ib_bridge_add(struct kmad_device *dev, u8 port_num,
		       enum kmad_qp_type qpt, const struct kmad_reg_req *req);
void kmad_ib_bridge_del(struct kmad_device *dev, u8 port_num,
			enum kmad_qp_type qpt, const struct kmad_reg_req *req);
void kmad_ib_bridges_stop(struct kmad_ib_port *port);

/* ah.c */
int kmad_ib_query_gid(struct kmad_device *dev, u8 port_num,
		      unsigned int index, union kmad_gid *gid);
int kmad_ib_query_pkey(struct kmad_device *dev, u8 port_num,
		       unsigned int index, u16 *pkey);
int kmad_ib_create_ah(struct kmad_device *dev, u8 port_num,
		      const struct kmad_ah_attr *attr, void **ah);
void kmad_ib_destroy_ah(struct kmad_device *dev, u8 port_num, void *ah);

#endif /* KMAD_IB_H */
