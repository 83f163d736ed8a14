// SPDX-License-Identifier: GPL-2.0
/*
 * kmad receive path: receive buffers, validation, response matching,
 * request dispatch, and the answer to requests no agent takes.
 *
 * Nothing from the wire is trusted: a MAD is validated (kmad_mad_validate())
 * before any field is used, and one that fails is dropped and counted by
 * reason.  A response goes to the agent whose hi_tid it carries, and only
 * if it matches an outstanding request of that agent (kmad_send_response());
 * otherwise it is dropped and counted, but an RMPP-active one for an agent
 * without kernel RMPP, which gets it as unsolicited (recv_user_rmpp(),
 * user-level RMPP).  A request goes to the agent
 * registered for its class, version and method (and OUI for vendor range 2);
 * if none takes it, a request whose method asks for a response (Get, Set,
 * Report, and the SA's GetTable, GetTraceTable, GetMulti and Delete) is
 * answered with its IBTA response method carrying "unsupported
 * class/version" or "unsupported method"; responses, traps, sends and the
 * class-specific methods of other classes are never answered.  A request
 * that fails validation only because of its class version or a method its
 * class does not define is counted as dropped for that reason and answered
 * too.  An answer carries the ClassVersion its class defines, and GetResp
 * where the class defines no other response (an undefined method, a
 * Report outside the SA).  One whose method/attribute pair its class
 * forbids (a CM Get of an attribute other than ClassPortInfo) is dropped
 * and not answered: its answer would break the same rule.  kmad never
 * sends an answer kmad_mad_validate() would drop (Documentation/
 * ulp-guide.rst, "Requests kmad answers itself").
 */

#include <kunit/visibility.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "kmad_priv.h"
#include "rmpp.h"
#include "trace.h"

/* Methods 0x10-0x7F are class-specific (IBTA 13.4.5). */
#define KMAD_METHOD_CLASS_FIRST	0x10

static void recv_vfree_work(struct work_struct *work)
{
	vfree(work);
}

/*
 * Free a reassembled message's buffer.  One from vmalloc (kvmalloc()'s
 * fallback, always more than a page) is freed from kmad_wq: vfree() may
 * sleep, and kmad_free_recv() may be called with interrupts off
 * (<kmad/mad.h>).  The work item lives in the dead buffer itself.
 */
static void recv_buf_free(const void *buf)
{
	/* kmad's own buffer (const to the ULP it was handed to). */
	struct work_struct *work = (struct work_struct *)buf;

	if (!is_vmalloc_addr(buf)) {
		kfree(buf);
		return;
	}
	BUILD_BUG_ON(sizeof(*work) > PAGE_SIZE);
	INIT_WORK(work, recv_vfree_work);
	queue_work(kmad_wq, work);
}

/**
 * kmad_recv_free() - free a receive buffer kmad still owns.
 * @recv: the buffer.
 *
 * A reassembled RMPP message (rmpp_recv.c) is a receive whose
 * &kmad_recv_wc.mad points to its own buffer, not to @recv->mad: that
 * buffer goes too.
 *
 * Context: any but hard interrupt.
 */
void kmad_recv_free(struct kmad_recv_priv *recv)
{
	if (recv->wc.mad && recv->wc.mad != &recv->mad)
		recv_buf_free(recv->wc.mad);
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
	if (!IS_ERR_OR_NULL(wc))
		kmad_recv_free(container_of(wc, struct kmad_recv_priv, wc));
}
EXPORT_SYMBOL_GPL(kmad_free_recv);

/**
 * kmad_recv_refill() - post receive buffers until the QP holds rq_depth.
 * @qpi: the QP.
 *
 * Context: process context.  A failed allocation is counted.  A refill
 * that failed (to allocate, or in the provider's post_recv) is tried again
 * at the next receive completion, or, if the QP was left with no receive
 * buffer at all, so that none will come, from &kmad_qp_info.refill_work
 * %KMAD_RECV_REFILL_RETRY_MS later, while the QP runs.
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

		recv = kmad_alloc_fails(KMAD_ALLOC_RECV_BUF) ? NULL :
		       kzalloc(sizeof(*recv), GFP_KERNEL);
		if (!recv) {
			kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_NOBUF);
			ret = -ENOMEM;
			break;
		}
		recv->cqe.done = kmad_recv_done;
		recv->qpi = qpi;
		hw.cqe = &recv->cqe;
		/* The GRH area, then the MAD (provider.h). */
		hw.buf = &recv->grh;
		hw.len = KMAD_GRH_BYTES + sizeof(recv->mad);

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
			kmad_port_stat_inc(qpi->port,
					   KMAD_PSTAT_RECV_POST_FAILED);
			kfree(recv);
			break;
		}
	}
	spin_lock_irqsave(&qpi->lock, flags);
	if (ret && !qpi->rq_posted && qpi->run == KMAD_QP_RUNNING)
		queue_delayed_work(kmad_wq, &qpi->refill_work,
				   msecs_to_jiffies(KMAD_RECV_REFILL_RETRY_MS));
	if (ret && qpi->rq_posted)
		ret = 0;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return ret;
}

