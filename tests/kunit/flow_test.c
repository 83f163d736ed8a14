// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_flow: solicited flow control (drivers/kmad/flow.c), stepped one
 * event at a time: the limit, the backlog and how it drains, cancel,
 * unregister and port removal of backlogged sends, what is never
 * backlogged, limit changes, the defaults and the debugfs file.
 *
 * kmad_flow_stress: posters, cancellers and limit changes at once on the
 * asynchronous fabric; every post gets exactly one callback.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/prandom.h>
#include <linux/seq_file.h>
#include <linux/wait.h>

#include "kmad_test.h"

/* The agent's slots held and sends backlogged, read under its lock. */
static void fl_counts(struct kmad_agent *agent, unsigned int *out,
		      unsigned int *back)
{
	struct kmad_agent_priv *priv = kmad_agent_priv(agent);
	unsigned long flags;

	spin_lock_irqsave(&priv->lock, flags);
	*out = priv->flow.outstanding;
	*back = priv->flow.backlogged;
	spin_unlock_irqrestore(&priv->lock, flags);
}

/* Expect @out slots held and @back sends backlogged. */
static void fl_expect_counts(struct kunit *test, struct kmad_agent *agent,
			     unsigned int out, unsigned int back)
{
	unsigned int o, b;

	fl_counts(agent, &o, &b);
	KUNIT_EXPECT_EQ(test, o, out);
	KUNIT_EXPECT_EQ(test, b, back);
}

/* Sends device 0 has on its QP1 "wire", not yet completed. */
static unsigned int fl_wire(struct kt_fix *f)
{
	return kmad_sim_pending_sends(f->fab, KT_DEV0, KT_QPN);
}

/* The TID of the @n-th send on device 0's wire. */
static u64 fl_wire_tid(struct kt_fix *f, unsigned int n)
{
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(f->test, kmad_sim_peek_send(f->fab, KT_DEV0, KT_QPN, n,
						    &mad, sizeof(mad)),
			(int)sizeof(mad));
	return be64_to_cpu(mad.mad_hdr.tid);
}

static u64 fl_tid(struct kmad_send_buf *buf)
{
	return be64_to_cpu(buf->mad->mad_hdr.tid);
}

/* Post @n Get requests with @timeout_ms and @retries, TIDs from @tid. */
static void fl_post_n(struct kt_fix *f, struct kmad_send_buf **bufs,
		      unsigned int n, u32 tid, unsigned int timeout_ms,
		      unsigned int retries)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		bufs[i] = kt_request(f, f->agent, KMAD_METHOD_GET, tid + i,
				     timeout_ms, retries);
		kt_post(f, bufs[i]);
	}
}

/* Complete the send on the wire and answer @req: both of its callbacks. */
static void fl_answer(struct kt_fix *f, struct kmad_send_buf *req)
{
	KUNIT_ASSERT_EQ(f->test, fl_wire_tid(f, 0), fl_tid(req));
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, req, 0);
	kt_event(f, KT_DEV0);
}

/* The sends still outstanding at the end are freed by their callbacks,
 * which the fixture's teardown (port removal) brings.
 */
static void fl_free_rest_on_exit(struct kt_fix *f)
{
	f->free_on_send = true;
}

/* With the limit reached, the next solicited send is accepted (0) but
 * waits BACKLOG with its two references, off the wire.
 */
static void flow_limit_backlogs_next(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	unsigned int refs;

	kmad_agent_set_flow_limit(f->agent, 2);
	fl_post_n(f, b, 3, 0x10, 1000, 0);
	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[2], &refs), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test, refs, 2U);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, fl_wire(f), 2U);
	fl_expect_counts(test, f->agent, 2, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	fl_free_rest_on_exit(f);
}

/*
 * Remove the fabric, then unregister @agent, another agent the test
 * registered: the removal flushes what @agent left on the (step-mode)
 * wire, so that its unregister does not wait for send completions that
 * never come; the callbacks free the buffers.
 */
static void fl_unregister_after_removal(struct kt_fix *f,
					struct kmad_agent *agent)
{
	f->free_on_send = true;
	kmad_sim_destroy(f->fab);
	f->fab = NULL;
	KUNIT_EXPECT_EQ(f->test, kmad_unregister_agent(agent), 0);
}

/*
 * The CM class is solicited (flow.c) as the SA's is: a CM agent at its
 * limit backlogs its next request with a timeout, off the wire.
 */
