// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_rmpp_race: kmad's RMPP sender against kmad's RMPP receiver, end to
 * end over the simulated fabric (asynchronous mode, real timers), with
 * several threads posting at once and the fabric dropping and duplicating
 * MADs.
 *
 * A server agent on the second port (SA, RMPP, GetTable and GetMulti)
 * answers a GetTable with one RMPP GetTableResp of 1 to RR_MAX_SEGS
 * segments, and a GetMulti (itself an RMPP request of 1 to RR_MAX_SEGS
 * segments, which it checks) with a GetMultiResp of one segment.  Client
 * threads on the first port, each with its own send-only RMPP agent, post
 * both kinds with a deadline and retries; one thread in the last case
 * cancels some of them.  The data of every message is a pattern of its
 * TID, so a reassembled message carries its own expected contents.
 *
 * Checked: every post gets exactly one send_handler call; a send that
 * ended OK had its response, whole and right, handed to recv_handler
 * with it as the request (and only such a send); every reassembled
 * message the server took was whole and right; a send ends
 * REMOTE_ABORT only when a receiver had more transfers than
 * kmad.rmpp_max_recvs and sent STOP (RESX) -- the threads post faster
 * than the transfers end, so both sides reach it; nothing is left behind
 * (the suite's exit unregisters and destroys the fabric: the debug
 * kernel's kmemleak and DEBUG_OBJECTS watch the rest).
 *
 * A send still without its callback after the wait is reported with
 * where it stands (rr_report(): its state, where the hardware holds it,
 * its deadline and the agent's timer, and an RMPP send's window), so a
 * failure tells a slow send, still retrying under load, from a stuck one;
 * a send with neither a completion to come nor a deadline armed, found so
 * twice a second apart, fails the case whatever else passed.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>

#include "kmad_test.h"
#include "rmpp.h"

#define RR_THREADS	3
#define RR_SENDS	24	/* per thread */
#define RR_MAX_SEGS	24
#define RR_HDR		KMAD_SA_MAD_HDR_SIZE
#define RR_SEG_DATA	(KMAD_MAD_SIZE - RR_HDR)
#define RR_GET_TABLE	0x12
#define RR_GET_MULTI	0x14
/*
 * The wait for every callback.  A KUnit case must end well within the
 * hung-task timeout (60 s): the runner waits for it uninterruptibly, and
 * the debug guest panics on a hung task.
 */
#define RR_WAIT_S	45

struct rr_ctx;

/* One post: what it asked for and what came of it. */
struct rr_send {
	struct kmad_send_buf *buf;
	u32 tid;
	bool multi;		/* GetMulti: an RMPP request */
	size_t len;		/* data bytes of the RMPP part */
	atomic_t callbacks;
	atomic_t responses;
	atomic_t bad_response;
	enum kmad_send_status status;
	bool cancel_tried;
	int cancel_ret;		/* what kmad_cancel_send() returned */
};

struct rr_thread {
	struct rr_ctx *ctx;
	struct kmad_agent *agent;
	struct rr_send sends[RR_SENDS];
	struct task_struct *task;
	u32 rng;
	int post_errors;
};

struct rr_ctx {
	struct kunit *test;
	struct kmad_sim_config cfg;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	struct kmad_agent *srv;
	struct rr_thread th[RR_THREADS];
	bool cancel;		/* threads cancel some of their sends */
	atomic_t srv_bad;	/* requests the server found wrong */
	atomic_t srv_taken;	/* requests the server answered */
	atomic_t done;		/* send_handler calls, all threads */
	wait_queue_head_t wq;
};

static u8 rr_byte(u32 tid, size_t i)
{
	return (u8)(tid * 31 + i * 7 + (i >> 8));
}

/* Data byte @i of a message of TID @tid lives in segment i / 200 + 1. */
static void rr_fill(struct kmad_send_buf *buf, u32 tid, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		((u8 *)kmad_send_buf_seg(buf, i / RR_SEG_DATA + 1))
			[RR_HDR + i % RR_SEG_DATA] = rr_byte(tid, i);
}

/* A reassembled message: first segment whole, then data, mad_len long. */
static bool rr_check(const struct kmad_recv_wc *wc, u32 tid, size_t len)
{
	const u8 *p = (const u8 *)wc->mad + RR_HDR;
	size_t i;

	if (wc->mad_len != RR_HDR + len)
		return false;
	for (i = 0; i < len; i++)
		if (p[i] != rr_byte(tid, i))
			return false;
	return true;
}

/* The length a message of TID @tid has: 1 to RR_MAX_SEGS segments. */
static size_t rr_len(u32 tid)
{
	return 1 + (size_t)(tid * 2654435761U % (RR_MAX_SEGS * RR_SEG_DATA));
}

static void rr_srv_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

static void rr_srv_recv(struct kmad_agent *agent,
			struct kmad_send_buf *request, struct kmad_recv_wc *wc)
{
	struct rr_ctx *ctx = agent->context;
	u32 tid = (u32)be64_to_cpu(wc->mad->mad_hdr.tid);
	struct kmad_send_buf *tmpl, *resp;
	size_t len = 0;

	if (wc->mad->mad_hdr.method == RR_GET_MULTI) {
		if (!rr_check(wc, tid, rr_len(tid)))
			atomic_inc(&ctx->srv_bad);
	} else {
		len = rr_len(tid);
	}
	tmpl = kmad_create_response(agent, wc, GFP_KERNEL);
	if (IS_ERR(tmpl))
		goto bad;
	resp = kmad_alloc_send_buf_rmpp(agent, &tmpl->dest, RR_HDR, len,
					GFP_KERNEL);
	if (IS_ERR(resp)) {
		kmad_free_send_buf(tmpl);
		goto bad;
	}
	memcpy(resp->mad, tmpl->mad, RR_HDR);
	kmad_free_send_buf(tmpl);
	((struct kmad_rmpp_mad *)resp->mad)->rmpp_hdr.rmpp_rtime_flags =
		KMAD_RMPP_FLAG_ACTIVE;
	rr_fill(resp, tid, len);
	/* ACK waits a loaded guest does not turn into timeouts. */
	resp->timeout_ms = 600;
	resp->retries = 8;
	if (kmad_post_send(resp)) {
		kmad_free_send_buf(resp);
		goto bad;
	}
	atomic_inc(&ctx->srv_taken);
	kmad_free_recv(wc);
	return;
bad:
	atomic_inc(&ctx->srv_bad);
	kmad_free_recv(wc);
}

static void rr_cli_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct rr_send *rs = wc->send_buf->context[0];
	struct rr_ctx *ctx = wc->send_buf->context[1];

	rs->status = wc->status;
	/* The last thing: the test may look at @rs once this is seen. */
	atomic_inc_return_release(&rs->callbacks);
	atomic_inc(&ctx->done);
	wake_up(&ctx->wq);
}

