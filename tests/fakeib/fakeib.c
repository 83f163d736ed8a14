// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_fakeib: a fake ib_core device driver with an InfiniBand link layer,
 * for testing kmad_ib (and ib_mad) in QEMU guests where no InfiniBand
 * hardware exists.  Never load it on a real host.
 *
 * The devices.  devices= (default 2) ib_devices fakeib0, fakeib1, ...,
 * one port each, node type CA, link layer InfiniBand, port ACTIVE and
 * LinkUp from registration on.  Device i has node GUID FAKEIB_GUID_BASE +
 * 2 * i, port GUID one more, LID i + 1, SM LID sm_lid= (default 1), a
 * P_Key table of two entries (0xffff, 0x8001: a GSI QP sends with the
 * work request's index, other QPs with their own; a receive reports the
 * index of the packet's partition, and a UD QP takes its own only) and
 * a GID table of one entry (the
 * link-local subnet prefix and the port GUID).  The ports report
 * RDMA_CORE_PORT_IBA_IB, so ib_mad opens QP0 and QP1 on them.  There is no
 * process_mad: every SMP and GMP goes to the "wire" and to ib_mad's
 * agents at the other end, and ib_mad answers what no agent takes with
 * an "unsupported" status.
 *
 * DMA.  ib_register_device() gets no DMA device, so ib_uses_virt_dma() is
 * true (as for rxe and siw): ib_dma_map_*() return kernel virtual
 * addresses, and an SGE's addr is a pointer.  Every PD has local DMA lkey
 * 0 (IBK_LOCAL_DMA_LKEY); lkeys are not checked.
 *
 * The wire.  One switchless loopback joins all ports: a packet goes to the
 * port whose LID is its DLID; the permissive LID (0xffff, directed route
 * SMPs) reaches the port's cable peer, device i ^ 1.  A packet to a LID no
 * port has, to a QP that does not exist or is not at least RTR, with a
 * wrong Q_Key (any QP but QP0) or P_Key, or to a QP with no posted
 * receive is dropped, as a UD network would drop it; the send still
 * completes successfully.  post_send() copies the payload (gathered from
 * the SGEs) and the address vector into a packet on fakeib_wire_list and
 * queues fakeib_wire_work; the work, in process context, completes the
 * send on the sender's send CQ and then writes the packet into the first
 * receive of the destination QP: a GRH, when the sender's address handle
 * had one, in the first 40 bytes (IB_WC_GRH), the payload after them
 * (byte_len counts the 40 bytes, GRH or not, as on any UD QP).
 *
 * QP states.  post_send() needs RTS, post_recv() any state but RESET.  In
 * ERR, receives and sends complete with IB_WC_WR_FLUSH_ERR (from the work,
 * never from the post or modify call); RESET drops both queues without
 * completions.
 *
 * CQs are rings of the requested size.  A completion arms nothing; an
 * armed CQ (either notify flag: solicited is not told apart) calls its
 * completion handler once, from the work, after the completion is in the
 * ring.  req_notify_cq() with IB_CQ_REPORT_MISSED_EVENTS returns 1 when
 * the ring is not empty.  A full CQ drops the completion and warns once.
 *
 * Locking and lifetimes.
 *   fakeib_wire_mutex: held by the work for each packet or flush it
 *     handles (so across the lookup of the destination QP, the copies and
 *     the completion handlers), and by destroy_qp while it takes the QP
 *     out of its device's xarray and drops its packets.  So a QP the work
 *     found cannot be freed under it, and no packet of a destroyed QP is
 *     left.  Completion handlers are called with it held; they must not
 *     destroy a QP (no ib_core user does from a completion handler).
 *   fakeib_wire_lock (spinlock, irqsave): fakeib_wire_list and
 *     fakeib_flush_list, and each QP's flush_queued.
 *   fakeib_qp.lock: the QP's state, Q_Key, P_Key index, receive ring and
 *     count of sends not yet completed.  Taken inside fakeib_wire_lock
 *     (modify to RESET) and never around a CQ's lock.
 *   fakeib_cq.lock: the ring and the armed flags.
 * Devices live from init to exit; exit unregisters all of them (ib_core
 * destroys every client's QPs, CQs, AHs and PDs), then destroys the
 * workqueue, which has nothing left to do, then frees them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "fakeib.h"

#define FAKEIB_GUID_BASE	0x0002c90300fa0000ULL
#define FAKEIB_SUBNET_PREFIX	0xfe80000000000000ULL
#define FAKEIB_MAX_WR		8192
#define FAKEIB_MAX_CQE		65536
#define FAKEIB_MAX_SGE		4
#define FAKEIB_MTU_BYTES	4096
#define FAKEIB_MAX_DEVICES	16
#define FAKEIB_QPN_MAX		0xffffff

static unsigned int devices = 2;
module_param(devices, uint, 0444);
MODULE_PARM_DESC(devices, "number of fake IB devices (1-16, default 2)");

/*
 * Every port's P_Key table: the default partition, and partition 1 (full
 * member), so that a P_Key index other than 0 can be sent and received.
 */
static const u16 fakeib_pkeys[] = { IB_DEFAULT_PKEY_FULL, 0x8001 };

static unsigned int sm_lid = 1;
module_param(sm_lid, uint, 0444);
MODULE_PARM_DESC(sm_lid, "SM LID every port reports (default 1)");

/*
 * Fault injection, for make fakeib: the next flush_smi_resp sends from a
 * QP0 that carry a response MAD (method bit 0x80) are not delivered and
 * complete with IB_WC_WR_FLUSH_ERR, as a send queued behind a failed one
 * is flushed by a real HCA.  ib_mad passes such a flush to the agent that
 * posted it (ib_mad_send_error(): no retry marked).  Read back to see
 * how many are left.
 */
static atomic_t flush_smi_resp = ATOMIC_INIT(0);

static int flush_smi_resp_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	atomic_set(&flush_smi_resp, n);
	return 0;
}

static int flush_smi_resp_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&flush_smi_resp));
}

