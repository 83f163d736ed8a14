// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_interop: the kmad side of `make interop` (tests/interop/).
 *
 * Loaded in a guest where kmad_ib made kmad devices of rxe0 and rxe1 (two
 * soft-RoCE devices on a veth pair), it runs the cases named by cases=
 * from a kmad agent on dev= (rxe0) to peer= (rxe1), using only kmad's
 * public API, and prints one line per case:
 *
 *   kmad_interop: <case>: ok <detail>
 *   kmad_interop: <case>: FAILED <why>
 *
 * then "kmad_interop: done <N> passed, <M> failed".  Every send must get
 * exactly one send_handler call; each case checks its counts.
 *
 * Cases:
 *   ibmad_unsupported  PerfMgt Get(ClassPortInfo) to the peer's QP1:
 *                      ib_mad answers GetResp, status 0x000C, same TID.
 *   ibmad_peer         vendor class 0x09 Gets to the peer's QP1, answered
 *                      by ibmad_peer.ko: data byte i = attr_mod * 7 + i.
 *   umad_peer          vendor class 0x0a Gets, answered by umad_peer
 *                      (libibumad): byte i = attr_mod * 13 + i.
 *   kmad_kmad          a kmad agent on the peer answers class 0x0c Gets
 *                      (byte i = attr_mod * 11 + i), sent to the peer's
 *                      kmad QP (peer_qpn=, else kmad_port_qp_num()).
 *   bridge_busy        a kmad agent for class 0x09 Get on the peer fails
 *                      with -EBUSY: ibmad_peer's ib_mad agent holds it.
 *   timeout_retry      Gets to a dead QPN, timeout 100 ms, 2 retries:
 *                      RESP_TIMEOUT after about 300 ms.
 *   cancel             Gets to the dead QPN, canceled at once or later:
 *                      CANCELED.
 *   pkey_index         a Get with P_Key index 1: refused (-EINVAL) where
 *                      the port's P_Key table has one entry (rxe), else
 *                      it ends LOCAL_ERROR once: kmad_ib's UD QP sends
 *                      with P_Key index 0 only.
 *   unregister_busy    1000 Gets outstanding when the agent unregisters:
 *                      every callback exactly once, before it returns.
 *   remove             leaves Gets outstanding on both devices (long
 *                      timeouts) for the harness to delete a device or
 *                      unload kmad_ib, and starts a stream of Gets from
 *                      dev= to the peer's QP1 that a kmad agent there
 *                      answers through the bridge (from QP1); at unload
 *                      this module prints "remove-exit" with how many
 *                      callbacks came, how many before the unload began,
 *                      and the stream's counts: every answer called back
 *                      once, and how many were still outstanding when
 *                      the peer's device began to go.
 *
 * hold=1 runs remove too, whatever cases= says; with cases=all (the
 * default) it leaves out the cases that need a user-space peer
 * (umad_peer): hold=1 is the harness's load for its removal steps, which
 * runs no umad_peer serve.
 *
 * While loaded it also keeps an agent on dev= for vendor class 0x0b,
 * answering Gets with byte i = attr_mod * 17 + i: rdma-core's requests to
 * rxe0's QP1 reach it through kmad_ib's bridge to ib_mad.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kmad/mad.h>

static char *cases = "all";
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "comma-separated cases to run, or \"all\" (default)");

static char *dev = "rxe0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "kmad device the requests leave from (default rxe0)");

static char *peer = "rxe1";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "kmad device of the peer (default rxe1)");

static char *peer_gid = "";
module_param(peer_gid, charp, 0444);
MODULE_PARM_DESC(peer_gid, "the peer's GID (default: GID sgid_index of peer=, port 1)");

static uint peer_qpn;
module_param(peer_qpn, uint, 0444);
MODULE_PARM_DESC(peer_qpn, "kmad_kmad: the peer kmad QP (default: kmad_port_qp_num())");

static uint sgid_index;
module_param(sgid_index, uint, 0444);
MODULE_PARM_DESC(sgid_index, "source GID index (default 0)");

static uint count = 16;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "Gets per exchange case (default 16)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold,
		 "run the remove case too, whatever cases= says, and with cases=all leave out umad_peer (for the harness's removal steps)");

static uint remove_sends = 64;
module_param(remove_sends, uint, 0444);
MODULE_PARM_DESC(remove_sends, "remove: Gets left outstanding per device (default 64)");

#define IC_DEAD_QPN		0xfffff0
#define IC_TIMEOUT_MS		2000
#define IC_CASE_WAIT_MS		30000
#define IC_BUSY_SENDS		1000
#define IC_CLASS_KMAD		0x0c
#define IC_MULT_KMAD		11
#define IC_CLASS_SERVE		0x0b
#define IC_MULT_SERVE		17
#define IC_CLASS_STREAM		0x0d
#define IC_STREAM_DEPTH		4
#define IC_STREAM_TIMEOUT_MS	1000
#define IC_STATUS_UNSUPPORTED	0x000c
#define IC_ANY_STATUS		(-1)

/**
 * struct ic_case - one case's expectations and what happened.
 * @name: the case.
 * @mgmt_class: class of its Gets.
 * @mult: data byte i of a response must be attr_mod * @mult + i; -1: not
 *	checked.
 * @want_mad_status: the response's status.
 * @want: how every send must end (an &enum kmad_send_status), or
 *	%IC_ANY_STATUS.
 * @lock: guards @why.
 * @qpn: where the Gets go; every response must come from it.
 * @why: the first failure seen, empty if none.
 * @outstanding: sends posted and not yet called back.
 * @all_done: completed when @outstanding drops to 0.
 * @status: send_handler calls per &enum kmad_send_status.
 * @callbacks: send_handler calls.
 * @responses: responses matched.
 * @bad: responses that failed a check.
 */
