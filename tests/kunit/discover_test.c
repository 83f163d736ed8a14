// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_discover, kmad_discover_wire and kmad_discover_subnet suites:
 * discoveries on simulated fabrics.  The first two use two-HCA fabrics
 * and fake fabrics described by tables (nodes, links), whose fake SMA
 * follows each SMP's initial path from the discovering CA (node 0).
 *
 * kmad_discover (async fabric): the fakes are kmad agents, a fake SMA
 * for directed-route SMPs on QP0 and a fake PMA on QP1 of both HCAs, so
 * the MADs really cross the simulated link and kmad's SMI.  If kmad_sim
 * answers those MADs itself (the fakes cannot register, or are never
 * asked), the expectations hold for the real SMA as well.  Cases: the
 * pair; a bare fabric (whatever answers, the run ends and its accounting
 * adds up); the pair under drops and duplicates (everything is still
 * found, and the retries and timeouts are counted); stop from another
 * thread while a send waits for a long timeout; the port going away under
 * a run.
 *
 * kmad_discover_wire (step fabric): the test is the wire.  It takes every
 * send of the discovering HCA off the wire and injects the fake fabric's
 * answer, so SMPs can "cross" switches that kmad_sim does not have yet;
 * time is virtual.  Cases: two switches joined by two links, a CA on each
 * and a port down; the same with one link losing every SMP (the far
 * switch is reached the other way round, both ends are reported).
 *
 * kmad_discover_subnet (async fabric): kmad_sim's own tree (a root switch,
 * two leaves, six dual-port HCAs) with its own SMA and PMA, checked
 * against the sim's description of itself (nodes, GUIDs, LIDs, cables):
 * as built; with the cable of a root port cut (the leaf behind it and its
 * HCAs drop out, and nothing is reported as a failure: a Down port is not
 * tried); with 5 % drops and 5 % duplicates (still everything, with
 * retries).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/string.h>

#include <kmad/mad.h>
#include <kmad/sim.h>
#include <kmad/wire.h>

#include "discover/kmad_discover.h"

#define DT_GUID_A	0x0002c90300001000ULL
#define DT_GUID_B	0x0002c90300002000ULL
#define DT_XMIT_DATA	1111
#define DT_RCV_DATA	2222
#define DT_DATA		64	/* attribute offset in SMPs and PMA MADs */

static atomic_t dt_seq = ATOMIC_INIT(0);

/*
 * Asynchronous fabric, real clock: the response timeout of a run on a
 * fabric that loses nothing.  Its answers come through work items that a
 * loaded guest delays by hundreds of milliseconds or more; a shorter
 * timeout would count such an answer as a timeout and send again, and
 * the cases that expect no retry would fail.  Nothing goes unanswered
 * there, so the length costs nothing.
 */
#define DT_ASYNC_TIMEOUT_MS	5000
/*
 * A run that waits for an answer that never comes, until stopped: its
 * one try lasts far longer than the stop may take to end it on a loaded
 * guest (DT_STOP_WAIT_MS), and ends, if the stop does not work, before
 * the hung task detector (60 s) fires on the test waiting for it.
 */
#define DT_STUCK_TIMEOUT_MS	30000
#define DT_STOP_WAIT_MS		10000

/* Wire harness: virtual time, so retries cost nothing. */
#define DT_WIRE_TIMEOUT_MS	100
#define DT_WIRE_RETRIES		2U

/* kmad_discover_subnet: a tree of three switches and six dual-port HCAs. */
#define DT_TREE_HCAS		6
#define DT_TREE_LEAVES		2
#define DT_SIM_MAX_NODES	(KMAD_SIM_MAX_HCAS + KMAD_SIM_MAX_LEAVES + 1)

#define DT_MAX_NODES	8
#define DT_MAX_PORTS	8

/* A node of a fake fabric. */
struct dt_node_def {
	u64 guid;
	u8 type;
	u8 num_ports;
	u16 lid;
	const char *desc;
};

/* A link of a fake fabric: node a port pa <-> node b port pb. */
struct dt_link_def {
	u8 a, pa, b, pb;
};

/* The pair as kmad_sim builds it: LIDs 1 and 2. */
static const struct dt_node_def dt_pair_nodes[] = {
	{ DT_GUID_A, KMAD_DISCOVER_CA, 1, 1, "fake A" },
	{ DT_GUID_B, KMAD_DISCOVER_CA, 1, 2, "fake B" },
};

static const struct dt_link_def dt_pair_links[] = {
	{ 0, 1, 1, 1 },
};

/*
 * A: CA, S1: five-port switch (port 5 down), B: CA, S2: three-port
 * switch, C: CA.  S1 and S2 are joined by two links.
 */
static const struct dt_node_def dt_tree_nodes[] = {
	{ DT_GUID_A, KMAD_DISCOVER_CA, 1, 1, "fake A" },
	{ 0x0002c90300005100ULL, KMAD_DISCOVER_SWITCH, 5, 3, "fake S1" },
	{ DT_GUID_B, KMAD_DISCOVER_CA, 1, 2, "fake B" },
	{ 0x0002c90300005200ULL, KMAD_DISCOVER_SWITCH, 3, 4, "fake S2" },
	{ 0x0002c90300003000ULL, KMAD_DISCOVER_CA, 1, 5, "fake C" },
};

static const struct dt_link_def dt_tree_links[] = {
	{ 0, 1, 1, 1 }, { 1, 2, 2, 1 }, { 1, 3, 3, 1 }, { 3, 2, 4, 1 },
	{ 3, 3, 1, 4 },
};

struct dt_fix {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	char name[24];
	struct kmad_port *port[2];
	u16 lid[2];
	struct kmad_agent *sma[2];	/* fake SMAs, or NULL */
	struct kmad_agent *pma[2];	/* fake PMAs, or NULL */
	atomic_t sma_hits;
	atomic_t hop0_hits;		/* SMPs with hop count 0 */
	atomic_t deep_hits;		/* SMPs with two hops or more */
	atomic_t pma_hits;
	bool wire_mod_zero;		/* the wire answers with AM 0 */
	int bad_entry_node;		/* answers LocalPortNum 0, or -1 */
	unsigned int opts_max_nodes;	/* dt_create()'s, if not 0 */
	unsigned int opts_max_hops;	/* dt_create()'s, if not 0 */
	struct kmad_discover *d;
	/* The fake fabric: node 0 is the discovering CA. */
	const struct dt_node_def *nodes;
	unsigned int nr_nodes;
	s8 peer[DT_MAX_NODES][DT_MAX_PORTS + 1];
	u8 peer_port[DT_MAX_NODES][DT_MAX_PORTS + 1];
	bool dead[DT_MAX_NODES][DT_MAX_PORTS + 1];	/* loses every SMP */
};

static void dt_set_fabric(struct dt_fix *f, const struct dt_node_def *nodes,
			  unsigned int nr_nodes, const struct dt_link_def *links,
			  unsigned int nr_links)
{
	unsigned int i;

	f->nodes = nodes;
	f->nr_nodes = nr_nodes;
	memset(f->peer, -1, sizeof(f->peer));
	for (i = 0; i < nr_links; i++) {
		const struct dt_link_def *l = &links[i];

		f->peer[l->a][l->pa] = l->b;
		f->peer_port[l->a][l->pa] = l->pb;
		f->peer[l->b][l->pb] = l->a;
		f->peer_port[l->b][l->pb] = l->pa;
	}
}

