// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_debugfs: the statistics and outstanding-send files, read back
 * through the VFS as an admin would read them.
 */

#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "kmad_test.h"

#define KT_READ_MAX	32768

/* A formatted string freed with the test (6.1 has no kunit_kasprintf). */
static __printf(2, 3) char *kt_sprintf(struct kunit *test, const char *fmt,
				       ...)
{
	char *s = kunit_kzalloc(test, 256, GFP_KERNEL);
	va_list ap;

	if (s) {
		va_start(ap, fmt);
		vsnprintf(s, 256, fmt, ap);
		va_end(ap);
	}
	return s;
}

/*
 * The text of /sys/kernel/debug/kmad/<dev>/port1/<file>.  The file must
 * exist (it is opened); its content is rendered by the same show function
 * into a buffer, since 6.1's debugfs proxy has no read_iter for
 * kernel_read().
 */
static char *kt_read_debugfs(struct kunit *test, struct kmad_port *port,
			     const char *file)
{
	struct seq_file m = { .private = port, .size = KT_READ_MAX };
	struct file *filp;
	char *path;

	path = kt_sprintf(test, "/sys/kernel/debug/kmad/%s/port1/%s",
			  kmad_port_dev_name(port), file);
	KUNIT_ASSERT_NOT_NULL(test, path);
	filp = filp_open(path, O_RDONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(filp), "cannot open %s", path);
	filp_close(filp, NULL);

	m.buf = kunit_kzalloc(test, KT_READ_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	if (!strcmp(file, "stats"))
		kmad_debugfs_stats_show(&m, NULL);
	else
		kmad_debugfs_sends_show(&m, NULL);
	KUNIT_ASSERT_FALSE(test, seq_has_overflowed(&m));
	KUNIT_ASSERT_GT(test, m.count, (size_t)0);
	return m.buf;
}

/* The sends file lists an outstanding send with its TID, state and refs;
 * it disappears from the list once it ends.
 */
static void debugfs_sends_lists_outstanding(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       0x42, 1000, 2);
	char *text, *line;

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	line = kt_sprintf(test, "%#x %#018llx wait_resp 1 2 ",
			  f->agent->hi_tid,
			  ((u64)f->agent->hi_tid << 32) | 0x42);
	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, line), "%s", text);

	KUNIT_ASSERT_EQ(test, kmad_cancel_send(buf), 0);
	kt_settle(f);
	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	KUNIT_EXPECT_NULL_MSG(test, strstr(text, "wait_resp"), "%s", text);
	kmad_free_send_buf(buf);
}

/*
 * The sends file walks both of an agent's lists: @sends, which holds a
 * send backlogged by flow control (BACKLOG, its two references, no
 * deadline: -1), and @waiting, which holds one waiting for its response
 * (WAIT_RESP, its deadline 1000 ms away, with the clock not moved).
 * Leaving out either list hides its send.
 */
static void debugfs_sends_lists_backlog_and_waiting(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	u64 hi = (u64)f->agent->hi_tid << 32;
	struct kmad_send_buf *a, *b;
	char *text, *line;

	kmad_agent_set_flow_limit(f->agent, 1);
	a = kt_request(f, f->agent, KMAD_METHOD_GET, 0x44, 1000, 1);
	b = kt_request(f, f->agent, KMAD_METHOD_GET, 0x45, 1000, 0);
	kt_post(f, a);
	kt_post(f, b);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	KUNIT_EXPECT_EQ(test, kt_state(a, NULL), KMAD_SS_WAIT_RESP);
	KUNIT_EXPECT_EQ(test, kt_state(b, NULL), KMAD_SS_BACKLOG);

	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	line = kt_sprintf(test, "\n%#x %#018llx wait_resp 1 1 1000\n",
			  f->agent->hi_tid, hi | 0x44);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, line), "%s", text);
	line = kt_sprintf(test, "\n%#x %#018llx backlog 2 0 -1\n",
			  f->agent->hi_tid, hi | 0x45);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, line), "%s", text);

	/* The backlogged one first: ending A would send B. */
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(b), 0);
	KUNIT_EXPECT_EQ(test, kmad_cancel_send(a), 0);
	kt_settle(f);
	KUNIT_EXPECT_EQ(test, kt_events(f), 2);
	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	KUNIT_EXPECT_NULL_MSG(test, strstr(text, "wait_resp"), "%s", text);
	KUNIT_EXPECT_NULL_MSG(test, strstr(text, "backlog"), "%s", text);
	kmad_free_send_buf(a);
	kmad_free_send_buf(b);
}

/* debugfs_sends_overdue_is_zero: the sends file as the agent's work found it. */
static struct kmad_agent_priv *df_hook_agent;
static struct kmad_port *df_hook_port;
static char *df_hook_text;
static atomic_t df_hooked;

