// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: carrying MADs through the subnet.  A transmitted MAD crosses
 * links hop by hop: switches forward it by their LFT (or, a
 * directed-route SMP, by its path), the firmware of the port it is
 * addressed to answers it if it is a request for the SMA or PMA, and
 * otherwise it lands in a receive buffer of the destination QP.
 *
 * A link.  A MAD crosses a link only if the link is up and, unless it is
 * an SMP (QP0, VL15), the sending port is Active and the receiving one
 * Armed or Active; an Armed one that receives it becomes Active.
 * Crossing counts in the PMA counters of both ports: one packet and
 * (length + %SIM_PKT_OVERHEAD) / 4 data words.
 *
 * Endports.  An HCA port takes a MAD whose DLID is its LID (with its LMC)
 * or, on QP0, the permissive LID; else PortRcvErrors.  A switch takes the
 * same for its port 0; anything else it relays out of the port its LFT
 * names for the DLID, or discards (PortRcvSwitchRelayErrors) if the DLID
 * is above LinearFDBTop or the entry names no port.
 *
 * Firmware.  Get and Set of the SMP classes on QP0 go to the SMA, Get and
 * Set of PerfMgt on QP1 (with the right Q_Key) to the PMA; kmad never sees
 * them.  SMInfo is the exception: at an HCA it is the SM's, so it reaches
 * kmad on QP0 (sim_sm_request()).  The answer replaces the request and travels back like any MAD:
 * LID-routed to the request's SLID, or for a directed-route SMP along the
 * return path.
 *
 * Directed route, as <kmad/smi.h> describes it.  A node applies
 * kmad_smi_recv() to a directed-route SMP addressed to it (by the
 * permissive LID, or by its LID at the end of a LID-routed part).  A switch
 * that is told to forward sends it with kmad_smi_send() out of
 * kmad_smi_out_port(), or, if that is 0, by its LFT towards DrDLID
 * (outgoing) or DrSLID (returning), as a LID-routed packet from its own
 * LID.  An SMA answers a request with kmad_smi_make_response() and sends
 * the answer back the same way, or, if its DrDLID is not permissive, by
 * LID to the switch the request came from (its SLID), with no SMI step.
 * kmad applies the SMI steps to what it sends and receives itself.  A
 * request with hop count 0 is local: the HCA's own SMA answers it into the
 * same port's QP0 without using a link.
 *
 * Context: any (called from the transmit work, from step controls, for
 * a switch's Trap 128 from kmad_sim_set_link(), and for an SMA's Trap 256
 * from within a packet's own trip, nested once: a trap is no request an
 * SMA answers), no sim lock held; F is taken briefly for each lookup, C
 * to deliver.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/spinlock.h>
#include <asm/unaligned.h>
#include <kmad/smi.h>

#include "fabric.h"
#include "fw.h"
#include "hw.h"

/* A trip longer than this between two answers is a routing loop. */
#define SIM_MAX_LEG		128

static struct kmad_smp *sim_smp(struct sim_packet *pkt)
{
	return (struct kmad_smp *)pkt->mad;
}

static struct kmad_mad_hdr *sim_hdr(struct sim_packet *pkt)
{
	return (struct kmad_mad_hdr *)pkt->mad;
}

static bool sim_is_dr(struct sim_packet *pkt)
{
	return pkt->dst_qpn == 0 &&
	       sim_hdr(pkt)->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
}

/* A directed-route answer that starts with a LID-routed part. */
static bool sim_dr_answer_by_lid(struct sim_packet *pkt)
{
	return sim_smp(pkt)->dr_dlid != cpu_to_be16(SIM_PERMISSIVE_LID);
}

/* Does @dlid address an endport with @lid and @lmc (QP0: or permissive)? */
static bool sim_lid_match(const struct sim_packet *pkt, u16 lid, u8 lmc)
{
	u32 dlid = pkt->dlid;

	if (dlid == SIM_PERMISSIVE_LID)
		return pkt->dst_qpn == 0;
	return lid && dlid >= lid && dlid < (u32)lid + (1U << lmc);
}

/* A request the port's firmware (SMA or PMA) consumes. */
static bool sim_fw_request(struct sim_packet *pkt)
{
	struct kmad_mad_hdr *hdr = sim_hdr(pkt);

	if (pkt->len < KMAD_MAD_SIZE ||
	    hdr->base_version != KMAD_MGMT_BASE_VERSION ||
	    (hdr->method != KMAD_METHOD_GET && hdr->method != KMAD_METHOD_SET))
		return false;
	if (pkt->dst_qpn == 0)
		return kmad_is_smp_class(hdr->mgmt_class) &&
		       !(sim_is_dr(pkt) && kmad_smp_is_returning(sim_smp(pkt)));
	/* The PMA is behind QP1 only: another QP gets what is sent to it. */
	return pkt->dst_qpn == 1 &&
	       hdr->mgmt_class == KMAD_MGMT_CLASS_PERF_MGMT;
}

