// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_smless: an SM-less kmad_sim fabric (&kmad_sim_config.no_sm, the
 * module's sm=0), brought up by the test as a subnet manager does it:
 * directed-route SMPs from HCA 0 only, PortInfo Sets of LIDs and SM LID,
 * SwitchInfo and LinearForwardingTable Sets, then Armed and Active.
 * Offsets are IBTA Volume 1, 14.2.5 (written out as numbers).
 *
 * star(2): HCAs 0 and 1 on switch node 2, HCA i on switch port i + 1.
 * Directed routes from HCA 0: itself (no hop), the switch [1], HCA 1
 * [1, 2].  The test assigns LIDs 1 (HCA 0), 2 (HCA 1) and 3 (switch).
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "subnet_test.h"

#define SW_NODE		2
#define HCA0_LID	1
#define HCA1_LID	2
#define SW_LID		3

/* PortInfo bytes. */
#define PI_LID		16
#define PI_SM_LID	18
#define PI_CAP		20
#define PI_STATE	32	/* PortState, bits 3-0 */
#define PI_PHYS		33	/* PortPhysicalState, bits 7-4 */

#define PS_DOWN		1
#define PS_INIT		2
#define PS_ARMED	3
#define PS_ACTIVE	4
#define PHYS_SLEEP	1
#define PHYS_POLLING	2
#define PHYS_DISABLED	3
#define PHYS_LINKUP	5

#define ST_INVALID	0x001c

static const u8 path_sw[] = { 1 };
static const u8 path_hca1[] = { 1, 2 };

/* A directed route: the path from HCA 0 port 1 and its length. */
struct dr {
	const u8 *path;
	u8 hops;
};

static const struct dr to_hca0 = { NULL, 0 };
static const struct dr to_sw = { path_sw, 1 };
static const struct dr to_hca1 = { path_hca1, 2 };

static struct sn *sl_setup(struct kunit *test, unsigned int hcas)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_STAR,
		.hcas = hcas,
		.mode = KMAD_SIM_STEP,
		.rq_depth = 32,
		.no_sm = true,
	};
	struct sn *s;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->test = test;
	spin_lock_init(&s->lock);
	snprintf(s->name, sizeof(s->name), "sl%d_", atomic_inc_return(&sn_seq));
	cfg.name = s->name;
	s->fab = kmad_sim_create(&cfg);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(s->fab));
	test->priv = s;
	return s;
}

/* A directed-route Get (@data NULL) or Set from HCA 0; returns status. */
static int sl_dr(struct sn *s, const struct dr *to, u16 attr, u32 mod,
		 const u8 *data, struct kmad_mad *mad)
{
	sn_dr(mad, data ? KMAD_METHOD_SET : KMAD_METHOD_GET, attr, mod,
	      to->path, to->hops);
	if (data)
		memcpy(sn_smp_data(mad), data, KMAD_SMP_DATA_SIZE);
	return sn_rpc(s, 0, 1, mad, KMAD_PERMISSIVE_LID);
}

/*
 * Set PortInfo of (@to, @mod) as it is but for the @mask bits of byte
 * @byte, set to @val, with PortState and PortPhysicalState "no change"
 * unless that is what is set, as an SM writes it back.
 */
static int sl_pi_set(struct sn *s, const struct dr *to, u32 mod, u8 byte,
		     u8 mask, u8 val, struct kmad_mad *mad)
{
	u8 pi[KMAD_SMP_DATA_SIZE];

	KUNIT_ASSERT_EQ(s->test, sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, mod,
				       NULL, mad), 0);
	memcpy(pi, sn_smp_data(mad), sizeof(pi));
	pi[PI_STATE] &= 0xf0;
	pi[PI_PHYS] &= 0x0f;
	pi[byte] = (pi[byte] & ~mask) | val;
	return sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, mod, pi, mad);
}

static u8 sl_state(struct sn *s, const struct dr *to, u32 mod)
{
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(s->test, sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, mod,
				       NULL, &mad), 0);
	return sn_smp_data(&mad)[PI_STATE] & 0xf;
}

