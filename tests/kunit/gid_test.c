// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_gid: GID-routed MADs (GRHs on post, receive and response, response
 * matching by address), Ethernet (RoCE) ports, and the address handle
 * cache with its waiting sends, on the simulated fabric in step mode.
 *
 * Address handle creation runs on kmad's own work, not a CQ step: a test
 * that lets a held creation go waits (gt_wait()) for what it expects.
 */

#include <linux/delay.h>
#include <linux/seq_file.h>

#include "kmad_test.h"

#define GT_WAIT_MS	5000
#define GT_TID		0x42
#define GT_READ_MAX	8192

/* Poll @cond (evaluated once a round), settling the fabric, for up to
 * GT_WAIT_MS.
 */
#define gt_wait(f, cond) ({						\
	unsigned int __ms = 0;						\
	bool __ok;							\
	while (!(__ok = (cond)) && __ms < GT_WAIT_MS) {			\
		kt_settle(f);						\
		usleep_range(2000, 3000);				\
		__ms += 2;						\
	}								\
	__ok;								\
})

/* The fixture of kmad_test.h on a fabric with @ll ports and @ah handles. */
static int gt_setup(struct kunit *test, enum kmad_link_layer ll,
		    enum kmad_sim_ah ah)
{
	struct kmad_sim_config cfg;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.link_layer = ll;
	cfg.ah = ah;
	return kt_fix_setup_cfg(test, &cfg);
}

static int gt_init_ib(struct kunit *test)
{
	return gt_setup(test, KMAD_LINK_LAYER_INFINIBAND, KMAD_SIM_AH_NONE);
}

static int gt_init_eth(struct kunit *test)
{
	return gt_setup(test, KMAD_LINK_LAYER_ETHERNET, KMAD_SIM_AH_NONE);
}

static int gt_init_ah_hold(struct kunit *test)
{
	return gt_setup(test, KMAD_LINK_LAYER_INFINIBAND, KMAD_SIM_AH_HOLD);
}

static int gt_init_ah_auto(struct kunit *test)
{
	return gt_setup(test, KMAD_LINK_LAYER_INFINIBAND, KMAD_SIM_AH_AUTO);
}

static union kmad_gid gt_gid(struct kt_fix *f, unsigned int dev)
{
	union kmad_gid gid;

	KUNIT_ASSERT_EQ(f->test, kmad_port_query_gid(f->port[dev], 0, &gid), 0);
	return gid;
}

/* A request from the fixture's agent to device 1, by GID (index 0). */
static struct kmad_send_buf *gt_request(struct kt_fix *f, bool grh,
					unsigned int timeout_ms)
{
	struct kmad_send_buf *buf = kt_request(f, f->agent,
					       KMAD_METHOD_GET, GT_TID,
					       timeout_ms, 0);

	if (grh) {
		buf->dest.grh_present = true;
		buf->dest.grh.dgid = gt_gid(f, KT_DEV1);
		buf->dest.grh.sgid_index = 0;
		buf->dest.grh.flow_label = 0x12345;
		buf->dest.grh.traffic_class = 0x20;
	}
	return buf;
}

static struct kmad_agent *gt_register_get(struct kt_fix *f, unsigned int dev)
{
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};

	__set_bit(KMAD_METHOD_GET, req.method_mask);
	return kmad_register_agent(f->port[dev], KMAD_QPT_GSI, &req,
				   kt_send_handler, kt_recv_handler, f);
}

/* What the port's debugfs stats file shows (debugfs_test.c reads it
 * through the VFS too; here the show function alone will do).
 */
static char *gt_stats_text(struct kt_fix *f, unsigned int dev)
{
	struct seq_file m = { .private = f->port[dev], .size = GT_READ_MAX };

	m.buf = kunit_kzalloc(f->test, GT_READ_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(f->test, m.buf);
	kmad_debugfs_stats_show(&m, NULL);
	KUNIT_ASSERT_FALSE(f->test, seq_has_overflowed(&m));
	return m.buf;
}

/* debugfs shows each QP's hardware number: its own until the provider
 * sets another with kmad_qp_set_hw_num().
 */
static void gid_debugfs_hw_qpn(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp *qp = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI].qp;
	char *text;

	KUNIT_EXPECT_EQ(test, kmad_qp_hw_num(qp), 1U);
	text = gt_stats_text(f, KT_DEV0);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "qp0_hw_qpn 0\n"), "%s",
				  text);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "qp1_hw_qpn 1\n"), "%s",
				  text);
	kmad_qp_set_hw_num(qp, 0x1234);
	KUNIT_EXPECT_EQ(test, kmad_qp_hw_num(qp), 0x1234U);
	text = gt_stats_text(f, KT_DEV0);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "qp1_hw_qpn 4660\n"),
				  "%s", text);
	kmad_qp_set_hw_num(qp, 1);
}

/* kmad_port_qp_num() gives what the provider set with kmad_qp_set_hw_num()
 * (0 and 1 until it does), -EINVAL for no QP type, -ENODEV once the port
 * is going away.
 */
static void gid_port_qp_num(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV1];
	u32 qpn = 0x77;

	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(port, KMAD_QPT_SMI, &qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0U);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(port, KMAD_QPT_GSI, &qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 1U);
	kmad_qp_set_hw_num(&port->qpi[KMAD_QPT_GSI].qp, 0x1234);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(port, KMAD_QPT_GSI, &qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0x1234U);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(port, 2, &qpn), -EINVAL);
	kmad_sim_remove_device(f->fab, KT_DEV1);
	qpn = 0x77;
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(port, KMAD_QPT_GSI, &qpn),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, qpn, 0x77U);
}

/* Every sim port's GID 0 is fe80::/64 and its port GUID; P_Key 0 is the
 * default.
 */
static void gid_sim_port_gid0(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_node_info info;
	union kmad_gid gid = gt_gid(f, KT_DEV0);
	u16 pkey = 0;

	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, KT_DEV0, &info), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(gid.global.subnet_prefix),
			0xfe80000000000000ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(gid.global.interface_id),
			info.guid + 1);
	KUNIT_EXPECT_EQ(test, kmad_port_query_gid(f->port[KT_DEV0], 1, &gid),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, kmad_port_query_gid(f->port[KT_DEV0], 8, &gid),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV0], 0, &pkey),
			0);
	KUNIT_EXPECT_EQ(test, pkey, 0xffff);
	KUNIT_EXPECT_EQ(test, kmad_port_link_layer(f->port[KT_DEV0]),
			KMAD_LINK_LAYER_INFINIBAND);
	KUNIT_EXPECT_TRUE(test, kmad_port_has_smi(f->port[KT_DEV0]));
}

/* kmad_post_send() refuses a GRH on QP0, and a source GID index that is
 * past the table or empty, leaving the send unposted.
 */