static void flow_cm_limit_backlogs_next(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_CM,
		.class_version = 2,
	};
	struct kmad_send_buf *b[3];
	struct kmad_agent *cm;
	unsigned int refs;
	int i;

	__set_bit(KMAD_METHOD_SEND, req.method_mask);
	cm = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &req,
				 kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(cm));
	kmad_agent_set_flow_limit(cm, 2);
	for (i = 0; i < 3; i++) {
		b[i] = kt_request(f, cm, KMAD_METHOD_SEND, 0x110 + i, 1000, 0);
		b[i]->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_CM;
		b[i]->mad->mad_hdr.class_version = 2;
		KUNIT_EXPECT_EQ(test, kmad_post_send(b[i]), 0);
	}
	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[2], &refs), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test, refs, 2U);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, fl_wire(f), 2U);
	fl_expect_counts(test, cm, 2, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	fl_unregister_after_removal(f, cm);
}

/* A Get NodeInfo SMP from @smi to device 1 with a timeout: LID-routed, or
 * directed-route out of port 1 (@dr).
 */
static struct kmad_send_buf *fl_smp(struct kt_fix *f, struct kmad_agent *smi,
				    u32 tid, bool dr)
{
	static const u8 path[] = { 1 };
	struct kmad_dest dest = { };
	struct kmad_send_buf *buf;

	if (!dr)
		dest.dlid = kmad_port_lid(f->port[KT_DEV1]);
	buf = kmad_alloc_send_buf(smi, &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(buf));
	if (dr)
		KUNIT_EXPECT_EQ(f->test,
				kmad_send_buf_set_dr_path(buf, path, 1), 0);
	else
		buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(tid);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	buf->timeout_ms = 1000;
	return buf;
}

/*
 * Both SMP classes are solicited (flow.c): with a limit of 1, a
 * LID-routed SMP takes the slot, and a directed-route one and another
 * LID-routed one wait BACKLOG, off QP0's wire.
 */
static void flow_smp_limit_backlogs_next(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	struct kmad_agent *smi;
	unsigned int refs;
	int i;

	smi = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_SMI, NULL,
				  kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(smi));
	kmad_agent_set_flow_limit(smi, 1);
	b[0] = fl_smp(f, smi, 0x120, false);
	b[1] = fl_smp(f, smi, 0x121, true);
	b[2] = fl_smp(f, smi, 0x122, false);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, kmad_post_send(b[i]), 0);
	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], &refs), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test, refs, 2U);
	KUNIT_EXPECT_EQ(test, kt_state(b[2], NULL), KMAD_SS_BACKLOG);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(f->fab, KT_DEV0, 0), 1U);
	fl_expect_counts(test, smi, 1, 2);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	fl_unregister_after_removal(f, smi);
}

/*
 * RMPP has its own window (flow.c): an RMPP request with a timeout
 * (kmad_alloc_send_buf_rmpp()), and an RMPP-active MAD of an agent kmad
 * does RMPP for, are not solicited.  Both go out at once, past a full
 * backlog, and take no slot.
 */
static void flow_rmpp_never_backlogged(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req reg = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(f->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_send_buf *b[2], *rmpp, *active;
	struct kmad_rmpp_mad *r;
	struct kmad_agent *a;
	int i;

	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, &reg,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kmad_agent_set_flow_limit(a, 1);
	for (i = 0; i < 2; i++) {
		b[i] = kt_request(f, a, KMAD_METHOD_GET, 0x130 + i, 1000, 0);
		KUNIT_EXPECT_EQ(test, kmad_post_send(b[i]), 0);
	}
	rmpp = kmad_alloc_send_buf_rmpp(a, &dest, KMAD_SA_MAD_HDR_SIZE, 100,
					GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rmpp));
	rmpp->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	rmpp->mad->mad_hdr.mgmt_class = KT_CLASS;
	rmpp->mad->mad_hdr.class_version = KT_VERSION;
	rmpp->mad->mad_hdr.method = KMAD_METHOD_GET_MULTI;
	rmpp->mad->mad_hdr.tid = cpu_to_be64(0x132);
	rmpp->timeout_ms = 1000;
	KUNIT_EXPECT_EQ(test, kmad_post_send(rmpp), 0);
	active = kt_request(f, a, KMAD_METHOD_GET, 0x133, 1000, 0);
	r = (struct kmad_rmpp_mad *)active->mad;
	r->rmpp_hdr.rmpp_version = KMAD_RMPP_VERSION;
	r->rmpp_hdr.rmpp_type = KMAD_RMPP_TYPE_DATA;
	r->rmpp_hdr.rmpp_rtime_flags = KMAD_RMPP_FLAG_ACTIVE |
				       KMAD_RMPP_FLAG_FIRST |
				       KMAD_RMPP_FLAG_LAST;
	KUNIT_EXPECT_EQ(test, kmad_post_send(active), 0);

	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test, kt_state(rmpp, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(active, NULL), KMAD_SS_SENDING);
	kt_settle(f);
	/* b[0], the RMPP request's segment 1 and the active MAD. */
	KUNIT_EXPECT_EQ(test, fl_wire(f), 3U);
	fl_expect_counts(test, a, 1, 1);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	fl_unregister_after_removal(f, a);
}