static u8 sl_phys(struct sn *s, const struct dr *to, u32 mod)
{
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(s->test, sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, mod,
				       NULL, &mad), 0);
	return sn_smp_data(&mad)[PI_PHYS] >> 4;
}

/* SwitchInfo byte 11 bit 2, PortStateChange. */
static bool sl_psc(struct sn *s)
{
	struct kmad_mad mad;

	KUNIT_EXPECT_EQ(s->test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO, 0,
				       NULL, &mad), 0);
	return sn_smp_data(&mad)[11] & 0x04;
}

/* SwitchInfo written back with byte 11's PortStateChange bit as @psc. */
static int sl_psc_write(struct sn *s, bool psc)
{
	u8 si[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(s->test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO,
				       0, NULL, &mad), 0);
	memcpy(si, sn_smp_data(&mad), sizeof(si));
	si[11] = (si[11] & ~0x04) | (psc ? 0x04 : 0);
	return sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO, 0, si, &mad);
}

/* LID and MasterSMLID of an endport, by directed route. */
static void sl_set_lid(struct sn *s, const struct dr *to, u16 lid)
{
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;

	KUNIT_ASSERT_EQ(s->test, sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, 0,
				       NULL, &mad), 0);
	memcpy(pi, sn_smp_data(&mad), sizeof(pi));
	pi[PI_STATE] &= 0xf0;
	pi[PI_PHYS] &= 0x0f;
	put_unaligned_be16(lid, pi + PI_LID);
	put_unaligned_be16(HCA0_LID, pi + PI_SM_LID);
	KUNIT_ASSERT_EQ(s->test, sl_dr(s, to, KMAD_SMP_ATTR_PORT_INFO, 0, pi,
				       &mad), 0);
	KUNIT_EXPECT_EQ(s->test, get_unaligned_be16(sn_smp_data(&mad) +
						    PI_LID), lid);
}

/* LinearFDBTop, and LFT block 0 sending LID i out of @ports[i]. */
static void sl_program(struct sn *s, const u8 *ports, unsigned int n)
{
	u8 blk[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(s->test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO,
				       0, NULL, &mad), 0);
	memcpy(blk, d, sizeof(blk));
	put_unaligned_be16(n - 1, blk + 6);
	KUNIT_ASSERT_EQ(s->test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO,
				       0, blk, &mad), 0);
	KUNIT_EXPECT_EQ(s->test, get_unaligned_be16(d + 6), n - 1);
	memset(blk, 0xff, sizeof(blk));
	memcpy(blk, ports, n);
	KUNIT_ASSERT_EQ(s->test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_LINEAR_FT, 0,
				       blk, &mad), 0);
	KUNIT_EXPECT_EQ(s->test, memcmp(d, blk, KMAD_SMP_DATA_SIZE), 0);
}

/* star(2)'s LIDs and the switch's LFT, as OpenSM sets them first. */
static void sl_lids_lft(struct sn *s)
{
	static const u8 lft[] = { 0xff, 1, 2, 0 };

	sl_set_lid(s, &to_hca0, HCA0_LID);
	sl_set_lid(s, &to_hca1, HCA1_LID);
	sl_set_lid(s, &to_sw, SW_LID);
	sl_program(s, lft, ARRAY_SIZE(lft));
}

/* Bring star(2) up as OpenSM does: LIDs, LFT, then Armed, then Active. */
static void sl_bring_up(struct sn *s)
{
	struct kmad_mad mad;
	u8 st;

	sl_lids_lft(s);
	for (st = PS_ARMED; st <= PS_ACTIVE; st++) {
		KUNIT_ASSERT_EQ(s->test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
						   st, &mad), 0);
		KUNIT_ASSERT_EQ(s->test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf,
						   st, &mad), 0);
		KUNIT_ASSERT_EQ(s->test, sl_pi_set(s, &to_hca0, 0, PI_STATE,
						   0xf, st, &mad), 0);
		KUNIT_ASSERT_EQ(s->test, sl_pi_set(s, &to_hca1, 0, PI_STATE,
						   0xf, st, &mad), 0);
		KUNIT_EXPECT_EQ(s->test, sn_smp_data(&mad)[PI_STATE] & 0xf, st);
	}
}