static const struct kernel_param_ops flush_smi_resp_ops = {
	.set = flush_smi_resp_set,
	.get = flush_smi_resp_get,
};
module_param_cb(flush_smi_resp, &flush_smi_resp_ops, NULL, 0644);
MODULE_PARM_DESC(flush_smi_resp,
		 "flush the next N response SMPs sent from a QP0 instead of delivering them (default 0)");

struct fakeib_dev {
	struct ib_device ibdev;
	unsigned int index;
	u16 lid;
	u32 port_cap_flags;	/* under port_lock */
	spinlock_t port_lock;	/* port_cap_flags */
	__be64 port_guid;
	struct xarray qps;	/* QPN -> fakeib_qp; erased under the mutex */
	u32 next_qpn;
};

struct fakeib_pd {
	struct ib_pd ibpd;
};

struct fakeib_mr {
	struct ib_mr ibmr;
};

struct fakeib_ah {
	struct ib_ah ibah;
	u16 dlid;
	u8 sl;
	bool has_grh;
	union ib_gid dgid;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
};

struct fakeib_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the ring, armed, overflowed */
	struct ib_wc *ring;
	u32 size;
	u32 head;
	u32 count;
	bool armed;
	bool overflowed;
};

struct fakeib_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct ib_sge sge[FAKEIB_MAX_SGE];
};

struct fakeib_qp {
	struct ib_qp ibqp;
	spinlock_t lock;	/* state to rq_count; see the top */
	enum ib_qp_state state;
	u32 qkey;
	u16 pkey_index;
	enum ib_sig_type sq_sig_type;
	struct ib_qp_cap cap;
	u32 sends_pending;	/* posted, not yet completed */
	struct fakeib_rwqe *rq;	/* ring of cap.max_recv_wr */
	u32 rq_head;
	u32 rq_count;
	struct list_head flush_entry;	/* on fakeib_flush_list */
	bool flush_queued;
};

struct fakeib_pkt {
	struct list_head list;
	struct fakeib_qp *src;
	u64 wr_id;
	bool signaled;
	enum ib_wc_opcode opcode;
	u16 dlid;
	u8 sl;
	u32 dqpn;
	u32 qkey;
	u16 pkey;
	bool has_grh;
	bool has_imm;
	__be32 imm;
	struct ib_grh grh;
	u32 len;
	u8 data[];
};

static struct fakeib_dev *fakeib_devs[FAKEIB_MAX_DEVICES];
static unsigned int fakeib_ndevs;
static DEFINE_MUTEX(fakeib_wire_mutex);
static DEFINE_SPINLOCK(fakeib_wire_lock);
static LIST_HEAD(fakeib_wire_list);
static LIST_HEAD(fakeib_flush_list);
static struct workqueue_struct *fakeib_wq;
static void fakeib_wire_work_fn(struct work_struct *work);
static DECLARE_WORK(fakeib_wire_work, fakeib_wire_work_fn);

static struct fakeib_dev *to_fdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct fakeib_dev, ibdev);
}

static struct fakeib_qp *to_fqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct fakeib_qp, ibqp);
}

static struct fakeib_cq *to_fcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct fakeib_cq, ibcq);
}

static struct fakeib_ah *to_fah(struct ib_ah *ibah)
{
	return container_of(ibah, struct fakeib_ah, ibah);
}

/* Device and port queries. */

