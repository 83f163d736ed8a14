// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_fabric: the simulated subnet -- topologies and the LID plan, LID
 * routing through switches, directed routes, dead links, and routing
 * changed by LinearForwardingTable Sets; the fattree's layout, routes
 * and limits.  kmad agents on HCA 0 are the
 * requesters; the firmware of the addressed node answers (kmad_sma and
 * kmad_pma check what the answers hold).
 *
 * The fabrics: star(4): HCAs 0-3 (LIDs 1-4) on switch node 4 (LID 5),
 * HCA i on switch port i + 1.  tree(4, 2): HCAs 0-3 (LIDs 1-4), root node
 * 4 (LID 5), leaves nodes 5 and 6 (LIDs 6, 7) on root ports 1 and 2;
 * HCAs 0, 1 on leaf 5 ports 2, 3, HCAs 2, 3 on leaf 6 ports 2, 3.
 */
#include <kunit/test.h>

#include "subnet_test.h"

#define FT_SWITCH	4	/* node of the star's switch, the tree's root */

/* NodeInfo (IBTA 14.2.5.3) offsets the tests read. */
#define NI_NODE_TYPE	2
#define NI_NUM_PORTS	3
#define NI_NODE_GUID	12
#define NI_LOCAL_PORT	36

static u64 ft_guid(struct sn *s, unsigned int node)
{
	struct kmad_sim_node_info info;

	KUNIT_ASSERT_EQ(s->test, kmad_sim_node_info(s->fab, node, &info), 0);
	return info.guid;
}

/* NodeInfo of whoever answers at @dlid, from HCA 0; status or -1. */
static int ft_node_info(struct sn *s, u16 dlid, struct kmad_mad *mad)
{
	sn_smp(mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	return sn_rpc(s, 0, 1, mad, dlid);
}

static void ft_expect_node(struct sn *s, u16 dlid, unsigned int node)
{
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(s->test, ft_node_info(s, dlid, &mad), 0);
	KUNIT_EXPECT_EQ(s->test,
			get_unaligned_be64(sn_smp_data(&mad) + NI_NODE_GUID),
			ft_guid(s, node));
}

/* One block of switch @lid's LFT, through its SMA; set if @set. */
static void ft_lft(struct sn *s, u16 lid, u8 *block, bool set)
{
	struct kmad_mad mad;

	sn_smp(&mad, set ? KMAD_METHOD_SET : KMAD_METHOD_GET,
	       KMAD_SMP_ATTR_LINEAR_FT, 0);
	if (set)
		memcpy(sn_smp_data(&mad), block, 64);
	KUNIT_ASSERT_EQ(s->test, sn_rpc(s, 0, 1, &mad, lid), 0);
	memcpy(block, sn_smp_data(&mad), 64);
}

/* PortCounters of (@lid, @port) read from HCA @dev: the 32-bit field. */
static u32 ft_pc(struct sn *s, unsigned int dev, u16 lid, u8 port,
		 unsigned int offset, unsigned int bytes)
{
	struct kmad_mad mad;
	u8 *d = sn_pma_data(&mad);

	sn_pma(&mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, port, 0);
	KUNIT_ASSERT_EQ(s->test, sn_rpc(s, dev, 1, &mad, lid), 0);
	if (bytes == 1)
		return d[offset];
	return bytes == 2 ? get_unaligned_be16(d + offset) :
			    get_unaligned_be32(d + offset);
}

/* star(4): 5 nodes, the LIDs and cabling of the plan. */
static void fabric_star_layout(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_sim_node_info info;
	unsigned int peer, i;
	u8 pport;

	KUNIT_EXPECT_EQ(test, kmad_sim_num_devices(s->fab), 4U);
	KUNIT_EXPECT_EQ(test, kmad_sim_num_nodes(s->fab), 5U);
	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(s->fab, 4, &info), 0);
	KUNIT_EXPECT_EQ(test, info.type, KMAD_SIM_NODE_SWITCH);
	KUNIT_EXPECT_EQ(test, info.num_ports, 4);
	KUNIT_EXPECT_EQ(test, info.lid, 5);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, sn_lid(s, i, 1), i + 1);
		KUNIT_ASSERT_EQ(test, kmad_sim_link_peer(s->fab, i, 1, &peer,
							 &pport), 0);
		KUNIT_EXPECT_EQ(test, peer, 4U);
		KUNIT_EXPECT_EQ(test, pport, i + 1);
	}
	KUNIT_EXPECT_EQ(test, kmad_sim_node_info(s->fab, 5, &info), -EINVAL);
	KUNIT_EXPECT_EQ(test, kmad_sim_set_link(s->fab, 0, 2, false), -EINVAL);
}

