// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: the performance management agent of every simulated node.
 * route.c hands it the PerfMgt Get and Set requests (class version 1)
 * addressed to a node; it fills in the attribute and returns the MAD
 * status.
 *
 * Attributes (IBTA 16.1.3): ClassPortInfo (Get), PortCounters and
 * PortCountersExtended (Get; Set clears the counters CounterSelect names).
 * Anything else is answered with "unsupported method/attribute", a
 * PortSelect naming no port with "invalid attribute value".
 *
 * Counters.  Each port keeps raw 64-bit counters (&sim_port.ctr) of what
 * really crossed its link (route.c) and of its errors; they only grow.
 * Each attribute keeps, per counter, the raw value at its last clear, so
 * clearing one attribute's counter leaves the other's alone, as separate
 * counters would.  PortCounters saturates at its field widths.  PortSelect
 * is a port number (a switch's 0 is its management port, which has no
 * link); 0xFF (AllPortSelect) sums, or clears, every physical port.
 *
 * Locks: none; the counters and baselines are atomic.  Reading a baseline
 * before its counter keeps a value from going negative under a concurrent
 * clear.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "fabric.h"
#include "fw.h"

/* The PortCounters fields the simulation counts, with their select bits. */
struct pma_field {
	u16 select;
	enum sim_ctr ctr;
	u8 offset;
	u8 bytes;
};

static const struct pma_field pma_pc_fields[] = {
	{ BIT(2), SIM_CTR_LINK_DOWNED, SIM_PC_LINK_DOWNED, 1 },
	{ BIT(3), SIM_CTR_RCV_ERRORS, SIM_PC_RCV_ERRORS, 2 },
	{ BIT(5), SIM_CTR_RELAY_ERRORS, SIM_PC_RCV_SW_RELAY_ERRORS, 2 },
	{ BIT(6), SIM_CTR_XMIT_DISCARDS, SIM_PC_XMIT_DISCARDS, 2 },
	{ BIT(11), SIM_CTR_VL15_DROPPED, SIM_PC_VL15_DROPPED, 2 },
	{ BIT(12), SIM_CTR_XMIT_DATA, SIM_PC_XMIT_DATA, 4 },
	{ BIT(13), SIM_CTR_RCV_DATA, SIM_PC_RCV_DATA, 4 },
	{ BIT(14), SIM_CTR_XMIT_PKTS, SIM_PC_XMIT_PKTS, 4 },
	{ BIT(15), SIM_CTR_RCV_PKTS, SIM_PC_RCV_PKTS, 4 },
};

/* The raw counter behind each PortCountersExtended counter, or -1. */
static const int pma_pce_raw[SIM_PCE_COUNT] = {
	[SIM_PCE_XMIT_DATA] = SIM_CTR_XMIT_DATA,
	[SIM_PCE_RCV_DATA] = SIM_CTR_RCV_DATA,
	[SIM_PCE_XMIT_PKTS] = SIM_CTR_XMIT_PKTS,
	[SIM_PCE_RCV_PKTS] = SIM_CTR_RCV_PKTS,
	[SIM_PCE_UNI_XMIT_PKTS] = SIM_CTR_XMIT_PKTS,
	[SIM_PCE_UNI_RCV_PKTS] = SIM_CTR_RCV_PKTS,
	[SIM_PCE_MCAST_XMIT_PKTS] = -1,
	[SIM_PCE_MCAST_RCV_PKTS] = -1,
};

/* The counter since its last clear: baseline first, then the counter. */
static u64 pma_since(atomic64_t *base, atomic64_t *raw)
{
	u64 b = atomic64_read(base);

	return atomic64_read(raw) - b;
}

static void pma_clear(atomic64_t *base, atomic64_t *raw)
{
	atomic64_set(base, atomic64_read(raw));
}

/* The ports PortSelect @sel names on @in's node: [*first, *last]. */
static bool pma_ports(struct sim_port *in, u8 sel, u8 *first, u8 *last)
{
	struct sim_node *node = in->node;

	if (sel == SIM_PMA_ALL_PORTS) {
		*first = 1;
		*last = node->num_ports;
		return true;
	}
	if (sel > node->num_ports || (!sel && !sim_is_switch(node)))
		return false;
	*first = sel;
	*last = sel;
	return true;
}

static void pma_put(u8 *d, const struct pma_field *f, u64 val)
{
	switch (f->bytes) {
	case 1:
		d[f->offset] = min_t(u64, val, U8_MAX);
		break;
	case 2:
		put_unaligned_be16(min_t(u64, val, U16_MAX), d + f->offset);
		break;
	default:
		put_unaligned_be32(min_t(u64, val, U32_MAX), d + f->offset);
		break;
	}
}

