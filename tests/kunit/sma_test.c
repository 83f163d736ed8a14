// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sma: the simulated SMA -- attribute encodings checked byte by byte
 * against the offsets of IBTA Volume 1, 14.2.5 (written out here as
 * numbers, independent of the simulator's own tables), Set semantics, and
 * the status of what it does not support.  Requests come from kmad agents
 * on HCA 0 (or the HCA named), answered in step mode.
 *
 * star(4): HCAs 0-3 (LIDs 1-4) on switch node 4 (LID 5), HCA i on switch
 * port i + 1.  pair: HCAs 0 and 1, LIDs 1 and 2.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/string.h>

#include "subnet_test.h"

#define SW_LID		5

/* Get (or Set, with @mad's data) attribute @attr/@mod of @dlid from 0. */
static int sm_query_key(struct sn *s, u8 method, u16 attr, u32 mod,
			u16 dlid, struct kmad_mad *mad, const u8 *data, u64 mkey)
{
	sn_smp(mad, method, attr, mod);
	((struct kmad_smp *)mad)->mkey = cpu_to_be64(mkey);
	if (data)
		memcpy(sn_smp_data(mad), data, KMAD_SMP_DATA_SIZE);
	return sn_rpc(s, 0, 1, mad, dlid);
}

static int sm_query(struct sn *s, u8 method, u16 attr, u32 mod, u16 dlid,
		    struct kmad_mad *mad, const u8 *data)
{
	return sm_query_key(s, method, attr, mod, dlid, mad, data, 0);
}

/*
 * A Get of PortInfo written back, as an SM does, with PortState and
 * PortPhysicalState 0 ("no change").
 */
static void sm_port_info_for_set(u8 *pi, const struct kmad_mad *mad)
{
	memcpy(pi, ((const struct kmad_smp *)mad)->data, KMAD_SMP_DATA_SIZE);
	pi[32] &= 0xf0;
	pi[33] &= 0x0f;
}

/* Get PortInfo (@dlid, @mod) into @pi, ready for a Set that keeps it. */
static void sm_port_get_for_set(struct sn *s, u16 dlid, u32 mod, u8 *pi,
				struct kmad_mad *mad)
{
	KUNIT_ASSERT_EQ(s->test, sm_query(s, KMAD_METHOD_GET,
					  KMAD_SMP_ATTR_PORT_INFO, mod, dlid,
					  mad, NULL), 0);
	sm_port_info_for_set(pi, mad);
}

/*
 * Set PortInfo (@dlid, @mod) as it is but for the @mask bits of byte @byte,
 * set to @val; returns the answer's status.
 */
static noinline_for_stack int sm_port_set(struct sn *s, u16 dlid, u32 mod,
					  u8 byte, u8 mask, u8 val,
					  struct kmad_mad *mad)
{
	u8 pi[KMAD_SMP_DATA_SIZE];

	sm_port_get_for_set(s, dlid, mod, pi, mad);
	pi[byte] = (pi[byte] & ~mask) | val;
	return sm_query(s, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, mod, dlid,
			mad, pi);
}

/* Set PortState @state and PortPhysicalState @phys in one PortInfo Set. */
static noinline_for_stack int sm_port_set_states(struct sn *s, u16 dlid,
						 u32 mod, u8 state, u8 phys,
						 struct kmad_mad *mad)
{
	u8 pi[KMAD_SMP_DATA_SIZE];

	sm_port_get_for_set(s, dlid, mod, pi, mad);
	pi[32] |= state;
	pi[33] |= phys << 4;
	return sm_query(s, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, mod, dlid,
			mad, pi);
}

static u64 sm_guid(struct sn *s, unsigned int node)
{
	struct kmad_sim_node_info info;

	KUNIT_ASSERT_EQ(s->test, kmad_sim_node_info(s->fab, node, &info), 0);
	return info.guid;
}

/* NodeInfo of an HCA: every field at its IBTA offset. */
static void sma_node_info_hca(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, d[0], 1);			/* BaseVersion */
	KUNIT_EXPECT_EQ(test, d[1], 1);			/* ClassVersion */
	KUNIT_EXPECT_EQ(test, d[2], 1);			/* NodeType: CA */
	KUNIT_EXPECT_EQ(test, d[3], 1);			/* NumPorts */
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 4), sm_guid(s, 1));
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 12), sm_guid(s, 1));
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 20), sm_guid(s, 1) + 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 28), 64);	/* PartCap */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 30), 0x5a01);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 32), 1);	/* Revision */
	KUNIT_EXPECT_EQ(test, d[36], 1);		/* LocalPortNum */
	KUNIT_EXPECT_EQ(test, d[37], 0x00);		/* VendorID */
	KUNIT_EXPECT_EQ(test, d[38], 0x14);
	KUNIT_EXPECT_EQ(test, d[39], 0x05);
	KUNIT_EXPECT_EQ(test, d[40], 0);
}

/* NodeInfo of a switch: type 2, its ports, the port the SMP came in on. */
static void sma_node_info_switch(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 2, 1, &mad, SW_LID), 0);
	KUNIT_EXPECT_EQ(test, d[2], 2);
	KUNIT_EXPECT_EQ(test, d[3], 4);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 12), sm_guid(s, 4));
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 20), sm_guid(s, 4));
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 30), 0x5a02);
	KUNIT_EXPECT_EQ(test, d[36], 3);
}

/* NodeDescription: the node's name; a Set is not supported. */
static void sma_node_desc(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	char want[64];

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_DESC, 0, SW_LID,
				       &mad, NULL), 0);
	snprintf(want, sizeof(want), "%ssw0 kmad_sim switch", s->name);
	KUNIT_EXPECT_STREQ(test, (char *)sn_smp_data(&mad), want);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_NODE_DESC, 0, 2, &mad,
				       NULL), 0x000c);
}

/* PortInfo of an HCA port: the fields of a fresh, Active port. */
static void sma_port_info_hca(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 0), 0ULL);	/* M_Key */
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 8),
			0xfe80000000000000ULL);			/* GidPrefix */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 2);	/* LID */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 18), 1);	/* SM LID */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 20), 0x800);
	KUNIT_EXPECT_EQ(test, d[28], 1);		/* LocalPortNum */
	KUNIT_EXPECT_EQ(test, d[29], 0x03);		/* LinkWidthEnabled */
	KUNIT_EXPECT_EQ(test, d[30], 0x03);		/* ...Supported */
	KUNIT_EXPECT_EQ(test, d[31], 0x02);		/* ...Active: 4x */
	KUNIT_EXPECT_EQ(test, d[32], 0x74);		/* speeds, Active */
	KUNIT_EXPECT_EQ(test, d[33], 0x52);		/* LinkUp, Polling */
	KUNIT_EXPECT_EQ(test, d[34], 0x00);		/* LMC 0 */
	KUNIT_EXPECT_EQ(test, d[35], 0x47);		/* 10G of 2.5/5/10 */
	KUNIT_EXPECT_EQ(test, d[36], 0x40);		/* MTU 2048, SL 0 */
	KUNIT_EXPECT_EQ(test, d[37], 0x10);		/* VLCap VL0 */
	KUNIT_EXPECT_EQ(test, d[39], 8);		/* VLArbHighCap */
	KUNIT_EXPECT_EQ(test, d[40], 8);		/* VLArbLowCap */
	KUNIT_EXPECT_EQ(test, d[41], 0x04);		/* MTUCap */
	KUNIT_EXPECT_EQ(test, d[43], 0x10);		/* OperationalVLs */
	KUNIT_EXPECT_EQ(test, d[50], 8);		/* GUIDCap */
	KUNIT_EXPECT_EQ(test, d[52], 8);		/* RespTimeValue */
}

/*
 * An HCA takes a PortInfo Set only for the port it arrived on (ibsim
 * refuses another, qib takes it as a Get): a Set through HCA 1's port 1
 * naming its port 2 is
 * answered 0x001C with port 2's PortInfo, its LID unchanged; naming port
 * 1 it is taken.  Before, port 2 took the Set.
 */
static void sma_port_info_set_other_port(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 2);
	u16 lid1 = sn_lid(s, 1, 1), lid2 = sn_lid(s, 1, 2);
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;

	KUNIT_ASSERT_NE(test, lid2, 0);
	sm_port_get_for_set(s, lid1, 2, pi, &mad);
	put_unaligned_be16(0x55, pi + 16);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, lid1, &mad,
				       pi), 0x001c);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(sn_smp_data(&mad) + 16),
			lid2);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 2), lid2);
	sm_port_get_for_set(s, lid1, 1, pi, &mad);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_PORT_INFO, 1, lid1, &mad,
				       pi), 0);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 1), lid1);
}

