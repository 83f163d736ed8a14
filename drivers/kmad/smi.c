// SPDX-License-Identifier: GPL-2.0
/*
 * kmad - directed-route SMP hop-pointer processing (IBTA 14.2.2).
 *
 * A directed-route SMP travels node N0 -> N1 -> ... -> Nc, c = HopCount.
 * InitialPath[i] is the port Ni-1 sends it out of; ReturnPath[i] is the
 * port Ni received it on, recorded on the way out and used on the way
 * back.  HopPointer says where the SMP is.  Entry 0 of both paths is never
 * used.  Optional LID-routed parts may precede the directed-route part
 * (the requester at DrSLID reaches N0 by LID) and follow it (Nc reaches the
 * responder at DrDLID by LID); a permissive DrSLID or DrDLID means that
 * part is empty.
 *
 * IBTA states each rule for a node that processes the SMP; kmad splits
 * every rule into the part done when the SMP arrives (kmad_smi_recv()) and
 * the part done when it leaves (kmad_smi_send()), so that each may check
 * the port it concerns.  HopPointer moves on the send side, except where
 * the SMP is delivered on arrival (end of a directed-route part with a
 * permissive LID beyond it).
 *
 * Outgoing SMPs, D bit clear (C14-9), with p = HopPointer, c = HopCount:
 *
 *  rule        p           recv                          send
 *  C14-9:1     0, c > 0    switch with DrSLID not        p++, InitialPath[p]
 *                          permissive: FORWARD (a DR     must be the port
 *                          part starts here), else
 *                          DISCARD
 *  C14-9:2     1..c-1      switch: ReturnPath[p] = in    switch: p++,
 *                          port, FORWARD; CA: DISCARD    InitialPath[p] must
 *                                                        be the port; CA:
 *                                                        DISCARD
 *  C14-9:3     c           ReturnPath[p] = in port (if   p++; HANDLE if
 *                          c > 0); DrDLID permissive:    switch or DrDLID
 *                          p++, HANDLE; else switch:     permissive
 *                          FORWARD by LID; CA: DISCARD
 *  C14-9:4     c + 1       HANDLE                        HANDLE
 *  C14-9:5     > c + 1     DISCARD                       DISCARD
 *
 * Returning SMPs, D bit set (C14-13), the mirror image:
 *
 *  C14-13:1    c + 1, c>0  switch with DrDLID not        p--, ReturnPath[p]
 *                          permissive: FORWARD (the      must be the port
 *                          return DR part starts here),
 *                          else DISCARD
 *  C14-13:2    2..c        switch: FORWARD; CA: DISCARD  switch: p--,
 *                                                        ReturnPath[p] must
 *                                                        be the port; CA:
 *                                                        DISCARD
 *  C14-13:3    1           DrSLID permissive: p--,       p--; HANDLE if
 *                          HANDLE; else switch: FORWARD  switch or DrSLID
 *                          by LID; CA: DISCARD           permissive
 *  C14-13:4    0           HANDLE                        HANDLE
 *  C14-13:5    > c + 1     DISCARD                       DISCARD
 *
 * A FORWARD onto a directed hop also requires the next port
 * (kmad_smi_out_port()) to be a port of the node, 1..num_ports; recording
 * ReturnPath requires the arrival port to be one, and every "must be the
 * port" the node's port.  A HopCount above 63 (C14-6), a HopPointer
 * beyond HopCount + 1 and an SMP that is not directed-route are discarded
 * before anything else, so no index ever leaves the 64-byte path arrays,
 * whatever the wire holds.  A step that discards leaves the SMP unchanged.
 */

#include <linux/bitops.h>	/* for <kmad/mad.h> */
#include <linux/export.h>
#include <linux/types.h>
#include <asm/byteorder.h>

#include <kmad/mad.h>
#include <kmad/smi.h>
#include <kmad/wire.h>

/* A physical port of @node; 0 (a switch's management port) is not one. */
static bool kmad_smi_port_ok(const struct kmad_smi_node *node, u8 port)
{
	return port >= 1 && port <= node->num_ports;
}

