// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_discover: the discovery engine.
 *
 * A run is breadth first and batched.  Each round sends NodeInfo to every
 * directed route of the frontier (the local node first, with hop count
 * 0); a NodeGUID not seen before makes a new node, and every answer
 * behind a known port makes a link.  The new nodes then get one batch of
 * NodeDescription and PortInfo queries (switches: ports 0-N, CAs: 1-N),
 * and every linked switch port whose peer is not known yet (or the local
 * CA's own port) is a directed route of the next frontier.  Directed
 * routes do not pass through CAs, so only switches are walked through.
 * Last, PortCounters is read from the PMA of every switch port that is
 * linked or up, and of every CA port whose PortInfo came back and that is
 * linked, up or the entry port (kd_counters_lid()), LID routed to the LID
 * PortInfo gave.
 *
 * Queries.  A batch is a list of queries that kd_pump() posts, keeping
 * at most opts.window in flight.  Each transmission is one kmad send with
 * the run's timeout and no retries of kmad's own: a timeout or local send
 * error puts the query back at the head of the queue, up to opts.retries
 * times, so that every retry and timeout is counted here.  The send
 * handler finishes the query and posts the next ones; the runner sleeps
 * until every query of the batch has finished.
 *
 * Locking.  &kmad_discover.lock (a spinlock, process context only) guards
 * the queue, the posted list, the in-flight and outstanding counts, the
 * stop flag, the counters of the result and every field of a query while
 * its batch runs.  kmad_post_send() and kmad_cancel_send() are called
 * with it held: they do not sleep and never call a handler, and kmad calls
 * the handlers with none of its locks held, so the order is always this
 * lock, then kmad's.  The node, link and failure arrays, and the result's
 * limit counts (nodes_dropped, hops_limited), belong to the runner alone.
 */

#define pr_fmt(fmt) "kmad_discover: " fmt

#include <kunit/visibility.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/wait.h>

#include <kmad/mad.h>
#include <kmad/wire.h>

#include "kmad_discover.h"

/* SMP and PMA attributes both start at byte 64 of the MAD. */
#define KD_DATA_OFFSET		64
#define KD_DATA_SIZE		64

/* PortState and PortPhysicalState values (IBTA 14.2.5.6). */
#define KD_PORT_DOWN		1
#define KD_PORT_ACTIVE_DEFER	5
#define KD_PHYS_LINK_UP		5

/* NodeInfo (IBTA 14.2.5.3); the GUIDs are not naturally aligned. */
struct kd_node_info {
	u8	base_version;
	u8	class_version;
	u8	node_type;
	u8	num_ports;
	__be64	sys_guid;
	__be64	node_guid;
	__be64	port_guid;
	__be16	partition_cap;
	__be16	device_id;
	__be32	revision;
	u8	local_port_num;
	u8	vendor_id[3];
} __packed;

static_assert(offsetof(struct kd_node_info, sys_guid) == 4);
static_assert(offsetof(struct kd_node_info, node_guid) == 12);
static_assert(offsetof(struct kd_node_info, port_guid) == 20);
static_assert(offsetof(struct kd_node_info, device_id) == 30);
static_assert(offsetof(struct kd_node_info, revision) == 32);
static_assert(offsetof(struct kd_node_info, local_port_num) == 36);
static_assert(sizeof(struct kd_node_info) == 40);

/* PortInfo (IBTA 14.2.5.6), the fields up to byte 36. */
struct kd_port_info {
	__be64	mkey;
	__be64	gid_prefix;
	__be16	lid;
	__be16	sm_lid;
	__be32	cap_mask;
	__be16	diag_code;
	__be16	mkey_lease_period;
	u8	local_port_num;
	u8	link_width_enabled;
	u8	link_width_supported;
	u8	link_width_active;
	u8	speed_supported_state;	/* LinkSpeedSupported 7:4, PortState 3:0 */
	u8	phys_state_down_def;	/* PortPhysicalState 7:4, LinkDownDefault 3:0 */
	u8	mkey_prot_lmc;		/* M_KeyProtect 7:6, LMC 2:0 */
	u8	speed_active_enabled;	/* LinkSpeedActive 7:4, Enabled 3:0 */
};

static_assert(offsetof(struct kd_port_info, lid) == 16);
static_assert(offsetof(struct kd_port_info, local_port_num) == 28);
static_assert(offsetof(struct kd_port_info, link_width_active) == 31);
static_assert(offsetof(struct kd_port_info, speed_supported_state) == 32);
static_assert(offsetof(struct kd_port_info, speed_active_enabled) == 35);
static_assert(sizeof(struct kd_port_info) <= KD_DATA_SIZE);

/* PortCounters (IBTA 16.1.3.5). */
struct kd_port_counters {
	u8	reserved;
	u8	port_select;
	__be16	counter_select;
	__be16	symbol_errors;
	u8	link_error_recovery;
	u8	link_downed;
	__be16	rcv_errors;
	__be16	rcv_remote_phys_errors;
	__be16	rcv_switch_relay_errors;
	__be16	xmit_discards;
	u8	xmit_constraint_errors;
	u8	rcv_constraint_errors;
	u8	reserved1;
	u8	link_integrity_overrun;	/* LocalLinkIntegrity 7:4, Overrun 3:0 */
	__be16	reserved2;
	__be16	vl15_dropped;
	__be32	xmit_data;
	__be32	rcv_data;
	__be32	xmit_pkts;
	__be32	rcv_pkts;
	__be32	xmit_wait;
} __packed;

static_assert(offsetof(struct kd_port_counters, port_select) == 1);
static_assert(offsetof(struct kd_port_counters, symbol_errors) == 4);
static_assert(offsetof(struct kd_port_counters, rcv_errors) == 8);
static_assert(offsetof(struct kd_port_counters, xmit_discards) == 14);
static_assert(offsetof(struct kd_port_counters, link_integrity_overrun) == 19);
static_assert(offsetof(struct kd_port_counters, vl15_dropped) == 22);
static_assert(offsetof(struct kd_port_counters, xmit_data) == 24);
static_assert(offsetof(struct kd_port_counters, xmit_wait) == 40);
static_assert(sizeof(struct kd_port_counters) == 44);

/**
 * struct kd_query - one query of a batch.
 * @entry: on &kmad_discover.queue or &kmad_discover.posted.
 * @type: what it asks.
 * @node: the node it is about (-1 for NodeInfo).
 * @port: PortInfo/PortCounters: the port; NodeInfo: the port of @parent.
 * @parent: NodeInfo: the node it was sent through, -1 for the local node.
 * @hops: directed route length.
 * @path: directed route, @path[1..@hops].
 * @dlid: PortCounters: destination LID.
 * @tries: transmissions so far.
 * @buf: the send while posted.
 * @answered: a response arrived for the current transmission.
 * @resp_ok: the response is a GetResp of the attribute asked for.
 * @mad_status: the response's Status (D bit masked off).
 * @err: outcome, once finished: 0 or a negative errno.
 * @data: the response's attribute.
 */
struct kd_query {
	struct list_head entry;
	enum kmad_discover_query type;
	int node;
	u8 port;
	int parent;
	u8 hops;
	u8 path[KMAD_SMP_DR_PATH_SIZE];
	u16 dlid;
	unsigned int tries;
	struct kmad_send_buf *buf;
	bool answered;
	bool resp_ok;
	u16 mad_status;
	int err;
	u8 data[KD_DATA_SIZE];
};

/**
 * struct kmad_discover - a discovery on one port.
 * @port: the port.
 * @opts: options, checked.
 * @smi: send-only agent on QP0.
 * @gsi: send-only agent on QP1.
 * @lock: see "Locking" above.
 * @wq: the runner waits here for its batch.
 * @queue: queries waiting to be posted.
 * @posted: queries with a send in flight.
 * @inflight: queries taken off @queue and not yet back or finished.
 * @outstanding: queries of the current batch not finished.
 * @stop: set by kmad_discover_stop(); nothing is posted any more.
 * @ran: kmad_discover_run() was called.
 * @tid: lower half of the next TransactionID.
 * @nodes_cap: allocated length of the result's nodes.
 * @links_cap: allocated length of the result's links.
 * @failures_cap: allocated length of the result's failures.
 * @res: the result.
 */
struct kmad_discover {
	struct kmad_port *port;
	struct kmad_discover_opts opts;
	struct kmad_agent *smi;
	struct kmad_agent *gsi;
	spinlock_t lock;	/* see "Locking" above */
	wait_queue_head_t wq;
	struct list_head queue;
	struct list_head posted;
	unsigned int inflight;
	unsigned int outstanding;
	bool stop;
	bool ran;
	atomic_t tid;
	unsigned int nodes_cap;
	unsigned int links_cap;
	unsigned int failures_cap;
	struct kmad_discover_result res;
};

static const char *const kd_query_names[] = {
	[KMAD_DISCOVER_Q_NODE_INFO] = "NodeInfo",
	[KMAD_DISCOVER_Q_NODE_DESC] = "NodeDescription",
	[KMAD_DISCOVER_Q_PORT_INFO] = "PortInfo",
	[KMAD_DISCOVER_Q_PORT_COUNTERS] = "PortCounters",
};

/**
 * kmad_discover_query_name() - the attribute name of a query.
 * @query: the query.
 *
 * Return: a static string, "?" for an unknown value.
 */
const char *kmad_discover_query_name(enum kmad_discover_query query)
{
	if ((unsigned int)query >= ARRAY_SIZE(kd_query_names))
		return "?";
	return kd_query_names[query];
}
EXPORT_SYMBOL_GPL(kmad_discover_query_name);

static bool kd_is_smp(const struct kd_query *q)
{
	return q->type != KMAD_DISCOVER_Q_PORT_COUNTERS;
}

/* Context: d->lock held.  The query is off every list. */
static void kd_finish_locked(struct kmad_discover *d, struct kd_query *q,
			     int err)
{
	lockdep_assert_held(&d->lock);
	q->err = err;
	if (!--d->outstanding)
		wake_up(&d->wq);
}

/* A directed route of @q->hops hops; hop count 0 is the local node. */
static int kd_set_route(struct kmad_send_buf *buf, const struct kd_query *q)
{
	struct kmad_smp *smp = (struct kmad_smp *)buf->mad;

	if (q->hops)
		return kmad_send_buf_set_dr_path(buf, &q->path[1], q->hops);
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->hop_ptr = 0;
	smp->hop_cnt = 0;
	smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	return 0;
}

/* Allocate and fill the send for one transmission of @q. */
static struct kmad_send_buf *kd_build(struct kmad_discover *d,
				      struct kd_query *q)
{
	struct kmad_dest dest = { .dlid = KMAD_PERMISSIVE_LID };
	struct kmad_send_buf *buf;
	struct kmad_mad_hdr *hdr;
	u16 attr_id = 0;
	u32 attr_mod = 0;
	u8 *data;
	int ret;

	if (!kd_is_smp(q)) {
		dest.dlid = q->dlid;
		dest.remote_qpn = 1;
		dest.remote_qkey = KMAD_QP1_QKEY;
	}
	buf = kmad_alloc_send_buf(kd_is_smp(q) ? d->smi : d->gsi, &dest,
				  GFP_KERNEL);
	if (IS_ERR(buf))
		return buf;
	hdr = &buf->mad->mad_hdr;
	data = (u8 *)buf->mad + KD_DATA_OFFSET;
	hdr->base_version = KMAD_MGMT_BASE_VERSION;
	hdr->method = KMAD_METHOD_GET;
	/* kmad puts the agent's hi_tid in the upper half. */
	hdr->tid = cpu_to_be64((u32)atomic_inc_return(&d->tid));

	switch (q->type) {
	case KMAD_DISCOVER_Q_NODE_INFO:
		attr_id = KMAD_SMP_ATTR_NODE_INFO;
		break;
	case KMAD_DISCOVER_Q_NODE_DESC:
		attr_id = KMAD_SMP_ATTR_NODE_DESC;
		break;
	case KMAD_DISCOVER_Q_PORT_INFO:
		attr_id = KMAD_SMP_ATTR_PORT_INFO;
		attr_mod = q->port;
		break;
	case KMAD_DISCOVER_Q_PORT_COUNTERS:
		attr_id = KMAD_PMA_ATTR_PORT_COUNTERS;
		((struct kd_port_counters *)data)->port_select = q->port;
		break;
	}
	hdr->attr_id = cpu_to_be16(attr_id);
	hdr->attr_mod = cpu_to_be32(attr_mod);

	if (kd_is_smp(q)) {
		hdr->class_version = KMAD_SMP_CLASS_VERSION;
		ret = kd_set_route(buf, q);
		if (ret) {
			kmad_free_send_buf(buf);
			return ERR_PTR(ret);
		}
	} else {
		hdr->mgmt_class = KMAD_MGMT_CLASS_PERF_MGMT;
		hdr->class_version = KMAD_PMA_CLASS_VERSION;
	}
	buf->timeout_ms = d->opts.timeout_ms;
	buf->retries = 0;
	buf->context[0] = q;
	return buf;
}

/*
 * Post queries from the queue while the window has room.  Called by the
 * runner and by the send handler; concurrent calls share the work.
 */
static void kd_pump(struct kmad_discover *d)
{
	struct kmad_send_buf *buf;
	struct kd_query *q;
	int ret;

	for (;;) {
		spin_lock(&d->lock);
		if (d->inflight >= d->opts.window || list_empty(&d->queue)) {
			spin_unlock(&d->lock);
			return;
		}
		q = list_first_entry(&d->queue, struct kd_query, entry);
		list_del_init(&q->entry);
		d->inflight++;
		spin_unlock(&d->lock);

		buf = kd_build(d, q);

		spin_lock(&d->lock);
		if (IS_ERR(buf)) {
			ret = PTR_ERR(buf);
		} else if (d->stop) {
			ret = -ECANCELED;
		} else {
			q->answered = false;
			q->buf = buf;
			list_add_tail(&q->entry, &d->posted);
			ret = kmad_post_send(buf);
			if (ret) {
				list_del_init(&q->entry);
				q->buf = NULL;
			} else {
				/* A resend counts once it is sent. */
				if (q->tries++)
					d->res.retries++;
				d->res.sends++;
			}
		}
		if (ret) {
			d->inflight--;
			kd_finish_locked(d, q, ret);
		}
		spin_unlock(&d->lock);
		if (ret && !IS_ERR(buf))
			kmad_free_send_buf(buf);
	}
}

static void kd_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	struct kmad_discover *d = agent->context;
	const struct kmad_mad_hdr *hdr = &wc->mad->mad_hdr;
	struct kd_query *q;
	u16 status;

	/* A send-only agent gets responses only, but be safe. */
	if (!request) {
		kmad_free_recv(wc);
		return;
	}
	q = request->context[0];
	status = be16_to_cpu(hdr->status);
	if (hdr->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		status &= KMAD_SMP_STATUS_MASK;

	spin_lock(&d->lock);
	q->answered = true;
	q->mad_status = status;
	/* The answer to what was asked: the attribute, its modifier (the
	 * port of a PortInfo) and, for PortCounters, the port selected.
	 */
	q->resp_ok = hdr->method == KMAD_METHOD_GET_RESP &&
		     hdr->attr_id == request->mad->mad_hdr.attr_id &&
		     hdr->attr_mod == request->mad->mad_hdr.attr_mod &&
		     (hdr->mgmt_class != KMAD_MGMT_CLASS_PERF_MGMT ||
		      ((const u8 *)wc->mad)[KD_DATA_OFFSET + 1] ==
		      ((const u8 *)request->mad)[KD_DATA_OFFSET + 1]);
	memcpy(q->data, (const u8 *)wc->mad + KD_DATA_OFFSET, KD_DATA_SIZE);
	spin_unlock(&d->lock);
	kmad_free_recv(wc);
}

static void kd_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct kmad_discover *d = agent->context;
	struct kd_query *q = wc->send_buf->context[0];
	bool retry = false;
	int err;

	/* Off the posted list before the buffer goes, so that
	 * kmad_discover_stop() never cancels a freed send.
	 */
	spin_lock(&d->lock);
	list_del_init(&q->entry);
	q->buf = NULL;
	switch (wc->status) {
	case KMAD_SEND_OK:
		if (!q->answered || !q->resp_ok)
			err = -EPROTO;
		else if (q->mad_status)
			err = -EREMOTEIO;
		else
			err = 0;
		break;
	case KMAD_SEND_RESP_TIMEOUT:
		d->res.timeouts++;
		err = -ETIMEDOUT;
		retry = true;
		break;
	case KMAD_SEND_LOCAL_ERROR:
		d->res.send_errors++;
		err = -EIO;
		retry = true;
		break;
	case KMAD_SEND_CANCELED:
		err = -ECANCELED;
		break;
	default:
		err = -ESHUTDOWN;
		break;
	}
	d->inflight--;
	if (retry && q->tries <= d->opts.retries && !d->stop)
		list_add(&q->entry, &d->queue);
	else
		kd_finish_locked(d, q, err);
	spin_unlock(&d->lock);
	kmad_free_send_buf(wc->send_buf);
	/* The query may be gone now: the runner frees a finished batch. */
	kd_pump(d);
}