/*
 * The method of the response to a request of @method in class @cls, or 0
 * if it has none.  IBTA 13.4.5 and 15.2.2 pair them: Get and Set with
 * GetResp, Report with ReportResp, Trap with TrapRepress, and in the SA
 * GetTable and GetTraceTable with GetTableResp, GetMulti with
 * GetMultiResp, Delete with DeleteResp.  Send has none, except in
 * baseboard management, where a Send answers a Send (build_response()
 * marks it in the AttributeModifier).  The class-specific methods of other
 * classes (0x10-0x7F) are answered with the RESP bit set; the other
 * common methods have no response.
 */
static u8 response_method(u8 cls, u8 method)
{
	switch (method) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
		return KMAD_METHOD_GET_RESP;
	case KMAD_METHOD_REPORT:
		return KMAD_METHOD_REPORT_RESP;
	case KMAD_METHOD_TRAP:
		return KMAD_METHOD_TRAP_REPRESS;
	case KMAD_METHOD_SEND:
		return cls == KMAD_MGMT_CLASS_BM ? KMAD_METHOD_SEND : 0;
	}
	if (cls == KMAD_MGMT_CLASS_SUBN_ADM) {
		switch (method) {
		case KMAD_METHOD_GET_TABLE:
		case KMAD_METHOD_GET_TRACE_TABLE:
			return KMAD_METHOD_GET_TABLE_RESP;
		case KMAD_METHOD_GET_MULTI:
			return KMAD_METHOD_GET_MULTI_RESP;
		case KMAD_METHOD_DELETE:
			return KMAD_METHOD_DELETE_RESP;
		default:
			return 0;
		}
	}
	if ((method & KMAD_METHOD_RESP) || method < KMAD_METHOD_CLASS_FIRST)
		return 0;
	return method | KMAD_METHOD_RESP;
}

/*
 * Requests kmad answers itself, with a status saying why, when no agent
 * takes them (IBTA 13.4.7): those whose method asks for a response, Get,
 * Set, Report, and the SA's GetTable, GetTraceTable, GetMulti and Delete.
 * Not a Trap (a TrapRepress would tell its sender the notice was taken),
 * not a Send (none is due, and a baseboard management Send is its
 * manager's to answer), not the class-specific methods of other classes
 * (kmad cannot know which of them ask for a response), and never a
 * response.  Of an RMPP transfer only the first DATA segment: the answer
 * ends the transfer, whose later segments, ACKs, STOPs and ABORTs are no
 * requests of their own (build_unsupported() makes it one MAD).
 */
static bool answers_unsupported(const struct kmad_mad *mad)
{
	const struct kmad_mad_hdr *hdr = &mad->mad_hdr;
	const struct kmad_rmpp_hdr *rh =
		&((const struct kmad_rmpp_mad *)mad)->rmpp_hdr;

	if (kmad_mgmt_class_has_rmpp(hdr->mgmt_class) &&
	    (kmad_rmpp_flags(rh) & KMAD_RMPP_FLAG_ACTIVE) &&
	    (rh->rmpp_type != KMAD_RMPP_TYPE_DATA ||
	     !(kmad_rmpp_flags(rh) & KMAD_RMPP_FLAG_FIRST)))
		return false;
	switch (hdr->method) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
	case KMAD_METHOD_REPORT:
		return true;
	case KMAD_METHOD_GET_TABLE:
	case KMAD_METHOD_GET_TRACE_TABLE:
	case KMAD_METHOD_GET_MULTI:
	case KMAD_METHOD_DELETE:
		return hdr->mgmt_class == KMAD_MGMT_CLASS_SUBN_ADM;
	default:
		return false;
	}
}

/*
 * Fill @resp as the response to @req, with @status: same TID, class,
 * version and attribute, the response method.  One MAD, even to a
 * segment of an RMPP transfer: a class with the RMPP header gets it
 * cleared (RMPPFlags.Active 0).  An SA response carries SM_Key 0 (IBTA
 * C15-0.1.5), whatever the request's.  -EINVAL if @req has no response.
 */
