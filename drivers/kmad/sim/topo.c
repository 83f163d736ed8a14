// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: topologies.  Building the nodes of a fabric, cabling them,
 * the static LID plan, the linear forwarding tables, link states, and the
 * control functions about nodes, ports and links.
 *
 * Nodes.  HCAs come first (node i is device i, "<name><i>"), then the
 * switches (node num_hcas + j, "<name>sw<j>"): in a star the one switch,
 * in a tree the root (sw0) and then the leaves (sw1 ...), in a fattree
 * the S spines (sw0 to sw<S-1>) and then the leaves (sw<S> ...).
 *
 * Cabling.  pair: port p of HCA 0 to port p of HCA 1.  star: port p of
 * HCA i to switch port 1 + i * P + (p - 1), P being the ports per HCA.
 * tree: port 1 of leaf l to root port 1 + l; leaf l holds the HCAs
 * l * H / L to (l + 1) * H / L - 1 (H HCAs, L leaves), the k-th of them
 * with port p on leaf port 2 + k * P + (p - 1).  fattree: port 1 + s of
 * leaf l to port 1 + l of spine s (every leaf to every spine); the HCAs
 * spread over the leaves as in a tree, the k-th with port p on leaf port
 * 1 + S + k * P + (p - 1).
 *
 * LIDs (static, no SM needed).  Port p of HCA i: 1 + (p - 1) * H + i, so
 * port 1 of HCA i has LID i + 1 as in a pair.  Switch j:
 * 1 + H * P + j.  Every endport's MasterSMLID is 1 (HCA 0, port 1).
 *
 * SM-less (&kmad_sim_config.no_sm): none of this plan.  Every LID and
 * MasterSMLID is 0, every LFT entry 255 with LinearFDBTop 0, and every
 * cabled port comes up Init (PortPhysicalState LinkUp): a subnet manager
 * finds the fabric by directed route and programs it through the SMA.
 *
 * Forwarding.  Each switch's LFT sends every LID of the fabric out of the
 * first port of a shortest path to the port that owns it (a breadth-first
 * search over the switches, lowest port number first among equals); its
 * own LID goes to port 0; every other entry is 255 (discard).
 * LinearFDBTop is the highest LID of the fabric.
 *
 * Link states.  A link is up when its cable is (kmad_sim_set_link()) and
 * neither end is Disabled or asleep (PortInfo.PortPhysicalState).  Both
 * ends of a link that goes down are Down, and count it in
 * LinkDownedCounter.  A link that comes back up through
 * kmad_sim_set_link() is Active at both ends, as if a subnet manager had
 * brought it up (SM-less: Init, as on a real subnet); through a PortInfo
 * Set it is Init, and the SM moves it to Armed and Active.
 *
 * SwitchInfo.PortStateChange (IBTA 14.2.5.4) is set when a port of the
 * switch changes state by the link state machine (the link went down or
 * came up: Down to Init, or to Active above, and any state to Down), never
 * by a SubnSet of PortState (Armed, Active, or Down on the port itself);
 * an SM clears it by writing 1.
 *
 * Locks: F guards the link and PortInfo fields (fabric.h); building runs
 * before the fabric is visible.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "fabric.h"
#include "fw.h"

/* NodeGUIDs: the OpenIB OUI, then the node index + 1, then a port byte. */
#define SIM_GUID_BASE		((u64)KMAD_OPENIB_OUI << 40)
#define SIM_GID_PREFIX		0xfe80000000000000ULL

static u16 sim_hca_lid(const struct kmad_sim_fabric *fab, unsigned int i,
		       u8 p)
{
	return 1 + (p - 1) * fab->num_hcas + i;
}

static u16 sim_switch_lid(const struct kmad_sim_fabric *fab, unsigned int j)
{
	return 1 + fab->num_hcas * fab->cfg.hca_ports + j;
}

