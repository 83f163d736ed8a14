// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for directed-route SMP hop-pointer processing
 * (include/kmad/smi.h, drivers/kmad/smi.c; IBTA 14.2.2, rules C14-9 and
 * C14-13).
 *
 * Every table row and every walk uses the same model fabric, a CA, two
 * switches and a CA in a chain:
 *
 *   A (CA, LID 1) 1 ---- 3 SW1 (LID 10) 5 ---- 2 SW2 (LID 20) 7 ---- 1 B (CA, LID 2)
 *
 * The rows start from the directed route A -> SW1 -> SW2 -> B: HopCount 3,
 * InitialPath 1, 5, 7 and, once recorded, ReturnPath 3, 2, 1 (entries past
 * 3 follow a pattern so that 63-hop rows have ports to check).  CAs have 2
 * ports and switches 8.  The walks carry SMPs over the fabric itself,
 * applying kmad_smi_recv() and kmad_smi_send() at each node as the
 * simulated fabric does.
 *
 * SMPs are allocated at exactly their size, so KASAN reports any read past
 * ReturnPath[63]; UBSAN's bounds checks report any index past either path
 * array.
 */

#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kmad/mad.h>
#include <kmad/smi.h>
#include <kmad/wire.h>

#define SMI_CA_PORTS	2
#define SMI_SW_PORTS	8

/* InitialPath of the rows: A 1, SW1 5, SW2 7, then a pattern. */
static u8 smi_test_initial(unsigned int i)
{
	static const u8 head[] = { 0, 1, 5, 7 };

	return i < ARRAY_SIZE(head) ? head[i] : (i % SMI_SW_PORTS) + 1;
}

/* ReturnPath of the rows: SW1 3, SW2 2, B 1, then a pattern. */
static u8 smi_test_return(unsigned int i)
{
	static const u8 head[] = { 0, 3, 2, 1 };

	return i < ARRAY_SIZE(head) ? head[i] : ((i + 3) % SMI_SW_PORTS) + 1;
}

/* Report the first byte where @got and @want differ, if any. */
static void smi_expect_same_smp(struct kunit *test, const struct kmad_smp *got,
				const struct kmad_smp *want)
{
	const u8 *g = (const u8 *)got;
	const u8 *w = (const u8 *)want;
	size_t i;

	for (i = 0; i < sizeof(*got); i++) {
		if (g[i] != w[i]) {
			KUNIT_FAIL(test, "SMP byte %zu is 0x%02x, want 0x%02x",
				   i, g[i], w[i]);
			return;
		}
	}
}