static void gid_post_validation_ib(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = { .dlid = 2, .grh_present = true };
	struct kmad_send_buf *buf;
	struct kmad_agent *smi;

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(smi);

	buf = gt_request(f, true, 0);
	buf->dest.grh.sgid_index = 8;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.grh.sgid_index = 1;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			0U);
	kmad_free_send_buf(buf);
}

/* An Ethernet port: LID 0, no QP0, and a send without a GRH is refused. */
static void gid_eth_port_caps(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;

	KUNIT_EXPECT_EQ(test, kmad_port_link_layer(f->port[KT_DEV0]),
			KMAD_LINK_LAYER_ETHERNET);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(f->port[KT_DEV0]), 0);
	KUNIT_EXPECT_FALSE(test, kmad_port_has_smi(f->port[KT_DEV0]));
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_register_agent(f->port[KT_DEV0],
							  KMAD_QPT_SMI, NULL,
							  kt_send_handler,
							  kt_recv_handler, f)),
			-EOPNOTSUPP);
	buf = gt_request(f, false, 0);
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	kmad_free_send_buf(buf);
	/* No QP0 at all. */
	KUNIT_EXPECT_NULL(test, strstr(gt_stats_text(f, KT_DEV0), "qp0_hw_qpn"));
}

/* An Ethernet port has no QP0 number to give; its QP1's is 1. */
static void gid_eth_port_qp_num(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	u32 qpn = 0x77;

	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(f->port[KT_DEV0], KMAD_QPT_SMI,
					       &qpn), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, qpn, 0x77U);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(f->port[KT_DEV0], KMAD_QPT_GSI,
					       &qpn), 0);
	KUNIT_EXPECT_EQ(test, qpn, 1U);
}

/* On Ethernet a GID-routed request reaches its peer by DGID, the peer's
 * kmad answers it (unsupported class) by GID, and the answer matches:
 * recv_handler with the GRH, then send_handler.
 */
static void gid_eth_request_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, true, 1000);
	union kmad_gid g0 = gt_gid(f, KT_DEV0), g1 = gt_gid(f, KT_DEV1);
	struct kmad_recv_wc *wc;

	f->keep_recv = true;
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV1);			/* dev1 answers */
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			1U);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, f->ev[0].mad_status,
			(u16)KMAD_MAD_STATUS_BAD_VERSION);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	wc = f->kept_recv;
	KUNIT_ASSERT_NOT_NULL(test, wc);
	KUNIT_EXPECT_TRUE(test, wc->grh_present);
	KUNIT_EXPECT_EQ(test, wc->slid, 0);
	KUNIT_EXPECT_EQ(test, memcmp(&wc->grh.sgid, &g1, sizeof(g1)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&wc->grh.dgid, &g0, sizeof(g0)), 0);
	KUNIT_EXPECT_EQ(test, wc->grh.flow_label, 0x12345U);
	KUNIT_EXPECT_EQ(test, wc->grh.traffic_class, 0x20);
	KUNIT_EXPECT_EQ(test, wc->grh.hop_limit, KMAD_ETH_HOP_LIMIT);
	kmad_free_recv(wc);
	kmad_free_send_buf(buf);
}

/* kmad_create_response() answers a GRH request by GID: to its SGID, from
 * the index of its DGID, with its flow label and traffic class, hop limit
 * 0xff; a DGID none of the port's has no response.
 */
static void gid_create_response_by_gid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = gt_register_get(f, KT_DEV1);
	struct kmad_send_buf *req = gt_request(f, false, 0);
	struct kmad_sim_rx rx = {
		.slid = 1, .src_qpn = 1, .grh_present = true,
		.sgid = gt_gid(f, KT_DEV0), .dgid = gt_gid(f, KT_DEV1),
		.flow_label = 0xabcde, .traffic_class = 7, .hop_limit = 3,
	};
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc;
	struct kmad_dest dest;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	f->keep_recv = true;
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV1, KT_QPN,
						 req->mad, KMAD_MAD_SIZE, &rx),
			0);
	kt_event(f, KT_DEV1);
	wc = f->kept_recv;
	KUNIT_ASSERT_NOT_NULL(test, wc);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_TRUE(test, resp->dest.grh_present);
	KUNIT_EXPECT_EQ(test, memcmp(&resp->dest.grh.dgid, &rx.sgid,
				     sizeof(rx.sgid)), 0);
	KUNIT_EXPECT_EQ(test, resp->dest.grh.sgid_index, 0);
	KUNIT_EXPECT_EQ(test, resp->dest.grh.flow_label, 0xabcdeU);
	KUNIT_EXPECT_EQ(test, resp->dest.grh.traffic_class, 7);
	KUNIT_EXPECT_EQ(test, resp->dest.grh.hop_limit, 0xff);
	KUNIT_EXPECT_EQ(test, resp->dest.dlid, 1);
	KUNIT_EXPECT_FALSE(test, wc->bridged);
	KUNIT_EXPECT_FALSE(test, resp->dest.from_qp1);
	/* kmad_dest_from_wc() gives the same address. */
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, &dest),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(&dest, &resp->dest, sizeof(dest)), 0);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(NULL, wc, &dest), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(ERR_PTR(-ENODEV), wc, &dest),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], NULL, &dest),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, NULL),
			-EINVAL);
	kmad_free_send_buf(resp);
	/* The SA's well-known GID (ib_sa's SA queries that need a GRH): from
	 * GID index 0, as ib_mad answers it.
	 */
	wc->grh.dgid.global.interface_id = cpu_to_be64(0x0200000000000002ULL);
	memset(&dest, 0xff, sizeof(dest));	/* the call must write it */
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, &dest),
			0);
	KUNIT_EXPECT_EQ(test, dest.grh.sgid_index, 0);
	/* Not one of ours: no response. */
	wc->grh.dgid.global.interface_id = cpu_to_be64(0x1234);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kmad_create_response(a, wc, GFP_KERNEL)),
			-EADDRNOTAVAIL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, &dest),
			-EADDRNOTAVAIL);
	kmad_free_recv(wc);
	kmad_free_send_buf(req);
	kmad_unregister_agent(a);
}

/* A request that arrived through the provider's bridge (the port's real
 * QP1, kmad_device_bridge_recv()) is marked, and its response is to leave
 * from that QP1: kmad_create_response() sets from_qp1.  The simulated
 * fabric has no bridge, so kmad refuses to post it, and kmad's own
 * "unsupported" answer to a bridged request is dropped, not sent from
 * kmad's QP.
 */