/*
 * LinkWidthActive and LinkSpeedActive follow what both ends of the link
 * enable, as the link trains (ibsim sets them from the enabled values):
 * a switch port set to 1x and 2.5 Gb/s reads 1x and 2.5 on both ends,
 * and "as supported" (0xFF, 0xF) brings 4x and 10 Gb/s back.  Before,
 * they read 4x and 10 Gb/s whatever was enabled.
 */
/*
 * A star of two HCAs: the switch's LID in *@sw, the LID of the HCA port
 * on the switch's port 1 in *@hca.
 */
static struct sn *sm_star_link(struct kunit *test, u16 *sw, u16 *hca)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 2, 0, 1);
	unsigned int peer;
	u8 peer_port;

	*sw = sn_lid(s, 2, 0);
	KUNIT_ASSERT_EQ(test, kmad_sim_link_peer(s->fab, 2, 1, &peer,
						 &peer_port), 0);
	*hca = sn_lid(s, peer, peer_port);
	return s;
}

/* Set LinkWidthEnabled @width and LinkSpeedEnabled @speed of (@lid, @mod). */
static void sm_link_enable(struct sn *s, u16 lid, u32 mod, u8 width,
			   u8 speed, struct kmad_mad *mad)
{
	KUNIT_ASSERT_EQ(s->test, sm_port_set(s, lid, mod, 29, 0xff, width, mad),
			0);
	KUNIT_ASSERT_EQ(s->test, sm_port_set(s, lid, mod, 35, 0x0f, speed, mad),
			0);
}

static void sma_link_active_follows_enabled(struct kunit *test)
{
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	u16 sw, hca;
	struct sn *s = sm_star_link(test, &sw, &hca);

	sm_link_enable(s, sw, 1, 0x01, 0x01, &mad);
	KUNIT_EXPECT_EQ(test, d[31], 0x01);		/* 1x */
	KUNIT_EXPECT_EQ(test, d[35], 0x11);		/* 2.5, 2.5 enabled */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, hca, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, d[29], 0x03);		/* its own: both */
	KUNIT_EXPECT_EQ(test, d[31], 0x01);
	KUNIT_EXPECT_EQ(test, d[35] >> 4, 0x1);
	/* Another switch port keeps 4x and 10 Gb/s. */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, sw, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, d[31], 0x02);
	KUNIT_EXPECT_EQ(test, d[35] >> 4, 0x4);
	sm_link_enable(s, sw, 1, 0xff, 0x0f, &mad);
	KUNIT_EXPECT_EQ(test, d[31], 0x02);		/* 4x */
	KUNIT_EXPECT_EQ(test, d[35], 0x47);		/* 10, all enabled */
}

/*
 * A link whose ends enable no speed or width in common would not train on
 * hardware; each end then reports the slowest and narrowest value it
 * enables itself, so that Active stays within Enabled (as ibportstate
 * expects).  Before, both ends reported the fastest and widest supported
 * value, 10 Gb/s and 4x, outside the HCA's 2.5 Gb/s and 1x.
 */
static void sma_link_active_no_common(struct kunit *test)
{
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	u16 sw, hca;
	struct sn *s = sm_star_link(test, &sw, &hca);

	/* The switch's end: 4x and 10 Gb/s only; the HCA's: 1x, 2.5 only. */
	sm_link_enable(s, sw, 1, 0x02, 0x04, &mad);
	sm_link_enable(s, hca, 0, 0x01, 0x01, &mad);
	KUNIT_EXPECT_EQ(test, d[31], 0x01);		/* 1x */
	KUNIT_EXPECT_EQ(test, d[35], 0x11);		/* 2.5, 2.5 enabled */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 1, sw, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, d[31], 0x02);		/* 4x */
	KUNIT_EXPECT_EQ(test, d[35], 0x44);		/* 10, 10 enabled */
}

/*
 * Attribute modifiers: PortInfo's bit 31 (SMSupportsExtendedSpeeds, which
 * smpquery -x, ibportstate and OpenSM set) changes nothing, at an HCA and
 * at a switch; NodeInfo, NodeDescription and SwitchInfo take modifier 0
 * only (0x001C otherwise, the status qib sets).  Before, PortInfo with bit 31 was
 * refused 0x001C, and the others took any modifier.
 */
static void sma_attr_modifiers(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 2, 0, 1);
	u16 sw = sn_lid(s, 2, 0);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0x80000001, 2,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 2);	/* LID */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0x80000002, sw,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[28], 1);	/* LocalPortNum: it came in 1 */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0x40000001, 2,
				       &mad, NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 1, 2, &mad,
				       NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_DESC, 1, sw, &mad,
				       NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 1, sw, &mad,
				       NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, sw, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 4096);	/* LFDB cap */
}

/*
 * A switch's QP1 has its PMA alone: a Get of another GMP class gets an
 * answer with status 0x0004 (unsupported class), as kmad answers a class
 * no agent has, and a PerfMgt Get is still answered.  Before, the switch
 * dropped it and the requester timed out.
 */
static void sma_switch_other_gmp_class(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 2, 0, 1);
	u16 sw = sn_lid(s, 2, 0);
	struct kmad_mad mad;

	sn_hdr(&mad, KMAD_MGMT_CLASS_VENDOR_RANGE1_START, 1, KMAD_METHOD_GET,
	       0x0010, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, sw), 0x0004);
	KUNIT_EXPECT_EQ(test, mad.mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, mad.mad_hdr.mgmt_class,
			KMAD_MGMT_CLASS_VENDOR_RANGE1_START);
	sn_pma(&mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, sw), 0);
}

/*
 * A LID-routed SubnGet to the permissive LID reaches the neighbour (a
 * star's switch), whose answer is routed back by its LFT to the sender's
 * LID: only a directed-route SMP leaves from 0xFFFF.  (A first form of
 * 0b2682b sent every SMP to 0xFFFF from 0xFFFF, and the switch dropped
 * its answer: no route to 0xFFFF.)
 */
static void sma_lid_routed_to_permissive(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 2, 0, 1);
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0,
				       KMAD_PERMISSIVE_LID, &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[2], 2);	/* a switch */
	KUNIT_EXPECT_EQ(test, s->resp_slid, sn_lid(s, 2, 0));
}

#define SM_MKEY		0x1122334455667788ULL

/* PortInfo of HCA 1 (LID 2) got with @mkey into @mad; its status. */
static int sm_pi_key(struct sn *s, struct kmad_mad *mad, u64 mkey)
{
	return sm_query_key(s, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, 2,
			    mad, NULL, mkey);
}

/*
 * Set HCA 1's M_Key to SM_MKEY with ProtectBits @prot and
 * M_KeyLeasePeriod @lease (s), sending @mkey; the Set's status.
 */
static noinline_for_stack int sm_set_mkey(struct sn *s, u8 prot, u16 lease,
					  u64 mkey)
{
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(s->test, sm_pi_key(s, &mad, mkey), 0);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be64(SM_MKEY, pi);
	put_unaligned_be16(lease, pi + 26);
	pi[34] = (pi[34] & 0x3f) | prot << 6;
	return sm_query_key(s, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, 0, 2,
			    &mad, pi, mkey);
}

/*
 * M_Key checking (IBTA 14.2.4), of HCA 1 (LID 2) from HCA 0, step mode.
 * ProtectBits 1: a Get with no key is answered, PortInfo's M_Key reading
 * 0 (with the key: the key); a Set with no key is dropped and counted in
 * M_KeyViolations.  ProtectBits 2 and a 1 s lease: a Get with no key is
 * dropped; with the key it is answered and stops the lease timer; a
 * failure starts it, and once it has run out the ProtectBits read 0 and
 * anyone's Get is answered, M_Key and all.  kmad_port_query_smp() (the
 * driver's own query) is answered whatever the key, counting nothing.
 * A Set writing M_KeyViolations 0 clears it (as qib).
 */