/* HCAs on leaf @l of a tree: [*first, *first + *count). */
static void sim_tree_leaf(const struct kmad_sim_config *cfg, unsigned int l,
			  unsigned int *first, unsigned int *count)
{
	*first = l * cfg->hcas / cfg->leaves;
	*count = (l + 1) * cfg->hcas / cfg->leaves - *first;
}

/**
 * kmad_sim_topo_size() - count the nodes a configuration builds.
 * @cfg: the configuration, defaults filled in.
 * @num_hcas: HCAs.
 * @num_switches: switches.
 *
 * Return: 0, or -EINVAL for an unknown topology.
 */
int kmad_sim_topo_size(const struct kmad_sim_config *cfg,
		       unsigned int *num_hcas, unsigned int *num_switches)
{
	*num_hcas = cfg->hcas;
	switch (cfg->topology) {
	case KMAD_SIM_TOPO_PAIR:
		*num_switches = 0;
		return 0;
	case KMAD_SIM_TOPO_STAR:
		*num_switches = 1;
		return 0;
	case KMAD_SIM_TOPO_TREE:
		*num_switches = 1 + cfg->leaves;
		return 0;
	case KMAD_SIM_TOPO_FATTREE:
		*num_switches = cfg->spines + cfg->leaves;
		return 0;
	}
	return -EINVAL;
}

/**
 * kmad_sim_fattree_check() - is a fattree configuration in range?
 * @cfg: the configuration, defaults filled in.
 *
 * Sizes within the %KMAD_SIM_MAX_FATTREE_HCAS, %KMAD_SIM_MAX_FATTREE_LEAVES
 * and %KMAD_SIM_MAX_SPINES limits, no more HCAs than leaves (none empty),
 * at most %SIM_MAX_PORTS ports on a leaf, and every LID below
 * %SIM_LFT_CAP.
 *
 * Return: 0 or -EINVAL.
 */
int kmad_sim_fattree_check(const struct kmad_sim_config *cfg)
{
	unsigned int per_leaf, lids;

	if (!cfg->hcas || cfg->hcas > KMAD_SIM_MAX_FATTREE_HCAS ||
	    !cfg->leaves || cfg->leaves > KMAD_SIM_MAX_FATTREE_LEAVES ||
	    cfg->leaves > cfg->hcas ||
	    !cfg->spines || cfg->spines > KMAD_SIM_MAX_SPINES)
		return -EINVAL;
	per_leaf = DIV_ROUND_UP(cfg->hcas, cfg->leaves);
	lids = cfg->hcas * cfg->hca_ports + cfg->spines + cfg->leaves;
	if (cfg->spines + per_leaf * cfg->hca_ports > SIM_MAX_PORTS ||
	    lids >= SIM_LFT_CAP)
		return -EINVAL;
	return 0;
}

static void sim_port_init(struct sim_node *node, u8 num)
{
	struct sim_port *port = &node->ports[num];
	bool endport = !sim_is_switch(node) || !num;

	port->node = node;
	port->num = num;
	port->state = num ? SIM_PS_DOWN : SIM_PS_ACTIVE;
	port->pi.gid_prefix = SIM_GID_PREFIX;
	port->pi.sm_lid = endport && !node->fab->cfg.no_sm ? SIM_SM_LID : 0;
	port->pi.width_enabled = SIM_PORT_WIDTHS;
	port->pi.speed_enabled = SIM_PORT_SPEEDS;
	port->pi.down_default = SIM_PHYS_POLLING;
	port->pi.neighbor_mtu = SIM_PORT_MTU_CAP;
	port->pi.op_vls = SIM_PORT_VL_CAP;
	port->pkeys[0] = SIM_DEFAULT_PKEY;
	port->guids[0] = node->guid + num;
	/* Power-up VLArbitration: low-priority entry 0, VL0 weight 255. */
	if (num || !sim_is_switch(node))
		port->vlarb[0][0][1] = SIM_VLARB_WEIGHT_MAX;
}

