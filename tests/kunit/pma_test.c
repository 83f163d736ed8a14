// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_pma: the simulated PMA -- ClassPortInfo, PortCounters and
 * PortCountersExtended at the offsets of IBTA Volume 1, 16.1 (written
 * out here as numbers), counting the packets that really crossed each
 * link: SA-class MADs posted by kmad agents (which no firmware answers)
 * and the PMA's own queries and answers.  Every MAD is a 288-byte packet
 * on the wire, 72 data words.  A query counts itself as received before
 * it is answered; its answer is counted after.
 *
 * pair: HCAs 0 and 1, LIDs 1 and 2.  star(4): HCAs 0-3 (LIDs 1-4) on
 * switch node 4 (LID 5), HCA i on switch port i + 1.
 */
#include <kunit/test.h>

#include "subnet_test.h"

#define PM_WORDS	72
#define SW_LID		5

/* PortCounters (IBTA 16.1.4.4) and PortCountersExtended (16.1.4.11). */
#define PC_LINK_DOWNED		7
#define PC_XMIT_DISCARDS	14
#define PC_XMIT_DATA		24
#define PC_RCV_DATA		28
#define PC_XMIT_PKTS		32
#define PC_RCV_PKTS		36
#define PCE_XMIT_DATA		8
#define PCE_RCV_DATA		16
#define PCE_XMIT_PKTS		24
#define PCE_RCV_PKTS		32
#define PCE_UNI_XMIT		40
#define PCE_UNI_RCV		48
#define PCE_MCAST_XMIT		56
#define PCE_MCAST_RCV		64

/* Query (or, with @set, clear) @attr of (@lid, @sel) from HCA @dev. */
static int pm_query(struct sn *s, unsigned int dev, u16 lid, u16 attr,
		    u8 sel, bool set, u16 select, struct kmad_mad *mad)
{
	sn_pma(mad, set ? KMAD_METHOD_SET : KMAD_METHOD_GET, attr, sel,
	       select);
	return sn_rpc(s, dev, 1, mad, lid);
}

static u32 pm_be32(struct kmad_mad *mad, unsigned int off)
{
	return get_unaligned_be32(sn_pma_data(mad) + off);
}

static u64 pm_be64(struct kmad_mad *mad, unsigned int off)
{
	return get_unaligned_be64(sn_pma_data(mad) + off);
}

/* @n SA-class MADs from (@dev, @port) to @lid, none answered. */
static void pm_traffic(struct sn *s, unsigned int dev, u8 port, u16 lid,
		       int n)
{
	struct kmad_mad mad;

	while (n--) {
		sn_sa(&mad, KMAD_METHOD_GET_RESP);
		sn_post(s, dev, port, &mad, lid);
	}
}

/* ClassPortInfo: version 1, AllPortSelect and extended width. */
static void pma_class_port_info(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_pma_data(&mad);

	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, KMAD_ATTR_CLASS_PORT_INFO, 0,
				       false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[0], 1);
	KUNIT_EXPECT_EQ(test, d[1], 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2), 0x0300);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 4) & 0x1f, 18);
	KUNIT_EXPECT_EQ(test, pm_query(s, 0, 2, KMAD_ATTR_CLASS_PORT_INFO, 0,
				       true, 0, &mad), 0x000c);
}

/* Both ends of a link count what crossed it, in packets and words. */
static void pma_counts_traffic(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	pm_traffic(s, 0, 1, 2, 3);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, KMAD_PMA_ATTR_PORT_COUNTERS,
				       1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 4U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_DATA), 4U * PM_WORDS);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 0U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_DATA), 0U);

	KUNIT_ASSERT_EQ(test, pm_query(s, 1, 1, KMAD_PMA_ATTR_PORT_COUNTERS,
				       1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 4U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 2U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_DATA), 4U * PM_WORDS);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_DATA), 2U * PM_WORDS);
}

/*
 * A MAD sent with a GRH is 40 bytes longer on the wire (IBTA 16.1.4.4:
 * every byte from the LRH to the ICRC): 82 data words.  Before, it
 * counted 72, as without one.
 */
static void pma_counts_grh(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_dest dest = {
		.dlid = 2, .remote_qpn = 1, .remote_qkey = KMAD_QP1_QKEY,
		.grh_present = true, .grh = { .hop_limit = 1 },
	};
	struct kmad_send_buf *buf;
	struct kmad_mad mad;

	sn_agent(s, 1, 1, 1);
	KUNIT_ASSERT_EQ(test, kmad_port_query_gid(s->port[1][0], 0,
						  &dest.grh.dgid), 0);
	buf = kmad_alloc_send_buf(sn_agent(s, 0, 1, 1), &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	sn_sa(buf->mad, KMAD_METHOD_GET_RESP);
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	sn_pump(s, 0, 1, 1);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, KMAD_PMA_ATTR_PORT_COUNTERS,
				       1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 2U);
	/* The GRH send, then this query (no GRH). */
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_DATA), 82U + PM_WORDS);
}