/* No LID-routed part before the directed-route part. */
static bool kmad_smi_drslid_permissive(const struct kmad_smp *smp)
{
	return smp->dr_slid == cpu_to_be16(KMAD_PERMISSIVE_LID);
}

/* No LID-routed part after the directed-route part. */
static bool kmad_smi_drdlid_permissive(const struct kmad_smp *smp)
{
	return smp->dr_dlid == cpu_to_be16(KMAD_PERMISSIVE_LID);
}

/* C14-9, send side; the hop fields are in range. */
static enum kmad_smi_action
kmad_smi_send_outgoing(struct kmad_smp *smp, const struct kmad_smi_node *node)
{
	u8 ptr = smp->hop_ptr;
	u8 cnt = smp->hop_cnt;

	if (ptr < cnt) {
		/* C14-9:1 (p == 0) and C14-9:2: one more directed hop */
		if (ptr > 0 && !node->is_switch)
			return KMAD_SMI_DISCARD;
		if (!kmad_smi_port_ok(node, node->port_num) ||
		    smp->initial_path[ptr + 1] != node->port_num)
			return KMAD_SMI_DISCARD;
		smp->hop_ptr = ptr + 1;
		return KMAD_SMI_HANDLE;
	}
	if (ptr == cnt) {
		/* C14-9:3: the directed-route part ends at this node */
		if (!node->is_switch && !kmad_smi_drdlid_permissive(smp))
			return KMAD_SMI_DISCARD;
		smp->hop_ptr = ptr + 1;
		return KMAD_SMI_HANDLE;
	}
	/* C14-9:4: already beyond the directed-route part */
	return KMAD_SMI_HANDLE;
}

/* C14-13, send side; the hop fields are in range. */
static enum kmad_smi_action
kmad_smi_send_returning(struct kmad_smp *smp, const struct kmad_smi_node *node)
{
	u8 ptr = smp->hop_ptr;
	u8 cnt = smp->hop_cnt;

	if (ptr >= 2) {
		/* C14-13:1 (p == c + 1) and C14-13:2: one more hop back */
		if (ptr <= cnt && !node->is_switch)
			return KMAD_SMI_DISCARD;
		if (!kmad_smi_port_ok(node, node->port_num) ||
		    smp->return_path[ptr - 1] != node->port_num)
			return KMAD_SMI_DISCARD;
		smp->hop_ptr = ptr - 1;
		return KMAD_SMI_HANDLE;
	}
	if (ptr == 1) {
		/* C14-13:3: the directed-route part ends at this node */
		if (!node->is_switch && !kmad_smi_drslid_permissive(smp))
			return KMAD_SMI_DISCARD;
		smp->hop_ptr = 0;
		return KMAD_SMI_HANDLE;
	}
	/* C14-13:4: already beyond the directed-route part */
	return KMAD_SMI_HANDLE;
}

/**
 * kmad_smi_send() - hop-pointer step for a directed-route SMP leaving a node
 * @smp: the directed-route SMP; its hop pointer is updated
 * @node: the sending node; @node->port_num is the port the SMP leaves by:
 *	kmad_smi_out_port() of the SMP before this call if that is not 0,
 *	else the port towards DrDLID (outgoing) or DrSLID (returning) when
 *	that LID is not permissive, else any value (local delivery)
 *
 * Called by the node that originates the SMP (the requester when DrSLID is
 * permissive, the responder after kmad_smi_make_response() when DrDLID is
 * permissive) and by a switch after kmad_smi_recv() said
 * %KMAD_SMI_FORWARD.  Not called while the SMP travels a LID-routed part:
 * a requester whose DrSLID is not permissive sends it by LID to the
 * switch where the directed-route part starts, and a responder whose
 * DrDLID is not permissive sends its response by LID back to the switch
 * the request came from (the request's LRH SLID), both with the hop
 * pointer as it is; that switch then calls kmad_smi_recv() and this.
 *
 * Where the SMP goes after %KMAD_SMI_HANDLE: out of the port
 * kmad_smi_out_port() named, directed-route, if it named one; otherwise
 * the directed-route part is over: by LID to DrDLID (outgoing) or DrSLID
 * (returning), or, if that LID is permissive, to the local SMA (outgoing,
 * HopCount 0) or the local SM (returning).  The rules are in the table at
 * the top of this file.
 *
 * Context: any; does not sleep.
 *
 * Return: %KMAD_SMI_HANDLE to transmit the SMP as described, or
 * %KMAD_SMI_DISCARD to drop it, in which case @smp is unchanged.
 */