/* tree(5, 2), two ports per HCA: leaves get 2 and 3 HCAs; LIDs per plan. */
static void fabric_tree_layout(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 5, 2, 2);
	struct kmad_sim_node_info info;
	unsigned int peer;
	u8 pport;

	KUNIT_EXPECT_EQ(test, kmad_sim_num_nodes(s->fab), 8U);
	/* Port 2 of HCA i: LID 1 + 5 + i; switches from 11. */
	KUNIT_EXPECT_EQ(test, sn_lid(s, 0, 2), 6);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 4, 2), 10);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 5, 0), 11);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 7, 3), 13);
	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(s->fab, 6, &info), 0);
	KUNIT_EXPECT_EQ(test, info.num_ports, 1 + 2 * 2);
	KUNIT_ASSERT_EQ(test, kmad_sim_node_info(s->fab, 7, &info), 0);
	KUNIT_EXPECT_EQ(test, info.num_ports, 1 + 3 * 2);
	/* HCA 2 is the first on leaf 7: its port 2 on leaf port 3. */
	KUNIT_ASSERT_EQ(test, kmad_sim_link_peer(s->fab, 2, 2, &peer, &pport),
			0);
	KUNIT_EXPECT_EQ(test, peer, 7U);
	KUNIT_EXPECT_EQ(test, pport, 3);
	KUNIT_ASSERT_EQ(test, kmad_sim_link_peer(s->fab, 7, 1, &peer, &pport),
			0);
	KUNIT_EXPECT_EQ(test, peer, 5U);
	KUNIT_EXPECT_EQ(test, pport, 2);
}

/* star(4): every LID answers, through the switch, with its own node. */
static void fabric_star_routing(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	unsigned int i;

	for (i = 1; i < 4; i++)
		ft_expect_node(s, i + 1, i);
	ft_expect_node(s, 5, FT_SWITCH);
}

/* tree(4, 2): every LID answers, also across the root; nothing lost. */
static void fabric_tree_routing(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_sim_stats st;
	unsigned int i;

	for (i = 1; i < 4; i++)
		ft_expect_node(s, i + 1, i);
	for (i = 0; i < 3; i++)
		ft_expect_node(s, 5 + i, FT_SWITCH + i);
	st = sn_stats(s, 0, 1);
	KUNIT_EXPECT_EQ(test, st.sent, 6ULL);
	KUNIT_EXPECT_EQ(test, st.delivered, 6ULL);
	KUNIT_EXPECT_EQ(test, st.dropped_no_route, 0ULL);
}

/* A MAD no firmware answers crosses the tree into kmad on HCA 3. */
static void fabric_tree_delivers(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;

	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, 4);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 3, 1).delivered, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 3, 1).fw_answered, 0ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).sent, 1ULL);
}

/* pair, two ports: a LID is reached only over its own port's link. */
static void fabric_pair_two_ports(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 2);
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 2), 4);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 2, &mad, 4), 0);
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[NI_LOCAL_PORT], 2);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, 4), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_no_route, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 2).delivered, 1ULL);
}

/* A dead link loses MADs (counted), shows Down, and comes back Active. */
static void fabric_dead_link(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 2, 1, false), 0);
	KUNIT_EXPECT_EQ(test, ft_node_info(s, 3, &mad), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_link, 1ULL);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 3);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 5), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 1);		/* PortState Down */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 2);		/* Polling */
	KUNIT_EXPECT_EQ(test, ft_pc(s, 0, 5, 3, 14, 2), 1U); /* XmitDiscards */
	KUNIT_EXPECT_EQ(test, ft_pc(s, 0, 5, 3, 7, 1), 1U); /* LinkDowned */

	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 4, 3, true), 0);
	ft_expect_node(s, 3, 2);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 3);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 5), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 4);		/* Active */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 5);		/* LinkUp */
}

/* The requester's own link dead: lost at once; its local SMA still works. */
static void fabric_dead_own_link(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 0, 1, false), 0);
	KUNIT_EXPECT_EQ(test, ft_node_info(s, 5, &mad), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_link, 1ULL);
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, NULL, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[32] & 0xf, 1);
}