/* PortCountersExtended: 64-bit data and packets, all unicast. */
static void pma_extended(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	pm_traffic(s, 0, 1, 2, 4);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, 1,
				       KMAD_PMA_ATTR_PORT_COUNTERS_EXT, 1,
				       false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, sn_pma_data(&mad)[1], 1);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_DATA), 4ULL * PM_WORDS);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_DATA), 1ULL * PM_WORDS);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_PKTS), 4ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_PKTS), 1ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_UNI_XMIT), 4ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_UNI_RCV), 1ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_MCAST_XMIT), 0ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_MCAST_RCV), 0ULL);
}

/* Set clears only the selected counters, and only of that attribute. */
static void pma_set_clears(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	const u16 pce = KMAD_PMA_ATTR_PORT_COUNTERS_EXT;
	struct kmad_mad mad;

	pm_traffic(s, 0, 1, 2, 2);
	/* HCA 1 has received 3 (the Set too): clear PortRcvPkts only. */
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pc, 1, true, 0x8000, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 0U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_DATA), 3U * PM_WORDS);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pce, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_PKTS), 4ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_PKTS), 1ULL);
	/* Clear PortXmitPkts of the extended counters only. */
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pce, 1, true, 0x0004, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_PKTS), 0ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_UNI_XMIT), 2ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_PKTS), 5ULL);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pc, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 3U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 3U);
}

/* A switch counts per port; AllPortSelect sums the ports. */
static void pma_switch_ports(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	struct kmad_mad mad;

	pm_traffic(s, 0, 1, 3, 2);		/* HCA 0 to HCA 2 */
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, SW_LID, pc, 1, false, 0, &mad),
			0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 2U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 0U);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, SW_LID, pc, 3, false, 0, &mad),
			0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 2U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 0U);
	/* Port 2 (HCA 1's) carried 3 queries in and 2 answers out. */
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, SW_LID, pc, 0xff, false, 0, &mad),
			0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 4U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 5U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_DATA), 5U * PM_WORDS);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, SW_LID, pc, 0, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 0U);
	KUNIT_EXPECT_EQ(test, pm_query(s, 1, SW_LID, pc, 5, false, 0, &mad),
			0x001c);
}

/* A two-port HCA: each port counts its own link; 0xFF sums both. */
static void pma_two_ports(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 2);
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	struct kmad_mad mad;

	pm_traffic(s, 0, 1, 2, 1);
	pm_traffic(s, 0, 2, 4, 2);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pc, 2, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 2U);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pc, 0xff, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_RCV_PKTS), 5U);
	KUNIT_EXPECT_EQ(test, pm_be32(&mad, PC_XMIT_PKTS), 1U);
}

/* A dead link: LinkDownedCounter at both ends, PortXmitDiscards; Set. */
static void pma_link_errors(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	struct kmad_mad mad;
	u8 *d = sn_pma_data(&mad);

	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 2, 1, false), 0);
	pm_traffic(s, 0, 1, 3, 1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_link, 1ULL);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 2, 1, true), 0);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, SW_LID, pc, 3, false, 0, &mad),
			0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PC_XMIT_DISCARDS), 1);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 3, pc, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 1);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, SW_LID, pc, 3, true, 0x0044,
				       &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PC_XMIT_DISCARDS), 0);
}

/*
 * PortCounters saturates at its field widths (IBTA 16.1.4.4: a counter
 * stops at all ones, it does not wrap): 256 link downs, a cable pulled and
 * plugged back 256 times, leave the 8-bit LinkDownedCounter of both ends
 * at 255, not 0.  A Set clears it to count from 0 again.
 */
static void pma_link_downed_saturates(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	struct kmad_mad mad;
	u8 *d = sn_pma_data(&mad);
	unsigned int i;

	for (i = 0; i < 256; i++) {
		KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 0, 1, false),
				0);
		KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 0, 1, true),
				0);
	}
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, pc, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 255);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, 1, pc, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 255);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, 1, pc, 1, true, 0x0004, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 0, 1, false), 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 0, 1, true), 0);
	KUNIT_ASSERT_EQ(test, pm_query(s, 1, 1, pc, 1, false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PC_LINK_DOWNED], 1);
}