/* Each response frees the slot, and the oldest backlogged send goes out:
 * the wire sees A, B, C in posting order, one at a time.
 */
static void flow_response_drains_fifo(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	int i;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 3, 0x20, 1000, 0);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, fl_wire(f), 1U);
		KUNIT_EXPECT_EQ(test, kt_state(b[i], NULL), KMAD_SS_SENDING);
		if (i < 2)
			KUNIT_EXPECT_EQ(test, kt_state(b[i + 1], NULL),
					KMAD_SS_BACKLOG);
		fl_expect_counts(test, f->agent, 1, 2 - i);
		fl_answer(f, b[i]);
	}
	KUNIT_EXPECT_EQ(test, fl_wire(f), 0U);
	fl_expect_counts(test, f->agent, 0, 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 6);
	for (i = 0; i < 3; i++) {
		kt_expect_recv(f, 2 * i, b[i], KMAD_METHOD_GET_RESP);
		kt_expect_send(f, 2 * i + 1, b[i], KMAD_SEND_OK);
		kmad_free_send_buf(b[i]);
	}
}

/* A response that comes before the send completion frees the slot at
 * once (EARLY_RESP): the next send goes out before the first one's CQE.
 */
static void flow_early_response_frees_slot(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2];

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0x30, 1000, 0);
	kt_respond(f, b[0], 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_EARLY_RESP);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	KUNIT_ASSERT_EQ(test, fl_wire(f), 2U);
	KUNIT_EXPECT_EQ(test, fl_wire_tid(f, 1), fl_tid(b[1]));
	fl_expect_counts(test, f->agent, 1, 0);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b[0], KMAD_SEND_OK);
	kmad_free_send_buf(b[0]);
	fl_free_rest_on_exit(f);
}

/* A timeout frees the slot; the backlogged send's own timeout starts at
 * its send completion, however long it waited in the backlog.
 */
static void flow_timeout_frees_slot(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2];

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0x40, 100, 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 100);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, b[0], KMAD_SEND_RESP_TIMEOUT);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	KUNIT_ASSERT_EQ(test, fl_wire(f), 1U);
	KUNIT_EXPECT_EQ(test, fl_wire_tid(f, 0), fl_tid(b[1]));

	/* Not yet sent: no deadline runs. */
	kmad_sim_advance_clock(f->fab, 1000);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 99);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b[1], KMAD_SEND_RESP_TIMEOUT);
	fl_expect_counts(test, f->agent, 0, 0);
	kmad_free_send_buf(b[0]);
	kmad_free_send_buf(b[1]);
}

/* A retry is resent in the slot the send holds: the backlog does not move
 * until the last timeout, and the wire sees the retried TID each time.
 */
static void flow_retries_keep_their_slot(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent_stats st;
	struct kmad_send_buf *b[2];
	int i;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0x50, 100, 2);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_EQ(test, fl_wire(f), 1U);
		KUNIT_EXPECT_EQ(test, fl_wire_tid(f, 0), fl_tid(b[0]));
		KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_BACKLOG);
		fl_expect_counts(test, f->agent, 1, 1);
		kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
		kmad_sim_advance_clock(f->fab, 100);
		kt_settle(f);
	}
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, b[0], KMAD_SEND_RESP_TIMEOUT);
	kmad_agent_get_stats(f->agent, &st);
	KUNIT_EXPECT_EQ(test, st.retries, 2ULL);
	KUNIT_ASSERT_EQ(test, fl_wire(f), 1U);
	KUNIT_EXPECT_EQ(test, fl_wire_tid(f, 0), fl_tid(b[1]));
	fl_expect_counts(test, f->agent, 1, 0);
	kmad_free_send_buf(b[0]);
	fl_free_rest_on_exit(f);
}