/* LFT Sets move a LID: to another HCA (rejected there), to nowhere. */
static void fabric_lft_set_reroutes(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 lft[64];

	ft_lft(s, 5, lft, false);
	KUNIT_EXPECT_EQ(test, lft[0], 0xff);
	KUNIT_EXPECT_EQ(test, lft[3], 3);
	KUNIT_EXPECT_EQ(test, lft[5], 0);
	KUNIT_EXPECT_EQ(test, lft[6], 0xff);

	lft[3] = 4;		/* LID 3 now goes to HCA 3 (LID 4) */
	ft_lft(s, 5, lft, true);
	KUNIT_EXPECT_EQ(test, ft_node_info(s, 3, &mad), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_no_route, 1ULL);
	KUNIT_EXPECT_EQ(test, ft_pc(s, 0, 4, 1, 8, 2), 1U);	/* RcvErrors */

	lft[3] = 0xff;		/* and now nowhere */
	ft_lft(s, 5, lft, true);
	KUNIT_EXPECT_EQ(test, ft_node_info(s, 3, &mad), -1);
	KUNIT_EXPECT_EQ(test, ft_pc(s, 0, 5, 1, 12, 2), 1U);	/* relay */

	lft[3] = 3;
	ft_lft(s, 5, lft, true);
	ft_expect_node(s, 3, 2);
}

/* An LFT loop between leaf and root: the MAD is dropped, not carried on. */
static void fabric_lft_loop(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;
	u8 lft[64];

	ft_lft(s, 5, lft, false);
	lft[4] = 1;		/* root sends LID 4 back down to leaf 5 */
	ft_lft(s, 5, lft, true);
	KUNIT_EXPECT_EQ(test, ft_node_info(s, 4, &mad), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_no_route, 1ULL);
}

/* Directed route across the tree to HCA 3 and to leaf 6. */
static void fabric_dr_tree(struct kunit *test)
{
	static const u8 to_hca3[] = { 1, 1, 2, 3 }, to_leaf6[] = { 1, 1, 2 };
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, to_hca3, 4);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_TRUE(test, kmad_smp_is_returning((struct kmad_smp *)&mad));
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + NI_NODE_GUID),
			ft_guid(s, 3));
	KUNIT_EXPECT_EQ(test, d[NI_LOCAL_PORT], 1);

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, to_leaf6, 3);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + NI_NODE_GUID),
			ft_guid(s, 6));
	KUNIT_EXPECT_EQ(test, d[NI_NODE_TYPE], 2);
	KUNIT_EXPECT_EQ(test, d[NI_NUM_PORTS], 3);
	KUNIT_EXPECT_EQ(test, d[NI_LOCAL_PORT], 1);
}

/* Bad paths are discarded and counted: at a switch, and at an HCA. */
static void fabric_dr_discards(struct kunit *test)
{
	static const u8 no_port[] = { 1, 9 }, past_hca[] = { 1, 3, 1 };
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, no_port, 2);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_smi, 1ULL);
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, past_hca, 3);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).dropped_smi, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 0ULL);
}

/* Hop count 0: HCA 0's own SMA answers; no packet crosses its link. */
static void fabric_dr_local(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	u32 xmit, rcv;
	struct kmad_mad mad;

	/* Leaf 5 port 2 is HCA 0's link; HCA 1 reads it over port 3. */
	xmit = ft_pc(s, 1, 6, 2, 32, 4);
	rcv = ft_pc(s, 1, 6, 2, 36, 4);
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, NULL, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(sn_smp_data(&mad) +
						 NI_NODE_GUID), ft_guid(s, 0));
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).fw_answered, 1ULL);
	KUNIT_EXPECT_EQ(test, ft_pc(s, 1, 6, 2, 32, 4), xmit);
	KUNIT_EXPECT_EQ(test, ft_pc(s, 1, 6, 2, 36, 4), rcv);
}

/* DR to the root, then LID-routed to DrDLID (HCA 3), and back. */
static void fabric_dr_lid_routed_end(struct kunit *test)
{
	static const u8 to_root[] = { 1, 1 };
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, to_root, 2);
	((struct kmad_smp *)&mad)->dr_dlid = cpu_to_be16(4);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(sn_smp_data(&mad) +
						 NI_NODE_GUID), ft_guid(s, 3));
}