static void gid_bridged_response_from_qp1(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct kmad_agent *a = gt_register_get(f, KT_DEV1);
	struct kmad_send_buf *req = gt_request(f, false, 0);
	struct kmad_wc bwc = { .src_qpn = 1, .slid = 1, .pkey_index = 0 };
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc;
	s64 dropped;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	f->keep_recv = true;
	KUNIT_ASSERT_EQ(test, kmad_device_bridge_recv(dev, 1, &bwc, NULL,
						      req->mad, KMAD_MAD_SIZE),
			0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, READ_ONCE(f->kept_recv)));
	wc = f->kept_recv;
	KUNIT_EXPECT_TRUE(test, wc->bridged);
	KUNIT_EXPECT_EQ(test, wc->src_qpn, 1U);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_TRUE(test, resp->dest.from_qp1);
	KUNIT_EXPECT_EQ(test, resp->dest.remote_qpn, 1U);
	/* No bridge on the simulated fabric: nothing to send it through. */
	KUNIT_EXPECT_EQ(test, kmad_post_send(resp), -EINVAL);
	/* from_qp1 is for QP1's responses only: cleared, it posts. */
	resp->dest.from_qp1 = false;
	KUNIT_EXPECT_EQ(test, kmad_post_send(resp), 0);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, atomic_read(&f->sends) == 1));
	kmad_free_send_buf(resp);
	kmad_free_recv(wc);

	/* No agent for Set: kmad's own answer would leave from QP1. */
	dropped = atomic64_read(&f->port[KT_DEV1]->stats[KMAD_PSTAT_REQ_DROPPED]);
	req->mad->mad_hdr.method = KMAD_METHOD_SET;
	KUNIT_ASSERT_EQ(test, kmad_device_bridge_recv(dev, 1, &bwc, NULL,
						      req->mad, KMAD_MAD_SIZE),
			0);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&f->port[KT_DEV1]->stats[KMAD_PSTAT_REQ_DROPPED]),
			dropped + 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	kmad_free_send_buf(req);
	kmad_unregister_agent(a);
}

/*
 * The bridge may be called from softirq (provider.h, and
 * kmad_device_bridge_recv_qp()'s Context): kmad's own "unsupported"
 * answer to a bridged request must not sleep there.  It allocated its
 * send buffer with GFP_KERNEL until 2026-12-01; with bottom halves off
 * the debug kernel reported "BUG: sleeping function called from invalid
 * context" (a splat: a failed run).
 */
static void gid_bridged_unsupported_in_softirq(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct kmad_send_buf *req = gt_request(f, false, 0);
	struct kmad_wc bwc = { .src_qpn = 1, .slid = 1, .pkey_index = 0 };
	s64 dropped;
	int ret;

	dropped = atomic64_read(&f->port[KT_DEV1]->stats[KMAD_PSTAT_REQ_DROPPED]);
	req->mad->mad_hdr.method = KMAD_METHOD_SET;
	local_bh_disable();
	ret = kmad_device_bridge_recv(dev, 1, &bwc, NULL, req->mad,
				      KMAD_MAD_SIZE);
	local_bh_enable();
	KUNIT_EXPECT_EQ(test, ret, 0);
	/* Answered from QP1, which the simulated fabric cannot: dropped. */
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&f->port[KT_DEV1]->stats[KMAD_PSTAT_REQ_DROPPED]),
			dropped + 1);
	kmad_free_send_buf(req);
}

/* kmad_device_bridge_recv_qp() on QP0: an SMP another MAD layer received
 * goes to the kmad SMI agent registered for it, marked bridged, and its
 * response has no from_qp1 mark (on a bridging provider every send of QP0
 * leaves from the real QP0: kmad_send_ah_attr()).  An SMP with a GRH is
 * refused.
 */
static void gid_bridged_smp_on_qp0(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_device *dev = kmad_sim_device(f->fab, KT_DEV1);
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kmad_wc bwc = { .src_qpn = 0, .slid = 1 };
	u8 grh[KMAD_GRH_BYTES] = {};
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc;
	struct kmad_agent *a;
	struct kmad_mad *mad;

	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_SMI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	mad->mad_hdr.class_version = 1;
	mad->mad_hdr.method = KMAD_METHOD_GET;
	mad->mad_hdr.tid = cpu_to_be64(0x1234);
	mad->mad_hdr.attr_id = cpu_to_be16(0x0011);
	f->keep_recv = true;
	KUNIT_EXPECT_EQ(test, kmad_device_bridge_recv_qp(dev, 1, KMAD_QPT_SMI,
							 &bwc, grh, mad,
							 KMAD_MAD_SIZE),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, kmad_device_bridge_recv_qp(dev, 1, KMAD_QPT_SMI,
							 &bwc, NULL, mad,
							 KMAD_MAD_SIZE),
			0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, READ_ONCE(f->kept_recv)));
	wc = f->kept_recv;
	KUNIT_EXPECT_TRUE(test, wc->bridged);
	KUNIT_EXPECT_EQ(test, wc->src_qpn, 0U);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(wc->mad->mad_hdr.tid), 0x1234ULL);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_FALSE(test, resp->dest.from_qp1);
	KUNIT_EXPECT_EQ(test, resp->dest.dlid, 1);
	KUNIT_EXPECT_EQ(test, resp->dest.remote_qpn, 0U);
	kmad_free_send_buf(resp);
	kmad_free_recv(wc);
	kmad_unregister_agent(a);
}

/* Post a request (GRH or not) and get it to WAIT_RESP. */
static struct kmad_send_buf *gt_waiting_request(struct kt_fix *f, bool grh)
{
	struct kmad_send_buf *buf = gt_request(f, grh, 10000);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(f->test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	return buf;
}

/* A response that fails the address check is unmatched and misaddressed:
 * the request still waits.
 */
static void gt_expect_misaddressed(struct kt_fix *f, struct kmad_send_buf *buf,
				   s64 before)
{
	KUNIT_EXPECT_EQ(f->test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(f->test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(f->test,
			kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_MISADDRESSED),
			before + 1);
}

/* A GRH request is not matched by a response without a GRH. */
static void gid_match_rejects_no_grh(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_waiting_request(f, true);
	struct kmad_sim_rx rx = {};

	kt_respond_rx(f, buf, &rx);
	gt_expect_misaddressed(f, buf, 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	kmad_free_send_buf(buf);
}

/* A request without a GRH is not matched by a response with one. */
static void gid_match_rejects_grh(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_waiting_request(f, false);
	struct kmad_sim_rx rx = {
		.grh_present = true,
		.sgid = gt_gid(f, KT_DEV1), .dgid = gt_gid(f, KT_DEV0),
	};

	kt_respond_rx(f, buf, &rx);
	gt_expect_misaddressed(f, buf, 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	kmad_free_send_buf(buf);
}

/* A GRH response to another DGID than the request's SGID is unmatched;
 * to the right one it matches.
 */
static void gid_match_dgid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_waiting_request(f, true);
	struct kmad_sim_rx rx = {
		.grh_present = true,
		.sgid = gt_gid(f, KT_DEV1), .dgid = gt_gid(f, KT_DEV1),
	};

	kt_respond_rx(f, buf, &rx);
	gt_expect_misaddressed(f, buf, 0);
	rx.dgid = gt_gid(f, KT_DEV0);
	kt_respond_rx(f, buf, &rx);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, buf, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* With LMC 2 a response to path bits 1 is unmatched (the request left
 * from the base LID: dest.src_path_bits 0); one to path bits 4 (outside
 * the LMC) matches.
 */
static void gid_match_path_bits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	struct kmad_sim_rx rx = { .dlid_path_bits = 1 };

	kt_set_lmc(f, 2);
	buf = gt_waiting_request(f, false);
	kt_respond_rx(f, buf, &rx);
	gt_expect_misaddressed(f, buf, 0);
	rx.dlid_path_bits = 4;
	kt_respond_rx(f, buf, &rx);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* The sends of the fixture's agent that are on device 0's wire. */
static unsigned int gt_wire(struct kt_fix *f)
{
	return kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN);
}

/* A send waits for its address handle, and is posted once it exists. */
static void gid_ah_send_waits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	KUNIT_EXPECT_EQ(test, gt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_SENDING);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* A failed creation fails the waiting send once, with a local error, and
 * is not cached: the next send asks again.
 */
static void gid_ah_failure(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 1000);

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0,
						   -EHOSTUNREACH), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kt_events(f) == 1));
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_FAILURES), 1);
	kt_post(f, buf);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kt_events(f) == 2));
	kt_expect_send(f, 1, buf, KMAD_SEND_CANCELED);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	gt_wait(f, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, gt_wire(f), 0U);
	kmad_free_send_buf(buf);
}

