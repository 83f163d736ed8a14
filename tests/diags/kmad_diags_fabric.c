// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_diags_fabric: at load, prints kmad_sim's description of its default
 * fabric, from the sim's control API (<kmad/sim.h>), one line per fact:
 *
 *   kmad_diags: node <n> type <1|2> ports <p> guid <hex> lid <lid> name <name>
 *   kmad_diags: port <n> <p> lid <lid>
 *   kmad_diags: link <n> <p> <peer node> <peer port>
 *   kmad_diags: end <nodes>
 *
 * tests/diags/check.py compares what infiniband-diags print over kmad_umad
 * with these lines.  It stays loaded doing nothing until it is removed.
 */

#define pr_fmt(fmt) "kmad_diags: " fmt

#include <linux/module.h>

#include <kmad/sim.h>

static int __init kmad_diags_init(void)
{
	struct kmad_sim_fabric *fab = kmad_sim_default_fabric();
	struct kmad_sim_node_info info;
	unsigned int n, nodes, peer;
	u8 p, peer_port;
	int ret;

	if (!fab) {
		pr_err("kmad_sim has no default fabric\n");
		return -ENODEV;
	}
	nodes = kmad_sim_num_nodes(fab);
	for (n = 0; n < nodes; n++) {
		ret = kmad_sim_node_info(fab, n, &info);
		if (ret)
			return ret;
		pr_info("node %u type %d ports %u guid 0x%016llx lid %u name %s\n",
			n, info.type, info.num_ports, info.guid, info.lid,
			info.name);
		for (p = 1; p <= info.num_ports; p++) {
			pr_info("port %u %u lid %u\n", n, p,
				kmad_sim_port_lid(fab, n, p));
			if (!kmad_sim_link_peer(fab, n, p, &peer, &peer_port))
				pr_info("link %u %u %u %u\n", n, p, peer,
					peer_port);
		}
	}
	pr_info("end %u\n", nodes);
	return 0;
}

static void __exit kmad_diags_exit(void)
{
}

module_init(kmad_diags_init);
module_exit(kmad_diags_exit);

MODULE_DESCRIPTION("kmad: kmad_sim's fabric, described for make diags");
MODULE_LICENSE("GPL");
