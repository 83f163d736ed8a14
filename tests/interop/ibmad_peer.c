// SPDX-License-Identifier: GPL-2.0
/*
 * ibmad_peer: a peer for `make interop` written against the kernel's own
 * MAD layer (ib_mad in ib_core), not against kmad.
 *
 * It registers an ib_mad agent for vendor class 0x09 (range 1, no OUI),
 * class version 1, method Get, on GSI of one port of one ib_core device
 * (dev=, port=), and answers every Get with a GetResp: status 0, the
 * request's TID and attribute, and data byte i (the i-th byte after the
 * 24-byte MAD header) = (u8)(attr_mod * 7 + i).  The address handle comes
 * from ib_create_ah_from_wc(), as ib_mad's own agent.c answers.
 *
 * It is an ib_client, so that a device removal (rdma link delete)
 * unregisters the agent before ib_mad closes the port.  On unload it
 * prints how many Gets it answered.
 */
#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/string.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#define PEER_CLASS	0x09
#define PEER_MULT	7

static char *dev = "rxe1";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "ib_core device to answer on (default rxe1)");

static uint port = 1;
module_param(port, uint, 0444);
MODULE_PARM_DESC(port, "port number (default 1)");

static atomic_t peer_answered = ATOMIC_INIT(0);
static atomic_t peer_errors = ATOMIC_INIT(0);

static void peer_send_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS) {
		atomic_inc(&peer_errors);
		pr_info("ibmad_peer: response send status %d\n", wc->status);
	}
	rdma_destroy_ah(wc->send_buf->ah, RDMA_DESTROY_AH_SLEEPABLE);
	ib_free_send_mad(wc->send_buf);
}

static void peer_answer(struct ib_mad_agent *agent,
			struct ib_mad_recv_wc *rwc)
{
	const struct ib_mad *req = rwc->recv_buf.mad;
	struct ib_mad_send_buf *sb;
	struct ib_mad *resp;
	struct ib_ah *ah;
	u32 attr_mod;
	int i, ret;

	ah = ib_create_ah_from_wc(agent->qp->pd, rwc->wc, rwc->recv_buf.grh,
				  agent->port_num);
	if (IS_ERR(ah)) {
		pr_info("ibmad_peer: ib_create_ah_from_wc: %ld\n", PTR_ERR(ah));
		atomic_inc(&peer_errors);
		return;
	}
	sb = ib_create_send_mad(agent, rwc->wc->src_qp, rwc->wc->pkey_index, 0,
				IB_MGMT_MAD_HDR, IB_MGMT_MAD_DATA, GFP_KERNEL,
				IB_MGMT_BASE_VERSION);
	if (IS_ERR(sb)) {
		pr_info("ibmad_peer: ib_create_send_mad: %ld\n", PTR_ERR(sb));
		atomic_inc(&peer_errors);
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return;
	}
	resp = sb->mad;
	resp->mad_hdr = req->mad_hdr;
	resp->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	resp->mad_hdr.status = 0;
	attr_mod = be32_to_cpu(req->mad_hdr.attr_mod);
	for (i = 0; i < IB_MGMT_MAD_DATA; i++)
		resp->data[i] = (u8)(attr_mod * PEER_MULT + i);
	sb->ah = ah;
	sb->timeout_ms = 0;
	sb->retries = 0;
	ret = ib_post_send_mad(sb, NULL);
	if (ret) {
		pr_info("ibmad_peer: ib_post_send_mad: %d\n", ret);
		atomic_inc(&peer_errors);
		ib_free_send_mad(sb);
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
		return;
	}
	atomic_inc(&peer_answered);
}

static void peer_recv_handler(struct ib_mad_agent *agent,
			      struct ib_mad_send_buf *send_buf,
			      struct ib_mad_recv_wc *rwc)
{
	const struct ib_mad_hdr *hdr = &rwc->recv_buf.mad->mad_hdr;

	if (hdr->mgmt_class == PEER_CLASS &&
	    hdr->method == IB_MGMT_METHOD_GET)
		peer_answer(agent, rwc);
	ib_free_recv_mad(rwc);
}

static struct ib_client peer_client;

static int peer_add(struct ib_device *ibdev)
{
	struct ib_mad_reg_req req = {
		.mgmt_class = PEER_CLASS,
		.mgmt_class_version = 1,
	};
	struct ib_mad_agent *agent;

	if (strcmp(dev_name(&ibdev->dev), dev))
		return -EOPNOTSUPP;
	if (!rdma_is_port_valid(ibdev, port)) {
		pr_info("ibmad_peer: %s has no port %u\n", dev, port);
		return -EINVAL;
	}
	set_bit(IB_MGMT_METHOD_GET, req.method_mask);
	agent = ib_register_mad_agent(ibdev, port, IB_QPT_GSI, &req, 0,
				      peer_send_handler, peer_recv_handler,
				      NULL, 0);
	if (IS_ERR(agent)) {
		pr_info("ibmad_peer: ib_register_mad_agent on %s port %u: %ld\n",
			dev, port, PTR_ERR(agent));
		return PTR_ERR(agent);
	}
	ib_set_client_data(ibdev, &peer_client, agent);
	pr_info("ibmad_peer: answering class 0x%02x Get on %s port %u\n",
		PEER_CLASS, dev, port);
	return 0;
}

static void peer_remove(struct ib_device *ibdev, void *client_data)
{
	struct ib_mad_agent *agent = client_data;

	ib_unregister_mad_agent(agent);
	pr_info("ibmad_peer: agent on %s unregistered\n", dev_name(&ibdev->dev));
}

static struct ib_client peer_client = {
	.name = "ibmad_peer",
	.add = peer_add,
	.remove = peer_remove,
};

static int __init peer_init(void)
{
	return ib_register_client(&peer_client);
}

static void __exit peer_exit(void)
{
	ib_unregister_client(&peer_client);
	pr_info("ibmad_peer: answered %d Gets, %d errors\n",
		atomic_read(&peer_answered), atomic_read(&peer_errors));
}

module_init(peer_init);
module_exit(peer_exit);
MODULE_DESCRIPTION("make interop: an ib_mad agent answering vendor class 0x09 Gets");
MODULE_LICENSE("GPL");
