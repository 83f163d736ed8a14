// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: the subnet management agent of every simulated node, as HCA
 * and switch firmware has it.  route.c hands it the SubnGet and SubnSet
 * requests (LID-routed or directed-route, after the SMI checks) addressed
 * to a node; it fills in the attribute and returns the MAD status.
 *
 * Attributes (IBTA 14.2.5): NodeDescription and NodeInfo (Get),
 * SwitchInfo, LinearForwardingTable and MulticastForwardingTable
 * (switches; Get and Set), GUIDInfo, PortInfo, P_KeyTable,
 * SLtoVLMappingTable and VLArbitrationTable (Get and Set).  Multicast
 * forwarding tables are stored, not used: every simulated packet is
 * unicast.  Anything else, and a Set of a
 * read-only attribute, is answered with "unsupported method/attribute"; an
 * attribute modifier naming no port or block, or a Set with a value the
 * port cannot take, with "invalid attribute value", changing nothing.
 * SMInfo is the SM's: an HCA's comes here only from the driver's own
 * query (route.c passes the wire's to kmad on QP0), a switch's, with no
 * SM; both are answered "unsupported".
 * The answer to a Set is the attribute as it is afterwards.  Each request
 * first passes the M_Key checks (sma_mkeys_ok()), or is dropped
 * unanswered; the driver's own query (kmad_sim_query_smp()) skips them.
 *
 * Locks: F, held across each request, guards every field read or written
 * here.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "fabric.h"
#include "fw.h"
#include "hw.h"

/* PortInfo.CapabilityMask.IsSM, the one bit kmad_port_modify_cap() sets. */
#define SIM_PORT_CAP_IS_SM	0x00000002
/*
 * IsClientReregistrationSupported: an SM-less fabric's endports take the
 * ClientReregister bit (OpenSM sets it only where this is advertised).
 */
#define SIM_PORT_CAP_CLIENT_REREG	0x02000000
/* PortInfo byte 51: ClientReregister (bit 7), SubnetTimeOut (4-0). */
#define SIM_PI_CLIENT_REREG	0x80
/* PortInfo's modifier bit 31: SMSupportsExtendedSpeeds. */
#define SIM_PI_MOD_SM_EXT_SPEEDS	0x80000000U

/* SLtoVLMappingTable: 16 SLs of 4 bits. */
#define SIM_SL2VL_BYTES		8

/*
 * An SMA request: the node, the port it arrived on, the SMP data, the
 * attribute modifier, whether it is a Set, and whether a PortInfo Get
 * reads M_Key 0 (a wrong key at M_KeyProtectBits 1).
 */
struct sma_req {
	struct sim_node *node;
	struct sim_port *in;
	u8 *data;
	u32 mod;
	bool set;
	bool hide_mkey;
};

static bool sim_endport(const struct sim_port *port)
{
	return !sim_is_switch(port->node) || !port->num;
}

/*
 * Whether @port takes ClientReregister (CapabilityMask
 * IsClientReregistrationSupported): an endport of an SM-less fabric.
 */
static bool sma_client_rereg_supported(const struct sim_port *port)
{
	return sim_endport(port) && port->node->fab->cfg.no_sm;
}

/*
 * Tell kmad that an HCA port's addresses, P_Keys or GIDs may have changed,
 * or that its clients must reregister, as a driver reports a port event.
 */
static void sma_port_changed(struct sim_port *port)
{
	struct kmad_port_attr now = {};

	if (sim_is_switch(port->node) || port->node->state != SIM_DEV_LIVE)
		return;
	kmad_sim_pinfo_attr(&port->pi, &now);
	kmad_device_port_changed(port->node->kdev, port->num, &now);
}

/*
 * NodeDescription, NodeInfo and SwitchInfo take modifier 0 only (IBTA
 * 14.2.5): another is an invalid value, answered 0x001C with zeros (qib
 * sets the same status for the first two, and fills the data all the
 * same).
 */
static u16 sma_node_desc(struct sma_req *r)
{
	if (r->set)
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	if (r->mod)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	strscpy_pad(r->data, r->node->desc, KMAD_SMP_DATA_SIZE);
	return KMAD_MAD_STATUS_SUCCESS;
}

static u16 sma_node_info(struct sma_req *r)
{
	struct sim_node *node = r->node;
	u8 *d = r->data;
	u64 port_guid;

	if (r->set)
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	if (r->mod)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	port_guid = sim_is_switch(node) ? node->ports[0].guids[0] :
					  r->in->guids[0];
	d[SIM_NI_BASE_VERSION] = KMAD_MGMT_BASE_VERSION;
	d[SIM_NI_CLASS_VERSION] = KMAD_SMP_CLASS_VERSION;
	d[SIM_NI_NODE_TYPE] = node->type;
	d[SIM_NI_NUM_PORTS] = node->num_ports;
	put_unaligned_be64(node->guid, d + SIM_NI_SYS_GUID);
	put_unaligned_be64(node->guid, d + SIM_NI_NODE_GUID);
	put_unaligned_be64(port_guid, d + SIM_NI_PORT_GUID);
	put_unaligned_be16(SIM_PKEYS, d + SIM_NI_PARTITION_CAP);
	put_unaligned_be16(sim_is_switch(node) ? SIM_DEVICE_ID_SWITCH :
						 SIM_DEVICE_ID_HCA,
			   d + SIM_NI_DEVICE_ID);
	put_unaligned_be32(SIM_REVISION, d + SIM_NI_REVISION);
	d[SIM_NI_LOCAL_PORT] = r->in->num;
	d[SIM_NI_VENDOR_ID] = SIM_VENDOR_ID >> 16;
	d[SIM_NI_VENDOR_ID + 1] = SIM_VENDOR_ID >> 8;
	d[SIM_NI_VENDOR_ID + 2] = SIM_VENDOR_ID & 0xff;
	return KMAD_MAD_STATUS_SUCCESS;
}

static u16 sma_switch_info(struct sma_req *r)
{
	u16 status = KMAD_MAD_STATUS_SUCCESS;
	struct sim_node *sw = r->node;
	u8 *d = r->data;
	u16 top;

	if (!sim_is_switch(sw))
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	if (r->mod) {
		memset(d, 0, KMAD_SMP_DATA_SIZE);
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	}
	if (r->set) {
		top = get_unaligned_be16(d + SIM_SI_LFDB_TOP);
		if (top >= SIM_LFT_CAP ||
		    d[SIM_SI_DEFAULT_PORT] > sw->num_ports) {
			status = KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
		} else {
			sw->lft_top = top;
			sw->default_port = d[SIM_SI_DEFAULT_PORT];
			/* PortStateChange is cleared by writing 1 to it. */
			sw->life_state =
				(d[SIM_SI_LIFE_STATE] & SIM_SI_LIFE_MASK) |
				(sw->life_state & SIM_SI_PORT_STATE_CHANGE &
				 ~d[SIM_SI_LIFE_STATE]);
		}
		memset(d, 0, KMAD_SMP_DATA_SIZE);
	}
	put_unaligned_be16(SIM_LFT_CAP, d + SIM_SI_LFDB_CAP);
	put_unaligned_be16(SIM_MFT_CAP, d + SIM_SI_MFDB_CAP);
	put_unaligned_be16(sw->lft_top, d + SIM_SI_LFDB_TOP);
	d[SIM_SI_DEFAULT_PORT] = sw->default_port;
	d[SIM_SI_DEF_MCAST_PRI] = SIM_LFT_NONE;
	d[SIM_SI_DEF_MCAST_NOT_PRI] = SIM_LFT_NONE;
	d[SIM_SI_LIFE_STATE] = sw->life_state;
	put_unaligned_be16(SIM_PKEYS, d + SIM_SI_PART_ENF_CAP);
	return status;
}

static u16 sma_lft(struct sma_req *r)
{
	struct sim_node *sw = r->node;
	u8 *entries;

	if (!sim_is_switch(sw))
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	if (r->mod >= SIM_LFT_CAP / SIM_LFT_BLOCK)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	entries = sw->lft + r->mod * SIM_LFT_BLOCK;
	if (r->set)
		memcpy(entries, r->data, SIM_LFT_BLOCK);
	memcpy(r->data, entries, SIM_LFT_BLOCK);
	return KMAD_MAD_STATUS_SUCCESS;
}

/*
 * MulticastForwardingTable (IBTA 14.2.5.12): modifier bits 8-0 name a
 * block of 32 MLIDs (0xC000 + 32 * block), bits 31-28 the position of the
 * 16-bit port masks in it (ports 16 * position to 16 * position + 15, bit
 * 0 the lowest); bits 27-9 are reserved and ignored.  A block beyond
 * MulticastFDBCap or a position beyond the switch's ports is an invalid
 * value.  A Set's bits for ports the switch lacks are dropped.
 */
static u16 sma_mft(struct sma_req *r)
{
	struct sim_node *sw = r->node;
	u32 block = r->mod & 0x1ff;
	u32 pos = r->mod >> 28;
	unsigned int npos, last, i;
	u16 valid, *masks;

	if (!sim_is_switch(sw))
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	npos = sw->mft_positions;
	if (block >= SIM_MFT_CAP / SIM_MFT_BLOCK || pos >= npos)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	/* The highest port of this position the switch has, from its base. */
	last = sw->num_ports - pos * SIM_MFT_PORTS_PER_POS;
	valid = last >= SIM_MFT_PORTS_PER_POS - 1 ? 0xffff : GENMASK(last, 0);
	masks = sw->mft + block * SIM_MFT_BLOCK * npos + pos;
	for (i = 0; i < SIM_MFT_BLOCK; i++) {
		if (r->set)
			masks[i * npos] = get_unaligned_be16(r->data + 2 * i) &
					  valid;
		put_unaligned_be16(masks[i * npos], r->data + 2 * i);
	}
	return KMAD_MAD_STATUS_SUCCESS;
}

/* GUIDInfo: one block of 8 GUIDs; entry 0, the port GUID, is read-only. */
static u16 sma_guid_info(struct sma_req *r)
{
	struct sim_port *port = sim_is_switch(r->node) ? &r->node->ports[0] :
							 r->in;
	unsigned int i;

	if (r->mod >= SIM_GUIDS / 8)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	for (i = 1; r->set && i < SIM_GUIDS; i++)
		port->guids[i] = get_unaligned_be64(r->data + 8 * i);
	if (r->set)
		sma_port_changed(port);
	for (i = 0; i < SIM_GUIDS; i++)
		put_unaligned_be64(port->guids[i], r->data + 8 * i);
	return KMAD_MAD_STATUS_SUCCESS;
}

/*
 * SLtoVLMappingTable (IBTA 14.2.5.8): 16 four-bit VLs, SL 0 first.  Every
 * port has VL0 alone (VLCap 1), so every SL maps to VL0: a Get answers
 * zeros, a Set that keeps every SL on VL0 is taken and any other is an
 * invalid value (nothing to store).  A switch's modifier names the input
 * port in bits 15-8 and the output port in bits 7-0; an HCA's is ignored.
 */
static u16 sma_sl2vl(struct sma_req *r)
{
	u16 status = KMAD_MAD_STATUS_SUCCESS;
	unsigned int i;

	if (sim_is_switch(r->node) &&
	    (((r->mod >> 8) & 0xff) > r->node->num_ports ||
	     (r->mod & 0xff) > r->node->num_ports || r->mod >> 16))
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	for (i = 0; r->set && i < SIM_SL2VL_BYTES; i++)
		if (r->data[i])
			status = KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	memset(r->data, 0, KMAD_SMP_DATA_SIZE);
	return status;
}

/*
 * VLArbitrationTable (IBTA 14.2.5.9): modifier bits 31-16 name the block
 * (1: low priority entries 0-31, 2: low 32-63, 3: high 0-31, 4: high
 * 32-63), a switch's bits 15-0 the port; an HCA's port bits are ignored
 * (the port the SMP arrived on).  Both tables have %SIM_VLARB_CAP entries
 * (PortInfo's VLArbitrationLowCap and HighCap): blocks 2 and 4 do not
 * exist, and in blocks 1 and 3 entries past the cap read 0 and a Set of
 * them is ignored.  A switch's port 0 (base port 0) has no tables.  A Set
 * stores each entry's VL (the low 4 bits of its first byte) and Weight as
 * given: with VL0 alone (VLCap 1) nothing is arbitrated by them.
 */
static u16 sma_vlarb(struct sma_req *r)
{
	struct sim_port *port = r->in;
	u32 block = r->mod >> 16;
	u8 (*entries)[2];
	unsigned int i;

	if (sim_is_switch(r->node)) {
		if ((r->mod & 0xffff) > r->node->num_ports)
			return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
		port = &r->node->ports[r->mod & 0xffff];
	}
	if (!port->num ||
	    (block != SIM_VLARB_LOW_0_31 && block != SIM_VLARB_HIGH_0_31))
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	entries = port->vlarb[block == SIM_VLARB_HIGH_0_31];
	for (i = 0; r->set && i < SIM_VLARB_CAP; i++) {
		entries[i][0] = r->data[2 * i] & 0xf;
		entries[i][1] = r->data[2 * i + 1];
	}
	memset(r->data, 0, KMAD_SMP_DATA_SIZE);
	memcpy(r->data, entries, sizeof(port->vlarb[0]));
	return KMAD_MAD_STATUS_SUCCESS;
}

/* P_KeyTable: blocks of 32; a switch's modifier has the port in 31-16. */
static u16 sma_pkey_table(struct sma_req *r)
{
	struct sim_port *port = r->in;
	u32 block = r->mod & 0xffff;
	u16 *pkeys;
	unsigned int i;

	if (sim_is_switch(r->node)) {
		if ((r->mod >> 16) > r->node->num_ports)
			return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
		port = &r->node->ports[r->mod >> 16];
	}
	if (block >= SIM_PKEYS / SIM_PKEY_BLOCK)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	pkeys = port->pkeys + block * SIM_PKEY_BLOCK;
	for (i = 0; r->set && i < SIM_PKEY_BLOCK; i++)
		pkeys[i] = get_unaligned_be16(r->data + 2 * i);
	if (r->set)
		sma_port_changed(port);
	for (i = 0; i < SIM_PKEY_BLOCK; i++)
		put_unaligned_be16(pkeys[i], r->data + 2 * i);
	return KMAD_MAD_STATUS_SUCCESS;
}

static u8 sma_phys_state(const struct sim_port *port)
{
	if (!port->num)
		return SIM_PHYS_LINKUP;
	if (port->disabled)
		return SIM_PHYS_DISABLED;
	if (port->asleep)
		return SIM_PHYS_SLEEP;
	return kmad_sim_phys_up(port) ? SIM_PHYS_LINKUP : SIM_PHYS_POLLING;
}

/*
 * LinkWidthActive or LinkSpeedActive: the widest or fastest value both
 * ends of the link enable (@peer: the other end's; @supported for a
 * switch's port 0 or a port without a cable, which has only its own), as
 * the link trains (ibsim sets it from LinkSpeed/WidthEnabled too).  Ends
 * that enable no value in common would not train on hardware; the sim
 * keeps the link up, and each end reports the narrowest or slowest value
 * it enables itself, so that Active stays within its Enabled.
 */
static u8 sma_active(u8 mine, u8 peer, u8 supported)
{
	u8 common = mine & peer & supported;

	if (common)
		return 1U << __fls(common);
	common = mine & supported ? mine & supported : supported;
	return 1U << __ffs(common);
}

static void sma_port_info_get(struct sma_req *r, struct sim_port *port)
{
	const struct sim_pinfo *peer = port->num && port->peer ?
				       &port->peer->pi : NULL;
	const struct sim_pinfo *pi = &port->pi;
	bool end = sim_endport(port);
	u8 *d = r->data;
	u32 cap = SIM_PORT_CAP_MASK;
	u64 viol;

	memset(d, 0, KMAD_SMP_DATA_SIZE);
	if (end) {
		put_unaligned_be64(r->hide_mkey ? 0 : pi->mkey, d + SIM_PI_MKEY);
		put_unaligned_be64(pi->gid_prefix, d + SIM_PI_GID_PREFIX);
		put_unaligned_be16(pi->lid, d + SIM_PI_LID);
		put_unaligned_be16(pi->sm_lid, d + SIM_PI_SM_LID);
		if (sma_client_rereg_supported(port))
			cap |= SIM_PORT_CAP_CLIENT_REREG;
		put_unaligned_be32(cap | port->cap_set, d + SIM_PI_CAP_MASK);
		put_unaligned_be16(pi->mkey_lease, d + SIM_PI_MKEY_LEASE);
		d[SIM_PI_MKEYPROT_LMC] = pi->mkey_protect << 6 | pi->lmc;
		d[SIM_PI_MTU_SMSL] = pi->sm_sl;
		put_unaligned_be16(port->mkey_violations, d + SIM_PI_MKEY_VIOL);
		viol = atomic64_read(&port->ctr[SIM_CTR_PKEY_VIOLATIONS]) -
		       port->pi_viol_base[0];
		put_unaligned_be16(min_t(u64, viol, U16_MAX),
				   d + SIM_PI_PKEY_VIOL);
		viol = atomic64_read(&port->ctr[SIM_CTR_QKEY_VIOLATIONS]) -
		       port->pi_viol_base[1];
		put_unaligned_be16(min_t(u64, viol, U16_MAX),
				   d + SIM_PI_QKEY_VIOL);
		d[SIM_PI_GUID_CAP] = SIM_GUIDS;
		d[SIM_PI_REREG_TIMEOUT] = pi->subnet_timeout;
	}
	d[SIM_PI_LOCAL_PORT] = r->in->num;
	d[SIM_PI_WIDTH_ENABLED] = pi->width_enabled;
	d[SIM_PI_WIDTH_SUPPORTED] = SIM_PORT_WIDTHS;
	d[SIM_PI_WIDTH_ACTIVE] = sma_active(pi->width_enabled,
					    peer ? peer->width_enabled :
						   SIM_PORT_WIDTHS,
					    SIM_PORT_WIDTHS);
	d[SIM_PI_SPEED_STATE] = SIM_PORT_SPEEDS << 4 | port->state;
	d[SIM_PI_PHYS_DOWNDEF] = sma_phys_state(port) << 4 | pi->down_default;
	d[SIM_PI_SPEED_ACT_ENA] = sma_active(pi->speed_enabled,
					     peer ? peer->speed_enabled :
						    SIM_PORT_SPEEDS,
					     SIM_PORT_SPEEDS) << 4 |
				  pi->speed_enabled;
	d[SIM_PI_MTU_SMSL] |= pi->neighbor_mtu << 4;
	d[SIM_PI_VLCAP_INIT] = SIM_PORT_VL_CAP << 4;
	d[SIM_PI_VL_HIGH_LIMIT] = pi->vl_high_limit;
	if (port->num) {
		d[SIM_PI_VL_ARB_HIGH_CAP] = SIM_VLARB_CAP;
		d[SIM_PI_VL_ARB_LOW_CAP] = SIM_VLARB_CAP;
	}
	d[SIM_PI_INITREPLY_MTUCAP] = SIM_PORT_MTU_CAP;
	d[SIM_PI_VLSTALL_HOQ] = pi->vl_stall_hoq;
	d[SIM_PI_OPVLS_ENF] = pi->op_vls << 4 | pi->enforce;
	d[SIM_PI_RESP_TIME] = SIM_PORT_RESP_TIME;
	d[SIM_PI_ERR_THRESHOLDS] = pi->err_thresholds;
}

/*
 * A "enabled" field of a Set: 0 leaves it, all ones means every supported
 * value, anything else must be a subset of @supported.
 */
static bool sma_enable_field(u8 val, u8 all, u8 supported, u8 *field)
{
	if (!val)
		return true;
	if (val == all)
		val = supported;
	if (val & ~supported)
		return false;
	*field = val;
	return true;
}

/*
 * A Set of PortPhysicalState (IBTA 14.2.5.6): 0 no change; Sleep and
 * Disabled take the link down (the port reads Sleep or Disabled, its peer
 * Polling) until a Set of Polling; Polling on a port whose link is up
 * makes it retrain: both ends go Down and come back Init.
 */
static void sma_set_phys_state(struct sim_port *port, u8 phys)
{
	bool was_up = kmad_sim_phys_up(port);

	if (!phys)
		return;
	port->disabled = phys == SIM_PHYS_DISABLED;
	port->asleep = phys == SIM_PHYS_SLEEP;
	if (phys == SIM_PHYS_POLLING && was_up)
		kmad_sim_link_bounce_locked(port);
	else
		kmad_sim_link_update_locked(port, SIM_PS_INIT);
}

/*
 * Is a Set of PortState to @state allowed from the port's state now?
 * IBTA 14.2.5.6: 0 (no change) and Down always; Armed from Init; Active
 * from Armed; the same state again is no change.  Init cannot be set, and
 * anything else (5-15) is reserved: invalid attribute value.
 */
static bool sma_state_ok(const struct sim_port *port, u8 state)
{
	switch (state) {
	case 0:
	case SIM_PS_DOWN:
		return true;
	case SIM_PS_ARMED:
		return port->state == SIM_PS_INIT || port->state == SIM_PS_ARMED;
	case SIM_PS_ACTIVE:
		return port->state == SIM_PS_ARMED ||
		       port->state == SIM_PS_ACTIVE;
	}
	return false;
}

/* PortInfo's P_Key (@i 0) or Q_Key (1) violations read 0 from now on. */
static void sma_viol_clear(struct sim_port *port, int i, enum sim_ctr ctr)
{
	port->pi_viol_base[i] = atomic64_read(&port->ctr[ctr]);
}

static u16 sma_port_info_set(struct sma_req *r, struct sim_port *port)
{
	u8 state = r->data[SIM_PI_SPEED_STATE] & 0xf;
	u8 phys = r->data[SIM_PI_PHYS_DOWNDEF] >> 4;
	u8 mtu = r->data[SIM_PI_MTU_SMSL] >> 4;
	u8 vls = r->data[SIM_PI_OPVLS_ENF] >> 4;
	u8 downdef = r->data[SIM_PI_PHYS_DOWNDEF] & 0xf;
	struct sim_pinfo pi = port->pi;
	struct kmad_port_attr was;
	const u8 *d = r->data;
	bool gid_changed, rereg;
	bool ok = true;

	if (sim_endport(port)) {
		pi.mkey = get_unaligned_be64(d + SIM_PI_MKEY);
		pi.gid_prefix = get_unaligned_be64(d + SIM_PI_GID_PREFIX);
		pi.lid = get_unaligned_be16(d + SIM_PI_LID);
		pi.sm_lid = get_unaligned_be16(d + SIM_PI_SM_LID);
		pi.mkey_lease = get_unaligned_be16(d + SIM_PI_MKEY_LEASE);
		pi.mkey_protect = d[SIM_PI_MKEYPROT_LMC] >> 6;
		pi.lmc = d[SIM_PI_MKEYPROT_LMC] & 0x7;
		pi.sm_sl = d[SIM_PI_MTU_SMSL] & 0xf;
		pi.subnet_timeout = d[SIM_PI_REREG_TIMEOUT] & 0x1f;
		ok = pi.lid < SIM_MCAST_LID_BASE &&
		     pi.sm_lid < SIM_MCAST_LID_BASE;
	}
	/*
	 * PortState Armed or Active and a PortPhysicalState change in one
	 * Set: the physical change would retrain or disable the link under
	 * a logical change checked against the state before it (an Active
	 * port set Active and Polling at once would end Active over an Init
	 * link).  Refused.  Down with Disabled is what OpenSM sends to
	 * disable a port (a trap 129-131 storm): taken.
	 */
	if (port->num) {
		ok = ok && !(phys && (state == SIM_PS_ARMED ||
				      state == SIM_PS_ACTIVE)) &&
		     sma_state_ok(port, state) &&
		     phys <= SIM_PHYS_DISABLED &&
		     (!downdef || downdef <= SIM_PHYS_POLLING);
	}
	ok = ok && sma_enable_field(d[SIM_PI_WIDTH_ENABLED], 0xff,
				    SIM_PORT_WIDTHS, &pi.width_enabled) &&
	     sma_enable_field(d[SIM_PI_SPEED_ACT_ENA] & 0xf, 0xf,
			      SIM_PORT_SPEEDS, &pi.speed_enabled) &&
	     mtu && mtu <= SIM_PORT_MTU_CAP && vls <= SIM_PORT_VL_CAP;
	if (!ok)
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;

	pi.neighbor_mtu = mtu;
	pi.vl_stall_hoq = d[SIM_PI_VLSTALL_HOQ];
	pi.vl_high_limit = d[SIM_PI_VL_HIGH_LIMIT];
	pi.enforce = d[SIM_PI_OPVLS_ENF] & 0xf;
	pi.err_thresholds = d[SIM_PI_ERR_THRESHOLDS];
	if (vls)
		pi.op_vls = vls;
	if (downdef)
		pi.down_default = downdef;
	kmad_sim_pinfo_attr(&port->pi, &was);
	gid_changed = pi.gid_prefix != port->pi.gid_prefix;
	port->pi = pi;
	/* An endport's violation counters: a 0 written clears one (qib). */
	if (sim_endport(port)) {
		if (!get_unaligned_be16(d + SIM_PI_MKEY_VIOL))
			port->mkey_violations = 0;
		if (!get_unaligned_be16(d + SIM_PI_PKEY_VIOL))
			sma_viol_clear(port, 0, SIM_CTR_PKEY_VIOLATIONS);
		if (!get_unaligned_be16(d + SIM_PI_QKEY_VIOL))
			sma_viol_clear(port, 1, SIM_CTR_QKEY_VIOLATIONS);
	}
	if (!port->num)
		return KMAD_MAD_STATUS_SUCCESS;
	/*
	 * An HCA driver reports a new LID, SM LID or GID prefix as a port
	 * event, and a ClientReregister (IBTA 14.4.11) as one even if
	 * nothing changed.
	 */
	rereg = sma_client_rereg_supported(port) &&
		d[SIM_PI_REREG_TIMEOUT] & SIM_PI_CLIENT_REREG;
	if (gid_changed || rereg)
		sma_port_changed(port);
	else
		kmad_sim_report_port_locked(port, &was);
	if (rereg && port->node->state == SIM_DEV_LIVE)
		kmad_device_port_reregister(port->node->kdev, port->num);
	sma_set_phys_state(port, phys);
	/* A Down retrains the link (unless Polling above already did). */
	if (state == SIM_PS_DOWN && kmad_sim_phys_up(port) &&
	    phys != SIM_PHYS_POLLING)
		kmad_sim_link_bounce_locked(port);
	else if (state == SIM_PS_ARMED || state == SIM_PS_ACTIVE)
		kmad_sim_port_set_state_locked(port, state, true);
	return KMAD_MAD_STATUS_SUCCESS;
}

/*
 * PortInfo: the modifier names the port (a switch: 0 to num_ports; an
 * HCA: 1 to num_ports, or 0 for the port the SMP arrived on).  An HCA
 * takes a Set only for the port it arrived on (ibsim refuses another
 * with an error status; qib answers it as a Get): a Set naming its other
 * port is answered 0x001C with that port's PortInfo, unchanged.
 */
static u16 sma_port_info(struct sma_req *r)
{
	struct sim_node *node = r->node;
	struct sim_port *port;
	u16 status = KMAD_MAD_STATUS_SUCCESS;
	bool rereg = r->set &&
		     r->data[SIM_PI_REREG_TIMEOUT] & SIM_PI_CLIENT_REREG;

	if (r->mod > node->num_ports) {
		memset(r->data, 0, KMAD_SMP_DATA_SIZE);
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	}
	port = r->mod || sim_is_switch(node) ? &node->ports[r->mod] : r->in;
	if (r->set && !sim_is_switch(node) && port != r->in)
		status = KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	else if (r->set)
		status = sma_port_info_set(r, port);
	sma_port_info_get(r, port);
	/* A ClientReregister the port took reads back set in the SetResp
	 * (o14-12.2.1, as hfi1 restores it after its Get; qib's Get clears
	 * it again); any other read has it 0.
	 */
	if (rereg && status == KMAD_MAD_STATUS_SUCCESS &&
	    sma_client_rereg_supported(port))
		r->data[SIM_PI_REREG_TIMEOUT] |= SIM_PI_CLIENT_REREG;
	return status;
}

/**
 * kmad_sim_modify_port_cap() - &kmad_provider_ops.modify_port_cap: set,
 * then clear, CapabilityMask bits an HCA port's PortInfo reports.
 * @kdev: the HCA.
 * @port_num: its port.
 * @set: bits to set.
 * @clear: bits to clear.
 *
 * Only IsSM (0x2) may change: the others describe what the port can do.
 * Context: any, no sim lock held; takes F.
 * Return: 0, or -EINVAL for another bit or a port the HCA does not have.
 */
int kmad_sim_modify_port_cap(struct kmad_device *kdev, u8 port_num, u32 set,
			     u32 clear)
{
	struct sim_dev *sdev = kmad_device_priv(kdev);
	struct sim_port *port;
	unsigned long flags;

	if ((set | clear) & ~SIM_PORT_CAP_IS_SM || !port_num ||
	    port_num > sdev->node->num_ports)
		return -EINVAL;
	port = &sdev->node->ports[port_num];
	spin_lock_irqsave(&sdev->fab->lock, flags);
	port->cap_set = (port->cap_set | set) & ~clear;
	spin_unlock_irqrestore(&sdev->fab->lock, flags);
	return 0;
}

/*
 * The M_Key check (IBTA 14.2.4; qib's check_mkey() does the same) of
 * endport @ep for request @r (sma_mkeys_ok() says which).  It passes with
 * @ep's M_Key, or when that is 0; a Get with another
 * key passes too at M_KeyProtectBits 0, and at 1, where a PortInfo Get
 * then reads M_Key 0.  Anything else fails: M_KeyViolations counts it
 * and, if M_KeyLeasePeriod is not 0, the lease timer starts unless it
 * runs.  A check the right key passes stops the timer; once it runs out,
 * M_KeyProtectBits read 0 (the SM that held the key is taken to be gone).
 * The caller sends the Trap 256 (route.c).
 *
 * Context: F held.
 * Return: whether the SMA may answer.
 */
static u64 sma_now(const struct kmad_sim_fabric *fab)
{
	return fab->cfg.mode == KMAD_SIM_STEP ? fab->clock : get_jiffies_64();
}

/*
 * The M_Key lease of endport @ep ran out: M_KeyProtectBits become 0.  Run
 * before @ep's PortInfo is checked or read, whatever asks.
 *
 * Context: F held.
 */
static void sma_mkey_expire(struct sim_port *ep)
{
	struct kmad_sim_fabric *fab = ep->node->fab;

	lockdep_assert_held(&fab->lock);
	if (ep->mkey_lease_end &&
	    time_after_eq64(sma_now(fab), ep->mkey_lease_end)) {
		ep->mkey_lease_end = 0;
		ep->pi.mkey_protect = 0;
	}
}

static bool sma_mkey_ok(struct sma_req *r, const struct kmad_smp *smp,
			struct sim_port *ep)
{
	struct kmad_sim_fabric *fab = r->node->fab;
	u64 now = sma_now(fab);

	lockdep_assert_held(&fab->lock);
	if (!ep->pi.mkey || be64_to_cpu(smp->mkey) == ep->pi.mkey) {
		ep->mkey_lease_end = 0;
		return true;
	}
	if (!r->set && ep->pi.mkey_protect < 2) {
		r->hide_mkey = ep->pi.mkey_protect == 1;
		return true;
	}
	if (ep->mkey_violations != U16_MAX)
		ep->mkey_violations++;
	if (!ep->mkey_lease_end && ep->pi.mkey_lease)
		ep->mkey_lease_end = now + (u64)ep->pi.mkey_lease * HZ ?: 1;
	return false;
}

/*
 * The M_Key checks of request @r: of the endport it is for (the HCA port
 * it arrived on, a switch's port 0), and of @other, the port an HCA's
 * PortInfo names if not that one, whose ProtectBits then decide whether
 * its M_Key reads 0 (as qib's subn_get_portinfo() and process_subn()
 * check them: both, each counting its own violation).  The ports that
 * refused go in @refused[0], then @refused[1].
 *
 * Context: F held.
 * Return: whether the SMA may answer.
 */
static bool sma_mkeys_ok(struct sma_req *r, const struct kmad_smp *smp,
			 struct sim_port *other, struct sim_port **refused)
{
	struct sim_node *node = r->node;
	struct sim_port *ep = sim_is_switch(node) ? &node->ports[0] : r->in;
	bool ok = sma_mkey_ok(r, smp, ep);

	if (!ok)
		refused[0] = ep;
	if (!other)
		return ok;
	/* Checked even when @ep refused: both count it (as qib). */
	r->hide_mkey = false;
	if (!sma_mkey_ok(r, smp, other)) {
		refused[!ok] = other;
		ok = false;
	}
	return ok;
}

/* An HCA's PortInfo naming its other port: that port, else NULL. */
static struct sim_port *sma_other_port(const struct sma_req *r, u16 attr)
{
	struct sim_node *node = r->node;

	if (sim_is_switch(node) || attr != KMAD_SMP_ATTR_PORT_INFO ||
	    !r->mod || r->mod == r->in->num || r->mod > node->num_ports)
		return NULL;
	return &node->ports[r->mod];
}

/**
 * kmad_sim_sma() - answer a SubnGet or SubnSet.
 * @in: the port the SMP arrived on (a switch's physical port, or an HCA
 *	port).
 * @smp: the request; its data becomes the attribute.
 * @refused: NULL for the driver's own query (kmad_sim_query_smp()),
 *	which firmware answers whatever the M_Key; else set to the endports
 *	whose M_Key check refused the SMP (one or two, the rest NULL).
 *
 * Context: any, no sim lock held; takes F.
 * Return: the MAD status for the response, or -EACCES if an M_Key check
 * fails (no response).
 */
int kmad_sim_sma(struct sim_port *in, struct kmad_smp *smp,
		 struct sim_port *refused[2])
{
	struct kmad_sim_fabric *fab = in->node->fab;
	struct sma_req r = {
		.node = in->node,
		.in = in,
		.data = smp->data,
		.mod = be32_to_cpu(smp->attr_mod),
		.set = smp->method == KMAD_METHOD_SET,
	};
	u16 attr = be16_to_cpu(smp->attr_id);
	struct sim_port *other;
	unsigned long flags;
	u16 status;

	/* PortInfo's SMSupportsExtendedSpeeds (modifier bit 31, IBTA 1.2.1):
	 * the ports have no extended speeds, so it changes nothing, as
	 * ibsim masks it (smpquery -x, ibportstate and OpenSM set it).
	 */
	if (attr == KMAD_SMP_ATTR_PORT_INFO)
		r.mod &= ~SIM_PI_MOD_SM_EXT_SPEEDS;

	spin_lock_irqsave(&fab->lock, flags);
	other = sma_other_port(&r, attr);
	sma_mkey_expire(sim_is_switch(r.node) ? &r.node->ports[0] : in);
	if (other)
		sma_mkey_expire(other);
	if (refused && !sma_mkeys_ok(&r, smp, other, refused)) {
		spin_unlock_irqrestore(&fab->lock, flags);
		return -EACCES;
	}
	if (!r.set)
		memset(r.data, 0, KMAD_SMP_DATA_SIZE);
	switch (attr) {
	case KMAD_SMP_ATTR_NODE_DESC:
		status = sma_node_desc(&r);
		break;
	case KMAD_SMP_ATTR_NODE_INFO:
		status = sma_node_info(&r);
		break;
	case KMAD_SMP_ATTR_SWITCH_INFO:
		status = sma_switch_info(&r);
		break;
	case KMAD_SMP_ATTR_GUID_INFO:
		status = sma_guid_info(&r);
		break;
	case KMAD_SMP_ATTR_PORT_INFO:
		status = sma_port_info(&r);
		break;
	case KMAD_SMP_ATTR_PKEY_TABLE:
		status = sma_pkey_table(&r);
		break;
	case KMAD_SMP_ATTR_LINEAR_FT:
		status = sma_lft(&r);
		break;
	case KMAD_SMP_ATTR_SL_TO_VL_TABLE:
		status = sma_sl2vl(&r);
		break;
	case KMAD_SMP_ATTR_VL_ARB_TABLE:
		status = sma_vlarb(&r);
		break;
	case KMAD_SMP_ATTR_MCAST_FT:
		status = sma_mft(&r);
		break;
	default:
		status = KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
		break;
	}
	spin_unlock_irqrestore(&fab->lock, flags);
	/*
	 * A Set of PortInfo or SwitchInfo with a bad value is answered with
	 * the attribute as it is; other failures with no data.
	 */
	if (status == KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR ||
	    (status != KMAD_MAD_STATUS_SUCCESS &&
	     attr != KMAD_SMP_ATTR_PORT_INFO &&
	     attr != KMAD_SMP_ATTR_SWITCH_INFO))
		memset(smp->data, 0, KMAD_SMP_DATA_SIZE);
	return status;
}
