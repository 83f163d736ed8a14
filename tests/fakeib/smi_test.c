// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_fakeib_smi: kmad SMI agents through kmad_ib's QP0 bridge, on
 * kmad_fakeib's InfiniBand ports (`make fakeib`, tests/fakeib/guest.sh).
 *
 * Loaded where kmad_ib made kmad devices of fakeib0 (LID 1) and fakeib1
 * (LID 2).  With sma=1 it registers, on peer= (fakeib1), a kmad agent on
 * QP0 for LID-routed SubnGet, which answers NodeInfo with recognisable
 * data (node GUID %SMI_NODE_GUID, port GUID one more, revision
 * %SMI_REVISION) and every other attribute with status 0x000c; it stays
 * registered while the module is loaded, for Debian's smpquery.  Then it
 * runs the cases named by cases= from a kmad SMI agent on dev=
 * (fakeib0), printing one line each:
 *
 *   kmad_fakeib_smi: <case>: ok <detail>
 *   kmad_fakeib_smi: <case>: FAILED <why>
 *
 * Cases:
 *   smi_kmad     SubnGet(NodeInfo) to LID 2, answered by the kmad SMA on
 *                the peer (needs sma=1): every response is GetResp,
 *                status 0, from LID 2 QP0, with the TID sent and the SMA's
 *                NodeInfo; one callback per send, all OK, no retry.
 *                Before them another agent's SubnGets with the same lower
 *                TID halves go to LID 9 and time out, so that their
 *                copies linger in ib_mad meanwhile: no answer may go to
 *                them.
 *   smi_ibmad    the same with no kmad SMA (sma=0): fakeib1's ib_mad
 *                answers status 0x000c, TID kept.
 *   smi_timeout  SubnGet to LID 9 (no such port), timeout 100 ms, 2
 *                retries: RESP_TIMEOUT after about 300 ms, 2 retries each.
 *   smi_dr       an agent for directed-route SMPs (class 0x81) fails with
 *                -EOPNOTSUPP; a directed-route SubnGet ends once with
 *                LOCAL_ERROR (kmad_ib carries LID-routed SMPs only).
 *   rereg        ib_core port events on dev= through kmad_ib (raised by
 *                kmad_fakeib_port_event()): a LID change calls a kmad
 *                client's port_changed without moving
 *                kmad_port_reregisters(); a client reregister moves it by
 *                one, and the client's next port_changed sees it moved.
 *   smi_set_tid  an ib_mad agent on dev= and a kmad agent with the same
 *                hi_tid: the ib_mad agent's SubnGet (TID low half 0x77)
 *                to LID 9 must time out with no response while the kmad
 *                agent's SubnSet with the same TID and no timeout goes to
 *                LID 2 and is answered there (kmad_ib gives it a TID of
 *                its own QP0 agent's).
 *   hold         leaves hold_sends= SubnGets to LID 9 outstanding
 *                (timeout 60 s) for the harness to unload kmad_ib; at
 *                unload this module prints "hold-exit" with the count of
 *                callbacks: each send called back exactly once.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include <kmad/mad.h>
#include <kmad/wire.h>

#include "fakeib.h"

static char *dev = "fakeib0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "kmad device the requests leave from (default fakeib0)");

static char *peer = "fakeib1";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "kmad device of the peer (default fakeib1)");

static bool sma;
module_param(sma, bool, 0444);
MODULE_PARM_DESC(sma, "register a kmad SMA (LID-routed SubnGet) on peer=");

static char *cases = "";
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "comma-separated cases to run");

static uint count = 16;
module_param(count, uint, 0444);
MODULE_PARM_DESC(count, "SubnGets per exchange case (default 16)");

static uint hold_sends = 32;
module_param(hold_sends, uint, 0444);
MODULE_PARM_DESC(hold_sends, "hold: SubnGets left outstanding (default 32)");

#define SMI_NODE_GUID		0x6b6d61642d534d41ULL	/* "kmad-SMA" */
#define SMI_REVISION		0x00c0ffee
#define SMI_ATTR_NODE_INFO	0x0011
#define SMI_DEAD_LID		9
#define SMI_CASE_WAIT_MS	30000
#define SMI_HOLD_TIMEOUT_MS	60000
#define SMI_STATUS_UNSUPPORTED	0x000c
#define SMI_ANY_STATUS		(-1)

/**
 * struct smi_case - one case's expectations and what happened.
 * @name: the case.
 * @want: how every send must end (&enum kmad_send_status), or
 *	%SMI_ANY_STATUS.
 * @want_mad_status: the responses' MAD status.
 * @want_data: the responses must carry the kmad SMA's NodeInfo.
 * @lock: guards @why.
 * @why: the first failure, empty if none.
 * @outstanding: sends posted and not called back, plus the poster's one.
 * @all_done: completed when @outstanding drops to 0.
 * @callbacks: send_handler calls.
 * @twice: sends called back more than once.
 * @responses: responses matched.
 * @status: callbacks per &enum kmad_send_status.
 */
struct smi_case {
	const char *name;
	int want;
	u16 want_mad_status;
	bool want_data;
	spinlock_t lock;	/* @why */
	char why[160];
	atomic_t outstanding;
	struct completion all_done;
	atomic_t callbacks;
	atomic_t twice;
	atomic_t responses;
	atomic_t status[KMAD_SEND_REMOTE_ABORT + 1];
};

/* Per send. */
struct smi_send {
	struct smi_case *c;
	u64 tid;
	bool responded;
	bool called;
};