struct ic_case {
	const char *name;
	u8 mgmt_class;
	int mult;
	u16 want_mad_status;
	int want;
	u32 qpn;
	spinlock_t lock;	/* @why */
	char why[160];
	atomic_t outstanding;
	struct completion all_done;
	atomic_t status[KMAD_SEND_LOCAL_ERROR + 1];
	atomic_t callbacks;
	atomic_t responses;
	atomic_t bad;
};

/* Per send: its case and what its response must carry. */
struct ic_send {
	struct ic_case *c;
	u32 attr_mod;
	u64 tid;
	bool responded;
};

static struct kmad_port *ic_port, *ic_peer_port;
static union kmad_gid ic_peer_gid;
static unsigned int ic_passed, ic_failed;

static __printf(2, 3) void ic_fail(struct ic_case *c, const char *fmt, ...)
{
	unsigned long flags;
	va_list ap;

	spin_lock_irqsave(&c->lock, flags);
	if (!c->why[0]) {
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
	spin_unlock_irqrestore(&c->lock, flags);
}

static void ic_case_init(struct ic_case *c, const char *name, u8 mgmt_class,
			 int mult, int want)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->mgmt_class = mgmt_class;
	c->mult = mult;
	c->want = want;
	spin_lock_init(&c->lock);
	atomic_set(&c->outstanding, 1);	/* the poster's, see ic_wait() */
	init_completion(&c->all_done);
	for (i = 0; i <= KMAD_SEND_LOCAL_ERROR; i++)
		atomic_set(&c->status[i], 0);
}

static void ic_send_handler(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct ic_send *s = wc->send_buf->context[0];
	struct ic_case *c = s->c;

	atomic_inc(&c->callbacks);
	if (wc->status <= KMAD_SEND_LOCAL_ERROR)
		atomic_inc(&c->status[wc->status]);
	if (c->want != IC_ANY_STATUS && wc->status != c->want)
		ic_fail(c, "attr_mod %u ended with status %d, want %d",
			s->attr_mod, wc->status, c->want);
	else if (wc->status == KMAD_SEND_OK && !s->responded)
		ic_fail(c, "attr_mod %u: OK without a response", s->attr_mod);
	kfree(s);
	kmad_free_send_buf(wc->send_buf);
	if (atomic_dec_and_test(&c->outstanding))
		complete(&c->all_done);
}

/* A response to one of our Gets: check it against its request. */
static void ic_check_response(struct ic_case *c, struct ic_send *s,
			      const struct kmad_recv_wc *wc)
{
	const struct kmad_mad_hdr *h = &wc->mad->mad_hdr;
	u16 status = be16_to_cpu(h->status);
	unsigned int i;

	if (h->method != KMAD_METHOD_GET_RESP || h->mgmt_class != c->mgmt_class) {
		ic_fail(c, "attr_mod %u: class %#x method %#x", s->attr_mod,
			h->mgmt_class, h->method);
		goto bad;
	}
	if (be64_to_cpu(h->tid) != s->tid) {
		ic_fail(c, "attr_mod %u: TID %#llx, sent %#llx", s->attr_mod,
			be64_to_cpu(h->tid), s->tid);
		goto bad;
	}
	if (status != c->want_mad_status) {
		ic_fail(c, "attr_mod %u: status %#06x, want %#06x", s->attr_mod,
			status, c->want_mad_status);
		goto bad;
	}
	if (wc->src_qpn != c->qpn) {
		ic_fail(c, "attr_mod %u: answered from QP %#x, sent to %#x",
			s->attr_mod, wc->src_qpn, c->qpn);
		goto bad;
	}
	if (!wc->grh_present && kmad_port_link_layer(ic_port) ==
	    KMAD_LINK_LAYER_ETHERNET) {
		ic_fail(c, "attr_mod %u: no GRH on a RoCE port", s->attr_mod);
		goto bad;
	}
	if (c->mult < 0)
		return;
	if (be32_to_cpu(h->attr_mod) != s->attr_mod) {
		ic_fail(c, "attr_mod %u: answered for %u", s->attr_mod,
			be32_to_cpu(h->attr_mod));
		goto bad;
	}
	for (i = 0; i < KMAD_MAD_DATA_SIZE; i++) {
		u8 want = (u8)(s->attr_mod * c->mult + i);

		if (wc->mad->data[i] != want) {
			ic_fail(c, "attr_mod %u: data byte %u is %#x, want %#x",
				s->attr_mod, i, wc->mad->data[i], want);
			goto bad;
		}
	}
	return;
bad:
	atomic_inc(&c->bad);
}

static void ic_recv_handler(struct kmad_agent *agent,
			    struct kmad_send_buf *request,
			    struct kmad_recv_wc *wc)
{
	struct ic_send *s;

	if (!request) {
		pr_warn_ratelimited("unexpected unsolicited MAD class %#x on the requester\n",
				    wc->mad->mad_hdr.mgmt_class);
		kmad_free_recv(wc);
		return;
	}
	s = request->context[0];
	if (s->responded)
		ic_fail(s->c, "attr_mod %u: two responses", s->attr_mod);
	s->responded = true;
	atomic_inc(&s->c->responses);
	ic_check_response(s->c, s, wc);
	kmad_free_recv(wc);
}

/* Where a Get goes: @qpn of the peer, GID routed (and LID on IB). */
static void ic_dest(struct kmad_dest *d, u32 qpn)
{
	memset(d, 0, sizeof(*d));
	if (kmad_port_link_layer(ic_port) == KMAD_LINK_LAYER_INFINIBAND &&
	    ic_peer_port)
		d->dlid = kmad_port_lid(ic_peer_port);
	d->remote_qpn = qpn;
	d->remote_qkey = KMAD_QP1_QKEY;
	d->grh_present = true;
	d->grh.dgid = ic_peer_gid;
	d->grh.sgid_index = sgid_index;
}

