// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_recv: dispatch of received MADs, the answer to requests nobody
 * takes, and drops of malformed ones.
 */

#include "kmad_test.h"

/* An agent on device 1 for Get of the test class, with these handlers. */
static struct kmad_agent *kt_register_get_with(struct kt_fix *f,
					       kmad_send_handler send,
					       kmad_recv_handler recv,
					       void *context)
{
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};

	__set_bit(KMAD_METHOD_GET, req.method_mask);
	return kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &req,
				   send, recv, context);
}

static struct kmad_agent *kt_register_get(struct kt_fix *f)
{
	return kt_register_get_with(f, kt_send_handler, kt_recv_handler, f);
}

/* A request goes to the agent registered for its class, version and
 * method, unsolicited (no matched request).
 */
static void recv_dispatch_request(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_mad mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_GET);
	KUNIT_EXPECT_EQ(test, f->ev[0].tid, 0x0000000500000042ULL);
	kmad_unregister_agent(a);
}

/*
 * What device 1 sent back to device 0 in answer, after settling (copied
 * to @seen); then it is sent.
 */
static void kt_expect_answer_mad(struct kt_fix *f, u8 method, u16 status,
				 struct kmad_mad *seen)
{
	KUNIT_ASSERT_EQ(f->test, kmad_sim_pending_sends(f->fab, KT_DEV1,
							KT_QPN), 1U);
	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, KT_DEV1, KT_QPN, 0,
						    seen, sizeof(*seen)),
			(int)sizeof(*seen));
	KUNIT_EXPECT_EQ(f->test, seen->mad_hdr.method, method);
	KUNIT_EXPECT_EQ(f->test, be16_to_cpu(seen->mad_hdr.status), status);
	KUNIT_EXPECT_EQ(f->test, be64_to_cpu(seen->mad_hdr.tid),
			0x0000000500000042ULL);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
}

static void kt_expect_answer(struct kt_fix *f, u8 method, u16 status)
{
	struct kmad_mad seen;

	kt_expect_answer_mad(f, method, status, &seen);
}

struct kt_queue_probe {
	struct kmad_agent *agent;	/* unregistered from the seam */
	struct completion done;		/* its unregister returned */
	bool started;
};

static struct kt_queue_probe *kt_queue_probe;

static int kt_queue_unreg_fn(void *arg)
{
	struct kt_queue_probe *p = arg;

	kmad_unregister_agent(p->agent);
	complete(&p->done);
	return 0;
}

/*
 * Between finding the agent for a request and queueing it: unregister
 * the agent in a thread and wait for its mark (it then waits for the
 * reference the receive path holds).
 */
static void kt_queue_hook(struct kmad_agent_priv *agent)
{
	struct kt_queue_probe *p = kt_queue_probe;
	struct task_struct *t;
	int i;

	if (!p || &agent->agent != p->agent || p->started)
		return;
	t = kthread_run(kt_queue_unreg_fn, p, "kt_queue_unreg");
	if (IS_ERR(t))
		return;
	p->started = true;
	for (i = 0; i < 5000 && READ_ONCE(agent->state) != KMAD_AGENT_DYING;
	     i++)
		usleep_range(1000, 2000);
}

/*
 * A request the receive path took for an agent just before the agent's
 * unregister marked it, and queued for it just after: mad.h says no MAD
 * is queued after the mark, kmad answers it as for no agent (the class
 * is known: "unsupported method").  Before, it was queued: the handler
 * got a request it could no longer answer (its posts fail -ESHUTDOWN)
 * and the requester got no answer.
 */
static void recv_request_raced_by_unregister(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_queue_probe p = { };
	s64 answered = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED);
	struct kmad_mad mad;

	p.agent = kt_register_get(f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p.agent));
	init_completion(&p.done);
	kt_queue_probe = &p;
	kmad_test_recv_queue_hook = kt_queue_hook;
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	kmad_test_recv_queue_hook = NULL;
	kt_queue_probe = NULL;
	KUNIT_ASSERT_TRUE(test, p.started);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&p.done, 30 * HZ),
			0UL);
	kt_settle(f);

	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP,
			 KMAD_MAD_STATUS_UNSUPPORTED_METHOD);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED),
			answered + 1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DISPATCHED),
			0);
}

/*
 * Of an RMPP transfer to a class no agent takes, kmad answers only the
 * first DATA segment, and with one MAD (its RMPP header cleared): the
 * answer ends the transfer at the requester, whose later segments and
 * ACK, STOP and ABORT packets are no requests of their own.  (kmad
 * answered each of them and copied their RMPP header: the answer to a
 * first segment started a transfer of its own at the requester, and an
 * ACK was reflected.)
 */
static void recv_unsupported_rmpp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad mad, seen;
	struct kmad_rmpp_mad *r = (struct kmad_rmpp_mad *)&mad;
	struct kmad_rmpp_mad *rs = (struct kmad_rmpp_mad *)&seen;

	kt_mad(&mad, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, KMAD_METHOD_GET);
	r->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE |
				       KMAD_RMPP_FLAG_FIRST;
	r->rmpp_hdr.seg_num = cpu_to_be32(1);
	r->rmpp_hdr.paylen_newwin = cpu_to_be32(400);
	kt_inject1(f, &mad);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			1U);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV1, KT_QPN, 0,
						 &seen, sizeof(seen)),
			(int)sizeof(seen));
	KUNIT_EXPECT_EQ(test, seen.mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(seen.mad_hdr.status),
			KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, rs->rmpp_hdr.rmpp_rtime_flags, 0);
	KUNIT_EXPECT_EQ(test, rs->rmpp_hdr.rmpp_type, 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rs->rmpp_hdr.paylen_newwin), 0U);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);

	/* A later segment, then an ACK, STOP and ABORT: no answer. */
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE;
	r->rmpp_hdr.seg_num = cpu_to_be32(2);
	kt_inject1(f, &mad);
	r->rmpp_hdr.seg_num = cpu_to_be32(1);
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ACK;
	kt_inject1(f, &mad);
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_STOP;
	kt_inject1(f, &mad);
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_ABORT;
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/* No agent for the class: GetResp with "unsupported class/version". */
static void recv_unsupported_class(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad mad;

	kt_mad(&mad, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP,
			 KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 1);
}

/*
 * kmad's answer that cannot be allocated (in the CQ drain): the request
 * is counted dropped, not answered, and nothing is sent; the next one is
 * answered.
 */