/* The QP fails and recovers while a send waits for its handle: the send
 * waits on, and is posted once the handle exists, once.
 */
static void gid_ah_wait_survives_qp_recovery(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kt_pstat(f, KT_DEV0,
						    KMAD_PSTAT_QP_RECOVERIES) >
					    recoveries &&
					    kt_qp_run(qpi) == KMAD_QP_RUNNING));
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* A QP whose recovery gives up fails the send waiting for its handle
 * once, with a local error; the handle's creation then finds nobody.
 */
static void gid_ah_wait_fails_with_qp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_buf *buf = gt_request(f, false, 1000);

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	KUNIT_ASSERT_EQ(test, kmad_sim_fail_modify_qp(f->fab, KT_DEV0, KT_QPN,
						      KMAD_QPS_RESET,
						      KMAD_QP_RECOVER_TRIES),
			0);
	KUNIT_ASSERT_EQ(test, kmad_sim_qp_error(f->fab, KT_DEV0, KT_QPN), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kt_events(f) == 1));
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_FAILED);
	kt_expect_send(f, 0, buf, KMAD_SEND_LOCAL_ERROR);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	gt_wait(f, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_free_send_buf(buf);
}

/* Unregistering an agent whose send waits for its handle ends it once,
 * flushed; the handle's creation then finds nobody waiting.
 */
static void gid_ah_unregister_waiting(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kmad_register_agent(f->port[KT_DEV0],
						   KMAD_QPT_GSI, NULL,
						   kt_send_handler,
						   kt_recv_handler, f);
	struct kmad_send_buf *buf;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	buf = kt_request(f, a, KMAD_METHOD_GET, GT_TID, 1000, 0);
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	f->free_on_send = true;
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_FLUSHED);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	gt_wait(f, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, gt_wire(f), 0U);
}

/* Removing the port while a send waits for its handle ends it once and
 * frees the handle's entry: flushed, or a local error if the provider
 * failed the held creation (as the sim does for a device going away)
 * before kmad stopped the QP.
 */
static void gid_ah_port_removal_waiting(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 1000);

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	kmad_sim_remove_device(f->fab, KT_DEV0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kt_events(f) == 1));
	KUNIT_EXPECT_PTR_EQ(test, f->ev[0].buf, buf);
	KUNIT_EXPECT_TRUE(test, f->ev[0].status == KMAD_SEND_FLUSHED ||
			  f->ev[0].status == KMAD_SEND_LOCAL_ERROR);
	gt_wait(f, false);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_ah_pending(f->fab, KT_DEV0), 0U);
	kmad_free_send_buf(buf);
}

/* Many sends to one address share one handle: one creation, the rest
 * cache hits.
 */
static void gid_ah_cache_reuse(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf[4];
	struct kmad_sim_ah_stats st;
	int i;

	f->free_on_send = true;
	buf[0] = kt_request(f, f->agent, KMAD_METHOD_GET, 1, 0, 0);
	kt_post(f, buf[0]);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	for (i = 1; i < ARRAY_SIZE(buf); i++) {
		buf[i] = kt_request(f, f->agent, KMAD_METHOD_GET, 1 + i, 0, 0);
		kt_post(f, buf[i]);
	}
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 4));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, 1ULL);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS), 3);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_MISSES), 1);
}

/* A port change forgets the cache: an unused handle is destroyed, and the
 * next send creates a new one.
 */
static void gid_ah_flush_on_port_change(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	struct kmad_sim_ah_stats st;

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_set_lmc(f, 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, (kmad_sim_get_ah_stats(f->fab,
								  KT_DEV0, &st),
					    st.destroyed == 1)));
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, 2ULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_free_send_buf(buf);
}

static DECLARE_COMPLETION(gt_ah_work_entered);
static struct kmad_port *gt_ah_work_port;

/* kmad_test_ah_work_hook: say the work of the port the test named began,
 * then hold it a while.
 */
static void gt_ah_work_slow(struct kmad_port *port)
{
	if (port != READ_ONCE(gt_ah_work_port))
		return;
	complete(&gt_ah_work_entered);
	msleep(300);
}

/*
 * Send @buf from @dev's QP1 and free it: one handle created, cached, not
 * destroyed.
 */
static void gt_send_one_handle(struct kt_fix *f, unsigned int dev,
			       struct kmad_send_buf *buf)
{
	struct kmad_sim_ah_stats st;

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(f->test,
			  gt_wait(f, kmad_sim_pending_sends(f->fab, dev,
							    KT_QPN) == 1));
	kt_complete(f, dev, KMAD_WC_SUCCESS, false);
	kmad_free_send_buf(buf);
	kmad_sim_get_ah_stats(f->fab, dev, &st);
	KUNIT_ASSERT_EQ(f->test, st.created, 1ULL);
	KUNIT_ASSERT_EQ(f->test, st.destroyed, 0ULL);
}

/*
 * Forget @dev's cached handles by a port change (same attributes), with
 * the address handle work that follows held 300 ms past its dequeueing
 * (gt_ah_work_slow()).  Return: whether that work began.
 */
static bool gt_port_change_held_ah(struct kt_fix *f, unsigned int dev)
{
	struct kmad_port *port = f->port[dev];
	struct kmad_port_attr attr = {
		.lid = kmad_port_lid(port),
		.lmc = kmad_port_lmc(port),
		.sm_lid = kmad_port_sm_lid(port),
	};
	bool began;

	reinit_completion(&gt_ah_work_entered);
	WRITE_ONCE(gt_ah_work_port, port);
	WRITE_ONCE(kmad_test_ah_work_hook, gt_ah_work_slow);
	began = !kmad_device_port_changed(kmad_sim_device(f->fab, dev), 1,
					  &attr) &&
		wait_for_completion_timeout(&gt_ah_work_entered,
					    msecs_to_jiffies(GT_WAIT_MS));
	WRITE_ONCE(kmad_test_ah_work_hook, NULL);
	return began;
}

