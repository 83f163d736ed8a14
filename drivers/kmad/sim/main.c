// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: kmad's simulated fabric — module init and exit.
 *
 * At load, unless topology=none, builds the default fabric "sim" from the
 * module parameters (by default a pair: devices sim0 and sim1); destroys
 * it at unload.  sm=0 builds it SM-less (no LIDs, no routes, ports Init)
 * for a subnet manager to bring up; the write-only parameter "link" takes
 * a link of it down or up at run time (fault injection):
 *
 *	echo "sw1:3 down" > /sys/module/kmad_sim/parameters/link
 *
 * Locking: the module's parameter lock (kernel_param_lock()), held by the
 * kernel around a parameter write, guards sim_default_fabric against the
 * exit that clears it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kmad/sim.h>

#include "fabric.h"

/*
 * Built in, kmad_sim makes no fabric at boot unless the command line asks
 * for one (kmad_sim.topology=): a kernel with it is not a test machine.
 */
#ifdef MODULE
static char *topology = "pair";
#else
static char *topology = "none";
#endif
module_param(topology, charp, 0444);
MODULE_PARM_DESC(topology,
		 "default fabric: \"pair\" (two linked HCAs, default as a module), \"star\" (HCAs around a switch), \"tree\" (a root switch, leaf switches, HCAs on the leaves), \"fattree\" (spines, leaves each cabled to every spine, HCAs on the leaves) or \"none\" (default built in)");

static unsigned int hcas = KMAD_SIM_DEFAULT_HCAS;
module_param(hcas, uint, 0444);
MODULE_PARM_DESC(hcas, "default fabric, star, tree and fattree: number of HCAs (default 4, at most 64; fattree 2048)");

static unsigned int leaves = KMAD_SIM_DEFAULT_LEAVES;
module_param(leaves, uint, 0444);
MODULE_PARM_DESC(leaves, "default fabric, tree and fattree: number of leaf switches (default 2, at most 16; fattree 128)");

static unsigned int spines = KMAD_SIM_DEFAULT_SPINES;
module_param(spines, uint, 0444);
MODULE_PARM_DESC(spines, "default fabric, fattree: number of spine switches (default 2, at most 32)");

static unsigned int hca_ports = 1;
module_param(hca_ports, uint, 0444);
MODULE_PARM_DESC(hca_ports, "default fabric: ports per HCA, 1 (default) or 2");

static char *mode = "async";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "default fabric: \"async\" (default) or \"step\"");

static unsigned int latency_us = 10;
module_param(latency_us, uint, 0444);
MODULE_PARM_DESC(latency_us,
		 "default fabric, async mode: post-to-transmission delay in microseconds (default 10)");

static char *link_layer = "ib";
module_param(link_layer, charp, 0444);
MODULE_PARM_DESC(link_layer,
		 "default fabric: \"ib\" (InfiniBand, default) or \"eth\" (RoCE: LID 0, no QP0, every MAD GID-routed)");

static bool sm = true;
module_param(sm, bool, 0444);
MODULE_PARM_DESC(sm,
		 "default fabric: 1 (default): static LIDs and routes, every port Active, as if a subnet manager had run; 0: SM-less, every LID 0, empty forwarding tables, ports Init (LinkUp) for a subnet manager to bring up");

static bool traps = true;
module_param(traps, bool, 0444);
MODULE_PARM_DESC(traps,
		 "default fabric: 1 (default): a switch sends its SM Trap 128 when a cable of its is pulled or plugged (\"link\"), an SMA Trap 256 when it refuses an SMP's M_Key, a port Trap 257 or 258 when it drops a MAD for its P_Key or Q_Key; 0: no traps");

static char *faults = "";
module_param(faults, charp, 0444);
MODULE_PARM_DESC(faults,
		 "default fabric: faults, comma-separated: drop=, dup=, corrupt=, send_err= (percent), delay_us=, dead=<node>:<port> (node: sim1, sw0, simsw0...; repeatable)");

static struct kmad_sim_fabric *sim_default_fabric;

/**
 * kmad_sim_default_fabric() - the fabric built at module load.
 *
 * Return: the fabric, valid while kmad_sim is loaded, or NULL if the
 * module was loaded with topology=none.
 */
struct kmad_sim_fabric *kmad_sim_default_fabric(void)
{
	return sim_default_fabric;
}
EXPORT_SYMBOL_GPL(kmad_sim_default_fabric);

