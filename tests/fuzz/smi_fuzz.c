// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target "smi": drivers/kmad/smi.c, built unchanged in user
 * space (tests/fuzz/compat/ stands in for the kernel headers).
 *
 * Input layout (shorter inputs are padded with zeros):
 *
 *   byte 0      flags: bit 0 the node is a switch; the round trip's
 *               bit 1 DrSLID permissive, bit 2 DrDLID permissive, bit 3
 *               node 0 a switch, bit 4 node HopCount a switch, bit 5 node
 *               (byte 1 mod (HopCount + 1)) of the other kind
 *   byte 1      the node's port_num
 *   byte 2      the node's num_ports (also every round-trip node's)
 *   bytes 3-258 the SMP, any 256 bytes
 *   then        up to 16 steps of 3 bytes: op (bits 0-1: recv, send,
 *               out_port, make_response; bit 2: a switch), port_num,
 *               num_ports
 *
 * Every call is made on an SMP in a heap block of exactly 256 bytes (ASan
 * sees a read past it; UBSan's bounds check sees an index past a path
 * array) and compared with a model of the rule tables at the top of
 * smi.c: the action it returns and every byte of the SMP after it must
 * be the model's.  Beside the model, whatever the SMP holds:
 *
 * - HopCount never changes; HopPointer stays within 0..HopCount + 1 when
 *   it started there; a DISCARD leaves the SMP unchanged; only HopPointer,
 *   one ReturnPath entry, Method and the D bit ever change;
 * - kmad_smi_send() never says FORWARD; FORWARD comes from switches only,
 *   and then kmad_smi_out_port() is 0 or a port of the node, and
 *   kmad_smi_send() out of that port (any port if 0) says HANDLE;
 * - a HANDLE on receipt leaves HopPointer at HopCount + 1 (outgoing) or 0
 *   (returning).
 *
 * The four calls run once each on the input SMP, then the steps in order
 * on one working copy.  Last, a round trip over a path of HopCount + 1
 * nodes, as smi.h says nodes use the functions: the request follows
 * InitialPath, arriving on the ports the input's ReturnPath lists,
 * reaches its destination with HopPointer HopCount + 1 and those ports
 * recorded, and its response made by kmad_smi_make_response() comes back
 * to the requester with HopPointer 0, all other bytes as they were.  The
 * trip must succeed exactly when every path and arrival port is a port of
 * its node and every node that must be a switch is one (the intermediate
 * ones; node 0 under a LID-routed start; the last node before a LID-routed
 * end); otherwise some node must discard it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kmad/smi.h>
#include <kmad/wire.h>

#define FUZZ_ASSERT(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "smi_fuzz: %s:%d: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		abort();						\
	}								\
} while (0)

#define SMP_OFFSET	3
#define STEP_SIZE	3
#define MAX_STEPS	16
#define PERMISSIVE	0xFFFF
#define D_BIT		0x80	/* in byte 4 of the MAD: Status bit 15 */

enum { OP_RECV, OP_SEND, OP_OUT_PORT, OP_MAKE_RESPONSE };

static u16 lid(__be16 v)
{
	return be16_to_cpu(v);
}

static bool returning(const struct kmad_smp *s)
{
	return ((const u8 *)s)[4] & D_BIT;
}

/* The model ---------------------------------------------------------- */

static bool m_hops_ok(const struct kmad_smp *s)
{
	return s->mgmt_class == 0x81 && s->hop_cnt <= 63 &&
	       s->hop_ptr <= s->hop_cnt + 1;
}

static bool m_port_ok(const struct kmad_smi_node *n, unsigned int port)
{
	return port >= 1 && port <= n->num_ports;
}

static u8 model_out_port(const struct kmad_smp *s)
{
	unsigned int p = s->hop_ptr;

	if (!m_hops_ok(s))
		return 0;
	if (returning(s))
		return p >= 2 ? s->return_path[p - 1] : 0;
	return p < s->hop_cnt ? s->initial_path[p + 1] : 0;
}

/* kmad_smi_send(): the "send" columns; @w gets the SMP after it. */
static enum kmad_smi_action model_send(const struct kmad_smp *s,
				       const struct kmad_smi_node *n,
				       struct kmad_smp *w)
{
	unsigned int p = s->hop_ptr, c = s->hop_cnt, port = n->port_num;
	bool sw = n->is_switch;

