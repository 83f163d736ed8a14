// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_agent: registration rules.
 */

#include <linux/kthread.h>

#include "kmad_test.h"

static void kt_set_methods(struct kmad_reg_req *req, u8 cls, u8 version,
			   const u8 *methods, int n)
{
	int i;

	memset(req, 0, sizeof(*req));
	req->mgmt_class = cls;
	req->class_version = version;
	for (i = 0; i < n; i++)
		__set_bit(methods[i], req->method_mask);
}

static struct kmad_agent *kt_register(struct kt_fix *f, enum kmad_qp_type qpt,
				      const struct kmad_reg_req *req)
{
	return kmad_register_agent(f->port[KT_DEV1], qpt, req, kt_send_handler,
				   kt_recv_handler, f);
}

/* A plain GSI registration works; overlapping methods are -EBUSY, disjoint
 * methods of the same class and version are fine.
 */
static void agent_overlap_is_busy(struct kunit *test)
{
	static const u8 get_set[] = { KMAD_METHOD_GET, KMAD_METHOD_SET };
	static const u8 set[] = { KMAD_METHOD_SET };
	static const u8 trap[] = { KMAD_METHOD_TRAP };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a, *b, *c;
	struct kmad_reg_req req;

	kt_set_methods(&req, KT_CLASS, KT_VERSION, get_set, 2);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kt_set_methods(&req, KT_CLASS, KT_VERSION, set, 1);
	b = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_EQ(test, PTR_ERR(b), -EBUSY);
	kt_set_methods(&req, KT_CLASS, KT_VERSION, trap, 1);
	c = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(c));
	/* Another version of the class is another registration. */
	kt_set_methods(&req, KT_CLASS, KT_VERSION + 1, set, 1);
	b = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(b));
	kmad_unregister_agent(b);
	kmad_unregister_agent(c);
	kmad_unregister_agent(a);
}

/* Vendor range 2 needs an OUI, and different OUIs do not conflict. */
static void agent_vendor_oui(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a, *b;
	struct kmad_reg_req req;

	kt_set_methods(&req, 0x31, 1, get, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EINVAL);
	req.oui[2] = 0x01;
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EBUSY);
	req.oui[2] = 0x02;
	b = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(b));
	/* An OUI outside range 2 is a mistake. */
	kt_set_methods(&req, KMAD_MGMT_CLASS_CM, 2, get, 1);
	req.oui[0] = 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EINVAL);
	kmad_unregister_agent(b);
	kmad_unregister_agent(a);
}

/* Send-only agents never conflict and each gets its own hi_tid. */
static void agent_send_only(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_agent *a, *b;
	struct kmad_reg_req req = { };

	a = kt_register(f, KMAD_QPT_GSI, NULL);
	b = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_NE(test, a->hi_tid, b->hi_tid);
	KUNIT_EXPECT_NE(test, a->hi_tid, f->agent->hi_tid);
	kmad_unregister_agent(b);
	kmad_unregister_agent(a);
}

/* SMP classes belong on QP0 only, GMP classes on QP1 only. */
static void agent_qp_class_rules(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_agent *a;
	struct kmad_reg_req req;

	kt_set_methods(&req, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, get, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EINVAL);
	a = kt_register(f, KMAD_QPT_SMI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(a));
	kt_set_methods(&req, KMAD_MGMT_CLASS_PERF_MGMT, 1, get, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_SMI, &req)),
			-EINVAL);
	kmad_unregister_agent(a);
}

/* The error a registration that must fail gets (0 if it succeeded). */
static long kt_reg_err(struct kmad_port *port, enum kmad_qp_type qpt,
		       const struct kmad_reg_req *req, kmad_send_handler sh,
		       kmad_recv_handler rh)
{
	struct kmad_agent *a = kmad_register_agent(port, qpt, req, sh, rh,
						   NULL);

	if (!IS_ERR(a)) {
		kmad_unregister_agent(a);
		return 0;
	}
	return PTR_ERR(a);
}