static struct kmad_port *smi_port, *smi_peer_port;
static struct kmad_agent *smi_sma;
static atomic_t smi_sma_answers = ATOMIC_INIT(0);
static unsigned int smi_passed, smi_failed;

/* hold: the case outlives the module's init. */
static struct smi_case smi_hold_case;
static struct kmad_agent *smi_hold_agent;
static unsigned int smi_hold_posted;

static __printf(2, 3) void smi_fail(struct smi_case *c, const char *fmt, ...)
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

static void smi_case_init(struct smi_case *c, const char *name, int want)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->want = want;
	spin_lock_init(&c->lock);
	atomic_set(&c->outstanding, 1);
	init_completion(&c->all_done);
	for (i = 0; i <= KMAD_SEND_REMOTE_ABORT; i++)
		atomic_set(&c->status[i], 0);
}

/* ---- the kmad SMA on the peer. */

static void smi_sma_send(struct kmad_agent *agent, struct kmad_send_wc *wc)
{
	if (wc->status == KMAD_SEND_OK)
		atomic_inc(&smi_sma_answers);
	kmad_free_send_buf(wc->send_buf);
}

/* NodeInfo (IBTA 14.2.5.3) as our SMA reports it. */
static void smi_node_info(u8 *d)
{
	__be64 guid = cpu_to_be64(SMI_NODE_GUID);
	__be64 port_guid = cpu_to_be64(SMI_NODE_GUID + 1);
	__be32 rev = cpu_to_be32(SMI_REVISION);

	d[0] = 1;				/* BaseVersion */
	d[1] = 1;				/* ClassVersion */
	d[2] = 1;				/* NodeType: channel adapter */
	d[3] = 1;				/* NumPorts */
	memcpy(&d[4], &guid, 8);		/* SystemImageGUID */
	memcpy(&d[12], &guid, 8);		/* NodeGUID */
	memcpy(&d[20], &port_guid, 8);		/* PortGUID */
	d[28] = 0;				/* PartitionCap: 1 */
	d[29] = 1;
	d[30] = 0x6b;				/* DeviceID */
	d[31] = 0x6d;
	memcpy(&d[32], &rev, 4);		/* Revision */
	d[36] = 1;				/* LocalPortNum */
	d[37] = 0x00;				/* VendorID */
	d[38] = 0x6b;
	d[39] = 0x6d;
}

static void smi_sma_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	struct kmad_send_buf *resp;
	struct kmad_smp *smp;
	bool node_info;

	if (req || wc->mad->mad_hdr.method != KMAD_METHOD_GET) {
		kmad_free_recv(wc);
		return;
	}
	node_info = be16_to_cpu(wc->mad->mad_hdr.attr_id) == SMI_ATTR_NODE_INFO;
	resp = kmad_create_response(agent, wc, GFP_KERNEL);
	kmad_free_recv(wc);
	if (IS_ERR_OR_NULL(resp)) {
		pr_warn_ratelimited("SMA: no response buffer: %ld\n",
				    PTR_ERR(resp));
		return;
	}
	smp = (struct kmad_smp *)resp->mad;
	if (node_info)
		smi_node_info(smp->data);
	else
		smp->status = cpu_to_be16(SMI_STATUS_UNSUPPORTED);
	if (kmad_post_send(resp))
		kmad_free_send_buf(resp);
}

static int smi_sma_register(void)
{
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};
	struct kmad_agent *a;

	set_bit(KMAD_METHOD_GET, req.method_mask);
	a = kmad_register_agent(smi_peer_port, KMAD_QPT_SMI, &req,
				smi_sma_send, smi_sma_recv, NULL);
	if (IS_ERR(a))
		return PTR_ERR(a);
	smi_sma = a;
	return 0;
}

/* ---- the requester on dev=. */

static void smi_send_handler(struct kmad_agent *agent,
			     struct kmad_send_wc *wc)
{
	struct smi_send *s = wc->send_buf->context[0];
	struct smi_case *c = s->c;

	if (s->called) {
		atomic_inc(&c->twice);
		return;
	}
	s->called = true;
	atomic_inc(&c->callbacks);
	if (wc->status <= KMAD_SEND_REMOTE_ABORT)
		atomic_inc(&c->status[wc->status]);
	if (c->want != SMI_ANY_STATUS && wc->status != c->want)
		smi_fail(c, "TID %#llx ended with status %d, want %d", s->tid,
			 wc->status, c->want);
	else if (wc->status == KMAD_SEND_OK && !s->responded)
		smi_fail(c, "TID %#llx: OK without a response", s->tid);
	/* Not freed: a second callback must find it (counted in @twice). */
	kmad_free_send_buf(wc->send_buf);
	if (atomic_dec_and_test(&c->outstanding))
		complete(&c->all_done);
}

static void smi_check_response(struct smi_case *c, struct smi_send *s,
			       const struct kmad_recv_wc *wc)
{
	const struct kmad_smp *smp = (const struct kmad_smp *)wc->mad;
	u8 want[40];

	if (smp->method != KMAD_METHOD_GET_RESP ||
	    smp->mgmt_class != KMAD_MGMT_CLASS_SUBN_LID_ROUTED)
		smi_fail(c, "TID %#llx: class %#x method %#x", s->tid,
			 smp->mgmt_class, smp->method);
	else if (be64_to_cpu(smp->tid) != s->tid)
		smi_fail(c, "TID %#llx answered with TID %#llx", s->tid,
			 be64_to_cpu(smp->tid));
	else if (be16_to_cpu(smp->status) != c->want_mad_status)
		smi_fail(c, "TID %#llx: status %#06x, want %#06x", s->tid,
			 be16_to_cpu(smp->status), c->want_mad_status);
	else if (wc->src_qpn != 0 || wc->slid != kmad_port_lid(smi_peer_port))
		smi_fail(c, "TID %#llx: answered from LID %u QP %u", s->tid,
			 wc->slid, wc->src_qpn);
	else if (c->want_data && (smi_node_info(want),
				  memcmp(smp->data, want, sizeof(want))))
		smi_fail(c, "TID %#llx: NodeInfo is not the kmad SMA's (NodeGUID %*phN)",
			 s->tid, 8, &smp->data[12]);
}