static struct kmad_smp *smi_alloc_smp(struct kunit *test)
{
	struct kmad_smp *smp = kunit_kzalloc(test, sizeof(*smp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, smp);
	return smp;
}

/* ------------------------------------------------------------------ */
/* One kmad_smi_send() or kmad_smi_recv() step per row.                */
/* ------------------------------------------------------------------ */

enum smi_step {
	SMI_SEND,
	SMI_RECV,
};

/**
 * struct kmad_smi_case - one step of the hop-pointer rules
 * @name: the IBTA rule and the situation
 * @step: kmad_smi_send() or kmad_smi_recv()
 * @returning: D bit
 * @is_switch: the node is a switch (8 ports) rather than a CA (2 ports)
 * @num_ports: the node's number of ports
 * @port_num: the node's port
 * @hop_ptr: HopPointer before the step
 * @hop_cnt: HopCount
 * @mgmt_class: MgmtClass; 0 for directed route
 * @dr_slid: DrSLID; 0 for the permissive LID
 * @dr_dlid: DrDLID; 0 for the permissive LID
 * @ip_idx: if not 0, InitialPath[@ip_idx] is set to @ip_val
 * @ip_val: see @ip_idx
 * @rp_idx: if not 0, ReturnPath[@rp_idx] is set to @rp_val
 * @rp_val: see @rp_idx
 * @action: expected action
 * @new_hop_ptr: expected HopPointer after the step
 * @rec_idx: if not 0, the step must record @port_num in
 *	ReturnPath[@rec_idx]; nothing else in the SMP may change
 * @out_port: for %KMAD_SMI_FORWARD, expected kmad_smi_out_port() after
 *	the step (0: on by LID)
 *
 * Outgoing SMPs start with ReturnPath recorded below @hop_ptr and zero from
 * there on; returning ones with the whole ReturnPath.
 */
struct kmad_smi_case {
	const char *name;
	enum smi_step step;
	bool returning;
	bool is_switch;
	u8 num_ports;
	u8 port_num;
	u8 hop_ptr;
	u8 hop_cnt;
	u8 mgmt_class;
	u16 dr_slid;
	u16 dr_dlid;
	u8 ip_idx;
	u8 ip_val;
	u8 rp_idx;
	u8 rp_val;
	enum kmad_smi_action action;
	u8 new_hop_ptr;
	u8 rec_idx;
	u8 out_port;
};

#define SEND_OUT	.step = SMI_SEND, .returning = false
#define SEND_RET	.step = SMI_SEND, .returning = true
#define RECV_OUT	.step = SMI_RECV, .returning = false
#define RECV_RET	.step = SMI_RECV, .returning = true
#define CA(p)		.is_switch = false, .num_ports = SMI_CA_PORTS, .port_num = (p)
#define SW(p)		.is_switch = true, .num_ports = SMI_SW_PORTS, .port_num = (p)
#define HOPS(p, c)	.hop_ptr = (p), .hop_cnt = (c)
#define SLID(l)		.dr_slid = (l)
#define DLID(l)		.dr_dlid = (l)
#define IP(i, v)	.ip_idx = (i), .ip_val = (v)
#define RP(i, v)	.rp_idx = (i), .rp_val = (v)
#define LID_ROUTED	.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED
#define DISCARD(p)	.action = KMAD_SMI_DISCARD, .new_hop_ptr = (p)
#define HANDLE(p)	.action = KMAD_SMI_HANDLE, .new_hop_ptr = (p)
#define FORWARD(p, o)	.action = KMAD_SMI_FORWARD, .new_hop_ptr = (p), .out_port = (o)
#define REC(i)		.rec_idx = (i)

static const struct kmad_smi_case kmad_smi_cases[] = {
	/* Send, outgoing (C14-9). */
	/* HANDLE: the CA originator moves hop_ptr to 1, out of initial_path[1] */
	{ "C14-9:1 CA originator send", SEND_OUT, CA(1), HOPS(0, 3), HANDLE(1) },
	/* HANDLE: a switch SM originates the same way */
	{ "C14-9:1 switch originator send", SEND_OUT, SW(1), HOPS(0, 3), HANDLE(1) },
	/* HANDLE: a switch reached by LID starts the directed part the same way */
	{ "C14-9:1 switch send starting DR part after LID-routed part", SEND_OUT, SW(1),
	  SLID(1), HOPS(0, 3), HANDLE(1) },
	/* DISCARD: the port is not initial_path[1], nothing changes */
	{ "C14-9:1 originator send, wrong port", SEND_OUT, CA(2), HOPS(0, 3), DISCARD(0) },
	/* HANDLE: hop_ptr 1 -> 2, the port is initial_path[2] */
	{ "C14-9:2 switch intermediate hop send", SEND_OUT, SW(5), HOPS(1, 3), HANDLE(2) },
	/* HANDLE: hop_ptr 2 -> 3, the port is initial_path[3] */
	{ "C14-9:2 switch last directed hop send", SEND_OUT, SW(7), HOPS(2, 3), HANDLE(3) },
	/* DISCARD: the port is not initial_path[2] */
	{ "C14-9:2 switch intermediate hop send, wrong port", SEND_OUT, SW(6), HOPS(1, 3),
	  DISCARD(1) },
	/* DISCARD: a CA never relays, even out of the port the path names */
	{ "C14-9:2 CA intermediate hop send", SEND_OUT, CA(1), IP(2, 1), HOPS(1, 3),
	  DISCARD(1) },
	/* HANDLE: hop_cnt 0, hop_ptr 0 -> 1, for the local SMA */
	{ "C14-9:3 CA hop_cnt 0 send to local SMA", SEND_OUT, CA(1), HOPS(0, 0), HANDLE(1) },
	/* HANDLE: the same from a switch's management port */
	{ "C14-9:3 switch hop_cnt 0 send to local SMA", SEND_OUT, SW(0), HOPS(0, 0),
	  HANDLE(1) },
	/* HANDLE: hop_ptr 3 -> 4, on by LID to DrDLID out of any port */
	{ "C14-9:3 switch send ending DR part, on by LID", SEND_OUT, SW(4), DLID(2),
	  HOPS(3, 3), HANDLE(4) },
	/* DISCARD: a CA cannot route by LID to DrDLID */
	{ "C14-9:3 CA send ending DR part, DrDLID not permissive", SEND_OUT, CA(1), DLID(2),
	  HOPS(3, 3), DISCARD(3) },
	/* DISCARD: the same with hop_cnt 0 */
	{ "C14-9:3 CA hop_cnt 0 send, DrDLID not permissive", SEND_OUT, CA(1), DLID(2),
	  HOPS(0, 0), DISCARD(0) },
	/* HANDLE: beyond the directed part, nothing changes */
	{ "C14-9:4 CA send beyond DR part", SEND_OUT, CA(1), HOPS(4, 3), HANDLE(4) },
	/* HANDLE: the same at a switch */
	{ "C14-9:4 switch send beyond DR part", SEND_OUT, SW(4), DLID(2), HOPS(4, 3),
	  HANDLE(4) },
	/* DISCARD: hop_ptr beyond hop_cnt + 1 */
	{ "C14-9:5 send, hop_ptr hop_cnt+2", SEND_OUT, SW(1), HOPS(5, 3), DISCARD(5) },

	/* Send, returning (C14-13). */
	/* HANDLE: the CA responder moves hop_ptr 4 -> 3, out of return_path[3] */
	{ "C14-13:1 CA responder send", SEND_RET, CA(1), HOPS(4, 3), HANDLE(3) },
	/* HANDLE: a switch SMA responds the same way */
	{ "C14-13:1 switch responder send", SEND_RET, SW(1), HOPS(4, 3), HANDLE(3) },
	/* HANDLE: a switch reached again by LID starts the way back the same way */
	{ "C14-13:1 switch send starting return DR part after LID-routed part", SEND_RET,
	  SW(1), DLID(2), HOPS(4, 3), HANDLE(3) },
	/* DISCARD: the port is not return_path[3] */
	{ "C14-13:1 responder send, wrong port", SEND_RET, CA(2), HOPS(4, 3), DISCARD(4) },
	/* HANDLE: hop_ptr 3 -> 2, the port is return_path[2] */
	{ "C14-13:2 switch intermediate hop send", SEND_RET, SW(2), HOPS(3, 3), HANDLE(2) },
	/* HANDLE: hop_ptr 2 -> 1, the port is return_path[1] */
	{ "C14-13:2 switch last directed hop send", SEND_RET, SW(3), HOPS(2, 3), HANDLE(1) },
	/* DISCARD: the port is not return_path[2] */
	{ "C14-13:2 switch intermediate hop send, wrong port", SEND_RET, SW(3), HOPS(3, 3),
	  DISCARD(3) },
	/* DISCARD: a CA never relays, even out of the port the path names */
	{ "C14-13:2 CA intermediate hop send", SEND_RET, CA(2), HOPS(3, 3), DISCARD(3) },
	/* HANDLE: hop_ptr 1 -> 0, on by LID to DrSLID */
	{ "C14-13:3 switch send ending DR part, on by LID", SEND_RET, SW(4), SLID(1),
	  HOPS(1, 3), HANDLE(0) },
	/* DISCARD: a CA cannot route by LID to DrSLID */
	{ "C14-13:3 CA send ending DR part, DrSLID not permissive", SEND_RET, CA(1), SLID(1),
	  HOPS(1, 3), DISCARD(1) },
	/* HANDLE: hop_cnt 0 response, hop_ptr 1 -> 0, for the local SM */
	{ "C14-13:3 CA hop_cnt 0 response send to local SM", SEND_RET, CA(1), HOPS(1, 0),
	  HANDLE(0) },
	/* HANDLE: the same at a switch */
	{ "C14-13:3 switch hop_cnt 0 response send to local SM", SEND_RET, SW(0),
	  HOPS(1, 0), HANDLE(0) },
	/* HANDLE: beyond the directed part, nothing changes */
	{ "C14-13:4 send beyond DR part", SEND_RET, SW(4), SLID(1), HOPS(0, 3), HANDLE(0) },
	/* DISCARD: hop_ptr beyond hop_cnt + 1 */
	{ "C14-13:5 send, hop_ptr hop_cnt+2", SEND_RET, CA(1), HOPS(5, 3), DISCARD(5) },

	/* Receive, outgoing (C14-9). */
	/* DISCARD: the directed sender should have incremented hop_ptr */
	{ "C14-9:1 CA recv with hop_ptr 0", RECV_OUT, CA(1), HOPS(0, 3), DISCARD(0) },
	/* DISCARD: the same at a switch when no LID-routed part precedes */
	{ "C14-9:1 switch recv with hop_ptr 0, DrSLID permissive", RECV_OUT, SW(3),
	  HOPS(0, 3), DISCARD(0) },
	/* FORWARD: reached by LID, the switch starts the directed part */
	{ "C14-9:1 switch recv starting DR part after LID-routed part", RECV_OUT, SW(3),
	  SLID(1), HOPS(0, 3), FORWARD(0, 1) },
	/* DISCARD: a CA does not start a directed part for others */
	{ "C14-9:1 CA recv after LID-routed part", RECV_OUT, CA(1), SLID(1), HOPS(0, 3),
	  DISCARD(0) },
	/* FORWARD: return_path[1] = 3, on out of initial_path[2] */
	{ "C14-9:2 switch intermediate hop recv", RECV_OUT, SW(3), HOPS(1, 3),
	  FORWARD(1, 5), REC(1) },
	/* FORWARD: return_path[2] = 2, on out of initial_path[3] */
	{ "C14-9:2 switch last intermediate hop recv", RECV_OUT, SW(2), HOPS(2, 3),
	  FORWARD(2, 7), REC(2) },
	/* DISCARD: a CA is never an intermediate hop */
	{ "C14-9:2 CA intermediate hop recv", RECV_OUT, CA(1), IP(2, 2), HOPS(1, 3),
	  DISCARD(1) },
	/* HANDLE: return_path[3] = 1, hop_ptr 3 -> 4, for the SMA */
	{ "C14-9:3 CA recv at end of DR part", RECV_OUT, CA(1), HOPS(3, 3), HANDLE(4),
	  REC(3) },
	/* HANDLE: the same for a switch's SMA */
	{ "C14-9:3 switch recv at end of DR part", RECV_OUT, SW(2), HOPS(3, 3), HANDLE(4),
	  REC(3) },
	/* FORWARD: return_path[3] = 2, on by LID to DrDLID, hop_ptr kept for send */
	{ "C14-9:3 switch recv at end of DR part, on by LID", RECV_OUT, SW(2), DLID(2),
	  HOPS(3, 3), FORWARD(3, 0), REC(3) },
	/* DISCARD: a CA cannot route by LID to DrDLID */
	{ "C14-9:3 CA recv at end of DR part, DrDLID not permissive", RECV_OUT, CA(1),
	  DLID(2), HOPS(3, 3), DISCARD(3) },
	/* HANDLE: hop_cnt 0, nothing recorded, hop_ptr 0 -> 1 */
	{ "C14-9:3 CA recv hop_cnt 0", RECV_OUT, CA(1), HOPS(0, 0), HANDLE(1) },
	/* HANDLE: a switch reached by LID with hop_cnt 0 is the destination */
	{ "C14-9:3 switch recv hop_cnt 0 after LID-routed part", RECV_OUT, SW(3), SLID(1),
	  HOPS(0, 0), HANDLE(1) },
	/* FORWARD: hop_cnt 0 reached by LID and DrDLID set: on by LID */
	{ "C14-9:3 switch recv hop_cnt 0, on by LID", RECV_OUT, SW(3), SLID(1), DLID(2),
	  HOPS(0, 0), FORWARD(0, 0) },
	/* HANDLE: the end of the final LID-routed part, nothing changes */
	{ "C14-9:4 CA recv at end of final LID-routed part", RECV_OUT, CA(1), DLID(2),
	  HOPS(4, 3), HANDLE(4) },
	/* HANDLE: the same for a switch's SMA */
	{ "C14-9:4 switch recv at end of final LID-routed part", RECV_OUT, SW(3), DLID(20),
	  HOPS(4, 3), HANDLE(4) },
	/* DISCARD: hop_ptr beyond hop_cnt + 1 */
	{ "C14-9:5 recv, hop_ptr hop_cnt+2", RECV_OUT, SW(3), HOPS(5, 3), DISCARD(5) },

	/* Receive, returning (C14-13). */
	/* DISCARD: the directed responder should have decremented hop_ptr */
	{ "C14-13:1 CA recv with hop_ptr hop_cnt+1", RECV_RET, CA(1), HOPS(4, 3),
	  DISCARD(4) },
	/* DISCARD: the same at a switch when no LID-routed part precedes */
	{ "C14-13:1 switch recv with hop_ptr hop_cnt+1, DrDLID permissive", RECV_RET, SW(7),
	  HOPS(4, 3), DISCARD(4) },
	/* FORWARD: reached again by LID, on out of return_path[3] */
	{ "C14-13:1 switch recv starting return DR part after LID-routed part", RECV_RET,
	  SW(7), DLID(2), HOPS(4, 3), FORWARD(4, 1) },
	/* DISCARD: a CA does not start a directed part for others */
	{ "C14-13:1 CA recv after LID-routed part", RECV_RET, CA(1), DLID(2), HOPS(4, 3),
	  DISCARD(4) },
	/* FORWARD: on out of return_path[2], nothing recorded */
	{ "C14-13:2 switch intermediate hop recv", RECV_RET, SW(7), HOPS(3, 3),
	  FORWARD(3, 2) },
	/* FORWARD: on out of return_path[1] */
	{ "C14-13:2 switch last intermediate hop recv", RECV_RET, SW(5), HOPS(2, 3),
	  FORWARD(2, 3) },
	/* DISCARD: a CA is never an intermediate hop */
	{ "C14-13:2 CA intermediate hop recv", RECV_RET, CA(1), HOPS(3, 3), DISCARD(3) },
	/* HANDLE: hop_ptr 1 -> 0, for the SM */
	{ "C14-13:3 CA recv at end of DR part, for SM", RECV_RET, CA(1), HOPS(1, 3),
	  HANDLE(0) },
	/* HANDLE: the same for an SM on a switch */
	{ "C14-13:3 switch recv at end of DR part, for SM", RECV_RET, SW(3), HOPS(1, 3),
	  HANDLE(0) },
	/* FORWARD: on by LID to DrSLID, hop_ptr kept for send */
	{ "C14-13:3 switch recv at end of DR part, on by LID", RECV_RET, SW(3), SLID(1),
	  HOPS(1, 3), FORWARD(1, 0) },
	/* DISCARD: a CA cannot route by LID to DrSLID */
	{ "C14-13:3 CA recv at end of DR part, DrSLID not permissive", RECV_RET, CA(1),
	  SLID(1), HOPS(1, 3), DISCARD(1) },
	/* HANDLE: hop_cnt 0 response, hop_ptr 1 -> 0 */
	{ "C14-13:3 CA recv hop_cnt 0 response", RECV_RET, CA(1), HOPS(1, 0), HANDLE(0) },
	/* HANDLE: the end of the final LID-routed part, for the SM */
	{ "C14-13:4 CA recv at end of final LID-routed part", RECV_RET, CA(1), SLID(1),
	  HOPS(0, 3), HANDLE(0) },
	/* HANDLE: the same for an SM on a switch */
	{ "C14-13:4 switch recv at end of final LID-routed part", RECV_RET, SW(3), SLID(10),
	  HOPS(0, 3), HANDLE(0) },
	/* DISCARD: hop_ptr beyond hop_cnt + 1 */
	{ "C14-13:5 recv, hop_ptr hop_cnt+2", RECV_RET, SW(7), HOPS(5, 3), DISCARD(5) },

	/* Malformed input: dropped, never trusted. */
	/* DISCARD: hop_cnt 64 (C14-6), though initial_path[1] matches */
	{ "C14-6 send, hop_cnt 64", SEND_OUT, CA(1), HOPS(0, 64), DISCARD(0) },
	/* DISCARD: hop_cnt 64 at an intermediate switch */
	{ "C14-6 recv, hop_cnt 64", RECV_OUT, SW(3), HOPS(1, 64), DISCARD(1) },
	/* DISCARD: hop_cnt 64 returning; return_path[64] is never read */
	{ "C14-6 returning send, hop_cnt 64", SEND_RET, SW(1), HOPS(65, 64), DISCARD(65) },
	/* DISCARD: hop_cnt 255 returning */
	{ "C14-6 returning recv, hop_cnt 255", RECV_RET, SW(7), HOPS(255, 255),
	  DISCARD(255) },
	/* DISCARD: hop_ptr 255 */
	{ "C14-9:5 recv, hop_ptr 255", RECV_OUT, CA(1), HOPS(255, 3), DISCARD(255) },
	/* DISCARD: hop_ptr 255 with hop_cnt 0 */
	{ "C14-13:5 send, hop_ptr 255 hop_cnt 0", SEND_RET, SW(0), HOPS(255, 0),
	  DISCARD(255) },
	/* DISCARD: initial_path[1] names port 0, whatever the node passes */
	{ "C14-9:1 send, initial_path[1] port 0", SEND_OUT, SW(0), IP(1, 0), HOPS(0, 3),
	  DISCARD(0) },
	/* DISCARD: initial_path[1] names a port beyond num_ports */
	{ "C14-9:1 send, initial_path[1] port 9 of 8", SEND_OUT, SW(9), IP(1, 9), HOPS(0, 3),
	  DISCARD(0) },
	/* DISCARD: a switch reached by LID cannot go out of port 0 */
	{ "C14-9:1 switch recv after LID-routed part, initial_path[1] port 0", RECV_OUT,
	  SW(3), SLID(1), IP(1, 0), HOPS(0, 3), DISCARD(0) },
	/* DISCARD: next port 0, nothing recorded */
	{ "C14-9:2 switch recv, initial_path[p+1] port 0", RECV_OUT, SW(3), IP(2, 0),
	  HOPS(1, 3), DISCARD(1) },
	/* DISCARD: next port beyond num_ports, nothing recorded */
	{ "C14-9:2 switch recv, initial_path[p+1] port 9 of 8", RECV_OUT, SW(3), IP(2, 9),
	  HOPS(1, 3), DISCARD(1) },
	/* DISCARD: the path names port 0 and the switch passes 0 */
	{ "C14-9:2 switch send, initial_path[p+1] port 0", SEND_OUT, SW(0), IP(2, 0),
	  HOPS(1, 3), DISCARD(1) },
	/* DISCARD: arrival on port 0 cannot be recorded */
	{ "C14-9:2 switch recv on port 0", RECV_OUT, SW(0), HOPS(1, 3), DISCARD(1) },
	/* DISCARD: arrival on a port the CA does not have */
	{ "C14-9:3 CA recv on port 3 of 2", RECV_OUT, CA(3), HOPS(3, 3), DISCARD(3) },
	/* DISCARD: return_path[3] names a port beyond num_ports */
	{ "C14-13:1 switch recv after LID-routed part, return_path[c] port 9 of 8",
	  RECV_RET, SW(7), DLID(2), RP(3, 9), HOPS(4, 3), DISCARD(4) },
	/* DISCARD: return_path[3] names port 0, whatever the node passes */
	{ "C14-13:1 send, return_path[c] port 0", SEND_RET, SW(0), RP(3, 0), HOPS(4, 3),
	  DISCARD(4) },
	/* DISCARD: next port 0 */
	{ "C14-13:2 switch recv, return_path[p-1] port 0", RECV_RET, SW(7), RP(2, 0),
	  HOPS(3, 3), DISCARD(3) },
	/* DISCARD: next port beyond num_ports */
	{ "C14-13:2 switch recv, return_path[p-1] port 9 of 8", RECV_RET, SW(7), RP(2, 9),
	  HOPS(3, 3), DISCARD(3) },
	/* DISCARD: the path names port 9 and the switch passes 9 */
	{ "C14-13:2 switch send, return_path[p-1] port 9 of 8", SEND_RET, SW(9), RP(2, 9),
	  HOPS(3, 3), DISCARD(3) },
	/* DISCARD: not a directed-route SMP */
	{ "LID-routed SMP send", SEND_OUT, LID_ROUTED, CA(1), HOPS(0, 3), DISCARD(0) },
	/* DISCARD: not a directed-route SMP */
	{ "LID-routed SMP recv", RECV_OUT, LID_ROUTED, SW(3), HOPS(1, 3), DISCARD(1) },

	/* The longest path, 63 hops: the last entries of both arrays. */
	/* FORWARD: return_path[62] = 3, on out of initial_path[63] = 8 */
	{ "C14-9:2 switch recv at hop 62 of 63", RECV_OUT, SW(3), HOPS(62, 63),
	  FORWARD(62, 8), REC(62) },
	/* HANDLE: hop_ptr 62 -> 63 out of initial_path[63] = 8 */
	{ "C14-9:2 switch send at hop 62 of 63", SEND_OUT, SW(8), HOPS(62, 63), HANDLE(63) },
	/* HANDLE: return_path[63] = 1, hop_ptr 63 -> 64 */
	{ "C14-9:3 CA recv at end of 63-hop DR part", RECV_OUT, CA(1), HOPS(63, 63),
	  HANDLE(64), REC(63) },
	/* HANDLE: hop_ptr 64 -> 63 out of return_path[63] = 3 */
	{ "C14-13:1 switch responder send on 63-hop path", SEND_RET, SW(3), HOPS(64, 63),
	  HANDLE(63) },
	/* FORWARD: reached again by LID, on out of return_path[63] = 3 */
	{ "C14-13:1 switch recv after LID-routed part on 63-hop path", RECV_RET, SW(7),
	  DLID(2), HOPS(64, 63), FORWARD(64, 3) },
};

static void kmad_smi_case_desc(const struct kmad_smi_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kmad_smi_step, kmad_smi_cases, kmad_smi_case_desc);

static void smi_fill_row(struct kmad_smp *smp, const struct kmad_smi_case *c)
{
	unsigned int i;

	memset(smp, 0, sizeof(*smp));
	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->mgmt_class = c->mgmt_class ?: KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = KMAD_SMP_CLASS_VERSION;
	smp->method = c->returning ? KMAD_METHOD_GET_RESP : KMAD_METHOD_GET;
	smp->status = cpu_to_be16(c->returning ? KMAD_SMP_DIRECTION : 0);
	smp->hop_ptr = c->hop_ptr;
	smp->hop_cnt = c->hop_cnt;
	smp->tid = cpu_to_be64(0x0000000100000002ULL);
	smp->attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	smp->dr_slid = cpu_to_be16(c->dr_slid ?: KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(c->dr_dlid ?: KMAD_PERMISSIVE_LID);
	for (i = 1; i < KMAD_SMP_DR_PATH_SIZE; i++) {
		smp->initial_path[i] = smi_test_initial(i);
		if (c->returning || i < c->hop_ptr)
			smp->return_path[i] = smi_test_return(i);
	}
	if (c->ip_idx)
		smp->initial_path[c->ip_idx] = c->ip_val;
	if (c->rp_idx)
		smp->return_path[c->rp_idx] = c->rp_val;
}

/* Expect: the row's action, hop_ptr and return path; nothing else changes. */
static void kmad_smi_step_test(struct kunit *test)
{
	const struct kmad_smi_case *c = test->param_value;
	const struct kmad_smi_node node = {
		.is_switch = c->is_switch,
		.port_num = c->port_num,
		.num_ports = c->num_ports,
	};
	struct kmad_smp *smp = smi_alloc_smp(test);
	struct kmad_smp *want = smi_alloc_smp(test);
	enum kmad_smi_action act;

	smi_fill_row(smp, c);
	memcpy(want, smp, sizeof(*want));
	want->hop_ptr = c->new_hop_ptr;
	if (c->rec_idx)
		want->return_path[c->rec_idx] = c->port_num;

	if (c->step == SMI_SEND)
		act = kmad_smi_send(smp, &node);
	else
		act = kmad_smi_recv(smp, &node);

	KUNIT_EXPECT_EQ(test, act, c->action);
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, c->new_hop_ptr);
	if (c->rec_idx)
		KUNIT_EXPECT_EQ(test, smp->return_path[c->rec_idx], c->port_num);
	smi_expect_same_smp(test, smp, want);
	if (c->action == KMAD_SMI_FORWARD)
		KUNIT_EXPECT_EQ(test, kmad_smi_out_port(smp), c->out_port);
}

/* ------------------------------------------------------------------ */
/* kmad_smi_out_port()                                                  */
/* ------------------------------------------------------------------ */

/**
 * struct kmad_smi_port_case - one kmad_smi_out_port() call
 * @name: the situation
 * @mgmt_class: MgmtClass; 0 for directed route
 * @returning: D bit
 * @hop_ptr: HopPointer
 * @hop_cnt: HopCount
 * @want: expected port, from the rows' paths
 */
struct kmad_smi_port_case {
	const char *name;
	u8 mgmt_class;
	bool returning;
	u8 hop_ptr;
	u8 hop_cnt;
	u8 want;
};

static const struct kmad_smi_port_case kmad_smi_port_cases[] = {
	/* initial_path[1] = 1 */
	{ "outgoing at originator", .hop_ptr = 0, .hop_cnt = 3, .want = 1 },
	/* initial_path[2] = 5 */
	{ "outgoing at intermediate hop", .hop_ptr = 1, .hop_cnt = 3, .want = 5 },
	/* initial_path[3] = 7 */
	{ "outgoing at last intermediate hop", .hop_ptr = 2, .hop_cnt = 3, .want = 7 },
	/* none: the directed part ends here */
	{ "outgoing at end of DR part", .hop_ptr = 3, .hop_cnt = 3, .want = 0 },
	/* none: beyond the directed part */
	{ "outgoing beyond DR part", .hop_ptr = 4, .hop_cnt = 3, .want = 0 },
	/* none: local SMA */
	{ "outgoing hop_cnt 0", .hop_ptr = 0, .hop_cnt = 0, .want = 0 },
	/* initial_path[63] = 8, the last entry */
	{ "outgoing at hop 62 of 63", .hop_ptr = 62, .hop_cnt = 63, .want = 8 },
	/* none: initial_path[64] does not exist */
	{ "outgoing at hop 63 of 63", .hop_ptr = 63, .hop_cnt = 63, .want = 0 },
	/* return_path[3] = 1 */
	{ "returning at responder", .returning = true, .hop_ptr = 4, .hop_cnt = 3,
	  .want = 1 },
	/* return_path[2] = 2 */
	{ "returning at intermediate hop", .returning = true, .hop_ptr = 3, .hop_cnt = 3,
	  .want = 2 },
	/* return_path[1] = 3 */
	{ "returning at last intermediate hop", .returning = true, .hop_ptr = 2,
	  .hop_cnt = 3, .want = 3 },
	/* none: the directed part ends here */
	{ "returning at end of DR part", .returning = true, .hop_ptr = 1, .hop_cnt = 3,
	  .want = 0 },
	/* none: beyond the directed part */
	{ "returning beyond DR part", .returning = true, .hop_ptr = 0, .hop_cnt = 3,
	  .want = 0 },
	/* none: local SM */
	{ "returning hop_cnt 0", .returning = true, .hop_ptr = 1, .hop_cnt = 0, .want = 0 },
	/* return_path[63] = 3, the last entry */
	{ "returning at responder of 63-hop path", .returning = true, .hop_ptr = 64,
	  .hop_cnt = 63, .want = 3 },
	/* none: hop_cnt 64 (C14-6) */
	{ "C14-6 outgoing hop_cnt 64", .hop_ptr = 0, .hop_cnt = 64, .want = 0 },
	/* none: hop_cnt 64, return_path[64] would be past the SMP */
	{ "C14-6 returning hop_cnt 64", .returning = true, .hop_ptr = 65, .hop_cnt = 64,
	  .want = 0 },
	/* none: hop_cnt 255 */
	{ "C14-6 returning hop_cnt 255", .returning = true, .hop_ptr = 255,
	  .hop_cnt = 255, .want = 0 },
	/* none: hop_ptr beyond hop_cnt + 1 */
	{ "C14-13:5 returning hop_ptr hop_cnt+2", .returning = true, .hop_ptr = 5,
	  .hop_cnt = 3, .want = 0 },
	/* none: not a directed-route SMP */
	{ "LID-routed SMP", .mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED, .hop_ptr = 0,
	  .hop_cnt = 3, .want = 0 },
};

static void kmad_smi_port_case_desc(const struct kmad_smi_port_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kmad_smi_out_port, kmad_smi_port_cases, kmad_smi_port_case_desc);

/* Expect: the row's port, and the SMP untouched. */
static void kmad_smi_out_port_test(struct kunit *test)
{
	const struct kmad_smi_port_case *c = test->param_value;
	const struct kmad_smi_case row = {
		.returning = c->returning,
		.mgmt_class = c->mgmt_class,
		.hop_ptr = c->hop_ptr,
		.hop_cnt = c->hop_cnt,
	};
	struct kmad_smp *smp = smi_alloc_smp(test);
	struct kmad_smp *want = smi_alloc_smp(test);

	smi_fill_row(smp, &row);
	memcpy(want, smp, sizeof(*want));
	KUNIT_EXPECT_EQ(test, kmad_smi_out_port(smp), c->want);
	smi_expect_same_smp(test, smp, want);
}

/* ------------------------------------------------------------------ */
/* kmad_smi_make_response()                                             */
/* ------------------------------------------------------------------ */

/**
 * struct kmad_smi_resp_case - a request turned into its response
 * @name: the rule the response's first step follows, and the situation
 * @mgmt_class: MgmtClass; 0 for directed route
 * @method: Method of the request
 * @status: Status of the request (host order)
 * @hop_ptr: HopPointer of the request
 * @hop_cnt: HopCount
 * @want_status: expected Status of the response (host order)
 * @want_hop_ptr: expected HopPointer of the response
 * @is_switch: the responder is a switch
 * @port_num: the port the responder sends the response out of
 * @send: expected kmad_smi_send() of the response
 * @send_hop_ptr: expected HopPointer after it
 */
struct kmad_smi_resp_case {
	const char *name;
	u8 mgmt_class;
	u8 method;
	u16 status;
	u8 hop_ptr;
	u8 hop_cnt;
	u16 want_status;
	u8 want_hop_ptr;
	bool is_switch;
	u8 port_num;
	enum kmad_smi_action send;
	u8 send_hop_ptr;
};

static const struct kmad_smi_resp_case kmad_smi_resp_cases[] = {
	/* D set, hop_ptr 4; the CA's send takes return_path[3], hop_ptr 3 */
	{ "C14-13:1 Get at end of 3-hop path", .method = KMAD_METHOD_GET,
	  .hop_ptr = 4, .hop_cnt = 3, .want_status = KMAD_SMP_DIRECTION,
	  .want_hop_ptr = 4, .port_num = 1, .send = KMAD_SMI_HANDLE, .send_hop_ptr = 3 },
	/* the same for Set */
	{ "C14-13:1 Set at end of 3-hop path", .method = KMAD_METHOD_SET,
	  .hop_ptr = 4, .hop_cnt = 3, .want_status = KMAD_SMP_DIRECTION,
	  .want_hop_ptr = 4, .port_num = 1, .send = KMAD_SMI_HANDLE, .send_hop_ptr = 3 },
	/* the other Status bits stay */
	{ "C14-13:1 Get keeps Status bits", .method = KMAD_METHOD_GET, .status = 0x001C,
	  .hop_ptr = 4, .hop_cnt = 3, .want_status = KMAD_SMP_DIRECTION | 0x001C,
	  .want_hop_ptr = 4, .port_num = 1, .send = KMAD_SMI_HANDLE, .send_hop_ptr = 3 },
	/* hop_ptr left at hop_cnt becomes hop_cnt + 1 */
	{ "C14-13:1 Get with hop_ptr at hop_cnt", .method = KMAD_METHOD_GET,
	  .hop_ptr = 3, .hop_cnt = 3, .want_status = KMAD_SMP_DIRECTION,
	  .want_hop_ptr = 4, .port_num = 1, .send = KMAD_SMI_HANDLE, .send_hop_ptr = 3 },
	/* hop_cnt 0: hop_ptr 1; the send goes to the local SM, hop_ptr 0 */
	{ "C14-13:3 Get at local SMA", .method = KMAD_METHOD_GET, .hop_ptr = 1,
	  .hop_cnt = 0, .want_status = KMAD_SMP_DIRECTION, .want_hop_ptr = 1,
	  .port_num = 1, .send = KMAD_SMI_HANDLE, .send_hop_ptr = 0 },
	/* 63 hops: hop_ptr 64; the switch's send takes return_path[63] = 3 */
	{ "C14-13:1 Get at end of 63-hop path", .method = KMAD_METHOD_GET,
	  .hop_ptr = 64, .hop_cnt = 63, .want_status = KMAD_SMP_DIRECTION,
	  .want_hop_ptr = 64, .is_switch = true, .port_num = 3, .send = KMAD_SMI_HANDLE,
	  .send_hop_ptr = 63 },
	/* hop_cnt 64: hop_ptr kept, the send discards */
	{ "C14-6 Get with hop_cnt 64", .method = KMAD_METHOD_GET, .hop_ptr = 0,
	  .hop_cnt = 64, .want_status = KMAD_SMP_DIRECTION, .want_hop_ptr = 0,
	  .port_num = 1, .send = KMAD_SMI_DISCARD, .send_hop_ptr = 0 },
	/* LID-routed: GetResp only, no D bit, hop fields untouched */
	{ "LID-routed Get", .mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
	  .method = KMAD_METHOD_GET, .hop_ptr = 7, .hop_cnt = 9, .want_status = 0,
	  .want_hop_ptr = 7, .port_num = 1, .send = KMAD_SMI_DISCARD, .send_hop_ptr = 7 },
};

static void kmad_smi_resp_case_desc(const struct kmad_smi_resp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kmad_smi_response, kmad_smi_resp_cases, kmad_smi_resp_case_desc);

/*
 * Expect: GetResp, the row's Status and hop_ptr, the rest of the SMP kept;
 * then the responder's first kmad_smi_send() gives the row's outcome.
 */
static void kmad_smi_response_test(struct kunit *test)
{
	const struct kmad_smi_resp_case *c = test->param_value;
	const struct kmad_smi_case row = {
		.returning = true,
		.mgmt_class = c->mgmt_class,
		.hop_ptr = c->hop_ptr,
		.hop_cnt = c->hop_cnt,
	};
	const struct kmad_smi_node node = {
		.is_switch = c->is_switch,
		.port_num = c->port_num,
		.num_ports = c->is_switch ? SMI_SW_PORTS : SMI_CA_PORTS,
	};
	struct kmad_smp *smp = smi_alloc_smp(test);
	struct kmad_smp *want = smi_alloc_smp(test);

	/* A request: full paths (as recorded), D clear. */
	smi_fill_row(smp, &row);
	smp->method = c->method;
	smp->status = cpu_to_be16(c->status);
	memcpy(want, smp, sizeof(*want));
	want->method = KMAD_METHOD_GET_RESP;
	want->status = cpu_to_be16(c->want_status);
	want->hop_ptr = c->want_hop_ptr;

	kmad_smi_make_response(smp);
	KUNIT_EXPECT_EQ(test, smp->method, KMAD_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(smp->status), c->want_status);
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, c->want_hop_ptr);
	KUNIT_EXPECT_EQ(test, smp->hop_cnt, c->hop_cnt);
	smi_expect_same_smp(test, smp, want);