/* Malformed registrations get -EINVAL, never a crash. */
static void agent_bad_arguments(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	static const u8 zero[] = { 0 };
	static const u8 bad_versions[] = { 0, KMAD_MAX_CLASS_VERSION, 0xff };
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req;
	struct kmad_agent *a;
	unsigned int i;

	kt_set_methods(&req, KT_CLASS, KT_VERSION, get, 1);
	KUNIT_EXPECT_EQ(test, kt_reg_err(NULL, KMAD_QPT_GSI, &req,
					 kt_send_handler, kt_recv_handler),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kt_reg_err(f->port[0], 7, &req, kt_send_handler,
					 kt_recv_handler), -EINVAL);
	KUNIT_EXPECT_EQ(test, kt_reg_err(f->port[0], KMAD_QPT_GSI, &req, NULL,
					 kt_recv_handler), -EINVAL);
	KUNIT_EXPECT_EQ(test, kt_reg_err(f->port[0], KMAD_QPT_GSI, &req,
					 kt_send_handler, NULL), -EINVAL);
	kt_set_methods(&req, KT_CLASS, KT_VERSION, get, 0);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EINVAL);
	/* Method 0 is reserved: taken, never used, like 0x04 (mad.h). */
	kt_set_methods(&req, KT_CLASS, KT_VERSION, zero, 1);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(a));
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	/* Every bit: every method, as ib_mad takes it. */
	kt_set_methods(&req, KT_CLASS, KT_VERSION, get, 0);
	bitmap_fill(req.method_mask, KMAD_METHODS);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(a));
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	/* Class version 0 (no class has it: kmad's rule), and 8 on, as
	 * ib_mad refuses them; 7 is the last.
	 */
	for (i = 0; i < ARRAY_SIZE(bad_versions); i++) {
		kt_set_methods(&req, KT_CLASS, bad_versions[i], get, 1);
		KUNIT_EXPECT_EQ(test,
				PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
				-EINVAL);
	}
	kt_set_methods(&req, KT_CLASS, KMAD_MAX_CLASS_VERSION - 1, get, 1);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_EXPECT_FALSE(test, IS_ERR(a));
	if (!IS_ERR(a))
		kmad_unregister_agent(a);
	kt_set_methods(&req, 0x60, 1, get, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(kt_register(f, KMAD_QPT_GSI, &req)),
			-EINVAL);
	kmad_unregister_agent(NULL);
}

/* A port is found by device name and number, with a reference. */
static void agent_port_lookup(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const char *name = kmad_port_dev_name(f->port[KT_DEV1]);
	struct kmad_port *port;

	port = kmad_port_get(name, 1);
	KUNIT_EXPECT_PTR_EQ(test, port, f->port[KT_DEV1]);
	KUNIT_EXPECT_EQ(test, kmad_port_num(port), 1);
	kmad_port_put(port);
	KUNIT_EXPECT_NULL(test, kmad_port_get(name, 2));
	KUNIT_EXPECT_NULL(test, kmad_port_get("no-such-device", 1));
}

/* A send-only agent on @port (NULL: refused). */
static struct kmad_agent *kt_reg_err_port(struct kmad_port *port)
{
	return kmad_register_agent(port, KMAD_QPT_GSI, NULL, kt_send_handler,
				   NULL, NULL);
}

