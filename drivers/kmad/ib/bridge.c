// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_ib: the bridge to ib_mad, for unsolicited requests.
 *
 * ib_mad owns every port's QP0 and QP1, so a request another node sends
 * to a port's QP1 (or an SMP to its QP0) reaches ib_mad's agents only.
 * When a kmad agent registers a class, version and methods on one of our
 * ports, kmad calls bridge_add: we register an ib_mad agent on the same QP
 * for the same class, version, methods (and OUI), and give every request
 * it receives to kmad with kmad_device_bridge_recv_qp(), which dispatches
 * it as if kmad's own QP had received it, marked as bridged.  On QP1 the
 * kmad agent's response (kmad_create_response(), and kmad's own
 * "unsupported" answer) is marked &kmad_dest.from_qp1 and leaves from the
 * port's QP1 through ib_mad, on the port's send-only agent (verbs.c), as
 * IBTA has it: a requester that checks the responder's QP sees 1.  On QP0
 * every send of kmad's SMI QP leaves through ib_mad's QP0 (smi.c).
 *
 * SMI registrations: LID-routed SMPs (class 0x01) only.  A registration
 * for directed-route SMPs (class 0x81) fails with -EOPNOTSUPP: ib_mad
 * runs its own directed-route SMI on them before any agent, and kmad_ib
 * does not send them either (smi.c).
 *
 * An ib_mad agent of another in-kernel user (ib_cm holds CM Send, for
 * example) or of user space (ib_umad) already holding one of the methods
 * makes ib_register_mad_agent() fail: the kmad registration then fails
 * with -EBUSY.
 *
 * Locks: B (&kmad_ib_port.bridge_lock, a mutex) guards the port's bridge
 * list and &kmad_ib_port.bridges_dead.  bridge_add runs under kmad's
 * port registration mutex and takes B inside it; nothing takes them the
 * other way round.  ib_unregister_mad_agent(), called under B, waits for
 * the agent's handlers, which take neither.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/ib_mad.h>

#include <kmad/wire.h>

#include "kmad_ib.h"

/**
 * struct kmad_ib_bridge - one kmad registration passed on to ib_mad.
 * @entry: in &kmad_ib_port.bridges (B).
 * @port: the port.
 * @qpt: the QP it is on.
 * @req: the kmad registration, as kmad gave it.
 * @agent: the ib_mad agent.
 */
struct kmad_ib_bridge {
	struct list_head entry;
	struct kmad_ib_port *port;
	enum kmad_qp_type qpt;
	struct kmad_reg_req req;
	struct ib_mad_agent *agent;
};

/* Responses to ib_mad sends: we send none through ib_mad. */
static void bridge_send_handler(struct ib_mad_agent *agent,
				struct ib_mad_send_wc *send_wc)
{
}

/* ib_mad's receive handler: process context (ib_mad's CQ work). */
static void bridge_recv_handler(struct ib_mad_agent *agent,
				struct ib_mad_send_buf *send_buf,
				struct ib_mad_recv_wc *rwc)
{
	struct kmad_ib_bridge *b = agent->context;
	struct kmad_ib_port *port = b->port;
	struct kmad_ib_dev *kdev = port->kdev;
	const struct ib_wc *iwc = rwc->wc;
	/* kmad_ib_grh_fixup() stores words into it (the IPv4 case). */
	u8 grh[KMAD_GRH_BYTES] __aligned(8);
	struct kmad_wc wc = {};
	bool has_grh;
	int ret;

	/* No sends, so nothing to be a response to. */
	if (send_buf)
		goto out;
	has_grh = iwc->wc_flags & IB_WC_GRH;
	if (has_grh) {
		memcpy(grh, rwc->recv_buf.grh, sizeof(grh));
		kmad_ib_grh_fixup(kdev, port->port_num, iwc, grh, &wc);
	}
	wc.src_qpn = iwc->src_qp;
	wc.slid = iwc->slid;
	wc.sl = iwc->sl;
	wc.pkey_index = iwc->pkey_index;
	wc.dlid_path_bits = iwc->dlid_path_bits;
	ret = kmad_device_bridge_recv_qp(kdev->dev, port->port_num, b->qpt,
					 &wc, has_grh ? grh : NULL,
					 rwc->recv_buf.mad, rwc->mad_len);
	if (ret)
		pr_debug_ratelimited("%s port %u: bridged request dropped: %d\n",
				     dev_name(&kdev->ibdev->dev),
				     port->port_num, ret);
out:
	ib_free_recv_mad(rwc);
}