static void sma_mkey_check(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	/* No M_Key yet: any key passes. */
	KUNIT_ASSERT_EQ(test, sm_set_mkey(s, 1, 0, 0x99), 0);
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, 0), 0);
	KUNIT_EXPECT_EQ(test, d[34] >> 6, 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), 0ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 2);	/* LID */
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_MKEY);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 0);
	/* A Set without the key: dropped, counted. */
	KUNIT_EXPECT_EQ(test, sm_set_mkey(s, 0, 0, 0), -1);
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, d[34] >> 6, 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 1);

	KUNIT_ASSERT_EQ(test, sm_set_mkey(s, 2, 1, SM_MKEY), 0);
	/* The driver's own query (sysfs): no M_Key check, no violation. */
	sn_agent(s, 1, 1, 0);		/* which gets s->port[1][0] */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	KUNIT_EXPECT_EQ(test, kmad_port_query_smp(s->port[1][0],
						  (struct kmad_smp *)&mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 2);	/* LID */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 1);
	mad.mad_hdr.method = KMAD_METHOD_SET;
	KUNIT_EXPECT_EQ(test, kmad_port_query_smp(s->port[1][0],
						  (struct kmad_smp *)&mad),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, sm_pi_key(s, &mad, 0), -1);	/* timer on */
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);	/* off */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 2);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 26), 1);	/* lease */
	kmad_sim_advance_clock(s->fab, 2000);
	/* The timer was stopped: still protected; this starts it. */
	KUNIT_EXPECT_EQ(test, sm_pi_key(s, &mad, 0), -1);
	KUNIT_EXPECT_EQ(test, sm_pi_key(s, &mad, 0x99), -1);
	kmad_sim_advance_clock(s->fab, 1000);
	/* Run out: ProtectBits 0, the driver's query sees it first... */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, kmad_port_query_smp(s->port[1][0],
						  (struct kmad_smp *)&mad), 0);
	KUNIT_EXPECT_EQ(test, d[34] >> 6, 0);
	/* ...and the key is readable by anyone. */
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, 0), 0);
	KUNIT_EXPECT_EQ(test, d[34] >> 6, 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_MKEY);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 4);
	/* A Set still needs the key. */
	KUNIT_EXPECT_EQ(test, sm_set_mkey(s, 0, 0, 0), -1);
	KUNIT_EXPECT_EQ(test, sm_set_mkey(s, 0, 0, SM_MKEY), 0);
	/* Written as read, M_KeyViolations stays; written 0, it clears. */
	KUNIT_ASSERT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 5);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be16(0, pi + 44);
	KUNIT_ASSERT_EQ(test, sm_query_key(s, KMAD_METHOD_SET,
					   KMAD_SMP_ATTR_PORT_INFO, 0, 2, &mad,
					   pi, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 0);
}

/*
 * An HCA's PortInfo Get naming its other port passes that port's M_Key
 * check too (as qib's subn_get_portinfo()): HCA 1's port 2 protected
 * (ProtectBits 2), port 1 not; a Get through port 1 of port 2's PortInfo
 * without the key is dropped and counted on port 2; with it, answered.
 * Before, port 1's check let anyone read port 2's M_Key.  With port 1
 * protected too, a Get of port 2 with neither key counts on both (as
 * qib's process_subn()); before, only on port 1.
 */
static void sma_mkey_other_port(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 2);
	u16 lid1 = sn_lid(s, 1, 1), lid2 = sn_lid(s, 1, 2);
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	/* Through HCA 0's port 2, cabled to HCA 1's port 2. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 2, &mad, lid2), 0);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be64(SM_MKEY, pi);
	pi[34] = (pi[34] & 0x3f) | 2 << 6;
	sn_smp(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, 0);
	memcpy(d, pi, sizeof(pi));
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 2, &mad, lid2), 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 1, lid1, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, lid1, &mad,
				       NULL), -1);
	KUNIT_ASSERT_EQ(test, sm_query_key(s, KMAD_METHOD_GET,
					   KMAD_SMP_ATTR_PORT_INFO, 2, lid1,
					   &mad, NULL, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_MKEY);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 1);
	/* Port 1 protected too (another key): a Get of port 2 through it
	 * with neither key counts on both ports.
	 */
	sm_port_get_for_set(s, lid1, 0, pi, &mad);
	put_unaligned_be64(SM_MKEY + 1, pi);
	pi[34] = (pi[34] & 0x3f) | 2 << 6;
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, lid1, &mad,
				       pi), 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, lid1, &mad,
				       NULL), -1);
	KUNIT_ASSERT_EQ(test, sm_query_key(s, KMAD_METHOD_GET,
					   KMAD_SMP_ATTR_PORT_INFO, 0, lid1,
					   &mad, NULL, SM_MKEY + 1), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 1);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0);
	((struct kmad_smp *)&mad)->mkey = cpu_to_be64(SM_MKEY);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 2, &mad, lid2), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 44), 2);
}

/* PortInfo of switch ports: an external port has no LID; port 0 has. */
static void sma_port_info_switch(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 3, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 0);
	KUNIT_EXPECT_EQ(test, d[28], 1);		/* came in on port 1 */
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 4);
	KUNIT_EXPECT_EQ(test, d[50], 0);
	KUNIT_EXPECT_EQ(test, d[39], 8);		/* VLArbHighCap */
	KUNIT_EXPECT_EQ(test, d[40], 8);		/* VLArbLowCap */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), SW_LID);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 18), 1);
	/* Base port 0 has no VLArbitrationTable. */
	KUNIT_EXPECT_EQ(test, d[39], 0);
	KUNIT_EXPECT_EQ(test, d[40], 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 5, SW_LID,
				       &mad, NULL), 0x001c);
}

/* A Set of LID and SM LID (by DR): the port answers at its new LID only. */
static void sma_port_info_set_lid(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_port *port;
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	char name[24];

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, path, 1);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be16(0x20, pi + 16);
	put_unaligned_be16(7, pi + 18);
	sn_dr(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, 0, path, 1);
	memcpy(d, pi, sizeof(pi));
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 0x20);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 18), 7);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 1), 0x20);
	/* HCA 1 reported it to kmad, as a driver reports a port event. */
	snprintf(name, sizeof(name), "%s1", s->name);
	port = kmad_port_get(name, 1);
	KUNIT_ASSERT_NOT_NULL(test, port);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(port), 0x20);
	KUNIT_EXPECT_EQ(test, kmad_port_sm_lid(port), 7);
	kmad_port_put(port);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 0x20, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 2, &mad,
				       NULL), -1);
	/* A multicast LID is refused, and nothing changes. */
	pi[16] = 0xc0;
	sn_dr(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, 0, path, 1);
	memcpy(d, pi, sizeof(pi));
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID),
			0x001c);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 16), 0x20);
}

/* Set the LID and LMC of the port at the end of directed route @path. */
static void sm_set_lid_lmc(struct sn *s, const u8 *path, u8 hops, u16 lid,
			   u8 lmc)
{
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, path, hops);
	KUNIT_ASSERT_EQ(s->test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID),
			0);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be16(lid, pi + 16);
	pi[34] = (pi[34] & ~0x7) | lmc;
	sn_dr(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PORT_INFO, 0, path, hops);
	memcpy(sn_smp_data(&mad), pi, sizeof(pi));
	KUNIT_ASSERT_EQ(s->test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID),
			0);
	KUNIT_ASSERT_EQ(s->test, get_unaligned_be16(sn_smp_data(&mad) + 16),
			lid);
	KUNIT_ASSERT_EQ(s->test, sn_smp_data(&mad)[34] & 0x7, lmc);
}

/*
 * LMC 2 on both ports (LIDs 0x10-0x13 and 0x20-0x23): a request to any
 * LID of HCA 1 is answered (here by kmad itself: nobody has the class)
 * from that LID, as ib_mad answers; one sent from path bits 1 (LID 0x11)
 * reaches HCA 1 from 0x11 and its answer comes back to 0x11, where it
 * matches the request.
 */
static void sma_lmc_path_bits(struct kunit *test)
{
	static const u8 path[] = { 1 };
	/* Async: HCA 1's kmad answers, not its firmware. */
	struct sn *s = sn_setup_mode(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1,
				     KMAD_SIM_ASYNC);
	struct kmad_mad mad;

	sm_set_lid_lmc(s, path, 1, 0x20, 2);
	sm_set_lid_lmc(s, NULL, 0, 0x10, 2);
	KUNIT_ASSERT_EQ(test, kmad_port_lmc(s->port[0][0]), 2);

	sn_hdr(&mad, 0x09, 1, KMAD_METHOD_GET, 0x0010, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 0x22),
			KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, s->resp_slid, 0x22);
	KUNIT_EXPECT_EQ(test, s->resp_path_bits, 0);

	sn_hdr(&mad, 0x09, 1, KMAD_METHOD_GET, 0x0010, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc_from(s, 0, 1, &mad, 0x23, 1),
			KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, s->resp_slid, 0x23);
	KUNIT_EXPECT_EQ(test, s->resp_path_bits, 1);
	/* Path bits beyond the LMC are masked: from 0x11 again. */
	sn_hdr(&mad, 0x09, 1, KMAD_METHOD_GET, 0x0010, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc_from(s, 0, 1, &mad, 0x20, 0x5),
			KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_EXPECT_EQ(test, s->resp_path_bits, 1);
}