static int build_response(struct kmad_mad *resp, const struct kmad_mad *req,
			  u16 status)
{
	const struct kmad_mad_hdr *hdr = &req->mad_hdr;
	u8 method = 0;

	if (!kmad_mad_is_response(hdr))
		method = response_method(hdr->mgmt_class, hdr->method);
	if (!method)
		return -EINVAL;
	*resp = *req;
	if (kmad_mgmt_class_has_rmpp(hdr->mgmt_class))
		memset(&((struct kmad_rmpp_mad *)resp)->rmpp_hdr, 0,
		       sizeof(struct kmad_rmpp_hdr));
	if (hdr->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		kmad_smi_make_response((struct kmad_smp *)resp);
		status |= be16_to_cpu(resp->mad_hdr.status) &
			  KMAD_SMP_DIRECTION;
	}
	if (hdr->mgmt_class == KMAD_MGMT_CLASS_SUBN_ADM)
		kmad_sa_set_sm_key((struct kmad_sa_mad *)resp, 0);
	resp->mad_hdr.method = method;
	resp->mad_hdr.status = cpu_to_be16(status);
	if (method == KMAD_METHOD_SEND)		/* baseboard management */
		resp->mad_hdr.attr_mod |= cpu_to_be32(1);
	return 0;
}

/**
 * kmad_recv_reply_dest() - address the answer to a received MAD.
 * @port: the port @req arrived on.
 * @dest: filled.
 * @req: the received MAD.
 *
 * For responses, kmad's "unsupported" answers and the RMPP receiver's
 * ACK, STOP and ABORT (rmpp_recv.c).  By LID: to the request's SLID, or
 * for a directed-route SMP that came directed all the way, to the
 * permissive LID.  A MAD that came with a GRH is
 * answered by GID, as ib_mad's
 * ib_init_ah_attr_from_wc() does: to its source GID, from the port's GID
 * it was sent to (the entry the provider said it arrived at,
 * &kmad_recv_grh.dgid_index, else the lowest index holding it), with its
 * flow label and traffic class, hop limit 0xff on InfiniBand (the
 * requester may be in another subnet) and %KMAD_ETH_HOP_LIMIT on
 * Ethernet; on InfiniBand a MAD
 * sent to the SA's well-known GID (%KMAD_SA_WELL_KNOWN_GUID, as ib_sa
 * addresses SA queries that need a GRH) from GID index 0, as ib_mad
 * answers it.  -EADDRNOTAVAIL if
 * that GID is none of the port's (a multicast DGID, or a GID the port lost
 * meanwhile): kmad does not answer from another address, which the
 * requester might not take for the one it asked.  A request that came
 * through the provider's bridge, to the port's real QP1, is answered from
 * there (&kmad_dest.from_qp1); on QP0 the answer needs no mark: every send
 * of QP0 on such a provider leaves from the real QP0 (kmad_send_ah_attr()).
 *
 * Context: any but hard interrupt.
 * Return: 0 or -EADDRNOTAVAIL.
 */
int kmad_recv_reply_dest(struct kmad_port *port, struct kmad_dest *dest,
			 const struct kmad_recv_wc *req)
{
	const struct kmad_smp *smp = (const struct kmad_smp *)req->mad;

	memset(dest, 0, sizeof(*dest));
	dest->dlid = req->slid;
	/* A directed-route SMP that came directed all the way goes back so
	 * from the permissive LID on; one whose last leg was LID-routed
	 * (its DrDLID is this port's LID) goes back first to where that
	 * leg began, its SLID (IBTA 14.2.2), as ib_mad answers every SMP.
	 */
	if (smp->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
	    smp->dr_dlid == cpu_to_be16(KMAD_PERMISSIVE_LID))
		dest->dlid = KMAD_PERMISSIVE_LID;
	dest->remote_qpn = req->src_qpn;
	dest->remote_qkey = KMAD_QP1_QKEY;
	dest->sl = req->sl;
	dest->pkey_index = req->pkey_index;
	/* From the LID it was sent to, as ib_init_ah_attr_from_wc(). */
	dest->src_path_bits = req->dlid_path_bits;
	dest->from_qp1 = req->bridged && !kmad_qpt_is_smi(req->qpt);
	if (!req->grh_present || kmad_qpt_is_smi(req->qpt))
		return 0;
	if (kmad_port_link_layer(port) != KMAD_LINK_LAYER_ETHERNET &&
	    req->grh.dgid.global.interface_id ==
	    cpu_to_be64(KMAD_SA_WELL_KNOWN_GUID))
		dest->grh.sgid_index = 0;
	else if (req->grh.dgid_index_valid)
		dest->grh.sgid_index = req->grh.dgid_index;
	else if (kmad_port_find_gid(port, &req->grh.dgid,
				    &dest->grh.sgid_index))
		return -EADDRNOTAVAIL;
	dest->grh_present = true;
	dest->grh.dgid = req->grh.sgid;
	dest->grh.flow_label = req->grh.flow_label;
	dest->grh.traffic_class = req->grh.traffic_class;
	dest->grh.hop_limit =
		kmad_port_link_layer(port) == KMAD_LINK_LAYER_ETHERNET ?
		KMAD_ETH_HOP_LIMIT : KMAD_IB_RESP_HOP_LIMIT;
	return 0;
}