	*w = *s;
	if (!m_hops_ok(s))
		return KMAD_SMI_DISCARD;
	if (!returning(s)) {
		if (p < c) {		/* C14-9:1, C14-9:2 */
			if ((p > 0 && !sw) || !m_port_ok(n, port) ||
			    s->initial_path[p + 1] != port)
				return KMAD_SMI_DISCARD;
		} else if (p == c) {	/* C14-9:3 */
			if (!sw && lid(s->dr_dlid) != PERMISSIVE)
				return KMAD_SMI_DISCARD;
		} else {		/* C14-9:4 */
			return KMAD_SMI_HANDLE;
		}
		w->hop_ptr = p + 1;
		return KMAD_SMI_HANDLE;
	}
	if (p >= 2) {			/* C14-13:1, C14-13:2 */
		if ((p <= c && !sw) || !m_port_ok(n, port) ||
		    s->return_path[p - 1] != port)
			return KMAD_SMI_DISCARD;
	} else if (p == 1) {		/* C14-13:3 */
		if (!sw && lid(s->dr_slid) != PERMISSIVE)
			return KMAD_SMI_DISCARD;
	} else {			/* C14-13:4 */
		return KMAD_SMI_HANDLE;
	}
	w->hop_ptr = p - 1;
	return KMAD_SMI_HANDLE;
}

/* kmad_smi_recv(): the "recv" columns; @w gets the SMP after it. */
static enum kmad_smi_action model_recv(const struct kmad_smp *s,
				       const struct kmad_smi_node *n,
				       struct kmad_smp *w)
{
	unsigned int p = s->hop_ptr, c = s->hop_cnt, port = n->port_num;
	bool sw = n->is_switch;
	bool slid_perm = lid(s->dr_slid) == PERMISSIVE;
	bool dlid_perm = lid(s->dr_dlid) == PERMISSIVE;

	*w = *s;
	if (!m_hops_ok(s))
		return KMAD_SMI_DISCARD;
	if (!returning(s)) {
		if (p == 0 && c > 0)	/* C14-9:1 */
			return sw && !slid_perm &&
			       m_port_ok(n, s->initial_path[1]) ?
			       KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
		if (p < c) {		/* C14-9:2 */
			if (!sw || !m_port_ok(n, port) ||
			    !m_port_ok(n, s->initial_path[p + 1]))
				return KMAD_SMI_DISCARD;
			w->return_path[p] = port;
			return KMAD_SMI_FORWARD;
		}
		if (p == c) {		/* C14-9:3 */
			if (!dlid_perm && !sw)
				return KMAD_SMI_DISCARD;
			if (c > 0 && !m_port_ok(n, port))
				return KMAD_SMI_DISCARD;
			if (c > 0)
				w->return_path[c] = port;
			if (!dlid_perm)
				return KMAD_SMI_FORWARD;
			w->hop_ptr = c + 1;
			return KMAD_SMI_HANDLE;
		}
		return KMAD_SMI_HANDLE;	/* C14-9:4 */
	}
	if (c > 0 && p == c + 1)	/* C14-13:1 */
		return sw && !dlid_perm && m_port_ok(n, s->return_path[c]) ?
		       KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	if (p >= 2)			/* C14-13:2 */
		return sw && m_port_ok(n, s->return_path[p - 1]) ?
		       KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	if (p == 1) {			/* C14-13:3 */
		if (slid_perm) {
			w->hop_ptr = 0;
			return KMAD_SMI_HANDLE;
		}
		return sw ? KMAD_SMI_FORWARD : KMAD_SMI_DISCARD;
	}
	return KMAD_SMI_HANDLE;		/* C14-13:4 */
}

/* kmad_smi_make_response(), as its kernel-doc says. */
static void model_make_response(const struct kmad_smp *s, struct kmad_smp *w)
{
	*w = *s;
	w->method = KMAD_METHOD_GET_RESP;
	if (s->mgmt_class != 0x81)
		return;
	((u8 *)w)[4] |= D_BIT;
	if (s->hop_cnt <= 63)
		w->hop_ptr = s->hop_cnt + 1;
}

/* The calls, each checked -------------------------------------------- */

static const char *const action_names[] = { "DISCARD", "HANDLE", "FORWARD" };

static void dump(const char *what, const struct kmad_smp *s,
		 const struct kmad_smi_node *n)
{
	fprintf(stderr, "smi_fuzz: %s: class 0x%02x D %d", what, s->mgmt_class,
		returning(s));
	fprintf(stderr, " hop_ptr %u hop_cnt %u", s->hop_ptr, s->hop_cnt);
	fprintf(stderr, " dr_slid 0x%04x dr_dlid 0x%04x", lid(s->dr_slid),
		lid(s->dr_dlid));
	if (n)
		fprintf(stderr, "; node %s port %u of %u",
			n->is_switch ? "switch" : "CA", n->port_num,
			n->num_ports);
	fputc('\n', stderr);
}