/* A NULL or error-pointer port is refused by every port call (mad.h). */
static void agent_port_calls_null(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_port *bad[] = { NULL, ERR_PTR(-ENODEV) };
	union kmad_gid gid;
	u32 qpn = 77;
	u16 pkey;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		KUNIT_EXPECT_NULL(test, kmad_port_dev_name(bad[i]));
		KUNIT_EXPECT_EQ(test, kmad_port_num(bad[i]), 0);
		KUNIT_EXPECT_EQ(test, kmad_port_lid(bad[i]), 0);
		KUNIT_EXPECT_EQ(test, kmad_port_lmc(bad[i]), 0);
		KUNIT_EXPECT_EQ(test, kmad_port_sm_lid(bad[i]), 0);
		KUNIT_EXPECT_EQ(test, kmad_port_link_layer(bad[i]),
				KMAD_LINK_LAYER_INFINIBAND);
		KUNIT_EXPECT_FALSE(test, kmad_port_has_smi(bad[i]));
		KUNIT_EXPECT_EQ(test, kmad_port_qp_num(bad[i], KMAD_QPT_GSI,
						       &qpn), -EINVAL);
		KUNIT_EXPECT_EQ(test, kmad_port_query_gid(bad[i], 0, &gid),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, kmad_port_query_pkey(bad[i], 0, &pkey),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, kmad_port_modify_cap(bad[i], 0, 0),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(kt_reg_err_port(bad[i])),
				-EINVAL);
		kmad_port_put(bad[i]);
	}
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(f->port[0], KMAD_QPT_GSI, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, qpn, 77U);
	KUNIT_EXPECT_EQ(test, kmad_port_qp_num(f->port[0], KMAD_QPT_GSI, &qpn),
			0);
	KUNIT_EXPECT_EQ(test, qpn, 1U);
}

struct kt_client {
	struct kmad_client client;
	const char *prefix;
	int added;
	int removed;
};

static int kt_client_add(struct kmad_client *c, struct kmad_port *port,
			 void **data)
{
	struct kt_client *kc = container_of(c, struct kt_client, client);

	if (strncmp(kmad_port_dev_name(port), kc->prefix, strlen(kc->prefix)))
		return -ENODEV;
	kc->added++;
	*data = kc;
	return 0;
}

static void kt_client_remove(struct kmad_client *c, struct kmad_port *port,
			     void *data)
{
	struct kt_client *kc = data;

	kc->removed++;
}

/* A kt_client for the devices whose names start with @pfx. */
#define KT_CLIENT(pfx) {						\
	.client = {							\
		.name = "kt",						\
		.add = kt_client_add,					\
		.remove = kt_client_remove,				\
	},								\
	.prefix = (pfx),						\
}

/* A client whose add callback registers another client. */
struct kt_nested {
	struct kmad_client client;
	struct kmad_client inner;
	int ret;
	int calls;
};

static int kt_nested_add(struct kmad_client *c, struct kmad_port *port,
			 void **data)
{
	struct kt_nested *n = container_of(c, struct kt_nested, client);

	if (!n->calls++)
		n->ret = kmad_register_client(&n->inner);
	return -ENODEV;		/* no port kept: no remove calls */
}

/*
 * Client misuse is refused, never a crash or a hang (mad.h): a second
 * registration is -EBUSY; unregistering a client never registered, or
 * twice, does nothing; a registration from a client callback, which runs
 * under the lock it takes, is -EDEADLK.  A client unregistered can
 * register again.
 */
static void agent_client_misuse(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_client never = { .name = "kt-never" };
	struct kt_nested n = {
		.client = { .name = "kt-outer", .add = kt_nested_add },
		.inner = { .name = "kt-inner" },
	};
	char prefix[KMAD_NAME_LEN];
	struct kt_client kc = KT_CLIENT(prefix);

	kmad_unregister_client(&never);
	strscpy(prefix, kmad_port_dev_name(f->port[0]), sizeof(prefix));
	KUNIT_ASSERT_EQ(test, kmad_register_client(&kc.client), 0);
	KUNIT_EXPECT_EQ(test, kc.added, 1);
	KUNIT_EXPECT_EQ(test, kmad_register_client(&kc.client), -EBUSY);
	KUNIT_EXPECT_EQ(test, kc.added, 1);
	kmad_unregister_client(&kc.client);
	KUNIT_EXPECT_EQ(test, kc.removed, 1);
	kmad_unregister_client(&kc.client);
	KUNIT_EXPECT_EQ(test, kc.removed, 1);
	KUNIT_ASSERT_EQ(test, kmad_register_client(&kc.client), 0);
	KUNIT_EXPECT_EQ(test, kc.added, 2);
	kmad_unregister_client(&kc.client);
	KUNIT_EXPECT_EQ(test, kc.removed, 2);

	KUNIT_ASSERT_EQ(test, kmad_register_client(&n.client), 0);
	KUNIT_EXPECT_GE(test, n.calls, 1);
	KUNIT_EXPECT_EQ(test, n.ret, -EDEADLK);
	kmad_unregister_client(&n.client);
	kmad_unregister_client(&n.inner);
}