/*
 * LMC 2 on HCA 0 (LIDs 0x10-0x13): its PMA answers a Get sent to one of
 * its own LIDs, looped back, from that LID, and the answer comes back to
 * the path bits the request left from, where it matches.  (The looped-back
 * answer kept the request's path bits and came from the base LID: the
 * request to 0x11 timed out, its answer counted misaddressed.)
 */
static void sma_lmc_own_lid(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	sm_set_lid_lmc(s, NULL, 0, 0x10, 2);

	sn_hdr(&mad, KMAD_MGMT_CLASS_PERF_MGMT, 1, KMAD_METHOD_GET,
	       KMAD_ATTR_CLASS_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, 0x11), 0);
	KUNIT_EXPECT_EQ(test, s->resp_slid, 0x11);
	KUNIT_EXPECT_EQ(test, s->resp_path_bits, 0);

	sn_hdr(&mad, KMAD_MGMT_CLASS_PERF_MGMT, 1, KMAD_METHOD_GET,
	       KMAD_ATTR_CLASS_PORT_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc_from(s, 0, 1, &mad, 0x10, 2), 0);
	KUNIT_EXPECT_EQ(test, s->resp_slid, 0x10);
	KUNIT_EXPECT_EQ(test, s->resp_path_bits, 2);
}

/*
 * A directed-route Get whose Status field is not zero is answered with
 * the SMA's status alone (and the D bit).  (The request's status bits
 * were kept: 0x0004 came back with a good NodeInfo.)
 */
static void sma_dr_request_status_ignored(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, NULL, 0);
	mad.mad_hdr.status = cpu_to_be16(KMAD_MAD_STATUS_BAD_VERSION);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(mad.mad_hdr.status),
			KMAD_SMP_DIRECTION);
}

/* What the RMPP case of sma_lmc_path_bits saw. */
struct sm_lmc_rmpp {
	struct completion sent;
	enum kmad_send_status status;
	atomic_t msgs;
	size_t mad_len;
	u16 slid;
};

static void sm_lmc_send_done(struct kmad_agent *agent,
			     struct kmad_send_wc *wc)
{
	struct sm_lmc_rmpp *r = agent->context;

	r->status = wc->status;
	kmad_free_send_buf(wc->send_buf);
	complete(&r->sent);
}

static void sm_lmc_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			struct kmad_recv_wc *wc)
{
	struct sm_lmc_rmpp *r = agent->context;

	r->mad_len = wc->mad_len;
	r->slid = wc->slid;
	atomic_inc(&r->msgs);
	kmad_free_recv(wc);
}

/*
 * An RMPP GetMulti from path bits 1 (LID 0x11) to LID 0x22 of a port
 * with LMC 2: the receiver's ACKs leave from 0x22, where the sender
 * takes them (it takes ACKs only from the LID it sent to), and the
 * transfer ends OK.
 */
static void sma_lmc_rmpp(struct kunit *test)
{
	static const u8 path[] = { 1 };
	struct sn *s = sn_setup_mode(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1,
				     KMAD_SIM_ASYNC);
	struct kmad_reg_req req = { .rmpp_version = KMAD_RMPP_VERSION };
	struct kmad_dest dest = {
		.dlid = 0x22, .remote_qpn = 1, .remote_qkey = KMAD_QP1_QKEY,
		.src_path_bits = 1,
	};
	struct sm_lmc_rmpp *r;
	struct kmad_agent *rcv, *snd;
	struct kmad_send_buf *buf;
	const size_t len = 600;		/* three segments */
	int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	init_completion(&r->sent);
	sm_set_lid_lmc(s, path, 1, 0x20, 2);
	sm_set_lid_lmc(s, NULL, 0, 0x10, 2);
	sn_agent(s, 1, 1, 1);		/* HCA 1's port, for the receiver */
	snd = kmad_register_agent(s->port[0][0], KMAD_QPT_GSI, &req,
				  sm_lmc_send_done, sm_lmc_recv, r);
	KUNIT_ASSERT_FALSE(test, IS_ERR(snd));
	req.mgmt_class = KMAD_MGMT_CLASS_SUBN_ADM;
	req.class_version = 2;
	__set_bit(KMAD_METHOD_GET_MULTI, req.method_mask);
	rcv = kmad_register_agent(s->port[1][0], KMAD_QPT_GSI, &req,
				  sm_lmc_send_done, sm_lmc_recv, r);
	if (IS_ERR(rcv))
		kmad_unregister_agent(snd);
	KUNIT_ASSERT_FALSE(test, IS_ERR(rcv));

	buf = kmad_alloc_send_buf_rmpp(snd, &dest, KMAD_SA_MAD_HDR_SIZE, len,
				       GFP_KERNEL);
	KUNIT_EXPECT_FALSE(test, IS_ERR(buf));
	if (!IS_ERR(buf)) {
		sn_sa(buf->mad, KMAD_METHOD_GET_MULTI);
		((struct kmad_rmpp_mad *)buf->mad)->rmpp_hdr.rmpp_rtime_flags =
			KMAD_RMPP_FLAG_ACTIVE;
		/* No response awaited: it ends at the last ACK. */
		buf->timeout_ms = 0;
		KUNIT_EXPECT_EQ(test, kmad_post_send(buf), 0);
		KUNIT_EXPECT_NE(test,
				wait_for_completion_timeout(&r->sent, 10 * HZ),
				0UL);
		KUNIT_EXPECT_EQ(test, r->status, KMAD_SEND_OK);
		/* The sender's last ACK may come before the receiver's
		 * agent work has handed the message over.
		 */
		for (i = 0; i < 500 && !atomic_read(&r->msgs); i++)
			msleep(20);
		KUNIT_EXPECT_EQ(test, atomic_read(&r->msgs), 1);
		KUNIT_EXPECT_EQ(test, r->slid, 0x11);
		KUNIT_EXPECT_EQ(test, r->mad_len,
				(size_t)(KMAD_SA_MAD_HDR_SIZE + len));
	}
	kmad_unregister_agent(rcv);
	kmad_unregister_agent(snd);
}

/* PortState Down retrains to Init (no data); Armed, Active restore it. */
static void sma_port_state(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_port_set(s, SW_LID, 2, 32, 0xf, 1, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 2);			/* Init */
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, 2);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_link, 1ULL);
	KUNIT_EXPECT_EQ(test, sm_port_set(s, SW_LID, 2, 32, 0xf, 4, &mad),
			0x001c);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 2);
	KUNIT_ASSERT_EQ(test, sm_port_set(s, SW_LID, 2, 32, 0xf, 3, &mad), 0);
	KUNIT_ASSERT_EQ(test, sm_port_set(s, 2, 0, 32, 0xf, 3, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 3);			/* Armed */
	KUNIT_ASSERT_EQ(test, sm_port_set(s, SW_LID, 2, 32, 0xf, 4, &mad), 0);
	KUNIT_ASSERT_EQ(test, sm_port_set(s, 2, 0, 32, 0xf, 4, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 4);			/* Active */
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, 2);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 1ULL);
}

/* PortPhysicalState Disabled takes the link down; Polling brings it up. */
static void sma_port_disable(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_port_set(s, SW_LID, 3, 33, 0xf0, 3 << 4,
					  &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 1);			/* Down */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 3);			/* Disabled */
	/* HCA 2 sees its peer gone: its own SMA (hop count 0) says so. */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, NULL, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 2, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 1);
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 2);			/* Polling */
	KUNIT_ASSERT_EQ(test, sm_port_set(s, SW_LID, 3, 33, 0xf0, 2 << 4,
					  &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 2);			/* Init */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 5);			/* LinkUp */
}

/*
 * A PortInfo Set of PortState Active with a PortPhysicalState change is
 * refused (0x1C) and changes neither.  (It was taken: the link retrained
 * to Init and the port was then set Active over it.)  Down with Disabled,
 * as OpenSM disables a port, is taken.
 */
static void sma_port_state_and_phys_refused(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	/* Active and Polling */
	KUNIT_EXPECT_EQ(test, sm_port_set_states(s, SW_LID, 2, 4, 2, &mad),
			0x001c);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 4);			/* Active */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 5);			/* LinkUp */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, 2,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 4);	/* and its peer, HCA 1 */

	/* Down and Disabled */
	KUNIT_EXPECT_EQ(test, sm_port_set_states(s, SW_LID, 2, 1, 3, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[32] & 0xf, 1);			/* Down */
	KUNIT_EXPECT_EQ(test, d[33] >> 4, 3);			/* Disabled */
}

