// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: raw QPs, the bare transport under kmad, for kmad_bench.
 *
 * A raw pair is one QP on port 1 of each of two HCAs, with its own CQ, both
 * created, posted to and polled here through the same code the provider
 * operations run (hw.c, cq.c), and routed by the same fabric, but with no
 * kmad in between: no send tracking, no TID table, no agent, no workqueue
 * hop.  kmad_sim_raw_round_trip() measures what the simulated transport
 * alone costs for a request and its response, so that kmad_bench can show
 * kmad's overhead over it as a ratio.
 *
 * The raw QPs have QP number SIM_RAW_QPN on their ports, beside kmad's QP0
 * and QP1, and are reached by it (route.c); their CQs are never armed, so
 * they raise no completion event, and they are polled by the caller.
 * Transmission is the QPs' transmit work, as for kmad's QPs (async mode).
 *
 * Lifetime: a raw pair must be destroyed before its fabric and before
 * either of its HCAs is removed (kmad_sim_remove_device() frees the
 * device the QPs point into), and used by one thread at a time.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "hw.h"

/* The class the raw pair sends: a vendor class no firmware answers. */
#define RAW_CLASS		0x09
#define RAW_CLASS_VERSION	1
/* CQEs a raw CQ can hold: a send and a receive of its QP, and spare. */
#define RAW_CQ_DEPTH		4

/**
 * struct raw_end - one side of a raw pair.
 * @cq: its CQ (polled here, never armed).
 * @qp: its QP, published as SIM_RAW_QPN of its port.
 * @lid: its port's LID.
 * @send_cqe: completion context of its send (compared, never called).
 * @recv_cqe: the same for its receive.
 * @mad: the MAD it sends.
 * @recv: its receive buffer: GRH area, then the MAD.
 */
struct raw_end {
	struct sim_cq *cq;
	struct sim_qp *qp;
	u16 lid;
	struct kmad_cqe send_cqe;
	struct kmad_cqe recv_cqe;
	struct kmad_mad mad;
	u8 recv[KMAD_GRH_BYTES + KMAD_MAD_SIZE];
};

/**
 * struct kmad_sim_raw - a raw QP pair.
 * @fab: its fabric.
 * @end: the requester [0] and the responder [1].
 * @tid: the TID of the next request.
 */
struct kmad_sim_raw {
	struct kmad_sim_fabric *fab;
	struct raw_end end[2];
	u64 tid;
};

static int raw_post_recv(struct raw_end *e)
{
	struct kmad_hw_recv wr = {
		.cqe = &e->recv_cqe,
		.buf = e->recv,
		.len = sizeof(e->recv),
	};

	return kmad_sim_qp_post_recv(e->qp, &wr);
}

static int raw_post_send(struct raw_end *e, u16 dlid)
{
	struct kmad_hw_send wr = {
		.cqe = &e->send_cqe,
		.mad = &e->mad,
		.len = sizeof(e->mad),
		.dlid = dlid,
		.remote_qpn = SIM_RAW_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};

	return kmad_sim_qp_post_send(e->qp, &wr);
}

/*
 * Poll @e's CQ until it yields the CQE of @want, which must be the next
 * one and successful.  Busy, yielding the CPU to the transmit work.
 */
static int raw_poll(struct raw_end *e, struct kmad_cqe *want,
		    unsigned long deadline)
{
	struct kmad_wc wc;

	for (;;) {
		if (kmad_sim_cq_poll(e->cq, 1, &wc) == 1)
			return wc.cqe == want &&
			       wc.status == KMAD_WC_SUCCESS ? 0 : -EIO;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		cond_resched();
	}
}

static void raw_end_destroy(struct raw_end *e)
{
	if (e->qp)
		kmad_sim_qp_free(e->qp);
	if (e->cq)
		kmad_sim_cq_free(e->cq);
	e->qp = NULL;
	e->cq = NULL;
}

static int raw_end_create(struct kmad_sim_fabric *fab, unsigned int dev,
			  struct raw_end *e)
{
	struct sim_node *node;
	struct sim_dev *sdev;
	int ret;

	if (dev >= fab->num_hcas)
		return -EINVAL;
	node = fab->nodes[dev];
	if (node->state != SIM_DEV_LIVE || !node->kdev)
		return -ENODEV;
	sdev = kmad_device_priv(node->kdev);
	e->lid = kmad_sim_port_lid_of(&node->ports[1]);
	e->cq = kmad_sim_cq_alloc(sdev, RAW_CQ_DEPTH);
	if (IS_ERR(e->cq)) {
		ret = PTR_ERR(e->cq);
		e->cq = NULL;
		return ret;
	}
	e->qp = kmad_sim_qp_alloc(sdev, 1, SIM_RAW_QPN, e->cq, 1, 1);
	if (IS_ERR(e->qp)) {
		ret = PTR_ERR(e->qp);
		e->qp = NULL;
		goto err_destroy;
	}
	ret = kmad_sim_qp_modify(e->qp, KMAD_QPS_RTS);
	if (ret)
		goto err_destroy;
	ret = raw_post_recv(e);
	if (ret)
		goto err_destroy;
	return 0;

err_destroy:
	raw_end_destroy(e);
	return ret;
}

