// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_opensm_link: fault injection on a cable of kmad_sim's default
 * fabric, for `make opensm` (tests/opensm/guest.sh).  Writing
 *
 *   echo <node>:<port>:down > /sys/module/kmad_opensm_link/parameters/link
 *   echo <node>:<port>:up   > /sys/module/kmad_opensm_link/parameters/link
 *
 * calls kmad_sim_set_link() on that port (<node> is a device or switch
 * name: sim3, simsw1): both ends of the cable go Down, and come back when
 * it is mended (Documentation/simulated-fabric.rst says in which state).
 * Reading the parameter gives the last write.  The fabric is looked up
 * at each write; kmad_sim cannot be removed while this module, which uses
 * its symbols, is loaded.
 */

#define pr_fmt(fmt) "kmad_opensm_link: " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include <kmad/sim.h>

static char link_last[64];

/* The index of the node called @name, or -ENOENT. */
static int opensm_link_node(struct kmad_sim_fabric *fab, const char *name)
{
	struct kmad_sim_node_info info;
	unsigned int i;

	for (i = 0; i < kmad_sim_num_nodes(fab); i++)
		if (!kmad_sim_node_info(fab, i, &info) &&
		    !strcmp(info.name, name))
			return i;
	return -ENOENT;
}

static int opensm_link_set(const char *val, const struct kernel_param *kp)
{
	struct kmad_sim_fabric *fab = kmad_sim_default_fabric();
	char buf[sizeof(link_last)], *cur, *name, *port_s, *state;
	int node, ret;
	bool up;
	u8 port;

	if (!fab)
		return -ENODEV;
	if (strscpy(buf, val, sizeof(buf)) < 0)
		return -EINVAL;
	cur = strim(buf);
	name = strsep(&cur, ":");
	port_s = strsep(&cur, ":");
	state = cur;
	if (!port_s || !state || kstrtou8(port_s, 10, &port))
		return -EINVAL;
	if (!strcmp(state, "up"))
		up = true;
	else if (!strcmp(state, "down"))
		up = false;
	else
		return -EINVAL;
	node = opensm_link_node(fab, name);
	if (node < 0)
		return node;
	ret = kmad_sim_set_link(fab, node, port, up);
	if (ret)
		return ret;
	pr_info("%s:%u %s\n", name, port, up ? "up" : "down");
	snprintf(link_last, sizeof(link_last), "%s:%u:%s", name, port, state);
	return 0;
}

static int opensm_link_get(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%s\n", link_last);
}

static const struct kernel_param_ops opensm_link_ops = {
	.set = opensm_link_set,
	.get = opensm_link_get,
};
module_param_cb(link, &opensm_link_ops, NULL, 0644);
MODULE_PARM_DESC(link, "<node>:<port>:up|down: mend or cut that cable of kmad_sim's default fabric");

MODULE_DESCRIPTION("kmad: cable faults on kmad_sim's default fabric for make opensm");
MODULE_LICENSE("GPL");
