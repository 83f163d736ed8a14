// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_contract: promises of <kmad/mad.h> (and the kernel-doc of the calls
 * it names) that no other suite checked, each case stated from the
 * contract alone, on the step-mode fixture of kmad_test.h.  Written from
 * the headers by a reviewer playing the author of conformance tests kmad
 * does not see; two of its cases failed at first and found defects (see
 * contract_stats_response_counted_before_handlers and
 * contract_busy_tid_against_request_without_timeout).
 */

#include "kmad_test.h"

/* An agent on device 1's QP1 for @methods of (@cls, @version). */
static struct kmad_agent *kc_register(struct kt_fix *f, u8 cls, u8 version,
				      const u8 *methods, int n, u8 oui_lo)
{
	struct kmad_reg_req req = {
		.mgmt_class = cls,
		.class_version = version,
	};
	int i;

	for (i = 0; i < n; i++)
		__set_bit(methods[i], req.method_mask);
	req.oui[2] = oui_lo;
	return kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &req,
				   kt_send_handler, kt_recv_handler, f);
}

/*
 * Device 1 sent one answer of its own (kmad's "unsupported"), with
 * @method and @status; let it complete.
 */
static void kc_expect_answer(struct kt_fix *f, u8 method, u16 status)
{
	struct kmad_mad seen;

	KUNIT_ASSERT_EQ(f->test, kmad_sim_pending_sends(f->fab, KT_DEV1,
							KT_QPN), 1U);
	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, KT_DEV1, KT_QPN, 0,
						    &seen, sizeof(seen)),
			(int)sizeof(seen));
	KUNIT_EXPECT_EQ(f->test, seen.mad_hdr.method, method);
	KUNIT_EXPECT_EQ(f->test, be16_to_cpu(seen.mad_hdr.status), status);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
}

/*
 * mad.h, kmad_register_agent(): -ENODEV if the port is going away.  Once
 * its device is removed, a port the ULP still holds takes no agent: GSI
 * with a class, send-only, or SMI.
 */
static void contract_register_on_removed_port_enodev(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a;

	kmad_sim_remove_device(f->fab, KT_DEV1);
	a = kc_register(f, KT_CLASS, KT_VERSION, get, 1, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -ENODEV);
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -ENODEV);
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_SMI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -ENODEV);
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
}

/* The pair of sends contract_decided_outcome_before_callback watches. */
static struct kmad_send_buf *kc_pair[2];
static int kc_pair_cancel, kc_pair_modify;
static bool kc_pair_acted;

/* The first send_handler cancels and modifies the other send. */
static void kc_pair_send_handler(struct kmad_agent *agent,
				 struct kmad_send_wc *wc)
{
	struct kmad_send_buf *other;

	if (!kc_pair_acted) {
		other = wc->send_buf == kc_pair[0] ? kc_pair[1] : kc_pair[0];
		kc_pair_cancel = kmad_cancel_send(other);
		kc_pair_modify = kmad_modify_send(other, 10);
		kc_pair_acted = true;
	}
	kt_send_handler(agent, wc);
}

/*
 * mad.h: cancel and modify return -EALREADY once the outcome is decided,
 * "it timed out ... even if its callback has not run yet".  Two sends
 * time out in the same tick; from the first callback, the other (timed
 * out, its callback still to come) is refused -EALREADY by both, keeps
 * its timeout, and still ends RESP_TIMEOUT, once.
 */
static void contract_decided_outcome_before_callback(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *agent;

	kc_pair_acted = false;
	kc_pair_cancel = 1;
	kc_pair_modify = 1;
	agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    kc_pair_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	kc_pair[0] = kt_request(f, agent, KMAD_METHOD_GET, 1, 100, 0);
	kc_pair[1] = kt_request(f, agent, KMAD_METHOD_GET, 2, 100, 0);
	kt_post(f, kc_pair[0]);
	kt_post(f, kc_pair[1]);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_state(f, kc_pair[1], KMAD_SS_WAIT_RESP, 1);
	kt_advance(f, 100);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, f->ev[0].status, KMAD_SEND_RESP_TIMEOUT);
	KUNIT_EXPECT_EQ(test, f->ev[1].status, KMAD_SEND_RESP_TIMEOUT);
	KUNIT_EXPECT_PTR_NE(test, f->ev[0].buf, f->ev[1].buf);
	KUNIT_EXPECT_TRUE(test, kc_pair_acted);
	KUNIT_EXPECT_EQ(test, kc_pair_cancel, -EALREADY);
	KUNIT_EXPECT_EQ(test, kc_pair_modify, -EALREADY);
	KUNIT_EXPECT_EQ(test, kc_pair[0]->timeout_ms, 100U);
	KUNIT_EXPECT_EQ(test, kc_pair[1]->timeout_ms, 100U);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
	kmad_free_send_buf(kc_pair[0]);
	kmad_free_send_buf(kc_pair[1]);
}

