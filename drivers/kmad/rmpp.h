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
struct kmad_send_wr;

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
 * What an RMPP header is refused for on its own, before anything else is
 * looked at (ib_mad checks the same first): %KMAD_RMPP_STATUS_UNV for an
 * RMPPVersion kmad does not speak, %KMAD_RMPP_STATUS_BADT for an RMPPType
 * that is none of the four (IBTA 13.6.2.1); 0 if neither.
 */
static inline u8 kmad_rmpp_hdr_broken(const struct kmad_rmpp_hdr *h)
{
	if (h->rmpp_version != KMAD_RMPP_VERSION)
		return KMAD_RMPP_STATUS_UNV;
	if (h->rmpp_type < KMAD_RMPP_TYPE_DATA ||
	    h->rmpp_type > KMAD_RMPP_TYPE_ABORT)
		return KMAD_RMPP_STATUS_BADT;
	return 0;
}

/*
 * The sending side (rmpp_send.c).
 *
 * kmad_rmpp_send_ctl() - an ACK, STOP or ABORT arrived for @agent that is
 * not about a transfer @agent receives, or a packet of another RMPPVersion
 * or of no RMPPType: is it about a transfer @agent sends?  A broken one
 * ends that transfer, unless it is over (every segment acknowledged).
 * Return: true if it was (it is consumed: @recv freed), false if not
 * (the caller refuses, or drops and counts it).
 *
 * Context: CQ drain.
 */
bool kmad_rmpp_send_ctl(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv);

/**
 * struct kmad_send_probe - where a posted send stands, and what is to move
 * it on: for a test or a debug print that must tell a slow send from a
 * stuck one (kmad_send_probe(), kmad_send_probe_stuck()).
 * @state: enum kmad_send_state.
 * @state_name: its name (kmad_send_state_name()), for a print.
 * @hw: enum kmad_hw_state, read under the QP lock.
 * @refs: its references.
 * @retries_left: retries it has left.
 * @rmpp: an RMPP send: the fields below mean something.
 * @in_wheel: its deadline is in the agent's wheel (WAIT_RESP, the agent
 *	not flushed).
 * @flushed: its agent was flushed (kmad_agent_flush_sends()): a WAIT_RESP
 *	send then waits for the agent's work to end it.
 * @virtual_clock: the port's clock is the provider's (step mode): time,
 *	and so every deadline, moves only when the provider says so.
 * @work_busy: the agent's work is queued or running (work_busy()).
 * @deadline_ms: in the wheel: ms from now to the deadline, negative if
 *	past.
 * @timer_ms: ms from now to the time the agent's work is queued for
 *	(&kmad_agent_priv.timer_at), negative if past; S64_MAX if none.
 * @seg_count: segments.
 * @seg_sent: the segment last handed to the QP.
 * @seg_max: the highest segment handed to the QP.
 * @last_ack: the highest segment acknowledged.
 * @window: NewWindowLast of the last ACK taken.
 */
struct kmad_send_probe {
	const char *state_name;
	u8 state;
	u8 hw;
	u8 refs;
	u8 retries_left;
	bool rmpp;
	bool in_wheel;
	bool flushed;
	bool virtual_clock;
	bool work_busy;
	s64 deadline_ms;
	s64 timer_ms;
	u32 seg_count;
	u32 seg_sent;
	u32 seg_max;
	u32 last_ack;
	u32 window;
};

void kmad_send_probe(struct kmad_send_wr *wr, struct kmad_send_probe *p);
bool kmad_send_probe_stuck(const struct kmad_send_probe *p);

#endif /* KMAD_RMPP_H */