static void dt_put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void dt_put_be32(u8 *p, u32 v)
{
	dt_put_be16(p, v >> 16);
	dt_put_be16(p + 2, v);
}

static void dt_put_be64(u8 *p, u64 v)
{
	dt_put_be32(p, v >> 32);
	dt_put_be32(p + 4, v);
}

/*
 * Follow a directed route through the fake fabric from node 0.  Return
 * the node it ends at and, in *@in_port, the port it entered by; -1 if a
 * hop leads nowhere (the SMP is lost).
 */
static int dt_walk(struct dt_fix *f, const struct kmad_smp *smp, u8 *in_port)
{
	unsigned int i;
	int node = 0;
	u8 p;

	*in_port = 1;
	for (i = 1; i <= smp->hop_cnt && i < KMAD_SMP_DR_PATH_SIZE; i++) {
		p = smp->initial_path[i];
		if (p > DT_MAX_PORTS || p > f->nodes[node].num_ports ||
		    f->peer[node][p] < 0 || f->dead[node][p])
			return -1;
		*in_port = f->peer_port[node][p];
		node = f->peer[node][p];
	}
	return node;
}

/* The fake SMA's answer; -1: none (lost), else the Status. */
static int dt_fill_smp(struct dt_fix *f, const struct kmad_smp *req, u8 *data)
{
	const struct dt_node_def *n;
	unsigned int port;
	u8 in_port;
	int node;

	atomic_inc(&f->sma_hits);
	if (!req->hop_cnt)
		atomic_inc(&f->hop0_hits);
	if (req->hop_cnt >= 2)
		atomic_inc(&f->deep_hits);
	node = dt_walk(f, req, &in_port);
	if (node < 0)
		return -1;
	n = &f->nodes[node];
	switch (be16_to_cpu(req->attr_id)) {
	case KMAD_SMP_ATTR_NODE_INFO:
		data[0] = 1;			/* BaseVersion */
		data[1] = 1;			/* ClassVersion */
		data[2] = n->type;		/* NodeType */
		data[3] = n->num_ports;		/* NumberOfPorts */
		dt_put_be64(data + 4, n->guid);	/* SystemImageGUID */
		dt_put_be64(data + 12, n->guid); /* NodeGUID */
		dt_put_be64(data + 20, n->guid + in_port); /* PortGUID */
		data[36] = in_port;		/* LocalPortNum */
		if (node == f->bad_entry_node)
			data[36] = 0;		/* a port no switch enters by */
		return 0;
	case KMAD_SMP_ATTR_NODE_DESC:
		strscpy((char *)data, n->desc, KMAD_DISCOVER_DESC_LEN);
		return 0;
	case KMAD_SMP_ATTR_PORT_INFO:
		port = be32_to_cpu(req->attr_mod);
		if (port > n->num_ports ||
		    (!port && n->type != KMAD_DISCOVER_SWITCH))
			return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
		/* A switch's LID is its port 0's; its other ports have none. */
		if (n->type != KMAD_DISCOVER_SWITCH || !port)
			dt_put_be16(data + 16, n->lid);
		data[28] = port;
		if (!port || f->peer[node][port] >= 0) {
			data[32] = 0x20 | 4;	/* PortState Active */
			data[33] = 5 << 4;	/* PhysState LinkUp */
		} else {
			data[32] = 0x20 | 1;	/* PortState Down */
			data[33] = 2 << 4;	/* PhysState Polling */
		}
		return 0;
	default:
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	}
}

static void dt_fake_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	const struct kmad_smp *smp = (const struct kmad_smp *)wc->mad;
	struct dt_fix *f = agent->context;
	struct kmad_send_buf *resp;
	int status = 0;
	u8 *data;

	resp = kmad_create_response(agent, wc, GFP_KERNEL);
	if (IS_ERR(resp))
		goto out;
	data = (u8 *)resp->mad + DT_DATA;
	if (agent->qpt == KMAD_QPT_SMI) {
		/* Only the attribute: the paths stay as the request had them. */
		memset(data, 0, KMAD_SMP_DATA_SIZE);
		status = dt_fill_smp(f, smp, data);
	} else if (be16_to_cpu(wc->mad->mad_hdr.attr_id) ==
		   KMAD_PMA_ATTR_PORT_COUNTERS) {
		memset(data, 0, KMAD_MAD_SIZE - DT_DATA);
		atomic_inc(&f->pma_hits);
		data[1] = ((const u8 *)wc->mad)[DT_DATA + 1];	/* PortSelect */
		dt_put_be32(data + 24, DT_XMIT_DATA);
		dt_put_be32(data + 28, DT_RCV_DATA);
	} else {
		status = KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	}
	if (status < 0) {
		kmad_free_send_buf(resp);
		goto out;
	}
	resp->mad->mad_hdr.status |= cpu_to_be16(status);
	if (kmad_post_send(resp))
		kmad_free_send_buf(resp);
out:
	kmad_free_recv(wc);
}

static void dt_fake_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

/* A fake agent for @cls on device @dev, or NULL if the class is taken. */
static struct kmad_agent *dt_fake(struct dt_fix *f, unsigned int dev,
				  enum kmad_qp_type qpt, u8 cls, u8 version)
{
	struct kmad_reg_req req = {
		.mgmt_class = cls,
		.class_version = version,
	};
	struct kmad_agent *a;

	set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(f->port[dev], qpt, &req, dt_fake_send,
				dt_fake_recv, f);
	if (!IS_ERR(a))
		return a;
	kunit_info(f->test, "device %u: no fake for class %#x (%ld): kmad_sim has one\n",
		   dev, cls, PTR_ERR(a));
	return NULL;
}

/*
 * Fake SMAs and PMAs on both devices: a directed-route SMP with hop count
 * 0 is answered as the local CA whichever device it reaches (today it
 * crosses the link; an SMI that loops it back reaches device 0's fake).
 */
static void dt_add_fakes(struct dt_fix *f, const struct dt_node_def *nodes,
			 unsigned int nr_nodes, const struct dt_link_def *links,
			 unsigned int nr_links)
{
	unsigned int i;

	dt_set_fabric(f, nodes, nr_nodes, links, nr_links);

	for (i = 0; i < 2; i++) {
		f->sma[i] = dt_fake(f, i, KMAD_QPT_SMI,
				    KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
				    KMAD_SMP_CLASS_VERSION);
		f->pma[i] = dt_fake(f, i, KMAD_QPT_GSI,
				    KMAD_MGMT_CLASS_PERF_MGMT,
				    KMAD_PMA_CLASS_VERSION);
	}
}