/*
 * mad.h: "With @timeout_ms 0 it [kmad_modify_send()] is
 * kmad_cancel_send()", also for a send posted without a timeout (which a
 * non-zero modify refuses): 0, the callback CANCELED at the send
 * completion, never inside the call.  Not posted, before or after, both
 * are -EINVAL.
 */
static void contract_modify_zero_is_cancel_without_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_SET,
					       3, 0, 0);

	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), 0);
	kt_expect_state(f, buf, KMAD_SS_CANCELED, 1);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), -EALREADY);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_only_send(f, buf, KMAD_SEND_CANCELED);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(buf, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(buf), -EINVAL);
	kmad_free_send_buf(buf);
}

/*
 * mad.h, kmad_dest and kmad_create_response(): the response goes back to
 * the requester (its SLID and QP, the QP1 Q_Key, its SL), with the P_Key
 * index the request arrived with and from the path bits it was sent to;
 * the MAD keeps TID, class, version and attribute, gets GetResp and a
 * cleared status.  kmad_dest_from_wc() gives the same address, and the
 * response posts.
 */
static void contract_create_response_addresses_requester(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kc_register(f, KT_CLASS, KT_VERSION, get, 1, 0);
	struct kmad_mad req;
	struct kmad_recv_wc wc = {
		.mad = &req,
		.mad_len = KMAD_MAD_SIZE,
		.slid = 0x33,
		.src_qpn = 0x1234,
		.sl = 5,
		.pkey_index = 3,
		.qpt = KMAD_QPT_GSI,
		.dlid_path_bits = 2,
	};
	struct kmad_send_buf *resp;
	struct kmad_dest dest;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_mad(&req, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	req.mad_hdr.attr_id = cpu_to_be16(KMAD_ATTR_CLASS_PORT_INFO);
	req.mad_hdr.attr_mod = cpu_to_be32(0x1234);
	req.mad_hdr.status = cpu_to_be16(KMAD_MAD_STATUS_BAD_VERSION);
	resp = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_PTR_EQ(test, resp->agent, a);
	KUNIT_EXPECT_EQ(test, resp->mad->mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(resp->mad->mad_hdr.status), 0);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(resp->mad->mad_hdr.tid),
			0x0000000500000042ULL);
	KUNIT_EXPECT_EQ(test, resp->mad->mad_hdr.mgmt_class, KT_CLASS);
	KUNIT_EXPECT_EQ(test, resp->mad->mad_hdr.class_version, KT_VERSION);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(resp->mad->mad_hdr.attr_id),
			(u16)KMAD_ATTR_CLASS_PORT_INFO);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(resp->mad->mad_hdr.attr_mod),
			0x1234U);
	KUNIT_EXPECT_EQ(test, resp->dest.dlid, 0x33);
	KUNIT_EXPECT_EQ(test, resp->dest.remote_qpn, 0x1234U);
	KUNIT_EXPECT_EQ(test, resp->dest.remote_qkey, KMAD_QP1_QKEY);
	KUNIT_EXPECT_EQ(test, resp->dest.sl, 5);
	KUNIT_EXPECT_EQ(test, resp->dest.pkey_index, 3);
	KUNIT_EXPECT_EQ(test, resp->dest.src_path_bits, 2);
	KUNIT_EXPECT_FALSE(test, resp->dest.grh_present);
	KUNIT_EXPECT_FALSE(test, resp->dest.from_qp1);
	KUNIT_EXPECT_EQ(test, resp->timeout_ms, 0U);
	KUNIT_ASSERT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV1], &wc, &dest),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(&dest, &resp->dest, sizeof(dest)), 0);
	kt_post(f, resp);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
	kt_expect_only_send(f, resp, KMAD_SEND_OK);
	kmad_free_send_buf(resp);
	kmad_unregister_agent(a);
}