static void recv_answer_alloc_fails(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad mad;

	kt_mad(&mad, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, KMAD_METHOD_GET);
	kt_fail_allocs(KMAD_ALLOC_ANSWER, 1);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_ANSWER), 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED), 1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 0);

	kt_inject1(f, &mad);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP,
			 KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/*
 * A receive buffer that cannot be allocated for the refill (in the CQ
 * drain) is counted (recv_nobuf) and tried again at the next receive
 * completion, which fills the queue again.
 */
static void recv_refill_alloc_fails(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV1]->qpi[KMAD_QPT_GSI];
	s64 nobuf = kt_pstat(f, KT_DEV1, KMAD_PSTAT_RECV_NOBUF);
	struct kmad_mad mad;

	kt_mad(&mad, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, KMAD_METHOD_GET);
	KUNIT_ASSERT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
	kt_fail_allocs(KMAD_ALLOC_RECV_BUF, 2);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH - 1);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH - 2);
	KUNIT_EXPECT_EQ(test, kt_allocs_failed(KMAD_ALLOC_RECV_BUF), 2);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RECV_NOBUF),
			nobuf + 2);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 3);
}

/*
 * IBTA C15-0.1.5: an SA response carries SM_Key 0.  kmad's answer to an
 * SA request nobody takes and kmad_create_response()'s response both
 * clear the key the request had (they echoed it).
 */
static void recv_sa_response_sm_key_zero(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_recv_wc wc = { };
	struct kmad_sa_mad *sa;
	struct kmad_send_buf *buf;
	struct kmad_agent *a;
	struct kmad_mad mad, seen;

	kt_mad(&mad, KMAD_MGMT_CLASS_SUBN_ADM, 2, KMAD_METHOD_GET);
	mad.mad_hdr.attr_id = cpu_to_be16(KMAD_SA_ATTR_PATH_REC);
	kmad_sa_set_sm_key((struct kmad_sa_mad *)&mad, 0x1122334455667788ULL);
	kt_inject1(f, &mad);
	kt_expect_answer_mad(f, KMAD_METHOD_GET_RESP,
			     KMAD_MAD_STATUS_BAD_VERSION, &seen);
	KUNIT_EXPECT_EQ(test, kmad_sa_sm_key((struct kmad_sa_mad *)&seen),
			0ULL);

	a = kt_register_get(f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	wc.mad = &mad;
	wc.mad_len = sizeof(mad);
	wc.slid = kmad_port_lid(f->port[KT_DEV0]);
	wc.src_qpn = KT_QPN;
	wc.qpt = KMAD_QPT_GSI;
	buf = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	sa = (struct kmad_sa_mad *)buf->mad;
	KUNIT_EXPECT_EQ(test, sa->mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, kmad_sa_sm_key(sa), 0ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(sa->mad_hdr.tid),
			0x0000000500000042ULL);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(a);
}

/* The class is served but not the method: "unsupported method". */
static void recv_unsupported_method(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_mad mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_SET);
	kt_inject1(f, &mad);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP,
			 KMAD_MAD_STATUS_UNSUPPORTED_METHOD);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kmad_unregister_agent(a);
}

/*
 * On QP0 a Get or Set no agent takes is answered 0x000C (unsupported
 * method/attribute) also when an agent has the SMP class for other
 * methods (an SM's Trap receiver): every port's SMA serves Get and Set,
 * what it lacks is the attribute, as ib_mad answers.  Before, such an
 * agent made the answer 0x0008 (unsupported method).  A Report, a method
 * the SMP class does not define, gets 0x0008 from validation, as without
 * the agent.
 */
static void recv_qp0_get_with_class_known(struct kunit *test)
{
	static const u8 methods[] = { KMAD_METHOD_GET, KMAD_METHOD_REPORT };
	static const u16 status[] = { KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR,
				      KMAD_MAD_STATUS_UNSUPPORTED_METHOD };
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kt_fix *f = test->priv;
	struct kmad_mad mad, seen;
	struct kmad_agent *a;
	int i;

	__set_bit(KMAD_METHOD_TRAP, req.method_mask);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_SMI, &req,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		kt_mad(&mad, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, methods[i]);
		mad.mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_SM_INFO);
		KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV1, 0, &mad,
						      sizeof(mad),
						      kmad_port_lid(f->port[KT_DEV0]),
						      0), 0);
		kmad_sim_fire_cq_event(f->fab, KT_DEV1, 0, false);
		kt_settle(f);
		KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, 0),
				1U);
		KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV1, 0, 0,
							 &seen, sizeof(seen)),
				(int)sizeof(seen));
		KUNIT_EXPECT_EQ(test, seen.mad_hdr.method,
				KMAD_METHOD_GET_RESP);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(seen.mad_hdr.status),
				status[i]);
		KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV1, 0,
							     0, KMAD_WC_SUCCESS,
							     false), 0);
		kmad_sim_fire_cq_event(f->fab, KT_DEV1, 0, false);
		kt_settle(f);
	}
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	kmad_unregister_agent(a);
}

/* Responses, traps and trap represses are never answered. */
static void recv_never_answers_non_requests(struct kunit *test)
{
	static const u8 methods[] = {
		KMAD_METHOD_GET_RESP, KMAD_METHOD_TRAP, KMAD_METHOD_SEND,
	};
	struct kt_fix *f = test->priv;
	struct kmad_mad mad;
	int i;

	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		kt_mad(&mad, KMAD_MGMT_CLASS_DEVICE_MGMT, 1, methods[i]);
		kt_inject1(f, &mad);
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED), 0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_UNMATCHED), 1);
}

/* Malformed MADs are dropped and counted by reason, never dispatched. */
static void recv_malformed_dropped(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_port *p = f->port[KT_DEV1];
	struct kmad_mad mad;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	mad.mad_hdr.base_version = 7;
	kt_inject1(f, &mad);
	kt_mad(&mad, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	/* Well formed but an unsupported version: counted and answered. */
	kt_mad(&mad, KT_CLASS, 9, KMAD_METHOD_GET);
	kt_inject1(f, &mad);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP, KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&p->drops[KMAD_MAD_VERDICT_BASE_VERSION]), 1);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&p->drops[KMAD_MAD_VERDICT_CLASS_VERSION]), 1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_WRONG_QP), 1);
	kmad_unregister_agent(a);
}