static void smi_recv_handler(struct kmad_agent *agent,
			     struct kmad_send_buf *request,
			     struct kmad_recv_wc *wc)
{
	struct smi_send *s;

	if (!request) {
		kmad_free_recv(wc);
		return;
	}
	s = request->context[0];
	if (s->responded)
		smi_fail(s->c, "TID %#llx: two responses", s->tid);
	s->responded = true;
	atomic_inc(&s->c->responses);
	smi_check_response(s->c, s, wc);
	kmad_free_recv(wc);
}

static struct kmad_agent *smi_requester(void)
{
	struct kmad_reg_req req = {};	/* responses only */

	return kmad_register_agent(smi_port, KMAD_QPT_SMI, &req,
				   smi_send_handler, smi_recv_handler, NULL);
}

/*
 * Post a SubnGet(NodeInfo) of @c to @dlid.  @s_out, if not NULL, gets the
 * per-send record (freed by the caller after every callback).
 */
static int smi_post_get(struct kmad_agent *agent, struct smi_case *c,
			u16 dlid, u32 n, unsigned int timeout_ms,
			unsigned int retries, struct smi_send **s_out)
{
	struct kmad_dest d = {
		.dlid = dlid,
		.remote_qpn = 0,
	};
	struct kmad_send_buf *buf;
	struct smi_send *s;
	int ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	buf = kmad_alloc_send_buf(agent, &d, GFP_KERNEL);
	if (IS_ERR_OR_NULL(buf)) {
		kfree(s);
		return buf ? PTR_ERR(buf) : -ENOMEM;
	}
	s->c = c;
	buf->context[0] = s;
	buf->timeout_ms = timeout_ms;
	buf->retries = retries;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.tid = cpu_to_be64(0x5000 + n);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(SMI_ATTR_NODE_INFO);
	s->tid = (u64)agent->hi_tid << 32 | (0x5000 + n);
	atomic_inc(&c->outstanding);
	if (s_out)
		*s_out = s;
	ret = kmad_post_send(buf);
	if (ret) {
		atomic_dec(&c->outstanding);
		if (s_out)
			*s_out = NULL;
		kfree(s);
		kmad_free_send_buf(buf);
	}
	return ret;
}

/* Drop the poster's count and wait for every callback of @c. */
static bool smi_wait(struct smi_case *c, unsigned int ms)
{
	if (atomic_dec_and_test(&c->outstanding))
		complete(&c->all_done);
	return wait_for_completion_timeout(&c->all_done,
					   msecs_to_jiffies(ms));
}