static bool kd_batch_done(struct kmad_discover *d)
{
	bool done;

	spin_lock(&d->lock);
	done = !d->outstanding;
	spin_unlock(&d->lock);
	return done;
}

/*
 * Make room for @need entries of @size bytes in *@array (*@cap now).  The
 * array may outgrow what kmalloc gives (a round of probes through many
 * switch ports: 32768 of them are 6 MB, an allocation whose order the
 * page allocator refuses with a warning), so it is a kvmalloc one, freed
 * with kvfree().
 */
VISIBLE_IF_KUNIT int kmad_discover_grow(void **array, unsigned int *cap,
					unsigned int need, size_t size)
{
	unsigned int ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = max(need, *cap ? *cap * 2 : 8U);
	p = kvmalloc_array(ncap, size, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	if (*cap)
		memcpy(p, *array, (size_t)*cap * size);
	kvfree(*array);
	*array = p;
	*cap = ncap;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_discover_grow);

static void kd_add_failure(struct kmad_discover *d, const struct kd_query *q)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_failure *f;

	if (q->err == -ETIMEDOUT || q->err == -EIO)
		res->unreachable++;
	else
		res->errors++;
	if (kmad_discover_grow((void **)&res->failures, &d->failures_cap,
			       res->nr_failures + 1, sizeof(*f)))
		return;		/* counted, not listed */
	f = &res->failures[res->nr_failures++];
	f->query = q->type;
	f->node = q->node;
	f->port = q->port;
	f->parent = q->parent;
	f->hops = q->hops;
	memcpy(f->path, q->path, sizeof(f->path));
	f->dlid = q->dlid;
	f->err = q->err;
	f->mad_status = q->mad_status;
	f->tries = q->tries;
}