enum kmad_smi_action kmad_smi_send(struct kmad_smp *smp,
				   const struct kmad_smi_node *node)
{
	if (!kmad_smi_hops_ok(smp))
		return KMAD_SMI_DISCARD;
	if (kmad_smp_is_returning(smp))
		return kmad_smi_send_returning(smp, node);
	return kmad_smi_send_outgoing(smp, node);
}
EXPORT_SYMBOL_GPL(kmad_smi_send);

/* C14-9, receive side; the hop fields are in range. */
static enum kmad_smi_action
kmad_smi_recv_outgoing(struct kmad_smp *smp, const struct kmad_smi_node *node)
{
	u8 ptr = smp->hop_ptr;
	u8 cnt = smp->hop_cnt;

	if (ptr == 0 && cnt > 0) {
		/*
		 * C14-9:1: a directed-route sender increments first, so only
		 * a switch reached by the initial LID-routed part sees this.
		 */
		if (!node->is_switch || kmad_smi_drslid_permissive(smp))
			return KMAD_SMI_DISCARD;
		return kmad_smi_port_ok(node, smp->initial_path[1]) ?
		       KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	}
	if (ptr < cnt) {
		/* C14-9:2: intermediate hop, switches only */
		if (!node->is_switch ||
		    !kmad_smi_port_ok(node, node->port_num) ||
		    !kmad_smi_port_ok(node, smp->initial_path[ptr + 1]))
			return KMAD_SMI_DISCARD;
		smp->return_path[ptr] = node->port_num;
		return KMAD_SMI_FORWARD;
	}
	if (ptr == cnt) {
		/* C14-9:3: end of the directed-route part */
		bool here = kmad_smi_drdlid_permissive(smp);

		if (!here && !node->is_switch)
			return KMAD_SMI_DISCARD;
		if (cnt > 0) {
			if (!kmad_smi_port_ok(node, node->port_num))
				return KMAD_SMI_DISCARD;
			smp->return_path[cnt] = node->port_num;
		}
		if (!here)
			return KMAD_SMI_FORWARD;
		smp->hop_ptr = cnt + 1;
		return KMAD_SMI_HANDLE;
	}
	/* C14-9:4: end of the final LID-routed part, or local delivery */
	return KMAD_SMI_HANDLE;
}

/* C14-13, receive side; the hop fields are in range. */
static enum kmad_smi_action
kmad_smi_recv_returning(struct kmad_smp *smp, const struct kmad_smi_node *node)
{
	u8 ptr = smp->hop_ptr;
	u8 cnt = smp->hop_cnt;

	if (cnt > 0 && ptr == cnt + 1) {
		/*
		 * C14-13:1: a directed-route responder decrements first, so
		 * only the switch where the request's directed-route part
		 * ended, reached again by LID, sees this.
		 */
		if (!node->is_switch || kmad_smi_drdlid_permissive(smp))
			return KMAD_SMI_DISCARD;
		return kmad_smi_port_ok(node, smp->return_path[cnt]) ?
		       KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	}
	if (ptr >= 2) {
		/* C14-13:2: intermediate hop, switches only */
		if (!node->is_switch ||
		    !kmad_smi_port_ok(node, smp->return_path[ptr - 1]))
			return KMAD_SMI_DISCARD;
		return KMAD_SMI_FORWARD;
	}
	if (ptr == 1) {
		/* C14-13:3: end of the directed-route part */
		if (kmad_smi_drslid_permissive(smp)) {
			smp->hop_ptr = 0;
			return KMAD_SMI_HANDLE;
		}
		return node->is_switch ? KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	}
	/* C14-13:4: end of the final LID-routed part, or local delivery */
	return KMAD_SMI_HANDLE;
}