static int sim_node_new(struct kmad_sim_fabric *fab, unsigned int index,
			enum kmad_sim_node_type type, unsigned int num_ports)
{
	struct sim_node *node;
	int len;
	u8 p;

	if (num_ports > SIM_MAX_PORTS)
		return -EINVAL;
	node = kvzalloc(struct_size(node, ports, num_ports + 1), GFP_KERNEL);
	if (!node)
		return -ENOMEM;
	fab->nodes[index] = node;
	node->fab = fab;
	node->index = index;
	node->type = type;
	node->num_ports = num_ports;
	node->guid = SIM_GUID_BASE | (u64)(index + 1) << 8;
	if (type == KMAD_SIM_NODE_HCA)
		len = snprintf(node->name, sizeof(node->name), "%s%u",
			       fab->name, index);
	else
		len = snprintf(node->name, sizeof(node->name), "%ssw%u",
			       fab->name, index - fab->num_hcas);
	if (len >= sizeof(node->name))
		return -EINVAL;
	snprintf(node->desc, sizeof(node->desc), "%s kmad_sim %s", node->name,
		 type == KMAD_SIM_NODE_HCA ? "HCA" : "switch");
	for (p = 0; p <= num_ports; p++)
		sim_port_init(node, p);
	if (type == KMAD_SIM_NODE_SWITCH) {
		node->lft = kmalloc(SIM_LFT_CAP, GFP_KERNEL);
		if (!node->lft)
			return -ENOMEM;
		memset(node->lft, SIM_LFT_NONE, SIM_LFT_CAP);
		node->mft_positions = DIV_ROUND_UP(num_ports + 1,
						   SIM_MFT_PORTS_PER_POS);
		node->mft = kvcalloc(SIM_MFT_CAP * node->mft_positions,
				     sizeof(*node->mft), GFP_KERNEL);
		if (!node->mft)
			return -ENOMEM;
		node->life_state = SIM_SI_LIFE_DEFAULT;
	}
	return 0;
}

/* Plug a cable between two ports; both come up (Active, or Init SM-less). */
static void sim_cable(struct kmad_sim_fabric *fab, unsigned int a, u8 pa,
		      unsigned int b, u8 pb)
{
	struct sim_port *x = &fab->nodes[a]->ports[pa];
	struct sim_port *y = &fab->nodes[b]->ports[pb];

	x->peer = y;
	y->peer = x;
	x->cable_up = true;
	y->cable_up = true;
	x->state = kmad_sim_link_up_state(fab);
	y->state = x->state;
	/* SM-less: as after power-up, each switch saw its ports come up. */
	if (fab->cfg.no_sm) {
		if (sim_is_switch(x->node))
			x->node->life_state |= SIM_SI_PORT_STATE_CHANGE;
		if (sim_is_switch(y->node))
			y->node->life_state |= SIM_SI_PORT_STATE_CHANGE;
	}
}

/* fattree: spines, then leaves, each leaf cabled to every spine. */
static int sim_build_fattree(struct kmad_sim_fabric *fab)
{
	const struct kmad_sim_config *cfg = &fab->cfg;
	unsigned int h = fab->num_hcas, np = cfg->hca_ports;
	unsigned int ns = cfg->spines, s, l, i, first, count, leaf;
	int ret;
	u8 p;

	for (s = 0; s < ns; s++) {
		ret = sim_node_new(fab, h + s, KMAD_SIM_NODE_SWITCH,
				   cfg->leaves);
		if (ret)
			return ret;
	}
	for (l = 0; l < cfg->leaves; l++) {
		leaf = h + ns + l;
		sim_tree_leaf(cfg, l, &first, &count);
		ret = sim_node_new(fab, leaf, KMAD_SIM_NODE_SWITCH,
				   ns + count * np);
		if (ret)
			return ret;
		for (s = 0; s < ns; s++)
			sim_cable(fab, leaf, 1 + s, h + s, 1 + l);
		for (i = 0; i < count; i++)
			for (p = 1; p <= np; p++)
				sim_cable(fab, first + i, p, leaf,
					  1 + ns + i * np + p - 1);
	}
	return 0;
}