/* Post one Get of @c; returns the buffer (posted: send_handler may free it
 * at any time, so use it only while its send cannot end) or an ERR_PTR.
 */
static struct kmad_send_buf *ic_post_get(struct kmad_agent *agent,
					 struct ic_case *c,
					 const struct kmad_dest *d, u32 attr_mod,
					 unsigned int timeout_ms,
					 unsigned int retries)
{
	struct kmad_send_buf *buf;
	struct ic_send *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	buf = kmad_alloc_send_buf(agent, d, GFP_KERNEL);
	if (IS_ERR_OR_NULL(buf)) {
		kfree(s);
		return buf ? buf : ERR_PTR(-ENOMEM);
	}
	s->c = c;
	s->attr_mod = attr_mod;
	buf->context[0] = s;
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = c->mgmt_class;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(attr_mod + 1);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(c->mgmt_class ==
						KMAD_MGMT_CLASS_PERF_MGMT ?
						0x0001 : 0x0010);
	buf->mad->mad_hdr.attr_mod = cpu_to_be32(attr_mod);
	/*
	 * What goes out: kmad puts the agent's hi_tid in the upper half.
	 * Set before the post: once it returns 0, the response and the
	 * send_handler (which frees @s and @buf) may already have run.
	 */
	s->tid = (u64)agent->hi_tid << 32 | (attr_mod + 1);
	atomic_inc(&c->outstanding);
	ret = kmad_post_send(buf);
	if (ret) {
		atomic_dec(&c->outstanding);
		kfree(s);
		kmad_free_send_buf(buf);
		return ERR_PTR(ret);
	}
	return buf;
}

/* Drop the poster's count and wait for every callback of @c. */
static bool ic_wait(struct ic_case *c, unsigned int ms)
{
	if (atomic_dec_and_test(&c->outstanding))
		complete(&c->all_done);
	return wait_for_completion_timeout(&c->all_done,
					   msecs_to_jiffies(ms));
}

static struct kmad_agent *ic_requester(void *context)
{
	struct kmad_reg_req req = {};	/* class 0: responses only */

	return kmad_register_agent(ic_port, KMAD_QPT_GSI, &req,
				   ic_send_handler, ic_recv_handler, context);
}

static __printf(3, 4) int ic_report(const char *name, struct ic_case *c,
				     const char *fmt, ...)
{
	char detail[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (c && c->why[0]) {
		pr_info("%s: FAILED %s (%s)\n", name, c->why, detail);
		ic_failed++;
		return -EIO;
	}
	pr_info("%s: ok %s\n", name, detail);
	ic_passed++;
	return 0;
}

/* Gets to @qpn of the peer, each answered; the whole exchange checked. */
static void ic_exchange(const char *name, u8 mgmt_class, int mult,
			u16 want_mad_status, u32 qpn)
{
	struct kmad_agent *agent;
	struct kmad_send_buf *buf;
	struct kmad_dest d;
	struct ic_case c;
	unsigned int i, posted = 0;
	bool done;

	ic_case_init(&c, name, mgmt_class, mult, KMAD_SEND_OK);
	c.want_mad_status = want_mad_status;
	c.qpn = qpn;
	agent = ic_requester(&c);
	if (IS_ERR(agent)) {
		ic_fail(&c, "register: %ld", PTR_ERR(agent));
		ic_report(name, &c, "no agent");
		return;
	}
	ic_dest(&d, qpn);
	for (i = 0; i < count; i++) {
		buf = ic_post_get(agent, &c, &d, i, IC_TIMEOUT_MS, 1);
		if (IS_ERR(buf)) {
			ic_fail(&c, "post #%u: %ld", i, PTR_ERR(buf));
			break;
		}
		posted++;
	}
	done = ic_wait(&c, IC_CASE_WAIT_MS);
	if (!done)
		ic_fail(&c, "%d callbacks missing after %u ms",
			atomic_read(&c.outstanding), IC_CASE_WAIT_MS);
	kmad_unregister_agent(agent);
	if (atomic_read(&c.callbacks) != posted)
		ic_fail(&c, "%d callbacks for %u sends",
			atomic_read(&c.callbacks), posted);
	ic_report(name, &c, "%u Gets to QPN %#x, %d answers from that QP, %d callbacks, TIDs kept",
		  posted, qpn, atomic_read(&c.responses),
		  atomic_read(&c.callbacks));
}

/* kmad_kmad: the peer's kmad agent answers class IC_CLASS_KMAD. */
static void ic_answer(struct kmad_agent *agent, struct kmad_send_buf *req,
		      struct kmad_recv_wc *wc, int mult)
{
	struct kmad_send_buf *resp;
	u32 attr_mod;
	unsigned int i;

	if (req || wc->mad->mad_hdr.method != KMAD_METHOD_GET) {
		kmad_free_recv(wc);
		return;
	}
	resp = kmad_create_response(agent, wc, GFP_KERNEL);
	attr_mod = be32_to_cpu(wc->mad->mad_hdr.attr_mod);
	kmad_free_recv(wc);
	if (IS_ERR_OR_NULL(resp)) {
		pr_warn_ratelimited("no response buffer: %ld\n", PTR_ERR(resp));
		return;
	}
	for (i = 0; i < KMAD_MAD_DATA_SIZE; i++)
		resp->mad->data[i] = (u8)(attr_mod * mult + i);
	if (kmad_post_send(resp))
		kmad_free_send_buf(resp);
}

/* Answers sent, per responder: kmad_kmad's on the peer, the server's. */
static atomic_t ic_answered = ATOMIC_INIT(0);
static atomic_t ic_served = ATOMIC_INIT(0);

static void ic_responder_send(struct kmad_agent *agent,
			      struct kmad_send_wc *wc)
{
	if (wc->status == KMAD_SEND_OK)
		atomic_inc(agent->context);
	kmad_free_send_buf(wc->send_buf);
}

static void ic_kmad_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	ic_answer(agent, req, wc, IC_MULT_KMAD);
}