static __printf(3, 4) void smi_case_info(const char *name,
					 struct smi_case *c,
					 const char *fmt, ...)
{
	char detail[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (c->why[0]) {
		pr_info("%s: FAILED %s (%s)\n", name, c->why, detail);
		smi_failed++;
		return;
	}
	pr_info("%s: ok %s\n", name, detail);
	smi_passed++;
}

/*
 * @n SubnGets to @dlid, @timeout_ms and @retries each; waits for every
 * callback and checks the counts.  Returns the elapsed ms.
 */
static unsigned int smi_run(struct smi_case *c, struct kmad_agent *agent,
			    u16 dlid, unsigned int n, unsigned int timeout_ms,
			    unsigned int retries, unsigned int *posted)
{
	struct smi_send **sends;
	unsigned long start = jiffies;
	unsigned int i, ms;
	int ret;

	*posted = 0;
	sends = kcalloc(n, sizeof(*sends), GFP_KERNEL);
	if (!sends) {
		smi_fail(c, "no memory");
		return 0;
	}
	for (i = 0; i < n; i++) {
		ret = smi_post_get(agent, c, dlid, i, timeout_ms, retries,
				   &sends[i]);
		if (ret) {
			smi_fail(c, "post #%u: %d", i, ret);
			break;
		}
		(*posted)++;
	}
	if (!smi_wait(c, SMI_CASE_WAIT_MS))
		smi_fail(c, "%d callbacks missing after %u ms",
			 atomic_read(&c->outstanding), SMI_CASE_WAIT_MS);
	ms = jiffies_to_msecs(jiffies - start);
	if (atomic_read(&c->callbacks) != *posted)
		smi_fail(c, "%d callbacks for %u sends",
			 atomic_read(&c->callbacks), *posted);
	/* After every callback: none may come twice (counted, not freed). */
	for (i = 0; i < *posted; i++)
		kfree(sends[i]);
	kfree(sends);
	return ms;
}

/*
 * SubnGets of another agent to LID 9, with the lower TID halves the
 * exchange then uses, ended by their timeout: their copies still linger in
 * kmad_ib's ib_mad agent (bridge_smp_timeout_ms) during the exchange.
 */
static void smi_decoys(struct smi_case *for_case)
{
	struct kmad_agent *agent;
	struct smi_case c;
	unsigned int posted;

	smi_case_init(&c, "decoys", KMAD_SEND_RESP_TIMEOUT);
	agent = smi_requester();
	if (IS_ERR(agent)) {
		smi_fail(for_case, "decoys: register on QP0: %ld",
			 PTR_ERR(agent));
		return;
	}
	smi_run(&c, agent, SMI_DEAD_LID, count, 50, 0, &posted);
	kmad_unregister_agent(agent);
	if (c.why[0])
		smi_fail(for_case, "decoys: %s", c.why);
}

static void smi_exchange(const char *name, bool want_data, u16 mad_status)
{
	struct kmad_agent_stats st;
	struct kmad_agent *agent;
	struct smi_case c;
	unsigned int posted, ms;

	smi_case_init(&c, name, KMAD_SEND_OK);
	c.want_data = want_data;
	c.want_mad_status = mad_status;
	if (want_data != !!smi_sma) {
		smi_fail(&c, "wrong setup: sma=%d", sma);
		smi_case_info(name, &c, "not run");
		return;
	}
	smi_decoys(&c);
	agent = smi_requester();
	if (IS_ERR(agent)) {
		smi_fail(&c, "register on QP0: %ld", PTR_ERR(agent));
		smi_case_info(name, &c, "no agent");
		return;
	}
	ms = smi_run(&c, agent, kmad_port_lid(smi_peer_port), count, 2000, 1,
		     &posted);
	kmad_agent_get_stats(agent, &st);
	kmad_unregister_agent(agent);
	/* Answered at once: a retry means a first answer went astray. */
	if (st.retries)
		smi_fail(&c, "%llu retries: answers lost", st.retries);
	if (atomic_read(&c.responses) != posted)
		smi_fail(&c, "%d responses for %u sends",
			 atomic_read(&c.responses), posted);
	smi_case_info(name, &c, "%u SubnGet(NodeInfo) to LID %u after %u to LID %u with the same TID halves: %d GetResp from LID %u QP0, status %#06x, TIDs kept%s, %d callbacks, %u ms",
		      posted, kmad_port_lid(smi_peer_port), count, SMI_DEAD_LID,
		      atomic_read(&c.responses), kmad_port_lid(smi_peer_port),
		      mad_status,
		      want_data ? ", NodeGUID 0x6b6d61642d534d41 from the kmad SMA" : "",
		      atomic_read(&c.callbacks), ms);
}

static void smi_case_kmad(const char *name)
{
	int before = atomic_read(&smi_sma_answers);

	smi_exchange(name, true, 0);
	pr_info("%s: (the kmad SMA on %s sent %d answers)\n", name, peer,
		atomic_read(&smi_sma_answers) - before);
}

static void smi_case_ibmad(const char *name)
{
	smi_exchange(name, false, SMI_STATUS_UNSUPPORTED);
}

static void smi_case_timeout(const char *name)
{
	struct kmad_agent_stats st;
	struct kmad_agent *agent;
	struct smi_case c;
	unsigned int posted, ms;

	smi_case_init(&c, name, KMAD_SEND_RESP_TIMEOUT);
	agent = smi_requester();
	if (IS_ERR(agent)) {
		smi_fail(&c, "register on QP0: %ld", PTR_ERR(agent));
		smi_case_info(name, &c, "no agent");
		return;
	}
	ms = smi_run(&c, agent, SMI_DEAD_LID, 4, 100, 2, &posted);
	kmad_agent_get_stats(agent, &st);
	kmad_unregister_agent(agent);
	if (ms < 300 || ms > 3000)
		smi_fail(&c, "took %u ms, want about 300", ms);
	if (st.retries != 2 * posted)
		smi_fail(&c, "%llu retries for %u sends, want 2 each",
			 st.retries, posted);
	smi_case_info(name, &c, "%u SubnGet to LID %u (no such port): %d RESP_TIMEOUT after %u ms, %llu retries, %d callbacks",
		      posted, SMI_DEAD_LID,
		      atomic_read(&c.status[KMAD_SEND_RESP_TIMEOUT]), ms,
		      st.retries, atomic_read(&c.callbacks));
}

static void smi_case_dr(const char *name)
{
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
		.class_version = 1,
	};
	struct kmad_dest d = {};
	struct kmad_send_buf *buf;
	struct kmad_agent *agent, *dr;
	struct smi_send *s;
	struct smi_case c;
	u8 path[1] = { 1 };
	long reg_ret;
	int ret;

	smi_case_init(&c, name, KMAD_SEND_LOCAL_ERROR);
	set_bit(KMAD_METHOD_GET, req.method_mask);
	dr = kmad_register_agent(smi_port, KMAD_QPT_SMI, &req,
				 smi_send_handler, smi_recv_handler, NULL);
	reg_ret = IS_ERR(dr) ? PTR_ERR(dr) : 0;
	if (!IS_ERR(dr)) {
		kmad_unregister_agent(dr);
		smi_fail(&c, "a class 0x81 agent registered");
	} else if (reg_ret != -EOPNOTSUPP) {
		smi_fail(&c, "class 0x81 registration: %ld, want -EOPNOTSUPP",
			 reg_ret);
	}
	agent = smi_requester();
	if (IS_ERR(agent)) {
		smi_fail(&c, "register on QP0: %ld", PTR_ERR(agent));
		smi_case_info(name, &c, "no agent");
		return;
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		smi_fail(&c, "no memory");
		goto out;
	}
	buf = kmad_alloc_send_buf(agent, &d, GFP_KERNEL);
	if (IS_ERR_OR_NULL(buf)) {
		smi_fail(&c, "no send buffer");
		goto out;
	}
	s->c = &c;
	buf->context[0] = s;
	buf->timeout_ms = 500;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_GET;
	buf->mad->mad_hdr.attr_id = cpu_to_be16(SMI_ATTR_NODE_INFO);
	ret = kmad_send_buf_set_dr_path(buf, path, 1);
	if (ret) {
		smi_fail(&c, "kmad_send_buf_set_dr_path: %d", ret);
		kmad_free_send_buf(buf);
		goto out;
	}
	atomic_inc(&c.outstanding);
	ret = kmad_post_send(buf);
	if (ret) {
		/* Refused at the post would do as well as a local error. */
		atomic_dec(&c.outstanding);
		kmad_free_send_buf(buf);
		if (ret != -EINVAL)
			smi_fail(&c, "directed-route post: %d, want 0 or -EINVAL",
				 ret);
		pr_info("%s: (the directed-route post was refused: %d)\n",
			name, ret);
	}
	if (!smi_wait(&c, SMI_CASE_WAIT_MS))
		smi_fail(&c, "no callback");
	if (!ret && atomic_read(&c.callbacks) != 1)
		smi_fail(&c, "%d callbacks for 1 send",
			 atomic_read(&c.callbacks));
out:
	kmad_unregister_agent(agent);
	kfree(s);
	smi_case_info(name, &c, "class 0x81 agent: %ld; directed-route SubnGet: %d LOCAL_ERROR, %d callbacks, %d twice",
		      reg_ret, atomic_read(&c.status[KMAD_SEND_LOCAL_ERROR]),
		      atomic_read(&c.callbacks), atomic_read(&c.twice));
}