/* P_KeyTable: default full key; Set per block; a switch port by modifier. */
static void sma_pkey_table(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 keys[KMAD_SMP_DATA_SIZE] = { 0x80, 0x01 };
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0xffff);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 1, 2, &mad,
				       keys), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 1, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0x8001);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 2, 2, &mad,
				       NULL), 0x001c);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 3 << 16, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0xffff);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PKEY_TABLE, 9 << 16, SW_LID,
				       &mad, NULL), 0x001c);
}

/* GUIDInfo: entry 0 is the port GUID and stays; others take a Set. */
static void sma_guid_info(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	u8 guids[KMAD_SMP_DATA_SIZE] = {};
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_GUID_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), sm_guid(s, 1) + 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 8), 0ULL);
	put_unaligned_be64(0x1234, guids);
	put_unaligned_be64(0xabcd, guids + 8);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_GUID_INFO, 0, 2, &mad,
				       guids), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), sm_guid(s, 1) + 1);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 8), 0xabcdULL);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_GUID_INFO, 1, 2, &mad,
				       NULL), 0x001c);
}

/* SwitchInfo: caps and top; PortStateChange set by a link, cleared by 1. */
static void sma_switch_info(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 si[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 0), 4096);	/* LinCap */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 1024);	/* MultiCap */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 5);	/* LinTop */
	KUNIT_EXPECT_EQ(test, d[11] >> 3, 18);		/* LifeTimeValue */
	KUNIT_EXPECT_EQ(test, d[11] & 0x04, 0);		/* PortStateChange */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 14), 64);
	kmad_sim_set_link(s->fab, 3, 1, false);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[11] & 0x04, 0x04);
	memcpy(si, d, sizeof(si));
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, SW_LID,
				       &mad, si), 0);
	KUNIT_EXPECT_EQ(test, d[11] & 0x04, 0);
	put_unaligned_be16(5000, si + 6);	/* above LinearFDBCap */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, SW_LID,
				       &mad, si), 0x001c);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 5);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SWITCH_INFO, 0, 2, &mad,
				       NULL), 0x000c);
}

/* LinearForwardingTable: the computed routes; a block Set; bad blocks. */
static void sma_lft(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 block[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	int i;

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_LINEAR_FT, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[0], 0xff);
	for (i = 1; i <= 4; i++)
		KUNIT_EXPECT_EQ(test, d[i], i);
	KUNIT_EXPECT_EQ(test, d[5], 0);
	KUNIT_EXPECT_EQ(test, d[6], 0xff);
	memcpy(block, d, sizeof(block));
	block[63] = 2;
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_LINEAR_FT, 0, SW_LID,
				       &mad, block), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_LINEAR_FT, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[63], 2);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_LINEAR_FT, 64, SW_LID,
				       &mad, NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_LINEAR_FT, 0, 2, &mad,
				       NULL), 0x000c);
}

/*
 * MulticastForwardingTable: empty at power-up; a Set of one position of
 * one block reads back there and nowhere else; bits for ports the switch
 * lacks are dropped; the last block below MulticastFDBCap works, the
 * next and a position past the ports are invalid; an HCA has none.
 */
static void sma_mft(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 block[KMAD_SMP_DATA_SIZE] = {};
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	/* MLID 0xC000: ports 1 and 3; 0xC01F: port 0 and ports 5-15. */
	put_unaligned_be16(0x000a, block);
	put_unaligned_be16(0xffe1, block + 62);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_MCAST_FT, 0, SW_LID,
				       &mad, block), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0x000a);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 62), 0x0001);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 0, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0x000a);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 62), 0x0001);
	KUNIT_EXPECT_NULL(test, memchr_inv(d + 2, 0, 60));
	/* Block 1 (0xC020-0xC03F) is another table entry. */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 1, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	/* The last block of 1024 MLIDs, 0xC3E0-0xC3FF. */
	put_unaligned_be16(0x0010, block);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_MCAST_FT, 31, SW_LID,
				       &mad, block), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 31, SW_LID,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0x0010);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 32, SW_LID,
				       &mad, NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_MCAST_FT, 32, SW_LID,
				       &mad, block), 0x001c);
	/* 5 ports (0-4) fit position 0: position 1 does not exist. */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 1U << 28,
				       SW_LID, &mad, NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 0, 2, &mad,
				       NULL), 0x000c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_MCAST_FT, 0, 2, &mad,
				       block), 0x000c);
}

/* A switch of 16 ports has two port mask positions, kept apart. */
static void sma_mft_positions(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 16, 0, 1);
	u16 sw_lid = 17;
	u8 block[KMAD_SMP_DATA_SIZE] = {};
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	/* Position 1 is ports 16-31: the switch has 16 (bit 0). */
	put_unaligned_be16(0xffff, block + 2 * 5);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_MCAST_FT, 1U << 28 | 2,
				       sw_lid, &mad, block), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2 * 5), 0x0001);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 2, sw_lid,
				       &mad, NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 1U << 28 | 2,
				       sw_lid, &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2 * 5), 0x0001);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_MCAST_FT, 2U << 28,
				       sw_lid, &mad, NULL), 0x001c);
}

/*
 * VLArbitrationTable: 8 entries per table, the power-up low table VL0
 * weight 255; a Set reads back (VL's high bits and entries past the cap
 * dropped); the tables of 32-63, block 0 and 5, a switch's port 0 and a
 * port it lacks are invalid.
 */
static void sma_vlarb(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 table[KMAD_SMP_DATA_SIZE] = {};
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	static const u32 bad[] = { 0, 2 << 16, 4 << 16, 5 << 16 };
	unsigned int i;

	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 1 << 16, 2,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[0], 0);
	KUNIT_EXPECT_EQ(test, d[1], 255);
	KUNIT_EXPECT_NULL(test, memchr_inv(d + 2, 0, KMAD_SMP_DATA_SIZE - 2));
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 3 << 16, 2,
				       &mad, NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	for (i = 0; i < 32; i++) {
		table[2 * i] = 0xf0 | (i & 0xf);
		table[2 * i + 1] = 10 + i;
	}
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 3 << 16, 2,
				       &mad, table), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 3 << 16, 2,
				       &mad, NULL), 0);
	for (i = 0; i < 8; i++) {
		KUNIT_EXPECT_EQ(test, d[2 * i], i);
		KUNIT_EXPECT_EQ(test, d[2 * i + 1], 10 + i);
	}
	KUNIT_EXPECT_NULL(test, memchr_inv(d + 16, 0, KMAD_SMP_DATA_SIZE - 16));
	/* The low table is another. */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 1 << 16, 2,
				       &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[1], 255);
	KUNIT_EXPECT_EQ(test, d[3], 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
					       KMAD_SMP_ATTR_VL_ARB_TABLE,
					       bad[i], 2, &mad, NULL), 0x001c);
	/* A switch: port 3's tables, its own; port 0 and 5 have none. */
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE,
				       3 << 16 | 3, SW_LID, &mad, table), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE,
				       3 << 16 | 2, SW_LID, &mad, NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE,
				       3 << 16 | 3, SW_LID, &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, d[14], 7);
	KUNIT_EXPECT_EQ(test, d[15], 17);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 1 << 16,
				       SW_LID, &mad, NULL), 0x001c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_VL_ARB_TABLE, 1 << 16 | 5,
				       SW_LID, &mad, NULL), 0x001c);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
}

/* Unsupported attributes and methods answer 0x000C with no data. */
static void sma_unsupported(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_RANDOM_FT, 0, 2,
				       &mad, NULL), 0x000c);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 2, &mad,
				       NULL), 0x000c);
	KUNIT_EXPECT_NULL(test, memchr_inv(sn_smp_data(&mad), 0,
					   KMAD_SMP_DATA_SIZE));
}

/*
 * SLtoVLMappingTable: VL0 is the only VL, so every SL maps to it; a Set
 * that keeps that is taken, any other is an invalid value; a switch's
 * modifier names ports it has.
 */