/*
 * Boot: every port Init with PortPhysicalState LinkUp, every LID and SM
 * LID 0 (in PortInfo and in kmad), PortStateChange set as after power-up,
 * LinearFDBTop 0 and an LFT of 255s; nothing answers by LID.
 */
static void smless_boot(struct kunit *test)
{
	struct sn *s = sl_setup(test, 4);
	struct kmad_port *port;
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	const struct dr to_hca3 = { (const u8[]){ 1, 4 }, 2 };
	char name[24];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, sn_lid(s, i, 1), 0);
		snprintf(name, sizeof(name), "%s%u", s->name, i);
		port = kmad_port_get(name, 1);
		KUNIT_ASSERT_NOT_NULL(test, port);
		KUNIT_EXPECT_EQ(test, kmad_port_lid(port), 0);
		KUNIT_EXPECT_EQ(test, kmad_port_sm_lid(port), 0);
		kmad_port_put(port);
	}
	KUNIT_EXPECT_EQ(test, sn_lid(s, 4, 0), 0);
	/* HCA 0's own port (hop count 0) and HCA 3 at the far end. */
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca0, KMAD_SMP_ATTR_PORT_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_LID), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_SM_LID), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
	KUNIT_EXPECT_EQ(test, d[PI_PHYS] >> 4, PHYS_LINKUP);
	/* IsClientReregistrationSupported and IsSystemImageGUIDSupported. */
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(d + PI_CAP), 0x02000800);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca3, KMAD_SMP_ATTR_PORT_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_LID), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
	KUNIT_EXPECT_EQ(test, d[PI_PHYS] >> 4, PHYS_LINKUP);
	for (i = 1; i <= 4; i++) {
		KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, i), PS_INIT);
		KUNIT_EXPECT_EQ(test, sl_phys(s, &to_sw, i), PHYS_LINKUP);
	}
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_PORT_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_LID), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 6), 0);	/* LinTop */
	KUNIT_EXPECT_EQ(test, d[11] & 0x04, 0x04);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_LINEAR_FT, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0xff, KMAD_SMP_DATA_SIZE));
	/* No LID routes anywhere: a LID-routed Get is never answered. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, 2), -1);
}

/*
 * PortState by SubnSet: Armed only from Init, Active only from Armed;
 * Init and reserved values are invalid (status 0x1C, nothing changes);
 * none of it sets PortStateChange.
 */
static void smless_port_states(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	KUNIT_EXPECT_FALSE(test, sl_psc(s));
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
					PS_ACTIVE, &mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf, PS_INIT,
					&mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf, 5,
					&mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_hca1, 0, PI_STATE, 0xf,
					PS_ACTIVE, &mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_ARMED);
	/* Armed again is no change; then Active. */
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
					PS_ACTIVE, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_ACTIVE);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf,
					PS_ARMED, &mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_ACTIVE);
	/* A SubnSet changed states; PortStateChange stays clear. */
	KUNIT_EXPECT_FALSE(test, sl_psc(s));
	/* Down on a port whose link is down is no change and no error. */
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, false), 0);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf, PS_DOWN,
					&mad), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_DOWN);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf,
					PS_ARMED, &mad), ST_INVALID);
}

/*
 * The whole bring-up by directed route; LID-routed MADs then follow the
 * programmed LFT, and a changed LFT entry changes where they go.
 */
