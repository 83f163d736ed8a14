// SPDX-License-Identifier: GPL-2.0
/*
 * kmad receive path: receive buffers, validation, response matching,
 * request dispatch, and the answer to requests no agent takes.
 *
 * Nothing from the wire is trusted: a MAD is validated (kmad_mad_validate())
 * before any field is used, and one that fails is dropped and counted by
 * reason.  A response goes to the agent whose hi_tid it carries, and only
 * if it matches an outstanding request of that agent (kmad_send_response());
 * otherwise it is dropped and counted.  A request goes to the agent
 * registered for its class, version and method (and OUI for vendor range 2);
 * if none takes it, a request that expects a response is answered with
 * GetResp (or the method's response) carrying "unsupported class/version" or
 * "unsupported method"; responses, traps, trap represses and sends are never
 * answered.  A request that fails validation only because of its class
 * version, or a method or method/attribute pair its class does not define,
 * is counted as dropped for that reason and answered the same way.
 */

#include <linux/slab.h>

#include "kmad_priv.h"
#include "trace.h"

/**
 * kmad_recv_free() - free a receive buffer kmad still owns.
 * @recv: the buffer.
 */
void kmad_recv_free(struct kmad_recv_priv *recv)
{
	kfree(recv);
}

/**
 * kmad_free_recv() - give a received MAD back to kmad.
 * @wc: the &struct kmad_recv_wc a recv_handler got; NULL is ignored.
 *
 * Context: any but hard interrupt.
 */
void kmad_free_recv(struct kmad_recv_wc *wc)
{
	if (wc)
		kmad_recv_free(container_of(wc, struct kmad_recv_priv, wc));
}
EXPORT_SYMBOL_GPL(kmad_free_recv);

/**
 * kmad_recv_refill() - post receive buffers until the QP holds rq_depth.
 * @qpi: the QP.
 *
 * Context: process context.  A failed allocation is counted and retried at
 * the next receive completion.
 * Return: 0, or -ENOMEM if the QP holds no receive buffer at all.
 */
int kmad_recv_refill(struct kmad_qp_info *qpi)
{
	const struct kmad_provider_ops *ops = qpi->port->dev->ops;
	struct kmad_recv_priv *recv;
	struct kmad_hw_recv hw;
	int ret = 0;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&qpi->lock, flags);
		if (qpi->run != KMAD_QP_RUNNING ||
		    qpi->rq_posted >= qpi->rq_depth) {
			spin_unlock_irqrestore(&qpi->lock, flags);
			break;
		}
		spin_unlock_irqrestore(&qpi->lock, flags);

		recv = kzalloc(sizeof(*recv), GFP_KERNEL);
		if (!recv) {
			kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_NOBUF);
			ret = -ENOMEM;
			break;
		}
		recv->cqe.done = kmad_recv_done;
		recv->qpi = qpi;
		hw.cqe = &recv->cqe;
		hw.buf = &recv->mad;
		hw.len = sizeof(recv->mad);

		spin_lock_irqsave(&qpi->lock, flags);
		if (qpi->run != KMAD_QP_RUNNING ||
		    qpi->rq_posted >= qpi->rq_depth) {
			spin_unlock_irqrestore(&qpi->lock, flags);
			kfree(recv);
			break;
		}
		ret = ops->post_recv(&qpi->qp, &hw);
		if (!ret)
			qpi->rq_posted++;
		spin_unlock_irqrestore(&qpi->lock, flags);
		if (ret) {
			kfree(recv);
			break;
		}
	}
	spin_lock_irqsave(&qpi->lock, flags);
	if (ret && qpi->rq_posted)
		ret = 0;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return ret;
}

/* Requests that expect a response, and so get one when unsupported. */
static bool method_expects_response(u8 method)
{
	switch (method) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
	case KMAD_METHOD_REPORT:
	case KMAD_METHOD_GET_TABLE:
	case KMAD_METHOD_GET_TRACE_TABLE:
	case KMAD_METHOD_GET_MULTI:
	case KMAD_METHOD_DELETE:
		return true;
	default:
		return false;
	}
}