/* Cancel, or modify to 0, of a backlogged send ends it CANCELED with one
 * callback; it never reaches the wire, and the slot holder is untouched.
 */
static void flow_cancel_backlogged_never_sent(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	int i;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 3, 0x60, 1000, 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b[1]), 0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b[2], 0), 0);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 0, b[1], KMAD_SEND_CANCELED);
	kt_expect_send(f, 1, b[2], KMAD_SEND_CANCELED);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_INIT);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b[1]), -EINVAL);
	fl_expect_counts(test, f->agent, 1, 0);

	KUNIT_EXPECT_EQ(test, fl_wire(f), 1U);
	fl_answer(f, b[0]);
	KUNIT_EXPECT_EQ(test, fl_wire(f), 0U);
	KUNIT_ASSERT_EQ(test, kt_events(f), 4);
	kt_expect_send(f, 3, b[0], KMAD_SEND_OK);
	/* One send completion on the port: A's. */
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_SENT]),
			1LL);
	for (i = 0; i < 3; i++)
		kmad_free_send_buf(b[i]);
}

/* A new timeout for a backlogged send is kept for when it is sent, and
 * canceling the send holding the slot lets it out at once.
 */
static void flow_modify_backlogged_then_cancel_holder(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2];

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0x70, 100, 0);
	KUNIT_EXPECT_EQ(test, kmad_modify_send(b[1], 500), 0);
	KUNIT_EXPECT_EQ(test, b[1]->timeout_ms, 500U);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_BACKLOG);

	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b[0]), 0);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	KUNIT_ASSERT_EQ(test, fl_wire(f), 2U);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);	/* A's CQE */
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, b[0], KMAD_SEND_CANCELED);

	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);	/* B's */
	kmad_sim_advance_clock(f->fab, 499);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 1);
	kmad_sim_advance_clock(f->fab, 1);
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, kt_events(f), 2);
	kt_expect_send(f, 1, b[1], KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(b[0]);
	kmad_free_send_buf(b[1]);
}

/* A send that fails locally (error CQE) frees its slot too. */
static void flow_local_error_frees_slot(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2];

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0x80, 1000, 0);
	kt_complete(f, KT_DEV0, KMAD_WC_LOC_ERR, false);
	KUNIT_ASSERT_EQ(test, kt_events(f), 1);
	kt_expect_send(f, 0, b[0], KMAD_SEND_LOCAL_ERROR);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_SENDING);
	kmad_free_send_buf(b[0]);
	fl_free_rest_on_exit(f);
}

/* Unregister flushes the backlog: every send gets exactly one callback,
 * FLUSHED, in posting order, and the backlogged ones are never sent.
 */
static void flow_unregister_flushes_backlog(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	struct kmad_agent *a;
	int i;

	a = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				kt_send_handler, kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kmad_agent_set_flow_limit(a, 1);
	for (i = 0; i < 3; i++) {
		b[i] = kt_request(f, a, KMAD_METHOD_GET, 0x90 + i, 1000, 0);
		kt_post(f, b[i]);
	}
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_state(b[0], NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	for (i = 0; i < 3; i++) {
		kt_expect_send(f, i, b[i], KMAD_SEND_FLUSHED);
		kmad_free_send_buf(b[i]);
	}
	KUNIT_EXPECT_EQ(test, fl_wire(f), 0U);
}

/* Port removal with a backlog: one callback per send, all FLUSHED. */
static void flow_port_removal_flushes_backlog(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[3];
	int i, j, seen;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 3, 0xa0, 1000, 0);
	kmad_sim_destroy(f->fab);
	f->fab = NULL;
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(f->agent), 0);
	f->agent = NULL;
	KUNIT_ASSERT_EQ(test, kt_events(f), 3);
	for (i = 0; i < 3; i++) {
		seen = 0;
		for (j = 0; j < 3; j++)
			seen += f->ev[j].buf == b[i];
		KUNIT_EXPECT_EQ(test, seen, 1);
		KUNIT_EXPECT_EQ(test, f->ev[i].status, KMAD_SEND_FLUSHED);
	}
	for (i = 0; i < 3; i++)
		kmad_free_send_buf(b[i]);
}

