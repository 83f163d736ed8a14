// SPDX-License-Identifier: GPL-2.0
/*
 * kmad RMPP, the sending side: segmentation, windows, retransmission
 * (IBTA 13.6).
 *
 * Not implemented yet: agents cannot register with an RMPP version
 * (reg_validate() refuses it), so no RMPP send exists.
 */
#include <linux/err.h>
#include "kmad_priv.h"
#include "rmpp.h"

bool kmad_rmpp_send_ctl(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv)
{
	return false;
}