	KUNIT_EXPECT_EQ(test, kmad_smi_send(smp, &node), c->send);
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, c->send_hop_ptr);
}

/* ------------------------------------------------------------------ */
/* Whole paths over the model fabric.                                   */
/* ------------------------------------------------------------------ */

enum smi_fab_id {
	FAB_A,
	FAB_SW1,
	FAB_SW2,
	FAB_B,
	FAB_NODES,
};

/* The peer of a port; @port 0: not connected. */
struct smi_fab_link {
	u8 node;
	u8 port;
};

/* One forwarding-table entry: LID-routed packets to @lid leave by @port. */
struct smi_fab_route {
	u16 lid;
	u8 port;
};

struct smi_fab_node {
	const char *name;
	bool is_switch;
	u16 lid;
	u8 num_ports;
	struct smi_fab_link link[SMI_SW_PORTS + 1];
	struct smi_fab_route lft[FAB_NODES - 1];
};

static const struct smi_fab_node smi_fab[FAB_NODES] = {
	[FAB_A] = {
		.name = "A", .lid = 1, .num_ports = SMI_CA_PORTS,
		.link[1] = { FAB_SW1, 3 },
		.lft = { { 2, 1 }, { 10, 1 }, { 20, 1 } },
	},
	[FAB_SW1] = {
		.name = "SW1", .is_switch = true, .lid = 10, .num_ports = SMI_SW_PORTS,
		.link[3] = { FAB_A, 1 },
		.link[5] = { FAB_SW2, 2 },
		.lft = { { 1, 3 }, { 2, 5 }, { 20, 5 } },
	},
	[FAB_SW2] = {
		.name = "SW2", .is_switch = true, .lid = 20, .num_ports = SMI_SW_PORTS,
		.link[2] = { FAB_SW1, 5 },
		.link[7] = { FAB_B, 1 },
		.lft = { { 1, 2 }, { 2, 7 }, { 10, 2 } },
	},
	[FAB_B] = {
		.name = "B", .lid = 2, .num_ports = SMI_CA_PORTS,
		.link[1] = { FAB_SW2, 7 },
		.lft = { { 1, 1 }, { 10, 1 }, { 20, 1 } },
	},
};