static void ic_serve_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			  struct kmad_recv_wc *wc)
{
	ic_answer(agent, req, wc, IC_MULT_SERVE);
}

static struct kmad_agent *ic_register_responder(struct kmad_port *port,
						u8 mgmt_class,
						kmad_recv_handler recv,
						atomic_t *answered)
{
	struct kmad_reg_req req = {
		.mgmt_class = mgmt_class,
		.class_version = 1,
	};

	set_bit(KMAD_METHOD_GET, req.method_mask);
	return kmad_register_agent(port, KMAD_QPT_GSI, &req,
				   ic_responder_send, recv, answered);
}

static void ic_case_kmad_kmad(const char *name)
{
	struct kmad_agent *responder;
	u32 qpn;
	int ret, before = atomic_read(&ic_answered);

	if (!ic_peer_port) {
		pr_info("%s: FAILED no kmad port %s:1\n", name, peer);
		ic_failed++;
		return;
	}
	qpn = peer_qpn;
	ret = qpn ? 0 : kmad_port_qp_num(ic_peer_port, KMAD_QPT_GSI, &qpn);
	if (ret || qpn <= 1) {
		pr_info("%s: FAILED kmad_port_qp_num(%s:1, GSI): %d, QPN %u (kmad's own QP, not QP1, under kmad_ib)\n",
			name, peer, ret, qpn);
		ic_failed++;
		return;
	}
	responder = ic_register_responder(ic_peer_port, IC_CLASS_KMAD,
					  ic_kmad_recv, &ic_answered);
	if (IS_ERR(responder)) {
		pr_info("%s: FAILED registering the responder on %s: %ld\n",
			name, peer, PTR_ERR(responder));
		ic_failed++;
		return;
	}
	ic_exchange(name, IC_CLASS_KMAD, IC_MULT_KMAD, 0, qpn);
	kmad_unregister_agent(responder);
	pr_info("%s: (the responder on %s sent %d answers)\n", name, peer,
		atomic_read(&ic_answered) - before);
}

static void ic_case_timeout_retry(const char *name)
{
	struct kmad_agent *agent;
	struct kmad_send_buf *buf;
	struct kmad_dest d;
	struct ic_case c;
	unsigned long start;
	unsigned int ms, i, posted = 0, n = 4;
	struct kmad_agent_stats st;

	ic_case_init(&c, name, KMAD_MGMT_CLASS_VENDOR_RANGE1_START, -1,
		     KMAD_SEND_RESP_TIMEOUT);
	agent = ic_requester(&c);
	if (IS_ERR(agent)) {
		ic_fail(&c, "register: %ld", PTR_ERR(agent));
		ic_report(name, &c, "no agent");
		return;
	}
	ic_dest(&d, IC_DEAD_QPN);
	start = jiffies;
	for (i = 0; i < n; i++) {
		buf = ic_post_get(agent, &c, &d, i, 100, 2);
		if (IS_ERR(buf)) {
			ic_fail(&c, "post #%u: %ld", i, PTR_ERR(buf));
			break;
		}
		posted++;
	}
	if (!ic_wait(&c, IC_CASE_WAIT_MS))
		ic_fail(&c, "callbacks missing");
	ms = jiffies_to_msecs(jiffies - start);
	kmad_agent_get_stats(agent, &st);
	kmad_unregister_agent(agent);
	if (ms < 300 || ms > 3000)
		ic_fail(&c, "took %u ms, want about 300", ms);
	if (st.retries != 2 * posted)
		ic_fail(&c, "%llu retries for %u sends, want 2 each",
			st.retries, posted);
	ic_report(name, &c, "%u Gets to dead QPN %#x: %d RESP_TIMEOUT after %u ms, %llu retries",
		  posted, IC_DEAD_QPN,
		  atomic_read(&c.status[KMAD_SEND_RESP_TIMEOUT]), ms,
		  st.retries);
}

static void ic_case_cancel(const char *name)
{
	struct kmad_send_buf *bufs[8];
	struct kmad_agent *agent;
	struct kmad_dest d;
	struct ic_case c;
	unsigned int i, posted = 0;
	int ret;

	ic_case_init(&c, name, KMAD_MGMT_CLASS_VENDOR_RANGE1_START, -1,
		     KMAD_SEND_CANCELED);
	agent = ic_requester(&c);
	if (IS_ERR(agent)) {
		ic_fail(&c, "register: %ld", PTR_ERR(agent));
		ic_report(name, &c, "no agent");
		return;
	}
	ic_dest(&d, IC_DEAD_QPN);
	for (i = 0; i < ARRAY_SIZE(bufs); i++) {
		bufs[i] = ic_post_get(agent, &c, &d, i, 10000, 0);
		if (IS_ERR(bufs[i])) {
			ic_fail(&c, "post #%u: %ld", i, PTR_ERR(bufs[i]));
			break;
		}
		posted++;
		/* Half at once (likely before the send completion). */
		if (i % 2 == 0) {
			ret = kmad_cancel_send(bufs[i]);
			if (ret)
				ic_fail(&c, "cancel #%u at once: %d", i, ret);
		}
	}
	msleep(200);	/* the others wait for their response */
	for (i = 1; i < posted; i += 2) {
		ret = kmad_cancel_send(bufs[i]);
		if (ret)
			ic_fail(&c, "cancel #%u after 200 ms: %d", i, ret);
	}
	if (!ic_wait(&c, IC_CASE_WAIT_MS))
		ic_fail(&c, "callbacks missing");
	kmad_unregister_agent(agent);
	if (atomic_read(&c.callbacks) != posted)
		ic_fail(&c, "%d callbacks for %u sends",
			atomic_read(&c.callbacks), posted);
	ic_report(name, &c,
		  "%u Gets canceled (half at once, half after 200 ms): %d CANCELED callbacks",
		  posted, atomic_read(&c.status[KMAD_SEND_CANCELED]));
}