/* A response whose TID names no outstanding request is dropped. */
static void recv_unmatched_response(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad mad;
	s64 before = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED);

	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET_RESP);
	mad.mad_hdr.tid = cpu_to_be64(((u64)f->agent->hi_tid << 32) | 99);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, &mad,
					      sizeof(mad), 2, 1), 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RESP_UNMATCHED),
			before + 1);
}

/* End to end: device 1's agent answers device 0's request with
 * kmad_create_response(); device 0 matches it.
 */
static void recv_create_response_round_trip(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *req = kt_request(f, f->agent, KMAD_METHOD_GET,
					       11, 1000, 0);
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_send_buf *resp;
	struct kmad_recv_wc wc = { };
	struct kmad_mad got;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_post(f, req);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, 0,
						 &got, sizeof(got)),
			(int)sizeof(got));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_GET);

	wc.mad = &got;
	wc.slid = kmad_port_lid(f->port[KT_DEV0]);
	wc.src_qpn = KT_QPN;
	resp = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_EQ(test, resp->mad->mad_hdr.method, KMAD_METHOD_GET_RESP);
	kt_post(f, resp);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 1, resp, KMAD_SEND_OK);
	kt_expect_recv(f, 2, req, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 3, req, KMAD_SEND_OK);
	kmad_free_send_buf(resp);
	kmad_free_send_buf(req);
	kmad_unregister_agent(a);
}

/* A directed-route Get(NodeInfo) one hop out, at hop pointer @hop_ptr. */
static void kr_dr_get(struct kmad_smp *smp, u8 hop_ptr)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = 1;
	smp->method = KMAD_METHOD_GET;
	smp->attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	smp->hop_cnt = 1;
	smp->hop_ptr = hop_ptr;
	smp->initial_path[1] = 1;
	smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
}

/* A directed-route SMP that fails the SMI's hop checks (an outgoing one
 * whose sender did not advance the hop pointer) is dropped and counted.
 */
static void recv_dr_smp_failing_smi_dropped(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_smp smp;

	kr_dr_get(&smp, 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV1, 0, &smp,
					      sizeof(smp), 1, 0), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV1, 0, false);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_SMI_DISCARDS), 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, 0), 0U);
}

/*
 * The answer to a directed-route SMP goes back the way the SMP came: to the
 * permissive LID when it came directed all the way (its DrDLID
 * permissive), but to its LRH SLID when its last leg was LID-routed (its
 * DrDLID this port's LID, hop pointer past the directed part), where the
 * directed part of the way back begins, as ib_mad, which answers every
 * SMP to the SLID it came from, does.  (kmad sent every answer to the
 * permissive LID: the switch next to the port then took it for the
 * start of the directed part.)
 */
static void recv_dr_reply_dest(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_recv_wc wc = { };
	struct kmad_send_buf *buf;
	struct kmad_agent *a;
	struct kmad_smp smp;

	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_SMI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kr_dr_get(&smp, 2);
	smp.return_path[1] = 3;
	smp.dr_dlid = cpu_to_be16(5);
	wc.mad = (const struct kmad_mad *)&smp;
	wc.mad_len = sizeof(smp);
	wc.slid = 7;
	wc.qpt = KMAD_QPT_SMI;
	buf = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	KUNIT_EXPECT_EQ(test, buf->dest.dlid, 7);
	kmad_free_send_buf(buf);

	/* Directed all the way: DrDLID permissive. */
	smp.hop_ptr = 1;
	smp.dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	wc.slid = 9;	/* what the LRH said: not where the answer goes */
	buf = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
	KUNIT_EXPECT_EQ(test, buf->dest.dlid, KMAD_PERMISSIVE_LID);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(a);
}

/*
 * A request; the method of kmad's answer when no agent takes it (0: no
 * answer); the method kmad_create_response() gives its response (0: it
 * refuses, -EINVAL).  IBTA 13.4.5 and 15.2.2 pair them: Get and Set with
 * GetResp, Report with ReportResp, Trap with TrapRepress, the SA's
 * GetTable and GetTraceTable with GetTableResp, GetMulti with
 * GetMultiResp, Delete with DeleteResp; Send has no response, except in
 * baseboard management, where a Send with bit 0 of the AttributeModifier
 * set answers one without.
 */
struct kr_resp_row {
	const char *name;
	u8 mgmt_class;
	u8 class_version;
	u8 method;
	u16 attr_id;
	u8 answer;
	u8 resp;
};

#define KR_ROW(n, cls, ver, m, attr, ans, r) {				\
	.name = n, .mgmt_class = KMAD_MGMT_CLASS_##cls,			\
	.class_version = ver, .method = m, .attr_id = attr,		\
	.answer = ans, .resp = r }
#define KR_M(m)		KMAD_METHOD_##m