/* kmad allows no two registrations of a class, version and OUI sharing a
 * method: these fields name one (the class tells the QP).
 */
static bool same_req(const struct kmad_reg_req *a,
		     const struct kmad_reg_req *b)
{
	return a->mgmt_class == b->mgmt_class &&
	       a->class_version == b->class_version &&
	       !memcmp(a->oui, b->oui, sizeof(a->oui)) &&
	       bitmap_equal(a->method_mask, b->method_mask, KMAD_METHODS);
}

int kmad_ib_bridge_add(struct kmad_device *dev, u8 port_num,
		       enum kmad_qp_type qpt, const struct kmad_reg_req *req)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(dev);
	struct kmad_ib_port *port = &kdev->ports[port_num - 1];
	struct ib_mad_reg_req ib_req = {};
	struct kmad_ib_bridge *b;
	int ret;

	/* kmad refuses QP0 agents on a port without an SMI before asking;
	 * directed-route SMPs are not carried (see the top of this file).
	 */
	if (qpt == KMAD_QPT_SMI &&
	    (!port->qp0_agent ||
	     req->mgmt_class != KMAD_MGMT_CLASS_SUBN_LID_ROUTED)) {
		pr_info("%s port %u: SMP class %#04x: kmad_ib bridges LID-routed SMPs (class 0x01) only\n",
			dev_name(&kdev->ibdev->dev), port_num,
			req->mgmt_class);
		return -EOPNOTSUPP;
	}
	BUILD_BUG_ON(KMAD_METHODS != IB_MGMT_MAX_METHODS);
	ib_req.mgmt_class = req->mgmt_class;
	ib_req.mgmt_class_version = req->class_version;
	memcpy(ib_req.oui, req->oui, sizeof(ib_req.oui));
	bitmap_copy(ib_req.method_mask, req->method_mask, KMAD_METHODS);

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->port = port;
	b->qpt = qpt;
	b->req = *req;
	mutex_lock(&port->bridge_lock);
	if (port->bridges_dead) {
		ret = -ENODEV;
		goto err_unlock;
	}
	b->agent = ib_register_mad_agent(kdev->ibdev, port_num,
					 qpt == KMAD_QPT_SMI ? IB_QPT_SMI :
					 IB_QPT_GSI,
					 &ib_req, 0, bridge_send_handler,
					 bridge_recv_handler, b, 0);
	if (IS_ERR(b->agent)) {
		/* kmad checked the request: ib_mad refuses it because
		 * another of its agents holds a method.
		 */
		ret = PTR_ERR(b->agent);
		pr_warn("%s port %u: class %#04x version %u: ib_mad refused the registration (%d): another ib_mad agent (ib_cm, ib_umad, ...) holds a method\n",
			dev_name(&kdev->ibdev->dev), port_num, req->mgmt_class,
			req->class_version, ret);
		ret = ret == -EINVAL ? -EBUSY : ret;
		goto err_unlock;
	}
	list_add_tail(&b->entry, &port->bridges);
	mutex_unlock(&port->bridge_lock);
	return 0;

err_unlock:
	mutex_unlock(&port->bridge_lock);
	kfree(b);
	return ret;
}

void kmad_ib_bridge_del(struct kmad_device *dev, u8 port_num,
			enum kmad_qp_type qpt, const struct kmad_reg_req *req)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(dev);
	struct kmad_ib_port *port = &kdev->ports[port_num - 1];
	struct kmad_ib_bridge *b;

	mutex_lock(&port->bridge_lock);
	list_for_each_entry(b, &port->bridges, entry) {
		if (same_req(&b->req, req)) {
			list_del(&b->entry);
			ib_unregister_mad_agent(b->agent);
			kfree(b);
			break;
		}
	}
	mutex_unlock(&port->bridge_lock);
}

/**
 * kmad_ib_bridges_stop() - unregister every ib_mad agent of a port, for
 * good: the device is going.
 * @port: the port.
 *
 * After it returns no bridged request reaches kmad, and bridge_add fails.
 *
 * Context: process context.
 */
void kmad_ib_bridges_stop(struct kmad_ib_port *port)
{
	struct kmad_ib_bridge *b, *tmp;

	mutex_lock(&port->bridge_lock);
	port->bridges_dead = true;
	list_for_each_entry_safe(b, tmp, &port->bridges, entry) {
		list_del(&b->entry);
		ib_unregister_mad_agent(b->agent);
		kfree(b);
	}
	mutex_unlock(&port->bridge_lock);
}
