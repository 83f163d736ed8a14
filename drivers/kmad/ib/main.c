// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_ib: kmad's provider over ib_core.
 *
 * An ib_client: for every ib_core device, present at load or added later,
 * whose ports all speak MADs (InfiniBand or RoCE; not iWARP), a kmad
 * device of the same name with one kmad port per ib_core port.  ib_core's
 * MAD layer keeps QP0 and QP1; kmad gets a UD QP of its own per port (see
 * verbs.c) and, on an InfiniBand port, a software SMI QP whose SMPs go
 * through ib_mad's QP0 (smi.c); requests to the real QP1 or QP0 for a
 * class a kmad agent registered come through an ib_mad agent of ours
 * (bridge.c).
 *
 * Port events (LID, SM, P_Key, GID changes, port active or down, client
 * reregister) are passed on to kmad with kmad_device_port_changed() from
 * a work item, which reads the port's attributes anew; a client
 * reregister then with kmad_device_port_reregister() too.
 *
 * Removal.  ib_core calls remove() when the device goes (rdma link delete,
 * driver unload) and for every device when this module unloads.  It stops
 * the events, then unregisters the kmad device: kmad flushes the QPs
 * through our ops (every outstanding send gets its callback) and destroys
 * them; then the PD goes.  ib_core waits for remove() before it tears the
 * device down, so every verb we call meanwhile is valid.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "kmad_ib.h"

static const struct kmad_provider_ops kmad_ib_ops = {
	.owner = THIS_MODULE,
	.create_cq = kmad_ib_create_cq,
	.destroy_cq = kmad_ib_destroy_cq,
	.create_qp = kmad_ib_create_qp,
	.destroy_qp = kmad_ib_destroy_qp,
	.modify_qp = kmad_ib_modify_qp,
	.post_send = kmad_ib_post_send,
	.post_recv = kmad_ib_post_recv,
	.poll_cq = kmad_ib_poll_cq,
	.req_notify_cq = kmad_ib_req_notify_cq,
	.query_gid = kmad_ib_query_gid,
	.query_pkey = kmad_ib_query_pkey,
	.create_ah = kmad_ib_create_ah,
	.destroy_ah = kmad_ib_destroy_ah,
	.bridge_add = kmad_ib_bridge_add,
	.bridge_del = kmad_ib_bridge_del,
};

/* Read a port's attributes as kmad wants them.  Process context. */
static int port_attr_read(struct kmad_ib_dev *kdev, u8 port_num,
			  struct kmad_port_attr *attr)
{
	struct ib_device *ibdev = kdev->ibdev;
	struct ib_port_attr pa;
	u32 max_wr = ibdev->attrs.max_qp_wr;
	int ret;

	ret = ib_query_port(ibdev, port_num, &pa);
	if (ret)
		return ret;
	memset(attr, 0, sizeof(*attr));
	if (rdma_port_get_link_layer(ibdev, port_num) ==
	    IB_LINK_LAYER_ETHERNET) {
		attr->link_layer = KMAD_LINK_LAYER_ETHERNET;
	} else {
		attr->link_layer = KMAD_LINK_LAYER_INFINIBAND;
		attr->lid = pa.lid;
		attr->lmc = pa.lmc;
		attr->sm_lid = pa.sm_lid;
	}
	/* ib_mad owns QP0: kmad's SMI goes through it, where we have an
	 * agent on it (InfiniBand; RoCE has no QP0).
	 */
	attr->no_smi = !kdev->ports[port_num - 1].qp0_agent;
	attr->gid_tbl_len = pa.gid_tbl_len;
	attr->pkey_tbl_len = pa.pkey_tbl_len;
	attr->sq_depth = min_t(u32, KMAD_IB_SQ_DEPTH, max_wr);
	attr->rq_depth = min_t(u32, KMAD_IB_RQ_DEPTH, max_wr);
	/* One CQ takes both queues. */
	if (attr->sq_depth + attr->rq_depth > ibdev->attrs.max_cqe) {
		attr->rq_depth = ibdev->attrs.max_cqe / 2;
		attr->sq_depth = ibdev->attrs.max_cqe - attr->rq_depth;
	}
	return 0;
}

static void port_change_work(struct work_struct *work)
{
	struct kmad_ib_port *port = container_of(work, struct kmad_ib_port,
						 change_work);
	struct kmad_ib_dev *kdev = port->kdev;
	struct kmad_port_attr attr;
	bool rereg;
	int ret;

	/* Taken before the read: a reregister that comes during it queues
	 * this work again, and is told with what that run reads.
	 */
	rereg = test_and_clear_bit(0, &port->rereg);
	ret = port_attr_read(kdev, port->port_num, &attr);
	if (ret) {
		pr_warn("%s port %u: query after a port event failed: %d\n",
			dev_name(&kdev->ibdev->dev), port->port_num, ret);
		/* The SM asked all the same: told with the attributes kmad
		 * has (held back, it might wait for another event for good).
		 */
		if (rereg)
			kmad_device_port_reregister(kdev->dev, port->port_num);
		return;
	}
	kmad_device_port_changed(kdev->dev, port->port_num, &attr);
	/* After the new SM LID: the clients register with that SM. */
	if (rereg)
		kmad_device_port_reregister(kdev->dev, port->port_num);
}