/*
 * A request a switch's port 0 answers: one its SMA or PMA consumes, or a
 * Get or Set of another GMP class, which it does not serve (its QP1 has
 * the PMA alone): answered "unsupported class" (sim_fw_answer()), as
 * kmad answers a request of a class no agent has.
 */
static bool sim_switch_fw_request(struct sim_packet *pkt)
{
	struct kmad_mad_hdr *hdr = sim_hdr(pkt);

	if (sim_fw_request(pkt))
		return true;
	return pkt->dst_qpn == 1 && pkt->len >= KMAD_MAD_SIZE &&
	       hdr->base_version == KMAD_MGMT_BASE_VERSION &&
	       !kmad_is_smp_class(hdr->mgmt_class) &&
	       (hdr->method == KMAD_METHOD_GET ||
		hdr->method == KMAD_METHOD_SET);
}

/*
 * SMInfo (IBTA 14.4.1) is the SM's attribute, not the SMA's: at an HCA port
 * a Get or Set of it is not firmware's but goes to QP0 like any other
 * MAD, where kmad gives it to the agent registered for its method (a
 * subnet manager) or, if none is, answers "unsupported".  A switch has no
 * SM here: its SMA answers SMInfo "unsupported".
 */
static bool sim_sm_request(struct sim_packet *pkt)
{
	return pkt->dst_qpn == 0 &&
	       sim_smp(pkt)->attr_id == cpu_to_be16(KMAD_SMP_ATTR_SM_INFO);
}

/* A request an HCA port's firmware consumes. */
static bool sim_hca_fw_request(struct sim_packet *pkt)
{
	return sim_fw_request(pkt) && !sim_sm_request(pkt);
}

/*
 * Do two P_Keys match (IBTA 10.9.3)?  The same key (low 15 bits), not the
 * invalid one (0), and not both limited members (bit 15 clear).
 */
static bool sim_pkey_match(u16 a, u16 b)
{
	return (a & 0x7fff) && (a & 0x7fff) == (b & 0x7fff) &&
	       ((a | b) & 0x8000);
}

/* Notice (IBTA 14.2.5.1): IsGeneric and Type; producers; trap numbers. */
#define SIM_NOTICE_GENERIC_URGENT	0x81
#define SIM_NOTICE_GENERIC_SECURITY	0x82
#define SIM_NOTICE_PRODUCER_CA		1
#define SIM_NOTICE_PRODUCER_SWITCH	2
#define SIM_TRAP_LINK_STATE		128
#define SIM_TRAP_BAD_MKEY		256
#define SIM_TRAP_BAD_PKEY		257
#define SIM_TRAP_BAD_QKEY		258

static void sim_bad_key_trap(struct sim_port *ep,
			     const struct sim_packet *bad, u16 trap, u32 key);

/*
 * The P_Key and Q_Key checks of a MAD arriving at @in (an HCA port, or a
 * switch's port 0 for its firmware).  The P_Key must match an entry of
 * @in's table, whose index the receive completion reports; QP0 takes any
 * (IBTA: SMPs are not P_Key checked) and reports the entry it matches, or
 * 0.  A matched MAD carries the entry on: a firmware answer leaves with
 * the responder's P_Key, as kmad's own responses do (their P_Key index is
 * the request's).  QP1 takes only the GSI Q_Key.  A violation counts
 * where it arrives, as a drop and in PortInfo's P_KeyViolations or
 * Q_KeyViolations, and @in tells its SM with Trap 257 or 258.
 */
static bool sim_keys_ok(struct sim_port *in, struct sim_packet *pkt)
{
	struct kmad_sim_fabric *fab = in->node->fab;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&fab->lock, flags);
	for (i = 0; i < SIM_PKEYS; i++) {
		if (sim_pkey_match(pkt->pkey, in->pkeys[i])) {
			pkt->pkey = in->pkeys[i];
			break;
		}
	}
	spin_unlock_irqrestore(&fab->lock, flags);
	pkt->pkey_index = i < SIM_PKEYS ? i : 0;
	if (i == SIM_PKEYS && pkt->dst_qpn != 0) {
		sim_port_count(in, SIM_STAT_DROPPED_BAD_PKEY);
		sim_ctr_add(in, SIM_CTR_PKEY_VIOLATIONS, 1);
		sim_bad_key_trap(in, pkt, SIM_TRAP_BAD_PKEY, pkt->pkey);
		return false;
	}
	if (pkt->dst_qpn != 1 || pkt->qkey == KMAD_QP1_QKEY)
		return true;
	sim_port_count(in, SIM_STAT_DROPPED_BAD_QKEY);
	sim_ctr_add(in, SIM_CTR_QKEY_VIOLATIONS, 1);
	sim_bad_key_trap(in, pkt, SIM_TRAP_BAD_QKEY, pkt->qkey);
	return false;
}