/* kmad_device_flush() waits for an address handle work the workqueue has
 * taken off its queue (its pending bit clear) but that has yet to begin:
 * when it returns, the handle a port change forgot is destroyed.
 */
static void gid_ah_flush_waits_for_dequeued_work(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_ah_stats st;

	gt_send_one_handle(f, KT_DEV0, gt_request(f, false, 0));
	KUNIT_ASSERT_TRUE_MSG(test, gt_port_change_held_ah(f, KT_DEV0),
			      "the address handle work did not run");
	kmad_device_flush(kmad_sim_device(f->fab, KT_DEV0));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.destroyed, 1ULL);
}

/* kmad_sim_settle() waits for the address handle work of every device,
 * not only the first: a handle device 1 forgot is destroyed when it
 * returns.
 */
static void gid_ah_settle_waits_for_second_device(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_ah_stats st;
	struct kmad_send_buf *buf;
	struct kmad_agent *agent;

	agent = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, NULL,
				    kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	buf = kt_request(f, agent, KMAD_METHOD_GET, GT_TID, 0, 0);
	buf->dest.dlid = kmad_port_lid(f->port[KT_DEV0]);
	gt_send_one_handle(f, KT_DEV1, buf);
	KUNIT_ASSERT_TRUE_MSG(test, gt_port_change_held_ah(f, KT_DEV1),
			      "the address handle work did not run");
	kt_settle(f);
	kmad_sim_get_ah_stats(f->fab, KT_DEV1, &st);
	KUNIT_EXPECT_EQ(test, st.destroyed, 1ULL);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
}

/* A handle the cache forgot while a send uses it is destroyed only after
 * that send's CQE.
 */
static void gid_ah_destroyed_after_cqe(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	struct kmad_sim_ah_stats st;

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_set_lmc(f, 0);
	gt_wait(f, false);
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.destroyed, 0ULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, (kmad_sim_get_ah_stats(f->fab,
								  KT_DEV0, &st),
					    st.destroyed == 1)));
	KUNIT_EXPECT_EQ(test, st.destroyed_busy, 0ULL);
	kmad_free_send_buf(buf);
}

/* Past KMAD_AH_CACHE_MAX addresses the least recently used unused handle
 * is destroyed; the cache stays bounded.
 */
static void gid_ah_cache_bounded(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	struct kmad_sim_ah_stats st;
	unsigned int i;

	for (i = 0; i <= KMAD_AH_CACHE_MAX; i++) {
		buf->dest.dlid = 100 + i;
		kt_post(f, buf);
		KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	KUNIT_EXPECT_TRUE(test, gt_wait(f, (kmad_sim_get_ah_stats(f->fab,
								  KT_DEV0, &st),
					    st.destroyed == 1)));
	KUNIT_EXPECT_EQ(test, st.created, (u64)KMAD_AH_CACHE_MAX + 1);
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV0]->ah.count, KMAD_AH_CACHE_MAX);
	kmad_free_send_buf(buf);
}

/* Send @buf to @dlid, wait for it on the wire and complete it. */
static void gt_send_to(struct kt_fix *f, struct kmad_send_buf *buf, u16 dlid)
{
	buf->dest.dlid = dlid;
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(f->test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
}

/* Whether device 0's cache holds an entry for @dlid (no GRH). */
static bool gt_ah_cached(struct kt_fix *f, u16 dlid)
{
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long flags;
	struct kmad_ah *ah;
	bool found = false;

	spin_lock_irqsave(&c->lock, flags);
	list_for_each_entry(ah, &c->lru, lru)
		found |= ah->attr.dlid == dlid;
	spin_unlock_irqrestore(&c->lock, flags);
	return found;
}

/* The address of the handle @buf's send holds: 0 if none. */
static u16 gt_held_dlid(struct kt_fix *f, struct kmad_send_buf *buf)
{
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	struct kmad_send_wr *wr = kmad_send_wr(buf);
	unsigned long flags;
	u16 dlid = 0;

	spin_lock_irqsave(&qpi->lock, flags);
	if (wr->ah)
		dlid = wr->ah->attr.dlid;
	spin_unlock_irqrestore(&qpi->lock, flags);
	return dlid;
}

/* Two cached DLIDs whose entries share a hash bucket; false if none. */
static bool gt_ah_collision(struct kt_fix *f, u16 *a, u16 *b)
{
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long flags;
	struct kmad_ah *ah;
	unsigned int bkt;
	bool found = false;

	spin_lock_irqsave(&c->lock, flags);
	for (bkt = 0; bkt < HASH_SIZE(c->hash) && !found; bkt++) {
		*a = 0;
		hlist_for_each_entry(ah, &c->hash[bkt], node) {
			if (!*a) {
				*a = ah->attr.dlid;
			} else {
				*b = ah->attr.dlid;
				found = true;
				break;
			}
		}
	}
	spin_unlock_irqrestore(&c->lock, flags);
	return found;
}

static void gt_ah_set_idle(struct kt_fix *f, unsigned int ms)
{
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	c->idle_jiffies = msecs_to_jiffies(ms);
	spin_unlock_irqrestore(&c->lock, flags);
}

/* Set device 0's idle time in jiffies, for a test that runs the expiry
 * itself (gid_ah_hit_renews_idle()).
 */
static void gt_ah_set_idle_jiffies(struct kt_fix *f, unsigned long idle)
{
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long flags;

	spin_lock_irqsave(&c->lock, flags);
	c->idle_jiffies = idle;
	spin_unlock_irqrestore(&c->lock, flags);
}

/* How many entries device 0's cache holds. */
static unsigned int gt_ah_count(struct kt_fix *f)
{
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long flags;
	unsigned int count;

	spin_lock_irqsave(&c->lock, flags);
	count = c->count;
	spin_unlock_irqrestore(&c->lock, flags);
	return count;
}

static u64 gt_ah_destroyed(struct kt_fix *f)
{
	struct kmad_sim_ah_stats st;

	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	return st.destroyed;
}

/* Addresses whose entries share a hash bucket each find their own entry:
 * one creation each, then hits that hold the right handle.
 */
static void gid_ah_hash_collision(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	const unsigned int n = HASH_SIZE(f->port[KT_DEV0]->ah.hash) + 1;
	struct kmad_sim_ah_stats st;
	u16 dlid[2] = {}, i;
	s64 hits;

	/* More addresses than buckets: two of them share one. */
	for (i = 0; i < n; i++)
		gt_send_to(f, buf, 100 + i);
	KUNIT_ASSERT_TRUE(test, gt_ah_collision(f, &dlid[0], &dlid[1]));
	KUNIT_ASSERT_NE(test, dlid[0], dlid[1]);
	hits = kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS);
	for (i = 0; i < 2; i++) {
		buf->dest.dlid = dlid[i];
		kt_post(f, buf);
		KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
		KUNIT_EXPECT_EQ(test, gt_held_dlid(f, buf), dlid[i]);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	}
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, (u64)n);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS),
			hits + 2);
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV0]->ah.count, n);
	kmad_free_send_buf(buf);
}