/**
 * kmad_dest_from_wc() - the address to answer a received MAD at, as
 * ib_init_ah_attr_from_wc() gives it: what kmad_create_response()
 * addresses its response with (see kmad_recv_reply_dest() above).
 * @port: the port @wc arrived on.
 * @wc: the received MAD.
 * @dest: filled in.
 *
 * For a ULP that builds its answer itself, and for kmad_umad, which tells
 * user space the GID index a MAD was sent to and the hop limit to answer
 * with, as ib_umad does.
 *
 * Context: any but hard interrupt.
 * Return: 0; -EINVAL for a NULL argument; -EADDRNOTAVAIL for a MAD with a
 * GRH whose destination GID is none of the port's.
 */
int kmad_dest_from_wc(struct kmad_port *port, const struct kmad_recv_wc *wc,
		      struct kmad_dest *dest)
{
	if (IS_ERR_OR_NULL(port) || IS_ERR_OR_NULL(wc) || !wc->mad || !dest)
		return -EINVAL;
	return kmad_recv_reply_dest(port, dest, wc);
}
EXPORT_SYMBOL_GPL(kmad_dest_from_wc);

/**
 * kmad_create_response() - a send buffer holding the response to a request.
 * @agent: the agent that will send it.
 * @req: the received request.
 * @gfp: allocation flags.
 *
 * Copies the request and gives it the IBTA response method: GetResp for
 * Get and Set, ReportResp for Report, TrapRepress for Trap, and in the SA
 * GetTableResp for GetTable and GetTraceTable, GetMultiResp for GetMulti,
 * DeleteResp for Delete; a baseboard management Send is answered by a Send
 * with bit 0 of the AttributeModifier set, and a class-specific method of
 * another class by the method with the RESP bit.  Clears the status (sets
 * the D bit for a directed-route SMP) and, in a class with the RMPP
 * header, that header: the response is one MAD, whatever RMPP the request
 * used (an RMPP response is built with kmad_alloc_send_buf_rmpp()).  An
 * SA response gets SM_Key 0, as IBTA C15-0.1.5 has every SA response.
 * Addresses it to the requester:
 * by LID, or, if the request came with a GRH, by GID: to the request's
 * source GID from the port's GID it was sent to (the entry it arrived at
 * if the provider told it, &kmad_recv_grh.dgid_index, else the lowest
 * index that holds it), with the request's flow label and traffic class,
 * hop limit 0xff (InfiniBand) or 64 (Ethernet).  A request that arrived
 * through the provider's bridge (&kmad_recv_wc.bridged) is answered from
 * the port's real QP1 (&kmad_dest.from_qp1 set).  The caller fills the
 * attribute data and posts it.
 *
 * Return: the buffer, or an ERR_PTR: -EINVAL for bad arguments, a
 * request of the other QP's kind (an SMP for a QP1 agent, a GMP for a QP0
 * one), a request that has no response (a response, a Send outside
 * baseboard management), or one whose response kmad_mad_validate() would
 * drop (a method its class does not define); -EADDRNOTAVAIL for a
 * request with a GRH whose destination GID is none of the port's;
 * -ENOMEM.
 */
struct kmad_send_buf *kmad_create_response(struct kmad_agent *agent,
					   const struct kmad_recv_wc *req,
					   gfp_t gfp)
{
	struct kmad_send_buf *buf;
	struct kmad_dest dest;
	int ret;

	if (IS_ERR_OR_NULL(agent) || IS_ERR_OR_NULL(req) || !req->mad)
		return ERR_PTR(-EINVAL);
	/* An SMP is answered on QP0, a GMP on QP1: no other buffer posts. */
	if (kmad_is_smp_class(req->mad->mad_hdr.mgmt_class) !=
	    kmad_qpt_is_smi(agent->qpt))
		return ERR_PTR(-EINVAL);
	ret = kmad_recv_reply_dest(agent->port, &dest, req);
	if (ret)
		return ERR_PTR(ret);
	buf = kmad_alloc_send_buf(agent, &dest, gfp);
	if (IS_ERR(buf))
		return buf;
	/* Nothing the receive path would drop (a method the request's class
	 * does not define, bad directed-route hop fields).
	 */
	if (build_response(buf->mad, req->mad, KMAD_MAD_STATUS_SUCCESS) ||
	    kmad_mad_validate(buf->mad, sizeof(*buf->mad), NULL)) {
		kmad_free_send_buf(buf);
		return ERR_PTR(-EINVAL);
	}
	return buf;
}
EXPORT_SYMBOL_GPL(kmad_create_response);

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