static const struct kr_resp_row kr_resp_rows[] = {
	KR_ROW("sa_get", SUBN_ADM, 2, KR_M(GET), KMAD_SA_ATTR_NODE_REC,
	       KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("sa_set", SUBN_ADM, 2, KR_M(SET), KMAD_SA_ATTR_SERVICE_REC,
	       KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("sa_report", SUBN_ADM, 2, KR_M(REPORT), KMAD_ATTR_NOTICE,
	       KR_M(REPORT_RESP), KR_M(REPORT_RESP)),
	KR_ROW("sa_get_table", SUBN_ADM, 2, KR_M(GET_TABLE),
	       KMAD_SA_ATTR_NODE_REC, KR_M(GET_TABLE_RESP),
	       KR_M(GET_TABLE_RESP)),
	KR_ROW("sa_get_trace_table", SUBN_ADM, 2, KR_M(GET_TRACE_TABLE),
	       KMAD_SA_ATTR_TRACE_REC, KR_M(GET_TABLE_RESP),
	       KR_M(GET_TABLE_RESP)),
	KR_ROW("sa_get_multi", SUBN_ADM, 2, KR_M(GET_MULTI),
	       KMAD_SA_ATTR_MULTI_PATH_REC, KR_M(GET_MULTI_RESP),
	       KR_M(GET_MULTI_RESP)),
	KR_ROW("sa_delete", SUBN_ADM, 2, KR_M(DELETE),
	       KMAD_SA_ATTR_SERVICE_REC, KR_M(DELETE_RESP),
	       KR_M(DELETE_RESP)),
	KR_ROW("sa_get_resp", SUBN_ADM, 2, KR_M(GET_RESP),
	       KMAD_SA_ATTR_NODE_REC, 0, 0),
	KR_ROW("sa_send", SUBN_ADM, 2, KR_M(SEND), KMAD_SA_ATTR_NODE_REC, 0, 0),
	KR_ROW("perf_get", PERF_MGMT, 1, KR_M(GET),
	       KMAD_PMA_ATTR_PORT_COUNTERS, KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("perf_method_0x12", PERF_MGMT, 1, 0x12,
	       KMAD_PMA_ATTR_PORT_COUNTERS, 0, 0),
	KR_ROW("dm_get", DEVICE_MGMT, 1, KR_M(GET), KMAD_ATTR_CLASS_PORT_INFO,
	       KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("dm_trap", DEVICE_MGMT, 1, KR_M(TRAP), KMAD_ATTR_NOTICE,
	       0, KR_M(TRAP_REPRESS)),
	KR_ROW("dm_method_0x12", DEVICE_MGMT, 1, 0x12,
	       KMAD_ATTR_CLASS_PORT_INFO, 0, 0x92),
	KR_ROW("cm_get", CM, 2, KR_M(GET), KMAD_ATTR_CLASS_PORT_INFO,
	       KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("cm_send", CM, 2, KR_M(SEND), 0x0010, 0, 0),
	KR_ROW("bm_send", BM, 1, KR_M(SEND), 0x0010, 0, KR_M(SEND)),
	KR_ROW("vendor2_method_0x10", VENDOR_RANGE2_START, 1, 0x10, 0x0010,
	       0, 0x90),
	KR_ROW("smp_get", SUBN_LID_ROUTED, 1, KR_M(GET),
	       KMAD_SMP_ATTR_NODE_INFO, KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("smp_set", SUBN_LID_ROUTED, 1, KR_M(SET),
	       KMAD_SMP_ATTR_PORT_INFO, KR_M(GET_RESP), KR_M(GET_RESP)),
	KR_ROW("smp_trap", SUBN_LID_ROUTED, 1, KR_M(TRAP), KMAD_ATTR_NOTICE,
	       0, KR_M(TRAP_REPRESS)),
	KR_ROW("dr_smp_get", SUBN_DIRECTED_ROUTE, 1, KR_M(GET),
	       KMAD_SMP_ATTR_NODE_INFO, KR_M(GET_RESP), KR_M(GET_RESP)),
};

static void kr_resp_desc(const struct kr_resp_row *row, char *desc)
{
	strscpy(desc, row->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kr_resp, kr_resp_rows, kr_resp_desc);

/* The row's request, as it arrives (a directed-route one at hop 0). */
static void kr_request(const struct kr_resp_row *row, struct kmad_mad *mad)
{
	struct kmad_smp *smp = (struct kmad_smp *)mad;

	kt_mad(mad, row->mgmt_class, row->class_version, row->method);
	mad->mad_hdr.attr_id = cpu_to_be16(row->attr_id);
	if (row->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
		smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	}
}

/* Is @resp a response to @req that kmad_mad_validate() lets through? */
static void kr_expect_valid_response(struct kunit *test,
				     const struct kmad_mad *req,
				     const struct kmad_mad *resp, u8 method)
{
	enum kmad_mad_verdict why;

	KUNIT_EXPECT_EQ(test, resp->mad_hdr.method, method);
	KUNIT_EXPECT_EQ_MSG(test, kmad_mad_validate(resp, sizeof(*resp), &why),
			    0, "dropped as %s", kmad_mad_verdict_name(why));
	KUNIT_EXPECT_TRUE(test, kmad_mad_is_response(&resp->mad_hdr));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(resp->mad_hdr.tid),
			be64_to_cpu(req->mad_hdr.tid));
	KUNIT_EXPECT_EQ(test, be16_to_cpu(resp->mad_hdr.attr_id),
			be16_to_cpu(req->mad_hdr.attr_id));
}

/*
 * kmad answers a request no agent takes with the IBTA response method,
 * which its own validator lets through, or not at all.
 */
static void recv_answer_method(struct kunit *test)
{
	const struct kr_resp_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	u32 qpn = kmad_is_smp_class(row->mgmt_class) ? 0 : KT_QPN;
	struct kmad_mad req, seen;

	kr_request(row, &req);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV1, qpn, &req,
					      sizeof(req),
					      kmad_port_lid(f->port[KT_DEV0]),
					      qpn), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV1, qpn, false);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	if (!row->answer) {
		KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1,
							     qpn), 0U);
		return;
	}
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, qpn), 1U);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV1, qpn, 0, &seen,
						 sizeof(seen)),
			(int)sizeof(seen));
	kr_expect_valid_response(test, &req, &seen, row->answer);
	KUNIT_ASSERT_EQ(test, kmad_sim_complete_send(f->fab, KT_DEV1, qpn, 0,
						     KMAD_WC_SUCCESS, false), 0);
	kmad_sim_fire_cq_event(f->fab, KT_DEV1, qpn, false);
	kt_settle(f);
}

/*
 * kmad_create_response() gives a request the IBTA response method, in a
 * MAD kmad_mad_validate() lets through, and refuses what has no response.
 */
static void recv_create_response_method(struct kunit *test)
{
	const struct kr_resp_row *row = test->param_value;
	struct kt_fix *f = test->priv;
	struct kmad_recv_wc wc = { .slid = 5, .src_qpn = KT_QPN };
	struct kmad_agent *agent = f->agent, *smi = NULL;
	struct kmad_send_buf *buf;
	struct kmad_mad req;

	kr_request(row, &req);
	wc.mad = &req;
	/* An SMP is answered by a QP0 agent (a QP1 one gets -EINVAL). */
	if (kmad_is_smp_class(req.mad_hdr.mgmt_class)) {
		smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
					  kt_send_handler, kt_recv_handler, f);
		KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
		agent = smi;
		wc.src_qpn = 0;
	}
	buf = kmad_create_response(agent, &wc, GFP_KERNEL);
	if (!row->resp) {
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(buf), -EINVAL);
		if (!IS_ERR(buf)) {
			kunit_info(test, "made method %#x\n",
				   buf->mad->mad_hdr.method);
			kmad_free_send_buf(buf);
		}
	} else if (!IS_ERR(buf)) {
		kr_expect_valid_response(test, &req, buf->mad, row->resp);
		kmad_free_send_buf(buf);
	} else {
		KUNIT_FAIL(test, "no response: %ld", PTR_ERR(buf));
	}
	if (smi)
		kmad_unregister_agent(smi);
}