static void rr_cli_recv(struct kmad_agent *agent,
			struct kmad_send_buf *request, struct kmad_recv_wc *wc)
{
	struct rr_send *rs;
	size_t len;

	if (!request) {
		kmad_free_recv(wc);
		return;
	}
	rs = request->context[0];
	len = rs->multi ? 0 : rs->len;
	if (atomic_read(&rs->callbacks) || !rr_check(wc, rs->tid, len) ||
	    (u32)be64_to_cpu(wc->mad->mad_hdr.tid) != rs->tid)
		atomic_inc(&rs->bad_response);
	atomic_inc(&rs->responses);
	kmad_free_recv(wc);
}

static int rr_post(struct rr_thread *t, unsigned int i)
{
	struct rr_ctx *ctx = t->ctx;
	struct rr_send *rs = &t->sends[i];
	struct kmad_dest dest = {
		.dlid = kmad_port_lid(ctx->port[KT_DEV1]),
		.remote_qpn = KT_QPN,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct kmad_mad_hdr *hdr;
	struct kmad_send_buf *buf;

	rs->tid = (u32)(t - ctx->th) << 16 | (i + 1);
	rs->multi = i % 3 == 2;
	rs->len = rr_len(rs->tid);
	if (rs->multi)
		buf = kmad_alloc_send_buf_rmpp(t->agent, &dest, RR_HDR, rs->len,
					       GFP_KERNEL);
	else
		buf = kmad_alloc_send_buf(t->agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	hdr = &buf->mad->mad_hdr;
	hdr->base_version = KMAD_MGMT_BASE_VERSION;
	hdr->mgmt_class = KMAD_MGMT_CLASS_SUBN_ADM;
	hdr->class_version = KT_VERSION;
	hdr->method = rs->multi ? RR_GET_MULTI : RR_GET_TABLE;
	hdr->tid = cpu_to_be64(rs->tid);
	hdr->attr_id = cpu_to_be16(KMAD_SA_ATTR_PATH_REC);
	if (rs->multi) {
		((struct kmad_rmpp_mad *)buf->mad)->rmpp_hdr.rmpp_rtime_flags =
			KMAD_RMPP_FLAG_ACTIVE;
		rr_fill(buf, rs->tid, rs->len);
	}
	/* Long enough for 24 segments in windows on a loaded host: the
	 * response's segments do not push the request's deadline back.
	 */
	buf->timeout_ms = 3000;
	buf->retries = 4;
	buf->context[0] = rs;
	buf->context[1] = ctx;
	rs->buf = buf;
	return kmad_post_send(buf);
}

static int rr_thread_fn(void *arg)
{
	struct rr_thread *t = arg;
	unsigned int i;

	for (i = 0; i < RR_SENDS && !kthread_should_stop(); i++) {
		if (rr_post(t, i)) {
			t->post_errors++;
			kmad_free_send_buf(t->sends[i].buf);
			t->sends[i].buf = NULL;
			continue;
		}
		t->rng = t->rng * 1103515245 + 12345;
		if (t->ctx->cancel && (t->rng >> 16) % 4 == 0) {
			usleep_range(100, 3000);
			t->sends[i].cancel_ret =
				kmad_cancel_send(t->sends[i].buf);
			t->sends[i].cancel_tried = true;
		}
		if (i % 4 == 3)
			usleep_range(1000, 5000);
	}
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/* The most stuck sends rr_report() keeps track of between its passes. */
#define RR_MAX_STUCK	16

struct rr_stuck {
	const void *wr[RR_MAX_STUCK];
	unsigned int n;
	unsigned int outstanding;
};

/*
 * Probe every send @agent has not delivered (posted, or DONE with its
 * callback to come), print each, and note in @now those that look stuck
 * (kmad_send_probe_stuck()).  With @before (the first pass), only those
 * that looked stuck then too count.
 */
static void rr_report_agent(struct kunit *test, struct kmad_agent *agent,
			    const char *who,
			    const struct rr_stuck *before, struct rr_stuck *now)
{
	struct kmad_agent_priv *priv = kmad_agent_priv(agent);
	struct list_head *lists[] = { &priv->sends, &priv->waiting,
				      &priv->done };
	struct kmad_send_probe p;
	struct kmad_send_wr *wr;
	unsigned long flags;
	unsigned int i, j;
	bool stuck;

	spin_lock_irqsave(&priv->lock, flags);
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		list_for_each_entry(wr, lists[i], agent_entry) {
			kmad_send_probe(wr, &p);
			stuck = kmad_send_probe_stuck(&p);
			for (j = 0; stuck && before && j < before->n; j++)
				if (before->wr[j] == wr)
					break;
			if (before && stuck && j == before->n)
				stuck = false;
			now->outstanding++;
			if (stuck && now->n < RR_MAX_STUCK)
				now->wr[now->n++] = wr;
			kunit_info(test, "%s tid %#llx: %s hw %u refs %u retries %u deadline %s%lld ms timer %lld ms work %s; rmpp %d seg %u/%u max %u ack %u win %u: %s\n",
				   who, wr->tid.tid, p.state_name, p.hw, p.refs,
				   p.retries_left, p.in_wheel ? "" : "none ",
				   p.deadline_ms, p.timer_ms,
				   p.work_busy ? "busy" : "idle", p.rmpp,
				   p.seg_sent, p.seg_count, p.seg_max,
				   p.last_ack, p.window,
				   stuck ? "STUCK" : "on its way");
		}
	}
	spin_unlock_irqrestore(&priv->lock, flags);
}

/* One pass over the client agents and the server's. */
static void rr_report_pass(struct rr_ctx *ctx, const struct rr_stuck *before,
			   struct rr_stuck *now)
{
	char who[16];
	unsigned int i;

	for (i = 0; i < RR_THREADS; i++) {
		snprintf(who, sizeof(who), "client %u", i);
		rr_report_agent(ctx->test, ctx->th[i].agent, who, before, now);
	}
	rr_report_agent(ctx->test, ctx->srv, "server", before, now);
}

/*
 * What is left after the wait, on both sides: printed once, then, if
 * some send looked stuck, probed again a second later (the drain reports
 * a completion a moment after it took it off the QP).  Returns the sends
 * stuck both times.
 */
static unsigned int rr_report(struct rr_ctx *ctx)
{
	struct rr_stuck first = {}, second = {};

	rr_report_pass(ctx, NULL, &first);
	kunit_info(ctx->test, "after the wait: %u sends outstanding, %u without a completion to come or a deadline armed\n",
		   first.outstanding, first.n);
	if (!first.n)
		return 0;
	msleep(1000);
	rr_report_pass(ctx, &first, &second);
	kunit_info(ctx->test, "a second later: %u stuck\n", second.n);
	return second.n;
}

static void rr_run(struct kunit *test, const struct kmad_sim_faults *faults,
		   bool cancel)
{
	struct kmad_reg_req sreq = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_ADM,
		.class_version = KT_VERSION,
		.rmpp_version = KMAD_RMPP_VERSION,
	};
	struct kmad_reg_req creq = { .rmpp_version = KMAD_RMPP_VERSION };
	/* In the context: on the stack, the frame outgrew 1024 bytes. */
	struct kmad_sim_config *cfg;
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	unsigned int i, j, total = RR_THREADS * RR_SENDS;
	unsigned int ok = 0, timeouts = 0, canceled = 0, aborted = 0;
	unsigned int other = 0;
	s64 resx;
	struct rr_ctx *ctx;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->test = test;
	ctx->cancel = cancel;
	init_waitqueue_head(&ctx->wq);
	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	cfg = &ctx->cfg;
	cfg->topology = KMAD_SIM_TOPO_PAIR;
	cfg->mode = KMAD_SIM_ASYNC;
	cfg->name = name;
	ctx->fab = kmad_sim_create(cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(ctx->fab));
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%u", name, i);
		ctx->port[i] = kmad_port_get(dev, 1);
		KUNIT_ASSERT_NOT_NULL(test, ctx->port[i]);
	}
	__set_bit(RR_GET_TABLE, sreq.method_mask);
	__set_bit(RR_GET_MULTI, sreq.method_mask);
	ctx->srv = kmad_register_agent(ctx->port[KT_DEV1], KMAD_QPT_GSI, &sreq,
				       rr_srv_send, rr_srv_recv, ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->srv));
	for (i = 0; i < RR_THREADS; i++) {
		struct rr_thread *t = &ctx->th[i];

		t->ctx = ctx;
		t->rng = 0x9e3779b9 * (i + 1);
		t->agent = kmad_register_agent(ctx->port[KT_DEV0], KMAD_QPT_GSI,
					       &creq, rr_cli_send, rr_cli_recv,
					       ctx);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t->agent));
	}
	kmad_sim_set_faults(ctx->fab, faults);
	for (i = 0; i < RR_THREADS; i++) {
		ctx->th[i].task = kthread_run(rr_thread_fn, &ctx->th[i],
					      "kmad_rr%u", i);
		KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->th[i].task));
	}
	/* Every post has its callback; then the threads may stop. */
	wait_event_idle_timeout(ctx->wq, atomic_read(&ctx->done) >=
			   total - ctx->th[0].post_errors -
			   ctx->th[1].post_errors - ctx->th[2].post_errors,
			   RR_WAIT_S * HZ);
	for (i = 0; i < RR_THREADS; i++)
		kthread_stop(ctx->th[i].task);
	/* A late duplicate must not call anything twice: give it time. */
	msleep(300);
	/* Slow or stuck?  A send nothing will move on is a failure. */
	KUNIT_EXPECT_EQ(test, rr_report(ctx), 0U);

	for (i = 0; i < RR_THREADS; i++) {
		struct rr_thread *t = &ctx->th[i];

		KUNIT_EXPECT_EQ(test, t->post_errors, 0);
		for (j = 0; j < RR_SENDS; j++) {
			struct rr_send *rs = &t->sends[j];
			int cbs = atomic_read_acquire(&rs->callbacks);

			if (!rs->buf)
				continue;
			KUNIT_EXPECT_EQ_MSG(test, cbs, 1, "tid %#x", rs->tid);
			KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rs->bad_response),
					    0, "tid %#x", rs->tid);
			if (cbs != 1)
				continue;
			switch (rs->status) {
			case KMAD_SEND_OK:
				ok++;
				KUNIT_EXPECT_EQ_MSG(test,
						    atomic_read(&rs->responses),
						    1, "tid %#x", rs->tid);
				break;
			case KMAD_SEND_RESP_TIMEOUT:
				timeouts++;
				break;
			case KMAD_SEND_CANCELED:
				canceled++;
				break;
			case KMAD_SEND_REMOTE_ABORT:
				aborted++;
				break;
			default:
				other++;
				break;
			}
			if (rs->status != KMAD_SEND_OK)
				KUNIT_EXPECT_EQ_MSG(test,
						    atomic_read(&rs->responses),
						    0, "tid %#x status %d",
						    rs->tid, rs->status);
			/* A cancel that took: no response matches after it. */
			if (rs->cancel_tried && !rs->cancel_ret)
				KUNIT_EXPECT_EQ_MSG(test, rs->status,
						    KMAD_SEND_CANCELED,
						    "tid %#x canceled", rs->tid);
			kmad_free_send_buf(rs->buf);
			rs->buf = NULL;
		}
	}
	kunit_info(test, "%u sends: %u ok, %u timed out, %u canceled, %u stopped, %u other; server answered %d, found %d wrong\n",
		   total, ok, timeouts, canceled, aborted, other,
		   atomic_read(&ctx->srv_taken), atomic_read(&ctx->srv_bad));
	resx = atomic64_read(&ctx->port[KT_DEV0]->stats[KMAD_PSTAT_RMPP_RESX]) +
	       atomic64_read(&ctx->port[KT_DEV1]->stats[KMAD_PSTAT_RMPP_RESX]);
	kunit_info(test, "%u stopped by the receiver, %lld STOP RESX sent (more than kmad.rmpp_max_recvs transfers at once)\n",
		   aborted, resx);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->srv_bad), 0);
	/*
	 * Losses cost retries, not transfers, at these rates: of the sends
	 * neither canceled nor stopped by the receiver, at least three in
	 * four end OK.  How many the receiver stops depends on how many
	 * transfers overlap, which is the guest's scheduling (a loaded
	 * guest ends transfers later, so more overlap): those are checked
	 * against the STOPs sent below, not counted as losses.
	 */
	KUNIT_EXPECT_GE(test, ok, (total - canceled - aborted) * 3 / 4);
	/* Nothing lost on purpose: a timeout is a send nothing moved for
	 * its whole timeout, five times.
	 */
	if (!faults->drop_pct && !faults->corrupt_pct &&
	    !faults->send_err_pct)
		KUNIT_EXPECT_EQ(test, timeouts, 0U);
	if (!cancel)
		KUNIT_EXPECT_EQ(test, canceled, 0U);
	KUNIT_EXPECT_EQ(test, other, 0U);
	/* A transfer the receiver stopped: only for lack of room. */
	KUNIT_EXPECT_LE(test, (s64)aborted, resx);
}