#if IS_ENABLED(CONFIG_KUNIT)
kmad_discover_test_hook_t kmad_discover_test_batch_hook;
EXPORT_SYMBOL_IF_KUNIT(kmad_discover_test_batch_hook);
#endif

/*
 * Run a batch of @n queries to the end.  Failed queries are recorded.
 * Return: 0, -ECANCELED if stopped, -ESHUTDOWN if the port went away.
 */
static int kd_run_batch(struct kmad_discover *d, struct kd_query *q,
			unsigned int n)
{
	bool stopped, gone = false;
	unsigned int i;

	if (!n)
		return 0;
#if IS_ENABLED(CONFIG_KUNIT)
	{
		kmad_discover_test_hook_t hook =
			READ_ONCE(kmad_discover_test_batch_hook);

		if (hook)
			hook(d, n);
	}
#endif
	spin_lock(&d->lock);
	if (d->stop) {
		spin_unlock(&d->lock);
		/* Not sent: no answer for the caller to take. */
		for (i = 0; i < n; i++)
			q[i].err = -ECANCELED;
		return -ECANCELED;
	}
	for (i = 0; i < n; i++) {
		q[i].tries = 0;
		q[i].buf = NULL;
		q[i].err = 0;
		list_add_tail(&q[i].entry, &d->queue);
	}
	d->outstanding = n;
	d->res.queries += n;
	spin_unlock(&d->lock);

	kd_pump(d);
	/* Idle, not uninterruptible: a long timeout is no hung task. */
	wait_event_idle(d->wq, kd_batch_done(d));

	spin_lock(&d->lock);
	stopped = d->stop;
	spin_unlock(&d->lock);
	for (i = 0; i < n; i++) {
		if (q[i].err == -ESHUTDOWN)
			gone = true;
		else if (q[i].err && q[i].err != -ECANCELED)
			kd_add_failure(d, &q[i]);
	}
	if (gone)
		return -ESHUTDOWN;
	return stopped ? -ECANCELED : 0;
}