/*
 * The response kmad_create_response() builds to a request that was an
 * RMPP transfer (an SA GetMulti, here its only segment, as reassembled)
 * is one MAD: its RMPP header is cleared, not copied (a lone First DATA
 * segment with the request's PayloadLength would start a reassembly at
 * the requester that never ends).  Junk in the header of a plain request
 * goes too.
 */
static void recv_create_response_clears_rmpp(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_recv_wc wc = { .slid = 5, .src_qpn = KT_QPN };
	const struct kmad_rmpp_hdr zero = {};
	struct kmad_rmpp_mad req = {}, *resp;
	struct kmad_send_buf *buf;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&req, 0, sizeof(req));
		req.mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
		req.mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_ADM;
		req.mad_hdr.class_version = 2;
		req.mad_hdr.method = i ? KMAD_METHOD_GET : KMAD_METHOD_GET_MULTI;
		req.mad_hdr.tid = cpu_to_be64(0x1234);
		req.mad_hdr.attr_id = cpu_to_be16(0x0011);
		req.rmpp_hdr.rmpp_version = 1;
		req.rmpp_hdr.rmpp_type = 1;	/* DATA */
		req.rmpp_hdr.rmpp_rtime_flags = i ? 0x08 :
			KMAD_RMPP_FLAG_ACTIVE | KMAD_RMPP_FLAG_FIRST |
			KMAD_RMPP_FLAG_LAST;
		req.rmpp_hdr.seg_num = cpu_to_be32(1);
		req.rmpp_hdr.paylen_newwin = cpu_to_be32(40);
		wc.mad = (const struct kmad_mad *)&req;
		wc.mad_len = sizeof(req);
		buf = kmad_create_response(f->agent, &wc, GFP_KERNEL);
		KUNIT_ASSERT_FALSE(test, IS_ERR(buf));
		resp = (struct kmad_rmpp_mad *)buf->mad;
		KUNIT_EXPECT_EQ(test, resp->mad_hdr.method,
				i ? KMAD_METHOD_GET_RESP :
				    KMAD_METHOD_GET_MULTI_RESP);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(resp->mad_hdr.tid), 0x1234ULL);
		KUNIT_EXPECT_EQ(test, memcmp(&resp->rmpp_hdr, &zero,
					     sizeof(zero)), 0);
		kmad_free_send_buf(buf);
	}
}

/*
 * Baseboard management end to end: device 0 sends a BM Send request,
 * device 1's agent answers it with kmad_create_response() (a Send with
 * bit 0 of the AttributeModifier set, the request's TID kept), and device
 * 0 matches the answer to its request.
 */
static void recv_bm_response_round_trip(struct kunit *test)
{
	struct kmad_reg_req reg = {
		.mgmt_class = KMAD_MGMT_CLASS_BM,
		.class_version = 1,
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *req = kt_request(f, f->agent, KMAD_METHOD_SEND,
					       12, 1000, 0);
	struct kmad_recv_wc wc = { .src_qpn = KT_QPN };
	struct kmad_send_buf *resp;
	struct kmad_agent *a;
	struct kmad_mad got;

	__set_bit(KMAD_METHOD_SEND, reg.method_mask);
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &reg,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	req->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_BM;
	req->mad->mad_hdr.class_version = 1;
	kt_post(f, req);
	KUNIT_ASSERT_EQ(test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, 0,
						 &got, sizeof(got)),
			(int)sizeof(got));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV1);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_SEND);

	wc.mad = &got;
	wc.slid = kmad_port_lid(f->port[KT_DEV0]);
	resp = kmad_create_response(a, &wc, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(resp));
	KUNIT_EXPECT_EQ(test, resp->mad->mad_hdr.method, KMAD_METHOD_SEND);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(resp->mad->mad_hdr.attr_mod), 1U);
	kt_post(f, resp);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(resp->mad->mad_hdr.tid),
			be64_to_cpu(got.mad_hdr.tid));
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, true);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 1, resp, KMAD_SEND_OK);
	kt_expect_recv(f, 2, req, KMAD_METHOD_SEND);
	kt_expect_send(f, 3, req, KMAD_SEND_OK);
	kmad_free_send_buf(resp);
	kmad_free_send_buf(req);
	kmad_unregister_agent(a);
}

/* A receive that completes with a local error (here a packet longer than
 * the buffer) is no flush: it is dropped and counted, its buffer is
 * replaced, the QP does not go into recovery, and a request and its
 * response still flow afterwards.
 */
static void recv_local_error_dropped(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_qp_info *qpi = &f->port[KT_DEV0]->qpi[KMAD_QPT_GSI];
	s64 errors = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_ERRORS);
	s64 flushed = kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_FLUSHED);
	s64 recoveries = kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES);
	u8 *pkt = kunit_kzalloc(test, KMAD_MAD_SIZE + 1, GFP_KERNEL);
	struct kmad_send_buf *req;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	kt_mad((struct kmad_mad *)pkt, KT_CLASS, KT_VERSION,
	       KMAD_METHOD_GET_RESP);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject(f->fab, KT_DEV0, KT_QPN, pkt,
					      KMAD_MAD_SIZE + 1,
					      kmad_port_lid(f->port[KT_DEV1]),
					      KT_QPN), -EMSGSIZE);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_ERRORS),
			errors + 1);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_RECV_FLUSHED),
			flushed);
	KUNIT_EXPECT_EQ(test, kt_qp_run(qpi), KMAD_QP_RUNNING);
	KUNIT_EXPECT_EQ(test, kt_qp_rq_posted(qpi), KT_RQ_DEPTH);

	f->free_on_send = true;
	req = kt_request(f, f->agent, KMAD_METHOD_GET, 7, 100, 0);
	kt_post(f, req);
	KUNIT_ASSERT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN),
			1U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, req, KMAD_MAD_STATUS_SUCCESS);
	kt_event(f, KT_DEV0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_recv(f, 0, req, KMAD_METHOD_GET_RESP);
	kt_expect_send(f, 1, req, KMAD_SEND_OK);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV0, KMAD_PSTAT_QP_RECOVERIES),
			recoveries);
}