/* ib_core's asynchronous events; any context. */
static void kmad_ib_event(struct ib_event_handler *handler,
			  struct ib_event *event)
{
	struct kmad_ib_dev *kdev = container_of(handler, struct kmad_ib_dev,
						event_handler);
	u32 port_num = event->element.port_num;

	switch (event->event) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
	case IB_EVENT_GID_CHANGE:
		break;
	default:
		return;
	}
	if (!port_num || port_num > kdev->num_ports)
		return;
	pr_debug("%s port %u: %s\n", dev_name(&kdev->ibdev->dev), port_num,
		 ib_event_msg(event->event));
	if (event->event == IB_EVENT_CLIENT_REREGISTER)
		set_bit(0, &kdev->ports[port_num - 1].rereg);
	/* Before the kmad device is registered the event is only noted:
	 * kmad_ib_add_one() queues every port's work once it is (the
	 * barrier pairs with the one there: either this sees @live, or
	 * that work sees the bit).
	 */
	smp_mb();
	if (!READ_ONCE(kdev->live))
		return;
	queue_work(system_long_wq, &kdev->ports[port_num - 1].change_work);
}

static bool device_usable(struct ib_device *ibdev)
{
	u32 p;

	if (!ibdev->phys_port_cnt || ibdev->phys_port_cnt > U8_MAX)
		return false;
	/*
	 * Every port must carry IBTA MADs: not iWARP (no MADs), nor Intel
	 * OPA, whose MADs (base version 0x80, up to 2 KiB) and 32-bit LIDs
	 * kmad does not carry.
	 */
	rdma_for_each_port(ibdev, p) {
		if (!rdma_cap_ib_mad(ibdev, p) || rdma_cap_opa_mad(ibdev, p))
			return false;
	}
	return true;
}

static struct ib_client kmad_ib_client;

/*
 * The port's ib_mad agents without methods: on QP1, send-only, for kmad's
 * responses to bridged requests (see verbs.c); without it those responses
 * fail to post (kmad completes them with a local error), the port still
 * works.  On QP0 of an InfiniBand port, for every send of kmad's SMI QP
 * and the responses to its requests (smi.c); without it the port has no
 * SMI for kmad (no_smi).
 */
static void port_agents_register(struct kmad_ib_port *port)
{
	struct ib_device *ibdev = port->kdev->ibdev;
	struct ib_mad_agent *agent;

	agent = ib_register_mad_agent(ibdev, port->port_num, IB_QPT_GSI, NULL,
				      0, kmad_ib_mad_send_handler, NULL, port,
				      0);
	if (IS_ERR(agent)) {
		pr_warn("%s port %u: no ib_mad agent on QP1 (%ld): responses to bridged requests cannot be sent\n",
			dev_name(&ibdev->dev), port->port_num,
			PTR_ERR(agent));
		agent = NULL;
	}
	port->qp1_agent = agent;

	port->qp0_agent = NULL;
	if (!rdma_cap_ib_smi(ibdev, port->port_num))
		return;
	agent = ib_register_mad_agent(ibdev, port->port_num, IB_QPT_SMI, NULL,
				      0, kmad_ib_mad_send_handler,
				      kmad_ib_smi_recv_handler, port, 0);
	if (IS_ERR(agent)) {
		pr_warn("%s port %u: no ib_mad agent on QP0 (%ld): no SMI for kmad agents\n",
			dev_name(&ibdev->dev), port->port_num,
			PTR_ERR(agent));
		return;
	}
	port->qp0_agent = agent;
}

static void port_agents_unregister(struct kmad_ib_dev *kdev)
{
	u8 p;

	for (p = 0; p < kdev->num_ports; p++) {
		if (kdev->ports[p].qp0_agent)
			ib_unregister_mad_agent(kdev->ports[p].qp0_agent);
		kdev->ports[p].qp0_agent = NULL;
		if (kdev->ports[p].qp1_agent)
			ib_unregister_mad_agent(kdev->ports[p].qp1_agent);
		kdev->ports[p].qp1_agent = NULL;
	}
}