/*
 * The path bits @lid names at a port of LID @base and LMC @lmc: its low
 * LMC bits if it is one of the port's LIDs, else 0 (the permissive LID,
 * another port's).
 */
static u8 sim_lid_bits(u16 lid, u16 base, u8 lmc)
{
	return lid >= base && lid - base < (1U << lmc) ? lid - base : 0;
}

static void sim_bad_mkey_trap(struct kmad_sim_fabric *fab,
			      struct sim_port *ep, struct sim_packet *req);

/*
 * The firmware behind @fw (an HCA port, or a switch's port 0) answers the
 * request in @pkt that arrived on @in: @pkt becomes the response,
 * addressed back to the requester, from the LID the request reached (as
 * ib_mad answers for an HCA's SMA and PMA: from the receive's
 * dlid_path_bits).  An SMP the SMA's M_Key check refuses gets no answer
 * (a Trap 256 goes to the SM instead): false, and @pkt is to be dropped.
 */
static bool sim_fw_answer(struct sim_port *fw, struct sim_port *in,
			  struct sim_packet *pkt)
{
	struct kmad_sim_fabric *fab = fw->node->fab;
	struct kmad_mad_hdr *hdr = sim_hdr(pkt);
	struct sim_port *refused[2] = {};
	u32 fw_qpn = pkt->dst_qpn;
	u16 dlid, base;
	unsigned long flags;
	u8 lmc, bits;
	int status;

	if (fw_qpn && hdr->mgmt_class != KMAD_MGMT_CLASS_PERF_MGMT)
		status = KMAD_MAD_STATUS_BAD_VERSION;	/* a switch's: none */
	else if (hdr->class_version != (fw_qpn ? KMAD_PMA_CLASS_VERSION :
						 KMAD_SMP_CLASS_VERSION))
		status = KMAD_MAD_STATUS_BAD_VERSION;
	else if (pkt->dst_qpn == 0)
		status = kmad_sim_sma(in, sim_smp(pkt), refused);
	else
		status = kmad_sim_pma(in, (struct kmad_mad *)pkt->mad);
	if (status < 0) {
		/* From each endport that refused it (as qib's bad_mkey()). */
		if (refused[0])
			sim_bad_mkey_trap(fab, refused[0], pkt);
		if (refused[1])
			sim_bad_mkey_trap(fab, refused[1], pkt);
		return false;
	}
	if (sim_is_dr(pkt)) {
		kmad_smi_make_response(sim_smp(pkt));
		/* The D bit it set, and the SMA's status: none of the
		 * request's.
		 */
		hdr->status = cpu_to_be16(KMAD_SMP_DIRECTION | status);
		dlid = pkt->dlid == SIM_PERMISSIVE_LID ? SIM_PERMISSIVE_LID :
							 pkt->slid;
	} else {
		hdr->method = KMAD_METHOD_GET_RESP;
		hdr->status = cpu_to_be16(status);
		dlid = pkt->slid;
	}
	if (pkt->grh) {
		/* Back to the GID it came from, from the one it was for. */
		union kmad_gid gid = pkt->sgid;

		pkt->sgid = pkt->dgid;
		pkt->dgid = gid;
	}
	spin_lock_irqsave(&fab->lock, flags);
	base = fw->pi.lid;
	lmc = fw->pi.lmc;
	spin_unlock_irqrestore(&fab->lock, flags);
	bits = pkt->by_gid ? 0 : sim_lid_bits(pkt->dlid, base, lmc);
	pkt->by_gid = false;
	pkt->dlid = dlid;
	/* A directed-route answer leaves from the permissive LID too. */
	pkt->slid = dlid == SIM_PERMISSIVE_LID ? SIM_PERMISSIVE_LID :
						 base | bits;
	/* Where it lands, should that be @fw itself (a request to the
	 * port's own LID, looped back); any other port sets its own
	 * (sim_hca_rx()).
	 */
	pkt->path_bits = sim_lid_bits(dlid, base, lmc);
	pkt->dst_qpn = pkt->src_qpn;
	pkt->src_qpn = fw_qpn;
	pkt->qkey = KMAD_QP1_QKEY;
	sim_port_count(fw, SIM_STAT_FW_ANSWERED);
	return true;
}

/* Put @pkt in a receive buffer of HCA port @in's destination QP. */
static void sim_deliver(struct kmad_sim_fabric *fab, struct sim_port *in,
			struct sim_packet *pkt)
{
	enum sim_rx_result res = SIM_RX_NO_RECV;
	struct sim_qp *qp = NULL;
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	if (in->node->state == SIM_DEV_LIVE)
		qp = in->qps[pkt->dst_qpn];
	if (qp)
		sim_qp_get(qp);
	spin_unlock_irqrestore(&fab->lock, flags);

	if (!qp)
		sim_port_count(in, SIM_STAT_DROPPED_NO_RECV);
	else if (sim_keys_ok(in, pkt))
		res = kmad_sim_qp_receive(qp, pkt);
	if (res == SIM_RX_NO_RECV && pkt->dst_qpn == 0)
		sim_ctr_add(in, SIM_CTR_VL15_DROPPED, 1);
	if (qp)
		kmad_sim_qp_put(qp);
}