static void smless_bring_up_lft(struct kunit *test)
{
	static const u8 wrong[] = { 0xff, 1, 1, 0 };
	struct sn *s = sl_setup(test, 2);
	struct kmad_port *port;
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	char name[24];
	u64 guid;

	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	sl_bring_up(s);
	KUNIT_EXPECT_FALSE(test, sl_psc(s));
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 1), HCA1_LID);
	KUNIT_EXPECT_EQ(test, sn_lid(s, SW_NODE, 0), SW_LID);
	snprintf(name, sizeof(name), "%s1", s->name);
	port = kmad_port_get(name, 1);
	KUNIT_ASSERT_NOT_NULL(test, port);
	KUNIT_EXPECT_EQ(test, kmad_port_lid(port), HCA1_LID);
	KUNIT_EXPECT_EQ(test, kmad_port_sm_lid(port), HCA0_LID);
	kmad_port_put(port);

	/* By LID through the LFT: HCA 1's NodeInfo, the switch's. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), 0);
	guid = get_unaligned_be64(d + 12);
	KUNIT_EXPECT_EQ(test, d[2], 1);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, SW_LID), 0);
	KUNIT_EXPECT_EQ(test, d[2], 2);
	/* A GMP (QP1) needs Active ports end to end: it arrives. */
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, HCA1_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 1ULL);

	/* LID 2 now points back at port 1: HCA 0 drops it (not its LID). */
	sl_program(s, wrong, ARRAY_SIZE(wrong));
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), -1);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).dropped_no_route, 1ULL);
	/* LinearFDBTop 1: LID 2 is above it, so the switch discards. */
	sl_program(s, (const u8[]){ 0xff, 1 }, 2);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), -1);
	/* Directed route still reaches HCA 1. */
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_NODE_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 12), guid);
}

/*
 * An Armed port goes Active when it receives a packet other than an SMP
 * (IBTA's link state machine), without setting PortStateChange; SMPs
 * leave it Armed.  Path HCA 0 -> switch port 1, switch port 2 -> HCA 1,
 * with the two sending ports Active and the two receiving ones Armed.
 */
static void smless_armed_active_on_data(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	struct kmad_mad mad;
	u64 delivered;

	sl_lids_lft(s);
	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 1, PI_STATE, 0xf, PS_ARMED,
					&mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf, PS_ARMED,
					&mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_hca0, 0, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_hca1, 0, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf,
					PS_ACTIVE, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_hca0, 0, PI_STATE, 0xf,
					PS_ACTIVE, &mad), 0);
	/* SMPs through the Armed ports, by LID and by directed route. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_ASSERT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), 0);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 1), PS_ARMED);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca1, 0), PS_ARMED);

	/* A GMP from HCA 0 to HCA 1 crosses both Armed ports. */
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, HCA1_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 1ULL);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 1), PS_ACTIVE);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca1, 0), PS_ACTIVE);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 2), PS_ACTIVE);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca0, 0), PS_ACTIVE);
	KUNIT_EXPECT_FALSE(test, sl_psc(s));
	/* Now both ways: HCA 1 answers by LID through switch port 1. */
	delivered = sn_stats(s, 0, 1).delivered;
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 1, 1, &mad, HCA0_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 0, 1).delivered, delivered + 1);
}

/*
 * Every PortInfo field an SM sets is stored and read back: M_Key,
 * GidPrefix, M_KeyLeasePeriod, M_KeyProtectBits, LMC, MasterSMSL,
 * SubnetTimeOut, NeighborMTU, LinkWidthEnabled, LinkSpeedEnabled,
 * LinkDownDefaultState, VLHighLimit, VLStallCount/HOQLife, the error
 * thresholds and the enforcement bits; ClientReregister is an action
 * (reads 0); RespTimeValue is read-only.
 */