/* Create the nodes and cable them. */
static int sim_build_nodes(struct kmad_sim_fabric *fab)
{
	const struct kmad_sim_config *cfg = &fab->cfg;
	unsigned int h = fab->num_hcas, np = cfg->hca_ports;
	unsigned int i, l, first, count, sw;
	int ret;
	u8 p;

	for (i = 0; i < h; i++) {
		ret = sim_node_new(fab, i, KMAD_SIM_NODE_HCA, np);
		if (ret)
			return ret;
	}
	switch (cfg->topology) {
	case KMAD_SIM_TOPO_PAIR:
		for (p = 1; p <= np; p++)
			sim_cable(fab, 0, p, 1, p);
		break;
	case KMAD_SIM_TOPO_STAR:
		ret = sim_node_new(fab, h, KMAD_SIM_NODE_SWITCH, h * np);
		if (ret)
			return ret;
		for (i = 0; i < h; i++)
			for (p = 1; p <= np; p++)
				sim_cable(fab, i, p, h, 1 + i * np + p - 1);
		break;
	case KMAD_SIM_TOPO_TREE:
		ret = sim_node_new(fab, h, KMAD_SIM_NODE_SWITCH, cfg->leaves);
		if (ret)
			return ret;
		for (l = 0; l < cfg->leaves; l++) {
			sw = h + 1 + l;
			sim_tree_leaf(cfg, l, &first, &count);
			ret = sim_node_new(fab, sw, KMAD_SIM_NODE_SWITCH,
					   1 + count * np);
			if (ret)
				return ret;
			sim_cable(fab, sw, 1, h, 1 + l);
			for (i = 0; i < count; i++)
				for (p = 1; p <= np; p++)
					sim_cable(fab, first + i, p, sw,
						  2 + i * np + p - 1);
		}
		break;
	case KMAD_SIM_TOPO_FATTREE:
		ret = sim_build_fattree(fab);
		if (ret)
			return ret;
		break;
	}
	return 0;
}

static void sim_assign_lids(struct kmad_sim_fabric *fab)
{
	struct sim_node *node;
	unsigned int i;
	u8 p;

	for (i = 0; i < fab->num_nodes; i++) {
		node = fab->nodes[i];
		if (sim_is_switch(node)) {
			node->ports[0].pi.lid = sim_switch_lid(fab,
							       i - fab->num_hcas);
			continue;
		}
		for (p = 1; p <= node->num_ports; p++)
			node->ports[p].pi.lid = sim_hca_lid(fab, i, p);
	}
}

/*
 * Breadth-first search over the switches from switch @s: for every switch
 * reached, its distance and the port of @s a shortest path leaves by.
 */
static void sim_bfs(struct kmad_sim_fabric *fab, unsigned int s,
		    unsigned int *queue, unsigned int *dist, u8 *first)
{
	unsigned int head = 0, tail = 0, u, v;
	struct sim_port *peer;
	u8 q;

	memset(dist, 0xff, fab->num_nodes * sizeof(*dist));
	dist[s] = 0;
	first[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		u = queue[head++];
		for (q = 1; q <= fab->nodes[u]->num_ports; q++) {
			peer = fab->nodes[u]->ports[q].peer;
			if (!peer || !sim_is_switch(peer->node))
				continue;
			v = peer->node->index;
			if (dist[v] != UINT_MAX)
				continue;
			dist[v] = dist[u] + 1;
			first[v] = u == s ? q : first[u];
			queue[tail++] = v;
		}
	}
}