/* Eviction takes the least recently looked up entry, not the oldest: an
 * address used again just before the cache overflows stays.
 */
static void gid_ah_evicts_least_recent(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	unsigned int i;

	for (i = 0; i < KMAD_AH_CACHE_MAX; i++)
		gt_send_to(f, buf, 100 + i);
	gt_send_to(f, buf, 100);
	gt_send_to(f, buf, 100 + KMAD_AH_CACHE_MAX);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, gt_ah_destroyed(f) == 1));
	KUNIT_EXPECT_TRUE(test, gt_ah_cached(f, 100));
	KUNIT_EXPECT_FALSE(test, gt_ah_cached(f, 101));
	KUNIT_EXPECT_TRUE(test, gt_ah_cached(f, 100 + KMAD_AH_CACHE_MAX));
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV0]->ah.count, KMAD_AH_CACHE_MAX);
	kmad_free_send_buf(buf);
}

/* An unused handle nothing looked up for the idle time is destroyed; the
 * next send to its address creates another.
 */
static void gid_ah_expires_idle(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	struct kmad_sim_ah_stats st;

	gt_ah_set_idle(f, 50);
	gt_send_to(f, buf, 100);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, gt_ah_destroyed(f) == 1));
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV0]->ah.count, 0U);
	gt_send_to(f, buf, 100);
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, 2ULL);
	KUNIT_EXPECT_EQ(test, st.destroyed_busy, 0ULL);
	kmad_free_send_buf(buf);
}

/* An entry a send holds outlives the idle time, however many times the
 * expiry runs (another, unused, entry expires meanwhile), and goes once
 * the send's CQE has released it.
 */
static void gid_ah_expiry_spares_held(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *held = gt_request(f, false, 0);
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	struct kmad_sim_ah_stats st;

	gt_ah_set_idle(f, 20);
	held->dest.dlid = 100;
	kt_post(f, held);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	buf->dest.dlid = 200;
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 2));
	/* buf's send completes, out of post order; held's stays. */
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN,
						     1, KMAD_WC_SUCCESS,
						     false), 0);
	kt_event(f, KT_DEV0);
	/* buf's handle expires; five more idle times pass with held's. */
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_ah_destroyed(f) == 1));
	msleep(100);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, gt_ah_destroyed(f), 1ULL);
	KUNIT_EXPECT_TRUE(test, gt_ah_cached(f, 100));
	KUNIT_EXPECT_FALSE(test, gt_ah_cached(f, 200));
	KUNIT_EXPECT_EQ(test, gt_held_dlid(f, held), 100);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, gt_ah_destroyed(f) == 2));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.destroyed_busy, 0ULL);
	KUNIT_EXPECT_EQ(test, f->port[KT_DEV0]->ah.count, 0U);
	kmad_free_send_buf(held);
	kmad_free_send_buf(buf);
}

/* Longer than any stall of a loaded TCG guest between setting the idle
 * time and the expiry work's run (it runs at once, flush_delayed_work()).
 */
#define GT_IDLE_MARGIN_MS	2000

/*
 * A cache hit renews its entry's idle time: an address in use is not
 * expired an idle time after its handle was created, however often it
 * was used since.  The handle is created, then hit GT_IDLE_MARGIN_MS
 * later; the expiry then runs at once (flush_delayed_work()) with an
 * idle time the hit is within and the creation is not.  The entry stays,
 * and the next send to the address hits it: one creation in all.  The
 * test runs the expiry itself rather than wait for it, so that no stall
 * of its own thread can decide the outcome.
 */
static void gid_ah_hit_renews_idle(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_ah_cache *c = &f->port[KT_DEV0]->ah;
	unsigned long margin = msecs_to_jiffies(GT_IDLE_MARGIN_MS);
	struct kmad_send_buf *buf = gt_request(f, false, 0);
	u16 dlid = kmad_port_lid(f->port[KT_DEV1]);
	struct kmad_sim_ah_stats st;
	unsigned long created, hit;

	kt_post(f, buf);
	created = jiffies;		/* not before the creating lookup */
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	while (time_before(jiffies, created + margin))
		msleep(20);
	hit = jiffies;			/* not after the hit's lookup */
	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS), 1);
	KUNIT_ASSERT_EQ(test, gt_ah_count(f), 1U);

	/* Armed by the miss, an idle time (60 s) from then: run it now with
	 * an idle time longer than the time since the hit by the margin, and
	 * at most the time since the creation.
	 */
	KUNIT_ASSERT_TRUE(test, delayed_work_pending(&c->expire));
	gt_ah_set_idle_jiffies(f, jiffies - hit + margin);
	flush_delayed_work(&c->expire);
	gt_ah_set_idle(f, KMAD_AH_IDLE_MS);
	KUNIT_EXPECT_TRUE(test, gt_ah_cached(f, dlid));

	kt_post(f, buf);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, 1ULL);
	KUNIT_EXPECT_EQ(test, st.destroyed, 0ULL);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS), 2);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_MISSES), 1);
	kmad_free_send_buf(buf);
}

/*
 * The cache filled to KMAD_AH_CACHE_LIMIT by sends that each held a
 * handle of their own, all completed since: the next new address evicts
 * the released entries (down to KMAD_AH_CACHE_MAX, then one more for its
 * own) and gets its handle.  It does not fail as if the cache were still
 * full of entries in use (gid_ah_cache_limit()).
 */