static void smless_port_info_fields(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	u8 pi[KMAD_SMP_DATA_SIZE];
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PORT_INFO, 0,
				    NULL, &mad), 0);
	memcpy(pi, d, sizeof(pi));
	pi[PI_STATE] &= 0xf0;
	pi[PI_PHYS] = 0x01;			/* no change; LinkDownDef Sleep */
	put_unaligned_be64(0x1122334455667788ULL, pi + 0);
	put_unaligned_be64(0xfe80000000001234ULL, pi + 8);
	put_unaligned_be16(0x40, pi + PI_LID);
	put_unaligned_be16(0x41, pi + PI_SM_LID);
	put_unaligned_be16(600, pi + 26);	/* M_KeyLeasePeriod */
	pi[29] = 0x01;				/* LinkWidthEnabled 1x */
	pi[34] = 0x40 | 2;			/* M_KeyProtect 1, LMC 2 */
	pi[35] = (pi[35] & 0xf0) | 0x1;		/* LinkSpeedEnabled 2.5 */
	pi[36] = 3 << 4 | 5;			/* NeighborMTU 1024, SMSL 5 */
	pi[38] = 7;				/* VLHighLimit */
	pi[42] = 0x5 << 5 | 0x12;		/* VLStallCount, HOQLife */
	pi[43] = 1 << 4 | 0x0;			/* OpVLs 1, enforcement (HCA) */
	pi[51] = 0x80 | 18;			/* ClientReregister, timeout */
	pi[52] = 3;				/* RespTimeValue (RO) */
	pi[53] = 0x8a;				/* LocalPhyErrors 8, Overrun 10 */
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PORT_INFO, 0,
				    pi, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 0), 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(d + 8), 0xfe80000000001234ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_LID), 0x40);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + PI_SM_LID), 0x41);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 26), 600);
	KUNIT_EXPECT_EQ(test, d[29], 0x01);
	KUNIT_EXPECT_EQ(test, d[PI_PHYS], PHYS_LINKUP << 4 | 1);
	KUNIT_EXPECT_EQ(test, d[34], 0x42);
	KUNIT_EXPECT_EQ(test, d[35] & 0xf, 0x1);
	KUNIT_EXPECT_EQ(test, d[36], 0x35);
	KUNIT_EXPECT_EQ(test, d[38], 7);
	KUNIT_EXPECT_EQ(test, d[42], 0xb2);
	KUNIT_EXPECT_EQ(test, d[43], 0x10);
	KUNIT_EXPECT_EQ(test, d[51], 0x80 | 18);	/* the Set's rereg too */
	KUNIT_EXPECT_EQ(test, d[52], 8);
	KUNIT_EXPECT_EQ(test, d[53], 0x8a);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 1), 0x40);

	/* A switch port: enforcement bits and its own fields. */
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, 43, 0x0f, 0x0f, &mad),
			0);
	KUNIT_EXPECT_EQ(test, d[43], 0x1f);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, 36, 0xf0, 2 << 4, &mad),
			0);
	KUNIT_EXPECT_EQ(test, d[36] >> 4, 2);
	/* Bad values: NeighborMTU above MTUCap, OpVLs above VLCap, width. */
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, 36, 0xf0, 5 << 4, &mad),
			ST_INVALID);
	KUNIT_EXPECT_EQ(test, d[36] >> 4, 2);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, 43, 0xf0, 2 << 4, &mad),
			ST_INVALID);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, 29, 0xff, 0x08, &mad),
			ST_INVALID);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_PHYS, 0xf0, 4 << 4,
					&mad), ST_INVALID);
	KUNIT_EXPECT_EQ(test, d[43], 0x1f);
}

/*
 * PortPhysicalState of switch port 2 (HCA 1's link): Sleep and Disabled
 * take the link down, Polling brings it back Init; Polling on a link that
 * is up retrains it (Down, then Init: PortStateChange set).
 */
