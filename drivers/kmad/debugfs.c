// SPDX-License-Identifier: GPL-2.0
/*
 * kmad debugfs: /sys/kernel/debug/kmad/<device>/port<N>/
 *   stats   port counters, drops by reason, the address handle cache's
 *           size, each QP's hardware number, one line of counters per
 *           agent
 *   sends   every outstanding send: agent, TID, state, refs, deadline
 *   flow    solicited flow control, one line per agent: its limit, the
 *           slots held, the sends backlogged now, at most, and in all
 */

#include <kunit/visibility.h>
#include <linux/debugfs.h>
#include <linux/jiffies.h>
#include <linux/seq_file.h>

#include "kmad_priv.h"

static const char *const port_stat_names[KMAD_PSTAT_COUNT] = {
	[KMAD_PSTAT_SENT] = "sent",
	[KMAD_PSTAT_SEND_ERRORS] = "send_errors",
	[KMAD_PSTAT_RECEIVED] = "received",
	[KMAD_PSTAT_WRONG_QP] = "dropped_wrong_qp",
	[KMAD_PSTAT_SMI_DISCARDS] = "dropped_smi",
	[KMAD_PSTAT_RESP_MATCHED] = "responses_matched",
	[KMAD_PSTAT_RESP_UNMATCHED] = "responses_unmatched",
	[KMAD_PSTAT_RESP_UNSOLICITED] = "responses_unsolicited",
	[KMAD_PSTAT_REQ_DISPATCHED] = "requests_dispatched",
	[KMAD_PSTAT_REQ_ANSWERED] = "requests_answered_unsupported",
	[KMAD_PSTAT_REQ_DROPPED] = "requests_dropped",
	[KMAD_PSTAT_REQ_BACKLOG_DROPPED] = "requests_dropped_backlog",
	[KMAD_PSTAT_TIMEOUTS] = "timeouts",
	[KMAD_PSTAT_RETRIES] = "retries",
	[KMAD_PSTAT_CANCELED] = "canceled",
	[KMAD_PSTAT_FLUSHED] = "flushed",
	[KMAD_PSTAT_RECV_FLUSHED] = "recv_flushed",
	[KMAD_PSTAT_RECV_ERRORS] = "recv_errors",
	[KMAD_PSTAT_RECV_NOBUF] = "recv_alloc_failures",
	[KMAD_PSTAT_RECV_POST_FAILED] = "recv_post_failures",
	[KMAD_PSTAT_QP_RECOVERIES] = "qp_recoveries",
	[KMAD_PSTAT_CQ_EVENTS] = "cq_events",
	[KMAD_PSTAT_CQ_EMPTY_EVENTS] = "cq_empty_drains",
	[KMAD_PSTAT_CQ_REQUEUES] = "cq_budget_requeues",
	[KMAD_PSTAT_RESP_MISADDRESSED] = "responses_misaddressed",
	[KMAD_PSTAT_AH_HITS] = "ah_cache_hits",
	[KMAD_PSTAT_AH_MISSES] = "ah_cache_misses",
	[KMAD_PSTAT_AH_FAILURES] = "ah_create_failures",
	[KMAD_PSTAT_AH_DESTROYED] = "ah_destroyed",
	[KMAD_PSTAT_RMPP_BUFFERS] = "rmpp_recv_buffers",
	[KMAD_PSTAT_RMPP_REASSEMBLED] = "rmpp_reassembled",
	[KMAD_PSTAT_RMPP_ACKS] = "rmpp_acks_sent",
	[KMAD_PSTAT_RMPP_DUPLICATES] = "rmpp_duplicates",
	[KMAD_PSTAT_RMPP_OUT_OF_ORDER] = "rmpp_out_of_order",
	[KMAD_PSTAT_RMPP_ABORTS] = "rmpp_recv_aborts_sent",
	[KMAD_PSTAT_RMPP_RESX] = "rmpp_recv_refused_resx",
	[KMAD_PSTAT_RMPP_TIMEOUTS] = "rmpp_recv_timeouts",
	[KMAD_PSTAT_RMPP_REMOTE_ENDED] = "rmpp_recv_ended_by_sender",
	[KMAD_PSTAT_RMPP_DROPPED] = "rmpp_recv_dropped",
};

static const char *const agent_stat_names[KMAD_ASTAT_COUNT] = {
	[KMAD_ASTAT_POSTED] = "posted",
	[KMAD_ASTAT_COMPLETED] = "completed",
	[KMAD_ASTAT_RESP_MATCHED] = "responses",
	[KMAD_ASTAT_UNSOLICITED] = "unsolicited",
	[KMAD_ASTAT_TIMEOUTS] = "timeouts",
	[KMAD_ASTAT_RETRIES] = "retries",
	[KMAD_ASTAT_CANCELED] = "canceled",
	[KMAD_ASTAT_FLUSHED] = "flushed",
};