/*
 * A send with P_Key index 1.  Where the port's table has no entry 1 (rxe:
 * one P_Key, 0xffff), kmad_post_send() refuses it with -EINVAL and no
 * callback follows.  Where it has one, kmad_ib's UD QP still sends with
 * index 0 only (a UD QP has one P_Key; only a GSI QP takes one per send),
 * so the post is accepted and the send ends once with a local error, no
 * response.
 */
static void ic_case_pkey_index(const char *name)
{
	struct kmad_send_buf *buf;
	struct kmad_agent *agent;
	struct kmad_dest d;
	struct ic_case c;
	int pkey_ret;
	u16 pkey;

	ic_case_init(&c, name, KMAD_MGMT_CLASS_PERF_MGMT, -1,
		     KMAD_SEND_LOCAL_ERROR);
	agent = ic_requester(&c);
	if (IS_ERR(agent)) {
		ic_fail(&c, "register: %ld", PTR_ERR(agent));
		ic_report(name, &c, "no agent");
		return;
	}
	pkey_ret = kmad_port_query_pkey(ic_port, 1, &pkey);
	ic_dest(&d, 1);
	d.pkey_index = 1;
	buf = ic_post_get(agent, &c, &d, 0, IC_TIMEOUT_MS, 0);
	if (pkey_ret && PTR_ERR_OR_ZERO(buf) != -EINVAL)
		ic_fail(&c, "post with no P_Key entry 1: %d, not -EINVAL",
			PTR_ERR_OR_ZERO(buf));
	else if (!pkey_ret && IS_ERR(buf))
		ic_fail(&c, "post: %ld", PTR_ERR(buf));
	if (!ic_wait(&c, IC_CASE_WAIT_MS))
		ic_fail(&c, "callback missing");
	kmad_unregister_agent(agent);
	if (atomic_read(&c.callbacks) != (IS_ERR(buf) ? 0 : 1))
		ic_fail(&c, "%d callbacks for %d send",
			atomic_read(&c.callbacks), IS_ERR(buf) ? 0 : 1);
	if (atomic_read(&c.responses))
		ic_fail(&c, "%d responses", atomic_read(&c.responses));
	ic_report(name, &c,
		  "Get with P_Key index 1: %s, no response (P_Key index 1 on %s: %d)",
		  IS_ERR(buf) ? "refused" : "ended LOCAL_ERROR", dev,
		  pkey_ret);
}

static void ic_case_unregister_busy(const char *name)
{
	struct kmad_agent *agent;
	struct kmad_send_buf *buf;
	struct kmad_dest d;
	struct ic_case c;
	unsigned int i, posted = 0;
	int at_return, ret;

	/* Flushed or canceled, as kmad sees fit: the count matters. */
	ic_case_init(&c, name, KMAD_MGMT_CLASS_VENDOR_RANGE1_START, -1,
		     IC_ANY_STATUS);
	agent = ic_requester(&c);
	if (IS_ERR(agent)) {
		ic_fail(&c, "register: %ld", PTR_ERR(agent));
		ic_report(name, &c, "no agent");
		return;
	}
	ic_dest(&d, IC_DEAD_QPN);
	for (i = 0; i < IC_BUSY_SENDS; i++) {
		buf = ic_post_get(agent, &c, &d, i, 10000, 0);
		if (IS_ERR(buf)) {
			ic_fail(&c, "post #%u: %ld", i, PTR_ERR(buf));
			break;
		}
		posted++;
	}
	ret = kmad_unregister_agent(agent);
	at_return = atomic_read(&c.callbacks);
	if (ret)
		ic_fail(&c, "unregister: %d", ret);
	if (at_return != posted)
		ic_fail(&c, "%d callbacks when unregister returned, %u sends",
			at_return, posted);
	msleep(100);
	if (atomic_read(&c.callbacks) != at_return)
		ic_fail(&c, "%d callbacks after unregister returned",
			atomic_read(&c.callbacks) - at_return);
	ic_wait(&c, 10);
	ic_report(name, &c,
		  "%u Gets outstanding at unregister: %d callbacks before it returned (%d FLUSHED, %d CANCELED), none after",
		  posted, at_return, atomic_read(&c.status[KMAD_SEND_FLUSHED]),
		  atomic_read(&c.status[KMAD_SEND_CANCELED]));
}

/*
 * remove's bridged stream.  A requester on dev= keeps IC_STREAM_DEPTH Gets
 * of class IC_CLASS_STREAM in flight to the peer's QP1, reposting from its
 * send_handler; a kmad agent on the peer answers each through kmad_ib's
 * bridge, so every answer leaves from the peer's QP1 through ib_mad.  It
 * runs until the requester's device goes or this module unloads: so
 * `rdma link delete` of the peer (and the unloads) find bridged answers
 * in ib_mad's hands or kmad's queues.  At unload, every answer posted
 * must have had exactly one callback (the remove-exit line).
 */
struct ic_stream {
	struct kmad_agent *req;		/* on dev= */
	struct kmad_agent *resp;	/* on peer=, bridged */
	bool stop;
	atomic_t tid;
	atomic_t in_flight;		/* requester's sends not called back */
	struct completion idle;		/* @in_flight reached 0 */
	atomic_t gets, responses, unsupported;
	atomic_t answers_posted, answers_done, answers_late;
	atomic_t answer_status[KMAD_SEND_LOCAL_ERROR + 1];
};

static struct ic_stream ic_stream;