static int dt_setup(struct kunit *test, enum kmad_sim_mode mode,
		    enum kmad_sim_topology topology)
{
	struct kmad_sim_config cfg = {
		.topology = topology,
		.hcas = DT_TREE_HCAS,
		.leaves = DT_TREE_LEAVES,
		.hca_ports = topology == KMAD_SIM_TOPO_TREE ? 2 : 1,
		.mode = mode,
		.notify = KMAD_SIM_NOTIFY_IBTA,
		.latency_us = 5,
	};
	char dev[32];
	struct dt_fix *f;
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->test = test;
	atomic_set(&f->sma_hits, 0);
	atomic_set(&f->hop0_hits, 0);
	atomic_set(&f->deep_hits, 0);
	atomic_set(&f->pma_hits, 0);
	f->bad_entry_node = -1;
	snprintf(f->name, sizeof(f->name), "kdisc%d_",
		 atomic_inc_return(&dt_seq));
	cfg.name = f->name;
	f->fab = kmad_sim_create(&cfg);
	if (IS_ERR(f->fab))
		return PTR_ERR(f->fab);
	test->priv = f;
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%d", f->name, i);
		f->port[i] = kmad_port_get(dev, 1);
		if (!f->port[i])
			return -ENODEV;
		f->lid[i] = kmad_port_lid(f->port[i]);
	}
	return 0;
}

static int dt_init_async(struct kunit *test)
{
	return dt_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_TOPO_PAIR);
}

static int dt_init_step(struct kunit *test)
{
	return dt_setup(test, KMAD_SIM_STEP, KMAD_SIM_TOPO_PAIR);
}

static int dt_init_tree(struct kunit *test)
{
	return dt_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_TOPO_TREE);
}

static void dt_exit(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	int i;

	if (!f)
		return;
	kmad_discover_destroy(f->d);
	for (i = 0; i < 2; i++) {
		kmad_unregister_agent(f->sma[i]);
		kmad_unregister_agent(f->pma[i]);
	}
	kmad_sim_destroy(f->fab);
	for (i = 0; i < 2; i++)
		kmad_port_put(f->port[i]);
}

static struct kmad_discover *dt_create(struct dt_fix *f, unsigned int timeout_ms,
				       unsigned int retries)
{
	struct kmad_discover_opts opts;

	kmad_discover_default_opts(&opts);
	opts.timeout_ms = timeout_ms;
	opts.retries = retries;
	if (f->opts_max_nodes)
		opts.max_nodes = f->opts_max_nodes;
	if (f->opts_max_hops)
		opts.max_hops = f->opts_max_hops;
	f->d = kmad_discover_create(f->port[0], &opts);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(f->test, f->d);
	return f->d;
}

/* What every finished run satisfies, whatever answered. */
static void dt_expect_accounting(struct kunit *test,
				 const struct kmad_discover_result *res)
{
	KUNIT_EXPECT_GE(test, res->queries, 1U);
	/* Every query is sent once, plus once per retry. */
	KUNIT_EXPECT_EQ(test, res->sends, res->queries + res->retries);
	KUNIT_EXPECT_LE(test, res->retries, res->timeouts + res->send_errors);
	KUNIT_EXPECT_EQ(test, res->nr_failures, res->unreachable + res->errors);
}

/* The pair: two CAs with the fabric's LIDs, linked by their ports 1. */
static void dt_expect_pair(struct kunit *test, struct dt_fix *f,
			   const struct kmad_discover_result *res)
{
	const struct kmad_discover_link *l;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, res->status, 0);
	KUNIT_ASSERT_EQ(test, res->nr_nodes, 2U);
	KUNIT_ASSERT_EQ(test, res->nr_links, 1U);
	for (i = 0; i < 2; i++) {
		KUNIT_EXPECT_EQ(test, res->nodes[i].type, KMAD_DISCOVER_CA);
		KUNIT_EXPECT_EQ(test, res->nodes[i].lid, f->lid[i]);
		KUNIT_EXPECT_EQ(test, res->nodes[i].hops, i);
		KUNIT_EXPECT_TRUE(test, res->nodes[i].desc_valid);
	}
	KUNIT_EXPECT_NE(test, res->nodes[0].guid, res->nodes[1].guid);
	l = &res->links[0];
	KUNIT_EXPECT_EQ(test, l->node[0], 0U);
	KUNIT_EXPECT_EQ(test, l->port[0], 1);
	KUNIT_EXPECT_EQ(test, l->node[1], 1U);
	KUNIT_EXPECT_EQ(test, l->port[1], 1);
	KUNIT_EXPECT_EQ(test, res->nodes[0].ports[1].peer, 1);
	KUNIT_EXPECT_EQ(test, res->nodes[1].ports[1].peer, 0);
	KUNIT_EXPECT_GE(test, res->ports_read, 1U);
	if (atomic_read(&f->sma_hits)) {
		KUNIT_EXPECT_EQ(test, res->nodes[1].guid, DT_GUID_B);
		KUNIT_EXPECT_STREQ(test, res->nodes[1].desc, "fake B");
	} else {
		/* kmad_sim's firmware answered: its node 1. */
		struct kmad_sim_node_info info;
		char desc[64];

		KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, 1, &info), 0);
		KUNIT_EXPECT_EQ(test, res->nodes[1].guid, info.guid);
		snprintf(desc, sizeof(desc), "%s kmad_sim HCA", info.name);
		KUNIT_EXPECT_STREQ(test, res->nodes[1].desc, desc);
	}
	/* The peer's port counters are read, whoever answers. */
	KUNIT_EXPECT_TRUE(test, res->nodes[1].ports[1].counters_valid);
	if (atomic_read(&f->pma_hits) && f->pma[1]) {
		KUNIT_EXPECT_EQ(test, res->nodes[1].ports[1].counters.xmit_data,
				DT_XMIT_DATA);
		KUNIT_EXPECT_EQ(test, res->nodes[1].ports[1].counters.rcv_data,
				DT_RCV_DATA);
	} else {
		/* kmad_sim's PMA: the peer had sent and received at least
		 * one MAD (256 bytes, 64 units) before it was asked.
		 */
		KUNIT_EXPECT_GE(test, res->nodes[1].ports[1].counters.xmit_data,
				64U);
		KUNIT_EXPECT_GE(test, res->nodes[1].ports[1].counters.rcv_data,
				64U);
	}
	/* Only PortCounters may fail (the local port's own PMA). */
	for (i = 0; i < res->nr_failures; i++)
		KUNIT_EXPECT_EQ(test, res->failures[i].query,
				KMAD_DISCOVER_Q_PORT_COUNTERS);
	dt_expect_accounting(test, res);
}

static void discover_pair(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	struct kmad_discover *d;

	dt_add_fakes(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes), dt_pair_links,
		     ARRAY_SIZE(dt_pair_links));
	d = dt_create(f, DT_ASYNC_TIMEOUT_MS, 3);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	dt_expect_pair(test, f, kmad_discover_result(d));
	/* A discovery runs once. */
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), -EBUSY);
}

/*
 * max_nodes 0 counts as 1, as a timeout or window of 0 does: the local
 * node is found and the walk stops there.  Before, no node was taken at
 * all, and kmad_discover's load said the local node did not answer.
 */