static void smless_phys_state(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);
	u8 phys;

	for (phys = PHYS_SLEEP; phys <= PHYS_DISABLED; phys += 2) {
		KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_PHYS, 0xf0,
						phys << 4, &mad), 0);
		KUNIT_EXPECT_EQ(test, d[PI_PHYS] >> 4, phys);
		KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_DOWN);
		/* HCA 1 cannot be reached. */
		KUNIT_EXPECT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_NODE_INFO,
					    0, NULL, &mad), -1);
		KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_PHYS, 0xf0,
						PHYS_POLLING << 4, &mad), 0);
		KUNIT_EXPECT_EQ(test, d[PI_PHYS] >> 4, PHYS_LINKUP);
		KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
		KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca1, 0), PS_INIT);
	}
	/* Retrain an Armed link: back to Init at both ends. */
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_hca1, 0, PI_STATE, 0xf,
					PS_ARMED, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	KUNIT_ASSERT_FALSE(test, sl_psc(s));
	KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_PHYS, 0xf0,
					PHYS_POLLING << 4, &mad), 0);
	KUNIT_EXPECT_EQ(test, d[PI_STATE] & 0xf, PS_INIT);
	KUNIT_EXPECT_EQ(test, d[PI_PHYS] >> 4, PHYS_LINKUP);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca1, 0), PS_INIT);
	KUNIT_EXPECT_TRUE(test, sl_psc(s));
}

/* P_KeyTable by directed route: an HCA's blocks, a switch port's. */
static void smless_pkey_table(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	u8 keys[KMAD_SMP_DATA_SIZE] = { 0xff, 0xff, 0x80, 0x05 };
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PKEY_TABLE, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0xffff);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PKEY_TABLE, 0,
				    keys, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PKEY_TABLE, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, memcmp(d, keys, KMAD_SMP_DATA_SIZE), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_PKEY_TABLE,
				    2 << 16 | 1, keys, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_PKEY_TABLE,
				    2 << 16 | 1, NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2), 0x8005);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_PKEY_TABLE,
				    2 << 16, NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d), 0xffff);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 2), 0);
	KUNIT_EXPECT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_PKEY_TABLE,
				    3 << 16, NULL, &mad), ST_INVALID);
}

/*
 * What an SM programs by directed route before any LID exists: the
 * switch's MulticastFDBCap, an MFT block (the IPoIB broadcast MLID 0xC000
 * to ports 1 and 2) and VLArbitrationTables of an HCA port and a switch
 * port, each read back; an HCA has no MFT.
 */
static void smless_mft_vlarb(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	u8 mft[KMAD_SMP_DATA_SIZE] = { 0x00, 0x06 };
	u8 arb[KMAD_SMP_DATA_SIZE] = { 0x00, 0x20, 0x00, 0x40 };
	struct kmad_mad mad;
	u8 *d = sn_smp_data(&mad);

	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_SWITCH_INFO, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be16(d + 4), 1024);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_MCAST_FT, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_MCAST_FT, 0,
				    mft, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_MCAST_FT, 0,
				    NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, memcmp(d, mft, KMAD_SMP_DATA_SIZE), 0);
	KUNIT_EXPECT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_MCAST_FT, 0,
				    NULL, &mad), 0x000c);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_VL_ARB_TABLE,
				    1 << 16, arb, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_VL_ARB_TABLE,
				    1 << 16, NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, memcmp(d, arb, KMAD_SMP_DATA_SIZE), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_VL_ARB_TABLE,
				    3 << 16 | 2, arb, &mad), 0);
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_VL_ARB_TABLE,
				    3 << 16 | 2, NULL, &mad), 0);
	KUNIT_EXPECT_EQ(test, memcmp(d, arb, KMAD_SMP_DATA_SIZE), 0);
	/* Its port 1's high table is its own, still empty. */
	KUNIT_ASSERT_EQ(test, sl_dr(s, &to_sw, KMAD_SMP_ATTR_VL_ARB_TABLE,
				    3 << 16 | 1, NULL, &mad), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d, 0, KMAD_SMP_DATA_SIZE));
}

/*
 * Fault injection: a link taken down and up after bring-up.  Both ends go
 * Down (the switch's PortStateChange set), LIDs stay; back up they are
 * Init, PortStateChange set again, and the SM brings them to Active.
 * Writing 0 leaves PortStateChange, writing 1 clears it.
 */