/* Sends without a timeout, responses and requests of a class without flow
 * control go out at once, past a full backlog, and take no slot.
 */
static void flow_unsolicited_never_backlogged(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2], *set, *resp, *pma;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0xb0, 1000, 0);
	set = kt_request(f, f->agent, KMAD_METHOD_SET, 0xb2, 0, 0);
	kt_post(f, set);
	resp = kt_request(f, f->agent, KMAD_METHOD_GET_RESP, 0xb3, 0, 0);
	kt_post(f, resp);
	pma = kt_request(f, f->agent, KMAD_METHOD_GET, 0xb4, 1000, 0);
	pma->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_PERF_MGMT;
	pma->mad->mad_hdr.class_version = 1;
	kt_post(f, pma);

	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test, kt_state(set, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(resp, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, kt_state(pma, NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, fl_wire(f), 4U);
	fl_expect_counts(test, f->agent, 1, 1);
	fl_free_rest_on_exit(f);
}

/* A higher limit lets backlogged sends out at once, oldest first; no limit
 * lets all out; a lower one takes nothing back and holds new posts.
 */
static void flow_limit_change_takes_effect(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[5];
	int i;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 4, 0xc0, 1000, 0);
	fl_expect_counts(test, f->agent, 1, 3);
	kmad_agent_set_flow_limit(f->agent, 3);
	KUNIT_ASSERT_EQ(test, fl_wire(f), 3U);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, fl_wire_tid(f, i), fl_tid(b[i]));
	KUNIT_EXPECT_EQ(test, kt_state(b[3], NULL), KMAD_SS_BACKLOG);
	kmad_agent_set_flow_limit(f->agent, 0);
	KUNIT_EXPECT_EQ(test, kt_state(b[3], NULL), KMAD_SS_SENDING);
	KUNIT_EXPECT_EQ(test, fl_wire(f), 4U);
	fl_expect_counts(test, f->agent, 4, 0);

	kmad_agent_set_flow_limit(f->agent, 2);
	b[4] = kt_request(f, f->agent, KMAD_METHOD_GET, 0xc4, 1000, 0);
	kt_post(f, b[4]);
	KUNIT_EXPECT_EQ(test, kt_state(b[4], NULL), KMAD_SS_BACKLOG);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, kt_state(b[i], NULL), KMAD_SS_SENDING);
	/* 4 held, limit 2: three must end before the fifth goes. */
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, kt_state(b[4], NULL), KMAD_SS_BACKLOG);
		fl_answer(f, b[i]);
	}
	KUNIT_EXPECT_EQ(test, kt_state(b[4], NULL), KMAD_SS_SENDING);
	fl_expect_counts(test, f->agent, 2, 0);
	for (i = 0; i < 3; i++)
		kmad_free_send_buf(b[i]);
	fl_free_rest_on_exit(f);
}

/* A backlogged send reserves its TID (a second post of it is -EBUSY) but a
 * response with that TID does not match it: it was never sent.
 */
static void flow_backlogged_tid_reserved_unmatched(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *b[2], *dup;
	s64 unmatched;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 2, 0xd0, 1000, 0);
	dup = kt_request(f, f->agent, KMAD_METHOD_GET, 0xd1, 1000, 0);
	KUNIT_EXPECT_EQ(test, kmad_post_send(dup), -EBUSY);
	kmad_free_send_buf(dup);

	unmatched = atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RESP_UNMATCHED]);
	kt_respond(f, b[1], 0);
	kt_event(f, KT_DEV0);
	KUNIT_EXPECT_EQ(test, kt_events(f), 0);
	KUNIT_EXPECT_EQ(test, kt_state(b[1], NULL), KMAD_SS_BACKLOG);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RESP_UNMATCHED]),
			unmatched + 1);
	fl_free_rest_on_exit(f);
}

/* Registration gives each class its default limit (flow.c); an SMP
 * class registers on QP0.
 */