/*
 * kmad_dest_from_wc(): a GMP that arrived with a GRH is answered by GID
 * from the GID it was sent to.  On InfiniBand one sent to the SA's
 * well-known GID (IBTA 15.4.1: the subnet prefix and interface ID
 * 0x0200000000000002), which is in no port's table, is answered from GID
 * index 0, as ib_mad answers it; any other GID not in the port's table
 * has no reply address.
 */
static void recv_reply_dest_sa_well_known_gid(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV0];
	struct kmad_recv_wc wc = {};
	struct kmad_dest dest;
	union kmad_gid mine, peer;
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(port, 0, &mine), 0);
	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(f->port[KT_DEV1], 0, &peer),
			0);
	kt_mad(&mad, KMAD_MGMT_CLASS_SUBN_ADM, 2, KMAD_METHOD_GET);
	wc.mad = &mad;
	wc.mad_len = sizeof(mad);
	wc.slid = kmad_port_lid(f->port[KT_DEV1]);
	wc.src_qpn = 1;
	wc.qpt = KMAD_QPT_GSI;
	wc.grh_present = true;
	wc.grh.sgid = peer;
	wc.grh.dgid.global.subnet_prefix = mine.global.subnet_prefix;
	wc.grh.dgid.global.interface_id =
		cpu_to_be64(KMAD_SA_WELL_KNOWN_GUID);
	wc.grh.flow_label = 0x54321;
	wc.grh.traffic_class = 0x12;

	KUNIT_ASSERT_EQ(test, kmad_dest_from_wc(port, &wc, &dest), 0);
	KUNIT_EXPECT_TRUE(test, dest.grh_present);
	KUNIT_EXPECT_EQ(test, dest.grh.sgid_index, 0);
	KUNIT_EXPECT_EQ(test, memcmp(&dest.grh.dgid, &peer, sizeof(peer)), 0);
	KUNIT_EXPECT_EQ(test, dest.grh.flow_label, 0x54321U);
	KUNIT_EXPECT_EQ(test, dest.grh.traffic_class, 0x12);
	KUNIT_EXPECT_EQ(test, dest.grh.hop_limit, KMAD_IB_RESP_HOP_LIMIT);
	KUNIT_EXPECT_EQ(test, dest.dlid, wc.slid);

	/* The port's own GID 0: index 0 too, found in the table (@dest
	 * filled with ones first: the call must write it).
	 */
	wc.grh.dgid = mine;
	memset(&dest, 0xff, sizeof(dest));
	KUNIT_ASSERT_EQ(test, kmad_dest_from_wc(port, &wc, &dest), 0);
	KUNIT_EXPECT_EQ(test, dest.grh.sgid_index, 0);

	/* Another interface ID in no table: no reply address. */
	wc.grh.dgid.global.interface_id =
		cpu_to_be64(KMAD_SA_WELL_KNOWN_GUID + 1);
	KUNIT_EXPECT_EQ(test, kmad_dest_from_wc(port, &wc, &dest),
			-EADDRNOTAVAIL);
}

static struct kunit_case recv_cases[] = {
	KUNIT_CASE(recv_dispatch_request),
	KUNIT_CASE(recv_request_raced_by_unregister),
	KUNIT_CASE(recv_reply_dest_sa_well_known_gid),
	KUNIT_CASE(recv_unsupported_class),
	KUNIT_CASE(recv_sa_response_sm_key_zero),
	KUNIT_CASE(recv_unsupported_rmpp),
	KUNIT_CASE(recv_unsupported_method),
	KUNIT_CASE(recv_qp0_get_with_class_known),
	KUNIT_CASE(recv_never_answers_non_requests),
	KUNIT_CASE(recv_malformed_dropped),
	KUNIT_CASE(recv_unmatched_response),
	KUNIT_CASE(recv_create_response_round_trip),
	KUNIT_CASE(recv_dr_smp_failing_smi_dropped),
	KUNIT_CASE(recv_dr_reply_dest),
	KUNIT_CASE(recv_bm_response_round_trip),
	KUNIT_CASE_PARAM(recv_answer_method, kr_resp_gen_params),
	KUNIT_CASE_PARAM(recv_create_response_method, kr_resp_gen_params),
	KUNIT_CASE(recv_create_response_clears_rmpp),
	KUNIT_CASE(recv_local_error_dropped),
	KUNIT_CASE(recv_answer_alloc_fails),
	KUNIT_CASE(recv_refill_alloc_fails),
	{}
};

static struct kunit_suite recv_suite = {
	.name = "kmad_recv",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = recv_cases,
};

/*
 * A provider with only the ops provider.h requires (kmad_sim's
 * minimal_ops, no address handles): no GID table, the default P_Key
 * alone, no capability changes.  kmad says so to its callers and refuses
 * what needs more; the rest works.
 */
static void recv_minimal_provider(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_sim_rx rx = {
		.slid = kmad_port_lid(f->port[KT_DEV0]),
		.src_qpn = KT_QPN,
		.grh_present = true,
		.hop_limit = 1,
	};
	struct kmad_send_buf *buf;
	union kmad_gid gid;
	struct kmad_mad mad;
	u16 pkey = 0;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV0], 0, &pkey),
			0);
	KUNIT_EXPECT_EQ(test, pkey, 0xffff);
	KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(f->port[KT_DEV0], 1, &pkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_query_gid(f->port[KT_DEV0], 0, &gid),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_port_modify_cap(f->port[KT_DEV0], 0x2, 0),
			-EOPNOTSUPP);

	/* A GRH needs a source GID; a P_Key index past the default, an
	 * entry; a plain send goes.
	 */
	buf = kt_request(f, f->agent, KMAD_METHOD_SET, 1, 0, 0);
	buf->dest.grh_present = true;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.grh_present = false;
	buf->dest.pkey_index = 1;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->dest.pkey_index = 0;
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);

	/* A request that came with a GRH is delivered, but cannot be
	 * answered: no GID of the port to answer from.
	 */
	f->keep_recv = true;
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	KUNIT_ASSERT_EQ(test, kmad_sim_inject_rx(f->fab, KT_DEV1, KT_QPN, &mad,
						 sizeof(mad), &rx), 0);
	kt_event(f, KT_DEV1);
	KUNIT_ASSERT_NOT_NULL(test, f->kept_recv);
	KUNIT_EXPECT_TRUE(test, f->kept_recv->grh_present);
	buf = kmad_create_response(a, f->kept_recv, GFP_KERNEL);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(buf), -EADDRNOTAVAIL);
	if (!IS_ERR(buf))
		kmad_free_send_buf(buf);
	kmad_free_recv(f->kept_recv);
	f->kept_recv = NULL;
	kmad_unregister_agent(a);
}