/* Fill switch @s's LFT with shortest-path routes to every LID. */
static void sim_fill_lft(struct kmad_sim_fabric *fab, unsigned int s,
			 const unsigned int *dist, const u8 *first)
{
	struct sim_node *sw = fab->nodes[s], *node;
	struct sim_port *port;
	unsigned int i, t;
	u8 p;

	for (i = 0; i < fab->num_nodes; i++) {
		node = fab->nodes[i];
		if (sim_is_switch(node)) {
			if (dist[i] != UINT_MAX)
				sw->lft[node->ports[0].pi.lid] = first[i];
			continue;
		}
		for (p = 1; p <= node->num_ports; p++) {
			port = &node->ports[p];
			if (!port->peer || !sim_is_switch(port->peer->node))
				continue;
			t = port->peer->node->index;
			if (t == s)
				sw->lft[port->pi.lid] = port->peer->num;
			else if (dist[t] != UINT_MAX)
				sw->lft[port->pi.lid] = first[t];
		}
	}
	sw->lft_top = sim_switch_lid(fab, fab->num_nodes - fab->num_hcas - 1);
}

static int sim_compute_lfts(struct kmad_sim_fabric *fab)
{
	unsigned int *queue, *dist, s;
	u8 *first;
	int ret = -ENOMEM;

	if (fab->num_nodes == fab->num_hcas)
		return 0;
	queue = kcalloc(fab->num_nodes, sizeof(*queue), GFP_KERNEL);
	dist = kcalloc(fab->num_nodes, sizeof(*dist), GFP_KERNEL);
	first = kcalloc(fab->num_nodes, sizeof(*first), GFP_KERNEL);
	if (queue && dist && first) {
		for (s = fab->num_hcas; s < fab->num_nodes; s++) {
			sim_bfs(fab, s, queue, dist, first);
			sim_fill_lft(fab, s, dist, first);
		}
		ret = 0;
	}
	kfree(first);
	kfree(dist);
	kfree(queue);
	return ret;
}

/**
 * kmad_sim_topo_build() - create, cable and address the nodes of a fabric.
 * @fab: the fabric, with &kmad_sim_fabric.cfg, num_hcas and num_nodes set.
 *
 * On failure the caller frees what was built with kmad_sim_topo_free().
 *
 * Context: process context, before the fabric is visible.
 * Return: 0, -EINVAL (a name too long) or -ENOMEM.
 */
int kmad_sim_topo_build(struct kmad_sim_fabric *fab)
{
	int ret;

	ret = sim_build_nodes(fab);
	if (ret || fab->cfg.no_sm)
		return ret;
	sim_assign_lids(fab);
	return sim_compute_lfts(fab);
}

/**
 * kmad_sim_topo_free() - free the nodes of a fabric.
 * @fab: the fabric; nodes not built yet are NULL.
 */
void kmad_sim_topo_free(struct kmad_sim_fabric *fab)
{
	unsigned int i;

	for (i = 0; i < fab->num_nodes; i++) {
		if (!fab->nodes[i])
			continue;
		kfree(fab->nodes[i]->lft);
		kvfree(fab->nodes[i]->mft);
		kvfree(fab->nodes[i]);
		fab->nodes[i] = NULL;
	}
}

/**
 * kmad_sim_phys_up() - is a port's link up?
 * @port: a physical port.
 *
 * Context: F held.
 * Return: true if it is cabled, the cable works and neither end is
 * disabled or asleep.
 */
bool kmad_sim_phys_up(const struct sim_port *port)
{
	return port->peer && port->cable_up && !port->disabled &&
	       !port->asleep && !port->peer->disabled && !port->peer->asleep;
}

/**
 * kmad_sim_link_up_state() - the PortState a port takes when its link
 * comes up by itself (kmad_sim_set_link(), building).
 * @fab: the fabric.
 *
 * Return: Active, as if an SM were there, or Init on an SM-less fabric.
 */
u8 kmad_sim_link_up_state(const struct kmad_sim_fabric *fab)
{
	return fab->cfg.no_sm ? SIM_PS_INIT : SIM_PS_ACTIVE;
}