/* hold: sends left outstanding; checked at module exit. */
static struct smi_send **smi_hold_sends;

static void smi_case_hold(const char *name)
{
	struct smi_case *c = &smi_hold_case;
	unsigned int i;
	int ret;

	smi_case_init(c, name, SMI_ANY_STATUS);
	smi_hold_agent = smi_requester();
	if (IS_ERR(smi_hold_agent)) {
		smi_fail(c, "register on QP0: %ld", PTR_ERR(smi_hold_agent));
		smi_hold_agent = NULL;
		smi_case_info(name, c, "no agent");
		return;
	}
	smi_hold_sends = kcalloc(hold_sends, sizeof(*smi_hold_sends),
				 GFP_KERNEL);
	if (!smi_hold_sends) {
		smi_fail(c, "no memory");
		smi_case_info(name, c, "nothing posted");
		return;
	}
	for (i = 0; i < hold_sends; i++) {
		ret = smi_post_get(smi_hold_agent, c, SMI_DEAD_LID, i,
				   SMI_HOLD_TIMEOUT_MS, 0, &smi_hold_sends[i]);
		if (ret) {
			smi_fail(c, "post #%u: %d", i, ret);
			break;
		}
		smi_hold_posted++;
	}
	smi_case_info(name, c, "%u SubnGet to LID %u outstanding (timeout %u ms), %d called back so far",
		      smi_hold_posted, SMI_DEAD_LID, SMI_HOLD_TIMEOUT_MS,
		      atomic_read(&c->callbacks));
}

/* At exit, after the harness unloaded kmad_ib: every hold send once. */
static void smi_hold_check(void)
{
	struct smi_case *c = &smi_hold_case;
	unsigned int i;

	if (!smi_wait(c, SMI_CASE_WAIT_MS))
		smi_fail(c, "%d callbacks missing", atomic_read(&c->outstanding));
	if (atomic_read(&c->callbacks) != smi_hold_posted)
		smi_fail(c, "%d callbacks for %u sends",
			 atomic_read(&c->callbacks), smi_hold_posted);
	if (atomic_read(&c->twice))
		smi_fail(c, "%d sends called back twice",
			 atomic_read(&c->twice));
	if (atomic_read(&c->status[KMAD_SEND_OK]))
		smi_fail(c, "%d sends OK to a LID no port has",
			 atomic_read(&c->status[KMAD_SEND_OK]));
	kmad_unregister_agent(smi_hold_agent);
	pr_info("hold-exit: %s %u sends, %d callbacks (%d FLUSHED, %d RESP_TIMEOUT, %d LOCAL_ERROR), %d twice%s%s\n",
		c->why[0] ? "FAILED" : "ok", smi_hold_posted,
		atomic_read(&c->callbacks),
		atomic_read(&c->status[KMAD_SEND_FLUSHED]),
		atomic_read(&c->status[KMAD_SEND_RESP_TIMEOUT]),
		atomic_read(&c->status[KMAD_SEND_LOCAL_ERROR]),
		atomic_read(&c->twice), c->why[0] ? ": " : "", c->why);
	for (i = 0; i < smi_hold_posted; i++)
		kfree(smi_hold_sends[i]);
	kfree(smi_hold_sends);
}

/* rereg: a kmad client that records its port_changed calls for dev=. */
static atomic_t smi_cl_calls = ATOMIC_INIT(0);
static u32 smi_cl_rereg;	/* kmad_port_reregisters() in the last call */

static int smi_cl_add(struct kmad_client *client, struct kmad_port *port,
		      void **data)
{
	*data = NULL;
	return 0;
}

static void smi_cl_remove(struct kmad_client *client, struct kmad_port *port,
			  void *data)
{
}