/**
 * kmad_smi_recv() - hop-pointer step for a directed-route SMP that arrives
 * @smp: the directed-route SMP; its hop pointer and return path are updated
 * @node: the receiving node; @node->port_num is the port the SMP arrived on
 *
 * Called for every directed-route SMP a node receives addressed to it: by
 * the permissive LID on a directed-route part, or by its own LID at the end
 * of a LID-routed part.  Nodes that merely pass the SMP on along a
 * LID-routed part do not call it.
 *
 * %KMAD_SMI_HANDLE: the SMP is for this node, and its hop pointer is now
 * HopCount + 1 (a request, for the SMA; answer it with
 * kmad_smi_make_response()) or 0 (a response, for the SM).
 *
 * %KMAD_SMI_FORWARD (switches only): send it on with kmad_smi_send().  If
 * kmad_smi_out_port() names a port, that is the next directed hop.  If it
 * returns 0, the directed-route part ends here: forward the SMP by LID to
 * DrDLID (outgoing) or DrSLID (returning), through the port the switch's
 * forwarding table gives.
 *
 * The rules are in the table at the top of this file.  Context:
 * any; does not sleep.
 *
 * Return: the action; on %KMAD_SMI_DISCARD @smp is unchanged.
 */
enum kmad_smi_action kmad_smi_recv(struct kmad_smp *smp,
				   const struct kmad_smi_node *node)
{
	if (!kmad_smi_hops_ok(smp))
		return KMAD_SMI_DISCARD;
	if (kmad_smp_is_returning(smp))
		return kmad_smi_recv_returning(smp, node);
	return kmad_smi_recv_outgoing(smp, node);
}
EXPORT_SYMBOL_GPL(kmad_smi_recv);

/**
 * kmad_smi_out_port() - the port of the next directed hop of an SMP
 * @smp: the directed-route SMP
 *
 * Outgoing: InitialPath[HopPointer + 1] while HopPointer < HopCount.
 * Returning: ReturnPath[HopPointer - 1] while HopPointer >= 2.  Only the
 * path arrays are read, within their bounds; the value is not checked
 * against any node's ports (kmad_smi_recv() and kmad_smi_send() do that).
 * Context: any.
 *
 * Return: the port, or 0 when the next step is not a directed hop (the
 * directed-route part ends here, or the hop fields are out of range, or
 * @smp is not directed-route).
 */
u8 kmad_smi_out_port(const struct kmad_smp *smp)
{
	u8 ptr = smp->hop_ptr;

	if (!kmad_smi_hops_ok(smp))
		return 0;
	if (kmad_smp_is_returning(smp))
		return ptr >= 2 ? smp->return_path[ptr - 1] : 0;
	return ptr < smp->hop_cnt ? smp->initial_path[ptr + 1] : 0;
}
EXPORT_SYMBOL_GPL(kmad_smi_out_port);

/**
 * kmad_smi_make_response() - turn a received SMP request into its response
 * @smp: a Get or Set SMP that kmad_smi_recv() delivered to the local SMA
 *
 * Sets the Method to GetResp.  For a directed-route SMP it also sets the D
 * bit and puts the hop pointer at HopCount + 1, where IBTA has it when the
 * request reaches its destination (C14-9:3, C14-9:4), so that the
 * responder's kmad_smi_send() takes the first hop back by
 * ReturnPath[HopCount] (C14-13:1), or, for HopCount 0, ends at the local
 * SM (C14-13:3).  HopCount, DrSLID, DrDLID, both paths and the rest of
 * Status are kept.  A HopCount above 63 is left for kmad_smi_send() to
 * discard.  Context: any.
 */
void kmad_smi_make_response(struct kmad_smp *smp)
{
	smp->method = KMAD_METHOD_GET_RESP;
	if (smp->mgmt_class != KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		return;
	smp->status |= cpu_to_be16(KMAD_SMP_DIRECTION);
	if (smp->hop_cnt <= KMAD_SMP_DR_MAX_HOP_CNT)
		smp->hop_ptr = smp->hop_cnt + 1;
}
EXPORT_SYMBOL_GPL(kmad_smi_make_response);
