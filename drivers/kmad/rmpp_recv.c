// SPDX-License-Identifier: GPL-2.0
/*
 * kmad RMPP, the receiving side: reassembly and ACKs (IBTA 13.6).
 *
 * Not implemented yet: agents cannot register with an RMPP version
 * (reg_validate() refuses it), so nothing reaches this but the dispatch
 * of such an agent; it drops what it is given.
 */
#include "kmad_priv.h"
#include "rmpp.h"

struct kmad_recv_priv *kmad_rmpp_recv(struct kmad_agent_priv *agent,
				      struct kmad_recv_priv *recv)
{
	const struct kmad_rmpp_mad *r = (const struct kmad_rmpp_mad *)&recv->mad;

	if (r->rmpp_hdr.rmpp_type != KMAD_RMPP_TYPE_DATA &&
	    kmad_rmpp_send_ctl(agent, recv))
		return NULL;
	kmad_port_stat_inc(agent->qpi->port, KMAD_PSTAT_REQ_DROPPED);
	kmad_recv_free(recv);
	return NULL;
}