static int kd_find_node(const struct kmad_discover *d, u64 guid)
{
	unsigned int i;

	for (i = 0; i < d->res.nr_nodes; i++)
		if (d->res.nodes[i].guid == guid)
			return i;
	return -1;
}

static int kd_add_node(struct kmad_discover *d, const struct kd_query *q,
		       const struct kd_node_info *ni)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_node *node;
	unsigned int i;
	int ret;

	ret = kmad_discover_grow((void **)&res->nodes, &d->nodes_cap,
				 res->nr_nodes + 1, sizeof(*node));
	if (ret)
		return ret;
	node = &res->nodes[res->nr_nodes];
	memset(node, 0, sizeof(*node));
	node->ports = kcalloc(ni->num_ports + 1, sizeof(*node->ports),
			      GFP_KERNEL);
	if (!node->ports)
		return -ENOMEM;
	for (i = 0; i <= ni->num_ports; i++)
		node->ports[i].peer = -1;
	node->guid = be64_to_cpu(ni->node_guid);
	node->port_guid = be64_to_cpu(ni->port_guid);
	node->sys_guid = be64_to_cpu(ni->sys_guid);
	node->type = ni->node_type;
	node->num_ports = ni->num_ports;
	node->device_id = be16_to_cpu(ni->device_id);
	node->revision = be32_to_cpu(ni->revision);
	node->vendor_id = ni->vendor_id[0] << 16 | ni->vendor_id[1] << 8 |
			  ni->vendor_id[2];
	node->entry_port = ni->local_port_num;
	node->hops = q->hops;
	memcpy(node->path, q->path, sizeof(node->path));
	return res->nr_nodes++;
}

/*
 * Record the link a[pa] <-> b[pb].  False if it contradicts what is known
 * (a port already leads elsewhere, or a port number the node does not
 * have): two nodes answering with one GUID, or an answer that lies.
 */
static bool kd_add_link(struct kmad_discover *d, unsigned int a, u8 pa,
			unsigned int b, u8 pb)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_node *na = &res->nodes[a], *nb = &res->nodes[b];
	struct kmad_discover_link *l;

	if (!pa || pa > na->num_ports || !pb || pb > nb->num_ports)
		return false;
	if (na->ports[pa].peer >= 0 || nb->ports[pb].peer >= 0) {
		/* Seen from the other end already, or contradictory. */
		if (na->ports[pa].peer == (int)b &&
		    na->ports[pa].peer_port == pb)
			return true;
		pr_debug("%#018llx[%u] <-> %#018llx[%u] contradicts a known link\n",
			 na->guid, pa, nb->guid, pb);
		return false;
	}
	if (kmad_discover_grow((void **)&res->links, &d->links_cap,
			       res->nr_links + 1, sizeof(*l)))
		return true;
	na->ports[pa].peer = b;
	na->ports[pa].peer_port = pb;
	nb->ports[pb].peer = a;
	nb->ports[pb].peer_port = pa;
	l = &res->links[res->nr_links++];
	l->node[0] = a;
	l->port[0] = pa;
	l->node[1] = b;
	l->port[1] = pb;
	return true;
}

/* A NodeInfo answer that cannot be true: dropped, but counted. */
static void kd_bad_node_info(struct kmad_discover *d, const struct kd_query *q)
{
	struct kd_query bad = *q;

	bad.err = -EPROTO;
	kd_add_failure(d, &bad);
}

/*
 * A NodeInfo answer: a new node, and a link to where it was reached from.
 * One that cannot be true (reached through a link, but entered by no port
 * the node has; a known GUID with another node type or port count: two
 * nodes with one GUID; or a link that contradicts a known one) is counted
 * as -EPROTO and the walk does not go past it.
 */
