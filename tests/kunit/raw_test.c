// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim_raw: the raw QP pair of kmad_sim (drivers/kmad/sim/raw.c), the
 * bare transport kmad_bench measures kmad against.  Its round trips go
 * through the simulated fabric beside kmad's own QPs without disturbing
 * them.
 */

#include <linux/delay.h>
#include <linux/err.h>

#include "kmad_test.h"

static int kr_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

/* Round trips over the pair come back, one after another. */
static void raw_round_trips(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_raw *raw;
	int i;

	raw = kmad_sim_raw_create(f->fab, KT_DEV0, KT_DEV1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(raw));
	for (i = 0; i < 100; i++)
		KUNIT_ASSERT_EQ_MSG(test,
				    kmad_sim_raw_round_trip(raw,
							    KT_ASYNC_WAIT_MS),
				    0, "round trip %d", i);
	kmad_sim_raw_destroy(raw);
}

/* One raw QP per port: a second pair on the same ports is refused. */
static void raw_one_pair_per_port(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_sim_raw *raw, *again;

	raw = kmad_sim_raw_create(f->fab, KT_DEV0, KT_DEV1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(raw));
	again = kmad_sim_raw_create(f->fab, KT_DEV1, KT_DEV0);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(again), -EBUSY);
	kmad_sim_raw_destroy(raw);
	/* Destroyed, its QPs are gone from the ports: a new pair works. */
	raw = kmad_sim_raw_create(f->fab, KT_DEV1, KT_DEV0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(raw));
	KUNIT_EXPECT_EQ(test, kmad_sim_raw_round_trip(raw, KT_ASYNC_WAIT_MS), 0);
	kmad_sim_raw_destroy(raw);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(kmad_sim_raw_create(f->fab, 0, 0)),
			-EINVAL);
}

/*
 * kmad's traffic on the same ports is not disturbed: a request of kmad's
 * between raw round trips still gets its response from the other HCA's
 * "unsupported" answer, and the raw pair's MADs never reach kmad.
 */
static void raw_beside_kmad(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_send_buf *buf;
	struct kmad_sim_raw *raw;

	raw = kmad_sim_raw_create(f->fab, KT_DEV0, KT_DEV1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(raw));
	KUNIT_EXPECT_EQ(test, kmad_sim_raw_round_trip(raw, KT_ASYNC_WAIT_MS), 0);
	buf = kt_request(f, f->agent, KMAD_METHOD_GET, 7, KT_ASYNC_WAIT_MS, 0);
	kt_post(f, buf);
	KUNIT_EXPECT_EQ(test, kmad_sim_raw_round_trip(raw, KT_ASYNC_WAIT_MS), 0);
	KUNIT_ASSERT_TRUE(test, kt_wait_until(atomic_read(&f->sends),
					      KT_ASYNC_WAIT_MS));
	kt_settle(f);
	KUNIT_ASSERT_EQ(test, atomic_read(&f->sends), 1);
	/* The response reached the ULP first (recv_handler), then the send. */
	kt_expect_send(f, 1, buf, KMAD_SEND_OK);
	/* Only kmad's own exchange reached kmad: one response, no more. */
	KUNIT_EXPECT_EQ(test, atomic_read(&f->recvs), 1);
	kmad_sim_raw_destroy(raw);
	kmad_free_send_buf(buf);
}

static struct kunit_case raw_cases[] = {
	KUNIT_CASE(raw_round_trips),
	KUNIT_CASE(raw_one_pair_per_port),
	KUNIT_CASE(raw_beside_kmad),
	{}
};

static struct kunit_suite raw_suite = {
	.name = "kmad_sim_raw",
	.init = kr_init,
	.exit = kt_fix_exit,
	.test_cases = raw_cases,
};

kunit_test_suite(raw_suite);

MODULE_DESCRIPTION("kmad KUnit: kmad_sim's raw QP pair");
MODULE_LICENSE("GPL");