static int fakeib_query_device(struct ib_device *ibdev,
			       struct ib_device_attr *attr,
			       struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = 0x0002c9;
	attr->vendor_part_id = 0xfa1b;
	attr->hw_ver = 1;
	attr->max_qp = 1024;
	attr->max_qp_wr = FAKEIB_MAX_WR;
	attr->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	attr->max_send_sge = FAKEIB_MAX_SGE;
	attr->max_recv_sge = FAKEIB_MAX_SGE;
	attr->max_sge_rd = FAKEIB_MAX_SGE;
	attr->max_cq = 1024;
	attr->max_cqe = FAKEIB_MAX_CQE;
	attr->max_mr = 1024;
	attr->max_pd = 1024;
	attr->max_ah = 65536;
	attr->max_pkeys = ARRAY_SIZE(fakeib_pkeys);
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int fakeib_query_port(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_attr *attr)
{
	struct fakeib_dev *fdev = to_fdev(ibdev);
	unsigned long flags;

	/* ib_core zeroes *attr before it calls this. */
	attr->state = IB_PORT_ACTIVE;
	attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_4096;
	attr->gid_tbl_len = 1;
	spin_lock_irqsave(&fdev->port_lock, flags);
	attr->port_cap_flags = fdev->port_cap_flags;
	spin_unlock_irqrestore(&fdev->port_lock, flags);
	attr->max_msg_sz = FAKEIB_MTU_BYTES;
	attr->pkey_tbl_len = ARRAY_SIZE(fakeib_pkeys);
	attr->lid = fdev->lid;
	attr->sm_lid = sm_lid;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 18;
	attr->init_type_reply = 0;
	attr->active_width = IB_WIDTH_4X;
	attr->active_speed = IB_SPEED_QDR;
	return 0;
}

static int fakeib_modify_port(struct ib_device *ibdev, u32 port_num, int mask,
			      struct ib_port_modify *props)
{
	struct fakeib_dev *fdev = to_fdev(ibdev);
	unsigned long flags;

	spin_lock_irqsave(&fdev->port_lock, flags);
	fdev->port_cap_flags |= props->set_port_cap_mask;
	fdev->port_cap_flags &= ~props->clr_port_cap_mask;
	spin_unlock_irqrestore(&fdev->port_lock, flags);
	return 0;
}

static int fakeib_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				     struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = ARRAY_SIZE(fakeib_pkeys);
	immutable->gid_tbl_len = 1;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer fakeib_get_link_layer(struct ib_device *ibdev,
						  u32 port_num)
{
	return IB_LINK_LAYER_INFINIBAND;
}

static int fakeib_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			     u16 *pkey)
{
	if (index >= ARRAY_SIZE(fakeib_pkeys))
		return -EINVAL;
	*pkey = fakeib_pkeys[index];
	return 0;
}

/* The index of @pkey's partition in the P_Key table, or -1. */
static int fakeib_pkey_index(u16 pkey)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fakeib_pkeys); i++)
		if ((fakeib_pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return i;
	return -1;
}

static int fakeib_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			    union ib_gid *gid)
{
	if (index)
		return -EINVAL;
	gid->global.subnet_prefix = cpu_to_be64(FAKEIB_SUBNET_PREFIX);
	gid->global.interface_id = to_fdev(ibdev)->port_guid;
	return 0;
}

/* PDs and MRs: nothing to keep. */

static int fakeib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return udata ? -EOPNOTSUPP : 0;
}

static int fakeib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

static struct ib_mr *fakeib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct fakeib_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->ibmr.lkey = 0;
	mr->ibmr.rkey = 0;
	return &mr->ibmr;
}

static struct ib_mr *fakeib_reg_user_mr(struct ib_pd *ibpd, u64 start,
					u64 length, u64 virt_addr, int access,
					struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int fakeib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	kfree(container_of(ibmr, struct fakeib_mr, ibmr));
	return 0;
}

/* Address handles: LID routed, optionally with a GRH. */

static int fakeib_create_ah(struct ib_ah *ibah,
			    struct rdma_ah_init_attr *init_attr,
			    struct ib_udata *udata)
{
	struct rdma_ah_attr *attr = init_attr->ah_attr;
	struct fakeib_ah *ah = to_fah(ibah);

	if (udata)
		return -EOPNOTSUPP;
	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	ah->dlid = rdma_ah_get_dlid(attr);
	ah->sl = rdma_ah_get_sl(attr);
	ah->has_grh = rdma_ah_get_ah_flags(attr) & IB_AH_GRH;
	if (ah->has_grh) {
		const struct ib_global_route *grh = rdma_ah_read_grh(attr);

		if (grh->sgid_index)
			return -EINVAL;
		ah->dgid = grh->dgid;
		ah->flow_label = grh->flow_label;
		ah->sgid_index = grh->sgid_index;
		ah->hop_limit = grh->hop_limit;
		ah->traffic_class = grh->traffic_class;
	}
	return 0;
}

/* ib_mad matches a response to its request with it (rcv_has_same_gid()). */
static int fakeib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct fakeib_ah *ah = to_fah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, ah->dlid);
	rdma_ah_set_sl(attr, ah->sl);
	rdma_ah_set_port_num(attr, 1);
	if (ah->has_grh)
		rdma_ah_set_grh(attr, &ah->dgid, ah->flow_label, ah->sgid_index,
				ah->hop_limit, ah->traffic_class);
	return 0;
}

static int fakeib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* CQs. */

static int fakeib_create_cq(struct ib_cq *ibcq,
			    const struct ib_cq_init_attr *attr,
			    struct ib_udata *udata)
{
	struct fakeib_cq *cq = to_fcq(ibcq);