/* What holds for every call, model or not: see the top. */
static void check_common(const struct kmad_smp *before,
			 const struct kmad_smp *after)
{
	const u8 *b = (const u8 *)before, *a = (const u8 *)after;
	size_t rp = offsetof(struct kmad_smp, return_path), i;
	unsigned int changed_rp = 0;

	FUZZ_ASSERT(after->hop_cnt == before->hop_cnt);
	if (m_hops_ok(before))
		FUZZ_ASSERT(after->hop_ptr <= after->hop_cnt + 1);
	/* bytes 0-2, 4 but for D, 5, 7-191 (3 is Method, 6 HopPointer) */
	FUZZ_ASSERT(memcmp(a, b, 3) == 0);
	FUZZ_ASSERT(((a[4] ^ b[4]) & ~D_BIT) == 0 && a[5] == b[5]);
	FUZZ_ASSERT(memcmp(a + 7, b + 7, rp - 7) == 0);
	if (memcmp(a + rp, b + rp, KMAD_SMP_DR_PATH_SIZE) == 0)
		return;
	for (i = rp; i < KMAD_MAD_SIZE; i++)
		changed_rp += a[i] != b[i];
	FUZZ_ASSERT(changed_rp <= 1);
}

static void check_model(const char *fn, const struct kmad_smp *before,
			const struct kmad_smi_node *n,
			enum kmad_smi_action got, const struct kmad_smp *after,
			enum kmad_smi_action want, const struct kmad_smp *w)
{
	if (got == want && memcmp(after, w, sizeof(*w)) == 0)
		return;
	dump(fn, before, n);
	fprintf(stderr, "  returned %s, model %s\n",
		got <= 2 ? action_names[got] : "?", action_names[want]);
	fprintf(stderr, "  after: hop_ptr %u (model %u)%s\n",
		after->hop_ptr, w->hop_ptr,
		memcmp(after, w, sizeof(*w)) ? ", bytes differ" : "");
	FUZZ_ASSERT(got == want && memcmp(after, w, sizeof(*w)) == 0);
}

static enum kmad_smi_action do_send(struct kmad_smp *s,
				    const struct kmad_smi_node *n)
{
	struct kmad_smp before = *s, w;
	enum kmad_smi_action want = model_send(s, n, &w);
	enum kmad_smi_action got = kmad_smi_send(s, n);

	check_common(&before, s);
	FUZZ_ASSERT(got == KMAD_SMI_DISCARD || got == KMAD_SMI_HANDLE);
	if (got == KMAD_SMI_DISCARD)
		FUZZ_ASSERT(memcmp(&before, s, sizeof(before)) == 0);
	check_model("kmad_smi_send", &before, n, got, s, want, &w);
	return got;
}

static u8 do_out_port(const struct kmad_smp *s)
{
	struct kmad_smp before = *s;
	u8 port = kmad_smi_out_port(s);

	FUZZ_ASSERT(memcmp(&before, s, sizeof(before)) == 0);
	if (port != model_out_port(s)) {
		dump("kmad_smi_out_port", s, NULL);
		fprintf(stderr, "  returned %u, model %u\n", port,
			model_out_port(s));
		FUZZ_ASSERT(0);
	}
	return port;
}

static enum kmad_smi_action do_recv(struct kmad_smp *s,
				    const struct kmad_smi_node *n)
{
	struct kmad_smp before = *s, w;
	enum kmad_smi_action want = model_recv(s, n, &w);
	enum kmad_smi_action got = kmad_smi_recv(s, n);

	check_common(&before, s);
	FUZZ_ASSERT(got <= KMAD_SMI_FORWARD);
	if (got == KMAD_SMI_DISCARD)
		FUZZ_ASSERT(memcmp(&before, s, sizeof(before)) == 0);
	if (got == KMAD_SMI_HANDLE)
		FUZZ_ASSERT(s->hop_ptr ==
			    (returning(s) ? 0 : s->hop_cnt + 1));
	check_model("kmad_smi_recv", &before, n, got, s, want, &w);
	if (got == KMAD_SMI_FORWARD) {
		/* a switch, and the send that follows goes out */
		struct kmad_smp next = *s;
		struct kmad_smi_node fwd = *n;
		u8 port = do_out_port(s);

		FUZZ_ASSERT(n->is_switch);
		FUZZ_ASSERT(port == 0 || m_port_ok(n, port));
		fwd.port_num = port ? port : n->port_num;
		FUZZ_ASSERT(do_send(&next, &fwd) == KMAD_SMI_HANDLE);
	}
	return got;
}

