/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad SMI: directed-route SMP hop-pointer processing (IBTA 14.2.2).
 *
 * These are pure functions on an SMP: they read and update hop_ptr and the
 * return path, and say what the node must do with the SMP.  kmad uses them
 * on its own QP0 traffic (as an HCA's SMI must), and the simulated fabric
 * uses the same functions for its switches, so both ends of every hop follow
 * one implementation.  They check the hop fields themselves: an SMP that is
 * not directed-route, has a HopCount above 63 or a HopPointer beyond
 * HopCount + 1 is discarded, and no index ever leaves the path arrays,
 * whatever the wire holds.  A step that discards leaves the SMP unchanged.
 *
 * How a node uses them (drivers/kmad/smi.c has the rules, rule by rule):
 *
 * - Originating a request, or a response made by kmad_smi_make_response():
 *   if the SMP starts with a LID-routed part (a request whose DrSLID, or a
 *   response whose DrDLID, is not permissive), send it by LID and call
 *   nothing.  Otherwise port = kmad_smi_out_port(), then kmad_smi_send().
 * - Receiving one addressed to this node (by the permissive LID, or by its
 *   LID at the end of a LID-routed part): kmad_smi_recv().  HANDLE: give it
 *   to the local SMA (outgoing) or SM (returning).  FORWARD (switches):
 *   port = kmad_smi_out_port(), or, if that is 0, the forwarding-table port
 *   for DrDLID (outgoing) or DrSLID (returning); then kmad_smi_send().
 * - After kmad_smi_send() says HANDLE: if the kmad_smi_out_port() taken
 *   before it gave a port, transmit out of that port; otherwise the
 *   directed-route part is over: send by LID to DrDLID (outgoing) or DrSLID
 *   (returning), or, if that LID is permissive, deliver locally.
 */
#ifndef KMAD_SMI_H
#define KMAD_SMI_H

#include <linux/types.h>
#include <kmad/wire.h>

/**
 * enum kmad_smi_action - what to do with a directed-route SMP.
 * @KMAD_SMI_DISCARD: drop it (and count it): it fails the IBTA checks.
 * @KMAD_SMI_HANDLE: it is for this node: give it to the local SMA (or, for
 *	a returning SMP, to the SM), or, on the send side, transmit it.
 * @KMAD_SMI_FORWARD: (switches, receive side) send it on with
 *	kmad_smi_send(): out of the port kmad_smi_out_port() names, or, if it
 *	names none, by LID to DrDLID (outgoing) or DrSLID (returning).
 */
enum kmad_smi_action {
	KMAD_SMI_DISCARD,
	KMAD_SMI_HANDLE,
	KMAD_SMI_FORWARD,
};

/**
 * struct kmad_smi_node - the node processing the SMP.
 * @is_switch: a switch (may be an intermediate hop) rather than a CA.
 * @port_num: the port the SMP is sent out of, or arrived on.  For a CA,
 *	its port number; a switch's management port is 0.  Every directed
 *	hop needs a physical port, 1..@num_ports; where the SMP leaves the
 *	directed-route part (by LID, or to the local SMA or SM) it is not
 *	checked.
 * @num_ports: the node's number of physical ports.
 */
struct kmad_smi_node {
	bool is_switch;
	u8 port_num;
	u8 num_ports;
};

/**
 * kmad_smi_hops_ok() - are the hop fields of @smp in range (C14-6)?
 * @smp: the SMP, as on the wire.
 *
 * Return: true for a directed-route SMP whose HopCount is at most 63 and
 * whose HopPointer is at most HopCount + 1: the only state in which any
 * index derived from the hop fields is valid.  Every step below checks it
 * first; an SMP sent by LID before its directed-route part is checked
 * with it alone.
 */
static inline bool kmad_smi_hops_ok(const struct kmad_smp *smp)
{
	return smp->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE &&
	       smp->hop_cnt <= KMAD_SMP_DR_MAX_HOP_CNT &&
	       smp->hop_ptr <= smp->hop_cnt + 1;
}

enum kmad_smi_action kmad_smi_send(struct kmad_smp *smp,
				   const struct kmad_smi_node *node);
enum kmad_smi_action kmad_smi_recv(struct kmad_smp *smp,
				   const struct kmad_smi_node *node);
u8 kmad_smi_out_port(const struct kmad_smp *smp);
void kmad_smi_make_response(struct kmad_smp *smp);

#endif /* KMAD_SMI_H */