static void flow_default_limits(struct kunit *test)
{
	static const struct { u8 cls; u8 ver; unsigned int limit; } rows[] = {
		{ KMAD_MGMT_CLASS_SUBN_ADM, 2, 16 },
		{ KMAD_MGMT_CLASS_CM, 2, 128 },
		{ KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, 128 },
		{ KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1, 128 },
		{ KMAD_MGMT_CLASS_DEVICE_MGMT, 1, 0 },
	};
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {};
	struct kmad_agent *a;
	int i;

	KUNIT_EXPECT_EQ(test, kmad_agent_priv(f->agent)->flow.limit, 128U);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		req.mgmt_class = rows[i].cls;
		req.class_version = rows[i].ver;
		a = kmad_register_agent(f->port[KT_DEV1],
					kmad_is_smp_class(rows[i].cls) ?
					KMAD_QPT_SMI : KMAD_QPT_GSI, &req,
					kt_send_handler, kt_recv_handler, f);
		KUNIT_ASSERT_FALSE(test, IS_ERR(a));
		KUNIT_EXPECT_EQ_MSG(test, kmad_agent_priv(a)->flow.limit,
				    rows[i].limit, "class %#x", rows[i].cls);
		kmad_unregister_agent(a);
	}
	/* Without a recv_handler no response can come back: none. */
	a = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, NULL,
				kt_send_handler, NULL, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, kmad_agent_priv(a)->flow.limit, 0U);
	kmad_unregister_agent(a);
}

/* The debugfs flow file shows the agent's limit, slots and backlog. */
static void flow_debugfs_counts(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct seq_file m = { .private = f->port[KT_DEV0], .size = 4096 };
	struct kmad_send_buf *b[3];
	char *want;

	kmad_agent_set_flow_limit(f->agent, 1);
	fl_post_n(f, b, 3, 0xe0, 1000, 0);
	m.buf = kunit_kzalloc(test, m.size + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	kmad_debugfs_flow_show(&m, NULL);
	KUNIT_ASSERT_FALSE(test, seq_has_overflowed(&m));
	/* agent qp class limit outstanding backlog backlog_max backlogged */
	want = kunit_kzalloc(test, 64, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, want);
	snprintf(want, 64, "%#x qp1 0x00 1 1 2 2 2\n", f->agent->hi_tid);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(m.buf, want), "%s", m.buf);
	fl_free_rest_on_exit(f);
}

static struct kunit_case flow_cases[] = {
	KUNIT_CASE(flow_limit_backlogs_next),
	KUNIT_CASE(flow_cm_limit_backlogs_next),
	KUNIT_CASE(flow_smp_limit_backlogs_next),
	KUNIT_CASE(flow_rmpp_never_backlogged),
	KUNIT_CASE(flow_response_drains_fifo),
	KUNIT_CASE(flow_early_response_frees_slot),
	KUNIT_CASE(flow_timeout_frees_slot),
	KUNIT_CASE(flow_retries_keep_their_slot),
	KUNIT_CASE(flow_cancel_backlogged_never_sent),
	KUNIT_CASE(flow_modify_backlogged_then_cancel_holder),
	KUNIT_CASE(flow_local_error_frees_slot),
	KUNIT_CASE(flow_unregister_flushes_backlog),
	KUNIT_CASE(flow_port_removal_flushes_backlog),
	KUNIT_CASE(flow_unsolicited_never_backlogged),
	KUNIT_CASE(flow_limit_change_takes_effect),
	KUNIT_CASE(flow_backlogged_tid_reserved_unmatched),
	KUNIT_CASE(flow_default_limits),
	KUNIT_CASE(flow_debugfs_counts),
	{}
};

static struct kunit_suite flow_suite = {
	.name = "kmad_flow",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = flow_cases,
};

/* ---- kmad_flow_stress ---- */

#define FS_THREADS	3
#define FS_SENDS	250	/* per thread */
#define FS_MAX_OUT	24	/* per thread: a poster waits above it */
#define FS_LIMIT_MAX	6
#define FS_WAIT_MS	30000

struct fs_slot {
	struct kmad_send_buf *buf;
	atomic_t cbs;			/* send_handler calls */
	int status;
	bool posted;
	bool cancel_ok;			/* a cancel or modify-to-0 said 0 */
};

struct fs_ctx {
	struct kunit *test;
	struct kt_fix *f;
	struct kmad_agent *req;		/* dev 0, send-only, flow limited */
	struct kmad_agent *resp;	/* dev 1, answers most Gets */
	struct fs_slot slot[FS_THREADS][FS_SENDS];
	atomic_t out[FS_THREADS];	/* posted, callback not yet run */
	atomic_t done;			/* callbacks */
	atomic_t posted;
	atomic_t bogus;			/* handler saw something wrong */
	wait_queue_head_t wq;
	u64 seed;
	bool stop_limits;
};