static int ic_stream_post(struct ic_stream *st)
{
	struct kmad_send_buf *buf;
	struct kmad_dest d;
	int ret;

	ic_dest(&d, 1);
	buf = kmad_alloc_send_buf(st->req, &d, GFP_KERNEL);
	if (IS_ERR_OR_NULL(buf))
		return buf ? PTR_ERR(buf) : -ENOMEM;
	buf->timeout_ms = IC_STREAM_TIMEOUT_MS;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = IC_CLASS_STREAM;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(atomic_inc_return(&st->tid));
	buf->mad->mad_hdr.attr_id = cpu_to_be16(0x0010);
	ret = kmad_post_send(buf);
	if (ret)
		kmad_free_send_buf(buf);
	else
		atomic_inc(&st->gets);
	return ret;
}

/*
 * The requester's send ended: post the next one, unless it is over, or
 * the peer's device is going (its kmad port dying, or ib_mad answering
 * for the gone bridge).  Requests reaching a port while ib_mad itself is
 * being removed hit a race in the stock 6.1 ib_core: ib_mad answers an
 * unclaimed request through agent_send_response() with the port's
 * ib_mad agent, which ib_agent_port_close() unregisters (and frees)
 * before ib_mad_port_close() stops the QP (refcount_t warnings from
 * ib_create_send_mad() and ib_post_send_mad()).  So the stream stops as
 * soon as the device begins to go, before ib_mad's turn.
 */
static void ic_stream_sent(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	struct ic_stream *st = agent->context;
	bool again = wc->status != KMAD_SEND_FLUSHED && !READ_ONCE(st->stop);
	u32 qpn;

	if (again && kmad_port_qp_num(ic_peer_port, KMAD_QPT_GSI, &qpn))
		again = false;

	kmad_free_send_buf(wc->send_buf);
	if (again && !ic_stream_post(st))
		return;
	if (atomic_dec_and_test(&st->in_flight))
		complete(&st->idle);
}

static void ic_stream_response(struct kmad_agent *agent,
			       struct kmad_send_buf *req,
			       struct kmad_recv_wc *wc)
{
	struct ic_stream *st = agent->context;

	if (req) {
		atomic_inc(&st->responses);
		/* ib_mad's own answer once the bridge is gone. */
		if (wc->mad->mad_hdr.status) {
			atomic_inc(&st->unsupported);
			WRITE_ONCE(st->stop, true);
		}
	}
	kmad_free_recv(wc);
}

static void ic_stream_answered(struct kmad_agent *agent,
			       struct kmad_send_wc *wc)
{
	struct ic_stream *st = agent->context;
	u32 qpn;

	if (wc->status <= KMAD_SEND_LOCAL_ERROR)
		atomic_inc(&st->answer_status[wc->status]);
	/* The port is going: this answer was outstanding when it began. */
	if (kmad_port_qp_num(ic_peer_port, KMAD_QPT_GSI, &qpn) == -ENODEV)
		atomic_inc(&st->answers_late);
	kmad_free_send_buf(wc->send_buf);
	atomic_inc(&st->answers_done);
}

static void ic_stream_answer(struct kmad_agent *agent,
			     struct kmad_send_buf *req, struct kmad_recv_wc *wc)
{
	struct ic_stream *st = agent->context;
	struct kmad_send_buf *resp;

	if (req || wc->mad->mad_hdr.method != KMAD_METHOD_GET) {
		kmad_free_recv(wc);
		return;
	}
	resp = kmad_create_response(agent, wc, GFP_KERNEL);
	kmad_free_recv(wc);
	if (IS_ERR_OR_NULL(resp))
		return;
	atomic_inc(&st->answers_posted);
	if (kmad_post_send(resp)) {
		atomic_dec(&st->answers_posted);
		kmad_free_send_buf(resp);
	}
}

static int ic_stream_start(struct ic_stream *st)
{
	struct kmad_reg_req req = {
		.mgmt_class = IC_CLASS_STREAM,
		.class_version = 1,
	};
	struct kmad_reg_req none = {};
	unsigned int i;

	init_completion(&st->idle);
	atomic_set(&st->in_flight, 1);	/* ours, dropped at the end */
	set_bit(KMAD_METHOD_GET, req.method_mask);
	st->resp = kmad_register_agent(ic_peer_port, KMAD_QPT_GSI, &req,
				       ic_stream_answered, ic_stream_answer,
				       st);
	if (IS_ERR(st->resp))
		return PTR_ERR(st->resp);
	st->req = kmad_register_agent(ic_port, KMAD_QPT_GSI, &none,
				      ic_stream_sent, ic_stream_response, st);
	if (IS_ERR(st->req))
		return PTR_ERR(st->req);
	for (i = 0; i < IC_STREAM_DEPTH; i++) {
		atomic_inc(&st->in_flight);
		if (ic_stream_post(st)) {
			atomic_dec(&st->in_flight);
			return -EIO;
		}
	}
	return 0;
}

/* Stop the stream; false if an answer's callback is missing. */
static bool ic_stream_stop(struct ic_stream *st, char *line, size_t len)
{
	bool ok;

	WRITE_ONCE(st->stop, true);
	if (!IS_ERR_OR_NULL(st->req)) {
		kmad_unregister_agent(st->req);
		if (atomic_dec_and_test(&st->in_flight))
			complete(&st->idle);
		wait_for_completion_timeout(&st->idle, msecs_to_jiffies(1000));
	}
	if (!IS_ERR_OR_NULL(st->resp))
		kmad_unregister_agent(st->resp);
	ok = atomic_read(&st->answers_posted) ==
	     atomic_read(&st->answers_done) && !atomic_read(&st->in_flight);
	snprintf(line, len,
		 "bridged stream: %d Gets, %d responses (%d of them ib_mad's); %d answers from %s's QP1, %d callbacks (%d after the device began to go; %d OK, %d FLUSHED, %d other)",
		 atomic_read(&st->gets), atomic_read(&st->responses),
		 atomic_read(&st->unsupported),
		 atomic_read(&st->answers_posted), peer,
		 atomic_read(&st->answers_done),
		 atomic_read(&st->answers_late),
		 atomic_read(&st->answer_status[KMAD_SEND_OK]),
		 atomic_read(&st->answer_status[KMAD_SEND_FLUSHED]),
		 atomic_read(&st->answers_done) -
		 atomic_read(&st->answer_status[KMAD_SEND_OK]) -
		 atomic_read(&st->answer_status[KMAD_SEND_FLUSHED]));
	return ok;
}