/**
 * kmad_sim_raw_create() - a raw QP pair between port 1 of two HCAs.
 * @fab: an asynchronous fabric (&kmad_sim_config.mode %KMAD_SIM_ASYNC).
 * @dev_req: the requester's HCA index.
 * @dev_resp: the responder's HCA index.
 *
 * Context: process context.
 * Return: the pair, or an ERR_PTR: -EINVAL for bad arguments or a fabric
 * in step mode, -ENODEV for an HCA that is gone, -EBUSY if a port already
 * has a raw QP, -ENOMEM.
 */
struct kmad_sim_raw *kmad_sim_raw_create(struct kmad_sim_fabric *fab,
					 unsigned int dev_req,
					 unsigned int dev_resp)
{
	struct kmad_sim_raw *raw;
	int ret;

	if (IS_ERR_OR_NULL(fab) || fab->cfg.mode != KMAD_SIM_ASYNC ||
	    dev_req == dev_resp)
		return ERR_PTR(-EINVAL);
	raw = kzalloc(sizeof(*raw), GFP_KERNEL);
	if (!raw)
		return ERR_PTR(-ENOMEM);
	raw->fab = fab;
	ret = raw_end_create(fab, dev_req, &raw->end[0]);
	if (ret)
		goto err_free;
	ret = raw_end_create(fab, dev_resp, &raw->end[1]);
	if (ret)
		goto err_destroy_req;
	return raw;

err_destroy_req:
	raw_end_destroy(&raw->end[0]);
err_free:
	kfree(raw);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(kmad_sim_raw_create);

/**
 * kmad_sim_raw_destroy() - destroy a raw pair.
 * @raw: the pair; NULL or an error pointer is ignored.
 *
 * Context: process context.
 */
void kmad_sim_raw_destroy(struct kmad_sim_raw *raw)
{
	if (IS_ERR_OR_NULL(raw))
		return;
	raw_end_destroy(&raw->end[1]);
	raw_end_destroy(&raw->end[0]);
	kfree(raw);
}
EXPORT_SYMBOL_GPL(kmad_sim_raw_destroy);

/**
 * kmad_sim_raw_round_trip() - one request and its response over a raw
 * pair, through the provider's data path alone.
 * @raw: the pair.
 * @timeout_ms: how long to wait for each completion.
 *
 * The requester posts a Get; the responder polls its receive, posts a
 * receive buffer again and sends a GetResp with the request's TID and
 * data back; the requester polls its send completion and the response
 * (checking its TID), then posts its receive buffer again; the responder
 * polls its send completion.  Both sides are polled by the caller.
 *
 * Context: process context; one caller at a time per pair.
 * Return: 0; -ETIMEDOUT if a completion did not come, -EIO for a failed
 * or unexpected one or a response that is not the request's.
 */
int kmad_sim_raw_round_trip(struct kmad_sim_raw *raw,
			    unsigned int timeout_ms)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(timeout_ms);
	struct raw_end *req = &raw->end[0], *resp = &raw->end[1];
	struct kmad_mad *got;
	__be64 tid;
	int ret;

	memset(&req->mad, 0, sizeof(req->mad));
	req->mad.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	req->mad.mad_hdr.mgmt_class = RAW_CLASS;
	req->mad.mad_hdr.class_version = RAW_CLASS_VERSION;
	req->mad.mad_hdr.method = KMAD_METHOD_GET;
	tid = cpu_to_be64(++raw->tid);
	req->mad.mad_hdr.tid = tid;
	ret = raw_post_send(req, resp->lid);
	if (ret)
		return ret;

	ret = raw_poll(resp, &resp->recv_cqe, deadline);
	if (ret)
		return ret;
	got = (struct kmad_mad *)(resp->recv + KMAD_GRH_BYTES);
	resp->mad = *got;
	resp->mad.mad_hdr.method = KMAD_METHOD_GET_RESP;
	ret = raw_post_recv(resp);
	if (!ret)
		ret = raw_post_send(resp, req->lid);
	if (ret)
		return ret;

	ret = raw_poll(req, &req->send_cqe, deadline);
	if (!ret)
		ret = raw_poll(req, &req->recv_cqe, deadline);
	if (ret)
		return ret;
	got = (struct kmad_mad *)(req->recv + KMAD_GRH_BYTES);
	if (got->mad_hdr.tid != tid ||
	    got->mad_hdr.method != KMAD_METHOD_GET_RESP)
		return -EIO;
	ret = raw_post_recv(req);
	if (!ret)
		ret = raw_poll(resp, &resp->send_cqe, deadline);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_sim_raw_round_trip);