/*
 * Send @pkt over the link of @at.  Returns the port at the other end, or
 * NULL if the MAD is lost (counted on @at and @origin).
 */
static struct sim_port *sim_cross(struct kmad_sim_fabric *fab,
				  struct sim_port *at, struct sim_port *origin,
				  const struct sim_packet *pkt)
{
	u64 words = (pkt->len + SIM_PKT_OVERHEAD +
		     (pkt->grh ? KMAD_GRH_BYTES : 0)) / 4;
	struct sim_port *peer = at->peer;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&fab->lock, flags);
	ok = kmad_sim_phys_up(at) &&
	     (pkt->dst_qpn == 0 ||
	      (at->state == SIM_PS_ACTIVE && peer->state >= SIM_PS_ARMED));
	/* An Armed port that receives a packet other than VL15's goes
	 * Active (the link state machine of IBTA chapter 7; hfi1 does so too).
	 */
	if (ok && pkt->dst_qpn && peer->state == SIM_PS_ARMED)
		kmad_sim_port_set_state_locked(peer, SIM_PS_ACTIVE, false);
	spin_unlock_irqrestore(&fab->lock, flags);
	if (!ok) {
		sim_ctr_add(at, SIM_CTR_XMIT_DISCARDS, 1);
		sim_port_count(origin, SIM_STAT_DROPPED_LINK);
		return NULL;
	}
	sim_ctr_add(at, SIM_CTR_XMIT_PKTS, 1);
	sim_ctr_add(at, SIM_CTR_XMIT_DATA, words);
	sim_ctr_add(peer, SIM_CTR_RCV_PKTS, 1);
	sim_ctr_add(peer, SIM_CTR_RCV_DATA, words);
	return peer;
}

/*
 * A MAD arrived at HCA port @in.  Returns @in if its firmware answered
 * (the answer, in @pkt, leaves by the same port), else NULL.
 */
static struct sim_port *sim_hca_rx(struct kmad_sim_fabric *fab,
				   struct sim_port *in,
				   struct sim_port **origin,
				   struct sim_packet *pkt)
{
	struct kmad_smi_node me = {
		.is_switch = false,
		.port_num = in->num,
		.num_ports = in->node->num_ports,
	};
	unsigned long flags;
	bool live, match;

	spin_lock_irqsave(&fab->lock, flags);
	live = in->node->state == SIM_DEV_LIVE;
	match = sim_lid_match(pkt, in->pi.lid, in->pi.lmc);
	/* The LID's low LMC bits, unless it was found from the DGID. */
	pkt->path_bits = match && !pkt->by_gid ?
			 sim_lid_bits(pkt->dlid, in->pi.lid, in->pi.lmc) : 0;
	spin_unlock_irqrestore(&fab->lock, flags);
	if (!live) {
		sim_port_count(*origin, SIM_STAT_DROPPED_NO_ROUTE);
		return NULL;
	}
	if (!match) {
		sim_ctr_add(in, SIM_CTR_RCV_ERRORS, 1);
		sim_port_count(*origin, SIM_STAT_DROPPED_NO_ROUTE);
		return NULL;
	}
	if (!sim_hca_fw_request(pkt)) {
		sim_deliver(fab, in, pkt);
		return NULL;
	}
	if (!sim_keys_ok(in, pkt))
		return NULL;
	if (sim_is_dr(pkt) && kmad_smi_recv(sim_smp(pkt), &me) !=
			      KMAD_SMI_HANDLE) {
		sim_port_count(in, SIM_STAT_DROPPED_SMI);
		return NULL;
	}
	if (!sim_fw_answer(in, in, pkt))
		return NULL;
	*origin = in;
	if (sim_is_dr(pkt) && !sim_dr_answer_by_lid(pkt) &&
	    kmad_smi_send(sim_smp(pkt), &me) != KMAD_SMI_HANDLE) {
		sim_port_count(in, SIM_STAT_DROPPED_SMI);
		return NULL;
	}
	return in;
}

/* The port of switch @sw that its LFT names for @dlid, or NULL. */
static struct sim_port *sim_lft_port(struct kmad_sim_fabric *fab,
				     struct sim_node *sw, u16 dlid)
{
	unsigned long flags;
	u8 out = SIM_LFT_NONE;

	spin_lock_irqsave(&fab->lock, flags);
	if (dlid < SIM_LFT_CAP && dlid <= sw->lft_top)
		out = sw->lft[dlid];
	spin_unlock_irqrestore(&fab->lock, flags);
	if (!out || out > sw->num_ports)
		return NULL;
	return &sw->ports[out];
}

/*
 * Switch @sw sends on the directed-route SMP in @pkt (forwarded, or its
 * SMA's answer).  Returns the port it leaves by, or NULL if discarded.
 */