VISIBLE_IF_KUNIT int kmad_debugfs_stats_show(struct seq_file *m, void *v)
{
	struct kmad_port *port = m->private;
	struct kmad_agent_priv *agent;
	struct kmad_agent_stats st;
	unsigned long flags;
	unsigned int ahs;
	int i;

	for (i = 0; i < KMAD_PSTAT_COUNT; i++)
		seq_printf(m, "%s %lld\n", port_stat_names[i],
			   atomic64_read(&port->stats[i]));
	spin_lock_irqsave(&port->ah.lock, flags);
	ahs = port->ah.count;
	spin_unlock_irqrestore(&port->ah.lock, flags);
	seq_printf(m, "ah_cached %u\n", ahs);
	for (i = 0; i < ARRAY_SIZE(port->qpi); i++)
		if (kmad_qp_exists(&port->qpi[i]))
			seq_printf(m, "qp%u_hw_qpn %u\n", port->qpi[i].qp.qpn,
				   kmad_qp_hw_num(&port->qpi[i].qp));
	/* Every verdict but the first, KMAD_MAD_VERDICT_OK, drops. */
	for (i = KMAD_MAD_VERDICT_OK + 1; i < KMAD_MAD_VERDICT_COUNT; i++)
		seq_printf(m, "dropped_%s %lld\n", kmad_mad_verdict_name(i),
			   atomic64_read(&port->drops[i]));

	rcu_read_lock();
	list_for_each_entry_rcu(agent, &port->agents, port_entry) {
		seq_printf(m, "agent %#x qp%u class %#04x%s", agent->agent.hi_tid,
			   agent->qpi->qp.qpn, agent->reg.mgmt_class,
			   agent->internal ? " (kmad)" : "");
		for (i = 0; i < KMAD_ASTAT_COUNT; i++)
			seq_printf(m, " %s %lld", agent_stat_names[i],
				   atomic64_read(&agent->stats[i]));
		kmad_agent_get_stats(&agent->agent, &st);
		seq_printf(m, " timeout_late_max_us %llu work_runs %lu\n",
			   st.timeout_late_max_us,
			   READ_ONCE(agent->work_runs));
	}
	rcu_read_unlock();
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_debugfs_stats_show);
DEFINE_SHOW_ATTRIBUTE(kmad_debugfs_stats);

/*
 * The most sends shown per agent: the lines are printed with the agent's
 * lock held and interrupts off (and again each time seq_file doubles its
 * buffer), so an agent with 65536 outstanding must not hold off its CQ
 * drain and posters for the whole list.
 */
#define KMAD_DEBUGFS_SENDS_MAX	256

/*
 * The sends of one of @agent's lists (kmad_priv.h), under its lock, while
 * *@left lines remain.  Return: false if some were left out.
 */
static bool sends_show_list(struct seq_file *m, struct kmad_agent_priv *agent,
			    struct list_head *list, u64 now,
			    unsigned int *left)
{
	struct kmad_send_wr *wr;

	lockdep_assert_held(&agent->lock);
	list_for_each_entry(wr, list, agent_entry) {
		long long ms = -1;
		u64 at;

		if (!*left)
			return false;
		(*left)--;
		/* Outside WAIT_RESP these bytes are the QP list's (Q). */
		if (wr->state == KMAD_SS_WAIT_RESP) {
			at = wr->deadline_node.expires;
			ms = jiffies_to_msecs(time_after64(at, now) ?
					      at - now : 0);
		}
		seq_printf(m, "%#x %#018llx %s %u %u %lld\n",
			   agent->agent.hi_tid, wr->tid.tid,
			   kmad_send_state_name(wr->state), wr->refs,
			   wr->retries_left, ms);
	}
	return true;
}

VISIBLE_IF_KUNIT int kmad_debugfs_sends_show(struct seq_file *m, void *v)
{
	struct kmad_port *port = m->private;
	struct kmad_agent_priv *agent;
	u64 now = kmad_now(port);
	unsigned long flags;
	unsigned int left;
	bool all;

	seq_puts(m, "agent tid state refs retries_left deadline_ms\n");
	rcu_read_lock();
	list_for_each_entry_rcu(agent, &port->agents, port_entry) {
		left = KMAD_DEBUGFS_SENDS_MAX;
		spin_lock_irqsave(&agent->lock, flags);
		all = sends_show_list(m, agent, &agent->sends, now, &left) &&
		      sends_show_list(m, agent, &agent->waiting, now, &left);
		spin_unlock_irqrestore(&agent->lock, flags);
		if (!all)
			seq_printf(m, "# agent %#x: more than %u sends, the rest not shown\n",
				   agent->agent.hi_tid, KMAD_DEBUGFS_SENDS_MAX);
	}
	rcu_read_unlock();
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_debugfs_sends_show);
DEFINE_SHOW_ATTRIBUTE(kmad_debugfs_sends);

VISIBLE_IF_KUNIT int kmad_debugfs_flow_show(struct seq_file *m, void *v)
{
	struct kmad_port *port = m->private;
	struct kmad_agent_priv *agent;

	seq_puts(m, "agent qp class limit outstanding backlog backlog_max backlogged\n");
	rcu_read_lock();
	list_for_each_entry_rcu(agent, &port->agents, port_entry)
		kmad_flow_show(m, agent);
	rcu_read_unlock();
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_debugfs_flow_show);
DEFINE_SHOW_ATTRIBUTE(kmad_debugfs_flow);

void kmad_debugfs_device_add(struct kmad_device *dev)
{
	char name[16];
	int i;

	dev->debugfs = debugfs_create_dir(dev->name, kmad_debugfs_root);
	for (i = 0; i < dev->num_ports; i++) {
		struct kmad_port *port = &dev->ports[i];

		snprintf(name, sizeof(name), "port%u", port->port_num);
		port->debugfs = debugfs_create_dir(name, dev->debugfs);
		debugfs_create_file("stats", 0444, port->debugfs, port,
				    &kmad_debugfs_stats_fops);
		debugfs_create_file("sends", 0444, port->debugfs, port,
				    &kmad_debugfs_sends_fops);
		debugfs_create_file("flow", 0444, port->debugfs, port,
				    &kmad_debugfs_flow_fops);
	}
}

void kmad_debugfs_device_remove(struct kmad_device *dev)
{
	debugfs_remove_recursive(dev->debugfs);
	dev->debugfs = NULL;
}