/* remove: sends left outstanding until this module unloads. */
struct ic_remove {
	struct kmad_port *port;
	struct kmad_agent *agent;
	struct ic_case c;
	unsigned int posted;
};

static struct ic_remove ic_removes[2];
static bool ic_remove_armed;

static int ic_remove_arm(struct ic_remove *r, struct kmad_port *port,
			 struct kmad_port *to)
{
	struct kmad_send_buf *buf;
	struct kmad_dest d;
	union kmad_gid gid;
	unsigned int i;
	int ret;

	struct kmad_reg_req req = {};

	ic_case_init(&r->c, "remove", KMAD_MGMT_CLASS_VENDOR_RANGE1_START, -1,
		     IC_ANY_STATUS);
	r->port = port;
	r->agent = kmad_register_agent(port, KMAD_QPT_GSI, &req,
				       ic_send_handler, ic_recv_handler, &r->c);
	if (IS_ERR(r->agent)) {
		ret = PTR_ERR(r->agent);
		r->agent = NULL;
		return ret;
	}
	ret = kmad_port_query_gid(to, sgid_index, &gid);
	if (ret)
		return ret;
	memset(&d, 0, sizeof(d));
	d.remote_qpn = IC_DEAD_QPN;
	d.remote_qkey = KMAD_QP1_QKEY;
	d.grh_present = true;
	d.grh.dgid = gid;
	d.grh.sgid_index = sgid_index;
	if (kmad_port_link_layer(port) == KMAD_LINK_LAYER_INFINIBAND)
		d.dlid = kmad_port_lid(to);
	for (i = 0; i < remove_sends; i++) {
		buf = ic_post_get(r->agent, &r->c, &d, i, 600000, 0);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		r->posted++;
	}
	return 0;
}

static void ic_case_remove(const char *name)
{
	int ret;

	if (!ic_peer_port) {
		pr_info("%s: FAILED no kmad port %s:1\n", name, peer);
		ic_failed++;
		return;
	}
	if (ic_remove_armed) {
		pr_info("%s: ok armed already\n", name);
		ic_passed++;
		return;
	}
	ic_remove_armed = true;
	ret = ic_remove_arm(&ic_removes[0], ic_port, ic_peer_port);
	if (!ret)
		ret = ic_remove_arm(&ic_removes[1], ic_peer_port, ic_port);
	if (!ret)
		ret = ic_stream_start(&ic_stream);
	if (ret) {
		pr_info("%s: FAILED arming: %d\n", name, ret);
		ic_failed++;
		return;
	}
	pr_info("%s: ok %u Gets outstanding on %s and %u on %s (10 min timeouts), and a stream of Gets from %s answered from %s's QP1 through the bridge, counted at unload as remove-exit\n",
		name, ic_removes[0].posted, dev, ic_removes[1].posted, peer,
		dev, peer);
	ic_passed++;
}

/* At unload: every remove send must have had exactly one callback. */
static void ic_remove_check(void)
{
	unsigned int posted = 0, cbs = 0, i;
	const char *why = "";
	char stream[256];
	bool stream_ok;
	int before[2];

	for (i = 0; i < 2; i++)
		before[i] = atomic_read(&ic_removes[i].c.callbacks);
	for (i = 0; i < 2; i++) {
		struct ic_remove *r = &ic_removes[i];

		if (r->agent)
			kmad_unregister_agent(r->agent);
		ic_wait(&r->c, 10);
		posted += r->posted;
		cbs += atomic_read(&r->c.callbacks);
		if (!why[0] && r->c.why[0])
			why = r->c.why;
	}
	stream_ok = ic_stream_stop(&ic_stream, stream, sizeof(stream));
	pr_info("remove-exit: %s %u Gets, %u callbacks; before this module's unload %s had %d of %u, %s %d of %u (%d FLUSHED, %d CANCELED, %d other); %s %s\n",
		posted == cbs && stream_ok && !why[0] ? "ok" : "FAILED",
		posted, cbs,
		dev, before[0], ic_removes[0].posted,
		peer, before[1], ic_removes[1].posted,
		atomic_read(&ic_removes[0].c.status[KMAD_SEND_FLUSHED]) +
		atomic_read(&ic_removes[1].c.status[KMAD_SEND_FLUSHED]),
		atomic_read(&ic_removes[0].c.status[KMAD_SEND_CANCELED]) +
		atomic_read(&ic_removes[1].c.status[KMAD_SEND_CANCELED]),
		cbs - atomic_read(&ic_removes[0].c.status[KMAD_SEND_FLUSHED]) -
		atomic_read(&ic_removes[1].c.status[KMAD_SEND_FLUSHED]) -
		atomic_read(&ic_removes[0].c.status[KMAD_SEND_CANCELED]) -
		atomic_read(&ic_removes[1].c.status[KMAD_SEND_CANCELED]),
		stream, why);
}

static struct kmad_agent *ic_server;

/*
 * bridge_busy: ibmad_peer's ib_mad agent holds class 0x09 Get on the peer,
 * so a kmad agent for it there must fail with -EBUSY (kmad_ib's bridge
 * cannot register the same methods with ib_mad).
 */