	if (udata)
		return -EOPNOTSUPP;
	if (attr->flags || !attr->cqe || attr->cqe > FAKEIB_MAX_CQE)
		return -EINVAL;
	cq->ring = kvcalloc(attr->cqe, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	ibcq->cqe = attr->cqe;
	return 0;
}

static int fakeib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	kvfree(to_fcq(ibcq)->ring);
	return 0;
}

static int fakeib_poll_cq(struct ib_cq *ibcq, int num_entries,
			  struct ib_wc *wc)
{
	struct fakeib_cq *cq = to_fcq(ibcq);
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && cq->count) {
		wc[n++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static int fakeib_req_notify_cq(struct ib_cq *ibcq,
				enum ib_cq_notify_flags flags)
{
	struct fakeib_cq *cq = to_fcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (flags & IB_CQ_SOLICITED_MASK)
		cq->armed = true;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* Adds @wc to @ibcq and calls its handler if it was armed.  Work only. */
static void fakeib_cq_push(struct ib_cq *ibcq, const struct ib_wc *wc)
{
	struct fakeib_cq *cq = to_fcq(ibcq);
	bool notify = false;
	bool overflow = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count == cq->size) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		cq->ring[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		notify = cq->armed;
		cq->armed = false;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (overflow)
		pr_warn("%s: CQ of %u entries overflowed, completion dropped\n",
			dev_name(&ibcq->device->dev), cq->size);
	if (notify && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
}

/* QPs. */

static int fakeib_create_qp(struct ib_qp *ibqp,
			    struct ib_qp_init_attr *init,
			    struct ib_udata *udata)
{
	struct fakeib_dev *fdev = to_fdev(ibqp->device);
	struct fakeib_qp *qp = to_fqp(ibqp);
	u32 qpn;
	int ret;

	if (udata)
		return -EOPNOTSUPP;
	if (init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_SMI &&
	    init->qp_type != IB_QPT_GSI)
		return -EOPNOTSUPP;
	if (init->srq || init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (!init->cap.max_send_wr || !init->cap.max_recv_wr ||
	    init->cap.max_send_wr > FAKEIB_MAX_WR ||
	    init->cap.max_recv_wr > FAKEIB_MAX_WR ||
	    init->cap.max_send_sge > FAKEIB_MAX_SGE ||
	    init->cap.max_recv_sge > FAKEIB_MAX_SGE ||
	    init->cap.max_inline_data)
		return -EINVAL;
	if (init->qp_type != IB_QPT_UD && init->port_num != 1)
		return -EINVAL;

	spin_lock_init(&qp->lock);
	INIT_LIST_HEAD(&qp->flush_entry);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_type = init->sq_sig_type;
	qp->cap = init->cap;
	qp->rq = kcalloc(init->cap.max_recv_wr, sizeof(*qp->rq), GFP_KERNEL);
	if (!qp->rq)
		return -ENOMEM;

	if (init->qp_type == IB_QPT_UD) {
		ret = xa_alloc_cyclic(&fdev->qps, &qpn, qp,
				      XA_LIMIT(2, FAKEIB_QPN_MAX),
				      &fdev->next_qpn, GFP_KERNEL);
		if (ret > 0)
			ret = 0;
	} else {
		qpn = init->qp_type == IB_QPT_SMI ? 0 : 1;
		ret = xa_insert(&fdev->qps, qpn, qp, GFP_KERNEL);
	}
	if (ret) {
		kfree(qp->rq);
		return ret;
	}
	ibqp->qp_num = qpn;
	return 0;
}

/* Drops @qp's packets and flush request.  Under fakeib_wire_lock. */
static void fakeib_purge_locked(struct fakeib_qp *qp)
{
	struct fakeib_pkt *pkt, *tmp;

	lockdep_assert_held(&fakeib_wire_lock);
	list_for_each_entry_safe(pkt, tmp, &fakeib_wire_list, list) {
		if (pkt->src != qp)
			continue;
		list_del(&pkt->list);
		kfree(pkt);
	}
	if (qp->flush_queued) {
		list_del_init(&qp->flush_entry);
		qp->flush_queued = false;
	}
}

static void fakeib_queue_flush(struct fakeib_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&fakeib_wire_lock, flags);
	if (!qp->flush_queued) {
		list_add_tail(&qp->flush_entry, &fakeib_flush_list);
		qp->flush_queued = true;
	}
	spin_unlock_irqrestore(&fakeib_wire_lock, flags);
	queue_work(fakeib_wq, &fakeib_wire_work);
}

static int fakeib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			    int mask, struct ib_udata *udata)
{
	struct fakeib_qp *qp = to_fqp(ibqp);
	enum ib_qp_state new_state;
	unsigned long flags;
	bool flush = false;

	if (udata)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= ARRAY_SIZE(fakeib_pkeys))
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;

	spin_lock_irqsave(&fakeib_wire_lock, flags);
	spin_lock(&qp->lock);
	new_state = (mask & IB_QP_STATE) ? attr->qp_state : qp->state;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != qp->state) {
		spin_unlock(&qp->lock);
		spin_unlock_irqrestore(&fakeib_wire_lock, flags);
		return -EINVAL;
	}
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (new_state == IB_QPS_RESET && qp->state != IB_QPS_RESET) {
		/* RESET empties both queues, completing nothing. */
		qp->rq_head = 0;
		qp->rq_count = 0;
		qp->sends_pending = 0;
		fakeib_purge_locked(qp);
	}
	if (new_state == IB_QPS_ERR && qp->state != IB_QPS_ERR)
		flush = true;
	qp->state = new_state;
	spin_unlock(&qp->lock);
	spin_unlock_irqrestore(&fakeib_wire_lock, flags);
	if (flush)
		fakeib_queue_flush(qp);
	return 0;
}

static int fakeib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			   int mask, struct ib_qp_init_attr *init)
{
	struct fakeib_qp *qp = to_fqp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qkey = qp->qkey;
	attr->pkey_index = qp->pkey_index;
	spin_unlock_irqrestore(&qp->lock, flags);
	attr->port_num = 1;
	attr->path_mtu = IB_MTU_4096;
	attr->cap = qp->cap;
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_type;
	init->port_num = 1;
	return 0;
}