static void discover_max_nodes_zero(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	const struct kmad_discover_result *res;
	struct kmad_discover_opts opts;

	dt_add_fakes(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes), dt_pair_links,
		     ARRAY_SIZE(dt_pair_links));
	kmad_discover_default_opts(&opts);
	opts.timeout_ms = DT_ASYNC_TIMEOUT_MS;
	opts.max_nodes = 0;
	f->d = kmad_discover_create(f->port[0], &opts);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f->d);
	kmad_discover_run(f->d);
	res = kmad_discover_result(f->d);
	KUNIT_ASSERT_EQ(test, res->nr_nodes, 1U);
	KUNIT_EXPECT_EQ(test, res->nodes[0].lid, f->lid[0]);
	KUNIT_EXPECT_EQ(test, res->nodes[0].hops, 0U);
}

/*
 * A timeout above KMAD_MAX_TIMEOUT_MS counts as that: the pair is found.
 * Before, every query's post failed with -EINVAL and nothing was.
 */
static void discover_huge_timeout(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	struct kmad_discover *d;

	dt_add_fakes(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes), dt_pair_links,
		     ARRAY_SIZE(dt_pair_links));
	d = dt_create(f, UINT_MAX, 0);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	dt_expect_pair(test, f, kmad_discover_result(d));
}

static void discover_bare_fabric(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	const struct kmad_discover_result *res;
	struct kmad_discover *d;

	d = dt_create(f, DT_ASYNC_TIMEOUT_MS, 3);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	res = kmad_discover_result(d);
	KUNIT_EXPECT_EQ(test, res->status, 0);
	dt_expect_accounting(test, res);
	/* No fake SMA: kmad_sim's firmware answers, both nodes are found. */
	KUNIT_EXPECT_EQ(test, res->nr_nodes, 2U);
}

static void discover_faults(struct kunit *test)
{
	struct kmad_sim_faults faults = { .drop_pct = 30, .dup_pct = 10 };
	struct dt_fix *f = test->priv;
	const struct kmad_discover_result *res;
	struct kmad_discover *d;

	dt_add_fakes(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes), dt_pair_links,
		     ARRAY_SIZE(dt_pair_links));
	kmad_sim_set_faults(f->fab, &faults);
	d = dt_create(f, 20, 20);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	res = kmad_discover_result(d);
	dt_expect_pair(test, f, res);
	/* Some of its MADs were lost: it noticed and sent them again. */
	KUNIT_EXPECT_GE(test, res->timeouts, 1U);
	KUNIT_EXPECT_GE(test, res->retries, 1U);
}

struct dt_runner {
	struct kmad_discover *d;
	int ret;
	struct completion done;
};

static int dt_run_thread(void *arg)
{
	struct dt_runner *r = arg;

	r->ret = kmad_discover_run(r->d);
	complete(&r->done);
	return 0;
}

/* Start a run that will wait 30 s for its only answer, in a thread. */
static void dt_start_stuck_run(struct kunit *test, struct dt_runner *r)
{
	struct kmad_sim_faults faults = { .drop_pct = 100 };
	struct dt_fix *f = test->priv;
	struct task_struct *t;

	kmad_sim_set_faults(f->fab, &faults);
	r->d = dt_create(f, DT_STUCK_TIMEOUT_MS, 0);
	init_completion(&r->done);
	t = kthread_run(dt_run_thread, r, "kmad_discover_test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	msleep(100);
	KUNIT_EXPECT_FALSE(test, completion_done(&r->done));
}

/* Wait for the run; it must end well before its timeout would. */
static void dt_wait_run(struct kunit *test, struct dt_runner *r)
{
	if (!wait_for_completion_timeout(&r->done,
					 msecs_to_jiffies(DT_STOP_WAIT_MS))) {
		KUNIT_FAIL(test, "the run did not end within %u ms",
			   DT_STOP_WAIT_MS);
		wait_for_completion(&r->done);
	}
}

static void discover_stop(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_runner r;

	dt_start_stuck_run(test, &r);
	kmad_discover_stop(r.d);
	dt_wait_run(test, &r);
	res = kmad_discover_result(r.d);
	KUNIT_EXPECT_EQ(test, r.ret, -ECANCELED);
	KUNIT_EXPECT_EQ(test, res->status, -ECANCELED);
	KUNIT_EXPECT_EQ(test, res->nr_nodes, 0U);
	KUNIT_EXPECT_EQ(test, res->timeouts, 0U);
	kmad_discover_print(r.d);
}

static void discover_port_gone(struct kunit *test)
{
	struct dt_fix *f = test->priv;
	struct dt_runner r;

	dt_start_stuck_run(test, &r);
	kmad_sim_remove_device(f->fab, 0);
	dt_wait_run(test, &r);
	KUNIT_EXPECT_EQ(test, r.ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, kmad_discover_result(r.d)->status, -ESHUTDOWN);
	kmad_discover_print(r.d);
}

/*
 * Step mode: the test is the wire.  Every send of device 0 is taken off
 * the wire undelivered; an SMP the fake fabric can answer gets its
 * response injected into device 0 as the last switch of the return path
 * would hand it over (D bit set, hop pointer 1).  PortCounters go
 * unanswered (a peeked MAD does not tell its destination LID): their
 * timeouts show which ports and LIDs were asked.  When nothing is on the
 * wire the virtual clock moves on by a timeout.
 */
static void dt_wire_answer(struct dt_fix *f, const u8 *req)
{
	u8 resp[KMAD_MAD_SIZE];
	struct kmad_smp *smp = (struct kmad_smp *)resp;
	int status;

	memcpy(resp, req, sizeof(resp));
	memset(smp->data, 0, sizeof(smp->data));
	status = dt_fill_smp(f, (const struct kmad_smp *)req, smp->data);
	if (status < 0)
		return;		/* lost */
	smp->method = KMAD_METHOD_GET_RESP;
	smp->status = cpu_to_be16(status | KMAD_SMP_DIRECTION);
	smp->hop_ptr = 1;
	if (f->wire_mod_zero)
		smp->attr_mod = 0;
	KUNIT_EXPECT_EQ(f->test,
			kmad_sim_inject(f->fab, 0, 0, resp, sizeof(resp),
					KMAD_PERMISSIVE_LID, 0), 0);
}

static void dt_wire_run(struct dt_fix *f, struct dt_runner *r,
			unsigned int timeout_ms)
{
	unsigned long give_up = jiffies + 20 * HZ;
	u8 req[KMAD_MAD_SIZE];
	bool stopped = false;
	bool moved;
	u32 qpn;

	while (!completion_done(&r->done)) {
		if (!stopped && time_after(jiffies, give_up)) {
			KUNIT_FAIL(f->test, "the run did not end within 20 s");
			kmad_discover_stop(r->d);
			stopped = true;
		}
		moved = false;
		for (qpn = 0; qpn < 2; qpn++) {
			while (kmad_sim_pending_sends(f->fab, 0, qpn)) {
				int len = kmad_sim_peek_send(f->fab, 0, qpn, 0,
							     req, sizeof(req));

				KUNIT_EXPECT_EQ(f->test,
						kmad_sim_complete_send(f->fab, 0, qpn, 0,
								       KMAD_WC_SUCCESS,
								       false), 0);
				moved = true;
				if (len == KMAD_MAD_SIZE && qpn == 0)
					dt_wire_answer(f, req);
				else if (qpn == 1)
					atomic_inc(&f->pma_hits);
			}
			kmad_sim_fire_cq_event(f->fab, 0, qpn, false);
		}
		kmad_sim_settle(f->fab);
		if (moved)
			continue;
		/* Let the runner post its next batch, if it is working. */
		usleep_range(5000, 10000);
		if (kmad_sim_pending_sends(f->fab, 0, 0) ||
		    kmad_sim_pending_sends(f->fab, 0, 1))
			continue;
		/* Only sends waiting for answers that will not come. */
		kmad_sim_advance_clock(f->fab, timeout_ms + 1);
		kmad_sim_settle(f->fab);
	}
	wait_for_completion(&r->done);
}

/*
 * kmad_discover_stop() between two batches: after the walk's first batch
 * (the local NodeInfo) was answered, as the next (its details) starts.
 * That batch is never sent, and must not be taken for answered.  Before,
 * its zeroed queries were copied as data: the local node got an empty
 * description marked valid, and PortInfo of zeros.
 */
static atomic_t dt_batches;

static void dt_stop_hook(struct kmad_discover *d, unsigned int n)
{
	if (atomic_inc_return(&dt_batches) == 2)
		kmad_discover_stop(d);
}

static void discover_stop_between_batches(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	struct task_struct *t;
	struct dt_runner r;
	unsigned int i;

	dt_set_fabric(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes),
		      dt_pair_links, ARRAY_SIZE(dt_pair_links));
	r.d = dt_create(f, DT_WIRE_TIMEOUT_MS, DT_WIRE_RETRIES);
	init_completion(&r.done);
	atomic_set(&dt_batches, 0);
	WRITE_ONCE(kmad_discover_test_batch_hook, dt_stop_hook);
	t = kthread_run(dt_run_thread, &r, "kmad_discover_test");
	if (IS_ERR(t)) {
		WRITE_ONCE(kmad_discover_test_batch_hook, NULL);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(t));
		return;
	}
	dt_wire_run(f, &r, DT_WIRE_TIMEOUT_MS);
	WRITE_ONCE(kmad_discover_test_batch_hook, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&dt_batches), 2);
	KUNIT_EXPECT_EQ(test, r.ret, -ECANCELED);
	res = kmad_discover_result(r.d);
	/* The local node was found; nothing read of it after the stop. */
	KUNIT_EXPECT_EQ(test, res->nr_nodes, 1U);
	for (i = 0; i < res->nr_nodes; i++) {
		const struct kmad_discover_node *n = &res->nodes[i];
		unsigned int p;

		KUNIT_EXPECT_FALSE_MSG(test, n->desc_valid && !n->desc[0],
				       "node %u: an empty description taken",
				       i);
		for (p = 0; p <= n->num_ports; p++)
			KUNIT_EXPECT_FALSE_MSG(test, n->ports[p].info_valid,
					       "node %u port %u read after the stop",
					       i, p);
	}
	kmad_discover_print(r.d);
}