static void ic_case_bridge_busy(const char *name)
{
	struct kmad_agent *agent;

	if (!ic_peer_port) {
		pr_info("%s: FAILED no kmad port %s:1\n", name, peer);
		ic_failed++;
		return;
	}
	agent = ic_register_responder(ic_peer_port, 0x09, ic_kmad_recv,
				      &ic_answered);
	if (PTR_ERR_OR_ZERO(agent) == -EBUSY) {
		pr_info("%s: ok class 0x09 Get on %s refused with -EBUSY (ibmad_peer's ib_mad agent holds it)\n",
			name, peer);
		ic_passed++;
		return;
	}
	pr_info("%s: FAILED class 0x09 Get on %s: %d, want -EBUSY\n", name, peer,
		PTR_ERR_OR_ZERO(agent));
	ic_failed++;
	if (!IS_ERR(agent))
		kmad_unregister_agent(agent);
}

static void ic_case_ibmad_unsupported(const char *name)
{
	ic_exchange(name, KMAD_MGMT_CLASS_PERF_MGMT, -1, IC_STATUS_UNSUPPORTED,
		    1);
}

static void ic_case_ibmad_peer(const char *name)
{
	ic_exchange(name, 0x09, 7, 0, 1);
}

static void ic_case_umad_peer(const char *name)
{
	ic_exchange(name, 0x0a, 13, 0, 1);
}

/* @program: needs a user-space peer the harness runs (umad_peer serve). */
static const struct {
	const char *name;
	void (*run)(const char *name);
	bool program;
} ic_cases[] = {
	{ "ibmad_unsupported", ic_case_ibmad_unsupported },
	{ "ibmad_peer", ic_case_ibmad_peer },
	{ "umad_peer", ic_case_umad_peer, true },
	{ "kmad_kmad", ic_case_kmad_kmad },
	{ "bridge_busy", ic_case_bridge_busy },
	{ "timeout_retry", ic_case_timeout_retry },
	{ "cancel", ic_case_cancel },
	{ "pkey_index", ic_case_pkey_index },
	{ "unregister_busy", ic_case_unregister_busy },
	{ "remove", ic_case_remove },
};

static void ic_run(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ic_cases); i++) {
		if (!strcmp(name, ic_cases[i].name)) {
			ic_cases[i].run(name);
			return;
		}
	}
	pr_info("%s: FAILED no such case\n", name);
	ic_failed++;
}

static int ic_peer_gid_init(void)
{
	struct in6_addr a;

	if (peer_gid[0]) {
		if (!in6_pton(peer_gid, -1, a.s6_addr, -1, NULL))
			return -EINVAL;
		memcpy(ic_peer_gid.raw, a.s6_addr, sizeof(ic_peer_gid.raw));
		return 0;
	}
	if (!ic_peer_port)
		return -ENODEV;
	return kmad_port_query_gid(ic_peer_port, sgid_index, &ic_peer_gid);
}

static int __init kmad_interop_init(void)
{
	char *list, *p, *name;
	unsigned int i;
	int ret;

	ic_port = kmad_port_get(dev, 1);
	if (!ic_port) {
		pr_err("no kmad port %s:1 (is kmad_ib loaded?)\n", dev);
		return -ENODEV;
	}
	ic_peer_port = kmad_port_get(peer, 1);
	ret = ic_peer_gid_init();
	if (ret) {
		pr_err("no peer GID (peer_gid=%s, %s): %d\n", peer_gid, peer,
		       ret);
		goto err_put;
	}
	pr_info("%s:1 (%s) to %s %pI6, source GID index %u\n", dev,
		kmad_port_link_layer(ic_port) == KMAD_LINK_LAYER_ETHERNET ?
		"RoCE" : "InfiniBand", peer, ic_peer_gid.raw, sgid_index);
	ic_server = ic_register_responder(ic_port, IC_CLASS_SERVE,
					  ic_serve_recv, &ic_served);
	if (IS_ERR(ic_server)) {
		pr_warn("no class %#x responder on %s: %ld\n", IC_CLASS_SERVE,
			dev, PTR_ERR(ic_server));
		ic_server = NULL;
	}
	list = kstrdup(cases, GFP_KERNEL);
	if (!list) {
		ret = -ENOMEM;
		goto err_server;
	}
	p = list;
	while ((name = strsep(&p, ",")) != NULL) {
		if (!strcmp(name, "all")) {
			for (i = 0; i < ARRAY_SIZE(ic_cases); i++) {
				if (hold && ic_cases[i].program)
					continue;
				ic_run(ic_cases[i].name);
			}
		} else if (*name) {
			ic_run(name);
		}
	}
	kfree(list);
	if (hold && !ic_remove_armed)
		ic_run("remove");
	pr_info("done %u passed, %u failed\n", ic_passed, ic_failed);
	return 0;

err_server:
	if (ic_server)
		kmad_unregister_agent(ic_server);
err_put:
	if (ic_peer_port)
		kmad_port_put(ic_peer_port);
	kmad_port_put(ic_port);
	return ret;
}

static void __exit kmad_interop_exit(void)
{
	if (ic_remove_armed)
		ic_remove_check();
	if (ic_server)
		kmad_unregister_agent(ic_server);
	pr_info("unloaded (the class %#04x responder on %s answered %d Gets)\n",
		IC_CLASS_SERVE, dev, atomic_read(&ic_served));
	if (ic_peer_port)
		kmad_port_put(ic_peer_port);
	kmad_port_put(ic_port);
}

module_init(kmad_interop_init);
module_exit(kmad_interop_exit);

MODULE_DESCRIPTION("kmad interop cases against ib_mad and rdma-core over rxe");
MODULE_LICENSE("GPL");