/*
 * Fill @resp as kmad's answer to @req with @status.  The answer must be
 * one the requester's MAD layer accepts, so a ClassVersion the class does
 * not define is answered with the one it does (the requester learns which
 * version the port speaks), and a response method the class does not
 * define (a ReportResp outside the SA, the answer to a method the class
 * lacks) becomes GetResp, which every class defines, as Linux's IBTA
 * agents (qib's and hfi1's SMA and PMA) answer any method they do not
 * support.  In a class with an RMPP header the answer is one MAD, its
 * RMPP header cleared.  Nonzero if there is no answer, or if the answer
 * still would not pass kmad_mad_validate(): a CM request other than for
 * ClassPortInfo (CM carries every other attribute in Send, never
 * answered).
 */
static int build_unsupported(struct kmad_mad *resp, const struct kmad_mad *req,
			     u16 status)
{
	u8 version = kmad_mgmt_class_version(req->mad_hdr.mgmt_class);
	enum kmad_mad_verdict v;
	int ret;

	ret = build_response(resp, req, status);
	if (ret)
		return ret;
	if (version)
		resp->mad_hdr.class_version = version;
	if (kmad_mad_validate(resp, sizeof(*resp), &v) &&
	    v == KMAD_MAD_VERDICT_CLASS_METHOD)
		resp->mad_hdr.method = KMAD_METHOD_GET_RESP;
	return kmad_mad_validate(resp, sizeof(*resp), NULL);
}

/*
 * Answer a request no agent took, or one dropped with verdict @why that
 * kmad answers all the same, with @status; consumes nothing.  A
 * directed-route SMP is answered only if it travels outbound and, when it
 * failed validation before its SMI step, the SMI's receive step delivers
 * it here.
 */
static void answer_unsupported(struct kmad_qp_info *qpi,
			       struct kmad_recv_priv *recv, u16 status,
			       enum kmad_mad_verdict why)
{
	const struct kmad_mad_hdr *hdr = &recv->mad.mad_hdr;
	struct kmad_agent_priv *responder = NULL;
	struct kmad_send_buf *buf;
	struct kmad_dest dest;

	if (!answers_unsupported(&recv->mad))
		goto dropped;
	responder = kmad_port_responder_get(qpi->port, qpi->qpt);
	if (!responder)
		goto dropped;
	if (hdr->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
	    (kmad_smp_is_returning((struct kmad_smp *)&recv->mad) ||
	     (why != KMAD_MAD_VERDICT_OK && !recv_smi_step(qpi, recv))))
		goto dropped;
	if (kmad_recv_reply_dest(qpi->port, &dest, &recv->wc))
		goto dropped;
	/* Atomic: a provider's bridge may hand the MAD over from softirq
	 * (kmad_device_bridge_recv_qp()).
	 */
	buf = kmad_alloc_fails(KMAD_ALLOC_ANSWER) ? ERR_PTR(-ENOMEM) :
	      kmad_alloc_send_buf(&responder->agent, &dest, GFP_ATOMIC);
	if (IS_ERR(buf))
		goto dropped;
	if (build_unsupported(buf->mad, &recv->mad, status) ||
	    kmad_post_send(buf)) {
		kmad_free_send_buf(buf);
		goto dropped;
	}
	kmad_agent_put(responder);
	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_ANSWERED);
	return;
dropped:
	if (responder)
		kmad_agent_put(responder);
	kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DROPPED);
}

/*
 * An RMPP-active MAD for an agent that does RMPP goes through the RMPP
 * receiver first (rmpp.h): it hands back what to dispatch, or NULL.
 */
static struct kmad_recv_priv *recv_rmpp(struct kmad_agent_priv *agent,
					struct kmad_recv_priv *recv)
{
	if (!agent->reg.rmpp_version || !kmad_rmpp_active(&recv->mad))
		return recv;
	return kmad_rmpp_recv(agent, recv);
}

/*
 * User-level RMPP, as ib_mad's ib_mad_complete_recv() allows it: an
 * RMPP-active response (a DATA segment, or an ACK, STOP or ABORT) that
 * matches none of the requests of the agent whose hi_tid it carries (one
 * that came back to another address than its request's included, as
 * ib_mad's ib_find_send_mad() does not find it either) goes
 * to that agent's recv_handler as unsolicited (request NULL) if the agent
 * does not do RMPP itself (rmpp_version 0) and has a recv_handler: the
 * first segment of a multi-segment response completes the request, and
 * the later ones come this way, for the ULP (a kmad_umad user) to
 * reassemble and ACK them.  Not once the agent is unregistering (as the
 * request dispatch, kmad_agent_find_for_request()).  Any other response
 * that matches nothing is dropped.
 */