static void fs_req_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct fs_ctx *c = agent->context;
	struct fs_slot *s = wc->send_buf->context[0];
	unsigned int t = (unsigned long)wc->send_buf->context[1];

	s->status = wc->status;
	if (atomic_inc_return(&s->cbs) != 1)
		atomic_inc(&c->bogus);
	atomic_dec(&c->out[t]);
	atomic_inc(&c->done);
	wake_up(&c->wq);
}

static void fs_req_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			struct kmad_recv_wc *wc)
{
	kmad_free_recv(wc);
}

static void fs_resp_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

/* Answer Gets, but drop one in four (by TID): those time out. */
static void fs_resp_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	struct fs_ctx *c = agent->context;
	struct kmad_send_buf *buf;

	if (!(be64_to_cpu(wc->mad->mad_hdr.tid) & 3)) {
		kmad_free_recv(wc);
		return;
	}
	buf = kmad_create_response(agent, wc, GFP_KERNEL);
	kmad_free_recv(wc);
	if (IS_ERR(buf) || kmad_post_send(buf)) {
		if (!IS_ERR(buf))
			kmad_free_send_buf(buf);
		atomic_inc(&c->bogus);
	}
}

struct fs_thread {
	struct fs_ctx *c;
	unsigned int id;
	struct completion done;
};

static int fs_poster(void *arg)
{
	struct fs_thread *th = arg;
	struct fs_ctx *c = th->c;
	struct rnd_state rnd;
	struct fs_slot *s;
	unsigned int i, r;
	int ret;

	prandom_seed_state(&rnd, c->seed + th->id);
	for (i = 0; i < FS_SENDS; i++) {
		s = &c->slot[th->id][i];
		while (atomic_read(&c->out[th->id]) >= FS_MAX_OUT)
			usleep_range(100, 300);
		r = prandom_u32_state(&rnd);
		s->buf = kt_request(c->f, c->req, KMAD_METHOD_GET,
				    th->id << 16 | i, 5 + r % 20, r >> 8 & 1);
		s->buf->context[0] = s;
		s->buf->context[1] = (void *)(unsigned long)th->id;
		atomic_inc(&c->out[th->id]);
		ret = kmad_post_send(s->buf);
		if (ret) {
			atomic_dec(&c->out[th->id]);
			atomic_inc(&c->bogus);
			continue;
		}
		s->posted = true;
		atomic_inc(&c->posted);
		switch (r >> 12 & 7) {
		case 0:
			s->cancel_ok = !kmad_cancel_send(s->buf);
			break;
		case 1:
			s->cancel_ok = !kmad_modify_send(s->buf, 0);
			break;
		case 2:
			kmad_modify_send(s->buf, 10 + r % 30);
			break;
		default:
			break;
		}
		/* Cancel an older send of ours, which may be anywhere. */
		if (i > 4 && !(r >> 16 & 7)) {
			struct fs_slot *o = &c->slot[th->id][i - 4];

			if (o->posted && !atomic_read(&o->cbs) &&
			    !kmad_cancel_send(o->buf))
				o->cancel_ok = true;
		}
		if (!(r >> 20 & 15))
			usleep_range(50, 200);
	}
	complete(&th->done);
	return 0;
}

/*
 * Three posters with random timeouts, retries, cancels and modifies, while
 * the main thread changes the limit (1..6, and none) and checks that a
 * send never waits in the backlog beside a free slot; every post gets exactly one
 * callback, CANCELED exactly when a cancel said so, and the backlog is
 * empty at the end.
 */
