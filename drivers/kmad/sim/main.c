// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: kmad's simulated fabric — module init and exit.
 *
 * At load, unless topology=none, builds the default fabric "sim" from the
 * module parameters (by default a pair: devices sim0 and sim1); destroys
 * it at unload.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include <kmad/sim.h>

static char *topology = "pair";
module_param(topology, charp, 0444);
MODULE_PARM_DESC(topology,
		 "default fabric: \"pair\" (two linked HCAs, default), \"star\" (HCAs around a switch), \"tree\" (a root switch, leaf switches, HCAs on the leaves) or \"none\"");

static unsigned int hcas = KMAD_SIM_DEFAULT_HCAS;
module_param(hcas, uint, 0444);
MODULE_PARM_DESC(hcas, "default fabric, star and tree: number of HCAs (default 4, at most 64)");

static unsigned int leaves = KMAD_SIM_DEFAULT_LEAVES;
module_param(leaves, uint, 0444);
MODULE_PARM_DESC(leaves, "default fabric, tree: number of leaf switches (default 2, at most 16)");

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
	} else if (sysfs_streq(topology, "none")) {
		*build = false;
	} else {
		pr_err("topology=%s: expected \"pair\", \"star\", \"tree\" or \"none\"\n",
		       topology);
		return -EINVAL;
	}
	if (!hcas || hcas > KMAD_SIM_MAX_HCAS || !leaves ||
	    leaves > KMAD_SIM_MAX_LEAVES || !hca_ports || hca_ports > 2) {
		pr_err("hcas=%u leaves=%u hca_ports=%u: out of range\n", hcas,
		       leaves, hca_ports);
		return -EINVAL;
	}
	cfg->hcas = hcas;
	cfg->leaves = leaves;
	cfg->hca_ports = hca_ports;
	cfg->latency_us = latency_us;
	return 0;
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
	if (IS_ERR(fab))
		return PTR_ERR(fab);
	sim_default_fabric = fab;
	return 0;
}

static void __exit kmad_sim_exit(void)
{
	kmad_sim_destroy(sim_default_fabric);
}

module_init(kmad_sim_init);
module_exit(kmad_sim_exit);

MODULE_AUTHOR("kmad developers");
MODULE_DESCRIPTION("kmad simulated InfiniBand fabric");
MODULE_LICENSE("GPL");