static bool recv_user_rmpp(const struct kmad_agent_priv *agent,
			   const struct kmad_recv_priv *recv)
{
	return !agent->reg.rmpp_version && agent->agent.recv_handler &&
	       READ_ONCE(agent->state) == KMAD_AGENT_ACTIVE &&
	       kmad_rmpp_active(&recv->mad);
}

/*
 * The status of kmad's answer to a valid request no agent takes.  On QP0
 * (where only Get and Set get this far: validation answers the SMP
 * class's other methods) 0x000C (unsupported method/attribute): every
 * port's SMA serves the SMP class at its one version, Get and Set
 * included, so what it lacks is the attribute (SMInfo at a port with no
 * SM), as ib_mad and the qib SMA answer, even where an agent has the
 * class for other methods (an SM's Trap receiver).  On QP1 0x0008
 * (unsupported method) if an agent has the class and version, else 0x0004
 * (unsupported class/version).
 */
static u16 unclaimed_status(const struct kmad_qp_info *qpi, bool class_known)
{
	if (kmad_qpt_is_smi(qpi->qpt))
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	if (class_known)
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD;
	return KMAD_MAD_STATUS_BAD_VERSION;
}

#if IS_ENABLED(CONFIG_KUNIT)
kmad_test_agent_hook_t kmad_test_recv_queue_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_test_recv_queue_hook);
#endif

/*
 * Queue @recv to @agent for its recv_handler, counting @stat, or count it
 * dropped if the agent's backlog is full.  An agent marked unregistering
 * since the dispatch found it takes nothing (mad.h): a request is then
 * answered as for no agent, the class known (kmad's "unsupported method"
 * answer; an RMPP request already ACKed whole is dropped), a response is
 * unmatched.  The queue takes our reference to @agent, also to drop it.
 */

static void recv_to_agent(struct kmad_agent_priv *agent,
			  struct kmad_recv_priv *recv, enum kmad_port_stat stat)
{
	struct kmad_port *port = agent->qpi->port;
#if IS_ENABLED(CONFIG_KUNIT)
	kmad_test_agent_hook_t hook = READ_ONCE(kmad_test_recv_queue_hook);

	if (hook)
		hook(agent);
#endif
	switch (kmad_agent_queue_recv(agent, recv)) {
	case 0:
		kmad_port_stat_inc(port, stat);
		return;
	case -ENOBUFS:
		kmad_port_stat_inc(port, KMAD_PSTAT_REQ_BACKLOG_DROPPED);
		break;
	default:
		if (stat != KMAD_PSTAT_REQ_DISPATCHED)
			kmad_port_stat_inc(port, KMAD_PSTAT_RESP_UNMATCHED);
		else if (recv->acked)
			kmad_port_stat_inc(port, KMAD_PSTAT_REQ_DROPPED);
		else
			answer_unsupported(recv->qpi, recv,
					   unclaimed_status(recv->qpi, true),
					   KMAD_MAD_VERDICT_OK);
	}
	kmad_recv_free(recv);
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
		recv = recv_rmpp(agent, recv);
		if (!recv || kmad_send_response(agent, recv)) {
			kmad_agent_put(agent);
			return;
		}
		if (recv_user_rmpp(agent, recv)) {
			recv_to_agent(agent, recv, KMAD_PSTAT_RESP_UNSOLICITED);
			return;
		}
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RESP_UNMATCHED);
		kmad_recv_free(recv);
		kmad_agent_put(agent);
		return;
	}

	agent = kmad_agent_find_for_request(qpi, &recv->mad, &class_known);
	if (IS_ERR(agent)) {
		/* Its agent is registering: its sender tries again. */
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_REQ_DROPPED);
		kmad_recv_free(recv);
		return;
	}
	if (agent) {
		recv = recv_rmpp(agent, recv);
		if (!recv) {
			kmad_agent_put(agent);
			return;
		}
		recv_to_agent(agent, recv, KMAD_PSTAT_REQ_DISPATCHED);
		return;
	}
	answer_unsupported(qpi, recv, unclaimed_status(qpi, class_known),
			   KMAD_MAD_VERDICT_OK);
	kmad_recv_free(recv);
}

/*
 * The status with which to answer a request that failed validation only
 * because kmad does not support what it asks (IBTA answers those), or 0
 * for a MAD that gets no answer: a malformed one, and one whose
 * method/attribute pair its class forbids (verdict METHOD_ATTR: a CM
 * request other than Send of an attribute other than ClassPortInfo, an SMP
 * Trap of another attribute than Notice), whose answer would carry the
 * same forbidden pair and be dropped by any MAD layer, kmad's or Linux's.
 */