static struct sim_port *sim_switch_dr_out(struct kmad_sim_fabric *fab,
					  struct sim_node *sw,
					  struct sim_port *origin,
					  struct sim_packet *pkt)
{
	struct kmad_smp *smp = sim_smp(pkt);
	struct kmad_smi_node me = {
		.is_switch = true,
		.num_ports = sw->num_ports,
	};
	struct sim_port *out = NULL;
	u8 num = kmad_smi_out_port(smp);
	u16 lid;

	if (!num) {
		/* A LID-routed part follows, from this switch. */
		lid = be16_to_cpu(kmad_smp_is_returning(smp) ? smp->dr_slid :
							       smp->dr_dlid);
		pkt->dlid = lid;
		pkt->slid = kmad_sim_port_lid_of(&sw->ports[0]);
		out = sim_lft_port(fab, sw, lid);
		if (!out) {
			sim_port_count(origin, SIM_STAT_DROPPED_NO_ROUTE);
			return NULL;
		}
		num = out->num;
	} else if (num <= sw->num_ports) {
		/* A directed hop: permissive LIDs both ways (IBTA 14.2.2). */
		pkt->dlid = SIM_PERMISSIVE_LID;
		pkt->slid = SIM_PERMISSIVE_LID;
		out = &sw->ports[num];
	}
	me.port_num = num;
	if (!out || kmad_smi_send(smp, &me) != KMAD_SMI_HANDLE) {
		sim_port_count(origin, SIM_STAT_DROPPED_SMI);
		return NULL;
	}
	return out;
}

/* A directed-route SMP arrived at switch port @in for the switch. */
static struct sim_port *sim_switch_dr(struct kmad_sim_fabric *fab,
				      struct sim_port *in,
				      struct sim_port **origin,
				      struct sim_packet *pkt)
{
	struct sim_node *sw = in->node;
	struct kmad_smi_node me = {
		.is_switch = true,
		.port_num = in->num,
		.num_ports = sw->num_ports,
	};
	struct sim_port *out;

	switch (kmad_smi_recv(sim_smp(pkt), &me)) {
	case KMAD_SMI_FORWARD:
		return sim_switch_dr_out(fab, sw, *origin, pkt);
	case KMAD_SMI_HANDLE:
		if (!sim_fw_request(pkt)) {
			/* For an SM on the switch: there is none. */
			sim_port_count(&sw->ports[0], SIM_STAT_DROPPED_NO_RECV);
			return NULL;
		}
		if (!sim_fw_answer(&sw->ports[0], in, pkt))
			return NULL;
		*origin = &sw->ports[0];
		if (!sim_dr_answer_by_lid(pkt))
			return sim_switch_dr_out(fab, sw, *origin, pkt);
		out = sim_lft_port(fab, sw, pkt->dlid);
		if (!out)
			sim_port_count(*origin, SIM_STAT_DROPPED_NO_ROUTE);
		return out;
	case KMAD_SMI_DISCARD:
		break;
	}
	sim_port_count(*origin, SIM_STAT_DROPPED_SMI);
	return NULL;
}

/*
 * A MAD arrived at switch port @in.  Returns the port it leaves by
 * (relayed, or the switch's answer), or NULL if it ends here.
 */
static struct sim_port *sim_switch_rx(struct kmad_sim_fabric *fab,
				      struct sim_port *in,
				      struct sim_port **origin,
				      struct sim_packet *pkt)
{
	struct sim_node *sw = in->node;
	struct sim_port *mgmt = &sw->ports[0];
	struct sim_port *out;
	unsigned long flags;
	bool mine;

	spin_lock_irqsave(&fab->lock, flags);
	mine = sim_lid_match(pkt, mgmt->pi.lid, mgmt->pi.lmc);
	spin_unlock_irqrestore(&fab->lock, flags);

	if (!mine) {
		out = sim_lft_port(fab, sw, pkt->dlid);
		if (!out) {
			sim_ctr_add(in, SIM_CTR_RELAY_ERRORS, 1);
			sim_port_count(*origin, SIM_STAT_DROPPED_NO_ROUTE);
		}
		return out;
	}
	if (sim_is_dr(pkt))
		return sim_switch_dr(fab, in, origin, pkt);
	/* The SM's TrapRepress of a trap it sent (kmad_sim_switch_trap()):
	 * taken; the switch never repeats a trap, so there is nothing to
	 * stop.
	 */
	if (pkt->dst_qpn == 0 &&
	    sim_hdr(pkt)->method == KMAD_METHOD_TRAP_REPRESS)
		return NULL;
	if (!sim_switch_fw_request(pkt)) {
		sim_port_count(mgmt, SIM_STAT_DROPPED_NO_RECV);
		return NULL;
	}
	if (!sim_keys_ok(mgmt, pkt))
		return NULL;
	if (!sim_fw_answer(mgmt, in, pkt))
		return NULL;
	*origin = mgmt;
	out = sim_lft_port(fab, sw, pkt->dlid);
	if (!out)
		sim_port_count(mgmt, SIM_STAT_DROPPED_NO_ROUTE);
	return out;
}