static int sim_parse_params(struct kmad_sim_config *cfg, bool *build)
{
	if (sysfs_streq(mode, "async")) {
		cfg->mode = KMAD_SIM_ASYNC;
	} else if (sysfs_streq(mode, "step")) {
		cfg->mode = KMAD_SIM_STEP;
	} else {
		pr_err("mode=%s: expected \"async\" or \"step\"\n", mode);
		return -EINVAL;
	}
	*build = true;
	if (sysfs_streq(topology, "pair")) {
		cfg->topology = KMAD_SIM_TOPO_PAIR;
	} else if (sysfs_streq(topology, "star")) {
		cfg->topology = KMAD_SIM_TOPO_STAR;
	} else if (sysfs_streq(topology, "tree")) {
		cfg->topology = KMAD_SIM_TOPO_TREE;
	} else if (sysfs_streq(topology, "fattree")) {
		cfg->topology = KMAD_SIM_TOPO_FATTREE;
	} else if (sysfs_streq(topology, "none")) {
		*build = false;
	} else {
		pr_err("topology=%s: expected \"pair\", \"star\", \"tree\", \"fattree\" or \"none\"\n",
		       topology);
		return -EINVAL;
	}
	/* hcas means something to star and tree only, leaves to tree only
	 * (fattree's limits are kmad_sim_create()'s).
	 */
	if ((cfg->topology == KMAD_SIM_TOPO_STAR ||
	     cfg->topology == KMAD_SIM_TOPO_TREE) &&
	    (!hcas || hcas > KMAD_SIM_MAX_HCAS)) {
		pr_err("hcas=%u: out of range\n", hcas);
		return -EINVAL;
	}
	if (cfg->topology == KMAD_SIM_TOPO_TREE &&
	    (!leaves || leaves > KMAD_SIM_MAX_LEAVES)) {
		pr_err("leaves=%u: out of range\n", leaves);
		return -EINVAL;
	}
	if (!hca_ports || hca_ports > 2) {
		pr_err("hca_ports=%u: expected 1 or 2\n", hca_ports);
		return -EINVAL;
	}
	cfg->spines = spines;
	if (sysfs_streq(link_layer, "ib")) {
		cfg->link_layer = KMAD_LINK_LAYER_INFINIBAND;
	} else if (sysfs_streq(link_layer, "eth")) {
		cfg->link_layer = KMAD_LINK_LAYER_ETHERNET;
	} else {
		pr_err("link_layer=%s: expected \"ib\" or \"eth\"\n",
		       link_layer);
		return -EINVAL;
	}
	cfg->no_sm = !sm;
	cfg->traps = traps;
	cfg->hcas = hcas;
	cfg->leaves = leaves;
	cfg->hca_ports = hca_ports;
	cfg->latency_us = latency_us;
	return 0;
}

/* A node by name: its device or switch name, or "sw<j>" for "<fabric>sw<j>". */
static int sim_find_node(struct kmad_sim_fabric *fab, const char *name,
			 unsigned int *node)
{
	struct kmad_sim_node_info info;
	char full[sizeof(info.name)];
	unsigned int i;

	snprintf(full, sizeof(full), "sim%s", name);
	for (i = 0; i < kmad_sim_num_nodes(fab); i++) {
		if (kmad_sim_node_info(fab, i, &info))
			continue;
		if (!strcmp(info.name, name) || !strcmp(info.name, full)) {
			*node = i;
			return 0;
		}
	}
	return -ENOENT;
}

/* Kill the link of "<node>:<port>". */
static int sim_dead_link(struct kmad_sim_fabric *fab, char *val)
{
	char *colon = strrchr(val, ':');
	unsigned int node;
	u8 port;

	if (!colon)
		return -EINVAL;
	*colon = '\0';
	if (kstrtou8(colon + 1, 10, &port) || sim_find_node(fab, val, &node))
		return -EINVAL;
	return kmad_sim_set_link(fab, node, port, false);
}

/*
 * The "link" parameter: "<node>:<port> up" or "<node>:<port> down" takes
 * that link of the default fabric up or down as kmad_sim_set_link() does
 * (the ports go Down; back up they are Init on an SM-less fabric, Active
 * otherwise; a switch end sets SwitchInfo.PortStateChange).
 */
#define SIM_LINK_ARG_MAX	64