static void smi_cl_changed(struct kmad_client *client, struct kmad_port *port,
			   void *data)
{
	if (port != smi_port)
		return;
	WRITE_ONCE(smi_cl_rereg, kmad_port_reregisters(port));
	atomic_inc(&smi_cl_calls);
}

static struct kmad_client smi_client = {
	.name = "kmad_fakeib_smi",
	.add = smi_cl_add,
	.remove = smi_cl_remove,
	.port_changed = smi_cl_changed,
};

/*
 * Wait up to 5 s for a port_changed call past @calls that saw the count
 * @rereg (a reregister may come as a second call, after one for the
 * attributes read with it).
 */
static bool smi_cl_wait(int calls, u32 rereg)
{
	unsigned long end = jiffies + 5 * HZ;

	while (atomic_read(&smi_cl_calls) <= calls ||
	       READ_ONCE(smi_cl_rereg) != rereg) {
		if (time_after(jiffies, end))
			return false;
		msleep(20);
	}
	return true;
}

static void smi_case_rereg(const char *name)
{
	u32 before = kmad_port_reregisters(smi_port);
	int ret, calls;

	ret = kmad_register_client(&smi_client);
	if (ret) {
		pr_info("%s: FAILED kmad_register_client: %d\n", name, ret);
		smi_failed++;
		return;
	}
	calls = atomic_read(&smi_cl_calls);
	ret = kmad_fakeib_port_event(dev, IB_EVENT_LID_CHANGE);
	if (ret || !smi_cl_wait(calls, before) ||
	    kmad_port_reregisters(smi_port) != before) {
		pr_info("%s: FAILED LID change: event %d, %d calls, count %u -> %u\n",
			name, ret, atomic_read(&smi_cl_calls) - calls, before,
			kmad_port_reregisters(smi_port));
		smi_failed++;
		goto out;
	}
	calls = atomic_read(&smi_cl_calls);
	ret = kmad_fakeib_port_event(dev, IB_EVENT_CLIENT_REREGISTER);
	if (ret || !smi_cl_wait(calls, before + 1) ||
	    kmad_port_reregisters(smi_port) != before + 1 ||
	    READ_ONCE(smi_cl_rereg) != before + 1) {
		pr_info("%s: FAILED client reregister: event %d, %d calls, count %u -> %u, seen %u\n",
			name, ret, atomic_read(&smi_cl_calls) - calls, before,
			kmad_port_reregisters(smi_port),
			READ_ONCE(smi_cl_rereg));
		smi_failed++;
		goto out;
	}
	pr_info("%s: ok a LID change left kmad_port_reregisters() at %u, a client reregister moved it to %u, seen by port_changed\n",
		name, before, before + 1);
	smi_passed++;
out:
	kmad_unregister_client(&smi_client);
}

/* ---- smi_set_tid: an ib_mad agent whose hi_tid is a kmad agent's. */

struct smi_x {
	atomic_t recvs;		/* responses ib_mad gave it */
	int status;		/* its Get's send completion */
	struct completion done;
};

static void smi_x_send(struct ib_mad_agent *a, struct ib_mad_send_wc *wc)
{
	struct smi_x *x = a->context;

	x->status = wc->status;
	complete(&x->done);
}

static void smi_x_recv(struct ib_mad_agent *a, struct ib_mad_send_buf *sb,
		       struct ib_mad_recv_wc *rwc)
{
	struct smi_x *x = a->context;

	atomic_inc(&x->recvs);
	ib_free_recv_mad(rwc);
}

static struct ib_mad_agent *smi_x_register(struct ib_device *ibdev,
					   struct smi_x *x)
{
	return ib_register_mad_agent(ibdev, 1, IB_QPT_SMI, NULL, 0,
				     smi_x_send, smi_x_recv, x, 0);
}

/*
 * The ib_mad agent @xa's SubnGet(NodeInfo) to LID 9 (nobody), TID
 * (@xa's hi_tid, @lo), timeout @ms: it waits in ib_mad for a response.
 */
static int smi_x_get(struct ib_mad_agent *xa, u32 lo, unsigned int ms,
		     struct ib_mad_send_buf **out)
{
	struct rdma_ah_attr aa = {};
	struct ib_mad_send_buf *msg;
	struct ib_mad_hdr *hdr;
	struct ib_ah *ah;
	int ret;

	aa.type = rdma_ah_find_type(xa->device, 1);
	rdma_ah_set_port_num(&aa, 1);
	rdma_ah_set_dlid(&aa, SMI_DEAD_LID);
	ah = rdma_create_ah(xa->qp->pd, &aa, 0);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	msg = ib_create_send_mad(xa, 0, 0, 0, IB_MGMT_MAD_HDR,
				 IB_MGMT_MAD_DATA, GFP_KERNEL,
				 IB_MGMT_BASE_VERSION);
	if (IS_ERR(msg)) {
		rdma_destroy_ah(ah, 0);
		return PTR_ERR(msg);
	}
	hdr = msg->mad;
	hdr->base_version = IB_MGMT_BASE_VERSION;
	hdr->mgmt_class = IB_MGMT_CLASS_SUBN_LID_ROUTED;
	hdr->class_version = 1;
	hdr->method = IB_MGMT_METHOD_GET;
	hdr->attr_id = cpu_to_be16(SMI_ATTR_NODE_INFO);
	hdr->tid = cpu_to_be64((u64)xa->hi_tid << 32 | lo);
	msg->ah = ah;
	msg->timeout_ms = ms;
	msg->retries = 0;
	ret = ib_post_send_mad(msg, NULL);
	if (ret) {
		ib_free_send_mad(msg);
		rdma_destroy_ah(ah, 0);
		return ret;
	}
	*out = msg;
	return 0;
}