static void do_make_response(struct kmad_smp *s)
{
	struct kmad_smp before = *s, w;

	model_make_response(s, &w);
	kmad_smi_make_response(s);
	check_common(&before, s);
	if (memcmp(s, &w, sizeof(w))) {
		dump("kmad_smi_make_response", &before, NULL);
		FUZZ_ASSERT(memcmp(s, &w, sizeof(w)) == 0);
	}
}

static void do_op(struct kmad_smp *s, unsigned int op,
		  const struct kmad_smi_node *n)
{
	switch (op) {
	case OP_RECV:
		do_recv(s, n);
		break;
	case OP_SEND:
		do_send(s, n);
		break;
	case OP_OUT_PORT:
		do_out_port(s);
		break;
	default:
		do_make_response(s);
		break;
	}
}

/* The round trip ----------------------------------------------------- */

#define REQUESTER	(-1)
#define RESPONDER	(KMAD_SMP_DR_PATH_SIZE)
#define DISCARDED	(-2)

struct trip {
	struct kmad_smp *smp;
	unsigned int c;			/* HopCount */
	u8 n;				/* ports per node */
	u8 in_port[KMAD_SMP_DR_PATH_SIZE];	/* node i arrives on */
	bool sw[KMAD_SMP_DR_PATH_SIZE];
	bool slid_perm, dlid_perm;
};

static struct kmad_smi_node trip_node(const struct trip *t, int at, u8 port)
{
	struct kmad_smi_node n = { .port_num = port, .num_ports = t->n };

	if (at == REQUESTER || at == RESPONDER)
		n.num_ports = 1;	/* a CA reached by LID */
	else
		n.is_switch = t->sw[at];
	return n;
}

/*
 * One direction, from the node that starts it until a node takes the SMP
 * in; returns that node (0..c, REQUESTER or RESPONDER) or DISCARDED.
 */
static int trip_leg(struct trip *t, bool back)
{
	struct kmad_smp *s = t->smp;
	bool lid_first = back ? !t->dlid_perm : !t->slid_perm;
	bool lid_last = back ? !t->slid_perm : !t->dlid_perm;
	int at = back ? (int)t->c : 0, end = back ? REQUESTER : RESPONDER;
	bool arrived = lid_first;	/* by LID: kmad_smi_recv() first */
	u8 in = 1;			/* the port it arrived on */
	struct kmad_smi_node n;
	enum kmad_smi_action act;
	unsigned int hops;

	for (hops = 0; hops <= t->c; hops++) {
		u8 port;

		if (arrived) {
			n = trip_node(t, at, in);
			act = do_recv(s, &n);
			if (act == KMAD_SMI_DISCARD)
				return DISCARDED;
			if (act == KMAD_SMI_HANDLE)
				return at;
		}
		port = do_out_port(s);
		/* forwarding table port, when the DR part ends: any */
		n = trip_node(t, at, port ? port : 1);
		if (do_send(s, &n) == KMAD_SMI_DISCARD)
			return DISCARDED;
		if (port) {
			/* a directed hop, to the next node of the path */
			int next = back ? at - 1 : at + 1;

			FUZZ_ASSERT(next >= 0 && next <= (int)t->c);
			FUZZ_ASSERT(s->hop_ptr == (back ? next + 1 : next));
			in = back ? s->initial_path[at] : t->in_port[next];
			at = next;
			arrived = true;
			continue;
		}
		/* the DR part is over: by LID, or to this node itself */
		if (lid_last)
			at = end;
		n = trip_node(t, at, 1);
		FUZZ_ASSERT(do_recv(s, &n) == KMAD_SMI_HANDLE);
		return at;
	}
	fprintf(stderr, "smi_fuzz: route longer than HopCount %u\n", t->c);
	FUZZ_ASSERT(0);
	return DISCARDED;
}