/* A client hears about every existing port, then each one going away. */
static void agent_client_add_remove(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	char prefix[KMAD_NAME_LEN];
	struct kt_client kc = KT_CLIENT(prefix);

	strscpy(prefix, kmad_port_dev_name(f->port[0]), sizeof(prefix));
	prefix[strlen(prefix) - 1] = '\0';	/* "<module><N>_" */
	KUNIT_ASSERT_EQ(test, kmad_register_client(&kc.client), 0);
	KUNIT_EXPECT_EQ(test, kc.added, 2);
	kmad_sim_remove_device(f->fab, KT_DEV1);
	KUNIT_EXPECT_EQ(test, kc.removed, 1);
	kmad_unregister_client(&kc.client);
	KUNIT_EXPECT_EQ(test, kc.removed, 2);
}

struct kt_reg {
	struct kt_fix *f;
	struct kmad_reg_req req;
	struct kmad_agent *agent;
	struct completion done;
};

static int kt_reg_fn(void *arg)
{
	struct kt_reg *r = arg;

	r->agent = kt_register(r->f, KMAD_QPT_GSI, &r->req);
	complete(&r->done);
	return 0;
}

/*
 * A registration that fails was never reachable: while a conflicting
 * registration waits for the port's registration lock, the hi_tid it was
 * given names no agent.  (It once did, from the moment the hi_tid was
 * allocated: a response with that TID took a reference to an agent that
 * the failing registration then freed under it.)
 */
static void agent_failed_registration_unreachable(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_port *port = f->port[KT_DEV1];
	struct kmad_agent_priv *found = NULL;
	struct kt_reg r = { .f = f };
	struct task_struct *t;
	struct kmad_agent *a;
	bool was_found;
	u64 tid;
	int i;

	kt_set_methods(&r.req, KT_CLASS, KT_VERSION, get, 1);
	a = kt_register(f, KMAD_QPT_GSI, &r.req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	/* The next registration gets a's hi_tid + 1 (the seam makes sure:
	 * a guess that missed would let the check below pass vacuously).
	 */
	kmad_test_set_next_hi_tid(a->hi_tid + 1);
	tid = (u64)(a->hi_tid + 1) << 32;
	init_completion(&r.done);
	mutex_lock(&port->reg_mutex);
	t = kthread_run(kt_reg_fn, &r, "kt_reg");
	if (IS_ERR(t)) {
		mutex_unlock(&port->reg_mutex);
		kmad_unregister_agent(a);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(t));
		return;
	}
	/* The thread gets to the lock within a few ms; look for 200. */
	for (i = 0; i < 100 && !found; i++) {
		found = kmad_agent_find_by_tid(&port->qpi[KMAD_QPT_GSI], tid);
		usleep_range(2000, 3000);
	}
	was_found = found;
	if (found)	/* before the registration fails and frees it */
		kmad_agent_put(found);
	mutex_unlock(&port->reg_mutex);
	KUNIT_ASSERT_NE(test, wait_for_completion_timeout(&r.done, 30 * HZ),
			0UL);
	KUNIT_EXPECT_FALSE(test, was_found);
	KUNIT_EXPECT_EQ(test, PTR_ERR(r.agent), -EBUSY);
	/* The hi_tid it held is free again, and names nothing. */
	KUNIT_EXPECT_NULL(test,
			  kmad_agent_find_by_tid(&port->qpi[KMAD_QPT_GSI], tid));
	kmad_unregister_agent(a);
}