static int fakeib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct fakeib_dev *fdev = to_fdev(ibqp->device);
	struct fakeib_qp *qp = to_fqp(ibqp);
	unsigned long flags;

	mutex_lock(&fakeib_wire_mutex);
	xa_erase(&fdev->qps, ibqp->qp_num);
	spin_lock_irqsave(&fakeib_wire_lock, flags);
	fakeib_purge_locked(qp);
	spin_unlock_irqrestore(&fakeib_wire_lock, flags);
	mutex_unlock(&fakeib_wire_mutex);
	kfree(qp->rq);
	return 0;
}

static int fakeib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			    const struct ib_recv_wr **bad_wr)
{
	struct fakeib_qp *qp = to_fqp(ibqp);
	bool flush = false;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&qp->lock, flags);
	for (; wr; wr = wr->next) {
		struct fakeib_rwqe *wqe;

		if (qp->state == IB_QPS_RESET ||
		    wr->num_sge > qp->cap.max_recv_sge) {
			ret = -EINVAL;
			break;
		}
		if (qp->rq_count == qp->cap.max_recv_wr) {
			ret = -ENOMEM;
			break;
		}
		wqe = &qp->rq[(qp->rq_head + qp->rq_count) %
			      qp->cap.max_recv_wr];
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		qp->rq_count++;
	}
	flush = qp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (ret)
		*bad_wr = wr;
	if (flush)
		fakeib_queue_flush(qp);
	return ret;
}

/* Gathers @wr into a new packet, with @ah's address vector. */
static struct fakeib_pkt *fakeib_make_pkt(struct fakeib_qp *qp,
					  const struct ib_send_wr *wr)
{
	const struct ib_ud_wr *ud = ud_wr(wr);
	struct fakeib_ah *ah = to_fah(ud->ah);
	struct fakeib_pkt *pkt;
	unsigned int pidx;
	u32 len = 0;
	u8 *p;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > FAKEIB_MTU_BYTES)
		return ERR_PTR(-EINVAL);
	pkt = kzalloc(struct_size(pkt, data, len), GFP_ATOMIC);
	if (!pkt)
		return ERR_PTR(-ENOMEM);
	p = pkt->data;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		p += wr->sg_list[i].length;
	}
	pkt->len = len;
	pkt->src = qp;
	pkt->wr_id = wr->wr_id;
	pkt->signaled = qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
			(wr->send_flags & IB_SEND_SIGNALED);
	pkt->dlid = ah->dlid;
	pkt->sl = ah->sl;
	pkt->dqpn = ud->remote_qpn;
	pkt->qkey = (ud->remote_qkey & 0x80000000) ? qp->qkey : ud->remote_qkey;
	/* A GSI QP sends with the work request's P_Key index, the others
	 * with their own (as HCAs do).
	 */
	pidx = qp->ibqp.qp_type == IB_QPT_GSI ? ud->pkey_index : qp->pkey_index;
	if (pidx >= ARRAY_SIZE(fakeib_pkeys)) {
		kfree(pkt);
		return ERR_PTR(-EINVAL);
	}
	pkt->pkey = fakeib_pkeys[pidx];
	if (wr->opcode == IB_WR_SEND_WITH_IMM) {
		pkt->has_imm = true;
		pkt->imm = wr->ex.imm_data;
	}
	if (ah->has_grh) {
		struct ib_grh *grh = &pkt->grh;
		union ib_gid sgid;

		fakeib_query_gid(qp->ibqp.device, 1, ah->sgid_index, &sgid);
		pkt->has_grh = true;
		grh->version_tclass_flow =
			cpu_to_be32((6 << 28) | (ah->traffic_class << 20) |
				    (ah->flow_label & 0xfffff));
		grh->paylen = cpu_to_be16(len);
		grh->next_hdr = 0x1b;	/* IBA transport header */
		grh->hop_limit = ah->hop_limit;
		grh->sgid = sgid;
		grh->dgid = ah->dgid;
	}
	return pkt;
}

