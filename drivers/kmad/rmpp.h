/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad RMPP (IBTA 13.6): the interface between the receive dispatch
 * (recv.c), the sending side (rmpp_send.c) and the receiving side
 * (rmpp_recv.c).  See Documentation/rmpp.rst.
 */
#ifndef KMAD_RMPP_H
#define KMAD_RMPP_H

#include <kmad/wire.h>

struct kmad_agent_priv;
struct kmad_recv_priv;

/*
 * The receiving side (rmpp_recv.c).
 *
 * kmad_rmpp_recv() - an RMPP-active MAD arrived for @agent (registered with
 * an RMPP version; found by TID for a response, by class and method for a
 * request), with the caller's reference to @agent.
 *
 * Return: @recv, or another &struct kmad_recv_priv holding the whole
 * reassembled message, for the caller to dispatch as it would a single
 * MAD (a response to kmad_send_response(), a request to the agent's
 * recv_handler); NULL if kmad_rmpp_recv() consumed @recv (a segment of a
 * transfer still being reassembled, an ACK/STOP/ABORT, a bad packet: each
 * freed or kept, and counted).
 *
 * Context: CQ drain.
 */
struct kmad_recv_priv *kmad_rmpp_recv(struct kmad_agent_priv *agent,
				      struct kmad_recv_priv *recv);

/*
 * The sending side (rmpp_send.c).
 *
 * kmad_rmpp_send_ctl() - an ACK, STOP or ABORT arrived for @agent that is
 * not about a transfer @agent receives: is it about one @agent sends?
 * Return: true if it was (it is consumed: @recv freed), false if not
 * (the caller drops and counts it).
 *
 * Context: CQ drain.
 */
bool kmad_rmpp_send_ctl(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv);

#endif /* KMAD_RMPP_H */