static u8 response_method(u8 method)
{
	return method == KMAD_METHOD_SET ? KMAD_METHOD_GET_RESP :
					   method | KMAD_METHOD_RESP;
}

/* Fill @resp as the response to @req: same TID, class and attribute. */
static void build_response(struct kmad_mad *resp, const struct kmad_mad *req,
			   u16 status)
{
	*resp = *req;
	if (req->mad_hdr.mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		kmad_smi_make_response((struct kmad_smp *)resp);
	resp->mad_hdr.method = response_method(req->mad_hdr.method);
	resp->mad_hdr.status = cpu_to_be16(status |
		(be16_to_cpu(resp->mad_hdr.status) & KMAD_SMP_DIRECTION));
}

static void response_dest(struct kmad_dest *dest,
			  const struct kmad_recv_wc *req)
{
	dest->dlid = req->mad->mad_hdr.mgmt_class ==
		     KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE ?
		     KMAD_PERMISSIVE_LID : req->slid;
	dest->remote_qpn = req->src_qpn;
	dest->remote_qkey = KMAD_QP1_QKEY;
	dest->sl = req->sl;
	dest->pkey_index = req->pkey_index;
}

/**
 * kmad_create_response() - a send buffer holding the response to a request.
 * @agent: the agent that will send it.
 * @req: the received request.
 * @gfp: allocation flags.
 *
 * Copies the request, sets the response method (GetResp for Get and Set,
 * else the method with the RESP bit), clears the status (sets the D bit for
 * a directed-route SMP) and addresses it to the requester.  The caller fills
 * the attribute data and posts it.
 *
 * Return: the buffer or an ERR_PTR.
 */
struct kmad_send_buf *kmad_create_response(struct kmad_agent *agent,
					   const struct kmad_recv_wc *req,
					   gfp_t gfp)
{
	struct kmad_send_buf *buf;
	struct kmad_dest dest;

	if (!agent || !req || !req->mad ||
	    kmad_mad_is_response(&req->mad->mad_hdr))
		return ERR_PTR(-EINVAL);
	response_dest(&dest, req);
	buf = kmad_alloc_send_buf(agent, &dest, gfp);
	if (IS_ERR(buf))
		return buf;
	build_response(buf->mad, req->mad, KMAD_MAD_STATUS_SUCCESS);
	return buf;
}
EXPORT_SYMBOL_GPL(kmad_create_response);

/* Answer a request no agent took with @status; consumes nothing. */
static void answer_unsupported(struct kmad_qp_info *qpi,
			       struct kmad_recv_priv *recv, u16 status)
{
	struct kmad_agent_priv *responder = qpi->port->responder[qpi->qpt];
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;
	struct kmad_send_buf *buf;
	struct kmad_dest dest;

	if (!responder || !method_expects_response(hdr->method)) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DROPPED);
		return;
	}
	response_dest(&dest, &recv->wc);
	buf = kmad_alloc_send_buf(&responder->agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf)) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DROPPED);
		return;
	}
	build_response(buf->mad, &recv->mad, status);
	if (kmad_post_send(buf)) {
		kmad_free_send_buf(buf);
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DROPPED);
		return;
	}
	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_ANSWERED);
}

static void recv_dispatch(struct kmad_qp_info *qpi,
			  struct kmad_recv_priv *recv)
{
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;
	struct kmad_agent_priv *agent;
	bool class_known = false;

	if (kmad_mad_is_response(hdr)) {
		agent = kmad_agent_find_by_tid(qpi, be64_to_cpu(hdr->tid));
		if (!agent) {
			kmad_port_stat_inc(qpi->port,
					   KMAD_PSTAT_RESP_UNMATCHED);
			kmad_recv_free(recv);
			return;
		}
		kmad_send_response(agent, recv);
		kmad_agent_put(agent);
		return;
	}

	agent = kmad_agent_find_for_request(qpi, &recv->mad, &class_known);
	if (agent) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DISPATCHED);
		atomic64_inc(&agent->stats[KMAD_ASTAT_UNSOLICITED]);
		kmad_agent_queue_recv(agent, recv);	/* takes our ref */
		return;
	}
	answer_unsupported(qpi, recv, class_known ?
			   KMAD_MAD_STATUS_UNSUPPORTED_METHOD :
			   KMAD_MAD_STATUS_BAD_VERSION);
	kmad_recv_free(recv);
}