/* LID-routed to leaf 6, then DR out of its port 3 to HCA 3, and back. */
static void fabric_dr_lid_routed_start(struct kunit *test)
{
	static const u8 from_leaf6[] = { 3 };
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_TREE, 4, 2, 1);
	struct kmad_mad mad;

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, from_leaf6, 1);
	((struct kmad_smp *)&mad)->dr_slid = cpu_to_be16(1);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 7), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(sn_smp_data(&mad) +
						 NI_NODE_GUID), ft_guid(s, 3));
}

/* fattree(@hcas, @leaves, @spines), one port per HCA, step mode. */
static struct sn *ft_fattree(struct kunit *test, unsigned int hcas,
			     unsigned int leaves, unsigned int spines)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_FATTREE,
		.hcas = hcas,
		.leaves = leaves,
		.spines = spines,
		.mode = KMAD_SIM_STEP,
		.rq_depth = 32,
	};
	struct sn *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	spin_lock_init(&s->lock);
	snprintf(s->name, sizeof(s->name), "sn%d_", atomic_inc_return(&sn_seq));
	cfg.name = s->name;
	s->fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(s->fab));
	test->priv = s;
	return s;
}

/*
 * fattree(7 HCAs, 3 leaves, 2 spines): HCAs 0-6 (LIDs 1-7), spines nodes 7, 8 (LIDs 8, 9),
 * leaves nodes 9-11 (LIDs 10-12) with 2, 2, 3 HCAs; every leaf port 1 + s
 * on spine s port 1 + l; the HCAs from leaf port 3.  From every HCA,
 * NodeInfo by LID reaches the owner of every LID of the fabric.
 */
static void fabric_fattree(struct kunit *test)
{
	struct sn *s = ft_fattree(test, 7, 3, 2);
	struct kmad_sim_node_info info;
	unsigned int peer, l, sp, h, lid;
	u8 pport;

	KUNIT_EXPECT_EQ(test, kmad_sim_num_devices(s->fab), 7U);
	KUNIT_ASSERT_EQ(test, kmad_sim_num_nodes(s->fab), 12U);
	for (sp = 0; sp < 2; sp++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_node_info(s->fab, 7 + sp, &info),
				0);
		KUNIT_EXPECT_EQ(test, info.type, KMAD_SIM_NODE_SWITCH);
		KUNIT_EXPECT_EQ(test, info.num_ports, 3);
		KUNIT_EXPECT_EQ(test, info.lid, 8 + sp);
	}
	for (l = 0; l < 3; l++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_node_info(s->fab, 9 + l, &info),
				0);
		KUNIT_EXPECT_EQ(test, info.num_ports, 2 + (l == 2 ? 3 : 2));
		KUNIT_EXPECT_EQ(test, info.lid, 10 + l);
		for (sp = 0; sp < 2; sp++) {
			KUNIT_ASSERT_EQ(test,
					kmad_sim_link_peer(s->fab, 9 + l,
							   1 + sp, &peer,
							   &pport), 0);
			KUNIT_EXPECT_EQ(test, peer, 7 + sp);
			KUNIT_EXPECT_EQ(test, pport, 1 + l);
		}
	}
	/* HCA 4 is the first on leaf 11 (HCAs 4-6): leaf port 3. */
	KUNIT_ASSERT_EQ(test, kmad_sim_link_peer(s->fab, 4, 1, &peer, &pport),
			0);
	KUNIT_EXPECT_EQ(test, peer, 11U);
	KUNIT_EXPECT_EQ(test, pport, 3);
	for (h = 0; h < 7; h++) {
		for (lid = 1; lid <= 12; lid++) {
			struct kmad_mad mad;

			sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO,
			       0);
			KUNIT_ASSERT_EQ_MSG(test, sn_rpc(s, h, 1, &mad, lid), 0,
					    "HCA %u to LID %u", h, lid);
			KUNIT_EXPECT_EQ_MSG(test,
					    get_unaligned_be64(sn_smp_data(&mad) +
							       NI_NODE_GUID),
					    ft_guid(s, lid - 1),
					    "HCA %u to LID %u", h, lid);
		}
	}
}