/*
 * Carry @pkt, which @from sent (an HCA port, or a switch's port 0), out
 * of port @at until it is delivered or lost.
 */
static void sim_carry_from(struct kmad_sim_fabric *fab, struct sim_port *from,
			   struct sim_port *at, struct sim_packet *pkt)
{
	struct sim_port *origin = from, *in, *next;
	unsigned int hops;

	for (hops = 0; hops < SIM_MAX_LEG; hops++) {
		in = sim_cross(fab, at, origin, pkt);
		if (!in)
			return;
		if (sim_is_switch(in->node))
			next = sim_switch_rx(fab, in, &origin, pkt);
		else
			next = sim_hca_rx(fab, in, &origin, pkt);
		if (!next)
			return;
		/* An answer starts a new leg. */
		if (origin != from) {
			from = origin;
			hops = 0;
		}
		at = next;
	}
	sim_port_count(origin, SIM_STAT_DROPPED_NO_ROUTE);
}

/* Carry @pkt from HCA port @from until it is delivered or lost. */
static void sim_carry(struct kmad_sim_fabric *fab, struct sim_port *from,
		      struct sim_packet *pkt)
{
	sim_carry_from(fab, from, from, pkt);
}

/* Trap 256's DataDetails (IBTA 14.2.5.1, table "Notice DataDetails for
 * Trap 256"), at their offset in the Notice, as Linux's struct
 * ib_mad_notice_attr and OpenSM's ib_mad_notice_attr_t lay them out:
 * LIDADDR, DRSLID, Method, AttributeID, AttributeModifier, M_Key, a
 * reserved byte, DRNotice/DRPathTruncated/DRHopCount, DRNoticeReturnPath
 * (30 bytes, to the end of the SMP's data).
 */
#define SIM_NTC256_LID			12
#define SIM_NTC256_DR_SLID		14
#define SIM_NTC256_METHOD		16
#define SIM_NTC256_ATTR_ID		18
#define SIM_NTC256_ATTR_MOD		20
#define SIM_NTC256_MKEY			24
#define SIM_NTC256_DR			33
#define SIM_NTC256_DR_PATH		34
#define SIM_NTC256_DR_PATH_LEN		30
#define SIM_NTC256_DR_NOTICE		0x80
#define SIM_NTC256_DR_TRUNCATED		0x40

/* Trap 257's and 258's DataDetails (IBTA 14.2.5.1), laid out as Trap
 * 256's above: LID1, LID2, Key, SL and QP1, QP2, GID1, GID2.
 */
#define SIM_NTC257_LID1			12
#define SIM_NTC257_LID2			14
#define SIM_NTC257_KEY			16
#define SIM_NTC257_SL_QP1		20
#define SIM_NTC257_QP2			24
#define SIM_NTC257_GID1			28
#define SIM_NTC257_GID2			44

/* The Notice of a security trap @trap from endport @ep. */
static void sim_notice_security(u8 *d, const struct sim_port *ep, u16 trap)
{
	d[0] = SIM_NOTICE_GENERIC_SECURITY;
	put_unaligned_be16(sim_is_switch(ep->node) ?
			   SIM_NOTICE_PRODUCER_SWITCH : SIM_NOTICE_PRODUCER_CA,
			   d + 2);
	put_unaligned_be16(trap, d + 4);
}

/*
 * Send the SubnTrap(Notice) whose data @pkt holds from endport @ep (an HCA
 * port, or a switch's port 0) to its MasterSMLID: from @ep's LID (the
 * Notice's IssuerLID), TID from the fabric's count, LID-routed (by the
 * switch's forwarding table, or over the HCA port's cable).  Nothing
 * without &kmad_sim_config.traps, while @ep has no LID or no SM LID, or
 * is the SM's own port, nor on an Ethernet fabric.
 *
 * Context: any; no sim lock held.
 */
static void sim_trap_send(struct kmad_sim_fabric *fab, struct sim_port *ep,
			  struct sim_packet *pkt)
{
	struct kmad_smp *smp = sim_smp(pkt);
	struct sim_port *out = ep;
	unsigned long flags;
	u16 lid, sm_lid;
	u64 tid;