static void gid_ah_limit_evicts_released(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const unsigned int n = KMAD_AH_CACHE_LIMIT;
	struct kmad_sim_ah_stats st;
	struct kmad_send_buf *buf;
	unsigned int i;

	f->free_on_send = true;
	for (i = 0; i < n; i++) {
		buf = kt_request(f, f->agent, KMAD_METHOD_GET, i, 0, 0);
		buf->dest.dlid = 100 + i;
		kt_post(f, buf);
	}
	KUNIT_ASSERT_TRUE(test, gt_wait(f, (kmad_sim_get_ah_stats(f->fab,
								  KT_DEV0, &st),
					    st.created == n)));
	KUNIT_ASSERT_EQ(test, gt_ah_count(f), n);
	/* Complete every send, a send queue's worth at a time. */
	while (gt_wire(f)) {
		while (!kmad_sim_complete_send(f->fab, KT_DEV0, KT_QPN, 0,
					       KMAD_WC_SUCCESS, false))
			;
		kt_event(f, KT_DEV0);
	}
	KUNIT_ASSERT_EQ(test, atomic_read(&f->sends), (int)n);
	/* Released, but nothing evicts them until the next miss. */
	KUNIT_ASSERT_EQ(test, gt_ah_count(f), n);
	KUNIT_ASSERT_EQ(test, gt_ah_destroyed(f), 0ULL);

	buf = kt_request(f, f->agent, KMAD_METHOD_GET, n, 0, 0);
	buf->dest.dlid = 100 + n;
	kt_post(f, buf);
	gt_wait(f, gt_wire(f) == 1 || atomic_read(&f->sends) > n);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_FAILURES), 0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_MISSES),
			(s64)n + 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), (int)n);
	KUNIT_ASSERT_EQ(test, gt_wire(f), 1U);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, gt_ah_destroyed(f) ==
					   n - KMAD_AH_CACHE_MAX + 1));
	KUNIT_EXPECT_EQ(test, gt_ah_count(f), (unsigned int)KMAD_AH_CACHE_MAX);
	KUNIT_EXPECT_TRUE(test, gt_ah_cached(f, 100 + n));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, (u64)n + 1);
	KUNIT_EXPECT_EQ(test, st.destroyed_busy, 0ULL);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->sends), (int)n + 1);
}

static struct kunit_case gid_ib_cases[] = {
	KUNIT_CASE(gid_sim_port_gid0),
	KUNIT_CASE(gid_debugfs_hw_qpn),
	KUNIT_CASE(gid_port_qp_num),
	KUNIT_CASE(gid_post_validation_ib),
	KUNIT_CASE(gid_create_response_by_gid),
	KUNIT_CASE(gid_bridged_response_from_qp1),
	KUNIT_CASE(gid_bridged_smp_on_qp0),
	KUNIT_CASE(gid_bridged_unsupported_in_softirq),
	KUNIT_CASE(gid_match_rejects_no_grh),
	KUNIT_CASE(gid_match_rejects_grh),
	KUNIT_CASE(gid_match_dgid),
	KUNIT_CASE(gid_match_path_bits),
	{}
};

static struct kunit_suite gid_ib_suite = {
	.name = "kmad_gid",
	.init = gt_init_ib,
	.exit = kt_fix_exit,
	.test_cases = gid_ib_cases,
};

/*
 * Pass a Get to device 1's agent through the bridge with @bwc and a GRH
 * from device 0 to device 1's GID 0; return the request as the agent's
 * handler kept it (NULL after a failed expectation).
 */
static struct kmad_recv_wc *gt_bridge_get(struct kt_fix *f,
					  const struct kmad_wc *bwc,
					  struct kmad_send_buf *req)
{
	struct kmad_wire_grh grh = {
		.version_tclass_flow = cpu_to_be32(6U << 28),
		.next_hdr = 0x11,
		.hop_limit = 64,
		.sgid = gt_gid(f, KT_DEV0),
		.dgid = gt_gid(f, KT_DEV1),
	};

	f->kept_recv = NULL;
	f->keep_recv = true;
	KUNIT_EXPECT_EQ(f->test,
			kmad_device_bridge_recv(kmad_sim_device(f->fab, KT_DEV1),
						1, bwc, &grh, req->mad,
						KMAD_MAD_SIZE), 0);
	KUNIT_EXPECT_TRUE(f->test, gt_wait(f, READ_ONCE(f->kept_recv)));
	return f->kept_recv;
}

/*
 * A provider that tells which entry of the GID table a request arrived
 * at (KMAD_WC_GID_INDEX: kmad_ib on RoCE, the DGID's entry of the
 * packet's VLAN device and RoCE type) has the answer leave from that
 * entry, not from the lowest one holding the DGID (another VLAN's, for
 * a link-local GID); one beyond the table is ignored.
 */
static void gid_eth_reply_from_arrival_entry(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = gt_register_get(f, KT_DEV1);
	struct kmad_send_buf *req = gt_request(f, false, 0);
	struct kmad_wc bwc = {
		.src_qpn = 1,
		.wc_flags = KMAD_WC_GID_INDEX,
		.gid_index = 3,
	};
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc;
	struct kmad_dest dest;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	wc = gt_bridge_get(f, &bwc, req);
	KUNIT_ASSERT_NOT_NULL(test, wc);
	KUNIT_EXPECT_TRUE(test, wc->grh.dgid_index_valid);
	KUNIT_EXPECT_EQ(test, wc->grh.dgid_index, 3);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, &dest),
			0);
	KUNIT_EXPECT_EQ(test, dest.grh.sgid_index, 3);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_EQ(test, resp->dest.grh.sgid_index, 3);
	kmad_free_send_buf(resp);
	kmad_free_recv(wc);

	bwc.gid_index = 200;
	wc = gt_bridge_get(f, &bwc, req);
	KUNIT_ASSERT_NOT_NULL(test, wc);
	KUNIT_EXPECT_FALSE(test, wc->grh.dgid_index_valid);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], wc, &dest),
			0);
	KUNIT_EXPECT_EQ(test, dest.grh.sgid_index, 0);
	kmad_free_recv(wc);
	f->kept_recv = NULL;
	kmad_free_send_buf(req);
	kmad_unregister_agent(a);
}

static struct kunit_case gid_eth_cases[] = {
	KUNIT_CASE(gid_eth_port_caps),
	KUNIT_CASE(gid_eth_port_qp_num),
	KUNIT_CASE(gid_eth_request_response),
	KUNIT_CASE(gid_eth_reply_from_arrival_entry),
	{}
};

static struct kunit_suite gid_eth_suite = {
	.name = "kmad_gid_eth",
	.init = gt_init_eth,
	.exit = kt_fix_exit,
	.test_cases = gid_eth_cases,
};

/*
 * A second send to an address whose handle is still being created waits
 * for it as the first does: the entry is not ready, so it is a miss too
 * (counted in AH_MISSES, not AH_HITS) and nothing goes out without its
 * handle.  Once the one creation ends, both go out, in posting order.
 */
static void gid_ah_second_send_waits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf[2];
	struct kmad_sim_ah_stats st;
	struct kmad_mad mad;
	int i;

	for (i = 0; i < 2; i++)
		buf[i] = kt_request(f, f->agent, KMAD_METHOD_GET, 1 + i, 0, 0);
	kt_post(f, buf[0]);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, kmad_sim_ah_pending(f->fab, KT_DEV0)
					== 1));
	kt_post(f, buf[1]);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kmad_sim_ah_pending(f->fab, KT_DEV0), 1U);
	KUNIT_EXPECT_EQ(test, gt_wire(f), 0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_MISSES), 2);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_AH_HITS), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf[1], NULL), KMAD_SS_SENDING);

	KUNIT_ASSERT_EQ(test, kmad_sim_complete_ah(f->fab, KT_DEV0, 0, 0), 0);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 2));
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN,
							 i, &mad, sizeof(mad)),
				(int)sizeof(mad));
		KUNIT_EXPECT_EQ(test, (u32)be64_to_cpu(mad.mad_hdr.tid),
				(u32)(1 + i));
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_ah_pending(f->fab, KT_DEV0), 0U);
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_EQ(test, st.created, 1ULL);
	for (i = 0; i < 2; i++)
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	for (i = 0; i < 2; i++) {
		kt_expect_send(f, i, buf[i], KMAD_SEND_OK);
		kmad_free_send_buf(buf[i]);
	}
}