/* fattree sizes out of range are refused. */
static void fabric_fattree_limits(struct kunit *test)
{
	static const unsigned int bad[][3] = {
		{ 2049, 16, 2 },	/* HCAs */
		{ 64, 129, 2 },		/* leaves */
		{ 64, 8, 33 },		/* spines */
		{ 2, 3, 1 },		/* an empty leaf */
		{ 254, 1, 2 },		/* 256 ports on the leaf */
	};
	struct kmad_sim_config cfg = {
		.name = "ftbad",
		.topology = KMAD_SIM_TOPO_FATTREE,
		.mode = KMAD_SIM_STEP,
	};
	struct kmad_sim_fabric *fab;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cfg.hcas = bad[i][0];
		cfg.leaves = bad[i][1];
		cfg.spines = bad[i][2];
		fab = kmad_sim_create(&cfg);
		KUNIT_EXPECT_TRUE_MSG(test, IS_ERR(fab), "case %u", i);
		if (!IS_ERR_OR_NULL(fab))
			kmad_sim_destroy(fab);
	}
}

/* PortInfo's P_KeyViolations (IBTA 14.2.5.6). */
#define PI_PKEY_VIOL	46

/* Set block 0 of the P_KeyTable of the port at @lid to @keys (LID-routed). */
static noinline_for_stack void ft_pkeys(struct sn *s, u16 lid,
					const u16 *keys, unsigned int n)
{
	struct kmad_mad mad;
	unsigned int i;

	sn_smp(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PKEY_TABLE, 0);
	for (i = 0; i < n; i++)
		put_unaligned_be16(keys[i], sn_smp_data(&mad) + 2 * i);
	KUNIT_ASSERT_EQ(s->test, sn_rpc(s, 0, 1, &mad, lid), 0);
}

/* A PortCounters Get from HCA 0 with P_Key index @index to @lid's PMA. */
static noinline_for_stack int ft_pma_get(struct sn *s, u16 lid,
					 u16 index)
{
	struct kmad_mad mad;

	sn_pma(&mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	s->pkey_index = index;
	return sn_rpc(s, 0, 1, &mad, lid);
}

/*
 * P_Key enforcement (IBTA 10.9.3): a GMP whose P_Key matches no entry of
 * the receiving port's table is dropped and counted (the drop, and
 * PortInfo's P_KeyViolations); two limited members do not match, nor does
 * the invalid key 0; SMPs are not checked.  The answer leaves with the
 * responder's entry, so the requester reports the entry of its own table
 * that matches that one.  A PortInfo Set writing P_KeyViolations 0
 * clears the count.  Pair: HCA 0 (LID 1), HCA 1 (LID 2).
 */
static void fabric_pkey_enforced(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	const u16 full1[] = { 0x8001 }, limited1[] = { 0x0001 };
	const u16 mine[] = { 0xffff, 0x8001, 0x0001 };
	struct kmad_mad mad;

	ft_pkeys(s, 1, mine, ARRAY_SIZE(mine));
	ft_pkeys(s, 2, full1, ARRAY_SIZE(full1));
	/* 0xffff: HCA 1 has no default key any more. */
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 0), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).dropped_bad_pkey, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 1ULL);
	/* SMPs are not checked: the SMA still answers. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	s->pkey_index = 0;
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test,
			get_unaligned_be16(sn_smp_data(&mad) + PI_PKEY_VIOL), 1);
	/* 0x8001 full, at HCA 0's index 1: taken, answered back to it. */
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 1), 0);
	KUNIT_EXPECT_EQ(test, s->resp_pkey_index, 1);
	/* 0x0001 limited against HCA 1's full 0x8001: taken; the answer
	 * carries 0x8001, HCA 0's entry 1.
	 */
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 2), 0);
	KUNIT_EXPECT_EQ(test, s->resp_pkey_index, 1);
	/* Two limited members. */
	ft_pkeys(s, 2, limited1, ARRAY_SIZE(limited1));
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 2), -1);
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 1), 0);
	KUNIT_EXPECT_EQ(test, s->resp_pkey_index, 1);
	/* HCA 0's entry 3 is empty: the invalid key matches nothing. */
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 3), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).dropped_bad_pkey, 3ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_bad_pkey, 0ULL);
	/* A PortInfo Set writing P_KeyViolations 0 clears it (as qib). */
	s->pkey_index = 0;
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test,
			get_unaligned_be16(sn_smp_data(&mad) + PI_PKEY_VIOL), 3);
	mad.mad_hdr.method = KMAD_METHOD_SET;
	sn_smp_data(&mad)[32] &= 0xf0;		/* PortState: no change */
	sn_smp_data(&mad)[33] &= 0x0f;		/* PhysState: no change */
	put_unaligned_be16(0, sn_smp_data(&mad) + PI_PKEY_VIOL);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test,
			get_unaligned_be16(sn_smp_data(&mad) + PI_PKEY_VIOL), 0);
	KUNIT_EXPECT_EQ(test, ft_pma_get(s, 2, 3), -1);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	s->pkey_index = 0;
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test,
			get_unaligned_be16(sn_smp_data(&mad) + PI_PKEY_VIOL), 1);
}