/* A request with @path_bits and a 10 s timeout, sent, waiting. */
static struct kmad_send_buf *kc_waiting_from_bits(struct kt_fix *f, u32 tid,
						  u8 path_bits)
{
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       tid, 10000, 0);

	buf->dest.src_path_bits = path_bits;
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(f->test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	return buf;
}

/*
 * mad.h: a request without a GRH is matched only by a response "whose
 * destination path bits equal the request's source path bits
 * (&kmad_dest.src_path_bits) in the port's LMC bits".  With LMC 2, a
 * request from path bits 1 is not matched at bits 0, is at bits 1; one
 * from bits 5 (1 within the LMC) is not matched at bits 4, is at 1.
 */
static void contract_response_to_request_path_bits(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_rx rx = {};
	struct kmad_send_buf *buf;
	s64 mis;

	kt_set_lmc(f, 2);
	buf = kc_waiting_from_bits(f, 1, 1);
	mis = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_MISADDRESSED);
	rx.dlid_path_bits = 0;
	kt_respond_rx(f, buf, &rx);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_MISADDRESSED),
			mis + 1);
	rx.dlid_path_bits = 1;
	kt_respond_rx(f, buf, &rx);
	kt_expect_answered(f, buf);
	kmad_free_send_buf(buf);

	buf = kc_waiting_from_bits(f, 2, 5);
	rx.dlid_path_bits = 4;
	kt_respond_rx(f, buf, &rx);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	KUNIT_EXPECT_EQ(test, kt_state(buf, NULL), KMAD_SS_WAIT_RESP);
	rx.dlid_path_bits = 1;
	kt_respond_rx(f, buf, &rx);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 3, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
}

/* What the handlers of contract_stats_response_counted_before_handlers
 * saw.
 */
static atomic_t kc_resp_seen, kc_stats_late;

static void kc_stats_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct kmad_agent_stats st;
	int n;

	if (request) {
		n = atomic_inc_return(&kc_resp_seen);
		kmad_agent_get_stats(agent, &st);
		if (st.responses < (u64)n)
			atomic_inc(&kc_stats_late);
	}
	kt_recv_handler(agent, request, wc);
}

static void kc_stats_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct kt_fix *f = agent->context;
	struct kmad_agent_stats st;

	kmad_agent_get_stats(agent, &st);
	if (st.responses < (u64)atomic_read(&kc_resp_seen) ||
	    st.completed < (u64)atomic_read(&f->sends) + 1)
		atomic_inc(&kc_stats_late);
	kt_send_handler(agent, wc);
}

#define KC_STATS_ROUNDS	32

/*
 * send-lifecycle.rst ("counters counted before the callback runs"; "a
 * handler reading kmad_agent_get_stats() sees its own send counted") and
 * mad.h's @responses: a handler of a matched response reads it counted.
 * Many rounds, since the window is a preemption at the end of the CQ
 * drain's agent-lock hold: on the test kernel (CONFIG_PREEMPT, the
 * agents' work on a bound high-priority queue) the old order failed 17
 * of 32; without preemption it might pass, and the new order cannot
 * fail.
 */
static void contract_stats_response_counted_before_handlers(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_stats st;
	struct kmad_send_buf *buf;
	struct kmad_agent *agent;
	int i;

	atomic_set(&kc_resp_seen, 0);
	atomic_set(&kc_stats_late, 0);
	agent = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				    kc_stats_send, kc_stats_recv, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	for (i = 0; i < KC_STATS_ROUNDS; i++) {
		buf = kt_request(f, agent, KMAD_METHOD_GET, 100 + i, 10000, 0);
		kt_post(f, buf);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kt_respond(f, buf, 0);
		kt_event(f, KT_DEV0);
		KUNIT_ASSERT_EQ(test, kt_events(f), 2 * (i + 1));
		kt_expect_send(f, 2 * i + 1, buf, KMAD_SEND_OK);
		kmad_free_send_buf(buf);
	}
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&kc_stats_late), 0,
			    "handlers that read their own response uncounted");
	kmad_agent_get_stats(agent, &st);
	KUNIT_EXPECT_EQ(test, st.responses, (u64)KC_STATS_ROUNDS);
	KUNIT_EXPECT_EQ(test, st.completed, (u64)KC_STATS_ROUNDS);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(agent), 0);
}