static u16 verdict_answer(enum kmad_mad_verdict why)
{
	switch (why) {
	case KMAD_MAD_VERDICT_CLASS_VERSION:
		return KMAD_MAD_STATUS_BAD_VERSION;
	case KMAD_MAD_VERDICT_CLASS_METHOD:
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD;
	default:
		return 0;
	}
}

/* The GRH the provider wrote in front of the MAD, as the ULP sees it. */
static void recv_parse_grh(struct kmad_recv_grh *grh,
			   const struct kmad_wire_grh *wire)
{
	u32 vtf = be32_to_cpu(wire->version_tclass_flow);

	grh->sgid = wire->sgid;
	grh->dgid = wire->dgid;
	grh->traffic_class = (vtf >> 20) & 0xff;
	grh->flow_label = vtf & 0xfffff;
	grh->hop_limit = wire->hop_limit;
}

static void recv_fill_wc(struct kmad_qp_info *qpi,
			 struct kmad_recv_priv *recv, const struct kmad_wc *wc)
{
	recv->wc.mad = &recv->mad;
	recv->wc.mad_len = KMAD_MAD_SIZE;
	recv->wc.slid = wc->slid;
	recv->wc.src_qpn = wc->src_qpn;
	recv->wc.sl = wc->sl;
	recv->wc.pkey_index = wc->pkey_index;
	recv->wc.qpt = qpi->qpt;
	recv->wc.dlid_path_bits = wc->dlid_path_bits;
	recv->wc.grh_present = wc->wc_flags & KMAD_WC_GRH;
	if (recv->wc.grh_present) {
		recv_parse_grh(&recv->wc.grh, &recv->grh);
		recv->wc.grh.dgid_index_valid =
			wc->wc_flags & KMAD_WC_GID_INDEX &&
			wc->gid_index < kmad_port_gid_count(qpi->port);
		recv->wc.grh.dgid_index = wc->gid_index;
	}
}

static void recv_handle(struct kmad_qp_info *qpi, struct kmad_recv_priv *recv,
			const struct kmad_wc *wc);

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
	bool flushed = wc->status == KMAD_WC_FLUSH_ERR;

	/* Only a flush means the QP is in error; any other error failed
	 * this receive alone (e.g. a packet longer than the buffer).
	 */
	kmad_qp_recv_returned(qpi, flushed);
	if (flushed) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_FLUSHED);
		kmad_recv_free(recv);
		return;
	}
	/* Refilled after the MAD is handled, as ib_mad does, so that the
	 * refill (an allocation and the provider's post) does not delay a
	 * response on its way to its callback; first if this receive left
	 * the QP no buffer (a receive queue of one, where the ACK an RMPP
	 * segment's handling sends would let the next segment in before
	 * the refill).  An unlocked read: the refill decides under the QP
	 * lock.
	 */
	if (!data_race(qpi->rq_posted))
		kmad_recv_refill(qpi);
	recv_handle(qpi, recv, wc);
	kmad_recv_refill(qpi);
}

/*
 * A received MAD in @recv (GRH area and MAD filled as the provider writes
 * them, described by @wc): validate and dispatch it, or drop it.  Takes
 * @recv.  Context: process context (CQ drain), or softirq (a provider's
 * bridge, kmad_device_bridge_recv_qp()).
 */