/*
 * The status with which to answer a request that failed validation only
 * because kmad does not support what it asks (IBTA answers those), or 0
 * for a MAD that is malformed and gets no answer.
 */
static u16 verdict_answer(enum kmad_mad_verdict why)
{
	switch (why) {
	case KMAD_MAD_VERDICT_CLASS_VERSION:
		return KMAD_MAD_STATUS_BAD_VERSION;
	case KMAD_MAD_VERDICT_CLASS_METHOD:
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD;
	case KMAD_MAD_VERDICT_METHOD_ATTR:
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	default:
		return 0;
	}
}

/* The SMI's receive step for a directed-route SMP arriving at this CA
 * port (IBTA C14-9/C14-13); false if it must be dropped.
 */
static bool recv_smi_step(struct kmad_qp_info *qpi,
			  struct kmad_recv_priv *recv)
{
	struct kmad_smi_node node;

	kmad_port_smi_node(qpi->port, &node);
	return kmad_smi_recv((struct kmad_smp *)&recv->mad, &node) ==
	       KMAD_SMI_HANDLE;
}

static void recv_fill_wc(struct kmad_qp_info *qpi,
			 struct kmad_recv_priv *recv, const struct kmad_wc *wc)
{
	recv->wc.mad = &recv->mad;
	recv->wc.slid = wc->slid;
	recv->wc.src_qpn = wc->src_qpn;
	recv->wc.sl = wc->sl;
	recv->wc.pkey_index = wc->pkey_index;
	recv->wc.qpt = qpi->qpt;
}

/**
 * kmad_recv_done() - a receive's CQE was polled.
 * @cq: the CQ.
 * @wc: the completion; @wc->cqe is the buffer's &kmad_recv_priv.cqe.
 *
 * Context: CQ drain.
 */
void kmad_recv_done(struct kmad_cq *cq, struct kmad_wc *wc)
{
	struct kmad_recv_priv *recv = container_of(wc->cqe,
						   struct kmad_recv_priv, cqe);
	struct kmad_qp_info *qpi = cq->info;
	enum kmad_mad_verdict why;

	u16 answer;

	kmad_qp_recv_returned(qpi, wc->status != KMAD_WC_SUCCESS);
	if (wc->status != KMAD_WC_SUCCESS) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_FLUSHED);
		kmad_recv_free(recv);
		return;
	}
	kmad_recv_refill(qpi);

	if (kmad_mad_validate(&recv->mad, min_t(u32, wc->byte_len,
						sizeof(recv->mad)), &why)) {
		if (why < KMAD_MAD_VERDICT_COUNT)
			atomic64_inc(&qpi->port->drops[why]);
		pr_debug_ratelimited("kmad: %s port %u QP%u: dropped MAD from LID %u: %s\n",
				     qpi->port->dev->name, qpi->port->port_num,
				     qpi->qp.qpn, wc->slid,
				     kmad_mad_verdict_name(why));
		answer = verdict_answer(why);
		if (answer && !kmad_mad_is_response(&recv->mad.mad_hdr) &&
		    kmad_is_smp_class(recv->mad.mad_hdr.mgmt_class) ==
		    kmad_qpt_is_smi(qpi->qpt)) {
			recv_fill_wc(qpi, recv, wc);
			answer_unsupported(qpi, recv, answer);
		}
		kmad_recv_free(recv);
		return;
	}
	/* A MAD of the other QP's kind is malformed for this one. */
	if (kmad_is_smp_class(recv->mad.mad_hdr.mgmt_class) !=
	    kmad_qpt_is_smi(qpi->qpt)) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_WRONG_QP);
		kmad_recv_free(recv);
		return;
	}

	if (recv->mad.mad_hdr.mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
	    !recv_smi_step(qpi, recv)) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_SMI_DISCARDS);
		kmad_recv_free(recv);
		return;
	}

	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECEIVED);
	trace_kmad_recv(qpi, &recv->mad, wc->slid);
	recv_fill_wc(qpi, recv, wc);
	recv_dispatch(qpi, recv);
}