/*
 * An SMA that answers with another AttributeModifier than the request's
 * (PortInfo of port 0 for a question about port 1): the answer is not
 * taken for the port asked about; each such PortInfo fails with -EPROTO.
 * Before, port 0's data was stored as port 1's.
 */
static void discover_answer_other_port(struct kunit *test)
{
	const struct kmad_discover_result *res;
	const struct kmad_discover_node *a;
	struct dt_fix *f = test->priv;
	struct task_struct *t;
	struct dt_runner r;
	unsigned int i, eproto = 0;

	dt_set_fabric(f, dt_pair_nodes, ARRAY_SIZE(dt_pair_nodes),
		      dt_pair_links, ARRAY_SIZE(dt_pair_links));
	f->wire_mod_zero = true;
	r.d = dt_create(f, DT_WIRE_TIMEOUT_MS, DT_WIRE_RETRIES);
	init_completion(&r.done);
	t = kthread_run(dt_run_thread, &r, "kmad_discover_test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	dt_wire_run(f, &r, DT_WIRE_TIMEOUT_MS);
	kmad_discover_print(r.d);
	res = kmad_discover_result(r.d);
	KUNIT_ASSERT_GE(test, res->nr_nodes, 1U);
	a = &res->nodes[0];
	KUNIT_EXPECT_FALSE(test, a->ports[1].info_valid);
	for (i = 0; i < res->nr_failures; i++)
		if (res->failures[i].query == KMAD_DISCOVER_Q_PORT_INFO &&
		    res->failures[i].err == -EPROTO)
			eproto++;
	KUNIT_EXPECT_GE(test, eproto, 1U);
}

/* Run a discovery from device 0 over the wire harness. */
static const struct kmad_discover_result *
dt_wire_discover(struct dt_fix *f, const struct dt_node_def *nodes,
		 unsigned int nr_nodes, const struct dt_link_def *links,
		 unsigned int nr_links)
{
	struct task_struct *t;
	struct dt_runner r;

	dt_set_fabric(f, nodes, nr_nodes, links, nr_links);
	r.d = dt_create(f, DT_WIRE_TIMEOUT_MS, DT_WIRE_RETRIES);
	init_completion(&r.done);
	t = kthread_run(dt_run_thread, &r, "kmad_discover_test");
	KUNIT_ASSERT_FALSE(f->test, IS_ERR(t));
	dt_wire_run(f, &r, DT_WIRE_TIMEOUT_MS);
	KUNIT_EXPECT_EQ(f->test, r.ret, 0);
	kmad_discover_print(r.d);
	return kmad_discover_result(r.d);
}

/* Is there a link a[pa] <-> b[pb] (by GUID), in either orientation? */
static bool dt_has_link(const struct kmad_discover_result *res, u64 a, u8 pa,
			u64 b, u8 pb)
{
	const struct kmad_discover_link *l;
	unsigned int i, e;

	for (i = 0; i < res->nr_links; i++) {
		l = &res->links[i];
		for (e = 0; e < 2; e++)
			if (res->nodes[l->node[e]].guid == a &&
			    l->port[e] == pa &&
			    res->nodes[l->node[!e]].guid == b &&
			    l->port[!e] == pb)
				return true;
	}
	return false;
}

/*
 * The PortCounters queries: one per port that is up (both ends of every
 * link, also where the far end could not be reached), @want in all, to
 * the CA's LID or the switch's (port 0) LID.
 */
static void dt_expect_counter_queries(struct kunit *test,
				      const struct kmad_discover_result *res,
				      unsigned int want)
{
	const struct kmad_discover_failure *fl;
	const struct kmad_discover_node *n;
	unsigned int i, asked = 0;

	for (i = 0; i < res->nr_failures; i++) {
		fl = &res->failures[i];
		if (fl->query != KMAD_DISCOVER_Q_PORT_COUNTERS)
			continue;
		asked++;
		KUNIT_ASSERT_GE(test, fl->node, 0);
		n = &res->nodes[fl->node];
		KUNIT_EXPECT_EQ(test, fl->dlid, n->lid);
		KUNIT_EXPECT_EQ(test, n->ports[fl->port].state, 4);
		KUNIT_EXPECT_EQ(test, fl->err, -ETIMEDOUT);
		KUNIT_EXPECT_EQ(test, fl->tries, DT_WIRE_RETRIES + 1);
	}
	KUNIT_EXPECT_EQ(test, asked, want);
	KUNIT_EXPECT_EQ(test, res->ports_read, 0U);
}

static void dt_expect_node(struct kunit *test, struct dt_fix *f,
			   const struct kmad_discover_node *n,
			   const struct dt_node_def *want)
{
	/* An SMI that answers hop count 0 itself tells of the real CA. */
	if (!n->hops && !atomic_read(&f->hop0_hits))
		return;
	KUNIT_EXPECT_EQ(test, n->guid, want->guid);
	KUNIT_EXPECT_EQ(test, n->type, want->type);
	KUNIT_EXPECT_EQ(test, n->num_ports, want->num_ports);
	KUNIT_EXPECT_EQ(test, n->lid, want->lid);
	KUNIT_EXPECT_STREQ(test, n->desc, want->desc);
}

static void discover_switches(struct kunit *test)
{
	const unsigned int nn = ARRAY_SIZE(dt_tree_nodes);
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	unsigned int i;

	res = dt_wire_discover(f, dt_tree_nodes, nn, dt_tree_links,
			       ARRAY_SIZE(dt_tree_links));
	KUNIT_EXPECT_EQ(test, res->status, 0);
	KUNIT_ASSERT_EQ(test, res->nr_nodes, nn);
	KUNIT_EXPECT_EQ(test, res->nr_links, ARRAY_SIZE(dt_tree_links));
	/* Breadth first: A, S1, then B and S2 (S1's ports 2, 3), then C. */
	for (i = 0; i < nn; i++)
		dt_expect_node(test, f, &res->nodes[i], &dt_tree_nodes[i]);
	KUNIT_EXPECT_EQ(test, res->nodes[3].hops, 2);
	KUNIT_EXPECT_EQ(test, res->nodes[3].path[1], 1);
	KUNIT_EXPECT_EQ(test, res->nodes[3].path[2], 3);
	KUNIT_EXPECT_EQ(test, res->nodes[4].hops, 3);
	for (i = 0; i < ARRAY_SIZE(dt_tree_links); i++) {
		const struct dt_link_def *l = &dt_tree_links[i];

		KUNIT_EXPECT_TRUE_MSG(test,
				      dt_has_link(res, dt_tree_nodes[l->a].guid,
						  l->pa, dt_tree_nodes[l->b].guid,
						  l->pb),
				      "link %u missing", i);
	}
	/* S1's port 5 is down: no peer, nothing sent through it. */
	KUNIT_EXPECT_EQ(test, res->nodes[1].ports[5].peer, -1);
	KUNIT_EXPECT_EQ(test, res->nodes[1].ports[5].state, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->deep_hits) > 0, true);
	/* No SMP failed; every counter query is accounted for. */
	KUNIT_EXPECT_EQ(test, res->nr_failures, 2 * res->nr_links);
	dt_expect_counter_queries(test, res, 2 * res->nr_links);
	dt_expect_accounting(test, res);
}