/*
 * A peer's requests, to a class nobody takes, each with its own flow label:
 * each of kmad's answers (by GID, with the request's flow label) needs a
 * handle of its own, and every creation is held.  The cache stops at
 * KMAD_AH_CACHE_LIMIT entries; the answers beyond fail at once with a
 * local error, counted as failed creations.  (It grew by one entry an
 * answer, without bound.)
 */
static void gid_ah_cache_limit(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *req = gt_request(f, false, 0);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV0]), .src_qpn = KT_QPN,
		.grh_present = true, .sgid = gt_gid(f, KT_DEV0),
		.dgid = gt_gid(f, KT_DEV1), .hop_limit = 3,
	};
	struct kmad_ah_cache *c = &f->port[KT_DEV1]->ah;
	const unsigned int n = KMAD_AH_CACHE_LIMIT + 20;
	unsigned int i, count;
	unsigned long flags;

	for (i = 0; i < n; i++) {
		rx.flow_label = i;
		req->mad->mad_hdr.tid = cpu_to_be64(i);
		KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV1,
							 KT_QPN, req->mad,
							 KMAD_MAD_SIZE, &rx),
				0);
		kt_event(f, KT_DEV1);
	}
	spin_lock_irqsave(&c->lock, flags);
	count = c->count;
	spin_unlock_irqrestore(&c->lock, flags);
	KUNIT_EXPECT_EQ(test, count, (unsigned int)KMAD_AH_CACHE_LIMIT);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED),
			(s64)n);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_AH_MISSES),
			(s64)KMAD_AH_CACHE_LIMIT);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_AH_FAILURES),
			20);
	KUNIT_EXPECT_EQ(test, kmad_sim_ah_pending(f->fab, KT_DEV1), 1U);
	kmad_free_send_buf(req);
}

static struct kunit_case gid_ah_hold_cases[] = {
	KUNIT_CASE(gid_ah_send_waits),
	KUNIT_CASE(gid_ah_failure),
	KUNIT_CASE(gid_ah_wait_survives_qp_recovery),
	KUNIT_CASE(gid_ah_wait_fails_with_qp),
	KUNIT_CASE(gid_ah_unregister_waiting),
	KUNIT_CASE(gid_ah_port_removal_waiting),
	KUNIT_CASE(gid_ah_cache_limit),
	KUNIT_CASE(gid_ah_second_send_waits),
	{}
};

static struct kunit_suite gid_ah_hold_suite = {
	.name = "kmad_gid_ah_wait",
	.init = gt_init_ah_hold,
	.exit = kt_fix_exit,
	.test_cases = gid_ah_hold_cases,
};

static struct kunit_case gid_ah_auto_cases[] = {
	KUNIT_CASE(gid_ah_cache_reuse),
	KUNIT_CASE(gid_ah_flush_on_port_change),
	KUNIT_CASE(gid_ah_destroyed_after_cqe),
	KUNIT_CASE(gid_ah_flush_waits_for_dequeued_work),
	KUNIT_CASE(gid_ah_settle_waits_for_second_device),
	KUNIT_CASE(gid_ah_cache_bounded),
	KUNIT_CASE(gid_ah_hash_collision),
	KUNIT_CASE(gid_ah_evicts_least_recent),
	KUNIT_CASE(gid_ah_expires_idle),
	KUNIT_CASE(gid_ah_expiry_spares_held),
	KUNIT_CASE(gid_ah_hit_renews_idle),
	KUNIT_CASE(gid_ah_limit_evicts_released),
	{}
};

/* No case leaves the seam set, even one a failed assertion ended. */
static void gt_exit_ah_auto(struct kunit *test)
{
	WRITE_ONCE(kmad_test_ah_work_hook, NULL);
	WRITE_ONCE(gt_ah_work_port, NULL);
	kt_fix_exit(test);
}

static struct kunit_suite gid_ah_auto_suite = {
	.name = "kmad_gid_ah_cache",
	.init = gt_init_ah_auto,
	.exit = gt_exit_ah_auto,
	.test_cases = gid_ah_auto_cases,
};

static int gt_init_eth_ah(struct kunit *test)
{
	return gt_setup(test, KMAD_LINK_LAYER_ETHERNET, KMAD_SIM_AH_AUTO);
}

/*
 * On RoCE a handle in constant use is made again once it is an idle time
 * old: it holds the peer's MAC as resolved when it was made, which the
 * peer may change under the same GID.  Two sends alternate so that one
 * always holds the entry (the expiry, which takes unused entries only,
 * never gets it).  (Each lookup renewed the entry, which was never made
 * again: one creation for all thirteen sends.)  None is destroyed while a
 * send holds it.
 */
static void gid_eth_ah_remade_when_aged(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf[2] = {
		gt_request(f, true, 0), gt_request(f, true, 0),
	};
	struct kmad_sim_ah_stats st;
	int i;

	gt_ah_set_idle(f, 40);
	kt_post(f, buf[0]);
	KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 1));
	for (i = 1; i <= 12; i++) {
		kt_post(f, buf[i % 2]);
		KUNIT_ASSERT_TRUE(test, gt_wait(f, gt_wire(f) == 2));
		/* The older one ends; the newer holds the entry. */
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		KUNIT_ASSERT_TRUE(test, gt_wait(f, atomic_read(&f->sends) == i));
		usleep_range(10000, 12000);
	}
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_TRUE(test, gt_wait(f, atomic_read(&f->sends) == 13));
	kmad_sim_get_ah_stats(f->fab, KT_DEV0, &st);
	KUNIT_EXPECT_GE(test, st.created, 2ULL);
	KUNIT_EXPECT_EQ(test, st.destroyed_busy, 0ULL);
	kmad_free_send_buf(buf[0]);
	kmad_free_send_buf(buf[1]);
}

static struct kunit_case gid_eth_ah_cases[] = {
	KUNIT_CASE(gid_eth_ah_remade_when_aged),
	{}
};

static struct kunit_suite gid_eth_ah_suite = {
	.name = "kmad_gid_eth_ah",
	.init = gt_init_eth_ah,
	.exit = kt_fix_exit,
	.test_cases = gid_eth_ah_cases,
};

kunit_test_suites(&gid_ib_suite, &gid_eth_suite, &gid_ah_hold_suite,
		  &gid_ah_auto_suite, &gid_eth_ah_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kmad KUnit: GID routing and address handles");