static void sma_sl2vl(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_STAR, 4, 0, 1);
	u8 table[KMAD_SMP_DATA_SIZE] = {};
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SL_TO_VL_TABLE, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_SL_TO_VL_TABLE, 0, 2, &mad,
				       table), 0);
	table[7] = 0x01;			/* SL 15 on VL1 */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_SL_TO_VL_TABLE, 0, 2, &mad,
				       table), 0x001c);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	/* Switch: input port 4 to output port 0, then a port it lacks. */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SL_TO_VL_TABLE, 0x0400,
				       SW_LID, &mad, NULL), 0);
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SL_TO_VL_TABLE, 0x0500,
				       SW_LID, &mad, NULL), 0x001c);
}

/* kmad_port_modify_cap(): IsSM comes and goes in PortInfo, alone. */
static void sma_cap_is_sm(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_port *port = sn_agent(s, 1, 1, 0)->port;
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, kmad_port_modify_cap(port, 0x2, 0), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 20), 0x802);
	KUNIT_EXPECT_EQ(test, kmad_port_modify_cap(port, 0x8, 0), -EINVAL);
	KUNIT_ASSERT_EQ(test, kmad_port_modify_cap(port, 0, 0x2), 0);
	KUNIT_ASSERT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 20), 0x800);
	KUNIT_EXPECT_EQ(test, kmad_port_modify_cap(NULL, 0x2, 0), -EINVAL);
}

/* Firmware consumes SubnGet: an agent registered for it sees nothing. */
static void sma_firmware_consumes(struct kunit *test)
{
	struct sn *s = sn_setup(test, KMAD_SIM_TOPO_PAIR, 0, 0, 1);
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kmad_port *port;
	struct kmad_agent *a;
	struct kmad_mad mad;
	char dev[24];

	snprintf(dev, sizeof(dev), "%s1", s->name);
	port = kmad_port_get(dev, 1);
	KUNIT_ASSERT_NOT_NULL(test, port);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(port, KMAD_QPT_SMI, &req, sn_send_done,
				sn_recv, s);
	if (IS_ERR(a))
		kmad_port_put(port);
	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 1ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 0ULL);
	kmad_unregister_agent(a);
	kmad_port_put(port);
}

/* What the test SM of sma_sm_info answers: SMInfo of IBTA 14.2.5.13. */
#define SM_TEST_GUID	0x0014050000abcdefULL
#define SM_TEST_ACT	0x12345678
#define SM_TEST_PRI_STATE	0xe3	/* Priority 14, SMState 3 (MASTER) */

/*
 * A subnet manager's agent: answers every request with SMInfo (and counts
 * them in @agent->context).
 */
static void sm_test_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	atomic_t *seen = agent->context;
	struct kmad_send_buf *buf;
	u8 *d;

	if (!req && wc->mad->mad_hdr.attr_id ==
		    cpu_to_be16(KMAD_SMP_ATTR_SM_INFO)) {
		atomic_inc(seen);
		buf = kmad_create_response(agent, wc, GFP_ATOMIC);
		if (!IS_ERR(buf)) {
			d = ((struct kmad_smp *)buf->mad)->data;
			put_unaligned_be64(SM_TEST_GUID, d);
			put_unaligned_be64(0, d + 8);
			put_unaligned_be32(SM_TEST_ACT, d + 16);
			d[20] = SM_TEST_PRI_STATE;
			if (kmad_post_send(buf))
				kmad_free_send_buf(buf);
		}
	}
	kmad_free_recv(wc);
}

/*
 * SMInfo is the SM's, not the SMA's (IBTA 14.4.1): at an HCA the firmware
 * leaves it to kmad, which answers "unsupported method/attribute"
 * (0x000c, as ib_mad does) while no agent is registered for the class and hands it to the one
 * registered for SubnGet (LID-routed and directed route), whose answer
 * comes back unchanged; a switch's SMA answers it "unsupported" (0x000c)
 * itself.  Before sim_sm_request() the HCA's firmware answered 0x000c and
 * the agent saw nothing.
 */
static void sma_sm_info(struct kunit *test)
{
	struct sn *s = sn_setup_mode(test, KMAD_SIM_TOPO_STAR, 2, 0, 1,
				     KMAD_SIM_ASYNC);
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kmad_agent *a, *dr;
	struct kmad_port *port;
	struct kmad_mad mad;
	atomic_t seen = ATOMIC_INIT(0);
	u8 *d = sn_smp_data(&mad);
	u8 path[] = { 1, 2 };
	char dev[24];

	/*
	 * Nobody registered: kmad on HCA 1 answers, not its firmware, with
	 * "unsupported method/attribute": the port's SMA has the class and
	 * version, not SMInfo.
	 */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SM_INFO, 0, 2, &mad,
				       NULL), 0x000c);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 0ULL);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 1ULL);
	/* Likewise by a route of 0 hops: kmad's answer stays in the port. */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_SM_INFO, 0, NULL, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 1, 1, &mad, KMAD_PERMISSIVE_LID),
			0x000c);
	/* The switch (LID 3) has no SM: its SMA answers. */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SM_INFO, 0, 3, &mad,
				       NULL), 0x000c);

	snprintf(dev, sizeof(dev), "%s1", s->name);
	port = kmad_port_get(dev, 1);
	KUNIT_ASSERT_NOT_NULL(test, port);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(port, KMAD_QPT_SMI, &req, sn_send_done,
				sm_test_recv, &seen);
	req.mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	dr = IS_ERR(a) ? a : kmad_register_agent(port, KMAD_QPT_SMI, &req,
						 sn_send_done, sm_test_recv,
						 &seen);
	if (IS_ERR(dr) && !IS_ERR(a))
		kmad_unregister_agent(a);
	if (IS_ERR(dr))
		kmad_port_put(port);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dr));

	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_SM_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, mad.mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_TEST_GUID);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 8), 0ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 16), SM_TEST_ACT);
	KUNIT_EXPECT_EQ(test, d[20], SM_TEST_PRI_STATE);
	KUNIT_EXPECT_EQ(test, atomic_read(&seen), 1);

	/* Directed route: HCA 0, switch port 2, HCA 1. */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_SM_INFO, 0, path, 2);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_TEST_GUID);
	KUNIT_EXPECT_EQ(test, d[20], SM_TEST_PRI_STATE);
	KUNIT_EXPECT_EQ(test, atomic_read(&seen), 2);
	/* From the permissive LID, as an HCA reports a directed route. */
	KUNIT_EXPECT_EQ(test, s->resp_slid, KMAD_PERMISSIVE_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 0ULL);

	/*
	 * From the SM's own port, 0 hops (sminfo -D 0 on the SM's node): the
	 * request goes up to the SM, its answer back down to the requester,
	 * neither over the link.  Before, the answer went to the switch,
	 * which dropped it, and the request timed out.
	 */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_SM_INFO, 0, NULL, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 1, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, mad.mad_hdr.method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d), SM_TEST_GUID);
	KUNIT_EXPECT_EQ(test, atomic_read(&seen), 3);
	KUNIT_EXPECT_EQ(test, s->resp_slid, KMAD_PERMISSIVE_LID);
	/* The switch's SMA answers a directed route from 0xFFFF too. */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0, path, 1);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), 0);
	KUNIT_EXPECT_EQ(test, s->resp_slid, KMAD_PERMISSIVE_LID);

	/* Other SubnGets still go to the firmware, not to the SM. */
	KUNIT_EXPECT_EQ(test, sm_query(s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_NODE_INFO, 0, 2, &mad,
				       NULL), 0);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).fw_answered, 1ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&seen), 3);
	kmad_unregister_agent(dr);
	kmad_unregister_agent(a);
	kmad_port_put(port);
}

/* What sma_trap_128's SM agent saw; it answers every Trap. */
struct sm_traps {
	spinlock_t lock;	/* guards the rest */
	int n;
	struct kmad_mad mad;	/* the last */
	u16 slid;
};

static void sm_trap_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	struct sm_traps *t = agent->context;
	struct kmad_send_buf *buf;

	if (!req && wc->mad->mad_hdr.method == KMAD_METHOD_TRAP) {
		spin_lock(&t->lock);
		t->n++;
		t->mad = *wc->mad;
		t->slid = wc->slid;
		spin_unlock(&t->lock);
		/* TrapRepress, which the switch takes (not a drop). */
		buf = kmad_create_response(agent, wc, GFP_ATOMIC);
		if (!IS_ERR(buf) && kmad_post_send(buf))
			kmad_free_send_buf(buf);
	}
	kmad_free_recv(wc);
}

/* Wait up to @ms until @t has seen @n traps; how many it has. */
static int sm_traps_wait(struct sn *s, struct sm_traps *t, int n,
			 unsigned int ms)
{
	int i, got = 0;

	for (i = 0; i < ms / 20; i++) {
		kmad_sim_settle(s->fab);
		spin_lock(&t->lock);
		got = t->n;
		spin_unlock(&t->lock);
		if (got >= n)
			break;
		msleep(20);
	}
	return got;
}