static int fakeib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			    const struct ib_send_wr **bad_wr)
{
	struct fakeib_qp *qp = to_fqp(ibqp);
	unsigned long flags;
	int ret = 0;
	bool queued = false;

	for (; wr; wr = wr->next) {
		struct fakeib_pkt *pkt;

		if ((wr->opcode != IB_WR_SEND &&
		     wr->opcode != IB_WR_SEND_WITH_IMM) ||
		    wr->num_sge > qp->cap.max_send_sge || !ud_wr(wr)->ah ||
		    ud_wr(wr)->ah->device != ibqp->device) {
			ret = -EINVAL;
			break;
		}
		pkt = fakeib_make_pkt(qp, wr);
		if (IS_ERR(pkt)) {
			ret = PTR_ERR(pkt);
			break;
		}
		spin_lock_irqsave(&fakeib_wire_lock, flags);
		spin_lock(&qp->lock);
		if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_ERR)
			ret = -EINVAL;
		else if (qp->sends_pending == qp->cap.max_send_wr)
			ret = -ENOMEM;
		if (!ret) {
			qp->sends_pending++;
			list_add_tail(&pkt->list, &fakeib_wire_list);
			queued = true;
		}
		spin_unlock(&qp->lock);
		spin_unlock_irqrestore(&fakeib_wire_lock, flags);
		if (ret) {
			kfree(pkt);
			break;
		}
	}
	if (ret)
		*bad_wr = wr;
	if (queued)
		queue_work(fakeib_wq, &fakeib_wire_work);
	return ret;
}

/* The wire: the work's side.  All under fakeib_wire_mutex. */

static struct fakeib_dev *fakeib_route(struct fakeib_dev *from, u16 dlid)
{
	unsigned int peer;

	if (dlid == be16_to_cpu(IB_LID_PERMISSIVE)) {
		peer = from->index ^ 1;
		return peer < fakeib_ndevs ? fakeib_devs[peer] : NULL;
	}
	if (dlid >= 1 && dlid <= fakeib_ndevs)
		return fakeib_devs[dlid - 1];
	return NULL;
}

/* Copies @len bytes of @src at @off into @wqe's SGEs; false if too long. */
static bool fakeib_scatter(const struct fakeib_rwqe *wqe, u32 off,
			   const void *src, u32 len)
{
	u32 i;

	for (i = 0; i < wqe->num_sge && len; i++) {
		u32 room = wqe->sge[i].length;
		u32 n;

		if (off >= room) {
			off -= room;
			continue;
		}
		n = min(room - off, len);
		memcpy((u8 *)(uintptr_t)wqe->sge[i].addr + off, src, n);
		src += n;
		len -= n;
		off = 0;
	}
	return !len;
}

static void fakeib_receive(struct fakeib_dev *sdev, const struct fakeib_pkt *pkt)
{
	struct fakeib_dev *ddev = fakeib_route(sdev, pkt->dlid);
	struct fakeib_rwqe wqe;
	struct fakeib_qp *dqp;
	unsigned long flags;
	struct ib_wc wc = {};
	int pidx;
	bool ok;

	if (!ddev)
		return;
	/* The P_Key must be in the table; a UD QP takes its own only. */
	pidx = fakeib_pkey_index(pkt->pkey);
	dqp = xa_load(&ddev->qps, pkt->dqpn);
	if (!dqp)
		return;
	spin_lock_irqsave(&dqp->lock, flags);
	ok = (dqp->state == IB_QPS_RTR || dqp->state == IB_QPS_RTS) &&
	     dqp->rq_count && (pkt->dqpn == 0 || pkt->qkey == dqp->qkey) &&
	     pidx >= 0 &&
	     (dqp->ibqp.qp_type != IB_QPT_UD || pidx == dqp->pkey_index);
	if (ok) {
		wqe = dqp->rq[dqp->rq_head];
		dqp->rq_head = (dqp->rq_head + 1) % dqp->cap.max_recv_wr;
		dqp->rq_count--;
	}
	spin_unlock_irqrestore(&dqp->lock, flags);
	if (!ok)
		return;

	wc.wr_id = wqe.wr_id;
	wc.status = IB_WC_SUCCESS;
	if (pkt->has_grh && !fakeib_scatter(&wqe, 0, &pkt->grh,
					    sizeof(pkt->grh)))
		wc.status = IB_WC_LOC_LEN_ERR;
	if (!fakeib_scatter(&wqe, sizeof(struct ib_grh), pkt->data, pkt->len))
		wc.status = IB_WC_LOC_LEN_ERR;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = sizeof(struct ib_grh) + pkt->len;
	wc.qp = &dqp->ibqp;
	wc.src_qp = pkt->src->ibqp.qp_num;
	wc.slid = sdev->lid;
	wc.sl = pkt->sl;
	wc.dlid_path_bits = 0;
	wc.pkey_index = pidx;
	wc.port_num = 1;
	if (pkt->has_grh)
		wc.wc_flags |= IB_WC_GRH;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	fakeib_cq_push(dqp->ibqp.recv_cq, &wc);
}