/* The peer's kmad agent for SubnSet: counts them and answers each. */
static atomic_t smi_sets_seen = ATOMIC_INIT(0);
static u64 smi_set_wire_tid;

static void smi_set_recv(struct kmad_agent *agent, struct kmad_send_buf *req,
			 struct kmad_recv_wc *wc)
{
	struct kmad_send_buf *resp;

	if (req || wc->mad->mad_hdr.method != KMAD_METHOD_SET) {
		kmad_free_recv(wc);
		return;
	}
	WRITE_ONCE(smi_set_wire_tid, be64_to_cpu(wc->mad->mad_hdr.tid));
	atomic_inc(&smi_sets_seen);
	resp = kmad_create_response(agent, wc, GFP_KERNEL);
	kmad_free_recv(wc);
	if (IS_ERR_OR_NULL(resp))
		return;
	if (kmad_post_send(resp))
		kmad_free_send_buf(resp);
}

static struct kmad_agent *smi_set_agent(void)
{
	struct kmad_reg_req req = {
		.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
		.class_version = 1,
	};

	set_bit(KMAD_METHOD_SET, req.method_mask);
	return kmad_register_agent(smi_peer_port, KMAD_QPT_SMI, &req,
				   smi_sma_send, smi_set_recv, NULL);
}

/*
 * kmad and ib_mad number their agents each on their own, so a kmad
 * agent's hi_tid may be an ib_mad agent's.  A kmad SubnSet with no
 * timeout leaves through ib_mad's QP0, and its answer (ib_mad on the
 * peer answers 0x000c) comes back to ib_mad, which routes a response by
 * the upper half of its TID: with kmad's TID, to that ib_mad agent,
 * where it completed the agent's own SubnGet with the same TID (to LID
 * 9, which nobody answers).  kmad_ib gives such a send a TID of its own
 * QP0 agent's, which ib_mad drops: the SubnGet must time out, with no
 * response, while a kmad agent on the peer got the Set (with another
 * upper TID half than the kmad agent's) and answered it.  Before the fix
 * in kmad_ib the SubnGet got the Set's answer.
 */
static void smi_case_set_tid(const char *name)
{
	struct ib_mad_send_buf *msg = NULL;
	struct kmad_agent *k = NULL, *setter;
	struct ib_mad_agent *xa;
	struct ib_device *ibdev;
	struct kmad_dest d = { .dlid = kmad_port_lid(smi_peer_port) };
	struct kmad_send_buf *buf;
	struct smi_send *s = NULL;
	struct smi_case c;
	struct smi_x x;
	unsigned int i;
	u32 hi_tid = 0;
	int ret;

	smi_case_init(&c, name, KMAD_SEND_OK);
	atomic_set(&x.recvs, 0);
	x.status = -1;
	init_completion(&x.done);
	atomic_set(&smi_sets_seen, 0);
	setter = smi_set_agent();
	if (IS_ERR(setter)) {
		smi_fail(&c, "SubnSet agent on %s: %ld", peer, PTR_ERR(setter));
		setter = NULL;
	}
	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		smi_fail(&c, "no ib_core device %s", dev);
		goto out;
	}
	xa = smi_x_register(ibdev, &x);
	if (IS_ERR(xa)) {
		smi_fail(&c, "ib_register_mad_agent: %ld", PTR_ERR(xa));
		xa = NULL;
		goto out;
	}
	/* Bring the two numberings to the same hi_tid: each counts up. */
	for (i = 0; i < 4096; i++) {
		if (!k) {
			k = smi_requester();
			if (IS_ERR(k)) {
				smi_fail(&c, "register on QP0: %ld",
					 PTR_ERR(k));
				k = NULL;
				goto out;
			}
		}
		if (k->hi_tid == xa->hi_tid)
			break;
		if (k->hi_tid < xa->hi_tid) {
			kmad_unregister_agent(k);
			k = NULL;
			continue;
		}
		ib_unregister_mad_agent(xa);
		xa = smi_x_register(ibdev, &x);
		if (IS_ERR(xa)) {
			smi_fail(&c, "ib_register_mad_agent: %ld",
				 PTR_ERR(xa));
			xa = NULL;
			goto out;
		}
	}
	if (!k || k->hi_tid != xa->hi_tid) {
		smi_fail(&c, "no common hi_tid after %u registrations", i);
		goto out;
	}
	hi_tid = k->hi_tid;
	ret = smi_x_get(xa, 0x77, 3000, &msg);
	if (ret) {
		smi_fail(&c, "ib_mad SubnGet: %d", ret);
		goto out;
	}

	/* kmad's SubnSet(NodeDescription), no timeout, same TID. */
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	buf = s ? kmad_alloc_send_buf(k, &d, GFP_KERNEL) : ERR_PTR(-ENOMEM);
	if (IS_ERR_OR_NULL(buf)) {
		smi_fail(&c, "kmad send buffer: %ld", PTR_ERR(buf));
		goto out;
	}
	s->c = &c;
	s->responded = true;	/* nothing to wait for: OK is right */
	s->tid = (u64)k->hi_tid << 32 | 0x77;
	buf->context[0] = s;
	buf->mad->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	buf->mad->mad_hdr.mgmt_class = KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
	buf->mad->mad_hdr.class_version = 1;
	buf->mad->mad_hdr.method = KMAD_METHOD_SET;
	buf->mad->mad_hdr.tid = cpu_to_be64(0x77);
	buf->mad->mad_hdr.attr_id = cpu_to_be16(0x0010);
	atomic_inc(&c.outstanding);
	ret = kmad_post_send(buf);
	if (ret) {
		atomic_dec(&c.outstanding);
		kmad_free_send_buf(buf);
		smi_fail(&c, "kmad SubnSet post: %d", ret);
		goto out;
	}
	if (!smi_wait(&c, SMI_CASE_WAIT_MS))
		smi_fail(&c, "the SubnSet was not called back");
	if (!wait_for_completion_timeout(&x.done, msecs_to_jiffies(10000)))
		smi_fail(&c, "the ib_mad SubnGet did not end");
	else if (atomic_read(&smi_sets_seen) != 1)
		smi_fail(&c, "the peer's agent got %d SubnSets, want 1",
			 atomic_read(&smi_sets_seen));
	else if (READ_ONCE(smi_set_wire_tid) >> 32 == hi_tid)
		smi_fail(&c, "the SubnSet left with kmad's TID %#llx",
			 READ_ONCE(smi_set_wire_tid));
	else if (atomic_read(&x.recvs) || x.status != IB_WC_RESP_TIMEOUT_ERR)
		smi_fail(&c, "ib_mad's SubnGet (hi_tid %#x): %d responses, status %d",
			 hi_tid, atomic_read(&x.recvs), x.status);