static u8 smi_fab_lft(enum smi_fab_id id, u16 lid)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(smi_fab[id].lft); i++)
		if (smi_fab[id].lft[i].lid == lid)
			return smi_fab[id].lft[i].port;
	return 0;
}

/**
 * struct smi_fab_result - where a walk ended
 * @action: %KMAD_SMI_HANDLE or %KMAD_SMI_DISCARD (also for a packet lost
 *	on a port with no link)
 * @node: the node that handled or dropped the SMP
 * @slid: LRH SLID of the packet that brought it there
 * @trace: the nodes visited, for failure messages
 */
struct smi_fab_result {
	enum kmad_smi_action action;
	enum smi_fab_id node;
	u16 slid;
	char trace[128];
};

#define SMI_FAB_MAX_STEPS	32

enum smi_fab_state {
	FAB_SEND,	/* the send side at the current node */
	FAB_XMIT,	/* on the wire out of the current node's port */
	FAB_ARRIVE,	/* arrived at the current node's port */
};

static void smi_fab_end(struct smi_fab_result *res, enum kmad_smi_action act,
			enum smi_fab_id at, u16 slid)
{
	res->action = act;
	res->node = at;
	res->slid = slid;
}

/*
 * Carry @smp from @origin until some node handles or drops it, as the
 * simulated fabric does.  @first_dlid is the LID the origin sends to when
 * the SMP starts with a LID-routed part, else the permissive LID.  Nodes
 * along a LID-routed part pass the packet on untouched; a node the packet
 * is addressed to calls kmad_smi_recv(), and on FORWARD the send side,
 * kmad_smi_out_port() then kmad_smi_send().
 */