/**
 * kmad_sim_port_set_state_locked() - change a physical port's PortState.
 * @port: the port.
 * @state: &enum sim_port_state.
 * @subn_set: the change is a SubnSet of PortState on this port, not the
 *	link state machine's.
 *
 * Going Down counts in LinkDownedCounter.  A change to or from Down by
 * the link state machine on a switch sets its SwitchInfo.PortStateChange;
 * a SubnSet's does not, nor does Armed to Active on a data packet (IBTA
 * 14.2.5.4 lists Down to Init, and Init, Armed or Active to Down).
 *
 * Context: F held.
 */
void kmad_sim_port_set_state_locked(struct sim_port *port, u8 state,
				    bool subn_set)
{
	bool down = port->state == SIM_PS_DOWN || state == SIM_PS_DOWN;

	if (port->state == state)
		return;
	if (port->state != SIM_PS_DOWN && state == SIM_PS_DOWN)
		sim_ctr_add(port, SIM_CTR_LINK_DOWNED, 1);
	port->state = state;
	if (sim_is_switch(port->node) && !subn_set && down)
		port->node->life_state |= SIM_SI_PORT_STATE_CHANGE;
}

static void sim_port_update_locked(struct sim_port *port, u8 up_state)
{
	bool up = kmad_sim_phys_up(port);

	if (!up)
		kmad_sim_port_set_state_locked(port, SIM_PS_DOWN, false);
	else if (port->state == SIM_PS_DOWN)
		kmad_sim_port_set_state_locked(port, up_state, false);
}

/**
 * kmad_sim_link_update_locked() - bring the states of a link's two ports
 * in line with the link after a change to it.
 * @port: one end (a physical port).
 * @up_state: the state of a port whose link came up.
 *
 * Context: F held.
 */
void kmad_sim_link_update_locked(struct sim_port *port, u8 up_state)
{
	lockdep_assert_held(&port->node->fab->lock);
	sim_port_update_locked(port, up_state);
	if (port->peer)
		sim_port_update_locked(port->peer, up_state);
}

/**
 * kmad_sim_link_bounce_locked() - take a link down and let it retrain, as
 * a PortInfo Set of PortState Down does: both ends count a link down and
 * come back Init.
 * @port: one end, whose link is up.
 *
 * Context: F held.
 */
void kmad_sim_link_bounce_locked(struct sim_port *port)
{
	lockdep_assert_held(&port->node->fab->lock);
	kmad_sim_port_set_state_locked(port, SIM_PS_DOWN, true);
	kmad_sim_port_set_state_locked(port->peer, SIM_PS_DOWN, false);
	kmad_sim_link_update_locked(port, SIM_PS_INIT);
}

/**
 * kmad_sim_num_nodes() - how many nodes (HCAs and switches) a fabric has.
 * @fab: the fabric.
 *
 * Return: the number, or 0 for a NULL or error-pointer fabric.
 */
unsigned int kmad_sim_num_nodes(const struct kmad_sim_fabric *fab)
{
	return IS_ERR_OR_NULL(fab) ? 0 : fab->num_nodes;
}
EXPORT_SYMBOL_GPL(kmad_sim_num_nodes);

/**
 * kmad_sim_node_info() - describe a node.
 * @fab: the fabric.
 * @node: node index.
 * @info: filled in.
 *
 * Context: any.
 * Return: 0, or -EINVAL.
 */
int kmad_sim_node_info(struct kmad_sim_fabric *fab, unsigned int node,
		       struct kmad_sim_node_info *info)
{
	struct sim_node *n;

	if (IS_ERR_OR_NULL(fab) || node >= fab->num_nodes || !info)
		return -EINVAL;
	n = fab->nodes[node];
	memset(info, 0, sizeof(*info));
	info->type = n->type;
	info->num_ports = n->num_ports;
	info->lid = kmad_sim_port_lid(fab, node, sim_is_switch(n) ? 0 : 1);
	info->guid = n->guid;
	strscpy(info->name, n->name, sizeof(info->name));
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_sim_node_info);

