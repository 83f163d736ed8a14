// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_trace: the tracepoints fire, in order, at each step of a send.
 */

#include <linux/trace_events.h>

#include "kmad_test.h"
#include "trace.h"

enum kt_tp {
	KT_TP_POST, KT_TP_HW_DONE, KT_TP_RESP_MATCH, KT_TP_TIMEOUT,
	KT_TP_RETRY, KT_TP_CANCEL, KT_TP_CALLBACK, KT_TP_RECV,
};

#define KT_TP_MAX 32

struct kt_tp_log {
	spinlock_t lock;	/* guards n and ev */
	int n;
	enum kt_tp ev[KT_TP_MAX];
};

static struct kt_tp_log kt_tp;

/* Tracepoints fire under kmad's irq-safe locks: so is this one. */
static void kt_tp_add(enum kt_tp e)
{
	unsigned long flags;

	spin_lock_irqsave(&kt_tp.lock, flags);
	if (kt_tp.n < KT_TP_MAX)
		kt_tp.ev[kt_tp.n] = e;
	kt_tp.n++;
	spin_unlock_irqrestore(&kt_tp.lock, flags);
}

#define KT_PROBE(name, tp)						\
static void kt_probe_##name(void *data, const struct kmad_send_wr *wr)	\
{									\
	kt_tp_add(tp);							\
}

KT_PROBE(post, KT_TP_POST)
KT_PROBE(hw_done, KT_TP_HW_DONE)
KT_PROBE(resp_match, KT_TP_RESP_MATCH)
KT_PROBE(timeout, KT_TP_TIMEOUT)
KT_PROBE(retry, KT_TP_RETRY)
KT_PROBE(cancel, KT_TP_CANCEL)
KT_PROBE(callback, KT_TP_CALLBACK)

static void kt_probe_recv(void *data, const struct kmad_qp_info *qpi,
			  const struct kmad_mad *mad, u16 slid)
{
	kt_tp_add(KT_TP_RECV);
}

static int kt_trace_init(struct kunit *test)
{
	int ret = kt_fix_init(test);

	if (ret)
		return ret;
	spin_lock_init(&kt_tp.lock);
	kt_tp.n = 0;
	ret = register_trace_kmad_post(kt_probe_post, NULL) ?:
	      register_trace_kmad_send_hw_done(kt_probe_hw_done, NULL) ?:
	      register_trace_kmad_resp_match(kt_probe_resp_match, NULL) ?:
	      register_trace_kmad_timeout(kt_probe_timeout, NULL) ?:
	      register_trace_kmad_retry(kt_probe_retry, NULL) ?:
	      register_trace_kmad_cancel(kt_probe_cancel, NULL) ?:
	      register_trace_kmad_send_callback(kt_probe_callback, NULL) ?:
	      register_trace_kmad_recv(kt_probe_recv, NULL);
	return ret;
}

static void kt_trace_exit(struct kunit *test)
{
	unregister_trace_kmad_post(kt_probe_post, NULL);
	unregister_trace_kmad_send_hw_done(kt_probe_hw_done, NULL);
	unregister_trace_kmad_resp_match(kt_probe_resp_match, NULL);
	unregister_trace_kmad_timeout(kt_probe_timeout, NULL);
	unregister_trace_kmad_retry(kt_probe_retry, NULL);
	unregister_trace_kmad_cancel(kt_probe_cancel, NULL);
	unregister_trace_kmad_send_callback(kt_probe_callback, NULL);
	unregister_trace_kmad_recv(kt_probe_recv, NULL);
	tracepoint_synchronize_unregister();
	kt_fix_exit(test);
}

static void kt_expect_trace(struct kunit *test, const enum kt_tp *want, int n)
{
	int i;

	KUNIT_ASSERT_EQ(test, kt_tp.n, n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, kt_tp.ev[i], want[i], "event %d", i);
}

/* Request and response: post, send completion, receive, match, callback. */
static void trace_request_response(struct kunit *test)
{
	static const enum kt_tp want[] = {
		KT_TP_POST, KT_TP_HW_DONE, KT_TP_RECV, KT_TP_RESP_MATCH,
		KT_TP_CALLBACK,
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       1, 1000, 0);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	kt_expect_trace(test, want, ARRAY_SIZE(want));
	kmad_free_send_buf(buf);
}

/* A timeout with one retry: the retry, the second transmission, then the
 * timeout and the callback.
 */
static void trace_retry_then_timeout(struct kunit *test)
{
	static const enum kt_tp want[] = {
		KT_TP_POST, KT_TP_HW_DONE, KT_TP_RETRY, KT_TP_HW_DONE,
		KT_TP_TIMEOUT, KT_TP_CALLBACK,
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       2, 10, 1);

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 10);
	kt_settle(f);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kmad_sim_advance_clock(f->fab, 10);
	kt_settle(f);
	kt_expect_trace(test, want, ARRAY_SIZE(want));
	kmad_free_send_buf(buf);
}

/* A cancel is traced, and so is the callback at the send completion. */
static void trace_cancel(struct kunit *test)
{
	static const enum kt_tp want[] = {
		KT_TP_POST, KT_TP_CANCEL, KT_TP_HW_DONE, KT_TP_CALLBACK,
	};
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       3, 1000, 0);

	kt_post(f, buf);
	KUNIT_ASSERT_EQ(test, kmad_cancel_send(buf), 0);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_expect_trace(test, want, ARRAY_SIZE(want));
	kmad_free_send_buf(buf);
}

/*
 * Each event's format must be one perf and trace-cmd (libtraceevent) can
 * decode: no call of a kmad function (which they do not have) and no enum
 * name left (TRACE_DEFINE_ENUM() turns them into numbers).  Before, the
 * send events' format called kmad_send_state_name(): perf printed
 * "[FAILED TO PARSE]".
 */
static void trace_format_decodable(struct kunit *test)
{
	static const char *const events[] = {
		"kmad_post", "kmad_send_hw_done", "kmad_resp_match",
		"kmad_timeout", "kmad_retry", "kmad_cancel",
		"kmad_send_callback", "kmad_recv",
	};
	struct trace_event_file *file;
	const char *fmt;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(events); i++) {
		file = trace_get_event_file(NULL, "kmad", events[i]);
		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "%s", events[i]);
		fmt = file->event_call->print_fmt;
		KUNIT_EXPECT_NOT_NULL_MSG(test, fmt, "%s", events[i]);
		if (fmt) {
			KUNIT_EXPECT_NULL_MSG(test, strstr(fmt, "kmad_"),
					      "%s: %s", events[i], fmt);
			KUNIT_EXPECT_NULL_MSG(test, strstr(fmt, "KMAD_"),
					      "%s: %s", events[i], fmt);
		}
		trace_put_event_file(file);
	}
}

static struct kunit_case trace_cases[] = {
	KUNIT_CASE(trace_request_response),
	KUNIT_CASE(trace_retry_then_timeout),
	KUNIT_CASE(trace_cancel),
	KUNIT_CASE(trace_format_decodable),
	{}
};

static struct kunit_suite trace_suite = {
	.name = "kmad_trace",
	.init = kt_trace_init,
	.exit = kt_trace_exit,
	.test_cases = trace_cases,
};

kunit_test_suites(&trace_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's tracepoints");
MODULE_LICENSE("GPL");