out:
	if (msg && !completion_done(&x.done))
		wait_for_completion_timeout(&x.done, msecs_to_jiffies(10000));
	if (msg) {
		rdma_destroy_ah(msg->ah, 0);
		ib_free_send_mad(msg);
	}
	if (k)
		kmad_unregister_agent(k);
	if (xa)
		ib_unregister_mad_agent(xa);
	if (ibdev)
		ib_device_put(ibdev);
	if (setter)
		kmad_unregister_agent(setter);
	kfree(s);
	smi_case_info(name, &c, "hi_tid %#x for an ib_mad agent and a kmad agent; the ib_mad agent's SubnGet to LID %u ended with status %d and %d responses while kmad's SubnSet with its TID (no timeout) reached LID %u as TID %#llx, %d time(s), and was answered",
		      hi_tid, SMI_DEAD_LID, x.status, atomic_read(&x.recvs),
		      kmad_port_lid(smi_peer_port), READ_ONCE(smi_set_wire_tid),
		      atomic_read(&smi_sets_seen));
}

static const struct {
	const char *name;
	void (*run)(const char *name);
} smi_cases[] = {
	{ "smi_kmad", smi_case_kmad },
	{ "smi_ibmad", smi_case_ibmad },
	{ "smi_timeout", smi_case_timeout },
	{ "smi_dr", smi_case_dr },
	{ "rereg", smi_case_rereg },
	{ "hold", smi_case_hold },
	{ "smi_set_tid", smi_case_set_tid },
};

static void smi_run_case(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(smi_cases); i++) {
		if (!strcmp(smi_cases[i].name, name)) {
			smi_cases[i].run(name);
			return;
		}
	}
	pr_info("%s: FAILED no such case\n", name);
	smi_failed++;
}

static int __init smi_test_init(void)
{
	char *list, *p, *name;
	int ret;

	smi_port = kmad_port_get(dev, 1);
	smi_peer_port = kmad_port_get(peer, 1);
	if (!smi_port || !smi_peer_port) {
		pr_err("no kmad port %s:1 or %s:1 (is kmad_ib loaded?)\n", dev,
		       peer);
		ret = -ENODEV;
		goto err_put;
	}
	pr_info("%s:1 LID %u (SMI: %s) to %s:1 LID %u\n", dev,
		kmad_port_lid(smi_port),
		kmad_port_has_smi(smi_port) ? "yes" : "no", peer,
		kmad_port_lid(smi_peer_port));
	if (sma) {
		ret = smi_sma_register();
		if (ret) {
			pr_err("sma: registering on %s QP0: %d\n", peer, ret);
			goto err_put;
		}
		pr_info("sma: a kmad SMA on %s answers LID-routed SubnGet(NodeInfo) with NodeGUID %#llx\n",
			peer, SMI_NODE_GUID);
	}
	list = kstrdup(cases, GFP_KERNEL);
	if (!list) {
		ret = -ENOMEM;
		goto err_sma;
	}
	p = list;
	while ((name = strsep(&p, ",")) != NULL) {
		if (*name)
			smi_run_case(name);
	}
	kfree(list);
	pr_info("done %u passed, %u failed\n", smi_passed, smi_failed);
	return 0;

err_sma:
	if (smi_sma)
		kmad_unregister_agent(smi_sma);
err_put:
	if (smi_peer_port)
		kmad_port_put(smi_peer_port);
	if (smi_port)
		kmad_port_put(smi_port);
	return ret;
}

static void __exit smi_test_exit(void)
{
	if (smi_hold_agent)
		smi_hold_check();
	if (smi_sma)
		kmad_unregister_agent(smi_sma);
	pr_info("unloaded (the kmad SMA answered %d SubnGets)\n",
		atomic_read(&smi_sma_answers));
	kmad_port_put(smi_peer_port);
	kmad_port_put(smi_port);
}

module_init(smi_test_init);
module_exit(smi_test_exit);

MODULE_DESCRIPTION("kmad SMI agents through kmad_ib's QP0 bridge, on kmad_fakeib");
MODULE_LICENSE("GPL");