/**
 * kmad_sim_port_lid() - the LID that reaches a port, as PortInfo has it
 * now.
 * @fab: the fabric.
 * @node: node index.
 * @port: port number; for a switch any port, 0 included, gives the
 *	switch's LID.
 *
 * Context: any.
 * Return: the LID, or 0 for a bad node or port (or an unassigned LID).
 */
u16 kmad_sim_port_lid(struct kmad_sim_fabric *fab, unsigned int node, u8 port)
{
	struct sim_port *p = kmad_sim_port(fab, node, port);

	if (!p)
		return 0;
	if (sim_is_switch(p->node))
		p = &p->node->ports[0];
	return kmad_sim_port_lid_of(p);
}
EXPORT_SYMBOL_GPL(kmad_sim_port_lid);

/**
 * kmad_sim_link_peer() - what a port is cabled to.
 * @fab: the fabric.
 * @node: node index.
 * @port: physical port number.
 * @peer_node: set to the node at the other end.
 * @peer_port: set to its port number.
 *
 * Context: any.
 * Return: 0; -ENOTCONN if no cable is plugged in; -EINVAL.
 */
int kmad_sim_link_peer(struct kmad_sim_fabric *fab, unsigned int node,
		       u8 port, unsigned int *peer_node, u8 *peer_port)
{
	struct sim_port *p = kmad_sim_port(fab, node, port);

	if (!p || !port || !peer_node || !peer_port)
		return -EINVAL;
	if (!p->peer)
		return -ENOTCONN;
	*peer_node = p->peer->node->index;
	*peer_port = p->peer->num;
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_sim_link_peer);

/**
 * kmad_sim_set_link() - cut or mend the cable of a port.
 * @fab: the fabric.
 * @node: node index.
 * @port: physical port number (either end of the link).
 * @up: false: the link goes down: both ends are Down (PortInfo) and count
 *	it in LinkDownedCounter, and every MAD that would cross the link is
 *	lost (dropped_link at its sender, PortXmitDiscards at the port).
 *	true: the link comes back, and both ends are Active again (Init on an
 *	SM-less fabric, for the SM to bring up) unless one is Disabled or
 *	asleep.  Either way a switch end sets SwitchInfo.PortStateChange,
 *	and with &kmad_sim_config.traps sends its SM Trap 128
 *	(kmad_sim_switch_trap()), once this call has changed the states.
 *
 * Context: any.
 * Return: 0; -ENOTCONN if no cable is plugged in; -EINVAL.
 */
int kmad_sim_set_link(struct kmad_sim_fabric *fab, unsigned int node,
		      u8 port, bool up)
{
	struct sim_port *p = kmad_sim_port(fab, node, port);
	struct sim_port *end[2];
	bool changed[2];
	unsigned long flags;
	u8 was[2];
	int i;

	if (!p || !port)
		return -EINVAL;
	if (!p->peer)
		return -ENOTCONN;
	end[0] = p;
	end[1] = p->peer;
	spin_lock_irqsave(&fab->lock, flags);
	for (i = 0; i < 2; i++)
		was[i] = end[i]->state;
	p->cable_up = up;
	p->peer->cable_up = up;
	kmad_sim_link_update_locked(p, kmad_sim_link_up_state(fab));
	for (i = 0; i < 2; i++)
		changed[i] = end[i]->state != was[i];
	spin_unlock_irqrestore(&fab->lock, flags);
	/* Each switch end whose port changed tells its SM (Trap 128). */
	for (i = 0; i < 2; i++)
		if (changed[i] && sim_is_switch(end[i]->node))
			kmad_sim_switch_trap(fab, end[i]->node);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_sim_set_link);