static int sim_link_set(const char *val, const struct kernel_param *kp)
{
	char *buf, *sp, *word;
	unsigned int node;
	bool up;
	u8 port;
	int ret = -EINVAL;

	if (!sim_default_fabric)
		return -ENODEV;
	/* Longer than any "<node>:<port> up|down" can be: refused, not cut. */
	if (strnlen(val, SIM_LINK_ARG_MAX + 1) > SIM_LINK_ARG_MAX)
		return -EINVAL;
	buf = kstrndup(val, SIM_LINK_ARG_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	sp = strim(buf);
	word = strsep(&sp, " ");
	if (!sp)
		goto out;
	sp = strim(sp);
	if (sysfs_streq(sp, "up"))
		up = true;
	else if (sysfs_streq(sp, "down"))
		up = false;
	else
		goto out;
	sp = strrchr(word, ':');
	if (!sp)
		goto out;
	*sp++ = '\0';
	if (kstrtou8(sp, 10, &port) ||
	    sim_find_node(sim_default_fabric, word, &node))
		goto out;
	ret = kmad_sim_set_link(sim_default_fabric, node, port, up);
out:
	if (ret)
		pr_err("link=%s: expected \"<node>:<port> up|down\" naming a cabled port (%d)\n",
		       val, ret);
	kfree(buf);
	return ret;
}

static const struct kernel_param_ops sim_link_ops = {
	.set = sim_link_set,
};
module_param_cb(link, &sim_link_ops, NULL, 0200);
MODULE_PARM_DESC(link,
		 "default fabric, write-only: \"<node>:<port> up|down\" (node: sim1, sw0, simsw0...) takes a link down or brings it back (fault injection)");

/* Apply the faults= parameter to the default fabric. */
static int sim_apply_faults(struct kmad_sim_fabric *fab, const char *spec)
{
	struct kmad_sim_faults f = {};
	char *buf, *cur, *item, *val;
	unsigned int *dst;
	int ret = 0;

	if (!spec || !*spec)
		return 0;
	buf = kstrdup(spec, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	cur = buf;
	while (!ret && (item = strsep(&cur, ","))) {
		if (!*item)
			continue;
		val = strchr(item, '=');
		if (!val) {
			ret = -EINVAL;
			break;
		}
		*val++ = '\0';
		dst = NULL;
		if (!strcmp(item, "drop"))
			dst = &f.drop_pct;
		else if (!strcmp(item, "dup"))
			dst = &f.dup_pct;
		else if (!strcmp(item, "corrupt"))
			dst = &f.corrupt_pct;
		else if (!strcmp(item, "send_err"))
			dst = &f.send_err_pct;
		else if (!strcmp(item, "delay_us"))
			dst = &f.delay_us;
		if (dst)
			ret = kstrtouint(val, 10, dst);
		else if (!strcmp(item, "dead"))
			ret = sim_dead_link(fab, val);
		else
			ret = -EINVAL;
	}
	if (ret)
		pr_err("faults=%s: bad item \"%s\": expected drop=, dup=, corrupt=, send_err= (percent), delay_us= or dead=<node>:<port>\n",
		       spec, item);
	else
		kmad_sim_set_faults(fab, &f);
	kfree(buf);
	return ret;
}

static int __init kmad_sim_init(void)
{
	struct kmad_sim_config cfg = {
		.name = "sim",
		.notify = KMAD_SIM_NOTIFY_IBTA,
	};
	struct kmad_sim_fabric *fab;
	bool build;
	int ret;

	ret = sim_parse_params(&cfg, &build);
	if (ret)
		return ret;
	if (!build)
		return 0;
	fab = kmad_sim_create(&cfg);
	if (IS_ERR(fab)) {
		if (PTR_ERR(fab) == -EINVAL &&
		    cfg.topology == KMAD_SIM_TOPO_FATTREE)
			pr_err("fattree hcas=%u leaves=%u spines=%u hca_ports=%u: out of range (HCAs 1-%u, leaves 1-%u and at most the HCAs, spines 1-%u, spines + HCA ports per leaf at most %u, under %u LIDs)\n",
			       cfg.hcas, cfg.leaves, cfg.spines, cfg.hca_ports,
			       KMAD_SIM_MAX_FATTREE_HCAS,
			       KMAD_SIM_MAX_FATTREE_LEAVES, KMAD_SIM_MAX_SPINES,
			       SIM_MAX_PORTS, SIM_LFT_CAP);
		return PTR_ERR(fab);
	}
	ret = sim_apply_faults(fab, faults);
	if (ret) {
		kmad_sim_destroy(fab);
		return ret;
	}
	kernel_param_lock(THIS_MODULE);
	sim_default_fabric = fab;
	kernel_param_unlock(THIS_MODULE);
	return 0;
}

static void __exit kmad_sim_exit(void)
{
	struct kmad_sim_fabric *fab;

	kernel_param_lock(THIS_MODULE);
	fab = sim_default_fabric;
	sim_default_fabric = NULL;
	kernel_param_unlock(THIS_MODULE);
	kmad_sim_destroy(fab);
}

module_init(kmad_sim_init);
module_exit(kmad_sim_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("kmad simulated InfiniBand fabric");
MODULE_LICENSE("GPL");