	/* Traps off, or RoCE: no SMPs, no SM. */
	if (!fab->cfg.traps || sim_eth(fab))
		return;
	spin_lock_irqsave(&fab->lock, flags);
	lid = ep->pi.lid;
	sm_lid = ep->pi.sm_lid;
	tid = ++fab->trap_tid;
	spin_unlock_irqrestore(&fab->lock, flags);
	if (!lid || !sm_lid || sm_lid >= SIM_MCAST_LID_BASE ||
	    sm_lid == lid)
		return;
	pkt->len = KMAD_MAD_SIZE;
	pkt->slid = lid;
	pkt->dlid = sm_lid;
	pkt->pkey = 0xffff;
	pkt->copies = 1;
	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	smp->class_version = KMAD_SMP_CLASS_VERSION;
	smp->method = KMAD_METHOD_TRAP;
	smp->tid = cpu_to_be64(tid);
	smp->attr_id = cpu_to_be16(KMAD_ATTR_NOTICE);
	put_unaligned_be16(lid, smp->data + 6);		/* IssuerLID */
	if (sim_is_switch(ep->node)) {
		out = sim_lft_port(fab, ep->node, sm_lid);
		if (!out) {
			sim_port_count(ep, SIM_STAT_DROPPED_NO_ROUTE);
			return;
		}
	}
	sim_carry_from(fab, ep, out, pkt);
}

/**
 * kmad_sim_switch_trap() - switch @sw tells its SM that the link state
 * of one of its ports changed (&kmad_sim_config.traps).
 * @fab: its fabric.
 * @sw: the switch.
 *
 * A SubnTrap(Notice) 128 from its port 0 (sim_trap_send()), as ibsim's
 * switches send it: generic, urgent, producer "switch", DataDetails
 * LIDADDR the switch's LID.
 *
 * Context: any; no sim lock held.
 */
void kmad_sim_switch_trap(struct kmad_sim_fabric *fab, struct sim_node *sw)
{
	struct sim_port *mgmt = &sw->ports[0];
	struct sim_packet pkt = {};
	struct kmad_smp *smp = sim_smp(&pkt);
	unsigned long flags;
	u16 lid;

	spin_lock_irqsave(&fab->lock, flags);
	lid = mgmt->pi.lid;
	spin_unlock_irqrestore(&fab->lock, flags);
	smp->data[0] = SIM_NOTICE_GENERIC_URGENT;
	put_unaligned_be16(SIM_NOTICE_PRODUCER_SWITCH, smp->data + 2);
	put_unaligned_be16(SIM_TRAP_LINK_STATE, smp->data + 4);
	put_unaligned_be16(lid, smp->data + 10);	/* LIDADDR */
	sim_trap_send(fab, mgmt, &pkt);
}

/*
 * Trap 256, "Bad M_Key" (IBTA 14.2.4.2), for the SMP in @req that endport
 * @ep's M_Key check refused (&kmad_sim_config.traps): LIDADDR the
 * requester's LID (its SLID: IBTA's "Bad M_Key, <M_KEY> from <LIDADDR>";
 * qib puts its own LID there), its method, attribute, modifier and
 * M_Key, and for a directed-route SMP its DrSLID, hop count and return
 * path.
 *
 * Context: any; no sim lock held.
 */
static void sim_bad_mkey_trap(struct kmad_sim_fabric *fab,
			      struct sim_port *ep, struct sim_packet *req)
{
	const struct kmad_smp *bad = sim_smp(req);
	struct sim_packet pkt = {};
	struct kmad_smp *smp = sim_smp(&pkt);
	u8 *d = smp->data;
	u8 hops;

	sim_notice_security(d, ep, SIM_TRAP_BAD_MKEY);
	put_unaligned_be16(req->slid, d + SIM_NTC256_LID);
	d[SIM_NTC256_METHOD] = bad->method;
	memcpy(d + SIM_NTC256_ATTR_ID, &bad->attr_id, sizeof(bad->attr_id));
	memcpy(d + SIM_NTC256_ATTR_MOD, &bad->attr_mod, sizeof(bad->attr_mod));
	memcpy(d + SIM_NTC256_MKEY, &bad->mkey, sizeof(bad->mkey));
	if (sim_is_dr(req)) {
		hops = min_t(u8, bad->hop_cnt, SIM_NTC256_DR_PATH_LEN);
		memcpy(d + SIM_NTC256_DR_SLID, &bad->dr_slid,
		       sizeof(bad->dr_slid));
		d[SIM_NTC256_DR] = SIM_NTC256_DR_NOTICE | hops |
				   (bad->hop_cnt > hops ?
				    SIM_NTC256_DR_TRUNCATED : 0);
		/* Its entries, from hop 1 (entry 0 is not used). */
		memcpy(d + SIM_NTC256_DR_PATH, bad->return_path + 1, hops);
	}
	sim_trap_send(fab, ep, &pkt);
}

/*
 * Trap 257 "Bad P_Key" or 258 "Bad Q_Key" (IBTA 14.2.5.1, 10.9.3), for
 * the packet @bad whose @key endport @ep refused (&kmad_sim_config.traps):
 * LID1 and QP1 its sender's, LID2 and QP2 where it went, its SL, and GID1
 * and GID2 its GRH's source and destination (zero without a GRH), as
 * qib's qib_bad_pkey() fills Trap 257.
 *
 * Context: any; no sim lock held.
 */