struct ft_rx {
	atomic_t n;
	u16 pkey_index;
};

static void ft_rx_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

static void ft_rx_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
		       struct kmad_recv_wc *wc)
{
	struct ft_rx *rx = agent->context;

	WRITE_ONCE(rx->pkey_index, wc->pkey_index);
	atomic_inc(&rx->n);
	kmad_free_recv(wc);
}

/*
 * A receive reports the index of the receiving port's entry its P_Key
 * matched, not the sender's index (which names an entry of another
 * table).
 */
static void fabric_pkey_index_receivers(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	const u16 keys0[] = { 0xffff, 0x8001 }, keys1[] = { 0x8001, 0xffff };
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_VENDOR_RANGE1_START,
		.class_version = 1,
	};
	struct ft_rx rx = { .n = ATOMIC_INIT(0) };
	char dev_name[24];
	struct kmad_agent *agent;
	struct kmad_mad *mad;
	unsigned int i;
	u16 got;

	mad = kunit_kzalloc(test, sizeof(*mad), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mad);

	ft_pkeys(s, 1, keys0, ARRAY_SIZE(keys0));
	ft_pkeys(s, 2, keys1, ARRAY_SIZE(keys1));
	snprintf(dev_name, sizeof(dev_name), "%s%u", s->name, 1);
	s->port[1][0] = kmad_port_get(dev_name, 1);
	KUNIT_ASSERT_NOT_NULL(test, s->port[1][0]);
	set_bit(KMAD_METHOD_GET, req.method_mask);
	agent = kmad_register_agent(s->port[1][0], KMAD_QPT_GSI, &req,
				    ft_rx_send, ft_rx_recv, &rx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(agent));
	/* sn_exit() unregisters it, should a check below end the case. */
	s->agent[1][0][1] = agent;
	for (i = 0; i < 2; i++) {
		sn_hdr(mad, KMAD_MGMT_CLASS_VENDOR_RANGE1_START, 1,
		       KMAD_METHOD_GET, 0x10, 0);
		s->pkey_index = i;
		sn_post(s, 0, 1, mad, 2);
		kmad_sim_fire_cq_event(s->fab, 1, KMAD_SIM_QP(1, 1), false);
		kmad_sim_settle(s->fab);
		KUNIT_ASSERT_EQ(test, atomic_read(&rx.n), i + 1);
		got = READ_ONCE(rx.pkey_index);
		/* 0x8001 is HCA 1's entry 0; 0xffff its entry 1. */
		KUNIT_EXPECT_EQ(test, got, 1 - i);
	}
}

static struct kunit_case fabric_cases[] = {
	KUNIT_CASE(fabric_star_layout),
	KUNIT_CASE(fabric_tree_layout),
	KUNIT_CASE(fabric_star_routing),
	KUNIT_CASE(fabric_tree_routing),
	KUNIT_CASE(fabric_tree_delivers),
	KUNIT_CASE(fabric_pair_two_ports),
	KUNIT_CASE(fabric_dead_link),
	KUNIT_CASE(fabric_dead_own_link),
	KUNIT_CASE(fabric_lft_set_reroutes),
	KUNIT_CASE(fabric_lft_loop),
	KUNIT_CASE(fabric_dr_tree),
	KUNIT_CASE(fabric_dr_discards),
	KUNIT_CASE(fabric_dr_local),
	KUNIT_CASE(fabric_dr_lid_routed_end),
	KUNIT_CASE(fabric_dr_lid_routed_start),
	KUNIT_CASE(fabric_fattree),
	KUNIT_CASE(fabric_fattree_limits),
	KUNIT_CASE(fabric_pkey_enforced),
	KUNIT_CASE(fabric_pkey_index_receivers),
	{}
};

static struct kunit_suite fabric_suite = {
	.name = "kmad_fabric",
	.exit = sn_exit,
	.test_cases = fabric_cases,
};

kunit_test_suite(fabric_suite);

MODULE_DESCRIPTION("KUnit tests for kmad_sim's subnet: topologies and routing");
MODULE_LICENSE("GPL");