static int kd_node_found(struct kmad_discover *d, const struct kd_query *q)
{
	const struct kd_node_info *ni = (const void *)q->data;
	int idx;

	if (q->err)
		return 0;
	if (q->parent >= 0 &&
	    (!ni->local_port_num || ni->local_port_num > ni->num_ports)) {
		kd_bad_node_info(d, q);
		return 0;
	}
	idx = kd_find_node(d, be64_to_cpu(ni->node_guid));
	if (idx >= 0 && (d->res.nodes[idx].type != ni->node_type ||
			 d->res.nodes[idx].num_ports != ni->num_ports)) {
		kd_bad_node_info(d, q);
		return 0;
	}
	if (idx < 0) {
		if (d->res.nr_nodes >= d->opts.max_nodes) {
			pr_warn_once("node limit %u reached; raise max_nodes\n",
				     d->opts.max_nodes);
			d->res.nodes_dropped++;
			return 0;
		}
		idx = kd_add_node(d, q, ni);
		if (idx < 0)
			return idx;
	}
	if (q->parent >= 0 &&
	    !kd_add_link(d, q->parent, q->port, idx, ni->local_port_num))
		kd_bad_node_info(d, q);
	return 0;
}

static void kd_route_query(struct kd_query *q, enum kmad_discover_query type,
			   const struct kmad_discover_node *node, int idx,
			   u8 port)
{
	memset(q, 0, sizeof(*q));
	INIT_LIST_HEAD(&q->entry);
	q->type = type;
	q->node = idx;
	q->parent = -1;
	q->port = port;
	q->hops = node->hops;
	memcpy(q->path, node->path, sizeof(q->path));
}

static void kd_copy_desc(struct kmad_discover_node *node, const u8 *data)
{
	unsigned int i;

	for (i = 0; i < KMAD_DISCOVER_DESC_LEN && data[i]; i++)
		node->desc[i] = data[i] >= 0x20 && data[i] < 0x7f ? data[i] :
								     '?';
	node->desc[i] = '\0';
	node->desc_valid = true;
}

static void kd_copy_port_info(struct kmad_discover_port *pt, const u8 *data)
{
	const struct kd_port_info *pi = (const void *)data;

	pt->info_valid = true;
	pt->lid = be16_to_cpu(pi->lid);
	pt->lmc = pi->mkey_prot_lmc & 0x7;
	pt->state = pi->speed_supported_state & 0xf;
	pt->phys_state = pi->phys_state_down_def >> 4;
	pt->width_active = pi->link_width_active;
	pt->speed_active = pi->speed_active_enabled >> 4;
}

/* First port number with a PortInfo: switches have a port 0. */
static unsigned int kd_first_port(const struct kmad_discover_node *node)
{
	return node->type == KMAD_DISCOVER_SWITCH ? 0 : 1;
}

/* NodeDescription and PortInfo of every node from @first on. */
static int kd_read_details(struct kmad_discover *d, unsigned int first)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_node *node;
	unsigned int i, p, n = 0;
	struct kd_query *q;
	int ret;

	for (i = first; i < res->nr_nodes; i++)
		n += 1 + res->nodes[i].num_ports + 1 -
		     kd_first_port(&res->nodes[i]);
	q = kvcalloc(n, sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	n = 0;
	for (i = first; i < res->nr_nodes; i++) {
		node = &res->nodes[i];
		kd_route_query(&q[n++], KMAD_DISCOVER_Q_NODE_DESC, node, i, 0);
		for (p = kd_first_port(node); p <= node->num_ports; p++)
			kd_route_query(&q[n++], KMAD_DISCOVER_Q_PORT_INFO,
				       node, i, p);
	}
	ret = kd_run_batch(d, q, n);
	for (i = 0; i < n; i++) {
		if (q[i].err)
			continue;
		node = &res->nodes[q[i].node];
		if (q[i].type == KMAD_DISCOVER_Q_NODE_DESC)
			kd_copy_desc(node, q[i].data);
		else
			kd_copy_port_info(&node->ports[q[i].port], q[i].data);
	}
	for (i = first; i < res->nr_nodes; i++) {
		node = &res->nodes[i];
		p = node->type == KMAD_DISCOVER_SWITCH ? 0 : node->entry_port;
		if (p <= node->num_ports && node->ports[p].info_valid)
			node->lid = node->ports[p].lid;
	}
	kvfree(q);
	return ret;
}

static bool kd_port_up(const struct kmad_discover_port *pt)
{
	return pt->info_valid &&
	       (pt->phys_state == KD_PHYS_LINK_UP ||
		(pt->state > KD_PORT_DOWN && pt->state < KD_PORT_ACTIVE_DEFER));
}

/*
 * The next frontier: from every node from @first on, the ports through
 * which directed routes continue.  Switches: every port that is up and
 * whose peer is unknown.  The local node, if not a switch: the port kmad
 * sends from (a CA's SMI sends out of that one only), tried even if its
 * PortInfo could not be read.
 */
static int kd_next_probes(struct kmad_discover *d, unsigned int first,
			  struct kd_query **probes, unsigned int *nprobes)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_node *node;
	unsigned int i, p, n = 0, cap = 0;
	struct kd_query *q = NULL;
	int ret;

	for (i = first; i < res->nr_nodes; i++) {
		node = &res->nodes[i];
		for (p = 1; p <= node->num_ports; p++) {
			const struct kmad_discover_port *pt = &node->ports[p];

			if (node->type == KMAD_DISCOVER_SWITCH) {
				if (!kd_port_up(pt) || pt->peer >= 0)
					continue;
			} else if (node->hops || p != kmad_port_num(d->port) ||
				   (pt->info_valid && !kd_port_up(pt))) {
				continue;
			}
			if (node->hops + 1U > d->opts.max_hops) {
				pr_warn_once("hop limit %u reached; raise max_hops\n",
					     d->opts.max_hops);
				res->hops_limited++;
				continue;
			}
			ret = kmad_discover_grow((void **)&q, &cap, n + 1,
						 sizeof(*q));
			if (ret) {
				kvfree(q);
				return ret;
			}
			kd_route_query(&q[n], KMAD_DISCOVER_Q_NODE_INFO, node,
				       -1, p);
			q[n].parent = i;
			q[n].hops = node->hops + 1;
			q[n].path[q[n].hops] = p;
			n++;
		}
	}
	*probes = q;
	*nprobes = n;
	return 0;
}