static void fakeib_deliver(struct fakeib_pkt *pkt)
{
	struct fakeib_qp *qp = pkt->src;
	enum ib_qp_state state;
	unsigned long flags;
	struct ib_wc wc = {};

	spin_lock_irqsave(&qp->lock, flags);
	state = qp->state;
	/* RESET and back may have zeroed the count under this packet. */
	if (state != IB_QPS_RESET && qp->sends_pending)
		qp->sends_pending--;
	spin_unlock_irqrestore(&qp->lock, flags);
	/* Moved to RESET after fakeib_wire_work took it off the list. */
	if (state == IB_QPS_RESET)
		return;
	/* The injected flush (flush_smi_resp): a response SMP (byte 3 of
	 * the MAD is the method) lost as if flushed.
	 */
	if (state != IB_QPS_ERR && qp->ibqp.qp_type == IB_QPT_SMI &&
	    pkt->len >= 4 && (pkt->data[3] & 0x80) &&
	    atomic_add_unless(&flush_smi_resp, -1, 0))
		state = IB_QPS_ERR;
	if (state != IB_QPS_ERR)
		fakeib_receive(to_fdev(qp->ibqp.device), pkt);
	if (state != IB_QPS_ERR && !pkt->signaled)
		return;
	wc.wr_id = pkt->wr_id;
	wc.status = state == IB_QPS_ERR ? IB_WC_WR_FLUSH_ERR : IB_WC_SUCCESS;
	wc.opcode = IB_WC_SEND;
	wc.qp = &qp->ibqp;
	wc.port_num = 1;
	fakeib_cq_push(qp->ibqp.send_cq, &wc);
}

/* Completes every posted receive of @qp, if it is in ERR, as flushed. */
static void fakeib_flush(struct fakeib_qp *qp)
{
	struct ib_wc wc = {};
	unsigned long flags;

	wc.status = IB_WC_WR_FLUSH_ERR;
	wc.opcode = IB_WC_RECV;
	wc.qp = &qp->ibqp;
	wc.port_num = 1;
	for (;;) {
		spin_lock_irqsave(&qp->lock, flags);
		if (qp->state != IB_QPS_ERR || !qp->rq_count) {
			spin_unlock_irqrestore(&qp->lock, flags);
			return;
		}
		wc.wr_id = qp->rq[qp->rq_head].wr_id;
		qp->rq_head = (qp->rq_head + 1) % qp->cap.max_recv_wr;
		qp->rq_count--;
		spin_unlock_irqrestore(&qp->lock, flags);
		fakeib_cq_push(qp->ibqp.recv_cq, &wc);
	}
}

static void fakeib_wire_work_fn(struct work_struct *work)
{
	for (;;) {
		struct fakeib_pkt *pkt = NULL;
		struct fakeib_qp *qp = NULL;

		mutex_lock(&fakeib_wire_mutex);
		spin_lock_irq(&fakeib_wire_lock);
		qp = list_first_entry_or_null(&fakeib_flush_list,
					      struct fakeib_qp, flush_entry);
		if (qp) {
			list_del_init(&qp->flush_entry);
			qp->flush_queued = false;
		} else {
			pkt = list_first_entry_or_null(&fakeib_wire_list,
						       struct fakeib_pkt, list);
			if (pkt)
				list_del(&pkt->list);
		}
		spin_unlock_irq(&fakeib_wire_lock);
		if (qp)
			fakeib_flush(qp);
		else if (pkt)
			fakeib_deliver(pkt);
		mutex_unlock(&fakeib_wire_mutex);
		if (!qp && !pkt)
			return;
		kfree(pkt);
		cond_resched();
	}
}

static const struct ib_device_ops fakeib_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,

	.alloc_pd = fakeib_alloc_pd,
	.create_ah = fakeib_create_ah,
	.create_cq = fakeib_create_cq,
	.create_qp = fakeib_create_qp,
	.dealloc_pd = fakeib_dealloc_pd,
	.dereg_mr = fakeib_dereg_mr,
	.destroy_ah = fakeib_destroy_ah,
	.destroy_cq = fakeib_destroy_cq,
	.destroy_qp = fakeib_destroy_qp,
	.get_dma_mr = fakeib_get_dma_mr,
	.get_link_layer = fakeib_get_link_layer,
	.get_port_immutable = fakeib_get_port_immutable,
	.modify_port = fakeib_modify_port,
	.modify_qp = fakeib_modify_qp,
	.poll_cq = fakeib_poll_cq,
	.post_recv = fakeib_post_recv,
	.post_send = fakeib_post_send,
	.query_ah = fakeib_query_ah,
	.query_device = fakeib_query_device,
	.query_gid = fakeib_query_gid,
	.query_pkey = fakeib_query_pkey,
	.query_port = fakeib_query_port,
	.query_qp = fakeib_query_qp,
	.reg_user_mr = fakeib_reg_user_mr,
	.req_notify_cq = fakeib_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, fakeib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, fakeib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, fakeib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, fakeib_qp, ibqp),
};