static void smless_link_fault(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	struct kmad_mad mad;
	u8 st;

	sl_bring_up(s);
	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	KUNIT_ASSERT_FALSE(test, sl_psc(s));
	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, 1, 1, false), 0);
	KUNIT_EXPECT_TRUE(test, sl_psc(s));
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 2), PS_DOWN);
	KUNIT_EXPECT_EQ(test, sl_phys(s, &to_sw, 2), PHYS_POLLING);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 1), PS_ACTIVE);
	KUNIT_EXPECT_EQ(test, sn_lid(s, 1, 1), HCA1_LID);
	KUNIT_ASSERT_EQ(test, sl_psc_write(s, false), 0);
	KUNIT_EXPECT_TRUE(test, sl_psc(s));
	KUNIT_ASSERT_EQ(test, sl_psc_write(s, true), 0);
	KUNIT_EXPECT_FALSE(test, sl_psc(s));
	/* By LID it is gone too. */
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), -1);

	KUNIT_ASSERT_EQ(test, kmad_sim_set_link(s->fab, SW_NODE, 2, true), 0);
	KUNIT_EXPECT_TRUE(test, sl_psc(s));
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 2), PS_INIT);
	KUNIT_EXPECT_EQ(test, sl_phys(s, &to_sw, 2), PHYS_LINKUP);
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_hca1, 0), PS_INIT);
	/* Init passes SMPs only: a GMP to HCA 1 is lost on the link. */
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, HCA1_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 0ULL);
	for (st = PS_ARMED; st <= PS_ACTIVE; st++) {
		KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_sw, 2, PI_STATE, 0xf,
						st, &mad), 0);
		KUNIT_ASSERT_EQ(test, sl_pi_set(s, &to_hca1, 0, PI_STATE, 0xf,
						st, &mad), 0);
	}
	KUNIT_EXPECT_EQ(test, sl_state(s, &to_sw, 2), PS_ACTIVE);
	sn_smp(&mad, KMAD_METHOD_GET, KMAD_SMP_ATTR_NODE_INFO, 0);
	KUNIT_EXPECT_EQ(test, sn_rpc(s, 0, 1, &mad, HCA1_LID), 0);
	sn_sa(&mad, KMAD_METHOD_GET_RESP);
	sn_post(s, 0, 1, &mad, HCA1_LID);
	KUNIT_EXPECT_EQ(test, sn_stats(s, 1, 1).delivered, 1ULL);
}

/* A kmad client counting port_changed calls for HCA 1's port. */
struct sl_client {
	struct kmad_client client;
	char dev[24];
	atomic_t changed;
};

static int sl_client_add(struct kmad_client *client, struct kmad_port *port,
			 void **data)
{
	struct sl_client *c = container_of(client, struct sl_client, client);

	return strcmp(kmad_port_dev_name(port), c->dev) ? -ENODEV : 0;
}

static void sl_client_remove(struct kmad_client *client,
			     struct kmad_port *port, void *data)
{
}

static void sl_client_changed(struct kmad_client *client,
			      struct kmad_port *port, void *data)
{
	struct sl_client *c = container_of(client, struct sl_client, client);

	atomic_inc(&c->changed);
}

/* The case's client, unregistered by sl_exit() if an assertion ended it. */
static struct sl_client *sl_current;

static void sl_exit(struct kunit *test)
{
	if (sl_current)
		kmad_unregister_client(&sl_current->client);
	sl_current = NULL;
	sn_exit(test);
}

static int sl_changes(struct sn *s, struct sl_client *c)
{
	kmad_device_flush(kmad_sim_device(s->fab, 1));
	return atomic_read(&c->changed);
}

/* kmad's count of the SM's ClientReregister requests to HCA 1's port. */
static u32 sl_reregisters(struct sl_client *c)
{
	struct kmad_port *port = kmad_port_get(c->dev, 1);
	u32 n;

	if (IS_ERR_OR_NULL(port))
		return U32_MAX;
	n = kmad_port_reregisters(port);
	kmad_port_put(port);
	return n;
}