/*
 * hi_tids stay below 2^24, as ib_mad's (the top byte of a TID is 0): the
 * last one is 2^24 - 1, and a counter past it comes round to the low
 * ones.  (With the 32-bit limit the second agent got 2^24.)
 */
static void agent_hi_tid_24_bits(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	static const u8 set[] = { KMAD_METHOD_SET };
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {}, req2 = {};
	struct kmad_agent *a, *b;

	kt_set_methods(&req, KT_CLASS, KT_VERSION, get, 1);
	kt_set_methods(&req2, KT_CLASS, KT_VERSION, set, 1);
	kmad_test_set_next_hi_tid((1U << 24) - 1);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, a->hi_tid, (1U << 24) - 1);
	kmad_unregister_agent(a);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_GE(test, a->hi_tid, 1U);
	KUNIT_EXPECT_LT(test, a->hi_tid, 1U << 24);
	kmad_test_set_next_hi_tid(U32_MAX);
	b = kt_register(f, KMAD_QPT_GSI, &req2);
	if (IS_ERR(b))
		kmad_unregister_agent(a);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_LT(test, b->hi_tid, 1U << 24);
	KUNIT_EXPECT_NE(test, b->hi_tid, a->hi_tid);
	kmad_unregister_agent(b);
	kmad_unregister_agent(a);
}

/*
 * An agent whose port went away keeps its registration until its ULP
 * unregisters it, but not its hi_tid, which a later agent may get: that
 * late unregister leaves the later agent's hi_tid alone, so responses
 * still find it.  (Port removal and unregister each erased the hi_tid:
 * the second erase took the later agent's, and every response to it was
 * dropped as unmatched.)
 */
static void agent_hi_tid_reused_after_port_removal(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	struct kt_fix *f = test->priv;
	struct kmad_port *port0 = f->port[KT_DEV0];
	struct kmad_agent_priv *found;
	struct kmad_reg_req req = {};
	struct kmad_agent *a, *b;

	kt_set_methods(&req, KT_CLASS, KT_VERSION, get, 1);
	a = kt_register(f, KMAD_QPT_GSI, &req);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	kmad_sim_remove_device(f->fab, KT_DEV1);
	/* The counter of hi_tids has come round to a's, as after 2^24. */
	kmad_test_set_next_hi_tid(a->hi_tid);
	b = kmad_register_agent(port0, KMAD_QPT_GSI, &req, kt_send_handler,
				kt_recv_handler, f);
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	KUNIT_EXPECT_EQ(test, b->hi_tid, a->hi_tid);
	KUNIT_EXPECT_EQ(test, kmad_unregister_agent(a), 0);
	/* b's TIDs still name b. */
	found = kmad_agent_find_by_tid(&port0->qpi[KMAD_QPT_GSI],
				       (u64)b->hi_tid << 32 | 1);
	KUNIT_EXPECT_PTR_EQ(test, found, kmad_agent_priv(b));
	if (found)
		kmad_agent_put(found);
	kmad_unregister_agent(b);
}

/*
 * Unregistering a client tells that client alone: another client of the
 * same ports keeps them, hears no remove, and hears its own when a device
 * goes.  (Were the client not matched, unregistering A would call B's
 * remove for every port and forget B's data there.)
 */