static void smi_fab_walk(struct kunit *test, struct kmad_smp *smp,
			 enum smi_fab_id origin, u16 first_dlid,
			 struct smi_fab_result *res)
{
	enum smi_fab_state state = FAB_SEND;
	enum smi_fab_id at = origin;
	u16 dlid = KMAD_PERMISSIVE_LID;
	u16 slid = KMAD_PERMISSIVE_LID;
	size_t len = 0;
	unsigned int steps;
	u8 port = 0;

	res->trace[0] = '\0';
	if (first_dlid != KMAD_PERMISSIVE_LID) {
		/* The initial LID-routed part: no SMI step at the origin. */
		dlid = first_dlid;
		slid = smi_fab[origin].lid;
		port = smi_fab_lft(origin, dlid);
		state = FAB_XMIT;
	}

	for (steps = 0; steps < SMI_FAB_MAX_STEPS; steps++) {
		const struct smi_fab_node *n = &smi_fab[at];
		struct kmad_smi_node sn = {
			.is_switch = n->is_switch,
			.num_ports = n->num_ports,
		};
		enum kmad_smi_action act;
		u16 next_lid;
		u8 out;

		switch (state) {
		case FAB_SEND:
			out = kmad_smi_out_port(smp);
			next_lid = be16_to_cpu(kmad_smp_is_returning(smp) ?
					       smp->dr_slid : smp->dr_dlid);
			port = out;
			if (!out && next_lid != KMAD_PERMISSIVE_LID)
				port = smi_fab_lft(at, next_lid);
			sn.port_num = port;
			act = kmad_smi_send(smp, &sn);
			if (act == KMAD_SMI_DISCARD) {
				smi_fab_end(res, act, at, slid);
				return;
			}
			KUNIT_EXPECT_EQ(test, act, KMAD_SMI_HANDLE);
			if (out) {
				dlid = KMAD_PERMISSIVE_LID;
				slid = KMAD_PERMISSIVE_LID;
				state = FAB_XMIT;
			} else if (next_lid == KMAD_PERMISSIVE_LID) {
				/* Local delivery: no port, no wire. */
				dlid = KMAD_PERMISSIVE_LID;
				port = 0;
				state = FAB_ARRIVE;
			} else {
				dlid = next_lid;
				slid = n->lid;
				state = FAB_XMIT;
			}
			break;
		case FAB_XMIT:
			if (!port || port > n->num_ports || !n->link[port].port) {
				smi_fab_end(res, KMAD_SMI_DISCARD, at, slid);
				return;
			}
			at = n->link[port].node;
			port = n->link[port].port;
			state = FAB_ARRIVE;
			break;
		case FAB_ARRIVE:
			len += scnprintf(res->trace + len, sizeof(res->trace) - len,
					 "%s%s", len ? ">" : "", n->name);
			if (dlid != KMAD_PERMISSIVE_LID && dlid != n->lid) {
				/* Passing through a LID-routed part. */
				if (!n->is_switch) {
					smi_fab_end(res, KMAD_SMI_DISCARD, at, slid);
					return;
				}
				port = smi_fab_lft(at, dlid);
				state = FAB_XMIT;
				break;
			}
			sn.port_num = port;
			act = kmad_smi_recv(smp, &sn);
			if (act != KMAD_SMI_FORWARD) {
				smi_fab_end(res, act, at, slid);
				return;
			}
			state = FAB_SEND;
			break;
		}
	}
	KUNIT_FAIL(test, "SMP still travelling after %d steps: %s",
		   SMI_FAB_MAX_STEPS, res->trace);
	smi_fab_end(res, KMAD_SMI_DISCARD, at, slid);
}