/* A link that is up but loses every SMP: reached the other way round. */
static void discover_dead_link(struct kunit *test)
{
	const unsigned int nn = ARRAY_SIZE(dt_tree_nodes);
	const struct kmad_discover_result *res;
	const struct kmad_discover_failure *fl;
	struct dt_fix *f = test->priv;
	unsigned int i, behind = 0;

	f->dead[1][3] = true;	/* S1 port 3 <-> S2 port 1 */
	f->dead[3][1] = true;
	res = dt_wire_discover(f, dt_tree_nodes, nn, dt_tree_links,
			       ARRAY_SIZE(dt_tree_links));

	/* Every node, S2 through S1's port 4; the dead link is not seen. */
	KUNIT_ASSERT_EQ(test, res->nr_nodes, nn);
	KUNIT_EXPECT_EQ(test, res->nr_links, ARRAY_SIZE(dt_tree_links) - 1);
	KUNIT_EXPECT_FALSE(test, dt_has_link(res, dt_tree_nodes[1].guid, 3,
					     dt_tree_nodes[3].guid, 1));
	dt_expect_node(test, f, &res->nodes[3], &dt_tree_nodes[3]);
	KUNIT_EXPECT_EQ(test, res->nodes[3].hops, 2);
	KUNIT_EXPECT_EQ(test, res->nodes[3].path[2], 4);
	/* Both ends of the dead link are reported, by node and port. */
	for (i = 0; i < res->nr_failures; i++) {
		fl = &res->failures[i];
		if (fl->query != KMAD_DISCOVER_Q_NODE_INFO)
			continue;
		KUNIT_EXPECT_EQ(test, fl->err, -ETIMEDOUT);
		KUNIT_EXPECT_EQ(test, fl->tries, DT_WIRE_RETRIES + 1);
		KUNIT_ASSERT_GE(test, fl->parent, 0);
		KUNIT_EXPECT_EQ(test, res->nodes[fl->parent].type,
				KMAD_DISCOVER_SWITCH);
		if (fl->parent == 1)
			KUNIT_EXPECT_EQ(test, fl->port, 3);
		else
			KUNIT_EXPECT_EQ(test, fl->port, 1);
		behind++;
	}
	KUNIT_EXPECT_EQ(test, behind, 2U);
	/* Counters: both ends of the links, and of the dead one. */
	KUNIT_EXPECT_EQ(test, res->unreachable, 2 + 2 * (res->nr_links + 1));
	dt_expect_counter_queries(test, res, 2 * (res->nr_links + 1));
	dt_expect_accounting(test, res);
}

/*
 * kmad_sim's own fabric as ground truth: which nodes a discovery from
 * device 0's port 1 can reach (through switches only, not through a cable
 * marked in @cut), and what it must find there.
 */
struct dt_truth {
	unsigned int nr_nodes;
	bool reach[DT_SIM_MAX_NODES];
	bool cut[DT_SIM_MAX_NODES][KMAD_SMP_DR_PATH_SIZE];
};

static void dt_truth_reach(struct kunit *test, struct dt_fix *f,
			   struct dt_truth *t)
{
	unsigned int queue[DT_SIM_MAX_NODES], head = 0, tail = 0, u, v;
	struct kmad_sim_node_info info;
	u8 p, pp;

	t->nr_nodes = kmad_sim_num_nodes(f->fab);
	KUNIT_ASSERT_LE(test, t->nr_nodes, DT_SIM_MAX_NODES);
	memset(t->reach, 0, sizeof(t->reach));
	t->reach[0] = true;
	queue[tail++] = 0;
	while (head < tail) {
		u = queue[head++];
		KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, u, &info), 0);
		if (u && info.type != KMAD_SIM_NODE_SWITCH)
			continue;	/* directed routes end at CAs */
		for (p = 1; p <= info.num_ports; p++) {
			if ((!u && p != 1) || t->cut[u][p] ||
			    kmad_sim_link_peer(f->fab, u, p, &v, &pp))
				continue;
			if (t->cut[v][pp] || t->reach[v])
				continue;
			t->reach[v] = true;
			queue[tail++] = v;
		}
	}
}

static int dt_find_guid(const struct kmad_discover_result *res, u64 guid)
{
	unsigned int i;

	for (i = 0; i < res->nr_nodes; i++)
		if (res->nodes[i].guid == guid)
			return i;
	return -1;
}