static void agent_client_unregister_others_kept(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	char prefix[KMAD_NAME_LEN];
	struct kt_client a = KT_CLIENT(prefix);
	struct kt_client b = KT_CLIENT(prefix);
	int ret;

	strscpy(prefix, kmad_port_dev_name(f->port[0]), sizeof(prefix));
	prefix[strlen(prefix) - 1] = '\0';	/* "<module><N>_" */
	KUNIT_ASSERT_EQ(test, kmad_register_client(&a.client), 0);
	ret = kmad_register_client(&b.client);
	if (ret)
		kmad_unregister_client(&a.client);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, a.added, 2);
	KUNIT_EXPECT_EQ(test, b.added, 2);

	kmad_unregister_client(&a.client);
	KUNIT_EXPECT_EQ(test, a.removed, 2);
	KUNIT_EXPECT_EQ_MSG(test, b.removed, 0,
			    "unregistering A called B's remove");

	kmad_sim_remove_device(f->fab, KT_DEV1);
	KUNIT_EXPECT_EQ(test, b.removed, 1);
	KUNIT_EXPECT_EQ(test, a.removed, 2);
	kmad_unregister_client(&b.client);
	KUNIT_EXPECT_EQ(test, b.removed, 2);
	KUNIT_EXPECT_EQ(test, b.added, 2);
}

/* A client that records its calls for each port of a two-port pair. */
struct kt_pclient {
	struct kmad_client client;
	char prefix[KMAD_NAME_LEN];	/* the fabric's "<name>" */
	int added[2][2];		/* [device][port - 1] */
	int removed[2][2];
	int bad;			/* a port of the fabric not expected */
};

static int *kt_pclient_slot(struct kt_pclient *pc, struct kmad_port *port,
			    int (*rec)[2])
{
	const char *name = kmad_port_dev_name(port);
	size_t len = strlen(pc->prefix);
	u8 num = kmad_port_num(port);

	if (strncmp(name, pc->prefix, len))
		return NULL;		/* another fabric's */
	if ((name[len] != '0' && name[len] != '1') || name[len + 1] ||
	    num < 1 || num > 2) {
		pc->bad++;
		return NULL;
	}
	return &rec[name[len] - '0'][num - 1];
}

static int kt_pclient_add(struct kmad_client *c, struct kmad_port *port,
			  void **data)
{
	struct kt_pclient *pc = container_of(c, struct kt_pclient, client);
	int *slot = kt_pclient_slot(pc, port, pc->added);

	if (!slot)
		return -ENODEV;
	(*slot)++;
	*data = pc;
	return 0;
}

static void kt_pclient_remove(struct kmad_client *c, struct kmad_port *port,
			      void *data)
{
	struct kt_pclient *pc = data;
	int *slot = kt_pclient_slot(pc, port, pc->removed);

	if (slot)
		(*slot)++;
}

/*
 * A client registered while two-port devices exist hears of every port of
 * every device, the second ports too: kmad reserves a record per port, not
 * per device, before the first add.  (With one per device, the ports past
 * the count got no add, and a warning.)
 */
static void agent_client_add_multiport(struct kunit *test)
{
	struct kmad_sim_config cfg;
	struct kmad_sim_fabric *fab;
	char name[KMAD_NAME_LEN - 4];
	struct kt_pclient *pc;
	int d, p, ret;

	pc = kunit_kzalloc(test, sizeof(*pc), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pc);
	pc->client.name = "kt-multiport";
	pc->client.add = kt_pclient_add;
	pc->client.remove = kt_pclient_remove;
	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	strscpy(pc->prefix, name, sizeof(pc->prefix));
	kt_fix_config(&cfg, KMAD_SIM_STEP);
	cfg.hca_ports = 2;
	cfg.name = name;
	fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(fab));

	ret = kmad_register_client(&pc->client);
	KUNIT_EXPECT_EQ(test, ret, 0);
	for (d = 0; d < 2; d++)
		for (p = 0; p < 2; p++)
			KUNIT_EXPECT_EQ_MSG(test, pc->added[d][p], 1,
					    "device %d port %d", d, p + 1);
	KUNIT_EXPECT_EQ(test, pc->bad, 0);
	if (!ret)
		kmad_unregister_client(&pc->client);
	for (d = 0; d < 2; d++)
		for (p = 0; p < 2; p++)
			KUNIT_EXPECT_EQ_MSG(test, pc->removed[d][p],
					    pc->added[d][p],
					    "device %d port %d", d, p + 1);
	kmad_sim_destroy(fab);
}