/* Breadth-first walk of the fabric with directed-route SMPs. */
static int kd_walk(struct kmad_discover *d)
{
	struct kmad_discover_result *res = &d->res;
	struct kd_query *probes;
	unsigned int nprobes = 1, first, i;
	int ret;

	probes = kcalloc(1, sizeof(*probes), GFP_KERNEL);
	if (!probes)
		return -ENOMEM;
	INIT_LIST_HEAD(&probes[0].entry);
	probes[0].type = KMAD_DISCOVER_Q_NODE_INFO;
	probes[0].node = -1;
	probes[0].parent = -1;

	for (;;) {
		ret = kd_run_batch(d, probes, nprobes);
		if (ret)
			break;
		first = res->nr_nodes;
		for (i = 0; i < nprobes && !ret; i++)
			ret = kd_node_found(d, &probes[i]);
		if (ret || res->nr_nodes == first)
			break;
		ret = kd_read_details(d, first);
		if (ret)
			break;
		kvfree(probes);
		probes = NULL;
		ret = kd_next_probes(d, first, &probes, &nprobes);
		if (ret || !nprobes)
			break;
	}
	kvfree(probes);
	return ret;
}

static void kd_copy_counters(struct kmad_discover_port *pt, const u8 *data)
{
	const struct kd_port_counters *pc = (const void *)data;
	struct kmad_discover_counters *c = &pt->counters;

	c->symbol_errors = be16_to_cpu(pc->symbol_errors);
	c->link_error_recovery = pc->link_error_recovery;
	c->link_downed = pc->link_downed;
	c->rcv_errors = be16_to_cpu(pc->rcv_errors);
	c->rcv_remote_phys_errors = be16_to_cpu(pc->rcv_remote_phys_errors);
	c->rcv_switch_relay_errors = be16_to_cpu(pc->rcv_switch_relay_errors);
	c->xmit_discards = be16_to_cpu(pc->xmit_discards);
	c->xmit_constraint_errors = pc->xmit_constraint_errors;
	c->rcv_constraint_errors = pc->rcv_constraint_errors;
	c->local_link_integrity_errors = pc->link_integrity_overrun >> 4;
	c->excessive_buffer_overruns = pc->link_integrity_overrun & 0xf;
	c->vl15_dropped = be16_to_cpu(pc->vl15_dropped);
	c->xmit_data = be32_to_cpu(pc->xmit_data);
	c->rcv_data = be32_to_cpu(pc->rcv_data);
	c->xmit_pkts = be32_to_cpu(pc->xmit_pkts);
	c->rcv_pkts = be32_to_cpu(pc->rcv_pkts);
	c->xmit_wait = be32_to_cpu(pc->xmit_wait);
	pt->counters_valid = true;
}

/* Whether to read the PortCounters of port @p of @node, and from where. */
static u16 kd_counters_lid(const struct kmad_discover_node *node, unsigned int p)
{
	const struct kmad_discover_port *pt = &node->ports[p];

	if (node->type == KMAD_DISCOVER_SWITCH)
		return pt->peer >= 0 || kd_port_up(pt) ? node->lid : 0;
	if (!pt->info_valid)
		return 0;
	return pt->peer >= 0 || kd_port_up(pt) || p == node->entry_port ?
	       pt->lid : 0;
}