static void recv_handle(struct kmad_qp_info *qpi, struct kmad_recv_priv *recv,
			const struct kmad_wc *wc)
{
	u16 answer;
	enum kmad_mad_verdict why;

	if (wc->status != KMAD_WC_SUCCESS) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_ERRORS);
		pr_debug_ratelimited("kmad: %s port %u QP%u: receive failed with status %d, dropped\n",
				     qpi->port->dev->name, qpi->port->port_num,
				     qpi->qp.qpn, wc->status);
		kmad_recv_free(recv);
		return;
	}

	/* byte_len counts the GRH area.  Shorter than it and a MAD header:
	 * nothing to look at, dropped as short.
	 */
	if (wc->byte_len < KMAD_GRH_BYTES + KMAD_MAD_HDR_SIZE) {
		atomic64_inc(&qpi->port->drops[KMAD_MAD_VERDICT_SHORT]);
		pr_debug_ratelimited("kmad: %s port %u QP%u: dropped a %u-byte receive\n",
				     qpi->port->dev->name, qpi->port->port_num,
				     qpi->qp.qpn, wc->byte_len);
		kmad_recv_free(recv);
		return;
	}
	if (kmad_mad_validate(&recv->mad,
			      min_t(u32, wc->byte_len - KMAD_GRH_BYTES,
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
			answer_unsupported(qpi, recv, answer, why);
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

/**
 * kmad_device_bridge_recv_qp() - a MAD received by another MAD layer for a
 * kmad agent, on QP0 or QP1 (see &kmad_provider_ops.bridge_add).
 * @dev: the device.
 * @port_num: the port the MAD arrived at.
 * @qpt: the QP it arrived at: %KMAD_QPT_GSI (the real QP1) or
 *	%KMAD_QPT_SMI (the real QP0, on a port with an SMI:
 *	kmad_port_has_smi()).
 * @wc: the sender's address: @wc->src_qpn, slid, sl, pkey_index and
 *	dlid_path_bits; the other fields are ignored.
 * @grh: the packet's GRH as &struct kmad_wire_grh, or NULL if it had none
 *	(always NULL on QP0: SMPs carry none).
 * @mad: the MAD.
 * @mad_len: its length (at most 256 bytes are read).
 *
 * kmad copies the MAD and handles it as if its own QP @qpt had received
 * it, marked &kmad_recv_wc.bridged: a request goes to the agent
 * registered for it, or is answered "unsupported"; a response goes to the
 * request it answers.  A response to a bridged request on QP1
 * (kmad_create_response(), and kmad's own answer) has &kmad_dest.from_qp1
 * set: it goes to the provider with &kmad_hw_send.from_qp1, to leave from
 * the real QP1 to @wc->src_qpn.  On QP0 every send leaves from the real
 * QP0 anyway (&kmad_hw_send.from_qp1).  The provider stops calling it
 * for a QP before kmad_device_unregister() stops that QP (moves it to
 * %KMAD_QPS_ERR).
 *
 * Context: process context or softirq; the device registered.
 * Return: 0, -ENODEV for a bad port, a QP the port does not have, or a
 * device not registered, -EINVAL for a NULL @wc or @mad or a GRH on QP0,
 * -ENOMEM.
 */
int kmad_device_bridge_recv_qp(struct kmad_device *dev, u8 port_num,
			       enum kmad_qp_type qpt, const struct kmad_wc *wc,
			       const void *grh, const void *mad, u32 mad_len)
{
	struct kmad_recv_priv *recv;
	struct kmad_qp_info *qpi;
	struct kmad_wc w = {};

	if (!wc || !mad)
		return -EINVAL;
	if (!dev || !port_num || port_num > dev->num_ports ||
	    !READ_ONCE(dev->registered) ||
	    (qpt != KMAD_QPT_GSI && qpt != KMAD_QPT_SMI))
		return -ENODEV;
	qpi = &dev->ports[port_num - 1].qpi[qpt];
	if (!kmad_qp_exists(qpi))
		return -ENODEV;
	if (grh && kmad_qpt_is_smi(qpt))
		return -EINVAL;
	recv = kzalloc(sizeof(*recv), GFP_ATOMIC);
	if (!recv) {
		kmad_port_stat_inc(qpi->port, KMAD_PSTAT_RECV_NOBUF);
		return -ENOMEM;
	}
	recv->qpi = qpi;
	recv->wc.bridged = true;
	mad_len = min_t(u32, mad_len, sizeof(recv->mad));
	memcpy(&recv->mad, mad, mad_len);
	if (grh) {
		memcpy(&recv->grh, grh, sizeof(recv->grh));
		w.wc_flags = KMAD_WC_GRH | (wc->wc_flags & KMAD_WC_GID_INDEX);
		w.gid_index = wc->gid_index;
	}
	w.status = KMAD_WC_SUCCESS;
	w.opcode = KMAD_WC_RECV;
	w.byte_len = KMAD_GRH_BYTES + mad_len;
	w.src_qpn = wc->src_qpn;
	w.slid = wc->slid;
	w.sl = wc->sl;
	w.pkey_index = wc->pkey_index;
	w.dlid_path_bits = wc->dlid_path_bits;
	recv_handle(qpi, recv, &w);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_device_bridge_recv_qp);

/**
 * kmad_device_bridge_recv() - a MAD received by another MAD layer for a
 * kmad agent on QP1: kmad_device_bridge_recv_qp() with %KMAD_QPT_GSI.
 * @dev: the device.
 * @port_num: the port the MAD arrived at (on its QP1).
 * @wc: the sender's address, as for kmad_device_bridge_recv_qp().
 * @grh: the packet's GRH as &struct kmad_wire_grh, or NULL if it had none.
 * @mad: the MAD.
 * @mad_len: its length (at most 256 bytes are read).
 *
 * Context: process context or softirq; the device registered.
 * Return: as kmad_device_bridge_recv_qp().
 */
int kmad_device_bridge_recv(struct kmad_device *dev, u8 port_num,
			    const struct kmad_wc *wc, const void *grh,
			    const void *mad, u32 mad_len)
{
	return kmad_device_bridge_recv_qp(dev, port_num, KMAD_QPT_GSI, wc, grh,
					  mad, mad_len);
}
EXPORT_SYMBOL_GPL(kmad_device_bridge_recv);