/*
 * The trap cases' fabric: an async star of two HCAs (@hca_ports each)
 * and a switch with
 * &kmad_sim_config.traps, and on HCA 0 (the SM, MasterSMLID 1) an SMI
 * agent that takes SubnTrap into @f->t; sm_trap_teardown() ends it.
 */
struct sm_trap_fix {
	struct sn *s;
	struct sm_traps *t;
	struct kmad_port *port;
	struct kmad_agent *a;
};

/* The trap cases' star, on @link_layer. */
static struct sn *sm_trap_fabric(struct kunit *test,
				 enum kmad_link_layer link_layer,
				 unsigned int hca_ports)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_STAR,
		.hcas = 2,
		.hca_ports = hca_ports,
		.mode = KMAD_SIM_ASYNC,
		.rq_depth = 32,
		.traps = true,
		.link_layer = link_layer,
	};

	return sn_setup_cfg(test, &cfg);
}

static void sm_trap_setup(struct kunit *test, struct sm_trap_fix *f,
			  unsigned int hca_ports)
{
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	char dev[24];

	f->s = sm_trap_fabric(test, KMAD_LINK_LAYER_INFINIBAND, hca_ports);
	f->t = kunit_kzalloc(test, sizeof(*f->t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->t);
	spin_lock_init(&f->t->lock);
	snprintf(dev, sizeof(dev), "%s0", f->s->name);
	f->port = kmad_port_get(dev, 1);
	KUNIT_ASSERT_NOT_NULL(test, f->port);
	__set_bit(KMAD_METHOD_TRAP, req.method_mask);
	f->a = kmad_register_agent(f->port, KMAD_QPT_SMI, &req, sn_send_done,
				   sm_trap_recv, f->t);
	if (IS_ERR(f->a))
		kmad_port_put(f->port);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f->a));
}

static void sm_trap_teardown(struct sm_trap_fix *f)
{
	kmad_unregister_agent(f->a);
	kmad_port_put(f->port);
}

/*
 * Trap 128 (&kmad_sim_config.traps): a cable pulled, then plugged, between
 * HCA 1 and the switch of a star: each time the switch (the end that is a
 * switch) sends its SM (MasterSMLID 1, HCA 0, where an agent takes SubnTrap)
 * a Notice: generic, urgent, producer switch, trap 128, issuer and LIDADDR
 * the switch's LID, from that LID.  The agent answers with TrapRepress,
 * and the switch counts no drop for it (dropped_no_recv stays 0).  A call
 * that changes no state sends none.
 */
static void sma_trap_128(struct kunit *test)
{
	struct sm_trap_fix f;
	struct sm_traps *t;
	struct sn *s;
	u16 sw_lid;
	u8 *d;

	sm_trap_setup(test, &f, 1);
	s = f.s;
	t = f.t;
	sw_lid = sn_lid(s, 2, 0);
	KUNIT_ASSERT_NE(test, sw_lid, 0);

	KUNIT_EXPECT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, false), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 1, SN_ASYNC_TIMEOUT_MS), 1);
	d = ((struct kmad_smp *)&t->mad)->data;
	KUNIT_EXPECT_EQ(test, t->mad.mad_hdr.mgmt_class,
			KMAD_MGMT_CLASS_SUBN_LID_ROUTED);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(t->mad.mad_hdr.attr_id),
			KMAD_ATTR_NOTICE);
	KUNIT_EXPECT_EQ(test, t->slid, sw_lid);
	KUNIT_EXPECT_EQ(test, d[0], 0x81);		/* generic, urgent */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d) & 0xffffff, 2U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 128);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), sw_lid);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 10), sw_lid);

	KUNIT_EXPECT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, true), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 2, SN_ASYNC_TIMEOUT_MS), 2);
	/* The same state again: no change, no trap. */
	KUNIT_EXPECT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, true), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 3, 200), 2);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 2, 0).dropped_no_recv, 0ULL);
	sm_trap_teardown(&f);
}

/*
 * No Trap 128 on an Ethernet (RoCE) fabric, which has no SM and no QP0:
 * a cable pulled between HCA 1 and the switch of a star sends nothing,
 * neither from the switch's port 0 nor into HCA 0's port (the SM LID's
 * port).  Before, the switch sent the trap, which HCA 0's port dropped.
 */
static void sma_trap_none_on_ethernet(struct kunit *test)
{
	struct sn *s = sm_trap_fabric(test, KMAD_LINK_LAYER_ETHERNET, 1);
	struct kmad_sim_stats sw0 = sn_stats(s, 2, 0);
	struct kmad_sim_stats hca0 = sn_stats(s, 0, 1);
	struct kmad_sim_stats sw, hca;

	KUNIT_EXPECT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, false), 0);
	msleep(100);
	kmad_sim_settle(s->fab);
	sw = sn_stats(s, 2, 0);
	hca = sn_stats(s, 0, 1);
	KUNIT_EXPECT_EQ(test, sw.sent, sw0.sent);
	KUNIT_EXPECT_EQ(test, hca.delivered + hca.dropped_no_recv,
			hca0.delivered + hca0.dropped_no_recv);
	KUNIT_EXPECT_EQ(test, sw.dropped_no_route, sw0.dropped_no_route);
}

/*
 * Trap 256, "Bad M_Key" (IBTA 14.2.4.2): HCA 1 of a star, its M_Key set
 * at ProtectBits 2, refuses a PortInfo Get without the key from HCA 0
 * (the SM, MasterSMLID 1) and sends the SM a Notice: generic, security,
 * producer CA, trap 256, issuer HCA 1's LID; LIDADDR the requester's
 * LID, the method, attribute, modifier and M_Key of the refused SMP,
 * no directed-route part.
 */
static void sma_trap_256(struct kunit *test)
{
	static const u8 dr_path[] = { 1, 2 };
	struct sm_trap_fix f;
	struct sm_traps *t;
	struct kmad_mad mad;
	struct sn *s;
	u8 *d;

	sm_trap_setup(test, &f, 1);
	s = f.s;
	t = f.t;
	KUNIT_ASSERT_EQ(test, sn_lid(s, 0, 1), 1);
	KUNIT_ASSERT_EQ(test, sn_lid(s, 1, 1), 2);

	KUNIT_EXPECT_EQ(test, sm_set_mkey(s, 2, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 1, 20), 0);
	KUNIT_EXPECT_EQ(test, sm_query_key(s, KMAD_METHOD_GET,
					   KMAD_SMP_ATTR_PORT_INFO, 1, 2, &mad,
					   NULL, 0x99), -1);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 1, SN_ASYNC_TIMEOUT_MS), 1);
	d = ((struct kmad_smp *)&t->mad)->data;
	KUNIT_EXPECT_EQ(test, t->slid, 2);
	KUNIT_EXPECT_EQ(test, d[0], 0x82);		/* generic, security */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d) & 0xffffff, 1U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 256);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 2);	/* issuer */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 12), 1);	/* LIDADDR */
	KUNIT_EXPECT_EQ(test, d[16], KMAD_METHOD_GET);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 18),
			KMAD_SMP_ATTR_PORT_INFO);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 20), 1U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 24), 0x99ULL);
	KUNIT_EXPECT_EQ(test, d[32], 0);		/* not DR */
	/* The right key: answered, no trap. */
	KUNIT_EXPECT_EQ(test, sm_pi_key(s, &mad, SM_MKEY), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 2, 200), 1);
	/* Directed route to HCA 1 (out of HCA 0's port 1, then the
	 * switch's port 2), no key: DRNotice, hop count 2, the return path
	 * from hop 1, DrSLID 0xFFFF; LIDADDR the permissive SLID.
	 */
	sn_dr(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_PORT_INFO, 0, dr_path, 2);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, KMAD_PERMISSIVE_LID), -1);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(s, t, 2, SN_ASYNC_TIMEOUT_MS), 2);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 12), 0xffff);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 14), 0xffff);
	KUNIT_EXPECT_EQ(test, d[32], 0);		/* reserved */
	KUNIT_EXPECT_EQ(test, d[33], 0x80 | 2);		/* DRNotice, 2 hops */
	KUNIT_EXPECT_EQ(test, d[34], 1);	/* in at the switch's port 1 */
	KUNIT_EXPECT_EQ(test, d[35], 1);	/* in at HCA 1's port 1 */
	sm_trap_teardown(&f);
}