/* Every reachable node, port, LID and link, and nothing else. */
static void dt_expect_truth(struct kunit *test, struct dt_fix *f,
			    const struct kmad_discover_result *res,
			    const struct dt_truth *t)
{
	unsigned int u, v, nodes = 0, ends = 0;
	struct kmad_sim_node_info info, pinfo;
	const struct kmad_discover_node *n;
	int idx, pidx;
	u8 p, pp;

	for (u = 0; u < t->nr_nodes; u++) {
		if (!t->reach[u])
			continue;
		nodes++;
		KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, u, &info), 0);
		idx = dt_find_guid(res, info.guid);
		KUNIT_EXPECT_GE_MSG(test, idx, 0, "%s not found", info.name);
		if (idx < 0)
			continue;
		n = &res->nodes[idx];
		KUNIT_EXPECT_EQ(test, n->type, (u8)info.type);
		KUNIT_EXPECT_EQ(test, n->num_ports, info.num_ports);
		KUNIT_EXPECT_TRUE(test, n->desc_valid);
		if (info.type == KMAD_SIM_NODE_SWITCH)
			KUNIT_EXPECT_EQ(test, n->lid, info.lid);
		for (p = 1; p <= info.num_ports; p++) {
			if (info.type != KMAD_SIM_NODE_SWITCH)
				KUNIT_EXPECT_EQ_MSG(test, n->ports[p].lid,
						    kmad_sim_port_lid(f->fab, u, p),
						    "%s port %u", info.name, p);
			if (t->cut[u][p] ||
			    kmad_sim_link_peer(f->fab, u, p, &v, &pp) ||
			    t->cut[v][pp] || !t->reach[v]) {
				KUNIT_EXPECT_EQ_MSG(test, n->ports[p].peer, -1,
						    "%s port %u", info.name, p);
				continue;
			}
			ends++;
			KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, v, &pinfo),
					0);
			pidx = dt_find_guid(res, pinfo.guid);
			KUNIT_EXPECT_EQ_MSG(test, n->ports[p].peer, pidx,
					    "%s port %u", info.name, p);
			KUNIT_EXPECT_EQ_MSG(test, n->ports[p].peer_port, pp,
					    "%s port %u", info.name, p);
		}
	}
	KUNIT_EXPECT_EQ(test, res->nr_nodes, nodes);
	KUNIT_EXPECT_EQ(test, 2 * res->nr_links, ends);
	/* The local node first, as kmad_sim's device 0. */
	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, 0, &info), 0);
	KUNIT_ASSERT_GE(test, res->nr_nodes, 1U);
	KUNIT_EXPECT_EQ(test, res->nodes[0].guid, info.guid);
	KUNIT_EXPECT_EQ(test, res->nodes[0].hops, 0);
}

static void discover_tree(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	struct kmad_discover *d;
	struct dt_truth *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	dt_truth_reach(test, f, t);
	d = dt_create(f, DT_ASYNC_TIMEOUT_MS, 3);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	res = kmad_discover_result(d);
	KUNIT_EXPECT_EQ(test, res->nr_nodes, t->nr_nodes);
	dt_expect_truth(test, f, res, t);
	/* Every cabled port's counters, nothing lost. */
	KUNIT_EXPECT_EQ(test, res->ports_read, 2 * res->nr_links);
	KUNIT_EXPECT_EQ(test, res->nr_failures, 0U);
	KUNIT_EXPECT_EQ(test, res->retries, 0U);
	dt_expect_accounting(test, res);
}

static void discover_tree_link_down(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	unsigned int root = DT_TREE_HCAS;	/* the first switch */
	struct kmad_sim_node_info info;
	struct kmad_discover *d;
	struct dt_truth *t;
	int idx;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(f->fab, root, &info), 0);
	KUNIT_ASSERT_EQ(test, info.type, KMAD_SIM_NODE_SWITCH);
	/* Cut the root's last port: one leaf and its HCAs drop out. */
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(f->fab, root, info.num_ports,
						false), 0);
	t->cut[root][info.num_ports] = true;
	dt_truth_reach(test, f, t);
	d = dt_create(f, DT_ASYNC_TIMEOUT_MS, 3);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	res = kmad_discover_result(d);
	KUNIT_EXPECT_LT(test, res->nr_nodes, t->nr_nodes);
	dt_expect_truth(test, f, res, t);
	/* A port that is down is not a failure: it is not tried. */
	KUNIT_EXPECT_EQ(test, res->nr_failures, 0U);
	idx = dt_find_guid(res, info.guid);
	KUNIT_ASSERT_GE(test, idx, 0);
	KUNIT_EXPECT_EQ(test, res->nodes[idx].ports[info.num_ports].state, 1);
}

static void discover_tree_faults(struct kunit *test)
{
	struct kmad_sim_faults faults = { .drop_pct = 5, .dup_pct = 5 };
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	struct kmad_discover *d;
	struct dt_truth *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	dt_truth_reach(test, f, t);
	kmad_sim_set_faults(f->fab, &faults);
	d = dt_create(f, 50, 10);
	KUNIT_EXPECT_EQ(test, kmad_discover_run(d), 0);
	kmad_discover_print(d);
	res = kmad_discover_result(d);
	dt_expect_truth(test, f, res, t);
	KUNIT_EXPECT_EQ(test, res->ports_read, 2 * res->nr_links);
	KUNIT_EXPECT_EQ(test, res->nr_failures, 0U);
	KUNIT_EXPECT_GE(test, res->retries, 1U);
	KUNIT_EXPECT_GE(test, res->timeouts, 1U);
	dt_expect_accounting(test, res);
}

/* At least one NodeInfo refused as -EPROTO, and counted among the errors. */
static void dt_expect_bad_node_info(struct kunit *test,
				    const struct kmad_discover_result *res)
{
	unsigned int i, eproto = 0;

	for (i = 0; i < res->nr_failures; i++)
		if (res->failures[i].query == KMAD_DISCOVER_Q_NODE_INFO &&
		    res->failures[i].err == -EPROTO)
			eproto++;
	KUNIT_EXPECT_GE(test, eproto, 1U);
	KUNIT_EXPECT_GE(test, res->errors, eproto);
}

/*
 * Two switches answering with one NodeGUID (S2 claims S1's): S2's
 * NodeInfo, reached through S1 port 3, is taken for S1 entered at port 1,
 * which leads to A: a contradiction, dropped and counted (-EPROTO on that
 * NodeInfo), not silently ignored.  Everything behind S2 (C) is then out
 * of sight, and the result says why.
 */
static void discover_duplicate_guid(struct kunit *test)
{
	struct dt_node_def nodes[ARRAY_SIZE(dt_tree_nodes)];
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;

	memcpy(nodes, dt_tree_nodes, sizeof(nodes));
	nodes[3].guid = nodes[1].guid;
	res = dt_wire_discover(f, nodes, ARRAY_SIZE(nodes), dt_tree_links,
			       ARRAY_SIZE(dt_tree_links));
	dt_expect_bad_node_info(test, res);
	KUNIT_EXPECT_EQ(test, dt_find_guid(res, nodes[4].guid), -1);
}

/*
 * A switch (S2) whose NodeInfo gives LocalPortNum 0 when reached through
 * a link: no port it could be entered by.  The answer is dropped and
 * counted (-EPROTO), and S2 is not added: nothing behind it (C) is
 * walked.  Before, S2 was added and walked, and the result listed an
 * error for a link it then showed as found.
 */