/*
 * What an HCA driver reports as a port event reaches kmad's clients:
 * ClientReregister (with nothing else changed; counted by
 * kmad_port_reregisters()), a new GidPrefix, a P_KeyTable Set, a GUIDInfo
 * Set (new GIDs: a client caching them must hear of it); a Set that
 * changes none of it does not.
 */
static void smless_port_events(struct kunit *test)
{
	struct sn *s = sl_setup(test, 2);
	u8 keys[KMAD_SMP_DATA_SIZE] = { 0xff, 0xff, 0x80, 0x07 };
	u8 guids[KMAD_SMP_DATA_SIZE] = {};
	struct sl_client *c;
	struct kmad_mad mad;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	snprintf(c->dev, sizeof(c->dev), "%s1", s->name);
	c->client.name = "kmad_smless_test";
	c->client.add = sl_client_add;
	c->client.remove = sl_client_remove;
	c->client.port_changed = sl_client_changed;
	KUNIT_ASSERT_EQ(test, kmad_register_client(&c->client), 0);
	sl_current = c;

	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_hca1, 0, 51, 0, 0, &mad), 0);
	KUNIT_EXPECT_EQ(test, sl_changes(s, c), 0);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_hca1, 0, 51, 0x80, 0x80, &mad),
			0);
	/* Read back set in the SetResp (o14-12.2.1, as hfi1), 0 later. */
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[51] & 0x80, 0x80);
	KUNIT_EXPECT_EQ(test, sl_changes(s, c), 1);
	KUNIT_EXPECT_EQ(test, sl_reregisters(c), 1U);
	KUNIT_EXPECT_EQ(test, sl_pi_set(s, &to_hca1, 0, 15, 0xff, 0x99, &mad),
			0);
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[15], 0x99);
	KUNIT_EXPECT_EQ(test, sn_smp_data(&mad)[51] & 0x80, 0);
	KUNIT_EXPECT_EQ(test, sl_changes(s, c), 2);
	KUNIT_EXPECT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_PKEY_TABLE, 0,
				    keys, &mad), 0);
	KUNIT_EXPECT_EQ(test, sl_changes(s, c), 3);
	/* GUIDInfo block 0: entry 0, the port GUID, stays; entry 1 is new. */
	put_unaligned_be64(0x0002c90300abcdefULL, guids + 8);
	KUNIT_EXPECT_EQ(test, sl_dr(s, &to_hca1, KMAD_SMP_ATTR_GUID_INFO, 0,
				    guids, &mad), 0);
	KUNIT_EXPECT_NE(test, get_unaligned_be64(sn_smp_data(&mad)), 0ULL);
	KUNIT_EXPECT_EQ(test, get_unaligned_be64(sn_smp_data(&mad) + 8),
			0x0002c90300abcdefULL);
	KUNIT_EXPECT_EQ(test, sl_changes(s, c), 4);
	/* Only the ClientReregister was one. */
	KUNIT_EXPECT_EQ(test, sl_reregisters(c), 1U);
}

static struct kunit_case smless_cases[] = {
	KUNIT_CASE(smless_boot),
	KUNIT_CASE(smless_port_states),
	KUNIT_CASE(smless_bring_up_lft),
	KUNIT_CASE(smless_armed_active_on_data),
	KUNIT_CASE(smless_port_info_fields),
	KUNIT_CASE(smless_phys_state),
	KUNIT_CASE(smless_pkey_table),
	KUNIT_CASE(smless_mft_vlarb),
	KUNIT_CASE(smless_link_fault),
	KUNIT_CASE(smless_port_events),
	{}
};

static struct kunit_suite smless_suite = {
	.name = "kmad_smless",
	.exit = sl_exit,
	.test_cases = smless_cases,
};

kunit_test_suite(smless_suite);

MODULE_DESCRIPTION("kmad KUnit: the SM-less kmad_sim fabric");
MODULE_LICENSE("GPL");