/*
 * mad.h, kmad_post_send(): -EBUSY for a request, with or without a
 * timeout, with the TID of a request of the agent that still waits for
 * its response: the GetResp to a Get posted without a timeout would
 * complete the other request.  Before, kmad checked only posts that had a
 * timeout themselves and took this one.  Once the first has its
 * response, the TID is free again.
 */
static void contract_busy_tid_against_request_without_timeout(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *a = kt_request(f, f->agent, KMAD_METHOD_GET,
					     7, 1000, 0);
	struct kmad_send_buf *b = kt_request(f, f->agent, KMAD_METHOD_GET,
					     7, 0, 0);

	kt_post(f, a);
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EBUSY);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kmad_post_send(b), -EBUSY);
	KUNIT_EXPECT_EQ(test, kt_state(b, NULL), KMAD_SS_INIT);
	kt_respond(f, a, 0);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, a, KMAD_SEND_OK);
	kt_post(f, b);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	kt_expect_send(f, 2, b, KMAD_SEND_OK);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/*
 * mad.h, kmad_reg_req.oui: in vendor range 2 a request goes to the agent
 * registered with its OUI; one with an OUI nobody registered is answered
 * "unsupported class/version" by kmad, not given to either agent.
 */
static void contract_vendor_oui_routes_request(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kc_register(f, 0x31, 1, get, 1, 0x01);
	struct kmad_agent *b = kc_register(f, 0x31, 1, get, 1, 0x02);
	struct kmad_mad mad;
	struct kmad_vendor_mad *vmad = (struct kmad_vendor_mad *)&mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	kt_mad(&mad, 0x31, 1, KMAD_METHOD_GET);
	vmad->oui[2] = 0x02;
	kt_inject1(f, &mad);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_GET);
	KUNIT_EXPECT_PTR_EQ(test, f->ev[0].agent, b);
	vmad->oui[2] = 0x03;
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kc_expect_answer(f, KMAD_METHOD_GET_RESP, KMAD_MAD_STATUS_BAD_VERSION);
	kmad_unregister_agent(b);
	kmad_unregister_agent(a);
}

/*
 * mad.h, @method_mask: "bit m set: unsolicited requests with method m
 * come here".  Two agents of one class and version with disjoint methods
 * each get their own, unsolicited (request NULL), counted in
 * stats.unsolicited.
 */
static void contract_method_mask_routes_request(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	static const u8 set[] = { KMAD_METHOD_SET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *g = kc_register(f, KT_CLASS, KT_VERSION, get, 1, 0);
	struct kmad_agent *s = kc_register(f, KT_CLASS, KT_VERSION, set, 1, 0);
	struct kmad_agent_stats st;
	struct kmad_mad mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(g));
	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_SET);
	kt_inject1(f, &mad);
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_SET);
	KUNIT_EXPECT_PTR_EQ(test, f->ev[0].agent, s);
	kt_expect_recv(f, 1, NULL, KMAD_METHOD_GET);
	KUNIT_EXPECT_PTR_EQ(test, f->ev[1].agent, g);
	kmad_agent_get_stats(g, &st);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 1ULL);
	kmad_agent_get_stats(s, &st);
	KUNIT_EXPECT_EQ(test, st.unsolicited, 1ULL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	kmad_unregister_agent(s);
	kmad_unregister_agent(g);
}

/*
 * mad.h, @mgmt_class: "0 registers a send-only agent that gets no
 * unsolicited MADs", whatever else its request says (here a method
 * mask): a Get of the class it names goes to no one, and kmad answers
 * "unsupported class/version".
 */