/* PortCounters of the ports kd_counters_lid() names, LID routed. */
static int kd_read_counters(struct kmad_discover *d)
{
	struct kmad_discover_result *res = &d->res;
	struct kmad_discover_node *node;
	unsigned int i, p, n = 0;
	struct kd_query *q;
	int ret;

	for (i = 0; i < res->nr_nodes; i++)
		n += res->nodes[i].num_ports;
	q = kvcalloc(max(n, 1U), sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	n = 0;
	for (i = 0; i < res->nr_nodes; i++) {
		node = &res->nodes[i];
		for (p = 1; p <= node->num_ports; p++) {
			u16 lid = kd_counters_lid(node, p);

			if (!lid || lid >= 0xc000)	/* unicast LIDs only */
				continue;
			kd_route_query(&q[n], KMAD_DISCOVER_Q_PORT_COUNTERS,
				       node, i, p);
			q[n].dlid = lid;
			n++;
		}
	}
	ret = kd_run_batch(d, q, n);
	for (i = 0; i < n; i++) {
		if (q[i].err)
			continue;
		kd_copy_counters(&res->nodes[q[i].node].ports[q[i].port],
				 q[i].data);
		res->ports_read++;
	}
	kvfree(q);
	return ret;
}

/**
 * kmad_discover_default_opts() - the default options.
 * @opts: filled in: 100 ms timeout, 3 retries, 16 queries in flight,
 *	1024 nodes, 63 hops, counters read.
 */
void kmad_discover_default_opts(struct kmad_discover_opts *opts)
{
	*opts = (struct kmad_discover_opts) {
		.timeout_ms = 100,
		.retries = 3,
		.window = 16,
		.max_nodes = 1024,
		.max_hops = KMAD_SMP_DR_MAX_HOP_CNT,
		.counters = true,
	};
}
EXPORT_SYMBOL_GPL(kmad_discover_default_opts);

/**
 * kmad_discover_create() - prepare a discovery from a port.
 * @port: the port to discover from; the caller keeps it valid (holds a
 *	reference, or is the client whose remove callback has not run)
 *	until kmad_discover_destroy().
 * @opts: options; NULL for kmad_discover_default_opts().  A timeout or
 *	window or max_nodes of 0 counts as 1 (the local node is always
 *	taken); max_hops is capped at 63, timeout_ms at
 *	%KMAD_MAX_TIMEOUT_MS.
 *
 * Registers a send-only agent on the port's QP0 and one on its QP1.
 *
 * Context: process context, may sleep.
 * Return: the discovery, or an ERR_PTR: -ENOMEM, or what
 * kmad_register_agent() returned (-ENODEV if the port is going away).
 */
struct kmad_discover *kmad_discover_create(struct kmad_port *port,
					   const struct kmad_discover_opts *opts)
{
	struct kmad_discover *d;
	int ret;

	if (!port)
		return ERR_PTR(-EINVAL);
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->port = port;
	if (opts)
		d->opts = *opts;
	else
		kmad_discover_default_opts(&d->opts);
	d->opts.timeout_ms = clamp_t(unsigned int, d->opts.timeout_ms, 1,
				     KMAD_MAX_TIMEOUT_MS);
	d->opts.window = max(d->opts.window, 1U);
	d->opts.max_nodes = max(d->opts.max_nodes, 1U);
	d->opts.max_hops = min_t(unsigned int, d->opts.max_hops,
				 KMAD_SMP_DR_MAX_HOP_CNT);
	spin_lock_init(&d->lock);
	init_waitqueue_head(&d->wq);
	INIT_LIST_HEAD(&d->queue);
	INIT_LIST_HEAD(&d->posted);
	atomic_set(&d->tid, 0);

	d->smi = kmad_register_agent(port, KMAD_QPT_SMI, NULL, kd_send_handler,
				     kd_recv_handler, d);
	if (IS_ERR(d->smi)) {
		ret = PTR_ERR(d->smi);
		goto err_free;
	}
	d->gsi = kmad_register_agent(port, KMAD_QPT_GSI, NULL, kd_send_handler,
				     kd_recv_handler, d);
	if (IS_ERR(d->gsi)) {
		ret = PTR_ERR(d->gsi);
		goto err_smi;
	}
	return d;

err_smi:
	kmad_unregister_agent(d->smi);
err_free:
	kfree(d);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(kmad_discover_create);

/**
 * kmad_discover_run() - discover the fabric and read its counters.
 * @d: a discovery that has not run yet.
 *
 * Sleeps until done: with no answers at all, about (retries + 1) *
 * timeout_ms per round of queries.  Queries that fail are listed in the
 * result and do not end the run.
 *
 * Context: process context, may sleep; not from a kmad handler.
 * Return: the result's status: 0 if the run went to its end,
 * -ECANCELED if kmad_discover_stop() ended it, -ESHUTDOWN if the port went
 * away, -ENOMEM, or -EBUSY if @d already ran.
 */
int kmad_discover_run(struct kmad_discover *d)
{
	ktime_t start = ktime_get();
	int ret;

	spin_lock(&d->lock);
	ret = d->ran ? -EBUSY : 0;
	d->ran = true;
	spin_unlock(&d->lock);
	if (ret)
		return ret;

	ret = kd_walk(d);
	if (!ret && d->opts.counters)
		ret = kd_read_counters(d);
	d->res.status = ret;
	d->res.elapsed_ms = ktime_ms_delta(ktime_get(), start);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_discover_run);

/**
 * kmad_discover_stop() - make a run end soon.
 * @d: the discovery.
 *
 * Nothing is posted any more, queued queries end at once and sends in
 * flight are canceled; kmad_discover_run() then returns -ECANCELED
 * without waiting for their timeouts.  A run that has not started yet
 * returns at once.
 *
 * Context: process context; not from a kmad handler of @d.
 */
void kmad_discover_stop(struct kmad_discover *d)
{
	struct kd_query *q, *tmp;

	spin_lock(&d->lock);
	d->stop = true;
	list_for_each_entry_safe(q, tmp, &d->queue, entry) {
		list_del_init(&q->entry);
		kd_finish_locked(d, q, -ECANCELED);
	}
	/* The send handler takes the lock before it ends a send. */
	list_for_each_entry(q, &d->posted, entry)
		kmad_cancel_send(q->buf);
	spin_unlock(&d->lock);
}
EXPORT_SYMBOL_GPL(kmad_discover_stop);

/**
 * kmad_discover_result() - what a run found.
 * @d: the discovery.
 *
 * Return: the result, valid until kmad_discover_destroy(); complete once
 * kmad_discover_run() has returned.
 */
const struct kmad_discover_result *
kmad_discover_result(const struct kmad_discover *d)
{
	return &d->res;
}
EXPORT_SYMBOL_GPL(kmad_discover_result);

/**
 * kmad_discover_destroy() - unregister the agents and free everything.
 * @d: the discovery; NULL or an ERR_PTR is ignored.  No run may be in
 *	progress (stop it and wait for kmad_discover_run() to return).
 *
 * Context: process context, may sleep; not from a kmad handler of @d.
 */
void kmad_discover_destroy(struct kmad_discover *d)
{
	unsigned int i;

	if (IS_ERR_OR_NULL(d))
		return;
	kmad_unregister_agent(d->gsi);
	kmad_unregister_agent(d->smi);
	for (i = 0; i < d->res.nr_nodes; i++)
		kfree(d->res.nodes[i].ports);
	kvfree(d->res.nodes);
	kvfree(d->res.links);
	kvfree(d->res.failures);
	kfree(d);
}
EXPORT_SYMBOL_GPL(kmad_discover_destroy);

static const char *kd_desc(const struct kmad_discover_node *n)
{
	return n->desc_valid ? n->desc : "?";
}

static const char *kd_type_name(u8 type)
{
	switch (type) {
	case KMAD_DISCOVER_CA:
		return "CA";
	case KMAD_DISCOVER_SWITCH:
		return "Switch";
	case KMAD_DISCOVER_ROUTER:
		return "Router";
	default:
		return "Unknown";
	}
}

/* "0,1,3": the directed route as ibnetdiscover writes it. */
static const char *kd_path_str(char *buf, size_t size, u8 hops, const u8 *path)
{
	size_t len;
	unsigned int i;

	len = scnprintf(buf, size, "0");
	for (i = 1; i <= hops; i++)
		len += scnprintf(buf + len, size - len, ",%u", path[i]);
	return buf;
}

static const char *kd_status_name(u16 status)
{
	switch (status & ~KMAD_MAD_STATUS_CLASS_MASK) {
	case KMAD_MAD_STATUS_BUSY:
		return "busy";
	case KMAD_MAD_STATUS_REDIRECT:
		return "redirect";
	case KMAD_MAD_STATUS_BAD_VERSION:
		return "unsupported class or version";
	case KMAD_MAD_STATUS_UNSUPPORTED_METHOD:
		return "unsupported method";
	case KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR:
		return "unsupported method/attribute";
	case KMAD_MAD_STATUS_INVALID_ATTR_VALUE:
		return "invalid attribute value";
	default:
		return "error";
	}
}

static void kd_print_failure(const struct kmad_discover *d,
			     const struct kmad_discover_failure *f)
{
	const struct kmad_discover_result *res = &d->res;
	const char *kind = "unreachable";
	const struct kmad_discover_node *n;
	char path[4 * KMAD_SMP_DR_PATH_SIZE];
	char why[64];

	switch (f->err) {
	case -ETIMEDOUT:
		scnprintf(why, sizeof(why), "no response after %u tries",
			  f->tries);
		break;
	case -EIO:
		scnprintf(why, sizeof(why), "send failed, %u tries", f->tries);
		break;
	case -EREMOTEIO:
		kind = "error";
		scnprintf(why, sizeof(why), "status %#06x (%s)", f->mad_status,
			  kd_status_name(f->mad_status));
		break;
	case -EPROTO:
		kind = "error";
		scnprintf(why, sizeof(why), "malformed response");
		break;
	default:
		kind = "error";
		scnprintf(why, sizeof(why), "error %d", f->err);
		break;
	}
	kd_path_str(path, sizeof(path), f->hops, f->path);

	if (f->query == KMAD_DISCOVER_Q_NODE_INFO) {
		if (f->parent < 0) {
			pr_info("%s: local node (%s port %u): NodeInfo via DR path %s: %s\n",
				kind, kmad_port_dev_name(d->port),
				kmad_port_num(d->port), path, why);
			return;
		}
		n = &res->nodes[f->parent];
		pr_info("%s: whatever is behind port %u of %s %#018llx \"%s\": NodeInfo via DR path %s: %s\n",
			kind, f->port, kd_type_name(n->type), n->guid,
			kd_desc(n), path, why);
		return;
	}
	n = &res->nodes[f->node];
	if (f->query == KMAD_DISCOVER_Q_PORT_COUNTERS)
		pr_info("%s: %s %#018llx \"%s\" port %u: PortCounters from LID %u: %s\n",
			kind, kd_type_name(n->type), n->guid, kd_desc(n),
			f->port, f->dlid, why);
	else if (f->query == KMAD_DISCOVER_Q_PORT_INFO)
		pr_info("%s: %s %#018llx \"%s\" port %u: PortInfo via DR path %s: %s\n",
			kind, kd_type_name(n->type), n->guid, kd_desc(n),
			f->port, path, why);
	else
		pr_info("%s: %s %#018llx: NodeDescription via DR path %s: %s\n",
			kind, kd_type_name(n->type), n->guid, path, why);
}

/**
 * kmad_discover_print() - print a run's result with pr_info().
 * @d: the discovery, after kmad_discover_run().
 *
 * One line per node (type, GUID, description, LID, ports, route), one per
 * link (GUID[port] <-> GUID[port]), one per port whose counters were
 * read, one per failed query, and last the summary, all prefixed
 * "kmad_discover: ":
 *
 *   done: N nodes, M links, K ports read, R retries, T timeouts,
 *   U unreachable, E errors (Q queries, S sends, X send errors, MS ms)
 *
 * followed by ", truncated (N NodeInfo answers over max_nodes, P ports
 * not probed at max_hops)" when a limit may have left part of the fabric
 * out, and by ", stopped"
 * or ", port gone" when the run did not end normally.
 */
void kmad_discover_print(const struct kmad_discover *d)
{
	const struct kmad_discover_result *res = &d->res;
	const struct kmad_discover_node *n, *m;
	const struct kmad_discover_counters *c;
	char path[4 * KMAD_SMP_DR_PATH_SIZE];
	char trunc[96] = "";
	unsigned int i, p;

	pr_info("%s port %u: topology: %u nodes, %u links\n",
		kmad_port_dev_name(d->port), kmad_port_num(d->port),
		res->nr_nodes, res->nr_links);
	for (i = 0; i < res->nr_nodes; i++) {
		n = &res->nodes[i];
		pr_info("node %u: %-6s %#018llx \"%s\" lid %u ports %u DR path %s%s\n",
			i, kd_type_name(n->type), n->guid, kd_desc(n), n->lid,
			n->num_ports,
			kd_path_str(path, sizeof(path), n->hops, n->path),
			n->hops ? "" : " (local)");
	}
	for (i = 0; i < res->nr_links; i++) {
		n = &res->nodes[res->links[i].node[0]];
		m = &res->nodes[res->links[i].node[1]];
		pr_info("link: %#018llx[%u] <-> %#018llx[%u] (\"%s\" <-> \"%s\")\n",
			n->guid, res->links[i].port[0], m->guid,
			res->links[i].port[1], kd_desc(n), kd_desc(m));
	}
	for (i = 0; i < res->nr_nodes; i++) {
		n = &res->nodes[i];
		for (p = 1; p <= n->num_ports; p++) {
			if (!n->ports[p].counters_valid)
				continue;
			c = &n->ports[p].counters;
			pr_info("counters: %#018llx[%u] \"%s\": xmit_data %u rcv_data %u xmit_pkts %u rcv_pkts %u xmit_wait %u symbol_errors %u link_recovery %u link_downed %u rcv_errors %u xmit_discards %u vl15_dropped %u\n",
				n->guid, p, kd_desc(n), c->xmit_data, c->rcv_data,
				c->xmit_pkts, c->rcv_pkts, c->xmit_wait,
				c->symbol_errors, c->link_error_recovery,
				c->link_downed, c->rcv_errors,
				c->xmit_discards, c->vl15_dropped);
		}
	}
	for (i = 0; i < res->nr_failures; i++)
		kd_print_failure(d, &res->failures[i]);
	if (res->nr_failures < res->unreachable + res->errors)
		pr_info("%u more failures not listed (no memory)\n",
			res->unreachable + res->errors - res->nr_failures);
	if (res->nodes_dropped || res->hops_limited)
		snprintf(trunc, sizeof(trunc),
			 ", truncated (%u NodeInfo answers over max_nodes, %u ports not probed at max_hops)",
			 res->nodes_dropped, res->hops_limited);
	pr_info("done: %u nodes, %u links, %u ports read, %u retries, %u timeouts, %u unreachable, %u errors (%u queries, %u sends, %u send errors, %u ms)%s%s\n",
		res->nr_nodes, res->nr_links, res->ports_read, res->retries,
		res->timeouts, res->unreachable, res->errors, res->queries,
		res->sends, res->send_errors, res->elapsed_ms, trunc,
		res->status == -ECANCELED ? ", stopped" :
		res->status == -ESHUTDOWN ? ", port gone" :
		res->status ? ", failed" : "");
}
EXPORT_SYMBOL_GPL(kmad_discover_print);