/**
 * struct kmad_smi_walk_case - a request from A over the model fabric
 * @name: the path
 * @hop_cnt: HopCount
 * @initial_path: InitialPath, entries 1..@hop_cnt
 * @dr_start: LID of the switch where the directed part starts, reached
 *	from A by LID (DrSLID is then A's LID); 0: it starts at A
 * @dr_dlid: DrDLID; 0 for the permissive LID
 * @action: expected end of the request's walk
 * @node: where it ends
 * @return_path: for %KMAD_SMI_HANDLE, expected ReturnPath 1..@hop_cnt at
 *	@node; the response must then come back to A with hop_ptr 0
 */
struct kmad_smi_walk_case {
	const char *name;
	u8 hop_cnt;
	u8 initial_path[8];
	u16 dr_start;
	u16 dr_dlid;
	enum kmad_smi_action action;
	enum smi_fab_id node;
	u8 return_path[8];
};

static const struct kmad_smi_walk_case kmad_smi_walk_cases[] = {
	/* HANDLE at B, return path 3, 2, 1; the response reaches A */
	{ "walk A to B through SW1 and SW2 and back", 3, { 0, 1, 5, 7 }, 0, 0,
	  KMAD_SMI_HANDLE, FAB_B, { 0, 3, 2, 1 } },
	/* HANDLE at A itself; the response reaches A's SM */
	{ "walk hop_cnt 0 to local SMA and back", 0, { 0 }, 0, 0,
	  KMAD_SMI_HANDLE, FAB_A, { 0 } },
	/* HANDLE at SW1's SMA, return path 3 */
	{ "walk one hop to SW1 SMA and back", 1, { 0, 1 }, 0, 0,
	  KMAD_SMI_HANDLE, FAB_SW1, { 0, 3 } },
	/* HANDLE at SW2's SMA, return path 3, 2 */
	{ "walk two hops to SW2 SMA and back", 2, { 0, 1, 5 }, 0, 0,
	  KMAD_SMI_HANDLE, FAB_SW2, { 0, 3, 2 } },
	/* HANDLE at B, return path 2, 1; back to SW1 directed, then to A by LID */
	{ "walk by LID to SW1 then directed to B and back", 2, { 0, 5, 7 }, 10, 0,
	  KMAD_SMI_HANDLE, FAB_B, { 0, 2, 1 } },
	/* HANDLE at SW1's SMA reached by LID; the response goes to A by LID */
	{ "walk by LID to SW1 SMA hop_cnt 0 and back", 0, { 0 }, 10, 0,
	  KMAD_SMI_HANDLE, FAB_SW1, { 0 } },
	/* HANDLE at B, return path 3, 2; the response goes to SW2 by LID first */
	{ "walk directed to SW2 then by LID to B and back", 2, { 0, 1, 5 }, 0, 2,
	  KMAD_SMI_HANDLE, FAB_B, { 0, 3, 2 } },
	/* HANDLE at B, return path 2; LID-routed at both ends both ways */
	{ "walk by LID to SW1 directed to SW2 by LID to B and back", 1, { 0, 5 }, 10, 2,
	  KMAD_SMI_HANDLE, FAB_B, { 0, 2 } },
	/* HANDLE at SW2's SMA, reached by LID from SW1 */
	{ "walk directed to SW1 then by LID to SW2 SMA and back", 1, { 0, 1 }, 0, 20,
	  KMAD_SMI_HANDLE, FAB_SW2, { 0, 3 } },
	/* DISCARD at A: the path turns back at SW1 and makes A a relay */
	{ "walk through a CA as intermediate hop", 3, { 0, 1, 3, 1 }, 0, 0,
	  KMAD_SMI_DISCARD, FAB_A },
	/* DISCARD at SW1: the path names port 0 */
	{ "walk with initial_path port 0", 2, { 0, 1, 0 }, 0, 0,
	  KMAD_SMI_DISCARD, FAB_SW1 },
	/* DISCARD at SW1: the path names port 9 of 8 */
	{ "walk with initial_path port 9 of 8", 2, { 0, 1, 9 }, 0, 0,
	  KMAD_SMI_DISCARD, FAB_SW1 },
	/* DISCARD at B: a CA at the end of the directed part cannot route by LID */
	{ "walk ending at CA with DrDLID not permissive", 3, { 0, 1, 5, 7 }, 0, 20,
	  KMAD_SMI_DISCARD, FAB_B },
};