static int kt_fix_init_minimal(struct kunit *test)
{
	struct kmad_sim_config cfg;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.ah = KMAD_SIM_AH_NONE;
	cfg.minimal_ops = true;
	return kt_fix_setup_cfg(test, &cfg);
}

/* The receive path's round trips again, over the minimal provider. */
static struct kunit_case recv_minimal_cases[] = {
	KUNIT_CASE(recv_minimal_provider),
	KUNIT_CASE(recv_dispatch_request),
	KUNIT_CASE(recv_unsupported_class),
	KUNIT_CASE(recv_unsupported_method),
	KUNIT_CASE(recv_create_response_round_trip),
	KUNIT_CASE(recv_bm_response_round_trip),
	{}
};

static struct kunit_suite recv_minimal_suite = {
	.name = "kmad_recv_minimal",
	.init = kt_fix_init_minimal,
	.exit = kt_fix_exit,
	.test_cases = recv_minimal_cases,
};

/* What kr_flood_recv saw. */
struct kr_flood {
	struct completion go;		/* the first call may return */
	atomic_t calls;
};

/* A recv_handler whose first call waits for the test. */
static void kr_flood_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct kr_flood *fl = agent->context;

	if (atomic_inc_return(&fl->calls) == 1)
		wait_for_completion_timeout(&fl->go, 30 * HZ);
	kmad_free_recv(wc);
}

static void kr_flood_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
}

#define KR_FLOOD	(KMAD_AGENT_RECVS_MAX + 76)

/*
 * Inject @mad into device 1's QP1 on the asynchronous fabric, waiting
 * (up to 10 s) for a receive buffer: the drain reposts each it reaps.
 */
static int kr_inject_async(struct kt_fix *f, const struct kmad_mad *mad)
{
	unsigned long end = jiffies + 10 * HZ;
	int ret;

	for (;;) {
		ret = kmad_sim_inject(f->fab, KT_DEV1, KT_QPN, mad,
				      sizeof(*mad),
				      kmad_port_lid(f->port[KT_DEV0]), KT_QPN);
		if (ret != -ENOBUFS || time_after(jiffies, end))
			return ret;
		usleep_range(200, 500);
	}
}

/*
 * A peer floods an agent whose recv_handler is slow (here: its first call
 * blocks): receive buffers are reposted at once, so what waits for the
 * handler is bounded, KMAD_AGENT_RECVS_MAX, and the rest is dropped and
 * counted (requests_dropped_backlog).  Once the handler returns, every
 * MAD taken reaches it, in runs of the agent's work of at most
 * KMAD_AGENT_RECV_BUDGET calls each.  (Every MAD waited: 1100 of them,
 * none dropped.)
 */
static void recv_flood_backlog_bounded(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kr_flood fl = { .calls = ATOMIC_INIT(0) };
	struct kmad_agent_priv *priv;
	unsigned long runs;
	struct kmad_agent *a;
	struct kmad_mad mad;
	s64 taken, dropped;
	unsigned int i;
	int ret;

	init_completion(&fl.go);
	a = kt_register_get_with(f, kr_flood_send, kr_flood_recv, &fl);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	priv = kmad_agent_priv(a);
	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	for (i = 0; i < KR_FLOOD; i++) {
		mad.mad_hdr.tid = cpu_to_be64(i);
		ret = kr_inject_async(f, &mad);
		if (ret)
			break;
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test,
			  kt_wait_until(kt_pstat(f, KT_DEV1,
						 KMAD_PSTAT_REQ_DISPATCHED) +
					kt_pstat(f, KT_DEV1,
						 KMAD_PSTAT_REQ_BACKLOG_DROPPED) ==
					i, 10000));
	taken = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DISPATCHED);
	dropped = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_BACKLOG_DROPPED);
	/* The one in the handler and a full queue; the handler may not
	 * have taken the first before the queue filled.
	 */
	KUNIT_EXPECT_GE(test, taken, (s64)KMAD_AGENT_RECVS_MAX);
	KUNIT_EXPECT_LE(test, taken, (s64)KMAD_AGENT_RECVS_MAX + 1);
	KUNIT_EXPECT_EQ(test, taken + dropped, (s64)KR_FLOOD);
	/* testing.rst's accounting (2): every MAD received ends once. */
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_RECEIVED),
			kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_MATCHED) +
			kt_pstat(f, KT_DEV1, KMAD_PSTAT_RESP_UNMATCHED) +
			taken +
			kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED) +
			kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED) +
			dropped);
	KUNIT_EXPECT_EQ(test, atomic_read(&fl.calls), 1);

	runs = READ_ONCE(priv->work_runs);
	complete(&fl.go);
	KUNIT_EXPECT_TRUE(test, kt_wait_until(atomic_read(&fl.calls) == taken,
					      10000));
	runs = READ_ONCE(priv->work_runs) - runs;
	KUNIT_EXPECT_GE(test, runs,
			(unsigned long)(taken - 1) / KMAD_AGENT_RECV_BUDGET);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
}

static int kr_async_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

static struct kunit_case recv_flood_cases[] = {
	KUNIT_CASE(recv_flood_backlog_bounded),
	{}
};

static struct kunit_suite recv_flood_suite = {
	.name = "kmad_recv_flood",
	.init = kr_async_init,
	.exit = kt_fix_exit,
	.test_cases = recv_flood_cases,
};

/*
 * A provider whose QP1 is another MAD layer's (kmad_ib): the other layer
 * may pass a request on as soon as bridge_add() asked it to, before
 * bridge_add() returns.  The probe plays that layer: in bridge_add for
 * the test class on device 1 it passes a Get of that class on, then
 * returns @ret.
 */
struct kt_bridge_probe {
	struct kt_fix *f;
	int ret;		/* bridge_add's return */
	int recv_ret;		/* kmad_device_bridge_recv()'s */
	bool ran;
	struct kmad_agent_priv *agent;	/* registering, its bridge_add failing */
	bool work_done;		/* its work, kicked, ended */
};

static struct kt_bridge_probe *kt_bridge_probe;
static struct kt_bridge_probe *kt_bridge_work_probe;