static void sim_bad_key_trap(struct sim_port *ep,
			     const struct sim_packet *bad, u16 trap, u32 key)
{
	struct kmad_sim_fabric *fab = ep->node->fab;
	struct sim_packet pkt = {};
	u8 *d = sim_smp(&pkt)->data;

	sim_notice_security(d, ep, trap);
	put_unaligned_be16(bad->slid, d + SIM_NTC257_LID1);
	put_unaligned_be16(bad->dlid, d + SIM_NTC257_LID2);
	put_unaligned_be32(key, d + SIM_NTC257_KEY);
	put_unaligned_be32((u32)bad->sl << 28 | (bad->src_qpn & 0xffffff),
			   d + SIM_NTC257_SL_QP1);
	put_unaligned_be32(bad->dst_qpn & 0xffffff, d + SIM_NTC257_QP2);
	if (bad->grh) {
		memcpy(d + SIM_NTC257_GID1, &bad->sgid, sizeof(bad->sgid));
		memcpy(d + SIM_NTC257_GID2, &bad->dgid, sizeof(bad->dgid));
	}
	sim_trap_send(fab, ep, &pkt);
}

/*
 * A directed-route request with hop count 0, which kmad's SMI step has
 * left for the local SMA: answered by @port's own firmware, and the answer
 * (its SMI step taken, C14-13:3) delivered to the same port's QP0.
 */
static void sim_local_smp(struct kmad_sim_fabric *fab, struct sim_port *port,
			  struct sim_packet *pkt)
{
	struct kmad_smi_node me = {
		.is_switch = false,
		.port_num = port->num,
		.num_ports = port->node->num_ports,
	};

	if (sim_hca_fw_request(pkt)) {
		if (!sim_fw_answer(port, port, pkt))
			return;
		if (kmad_smi_send(sim_smp(pkt), &me) != KMAD_SMI_HANDLE) {
			sim_port_count(port, SIM_STAT_DROPPED_SMI);
			return;
		}
	}
	sim_deliver(fab, port, pkt);
}

/* Is LID-routed @pkt addressed to @port's own LID? */
static bool sim_to_self(struct kmad_sim_fabric *fab, struct sim_port *port,
			struct sim_packet *pkt)
{
	unsigned long flags;
	bool match;

	spin_lock_irqsave(&fab->lock, flags);
	match = port->pi.lid && pkt->dlid != SIM_PERMISSIVE_LID &&
		sim_lid_match(pkt, port->pi.lid, port->pi.lmc);
	spin_unlock_irqrestore(&fab->lock, flags);
	return match;
}

static void sim_hca_send(struct kmad_sim_fabric *fab, struct sim_port *port,
			 struct sim_packet *pkt)
{
	struct kmad_smp *smp = sim_smp(pkt);

	if (pkt->dst_qpn > SIM_RAW_QPN) {
		sim_port_count(port, SIM_STAT_DROPPED_NO_ROUTE);
		return;
	}
	if (pkt->src_qpn == 0 && sim_is_dr(pkt) &&
	    !kmad_smp_is_returning(smp) && !smp->hop_cnt &&
	    smp->dr_slid == cpu_to_be16(SIM_PERMISSIVE_LID)) {
		sim_local_smp(fab, port, pkt);
		return;
	}
	/*
	 * A directed-route answer back at its start (hop pointer 0, C14-13:4)
	 * with no LID-routed part left: an agent of this port answered a
	 * hop-0 request of this port (an SM's SMInfo, say).  Delivered here,
	 * as ib_mad does (smi_check_local_returning_smp()); on the link the
	 * neighbour would drop it.
	 */
	if (pkt->src_qpn == 0 && sim_is_dr(pkt) &&
	    kmad_smp_is_returning(smp) && !smp->hop_ptr &&
	    smp->dr_slid == cpu_to_be16(SIM_PERMISSIVE_LID)) {
		sim_deliver(fab, port, pkt);
		return;
	}
	if (!sim_is_dr(pkt) && sim_to_self(fab, port, pkt)) {
		struct sim_port *origin = port;

		/* As an HCA loops back a packet for its own LID: no link is
		 * used; a firmware answer comes back to the same port.
		 */
		if (sim_hca_rx(fab, port, &origin, pkt) == port)
			sim_deliver(fab, port, pkt);
		return;
	}
	sim_carry(fab, port, pkt);
}

/**
 * kmad_sim_route() - carry a transmitted MAD to its destination.
 * @src: the sending QP.
 * @pkt: the MAD, delivered &sim_packet.copies times; each copy makes the
 *	whole trip (and is answered, if it is a request for firmware).
 *
 * Context: any; no sim lock held.
 */
void kmad_sim_route(struct sim_qp *src, const struct sim_packet *pkt)
{
	struct kmad_sim_fabric *fab = src->sdev->fab;
	struct sim_packet work;
	unsigned int i;

	for (i = 0; i < pkt->copies; i++) {
		work = *pkt;
		work.copies = 1;
		sim_hca_send(fab, src->port, &work);
	}
}