static void fakeib_free_all(void)
{
	unsigned int i;

	for (i = 0; i < fakeib_ndevs; i++) {
		if (fakeib_devs[i]) {
			xa_destroy(&fakeib_devs[i]->qps);
			ib_dealloc_device(&fakeib_devs[i]->ibdev);
			fakeib_devs[i] = NULL;
		}
	}
}

/**
 * kmad_fakeib_port_event() - raise an asynchronous event on port 1 of a
 * fakeib device, as an HCA driver does when its port changes (a client
 * reregister from the SM, a LID change ...).
 * @name: the device's name ("fakeib0").
 * @type: the event.
 *
 * Context: any.  ib_core calls every event handler of the device.
 * Return: 0, or -ENODEV for no such device.
 */
int kmad_fakeib_port_event(const char *name, enum ib_event_type type)
{
	struct ib_event event = {};
	unsigned int i;

	for (i = 0; i < fakeib_ndevs; i++) {
		struct fakeib_dev *fdev = fakeib_devs[i];

		if (strcmp(dev_name(&fdev->ibdev.dev), name))
			continue;
		event.device = &fdev->ibdev;
		event.event = type;
		event.element.port_num = 1;
		ib_dispatch_event(&event);
		return 0;
	}
	return -ENODEV;
}
EXPORT_SYMBOL_GPL(kmad_fakeib_port_event);

static int __init fakeib_init(void)
{
	unsigned int i, registered = 0;
	int ret;

	if (!devices || devices > FAKEIB_MAX_DEVICES || !sm_lid ||
	    sm_lid >= be16_to_cpu(IB_MULTICAST_LID_BASE))
		return -EINVAL;
	fakeib_wq = alloc_ordered_workqueue("kmad_fakeib", 0);
	if (!fakeib_wq)
		return -ENOMEM;
	fakeib_ndevs = devices;
	for (i = 0; i < fakeib_ndevs; i++) {
		struct fakeib_dev *fdev;

		fdev = ib_alloc_device(fakeib_dev, ibdev);
		if (!fdev) {
			ret = -ENOMEM;
			goto err;
		}
		fakeib_devs[i] = fdev;
		fdev->index = i;
		fdev->lid = i + 1;
		spin_lock_init(&fdev->port_lock);
		xa_init_flags(&fdev->qps, XA_FLAGS_ALLOC);
		fdev->next_qpn = 2;
		fdev->ibdev.node_guid = cpu_to_be64(FAKEIB_GUID_BASE + 2 * i);
		fdev->port_guid = cpu_to_be64(FAKEIB_GUID_BASE + 2 * i + 1);
		fdev->ibdev.node_type = RDMA_NODE_IB_CA;
		fdev->ibdev.phys_port_cnt = 1;
		fdev->ibdev.num_comp_vectors = 1;
		fdev->ibdev.local_dma_lkey = 0;
		snprintf(fdev->ibdev.node_desc, sizeof(fdev->ibdev.node_desc),
			 "kmad fakeib HCA %u", i);
		ib_set_device_ops(&fdev->ibdev, &fakeib_ops);
	}
	for (i = 0; i < fakeib_ndevs; i++) {
		/* NULL DMA device: ib_uses_virt_dma(). */
		ret = ib_register_device(&fakeib_devs[i]->ibdev, "fakeib%d",
					 NULL);
		if (ret)
			goto err;
		registered++;
		pr_info("%s: LID %u, port GUID %016llx, link layer InfiniBand\n",
			dev_name(&fakeib_devs[i]->ibdev.dev), fakeib_devs[i]->lid,
			be64_to_cpu(fakeib_devs[i]->port_guid));
	}
	return 0;

err:
	while (registered--)
		ib_unregister_device(&fakeib_devs[registered]->ibdev);
	destroy_workqueue(fakeib_wq);
	fakeib_free_all();
	return ret;
}

static void __exit fakeib_exit(void)
{
	unsigned int i;

	for (i = 0; i < fakeib_ndevs; i++)
		ib_unregister_device(&fakeib_devs[i]->ibdev);
	/* Every QP is gone, and with it every packet and flush. */
	destroy_workqueue(fakeib_wq);
	WARN_ON(!list_empty(&fakeib_wire_list) ||
		!list_empty(&fakeib_flush_list));
	fakeib_free_all();
}

module_init(fakeib_init);
module_exit(fakeib_exit);

MODULE_DESCRIPTION("kmad test: fake InfiniBand link layer devices for ib_core (QEMU guests only)");
MODULE_LICENSE("GPL");