static int kmad_ib_add_one(struct ib_device *ibdev)
{
	const char *name = dev_name(&ibdev->dev);
	u8 num_ports = ibdev->phys_port_cnt;
	struct kmad_port_attr attr;
	struct kmad_ib_dev *kdev;
	struct kmad_device *dev;
	int ret;
	u8 p;

	if (!device_usable(ibdev)) {
		pr_info("%s: skipped: not every port carries IBTA MADs (iWARP, OPA), or no port\n",
			name);
		return -EOPNOTSUPP;
	}
	dev = kmad_device_alloc(&kmad_ib_ops, name, num_ports,
				struct_size(kdev, ports, num_ports));
	if (!dev) {
		pr_err("%s: cannot make a kmad device (name too long, or no memory)\n",
		       name);
		return -ENOMEM;
	}
	kdev = kmad_device_priv(dev);
	kdev->ibdev = ibdev;
	kdev->dev = dev;
	kdev->num_ports = num_ports;
	for (p = 1; p <= num_ports; p++) {
		kdev->ports[p - 1].kdev = kdev;
		kdev->ports[p - 1].port_num = p;
		INIT_WORK(&kdev->ports[p - 1].change_work, port_change_work);
		atomic_set(&kdev->ports[p - 1].smi_tid, 0);
		mutex_init(&kdev->ports[p - 1].bridge_lock);
		INIT_LIST_HEAD(&kdev->ports[p - 1].bridges);
	}
	kdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(kdev->pd)) {
		ret = PTR_ERR(kdev->pd);
		goto err_free_dev;
	}
	/* Before the attributes: no_smi says whether QP0's agent exists. */
	for (p = 1; p <= num_ports; p++)
		port_agents_register(&kdev->ports[p - 1]);
	/*
	 * Before the attributes are read: until the kmad device is
	 * registered (the handler's work calls kmad_device_port_changed(),
	 * which takes changes only from the start of kmad_device_register())
	 * an event is only noted, a client reregister in ->rereg; every
	 * port's work then reads the ports once more and passes on what was
	 * noted.  A ClientReregister raised
	 * while kmad's clients register with the SM is not lost.
	 */
	INIT_IB_EVENT_HANDLER(&kdev->event_handler, ibdev, kmad_ib_event);
	ib_register_event_handler(&kdev->event_handler);
	for (p = 1; p <= num_ports; p++) {
		ret = port_attr_read(kdev, p, &attr);
		if (!ret)
			ret = kmad_device_set_port_attr(dev, p, &attr);
		if (ret)
			goto err_unregister_agents;
	}
	ret = kmad_device_register(dev);
	if (ret)
		goto err_unregister_agents;
	WRITE_ONCE(kdev->live, true);
	smp_mb();	/* pairs with kmad_ib_event()'s */
	for (p = 1; p <= num_ports; p++)
		queue_work(system_long_wq, &kdev->ports[p - 1].change_work);
	ib_set_client_data(ibdev, &kmad_ib_client, kdev);
	pr_info("%s: kmad device with %u port(s) (%s)\n", name, num_ports,
		rdma_protocol_roce(ibdev, 1) ? "RoCE" : "InfiniBand");
	return 0;

err_unregister_agents:
	ib_unregister_event_handler(&kdev->event_handler);
	port_agents_unregister(kdev);
	ib_dealloc_pd(kdev->pd);
err_free_dev:
	kmad_device_free(dev);
	pr_err("%s: not added: %d\n", name, ret);
	return ret;
}

static void kmad_ib_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct kmad_ib_dev *kdev = client_data;
	struct kmad_device *dev = kdev->dev;
	u8 p;

	ib_unregister_event_handler(&kdev->event_handler);
	for (p = 0; p < kdev->num_ports; p++) {
		cancel_work_sync(&kdev->ports[p].change_work);
		/* No bridged request reaches kmad from here on. */
		kmad_ib_bridges_stop(&kdev->ports[p]);
	}
	/* Flushes every QP through our ops, then destroys them; every send
	 * through ib_mad's QP1 or QP0 has completed and every lingering SMP
	 * request is done (destroy_qp cancels them and waits for ib_mad's
	 * reports), and every address handle is gone.
	 */
	kmad_device_unregister(dev);
	port_agents_unregister(kdev);
	ib_dealloc_pd(kdev->pd);
	pr_info("%s: kmad device removed\n", dev_name(&ibdev->dev));
	kmad_device_free(dev);
}

/*
 * ib_core renamed the device (rdma-core's udev rule renames new devices
 * to persistent names).  kmad's name stays the one it was added with,
 * until the device is removed: say so, since ULPs find ports by name and
 * a device ib_core later gives the old name is skipped while this one
 * holds it (Documentation/kmad_ib.rst).
 */
static void kmad_ib_rename(struct ib_device *ibdev, void *client_data)
{
	struct kmad_ib_dev *kdev = client_data;

	pr_warn("%s: renamed by ib_core; its kmad device keeps the name %s until it is removed\n",
		dev_name(&ibdev->dev), kmad_device_name(kdev->dev));
}

static struct ib_client kmad_ib_client = {
	.name = "kmad_ib",
	.add = kmad_ib_add_one,
	.remove = kmad_ib_remove_one,
	.rename = kmad_ib_rename,
};

static int __init kmad_ib_init(void)
{
	return ib_register_client(&kmad_ib_client);
}

static void __exit kmad_ib_exit(void)
{
	ib_unregister_client(&kmad_ib_client);
}

module_init(kmad_ib_init);
module_exit(kmad_ib_exit);

MODULE_DESCRIPTION("kmad provider over ib_core (the kernel's RDMA devices)");
MODULE_LICENSE("GPL");