static void kmad_smi_walk_case_desc(const struct kmad_smi_walk_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(kmad_smi_walk, kmad_smi_walk_cases, kmad_smi_walk_case_desc);

/*
 * Expect: the request ends as the row says; if handled, with hop_ptr
 * hop_cnt + 1 and the row's return path, and its response, sent back the
 * way IBTA says, reaches A's SM with hop_ptr 0 and both paths unchanged.
 */
static void kmad_smi_walk_test(struct kunit *test)
{
	const struct kmad_smi_walk_case *c = test->param_value;
	struct kmad_smp *smp = smi_alloc_smp(test);
	struct kmad_smp *paths = smi_alloc_smp(test);
	struct smi_fab_result res;
	u16 first;

	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = KMAD_SMP_CLASS_VERSION;
	smp->method = KMAD_METHOD_GET;
	smp->hop_cnt = c->hop_cnt;
	smp->tid = cpu_to_be64(0x0000000100000003ULL);
	smp->attr_id = cpu_to_be16(KMAD_SMP_ATTR_NODE_INFO);
	smp->dr_slid = cpu_to_be16(c->dr_start ? smi_fab[FAB_A].lid : KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(c->dr_dlid ?: KMAD_PERMISSIVE_LID);
	memcpy(smp->initial_path, c->initial_path, sizeof(c->initial_path));

	first = c->dr_start ?: KMAD_PERMISSIVE_LID;
	smi_fab_walk(test, smp, FAB_A, first, &res);
	KUNIT_EXPECT_EQ_MSG(test, res.action, c->action, "request: %s", res.trace);
	KUNIT_EXPECT_EQ_MSG(test, res.node, c->node, "request: %s", res.trace);
	if (c->action != KMAD_SMI_HANDLE || res.action != KMAD_SMI_HANDLE)
		return;
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, c->hop_cnt + 1);
	KUNIT_EXPECT_EQ(test, memcmp(smp->return_path, c->return_path,
				     sizeof(c->return_path)), 0);

	/* The responder answers; a response starts by LID if DrDLID says so. */
	kmad_smi_make_response(smp);
	memcpy(paths, smp, sizeof(*paths));
	first = c->dr_dlid ? res.slid : KMAD_PERMISSIVE_LID;
	smi_fab_walk(test, smp, res.node, first, &res);
	KUNIT_EXPECT_EQ_MSG(test, res.action, KMAD_SMI_HANDLE, "response: %s", res.trace);
	KUNIT_EXPECT_EQ_MSG(test, res.node, FAB_A, "response: %s", res.trace);
	KUNIT_EXPECT_EQ(test, smp->hop_ptr, 0);
	paths->hop_ptr = 0;
	smi_expect_same_smp(test, smp, paths);
}

static struct kunit_case kmad_smi_test_cases[] = {
	KUNIT_CASE_PARAM(kmad_smi_step_test, kmad_smi_step_gen_params),
	KUNIT_CASE_PARAM(kmad_smi_out_port_test, kmad_smi_out_port_gen_params),
	KUNIT_CASE_PARAM(kmad_smi_response_test, kmad_smi_response_gen_params),
	KUNIT_CASE_PARAM(kmad_smi_walk_test, kmad_smi_walk_gen_params),
	{}
};

static struct kunit_suite kmad_smi_suite = {
	.name = "kmad_smi",
	.test_cases = kmad_smi_test_cases,
};

kunit_test_suites(&kmad_smi_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests for kmad directed-route SMP hop-pointer processing");