static void contract_send_only_gets_no_unsolicited(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = { .class_version = KT_VERSION };
	struct kmad_agent *a;
	struct kmad_mad mad;

	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kc_expect_answer(f, KMAD_METHOD_GET_RESP, KMAD_MAD_STATUS_BAD_VERSION);
	kmad_unregister_agent(a);
}

/*
 * mad.h, "Bad pointers" with NULL (send_error_pointers covers error
 * pointers): refused or ignored, never dereferenced, no callback.
 */
static void contract_null_pointers(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct kt_fix *f = test->priv;
	struct kmad_dest dest = {};
	struct kmad_recv_wc nomad = {};
	struct kmad_mad mad;
	struct kmad_recv_wc wc = { .mad = &mad, .mad_len = KMAD_MAD_SIZE };
	struct kmad_wc bwc = { .src_qpn = 1, .slid = 2 };

	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(NULL), 0);
	kmad_free_send_buf(NULL);
	kmad_free_recv(NULL);
	kmad_unregister_client(NULL);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(NULL, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(NULL, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(NULL, path, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_seg_count(NULL), 0U);
	KUNIT_EXPECT_NULL(test, kmad_send_buf_seg(NULL, 1));
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_alloc_send_buf(NULL, &dest,
							    GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_alloc_send_buf(f->agent, NULL,
							    GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_alloc_send_buf_rmpp(NULL, &dest, 56,
								 10,
								 GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(NULL, &wc,
							     GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(f->agent, NULL,
							     GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(f->agent, &nomad,
							     GFP_KERNEL)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(NULL, &wc, &dest), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV0], NULL, &dest),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV0], &nomad,
						&dest), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(f->port[KT_DEV0], &wc, NULL),
			-EINVAL);
	/* send_handler is required even for a send-only agent (mad.h). */
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_register_agent(f->port[KT_DEV0],
							    KMAD_QPT_GSI, NULL,
							    NULL, NULL, f)),
			-EINVAL);
	/* The provider's bridge (provider.h): no address or no MAD.  Before,
	 * both dereferenced NULL.
	 */
	KUNIT_EXPECT_EQ(test,
			kmad_device_bridge_recv(kmad_sim_device(f->fab, KT_DEV0),
						1, NULL, NULL, &mad,
						KMAD_MAD_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test,
			kmad_device_bridge_recv(kmad_sim_device(f->fab, KT_DEV0),
						1, &bwc, NULL, NULL,
						KMAD_MAD_SIZE), -EINVAL);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/*
 * kmad_create_response() for a request of the other QP's kind: an SMP
 * for a QP1 agent, a GMP for a QP0 agent.  No buffer of that agent could
 * be posted (kmad_post_send() refuses the class on that QP): -EINVAL at
 * once.  Before, the QP1 agent got a buffer that its post then refused.
 */
static void contract_create_response_other_qp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kmad_mad mad;
	struct kmad_recv_wc wc = { .mad = &mad, .mad_len = KMAD_MAD_SIZE,
				   .slid = 2, .src_qpn = 0 };
	struct kmad_agent *smi;

	kt_mad(&mad, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, KMAD_METHOD_GET);
	mad.mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_PORT_INFO);
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(f->agent, &wc,
							     GFP_KERNEL)),
			-EINVAL);
	__set_bit(KMAD_METHOD_TRAP, req.method_mask);
	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, &req,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	wc.src_qpn = 1;
	KUNIT_EXPECT_EQ(test,
			PTR_ERR_OR_ZERO(kmad_create_response(smi, &wc,
							     GFP_KERNEL)),
			-EINVAL);
	kmad_unregister_agent(smi);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/* Complete the oldest pending send of device 0's QP0 and run the drain. */
static void kc_complete_smi(struct kt_fix *f)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_complete_send(f->fab, KT_DEV0, 0, 0,
							KMAD_WC_SUCCESS, false),
			0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV0, 0, false);
	kt_settle(f);
}

/*
 * mad.h/send.c, kmad_send_buf_set_dr_path(): -EINVAL for a buffer of an
 * agent not on QP0 (which it leaves untouched), a NULL path, 0 hops, and
 * a posted buffer; accepted again once the callback has run.
 */
