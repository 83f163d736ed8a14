// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_example: the ULP guide's minimal agent gets its answer, and its
 * timeout, on an asynchronous simulated fabric.
 */

#include "kmad_test.h"
#include "kmad_example.h"

/* Device 1's side: answer every Get of KT_CLASS with an empty GetResp. */
static void kt_answer_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

static void kt_answer_recv(struct kmad_agent *agent,
			   struct kmad_send_buf *request,
			   struct kmad_recv_wc *wc)
{
	struct kmad_send_buf *resp = kmad_create_response(agent, wc,
							  GFP_KERNEL);

	if (!IS_ERR(resp) && kmad_post_send(resp))
		kmad_free_send_buf(resp);
	kmad_free_recv(wc);
}

static int kt_example_init(struct kunit *test)
{
	return kt_fix_setup(test, KMAD_SIM_ASYNC, KMAD_SIM_NOTIFY_IBTA);
}

/*
 * A Get to a port that answers returns 0 and the GetResp.  The answer
 * comes on the real clock (device 1's agent work answers it), so the Get
 * waits as long as a loaded guest may take: with 1 s it would time out
 * whenever the answering work ran that late.
 */
static void example_get_answered(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_reg_req req = {
		.mgmt_class = KT_CLASS,
		.class_version = KT_VERSION,
	};
	struct kmad_agent *answer;
	struct kmad_mad *resp;

	__set_bit(KMAD_METHOD_GET, req.method_mask);
	answer = kmad_register_agent(f->port[KT_DEV1], KMAD_QPT_GSI, &req,
				     kt_answer_send, kt_answer_recv, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(answer));
	resp = kunit_kzalloc(test, sizeof(*resp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, resp);

	KUNIT_EXPECT_EQ(test, kmad_example_get(f->port[KT_DEV0],
					       kmad_port_lid(f->port[KT_DEV1]),
					       KT_CLASS, KT_VERSION, 0x12,
					       KT_ASYNC_WAIT_MS, 0, resp), 0);
	KUNIT_EXPECT_EQ(test, resp->mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(resp->mad_hdr.attr_id), 0x12);
	kmad_unregister_agent(answer);
}

/* A Get to a LID nobody has times out after its retries: -ETIMEDOUT. */
static void example_get_times_out(struct kunit *test)
{
	struct kt_fix *f = test->priv;
	struct kmad_mad *resp = kunit_kzalloc(test, sizeof(*resp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, resp);
	KUNIT_EXPECT_EQ(test, kmad_example_get(f->port[KT_DEV0], 77, KT_CLASS,
					       KT_VERSION, 0x12, 20, 1, resp),
			-ETIMEDOUT);
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&f->port[KT_DEV0]->stats[KMAD_PSTAT_RETRIES]),
			1);
}

static struct kunit_case example_cases[] = {
	KUNIT_CASE(example_get_answered),
	KUNIT_CASE(example_get_times_out),
	{}
};

static struct kunit_suite example_suite = {
	.name = "kmad_example",
	.init = kt_example_init,
	.exit = kt_fix_exit,
	.test_cases = example_cases,
};

kunit_test_suites(&example_suite);

MODULE_DESCRIPTION("KUnit tests for the kmad example agent");
MODULE_LICENSE("GPL");