/* Unknown attribute, bad PortSelect, bad Q_Key: 0x000C, 0x001C, dropped. */
static void pma_bad_requests(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_dest dest = { .dlid = 2, .remote_qpn = 1,
				  .remote_qkey = 0x1234 };
	const u16 pc = KMAD_PMA_ATTR_PORT_COUNTERS;
	struct kmad_send_buf *buf;
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(test, pm_query(s, 0, 2,
				       KMAD_PMA_ATTR_PORT_SAMPLES_CONTROL, 1,
				       false, 0, &mad), 0x000c);
	KUNIT_EXPECT_EQ(test, pm_query(s, 0, 2, pc, 0, false, 0, &mad),
			0x001c);
	KUNIT_EXPECT_EQ(test, pm_query(s, 0, 2, pc, 2, false, 0, &mad),
			0x001c);

	buf = kmad_alloc_send_buf(sn_agent(s, 0, 1, 1), &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	sn_pma(buf->mad, KMAD_METHOD_GET, pc, 1, 0);
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	sn_pump(s, 0, 1, 1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).dropped_bad_qkey, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 3ULL);
	/* The SMA reports the violation in PortInfo.Q_KeyViolations. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(sn_smp_data(&mad) + 48), 1);
}

/*
 * PortCounters and PortCountersExtended take their port from PortSelect;
 * their AttributeModifier is 0 (IBTA 16.1): any other is answered 0x001C,
 * as qib does.  Before, they were answered with status 0.
 */
static void pma_attr_mod_refused(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	sn_pma(&mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	mad.mad_hdr.attr_mod = cpu_to_be32(1);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0x001c);
	sn_pma(&mad, KMAD_METHOD_SET, KMAD_PMA_ATTR_PORT_COUNTERS_EXT, 1,
	       0xffff);
	mad.mad_hdr.attr_mod = cpu_to_be32(0x100);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), 0x001c);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, 2, KMAD_PMA_ATTR_PORT_COUNTERS_EXT,
				       1, false, 0, &mad), 0);
	/* The refused Set cleared nothing: all three queries counted. */
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_PKTS), 3ULL);
}

/*
 * The PMA is behind QP1 only: a PerfMgt Get sent to QP 2 of an HCA that
 * has no such QP is not answered (dropped_no_recv there), nor by a
 * switch.  Before, both firmwares answered it, from QP 2.
 */
static void pma_only_on_qp1(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 2, 0, 1);
	struct kmad_dest dest = { .dlid = 2, .remote_qpn = 2,
				  .remote_qkey = KMAD_QP1_QKEY };
	struct kmad_sim_stats before;
	struct kmad_send_buf *buf;

	before = sn_stats(s, 1, 1);
	buf = kmad_alloc_send_buf(sn_agent(s, 0, 1, 1), &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	sn_pma(buf->mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	sn_pump(s, 0, 1, 1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered,
			before.fw_answered);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).dropped_no_recv,
			before.dropped_no_recv + 1);
	KUNIT_EXPECT_EQ(test, kmad_sim_pending_sends(s->fab, 1, 1), 0U);

	/* To the switch (LID 3 in star(2)): no answer either. */
	before = sn_stats(s, 0, 1);
	dest.dlid = 3;
	buf = kmad_alloc_send_buf(sn_agent(s, 0, 1, 1), &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(buf));
	sn_pma(buf->mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	KUNIT_ASSERT_EQ(test, kmad_post_send(buf), 0);
	sn_pump(s, 0, 1, 1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).delivered, before.delivered);
}

/* Async mode: 4 HCAs send to each other; the switch saw every packet. */
static void pma_async_traffic(struct kunit *test)
{
	struct sn *s = sn_setup_mode(test, KMAD_SIM_TOPO_STAR, 4, 0, 1,
				     KMAD_SIM_ASYNC);
	struct kmad_mad mad;
	unsigned int i;

	for (i = 0; i < 4; i++)
		pm_traffic(s, i, 1, (i + 1) % 4 + 1, 5);
	KUNIT_ASSERT_EQ(test, pm_query(s, 0, SW_LID,
				       KMAD_PMA_ATTR_PORT_COUNTERS_EXT, 0xff,
				       false, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_RCV_PKTS), 21ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_PKTS), 20ULL);
	KUNIT_EXPECT_EQ(test, pm_be64(&mad, PCE_XMIT_DATA), 20ULL * PM_WORDS);
	for (i = 1; i < 4; i++)
		KUNIT_EXPECT_EQ(test, sn_stats(s, i, 1).delivered, 5ULL);
}

static struct kunit_case pma_cases[] = {
	KUNIT_CASE(pma_class_port_info),
	KUNIT_CASE(pma_counts_traffic),
	KUNIT_CASE(pma_counts_grh),
	KUNIT_CASE(pma_extended),
	KUNIT_CASE(pma_set_clears),
	KUNIT_CASE(pma_switch_ports),
	KUNIT_CASE(pma_two_ports),
	KUNIT_CASE(pma_link_errors),
	KUNIT_CASE(pma_link_downed_saturates),
	KUNIT_CASE(pma_bad_requests),
	KUNIT_CASE(pma_attr_mod_refused),
	KUNIT_CASE(pma_only_on_qp1),
	KUNIT_CASE(pma_async_traffic),
	{}
};

static struct kunit_suite pma_suite = {
	.name = "kmad_pma",
	.exit = sn_exit,
	.test_cases = pma_cases,
};

kunit_test_suite(pma_suite);

MODULE_DESCRIPTION("KUnit tests for kmad_sim's performance management agent");
MODULE_LICENSE("GPL");