static void contract_dr_path_refusals(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *gbuf = kt_request(f, f->agent, KMAD_METHOD_GET,
						1, 0, 0);
	struct kmad_dest dest = {};
	struct kmad_send_buf *sbuf;
	struct kmad_agent *smi;
	struct kmad_mad before = *gbuf->mad;
	struct kmad_dest dbefore = gbuf->dest;

	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(gbuf, path, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, memcmp(gbuf->mad, &before, sizeof(before)), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&gbuf->dest, &dbefore, sizeof(dbefore)),
			0);
	kmad_free_send_buf(gbuf);

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	sbuf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(sbuf));
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(sbuf, NULL, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(sbuf, path, 0), -EINVAL);
	KUNIT_ASSERT_EQ(test, kmad_send_buf_set_dr_path(sbuf, path, 1), 0);
	sbuf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	sbuf->mad->mad_hdr.class_version = KMAD_SMP_CLASS_VERSION;
	sbuf->mad->mad_hdr.method = KMAD_METHOD_GET;
	sbuf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	kt_post(f, sbuf);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(sbuf, path, 1), -EINVAL);
	kc_complete_smi(f);
	kt_expect_only_send(f, sbuf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kmad_send_buf_set_dr_path(sbuf, path, 1), 0);
	kmad_free_send_buf(sbuf);
	kmad_unregister_agent(smi);
}

/*
 * mad.h, kmad_recv_wc and kmad_recv_handler: an unsolicited MAD comes
 * with request NULL, the 256 bytes, the sender's LID and QP, the QP it
 * arrived on, no GRH, not bridged; the response kmad_create_response()
 * makes from it goes back to that LID and QP.
 */
static void contract_recv_wc_describes_arrival(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kc_register(f, KT_CLASS, KT_VERSION, get, 1, 0);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV0]),
		.src_qpn = 0x77,
	};
	struct kmad_send_buf *resp;
	struct kmad_recv_wc *wc;
	struct kmad_mad mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	f->keep_recv = true;
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV1, KT_QPN, &mad,
						 sizeof(mad), &rx), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV1, KT_QPN, false);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_GET);
	wc = f->kept_recv;
	KUNIT_ASSERT_NOT_NULL(test, wc);
	KUNIT_EXPECT_EQ(test, wc->mad_len, (size_t)KMAD_MAD_SIZE);
	KUNIT_EXPECT_EQ(test, memcmp(wc->mad, &mad, sizeof(mad)), 0);
	KUNIT_EXPECT_EQ(test, wc->slid, rx.slid);
	KUNIT_EXPECT_EQ(test, wc->src_qpn, 0x77U);
	KUNIT_EXPECT_EQ(test, wc->qpt, KMAD_QPT_GSI);
	KUNIT_EXPECT_FALSE(test, wc->grh_present);
	KUNIT_EXPECT_FALSE(test, wc->bridged);
	resp = kmad_create_response(a, wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_EQ(test, resp->dest.dlid, rx.slid);
	KUNIT_EXPECT_EQ(test, resp->dest.remote_qpn, 0x77U);
	kmad_free_send_buf(resp);
	kmad_free_recv(wc);
	f->kept_recv = NULL;
	kmad_unregister_agent(a);
}

/*
 * mad.h: a send posted without a timeout expects no response, so none
 * matches it (by TID), neither while the hardware holds it nor after:
 * each is counted unmatched, no recv_handler, one callback, OK.
 */
static void contract_no_timeout_request_matches_no_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       9, 0, 0);
	s64 unmatched = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED);

	kt_post(f, buf);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_expect_state(f, buf, KMAD_SS_SENDING, 1);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_only_send(f, buf, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED),
			unmatched + 2);
	kmad_free_send_buf(buf);
}

/* A row of contract_rmpp_registration_by_class. */
struct kc_rmpp_row {
	const char *name;
	u8 mgmt_class;
	u8 class_version;
	u8 rmpp_version;
	u8 oui_lo;
	int ret;
};

