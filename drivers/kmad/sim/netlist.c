// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: the fabric as an ibsim netlist, in debugfs.
 *
 * /sys/kernel/debug/kmad_sim/<fabric>/ibsim.net describes the fabric's
 * nodes and cables in the topology format of ibsim (the user-space fabric
 * simulator of rdma-core's ibsim-utils; its "net" files, close to
 * ibnetdiscover's output), so that `ibsim -s ibsim.net` simulates the same
 * subnet and a subnet manager can be run over both (tests/opensm/):
 *
 *   caguid=0x<NodeGUID>           the next node's NodeGUID (ibsim gives
 *   Hca <ports> "<name>"  # "<NodeDescription>"    an HCA port p the GUID
 *   [<port>] "<peer name>"[<peer port>]            NodeGUID + p, as
 *   ...                                            kmad_sim does)
 *
 *   switchguid=0x<NodeGUID>
 *   Switch <ports> "<name>"  # "<NodeDescription>" base port 0
 *   [<port>] "<peer name>"[<peer port>]
 *
 * HCAs come first, in device order, so that ibsim's default port (the
 * first port of the file) is port 1 of the fabric's first device.  Every
 * cabled port is listed whatever the state of its link: the netlist is
 * the cabling; LIDs, link states and forwarding tables are left to the
 * subnet manager that runs over it.
 *
 * Lifetime: the file is created by kmad_sim_create() once the fabric is
 * built and removed by kmad_sim_destroy() before anything is freed;
 * debugfs waits for a read in progress to end before the removal returns.
 * The fabric's directory is &kmad_sim_fabric.netlist_dir.  What the file
 * prints (names, GUIDs, port counts, peers) is set before the fabric is
 * visible and never changes (I in fabric.h), so no lock is taken.  The
 * directory /sys/kernel/debug/kmad_sim holds one directory per fabric; it
 * is created with the first fabric and removed with the last, under
 * sim_netlist_mutex.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>

#include "fabric.h"

static DEFINE_MUTEX(sim_netlist_mutex);
/* Guarded by sim_netlist_mutex: the kmad_sim directory, its fabrics. */
static struct dentry *sim_netlist_root;
static unsigned int sim_netlist_users;

static void sim_netlist_node(struct seq_file *m, const struct sim_node *node)
{
	const struct sim_port *port;
	bool sw = sim_is_switch(node);
	unsigned int p;

	seq_printf(m, "%s=0x%016llx\n", sw ? "switchguid" : "caguid",
		   node->guid);
	seq_printf(m, "%s\t%u \"%s\"\t\t# \"%s\"%s\n", sw ? "Switch" : "Hca",
		   node->num_ports, node->name, node->desc,
		   sw ? " base port 0" : "");
	for (p = 1; p <= node->num_ports; p++) {
		port = &node->ports[p];
		if (!port->peer)
			continue;
		seq_printf(m, "[%u]\t\"%s\"[%u]\n", p, port->peer->node->name,
			   port->peer->num);
	}
	seq_putc(m, '\n');
}

static int sim_netlist_show(struct seq_file *m, void *unused)
{
	struct kmad_sim_fabric *fab = m->private;
	unsigned int i;

	seq_printf(m, "# kmad_sim fabric \"%s\": %u HCAs, %u switches, as an ibsim netlist\n\n",
		   fab->name, fab->num_hcas, fab->num_nodes - fab->num_hcas);
	for (i = 0; i < fab->num_nodes; i++)
		sim_netlist_node(m, fab->nodes[i]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_netlist);

/**
 * kmad_sim_netlist_add() - create <fabric>/ibsim.net in kmad_sim's debugfs
 * directory.
 * @fab: the fabric, built.
 *
 * Failures are not reported: debugfs is a debugging aid, and the fabric
 * works without it.
 *
 * Context: process context.
 */
void kmad_sim_netlist_add(struct kmad_sim_fabric *fab)
{
	mutex_lock(&sim_netlist_mutex);
	if (!sim_netlist_users++)
		sim_netlist_root = debugfs_create_dir("kmad_sim", NULL);
	/* Two fabrics of one name: the second gets an error pointer. */
	fab->netlist_dir = debugfs_create_dir(fab->name, sim_netlist_root);
	debugfs_create_file("ibsim.net", 0444, fab->netlist_dir, fab,
			    &sim_netlist_fops);
	mutex_unlock(&sim_netlist_mutex);
}

/**
 * kmad_sim_netlist_remove() - remove what kmad_sim_netlist_add() created.
 * @fab: the fabric.
 *
 * Returns after any read of the file has ended.
 *
 * Context: process context.
 */
void kmad_sim_netlist_remove(struct kmad_sim_fabric *fab)
{
	mutex_lock(&sim_netlist_mutex);
	debugfs_remove(fab->netlist_dir);
	if (!--sim_netlist_users) {
		debugfs_remove(sim_netlist_root);
		sim_netlist_root = NULL;
	}
	mutex_unlock(&sim_netlist_mutex);
}