/*
 * Trap 256 from the port that refused: HCA 1's port 2 (both HCAs of the
 * star have two ports) protected at ProtectBits 2, its port 1 not; a
 * PortInfo Get of port 2 through port 1 without the key is refused by
 * port 2, whose LID issues the trap (as qib's check_mkey() of the named
 * port).  Before, the trap came from port 1's LID.
 */
static void sma_trap_256_other_port(struct kunit *test)
{
	struct sm_trap_fix f;
	u16 lid1, lid2;
	struct kmad_mad mad;
	u8 pi[KMAD_SMP_DATA_SIZE];
	u8 *d;

	sm_trap_setup(test, &f, 2);
	lid1 = sn_lid(f.s, 1, 1);
	lid2 = sn_lid(f.s, 1, 2);
	KUNIT_ASSERT_NE(test, lid1, lid2);
	KUNIT_ASSERT_EQ(test, sm_query(f.s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, lid2, &mad,
				       NULL), 0);
	sm_port_info_for_set(pi, &mad);
	put_unaligned_be64(SM_MKEY, pi);
	pi[34] = (pi[34] & 0x3f) | 2 << 6;
	KUNIT_ASSERT_EQ(test, sm_query(f.s, KMAD_METHOD_SET,
				       KMAD_SMP_ATTR_PORT_INFO, 0, lid2, &mad,
				       pi), 0);
	KUNIT_EXPECT_EQ(test, sm_query(f.s, KMAD_METHOD_GET,
				       KMAD_SMP_ATTR_PORT_INFO, 2, lid1, &mad,
				       NULL), -1);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(f.s, f.t, 1, SN_ASYNC_TIMEOUT_MS),
			1);
	d = ((struct kmad_smp *)&f.t->mad)->data;
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 256);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), lid2);	/* issuer */
	KUNIT_EXPECT_EQ(test, f.t->slid, lid2);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(f.s, f.t, 2, 200), 1);
	sm_trap_teardown(&f);
}

/* Post a PortCounters Get from HCA 0 to LID 2's QP1, answer unwaited. */
static void sm_gmp_post(struct sn *s, u16 pkey_index, u32 qkey)
{
	struct kmad_dest dest = { .dlid = 2, .remote_qpn = 1,
				  .remote_qkey = qkey,
				  .pkey_index = pkey_index };
	struct kmad_send_buf *buf;

	buf = kmad_alloc_send_buf(sn_agent(s, 0, 1, 1), &dest, GFP_KERNEL);
	KUNIT_ASSERT_FALSE(s->test, IS_ERR_OR_NULL(buf));
	sn_pma(buf->mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	KUNIT_ASSERT_EQ(s->test, kmad_post_send(buf), 0);
}

/*
 * Traps 257 "Bad P_Key" and 258 "Bad Q_Key" (IBTA 14.2.5.1): HCA 1 (LID
 * 2), whose P_Key table is only 0x8001, drops a PortCounters Get from HCA
 * 0 (LID 1) with the default P_Key 0xFFFF, and tells the SM (LID 1) with
 * Trap 257 from its LID: LID1 1, LID2 2, Key 0xFFFF, SL 0, QP1 1, QP2 1,
 * no GIDs (no GRH).  A Get in the right partition with Q_Key 0x1234 gets
 * Trap 258 with that key.  A Get in the partition with the GSI Q_Key:
 * answered, no trap.
 */
static void sma_trap_bad_keys(struct kunit *test)
{
	struct sm_trap_fix f;
	struct kmad_mad mad;
	u8 *d;

	sm_trap_setup(test, &f, 1);
	KUNIT_ASSERT_EQ(test, sn_lid(f.s, 1, 1), 2);
	/* HCA 0's table: 0xFFFF, 0x8001; HCA 1's: 0x8001 only. */
	sn_smp(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PKEY_TABLE, 0);
	put_unaligned_be16(0xffff, sn_smp_data(&mad));
	put_unaligned_be16(0x8001, sn_smp_data(&mad) + 2);
	KUNIT_ASSERT_EQ(test, sn_rpc(f.s, 0, 1, &mad, 1), 0);
	sn_smp(&mad, KMAD_METHOD_SET, KMAD_SMP_ATTR_PKEY_TABLE, 0);
	put_unaligned_be16(0x8001, sn_smp_data(&mad));
	KUNIT_ASSERT_EQ(test, sn_rpc(f.s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(f.s, f.t, 1, 200), 0);

	sm_gmp_post(f.s, 0, KMAD_QP1_QKEY);
	KUNIT_ASSERT_EQ(test, sm_traps_wait(f.s, f.t, 1, SN_ASYNC_TIMEOUT_MS),
			1);
	d = ((struct kmad_smp *)&f.t->mad)->data;
	KUNIT_EXPECT_EQ(test, f.t->slid, 2);
	KUNIT_EXPECT_EQ(test, d[0], 0x82);		/* generic, security */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d) & 0xffffff, 1U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 257);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 2);	/* issuer */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 12), 1);	/* LID1 */
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 14), 2);	/* LID2 */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 16), 0xffffU);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 20), 1U);	/* SL 0, QP1 */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 24), 1U);	/* QP2 */
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(d + 28, 0, 32), NULL);	/* GIDs */
	KUNIT_EXPECT_EQ(test, sn_stats(f.s, 1, 1).dropped_bad_pkey, 1ULL);

	sm_gmp_post(f.s, 1, 0x1234);
	KUNIT_ASSERT_EQ(test, sm_traps_wait(f.s, f.t, 2, SN_ASYNC_TIMEOUT_MS),
			2);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 258);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 2);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 16), 0x1234U);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + 24), 1U);
	KUNIT_EXPECT_EQ(test, sn_stats(f.s, 1, 1).dropped_bad_qkey, 1ULL);

	f.s->pkey_index = 1;
	sn_pma(&mad, KMAD_METHOD_GET, KMAD_PMA_ATTR_PORT_COUNTERS, 1, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(f.s, 0, 1, &mad, 2), 0);
	KUNIT_EXPECT_EQ(test, sm_traps_wait(f.s, f.t, 3, 200), 2);
	sm_trap_teardown(&f);
}

static struct kunit_case sma_cases[] = {
	KUNIT_CASE(sma_node_info_hca),
	KUNIT_CASE(sma_node_info_switch),
	KUNIT_CASE(sma_node_desc),
	KUNIT_CASE(sma_port_info_hca),
	KUNIT_CASE(sma_port_info_switch),
	KUNIT_CASE(sma_port_info_set_other_port),
	KUNIT_CASE(sma_link_active_follows_enabled),
	KUNIT_CASE(sma_link_active_no_common),
	KUNIT_CASE(sma_attr_modifiers),
	KUNIT_CASE(sma_switch_other_gmp_class),
	KUNIT_CASE(sma_lid_routed_to_permissive),
	KUNIT_CASE(sma_mkey_check),
	KUNIT_CASE(sma_mkey_other_port),
	KUNIT_CASE(sma_port_info_set_lid),
	KUNIT_CASE(sma_lmc_path_bits),
	KUNIT_CASE(sma_lmc_own_lid),
	KUNIT_CASE(sma_dr_request_status_ignored),
	KUNIT_CASE(sma_lmc_rmpp),
	KUNIT_CASE(sma_port_state),
	KUNIT_CASE(sma_port_disable),
	KUNIT_CASE(sma_pkey_table),
	KUNIT_CASE(sma_port_state_and_phys_refused),
	KUNIT_CASE(sma_guid_info),
	KUNIT_CASE(sma_switch_info),
	KUNIT_CASE(sma_lft),
	KUNIT_CASE(sma_mft),
	KUNIT_CASE(sma_mft_positions),
	KUNIT_CASE(sma_vlarb),
	KUNIT_CASE(sma_sl2vl),
	KUNIT_CASE(sma_cap_is_sm),
	KUNIT_CASE(sma_unsupported),
	KUNIT_CASE(sma_firmware_consumes),
	KUNIT_CASE(sma_sm_info),
	KUNIT_CASE(sma_trap_128),
	KUNIT_CASE(sma_trap_none_on_ethernet),
	KUNIT_CASE(sma_trap_256),
	KUNIT_CASE(sma_trap_256_other_port),
	KUNIT_CASE(sma_trap_bad_keys),
	{}
};

static struct kunit_suite sma_suite = {
	.name = "kmad_sma",
	.exit = sn_exit,
	.test_cases = sma_cases,
};

kunit_test_suite(sma_suite);

MODULE_DESCRIPTION("KUnit tests for kmad_sim's subnet management agent");
MODULE_LICENSE("GPL");
