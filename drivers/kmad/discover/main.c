// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_discover: a sample ULP.  At load it registers a kmad client; the
 * first port that appears (or the one named by dev= and port=) gets a
 * discovery, run from a work item, that walks the fabric with
 * directed-route SMPs, reads every port's PMA counters and prints what it
 * found.  The client's remove callback (port removal, module unload) stops
 * a discovery still running, waits for it, and unregisters its agents.
 *
 * With run=0 it registers no client: it only provides kmad_discover_*()
 * to other modules (the kmad_discover KUnit suite).
 */

#define pr_fmt(fmt) "kmad_discover: " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include <kmad/mad.h>

#include "kmad_discover.h"

static char *dev;
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "device to discover from (default: the first port that appears)");

static unsigned int port;
module_param(port, uint, 0444);
MODULE_PARM_DESC(port, "port number to discover from (default: any)");

static unsigned int timeout_ms = 100;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "response timeout per transmission, ms (default 100)");

/* More would keep a discovery behind a dead link going for hours. */
static int retries_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 100);
}

static const struct kernel_param_ops retries_ops = {
	.set = retries_set,
	.get = param_get_uint,
};

static unsigned int retries = 3;
module_param_cb(retries, &retries_ops, &retries, 0444);
MODULE_PARM_DESC(retries, "transmissions after a timeout, per query, 0-100 (default 3)");

static unsigned int window = 16;
module_param(window, uint, 0444);
MODULE_PARM_DESC(window, "queries in flight at most (default 16; 0 counts as 1)");

static unsigned int max_nodes = 1024;
module_param(max_nodes, uint, 0444);
MODULE_PARM_DESC(max_nodes, "nodes to discover at most (default 1024; 0 counts as 1)");

static unsigned int max_hops = KMAD_SMP_DR_MAX_HOP_CNT;
module_param(max_hops, uint, 0444);
MODULE_PARM_DESC(max_hops, "longest directed route, 1-63 (default 63)");

static bool counters = true;
module_param(counters, bool, 0444);
MODULE_PARM_DESC(counters, "read PMA PortCounters (default Y)");

static bool run = true;
module_param(run, bool, 0444);
MODULE_PARM_DESC(run, "discover at load (default Y); N: only export the API");

/*
 * The one discovery this module runs.  add and remove run under kmad's
 * device lock, which orders them; the work only reads @d.
 */
static struct {
	bool claimed;
	struct kmad_discover *d;
	struct kmad_port *port;
	struct work_struct work;
} kd_inst;

static void kd_work(struct work_struct *work)
{
	const struct kmad_discover_result *res;
	int ret;

	ret = kmad_discover_run(kd_inst.d);
	res = kmad_discover_result(kd_inst.d);
	kmad_discover_print(kd_inst.d);
	if (ret == -ECANCELED)
		return;
	if (ret)
		pr_warn("%s port %u: discovery ended early: %d\n",
			kmad_port_dev_name(kd_inst.port),
			kmad_port_num(kd_inst.port), ret);
	else if (!res->nr_nodes)
		pr_warn("%s port %u: not even the local node answered: is there an SMA?\n",
			kmad_port_dev_name(kd_inst.port),
			kmad_port_num(kd_inst.port));
}

static int kd_add(struct kmad_client *client, struct kmad_port *p,
		  void **data)
{
	struct kmad_discover_opts opts = {
		.timeout_ms = timeout_ms,
		.retries = retries,
		.window = window,
		.max_nodes = max_nodes,
		.max_hops = max_hops,
		.counters = counters,
	};
	struct kmad_discover *d;

	if (kd_inst.claimed)
		return -EBUSY;
	if (dev && *dev && strcmp(dev, kmad_port_dev_name(p)))
		return -ENODEV;
	if (port && port != kmad_port_num(p))
		return -ENODEV;

	d = kmad_discover_create(p, &opts);
	if (IS_ERR(d)) {
		pr_err("%s port %u: cannot register agents: %ld\n",
		       kmad_port_dev_name(p), kmad_port_num(p), PTR_ERR(d));
		return PTR_ERR(d);
	}
	kd_inst.claimed = true;
	kd_inst.d = d;
	kd_inst.port = p;
	pr_info("%s port %u (LID %u): discovering (timeout %u ms, %u retries, window %u)\n",
		kmad_port_dev_name(p), kmad_port_num(p), kmad_port_lid(p),
		timeout_ms, retries, window);
	queue_work(system_long_wq, &kd_inst.work);
	*data = &kd_inst;
	return 0;
}

static void kd_remove(struct kmad_client *client, struct kmad_port *p,
		      void *data)
{
	if (!kd_inst.d)
		return;
	kmad_discover_stop(kd_inst.d);
	/* The work does not take kmad's device lock, which is held here. */
	flush_work(&kd_inst.work);
	kmad_discover_destroy(kd_inst.d);
	kd_inst.d = NULL;
	kd_inst.port = NULL;
}

static struct kmad_client kd_client = {
	.name = "kmad_discover",
	.add = kd_add,
	.remove = kd_remove,
};

static int __init kmad_discover_init(void)
{
	int ret;

	if (!run)
		return 0;
	if (max_hops < 1 || max_hops > KMAD_SMP_DR_MAX_HOP_CNT) {
		pr_err("max_hops=%u: expected 1-%u\n", max_hops,
		       KMAD_SMP_DR_MAX_HOP_CNT);
		return -EINVAL;
	}
	INIT_WORK(&kd_inst.work, kd_work);
	ret = kmad_register_client(&kd_client);
	if (ret)
		return ret;
	if (!kd_inst.claimed)
		pr_info("no port%s%s yet; waiting for one to appear\n",
			dev && *dev ? " on " : "", dev && *dev ? dev : "");
	return 0;
}

static void __exit kmad_discover_exit(void)
{
	if (run)
		kmad_unregister_client(&kd_client);
}

module_init(kmad_discover_init);
module_exit(kmad_discover_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("kmad sample ULP: fabric discovery and port counters");
MODULE_LICENSE("GPL");