/* Port numbers start at 1: port 0 of a device is no port. */
static void agent_port_lookup_zero(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	const char *name = kmad_port_dev_name(f->port[KT_DEV1]);
	struct kmad_port *port;

	port = kmad_port_get(name, 0);
	KUNIT_EXPECT_NULL(test, port);
	/* Not a port of the device's: drop the reference through one. */
	if (port)
		kmad_port_put(f->port[KT_DEV1]);
	KUNIT_EXPECT_NULL(test, kmad_port_get(name, 255));
}

/*
 * The reserved management classes are refused, each boundary from both
 * sides: 0x01 is the last class below 0x02, 0x03 the first above it;
 * 0x4F (vendor range 2, with an OUI) the last below 0x50-0x80; 0x81
 * (directed route) the one between 0x80 and 0x82 on.  Each class is
 * registered on the QP that would take it if it were not reserved, and
 * without an OUI outside range 2, so that only the class can refuse it.
 */
static void agent_class_boundaries(struct kunit *test)
{
	static const u8 get[] = { KMAD_METHOD_GET };
	static const struct {
		u8 cls;
		enum kmad_qp_type qpt;
		bool oui;
		int err;
	} cases[] = {
		{ 0x01, KMAD_QPT_SMI, false, 0 },
		{ 0x02, KMAD_QPT_GSI, false, -EINVAL },
		{ 0x03, KMAD_QPT_GSI, false, 0 },
		{ 0x4f, KMAD_QPT_GSI, true, 0 },
		{ 0x50, KMAD_QPT_GSI, false, -EINVAL },
		{ 0x80, KMAD_QPT_GSI, false, -EINVAL },
		{ 0x81, KMAD_QPT_SMI, false, 0 },
		{ 0x82, KMAD_QPT_GSI, false, -EINVAL },
		{ 0xff, KMAD_QPT_GSI, false, -EINVAL },
	};
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		kt_set_methods(&req, cases[i].cls, 1, get, 1);
		if (cases[i].oui)
			req.oui[2] = 0x01;
		KUNIT_EXPECT_EQ_MSG(test,
				    kt_reg_err(f->port[KT_DEV1], cases[i].qpt,
					       &req, kt_send_handler,
					       kt_recv_handler),
				    (long)cases[i].err, "class %#x",
				    cases[i].cls);
	}
}

static struct kunit_case agent_cases[] = {
	KUNIT_CASE(agent_overlap_is_busy),
	KUNIT_CASE(agent_vendor_oui),
	KUNIT_CASE(agent_send_only),
	KUNIT_CASE(agent_qp_class_rules),
	KUNIT_CASE(agent_bad_arguments),
	KUNIT_CASE(agent_port_lookup),
	KUNIT_CASE(agent_client_add_remove),
	KUNIT_CASE(agent_client_misuse),
	KUNIT_CASE(agent_port_calls_null),
	KUNIT_CASE(agent_failed_registration_unreachable),
	KUNIT_CASE(agent_hi_tid_reused_after_port_removal),
	KUNIT_CASE(agent_hi_tid_24_bits),
	KUNIT_CASE(agent_client_unregister_others_kept),
	KUNIT_CASE(agent_client_add_multiport),
	KUNIT_CASE(agent_port_lookup_zero),
	KUNIT_CASE(agent_class_boundaries),
	{}
};

static struct kunit_suite agent_suite = {
	.name = "kmad_agent",
	.init = kt_fix_init,
	.exit = kt_fix_exit,
	.test_cases = agent_cases,
};

kunit_test_suites(&agent_suite);

MODULE_DESCRIPTION("KUnit tests for kmad agent registration");
MODULE_LICENSE("GPL");