static void discover_bad_entry_port(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;

	f->bad_entry_node = 3;
	res = dt_wire_discover(f, dt_tree_nodes, ARRAY_SIZE(dt_tree_nodes),
			       dt_tree_links, ARRAY_SIZE(dt_tree_links));
	dt_expect_bad_node_info(test, res);
	KUNIT_EXPECT_EQ(test, dt_find_guid(res, dt_tree_nodes[3].guid), -1);
	KUNIT_EXPECT_EQ(test, dt_find_guid(res, dt_tree_nodes[4].guid), -1);
}

/*
 * A node that answers NodeInfo with a known GUID but another node type or
 * port count is a second node with that GUID, not the known one entered
 * by another port: dropped and counted (-EPROTO), no link.  Here S2 (a
 * 3-port switch, entered by its port 2 from S1 port 3) claims the GUID of
 * B, a 2-port CA whose port 2 is not cabled.  Before, the answer was
 * taken for B entered at port 2: a link S1[3] <-> B[2] with no error, to
 * a port B's own PortInfo calls down.  (S2 entered from S1 port 4, at its
 * port 3, B does not have: -EPROTO before too.)
 */
static void discover_guid_of_other_type(struct kunit *test)
{
	static const struct dt_link_def links[] = {
		{ 0, 1, 1, 1 }, { 1, 2, 2, 1 }, { 1, 3, 3, 2 }, { 3, 1, 4, 1 },
		{ 3, 3, 1, 4 },
	};
	struct dt_node_def nodes[ARRAY_SIZE(dt_tree_nodes)];
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;
	unsigned int i, to_b = 0;
	int b;

	memcpy(nodes, dt_tree_nodes, sizeof(nodes));
	nodes[2].num_ports = 2;
	nodes[3].guid = nodes[2].guid;
	res = dt_wire_discover(f, nodes, ARRAY_SIZE(nodes), links,
			       ARRAY_SIZE(links));
	dt_expect_bad_node_info(test, res);
	b = dt_find_guid(res, nodes[2].guid);
	KUNIT_ASSERT_GE(test, b, 0);
	for (i = 0; i < res->nr_links; i++)
		to_b += (res->links[i].node[0] == b) +
			(res->links[i].node[1] == b);
	KUNIT_EXPECT_EQ(test, to_b, 1U);
	KUNIT_EXPECT_EQ(test, dt_find_guid(res, nodes[4].guid), -1);
}

/*
 * A limit that leaves part of the fabric out says so: the tree with
 * max_nodes 2 (A and S1 found; B, and S2 through two ports, answer and
 * are left out: 3 answers) and with max_hops 1 (S1's ports are not
 * probed).  Before, both ended as a clean run with no count and no word
 * in the "done" line.
 */
static void discover_limits_reported(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;

	f->opts_max_nodes = 2;
	res = dt_wire_discover(f, dt_tree_nodes, ARRAY_SIZE(dt_tree_nodes),
			       dt_tree_links, ARRAY_SIZE(dt_tree_links));
	KUNIT_EXPECT_EQ(test, res->nr_nodes, 2U);
	KUNIT_EXPECT_EQ(test, res->nodes_dropped, 3U);
	KUNIT_EXPECT_EQ(test, res->hops_limited, 0U);
}

static void discover_hop_limit_reported(struct kunit *test)
{
	const struct kmad_discover_result *res;
	struct dt_fix *f = test->priv;

	f->opts_max_hops = 1;
	res = dt_wire_discover(f, dt_tree_nodes, ARRAY_SIZE(dt_tree_nodes),
			       dt_tree_links, ARRAY_SIZE(dt_tree_links));
	KUNIT_EXPECT_EQ(test, res->nr_nodes, 2U);
	KUNIT_EXPECT_EQ(test, res->nodes_dropped, 0U);
	/* S1's ports 2, 3 and 4 are up and lead on; port 1 is A's. */
	KUNIT_EXPECT_EQ(test, res->hops_limited, 3U);
}

/*
 * The result's and the probes' arrays grow past what kmalloc gives: a
 * round of probes through many switch ports (255 ports of 70 switches,
 * or one lying switch) needs 32768 184-byte probes, 6 MB, which
 * krealloc_array() refused with a page allocator warning (order 11; a
 * splat, a panic with panic_on_warn) and discovery ended -ENOMEM.
 * kmad_discover_grow() now uses kvmalloc: the array grows, its contents kept.
 */
static void discover_grow_large(struct kunit *test)
{
	const size_t size = 184;
	unsigned int cap = 0, need;
	u8 *array = NULL;
	int ret = 0;

	for (need = 1; need <= 32768 && !ret; need *= 2) {
		ret = kmad_discover_grow((void **)&array, &cap, need, size);
		if (!ret)
			array[(size_t)need * size - 1] = (u8)need;
	}
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_GE(test, cap, 32768U);
	if (!ret) {
		for (need = 1; need <= 32768; need *= 2)
			KUNIT_EXPECT_EQ(test,
					array[(size_t)need * size - 1],
					(u8)need);
	}
	kvfree(array);
}

static struct kunit_case discover_cases[] = {
	KUNIT_CASE(discover_pair),
	KUNIT_CASE(discover_grow_large),
	KUNIT_CASE(discover_max_nodes_zero),
	KUNIT_CASE(discover_huge_timeout),
	KUNIT_CASE(discover_bare_fabric),
	KUNIT_CASE(discover_faults),
	KUNIT_CASE(discover_stop),
	KUNIT_CASE(discover_port_gone),
	{}
};

static struct kunit_suite discover_suite = {
	.name = "kmad_discover",
	.init = dt_init_async,
	.exit = dt_exit,
	.test_cases = discover_cases,
};

static struct kunit_case discover_wire_cases[] = {
	KUNIT_CASE(discover_switches),
	KUNIT_CASE(discover_dead_link),
	KUNIT_CASE(discover_stop_between_batches),
	KUNIT_CASE(discover_answer_other_port),
	KUNIT_CASE(discover_duplicate_guid),
	KUNIT_CASE(discover_bad_entry_port),
	KUNIT_CASE(discover_guid_of_other_type),
	KUNIT_CASE(discover_limits_reported),
	KUNIT_CASE(discover_hop_limit_reported),
	{}
};

static struct kunit_suite discover_wire_suite = {
	.name = "kmad_discover_wire",
	.init = dt_init_step,
	.exit = dt_exit,
	.test_cases = discover_wire_cases,
};

static struct kunit_case discover_subnet_cases[] = {
	KUNIT_CASE(discover_tree),
	KUNIT_CASE(discover_tree_link_down),
	KUNIT_CASE(discover_tree_faults),
	{}
};

static struct kunit_suite discover_subnet_suite = {
	.name = "kmad_discover_subnet",
	.init = dt_init_tree,
	.exit = dt_exit,
	.test_cases = discover_subnet_cases,
};

kunit_test_suites(&discover_suite, &discover_wire_suite,
		  &discover_subnet_suite);

MODULE_DESCRIPTION("KUnit tests for kmad_discover");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