static const struct kc_rmpp_row kc_rmpp_rows[] = {
	{ "sa", KMAD_MGMT_CLASS_SUBN_ADM, 2, KMAD_RMPP_VERSION, 0, 0 },
	{ "dev-mgt", KMAD_MGMT_CLASS_DEVICE_MGMT, 1, KMAD_RMPP_VERSION, 0, 0 },
	{ "dev-adm", KMAD_MGMT_CLASS_DEVICE_ADM, 1, KMAD_RMPP_VERSION, 0, 0 },
	{ "bis", KMAD_MGMT_CLASS_BIS, 1, KMAD_RMPP_VERSION, 0, 0 },
	{ "vendor-range2", 0x30, 1, KMAD_RMPP_VERSION, 1, 0 },
	{ "send-only", 0, 0, KMAD_RMPP_VERSION, 0, 0 },
	{ "perf-mgt", KMAD_MGMT_CLASS_PERF_MGMT, 1, KMAD_RMPP_VERSION, 0,
	  -EINVAL },
	{ "bm", KMAD_MGMT_CLASS_BM, 1, KMAD_RMPP_VERSION, 0, -EINVAL },
	{ "cm", KMAD_MGMT_CLASS_CM, 2, KMAD_RMPP_VERSION, 0, -EINVAL },
	{ "snmp", KMAD_MGMT_CLASS_SNMP, 1, KMAD_RMPP_VERSION, 0, -EINVAL },
	{ "vendor-range1", 0x09, 1, KMAD_RMPP_VERSION, 0, -EINVAL },
	{ "boot-mgt", KMAD_MGMT_CLASS_BOOT_MGMT, 1, KMAD_RMPP_VERSION, 0,
	  -EINVAL },
	{ "cong-mgt", KMAD_MGMT_CLASS_CONG_MGMT, 2, KMAD_RMPP_VERSION, 0,
	  -EINVAL },
	{ "sa-rmpp-v2", KMAD_MGMT_CLASS_SUBN_ADM, 2, 2, 0, -EINVAL },
	{ "send-only-rmpp-v2", 0, 0, 2, 0, -EINVAL },
};

static void kc_rmpp_desc(const struct kc_rmpp_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kc_rmpp, kc_rmpp_rows, kc_rmpp_desc);

/*
 * mad.h, @rmpp_version: KMAD_RMPP_VERSION only for a class with the RMPP
 * header (kmad_mgmt_class_has_rmpp(): SA, DevMgt, DevAdm, BIS, vendor
 * range 2) or a send-only agent; any other value or class is -EINVAL.
 */
static void contract_rmpp_registration_by_class(struct kunit *test)
{
	const struct kc_rmpp_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {
		.mgmt_class = row->mgmt_class,
		.class_version = row->class_version,
		.rmpp_version = row->rmpp_version,
	};
	struct kmad_agent *a;

	if (row->mgmt_class)
		__set_bit(KMAD_METHOD_GET, req.method_mask);
	req.oui[2] = row->oui_lo;
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), row->ret);
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
}

static struct kunit_case contract_cases[] = {
	KUNIT_CASE(contract_register_on_removed_port_enodev),
	KUNIT_CASE(contract_decided_outcome_before_callback),
	KUNIT_CASE(contract_modify_zero_is_cancel_without_timeout),
	KUNIT_CASE(contract_create_response_addresses_requester),
	KUNIT_CASE(contract_response_to_request_path_bits),
	KUNIT_CASE(contract_stats_response_counted_before_handlers),
	KUNIT_CASE(contract_busy_tid_against_request_without_timeout),
	KUNIT_CASE(contract_vendor_oui_routes_request),
	KUNIT_CASE(contract_method_mask_routes_request),
	KUNIT_CASE(contract_send_only_gets_no_unsolicited),
	KUNIT_CASE(contract_null_pointers),
	KUNIT_CASE(contract_create_response_other_qp),
	KUNIT_CASE(contract_dr_path_refusals),
	KUNIT_CASE(contract_recv_wc_describes_arrival),
	KUNIT_CASE(contract_no_timeout_request_matches_no_response),
	KUNIT_CASE_PARAM(contract_rmpp_registration_by_class,
			 kc_rmpp_gen_params),
	{}
};

static struct kunit_suite contract_suite = {
	.name = "kmad_contract",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = contract_cases,
};

kunit_test_suites(&contract_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's ULP contract (mad.h)");
MODULE_LICENSE("GPL");