static u16 pma_port_counters(struct sim_port *in, u8 *d, bool set)
{
	struct sim_node *node = in->node;
	u16 select = get_unaligned_be16(d + SIM_PC_COUNTER_SELECT);
	u8 sel = d[SIM_PC_PORT_SELECT];
	const struct pma_field *f;
	struct sim_port *port;
	u8 first, last, p;
	u64 sum;

	memset(d, 0, KMAD_MAD_SIZE - SIM_PMA_DATA);
	d[SIM_PC_PORT_SELECT] = sel;
	put_unaligned_be16(select, d + SIM_PC_COUNTER_SELECT);
	if (!pma_ports(in, sel, &first, &last))
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	for (f = pma_pc_fields; f < pma_pc_fields + ARRAY_SIZE(pma_pc_fields);
	     f++) {
		sum = 0;
		for (p = first; p <= last; p++) {
			port = &node->ports[p];
			if (set && (select & f->select))
				pma_clear(&port->pc_base[f->ctr],
					  &port->ctr[f->ctr]);
			sum += pma_since(&port->pc_base[f->ctr],
					 &port->ctr[f->ctr]);
		}
		pma_put(d, f, sum);
	}
	return KMAD_MAD_STATUS_SUCCESS;
}

static u16 pma_port_counters_ext(struct sim_port *in, u8 *d, bool set)
{
	struct sim_node *node = in->node;
	u16 select = get_unaligned_be16(d + SIM_PCE_COUNTER_SELECT);
	u8 sel = d[SIM_PCE_PORT_SELECT];
	struct sim_port *port;
	u8 first, last, p;
	unsigned int i;
	u64 sum;

	memset(d, 0, KMAD_MAD_SIZE - SIM_PMA_DATA);
	d[SIM_PCE_PORT_SELECT] = sel;
	put_unaligned_be16(select, d + SIM_PCE_COUNTER_SELECT);
	if (!pma_ports(in, sel, &first, &last))
		return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
	for (i = 0; i < SIM_PCE_COUNT; i++) {
		sum = 0;
		for (p = first; p <= last && pma_pce_raw[i] >= 0; p++) {
			port = &node->ports[p];
			if (set && (select & BIT(i)))
				pma_clear(&port->pce_base[i],
					  &port->ctr[pma_pce_raw[i]]);
			sum += pma_since(&port->pce_base[i],
					 &port->ctr[pma_pce_raw[i]]);
		}
		put_unaligned_be64(sum, d + SIM_PCE_COUNTERS + 8 * i);
	}
	return KMAD_MAD_STATUS_SUCCESS;
}

static u16 pma_class_port_info(u8 *d, bool set)
{
	struct kmad_class_port_info *cpi = (struct kmad_class_port_info *)d;

	memset(d, 0, KMAD_MAD_SIZE - SIM_PMA_DATA);
	if (set)
		return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	cpi->base_version = KMAD_MGMT_BASE_VERSION;
	cpi->class_version = KMAD_PMA_CLASS_VERSION;
	cpi->capability_mask = cpu_to_be16(SIM_PMA_CAP_ALL_PORT_SELECT |
					   SIM_PMA_CAP_EXT_WIDTH);
	cpi->cap_mask2_resp_time = cpu_to_be32(SIM_PMA_RESP_TIME);
	return KMAD_MAD_STATUS_SUCCESS;
}

/**
 * kmad_sim_pma() - answer a PerfMgt Get or Set.
 * @in: the port the MAD arrived on (its node's PMA answers).
 * @mad: the request; its data becomes the attribute.
 *
 * Context: any.
 * Return: the MAD status for the response.
 */
u16 kmad_sim_pma(struct sim_port *in, struct kmad_mad *mad)
{
	bool set = mad->mad_hdr.method == KMAD_METHOD_SET;
	u8 *d = (u8 *)mad + SIM_PMA_DATA;

	switch (be16_to_cpu(mad->mad_hdr.attr_id)) {
	case KMAD_ATTR_CLASS_PORT_INFO:
		return pma_class_port_info(d, set);
	case KMAD_PMA_ATTR_PORT_COUNTERS:
	case KMAD_PMA_ATTR_PORT_COUNTERS_EXT:
		/* Their AttributeModifier is 0 (IBTA 16.1.3, 16.1.4); the
		 * port is in PortSelect.  qib answers any other so too.
		 */
		if (mad->mad_hdr.attr_mod) {
			memset(d, 0, KMAD_MAD_SIZE - SIM_PMA_DATA);
			return KMAD_MAD_STATUS_INVALID_ATTR_VALUE;
		}
		if (mad->mad_hdr.attr_id ==
		    cpu_to_be16(KMAD_PMA_ATTR_PORT_COUNTERS))
			return pma_port_counters(in, d, set);
		return pma_port_counters_ext(in, d, set);
	}
	memset(d, 0, KMAD_MAD_SIZE - SIM_PMA_DATA);
	return KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
}