static void rr_exit(struct kunit *test)
{
	struct rr_ctx *ctx = test->priv;
	unsigned int i, j;

	if (!ctx)
		return;
	for (i = 0; i < RR_THREADS; i++) {
		if (!IS_ERR_OR_NULL(ctx->th[i].agent))
			kmad_unregister_agent(ctx->th[i].agent);
		for (j = 0; j < RR_SENDS; j++)
			kmad_free_send_buf(ctx->th[i].sends[j].buf);
	}
	if (!IS_ERR_OR_NULL(ctx->srv))
		kmad_unregister_agent(ctx->srv);
	for (i = 0; i < 2; i++)
		if (ctx->port[i])
			kmad_port_put(ctx->port[i]);
	if (!IS_ERR_OR_NULL(ctx->fab))
		kmad_sim_destroy(ctx->fab);
}

/* No faults: every transfer ends OK, windows and all. */
static void rmpp_race_clean(struct kunit *test)
{
	struct kmad_sim_faults none = {};

	rr_run(test, &none, false);
}

/* Drops and duplicates both ways: retransmissions, re-ACKs, resends. */
static void rmpp_race_faults(struct kunit *test)
{
	struct kmad_sim_faults faults = { .drop_pct = 2, .dup_pct = 4 };

	rr_run(test, &faults, false);
}

/* The same with some sends canceled mid-transfer. */
static void rmpp_race_faults_cancel(struct kunit *test)
{
	struct kmad_sim_faults faults = { .drop_pct = 2, .dup_pct = 4 };

	rr_run(test, &faults, true);
}

static struct kunit_case rmpp_race_cases[] = {
	KUNIT_CASE(rmpp_race_clean),
	KUNIT_CASE(rmpp_race_faults),
	KUNIT_CASE(rmpp_race_faults_cancel),
	{}
};

static struct kunit_suite rmpp_race_suite = {
	.name = "kmad_rmpp_race",
	.exit = rr_exit,
	.test_cases = rmpp_race_cases,
};

kunit_test_suite(rmpp_race_suite);

MODULE_DESCRIPTION("kmad RMPP end to end under load, drops and duplicates");
MODULE_LICENSE("GPL");
