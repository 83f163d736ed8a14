// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_example: a complete minimal kmad agent.
 *
 * It registers a send-only agent on a port's QP1, sends one Get, waits for
 * the response or the timeout, and unregisters.  Documentation/ulp-guide.rst
 * walks through it; the kmad_example KUnit suite tests it.
 *
 *   modprobe kmad_example dev=sim0 dlid=2
 *
 * asks LID 2 for its PerfMgt ClassPortInfo and prints the answer.
 */

#include <linux/completion.h>
#include <linux/module.h>
#include <linux/slab.h>

#include <kmad/mad.h>

#include "kmad_example.h"

/* What one Get is waiting for; lives on the caller's stack. */
struct example_get {
	struct completion done;		/* send_handler ran */
	enum kmad_send_status status;	/* how the send ended */
	struct kmad_mad *resp;		/* where to copy the response */
	bool got_resp;
};

/* The response to our Get: copy it and give the buffer back to kmad. */
static void example_recv_handler(struct kmad_agent *agent,
				 struct kmad_send_buf *request,
				 struct kmad_recv_wc *wc)
{
	struct example_get *get;

	if (request) {
		/* Our request is still owned by kmad until send_handler. */
		get = request->context[0];
		*get->resp = *wc->mad;
		get->got_resp = true;
	}
	kmad_free_recv(wc);
}

/* Exactly once per posted send, after the response or the timeout. */
static void example_send_handler(struct kmad_agent *agent,
				 struct kmad_send_wc *wc)
{
	struct example_get *get = wc->send_buf->context[0];

	get->status = wc->status;
	complete(&get->done);
}

/**
 * kmad_example_get() - send one Get and wait for its response.
 * @port: the port to send from.
 * @dlid: destination LID (QP1 of that port).
 * @mgmt_class: management class of the Get.
 * @class_version: its class version.
 * @attr_id: attribute to get.
 * @timeout_ms: how long to wait for the response after each send.
 * @retries: how many times to resend after a timeout.
 * @resp: where the response goes.
 *
 * Context: process context, sleeps.
 * Return: 0 with @resp filled; -ETIMEDOUT if no response came; another
 * negative errno if the Get could not be sent.
 */
int kmad_example_get(struct kmad_port *port, u16 dlid, u8 mgmt_class,
		     u8 class_version, u16 attr_id, unsigned int timeout_ms,
		     unsigned int retries, struct kmad_mad *resp)
{
	struct kmad_dest dest = {
		.dlid = dlid,
		.remote_qpn = 1,
		.remote_qkey = KMAD_QP1_QKEY,
	};
	struct example_get get = { .resp = resp };
	struct kmad_send_buf *buf;
	struct kmad_agent *agent;
	int ret;

	init_completion(&get.done);

	/* 1. A send-only agent: it gets responses to its own requests. */
	agent = kmad_register_agent(port, KMAD_QPT_GSI, NULL,
				    example_send_handler, example_recv_handler,
				    NULL);
	if (IS_ERR(agent))
		return PTR_ERR(agent);

	/* 2. A send buffer, filled with the Get. */
	buf = kmad_alloc_send_buf(agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf)) {
		ret = PTR_ERR(buf);
		goto out_unregister;
	}
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = mgmt_class;
	buf->mad->mad_hdr.class_version = class_version;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(1);	/* kmad adds the hi_tid */
	buf->mad->mad_hdr.attr_id = cpu_to_be16(attr_id);
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	buf->context[0] = &get;

	/* 3. Post it; after a 0 return, send_handler will run exactly once. */
	ret = kmad_post_send(buf);
	if (ret)
		goto out_free;
	wait_for_completion(&get.done);

	/* 4. The outcome. */
	if (get.status == KMAD_SEND_OK && get.got_resp)
		ret = 0;
	else if (get.status == KMAD_SEND_RESP_TIMEOUT)
		ret = -ETIMEDOUT;
	else
		ret = -EIO;

out_free:
	kmad_free_send_buf(buf);
out_unregister:
	/* 5. Nothing is outstanding, so this returns at once. */
	kmad_unregister_agent(agent);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_example_get);

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "device to send from at load (none: do nothing)");
static ushort dlid = 2;
module_param(dlid, ushort, 0444);
MODULE_PARM_DESC(dlid, "LID to ask for its PerfMgt ClassPortInfo");

static int __init kmad_example_init(void)
{
	struct kmad_port *port;
	struct kmad_mad *resp;
	int ret;

	if (!dev)
		return 0;
	port = kmad_port_get(dev, 1);
	if (!port)
		return -ENODEV;
	resp = kzalloc(sizeof(*resp), GFP_KERNEL);
	if (!resp) {
		kmad_port_put(port);
		return -ENOMEM;
	}
	ret = kmad_example_get(port, dlid, KMAD_MGMT_CLASS_PERF_MGMT, 1,
			       KMAD_ATTR_CLASS_PORT_INFO, 100, 3, resp);
	if (ret)
		pr_info("kmad_example: %s: Get ClassPortInfo from LID %u: %d\n",
			dev, dlid, ret);
	else
		pr_info("kmad_example: %s: LID %u answered: method %#x status %#x\n",
			dev, dlid, resp->mad_hdr.method,
			be16_to_cpu(resp->mad_hdr.status));
	kfree(resp);
	kmad_port_put(port);
	return 0;
}

static void __exit kmad_example_exit(void)
{
}

module_init(kmad_example_init);
module_exit(kmad_example_exit);

MODULE_DESCRIPTION("kmad example: a minimal MAD agent");
MODULE_LICENSE("GPL");