/* The kicked work of the agent whose bridge_add fails: slow, 200 ms. */
static void kt_bridge_work_hook(struct kmad_agent_priv *agent)
{
	struct kt_bridge_probe *p = READ_ONCE(kt_bridge_work_probe);

	if (!p || agent != p->agent)
		return;
	msleep(200);
	WRITE_ONCE(p->work_done, true);
}

static int kt_bridge_recv(struct kt_fix *f)
{
	struct kmad_wc wc = {
		.src_qpn = KT_QPN,
		.slid = kmad_port_lid(f->port[KT_DEV0]),
	};
	struct kmad_mad mad;

	kt_mad(&mad, KT_CLASS, KT_VERSION, KMAD_METHOD_GET);
	return kmad_device_bridge_recv(kmad_sim_device(f->fab, KT_DEV1), 1,
				       &wc, NULL, &mad, sizeof(mad));
}

static int kt_bridge_add(struct kmad_sim_fabric *fab, unsigned int dev,
			 u8 port_num, enum kmad_qp_type qpt,
			 const struct kmad_reg_req *req, void *arg)
{
	struct kt_bridge_probe *p = kt_bridge_probe;

	if (!p || dev != KT_DEV1 || qpt != KMAD_QPT_GSI ||
	    req->mgmt_class != KT_CLASS)
		return 0;
	p->ran = true;
	p->recv_ret = kt_bridge_recv(p->f);
	/* A clock change kicks every agent of the port, this one too. */
	if (p->ret) {
		p->agent = container_of(req, struct kmad_agent_priv, reg);
		WRITE_ONCE(kt_bridge_work_probe, p);
		WRITE_ONCE(kmad_test_agent_work_hook, kt_bridge_work_hook);
		kmad_device_clock_changed(kmad_sim_device(fab, dev));
	}
	return p->ret;
}

static int kt_fix_init_bridged(struct kunit *test)
{
	struct kmad_sim_config cfg;

	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.bridge_add = kt_bridge_add;
	return kt_fix_setup_cfg(test, &cfg);
}

/*
 * A request the other layer passes on while the agent registers is
 * dropped (its sender tries again), not answered "unsupported" as for
 * no agent: an agent in the middle of its registration has the class
 * and method.  Once registered, the agent takes the next one.  (Before,
 * the agent joined the port's list only after bridge_add(): the request
 * was answered 0x0004, "unsupported class", for a class about to be
 * served, and ib_mad, which had passed it on, would never answer it so.)
 */
static void recv_bridged_request_while_registering(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_bridge_probe p = { .f = f };
	s64 answered = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED);
	s64 dropped = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED);
	struct kmad_agent *a;

	kt_bridge_probe = &p;
	a = kt_register_get(f);
	kt_bridge_probe = NULL;
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_ASSERT_TRUE(test, p.ran);
	KUNIT_EXPECT_EQ(test, p.recv_ret, 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_ANSWERED),
			answered);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED),
			dropped + 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);

	KUNIT_EXPECT_EQ(test, kt_bridge_recv(f), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_recv(f, 0, NULL, KMAD_METHOD_GET);
	kmad_unregister_agent(a);
}

/*
 * A bridge_add() that fails after the other layer passed a request on
 * and the device's clock moved (its kick queues the registering agent's
 * work, made slow here): the registration fails with its error once that
 * work is done (it freed the agent under the running work), no handler
 * runs for the request (dropped), and the class is free again: the next
 * request is answered "unsupported class" and a second registration
 * works.
 */
static void recv_bridge_add_fails(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kt_bridge_probe p = { .f = f, .ret = -EBUSY };
	s64 dropped = kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED);
	struct kmad_agent *a;

	kt_bridge_probe = &p;
	a = kt_register_get(f);
	kt_bridge_probe = NULL;
	KUNIT_EXPECT_TRUE(test, READ_ONCE(p.work_done));
	WRITE_ONCE(kmad_test_agent_work_hook, NULL);
	/* A work still running (the failure) must not find p gone. */
	msleep(300);
	WRITE_ONCE(kt_bridge_work_probe, NULL);
	KUNIT_ASSERT_TRUE(test, p.ran);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(a), -EBUSY);
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_pstat(f, KT_DEV1, KMAD_PSTAT_REQ_DROPPED),
			dropped + 1);

	KUNIT_EXPECT_EQ(test, kt_bridge_recv(f), 0);
	kt_expect_answer(f, KMAD_METHOD_GET_RESP, KMAD_MAD_STATUS_BAD_VERSION);
	a = kt_register_get(f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kmad_unregister_agent(a);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
}

/*
 * &kmad_dest.from_qp1 sends through the other MAD layer's QP1, whose
 * answers that layer matches against its own requests' TIDs: a request
 * that gets an answer (a Get, with or without a timeout) is refused with
 * it (-EINVAL, nothing sent), as the answer would never come back to kmad
 * (or could complete one of that layer's requests).  A Send without a
 * timeout gets none and goes.  Before the fix both Gets were posted.
 */
static void recv_bridged_request_from_qp1_refused(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a = kt_register_get(f);
	struct kmad_send_buf *buf;

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	buf = kt_request(f, a, KMAD_METHOD_GET, 5, 1000, 0);
	buf->dest.dlid = kmad_port_lid(f->port[KT_DEV0]);
	buf->dest.from_qp1 = true;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	buf->timeout_ms = 0;
	KUNIT_EXPECT_EQ(test, kmad_post_send(buf), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV1, KT_QPN),
			0U);
	buf->mad->mad_hdr.method = KMAD_METHOD_SEND;
	kt_post(f, buf);
	kt_complete(f, KT_DEV1, KMAD_WC_SUCCESS, false);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, buf, KMAD_SEND_OK);
	kmad_free_send_buf(buf);
	kmad_unregister_agent(a);
}

static struct kunit_case recv_bridged_cases[] = {
	KUNIT_CASE(recv_bridged_request_while_registering),
	KUNIT_CASE(recv_bridge_add_fails),
	KUNIT_CASE(recv_bridged_request_from_qp1_refused),
	{}
};

static struct kunit_suite recv_bridged_suite = {
	.name = "kmad_recv_bridged",
	.init = kt_fix_init_bridged,
	.exit = kt_fix_exit,
	.test_cases = recv_bridged_cases,
};

kunit_test_suites(&recv_suite, &recv_minimal_suite, &recv_flood_suite,
		  &recv_bridged_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's receive path");
MODULE_LICENSE("GPL");