static void round_trip(const u8 *flags_port, const struct kmad_smp *in)
{
	u8 flags = flags_port[0];
	struct trip t = { .n = flags_port[2] };
	struct kmad_smp *s = malloc(sizeof(*s)), req;
	bool ok = true;
	unsigned int i;
	int got;

	FUZZ_ASSERT(s);
	*s = *in;
	s->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	s->method = KMAD_METHOD_GET;
	((u8 *)s)[4] &= ~D_BIT;
	s->hop_cnt &= KMAD_SMP_DR_MAX_HOP_CNT;
	s->hop_ptr = 0;
	t.smp = s;
	t.c = s->hop_cnt;
	t.slid_perm = flags & 0x02;
	t.dlid_perm = flags & 0x04;
	if (t.slid_perm)
		s->dr_slid = cpu_to_be16(PERMISSIVE);
	else if (lid(s->dr_slid) == PERMISSIVE)
		s->dr_slid = cpu_to_be16(1);
	if (t.dlid_perm)
		s->dr_dlid = cpu_to_be16(PERMISSIVE);
	else if (lid(s->dr_dlid) == PERMISSIVE)
		s->dr_dlid = cpu_to_be16(2);

	/* arrival ports from ReturnPath, which must then be recorded */
	for (i = 1; i <= t.c; i++) {
		t.in_port[i] = s->return_path[i];
		s->return_path[i] = 0;
		t.sw[i] = i < t.c;
	}
	t.sw[0] = flags & 0x08;
	t.sw[t.c] |= flags & 0x10;
	if (flags & 0x20)
		t.sw[flags_port[1] % (t.c + 1)] ^= true;
	for (i = 1; i <= t.c; i++)
		ok &= m_port_ok(&(struct kmad_smi_node){ .num_ports = t.n },
				s->initial_path[i]) &&
		      m_port_ok(&(struct kmad_smi_node){ .num_ports = t.n },
				t.in_port[i]) &&
		      (i == t.c || t.sw[i]);
	if (!t.slid_perm)
		ok &= t.sw[0];
	if (!t.dlid_perm)
		ok &= t.sw[t.c];
	req = *s;

	got = trip_leg(&t, false);
	if (got != DISCARDED) {
		FUZZ_ASSERT(got == (t.dlid_perm ? (int)t.c : RESPONDER));
		FUZZ_ASSERT(s->hop_ptr == t.c + 1);
		for (i = 1; i <= t.c; i++)
			FUZZ_ASSERT(s->return_path[i] == t.in_port[i]);
		do_make_response(s);
		got = trip_leg(&t, true);
	}
	if (ok != (got != DISCARDED)) {
		dump(ok ? "round trip failed" : "round trip should fail",
		     &req, NULL);
		fprintf(stderr, "  %u ports per node, node 0 %s, node %u %s\n",
			t.n, t.sw[0] ? "switch" : "CA", t.c,
			t.sw[t.c] ? "switch" : "CA");
		FUZZ_ASSERT(0);
	}
	if (ok) {
		FUZZ_ASSERT(got == (t.slid_perm ? 0 : REQUESTER));
		/* only Method, D, HopPointer and ReturnPath[1..c] changed */
		FUZZ_ASSERT(s->hop_ptr == 0 && returning(s) &&
			    s->method == KMAD_METHOD_GET_RESP);
		for (i = 1; i <= t.c; i++)
			FUZZ_ASSERT(s->return_path[i] == t.in_port[i]);
		memcpy(req.return_path, s->return_path,
		       sizeof(req.return_path));
		req.method = s->method;
		((u8 *)&req)[4] |= D_BIT;
		FUZZ_ASSERT(memcmp(&req, s, sizeof(req)) == 0);
	}
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u8 buf[SMP_OFFSET + KMAD_MAD_SIZE + STEP_SIZE * MAX_STEPS] = { 0 };
	struct kmad_smp *in = malloc(sizeof(*in)), *s = malloc(sizeof(*s));
	struct kmad_smi_node node;
	size_t i, steps;
	unsigned int op;

	FUZZ_ASSERT(in && s);
	memcpy(buf, data, size < sizeof(buf) ? size : sizeof(buf));
	memcpy(in, buf + SMP_OFFSET, KMAD_MAD_SIZE);
	node.is_switch = buf[0] & 1;
	node.port_num = buf[1];
	node.num_ports = buf[2];

	/* each call once on the input SMP */
	for (op = OP_RECV; op <= OP_MAKE_RESPONSE; op++) {
		*s = *in;
		do_op(s, op, &node);
	}

	/* the steps, in order, on one SMP */
	*s = *in;
	steps = size > SMP_OFFSET + KMAD_MAD_SIZE ?
		(size - SMP_OFFSET - KMAD_MAD_SIZE) / STEP_SIZE : 0;
	for (i = 0; i < steps && i < MAX_STEPS; i++) {
		const u8 *st = buf + SMP_OFFSET + KMAD_MAD_SIZE + i * STEP_SIZE;
		struct kmad_smi_node n = {
			.is_switch = st[0] & 4,
			.port_num = st[1],
			.num_ports = st[2],
		};

		do_op(s, st[0] & 3, &n);
	}

	round_trip(buf, in);
	free(s);
	free(in);
	return 0;
}