/* kmad_test_agent_work_hook: render the file once, before any expiry. */
static void df_render_hook(struct kmad_agent_priv *agent)
{
	struct seq_file m = {
		.private = READ_ONCE(df_hook_port),
		.size = KT_READ_MAX,
	};

	if (agent != READ_ONCE(df_hook_agent) ||
	    atomic_cmpxchg(&df_hooked, 0, 1))
		return;
	m.buf = df_hook_text;
	kmad_debugfs_sends_show(&m, NULL);
}

/*
 * The deadline column counts down on the provider's clock (600 ms left
 * after 400), and a deadline that has passed reads 0, not the negative
 * difference as an unsigned one (about 2^32 ms): the file is rendered from
 * the agent's work as it starts, after the clock moved 500 ms past the
 * deadline and before the work expires the send.
 */
static void debugfs_sends_overdue_is_zero(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       0x46, 1000, 0);
	u64 tid = ((u64)f->agent->hi_tid << 32) | 0x46;
	char *text, *line;

	df_hook_text = kunit_kzalloc(test, KT_READ_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, df_hook_text);
	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_advance(f, 400);
	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	line = kt_sprintf(test, "\n%#x %#018llx wait_resp 1 0 600\n",
			  f->agent->hi_tid, tid);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, line), "%s", text);

	atomic_set(&df_hooked, 0);
	WRITE_ONCE(df_hook_port, f->port[KT_DEV0]);
	WRITE_ONCE(df_hook_agent, kmad_agent_priv(f->agent));
	WRITE_ONCE(kmad_test_agent_work_hook, df_render_hook);
	kt_advance(f, 1100);
	WRITE_ONCE(kmad_test_agent_work_hook, NULL);
	WRITE_ONCE(df_hook_agent, NULL);

	KUNIT_EXPECT_EQ(test, atomic_read(&df_hooked), 1);
	line = kt_sprintf(test, "\n%#x %#018llx wait_resp 1 0 0\n",
			  f->agent->hi_tid, tid);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(df_hook_text, line), "%s",
				  df_hook_text);
	/* The same run of the work then ended it. */
	kt_expect_only_send(f, buf, KMAD_SEND_RESP_TIMEOUT);
	kmad_free_send_buf(buf);
}

/*
 * An agent's sends are listed up to 256, then one line says the rest are
 * left out: printing them all, with the agent's lock held and interrupts
 * off, held up its CQ drain for as long as 65536 lines took (before, all
 * 300 were listed).
 */
static void debugfs_sends_capped(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	unsigned int i, lines = 0;
	char *text, *more;

	/* The fabric's removal at exit flushes them; the handler frees. */
	f->free_on_send = true;
	for (i = 0; i < 300; i++)
		kt_post(f, kt_request(f, f->agent, KMAD_METHOD_GET, 0x100 + i,
				      1000, 0));
	text = kt_read_debugfs(test, f->port[KT_DEV0], "sends");
	for (i = 0; text[i]; i++)
		lines += text[i] == '\n';
	/* The header, 256 sends, the note. */
	KUNIT_EXPECT_EQ(test, lines, 258U);
	more = kt_sprintf(test, "\n# agent %#x: more than 256 sends, the rest not shown\n",
			  f->agent->hi_tid);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, more), "%s", text);
}

/* The stats file counts what happened, by name, per port and per agent. */
static void debugfs_stats_count(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf = kt_request(f, f->agent, KMAD_METHOD_GET,
					       0x43, 1000, 0);
	char *text, *agent;

	kt_post(f, buf);
	kt_complete(f, KT_DEV0, KMAD_WC_SUCCESS, false);
	kt_respond(f, buf, 0);
	kt_event(f, KT_DEV0);
	text = kt_read_debugfs(test, f->port[KT_DEV0], "stats");
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "\nresponses_matched 1\n"),
				  "%s", text);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "\ndropped_short 0\n"),
				  "%s", text);
	/* A drop counter for each verdict but "ok", which drops nothing. */
	KUNIT_EXPECT_NULL_MSG(test, strstr(text, "dropped_ok"), "%s", text);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, "\nrecv_errors 0\n"),
				  "%s", text);
	agent = kt_sprintf(test,
			   "agent %#x qp1 class 0x00 posted 1 completed 1 responses 1 ",
			   f->agent->hi_tid);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(text, agent), "%s", text);
	kmad_free_send_buf(buf);
}

static struct kunit_case debugfs_cases[] = {
	KUNIT_CASE(debugfs_sends_lists_outstanding),
	KUNIT_CASE(debugfs_sends_lists_backlog_and_waiting),
	KUNIT_CASE(debugfs_sends_overdue_is_zero),
	KUNIT_CASE(debugfs_sends_capped),
	KUNIT_CASE(debugfs_stats_count),
	{}
};

static struct kunit_suite debugfs_suite = {
	.name = "kmad_debugfs",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = debugfs_cases,
};

kunit_test_suites(&debugfs_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's debugfs files");
MODULE_LICENSE("GPL");