static void flow_stress_exactly_once(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct fs_thread *th;
	struct kmad_reg_req get = {
		.mgmt_class = KT_CLASS, .class_version = KT_VERSION,
	};
	struct kmad_agent_priv *priv;
	struct task_struct *task;
	struct rnd_state rnd;
	struct fs_ctx *c;
	unsigned int i, j, out, back, peak = 0, canceled = 0, timeouts = 0;
	unsigned long flags, deadline, left;
	unsigned long wait = msecs_to_jiffies(FS_WAIT_MS);
	bool finished;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	th = kunit_kcalloc(test, FS_THREADS, sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, th);
	c->test = test;
	c->f = f;
	c->seed = get_random_u64();
	kunit_info(test, "seed %#llx\n", c->seed);
	init_waitqueue_head(&c->wq);
	__set_bit(KMAD_METHOD_GET, get.method_mask);
	c->resp = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &get,
				      fs_resp_send, fs_resp_recv, c);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->resp));
	c->req = kmad_register_agent(f->port[KT_DEV0], KMAD_QPT_GSI, NULL,
				     fs_req_send, fs_req_recv, c);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->req));
	priv = kmad_agent_priv(c->req);
	kmad_agent_set_flow_limit(c->req, 2);

	for (i = 0; i < FS_THREADS; i++) {
		th[i].c = c;
		th[i].id = i;
		init_completion(&th[i].done);
		task = kthread_run(fs_poster, &th[i], "kmad_fs%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	}
	prandom_seed_state(&rnd, c->seed ^ 0x5a5a);
	deadline = jiffies + msecs_to_jiffies(FS_WAIT_MS);
	do {
		j = prandom_u32_state(&rnd) % (FS_LIMIT_MAX + 2);
		/* Mostly small limits; now and then none for a moment. */
		kmad_agent_set_flow_limit(c->req, j > FS_LIMIT_MAX ? 0 : j + 1);
		for (i = 0; i < 20; i++) {
			/* Never a backlog beside a free slot. */
			spin_lock_irqsave(&priv->lock, flags);
			out = priv->flow.outstanding;
			back = priv->flow.backlogged;
			if (list_count_nodes(&priv->flow.backlog) != back ||
			    (back && (!priv->flow.limit ||
				      out < priv->flow.limit)))
				atomic_inc(&c->bogus);
			spin_unlock_irqrestore(&priv->lock, flags);
			peak = max(peak, out);
			usleep_range(200, 400);
		}
		finished = true;
		for (i = 0; i < FS_THREADS; i++)
			finished &= completion_done(&th[i].done);
	} while (!finished && time_before(jiffies, deadline));
	kmad_agent_set_flow_limit(c->req, 3);
	for (i = 0; i < FS_THREADS; i++) {
		left = wait_for_completion_timeout(&th[i].done, wait);
		KUNIT_ASSERT_GT(test, left, 0UL);
	}
	left = wait_event_timeout(c->wq, atomic_read(&c->done) ==
				  atomic_read(&c->posted), wait);
	KUNIT_ASSERT_GT(test, left, 0UL);
	kt_settle(f);

	KUNIT_EXPECT_EQ(test, atomic_read(&c->bogus), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->posted), FS_THREADS * FS_SENDS);
	fl_expect_counts(test, c->req, 0, 0);
	for (i = 0; i < FS_THREADS; i++) {
		for (j = 0; j < FS_SENDS; j++) {
			struct fs_slot *s = &c->slot[i][j];

			KUNIT_EXPECT_EQ(test, atomic_read(&s->cbs), 1);
			KUNIT_EXPECT_EQ(test, s->status == KMAD_SEND_CANCELED,
					s->cancel_ok);
			KUNIT_EXPECT_TRUE(test, s->status == KMAD_SEND_OK ||
					  s->status == KMAD_SEND_RESP_TIMEOUT ||
					  s->status == KMAD_SEND_CANCELED);
			canceled += s->status == KMAD_SEND_CANCELED;
			timeouts += s->status == KMAD_SEND_RESP_TIMEOUT;
		}
	}
	kunit_info(test, "posted %d canceled %u timeouts %u peak slots %u backlogged %llu\n",
		   atomic_read(&c->posted), canceled, timeouts, peak,
		   priv->flow.backlog_total);
	KUNIT_EXPECT_GT(test, priv->flow.backlog_total, 0ULL);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(c->req), 0);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(c->resp), 0);
	for (i = 0; i < FS_THREADS; i++)
		for (j = 0; j < FS_SENDS; j++)
			kmad_free_send_buf(c->slot[i][j].buf);
}

static int fs_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

static struct kunit_case flow_stress_cases[] = {
	KUNIT_CASE(flow_stress_exactly_once),
	{}
};

static struct kunit_suite flow_stress_suite = {
	.name = "kmad_flow_stress",
	.init = fs_init,
	.exit = kt_fix_exit,
	.test_cases = flow_stress_cases,
};

kunit_test_suites(&flow_suite, &flow_stress_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's solicited flow control");
MODULE_LICENSE("GPL");
