// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_fuzz: generated and mutated MADs (a million with count=1000000)
 * into QP0 and QP1 of a simulated HCA, checking that kmad survives them,
 * accounts for every one and answers only with valid MADs.
 *
 * Cases: fuzz_lengths (every length from 0 to 257 and some above, of three
 * kinds of MAD, into both QPs), fuzz_answer_valid (one request per rule of
 * the answers kmad sends itself, with the answer it must get), fuzz_dr_hops (directed-route
 * SMPs over the hop count, hop pointer and direction), fuzz_replay (the
 * inputs of tests/fuzz/replay.h, when it exists) and fuzz_random (the
 * generator, in shards).
 *
 * The fabric is a step-mode pair, built once for the suite; device 1 is
 * the target.  On it, agents
 * registered for some classes, versions, methods and OUIs (fz_regs[]) take
 * requests, and send-only requester agents keep FZ_SLOTS requests
 * outstanding per QP (fz_tmpls[]: SA, PMA, CM, BM, vendor range 1 and 2 on
 * QP1; LID-routed and directed-route SMPs on QP0) so that responses have
 * something to match.  A case injects MADs with kmad_sim_inject() in
 * batches of at most one receive ring per QP, lets kmad drain them, reads
 * every send kmad put on device 1's wires (kmad_sim_peek_send()), completes
 * those sends without delivering them, and reposts, with a new TID, the
 * requests whose response arrived.  The requests reposted after a batch
 * are still on the wire during the next one, so responses find sends both
 * SENDING (EARLY_RESP) and WAIT_RESP.
 *
 * Inputs (fz_gen()): responses built from an outstanding request (its TID,
 * class and LID; a directed-route one returning), headers from weighted
 * lists (registered and unregistered classes, vendor ranges 0x09-0x0F and
 * 0x30-0x4F with registered, OpenIB, zero and random OUIs, reserved
 * classes, good and bad base and class versions, common, class-specific and
 * reserved methods with and without the RESP bit, status with and without
 * the D bit, attribute IDs, TIDs whose upper half is a live agent's hi_tid
 * and whose lower half an outstanding request's), directed-route fields
 * around the hop-count and hop-pointer boundaries, fully random bytes, and
 * 1-4 byte mutations of any of these; lengths 256 and 1, 23, 24, 25, 255,
 * random, 0 (the simulator refuses it with -EINVAL, which is checked; not
 * counted as injected) and oversized (257, 300, 512: longer than every
 * receive buffer, so the simulator completes the receive with LOC_ERR and
 * returns -EMSGSIZE, both checked);
 * QP the class's own or the other one.  Every choice comes from a
 * xorshift64* generator seeded from the printed seed (module parameter
 * "seed"; each shard of fuzz_random derives its own), so a run repeats.
 *
 * Accounting.  recv.c sends every receive completion down exactly one of
 * these paths and counts it on the port (KMAD_PSTAT_*, port->drops[]):
 *
 *   completed flushed (QP in error)            RECV_FLUSHED
 *   completed with another error (LOC_ERR)     RECV_ERRORS
 *   kmad_mad_validate() fails with verdict v   drops[v]
 *   SMP class on QP1 or GMP class on QP0       WRONG_QP
 *   directed-route SMP the SMI step discards   SMI_DISCARDS
 *   anything else                              RECEIVED
 *
 * A RECEIVED MAD then ends in exactly one of RESP_MATCHED, RESP_UNMATCHED,
 * RESP_UNSOLICITED (a response), REQ_DISPATCHED, REQ_ANSWERED, REQ_DROPPED
 * or REQ_BACKLOG_DROPPED (a request, or a response given unsolicited; the
 * last never here: every handler frees at once).  Not so a MAD that
 * reaches an agent's RMPP receiver, which the rmpp_* counters count (this
 * test registers no RMPP agent).
 * A request dropped with verdict CLASS_VERSION or CLASS_METHOD on a QP of
 * its kind is answered too, so it is counted twice: in drops[v] and in
 * REQ_ANSWERED or REQ_DROPPED.  With N the MADs the simulator took (every
 * length but 0) and A those twice-counted requests:
 *
 *   (1) N = RECV_FLUSHED + RECV_ERRORS + sum(drops[v]) + WRONG_QP
 *           + SMI_DISCARDS + RECEIVED
 *   (2) RECEIVED + A = RESP_MATCHED + RESP_UNMATCHED + RESP_UNSOLICITED
 *                      + REQ_DISPATCHED + REQ_ANSWERED + REQ_DROPPED
 *                      + REQ_BACKLOG_DROPPED
 *
 * The test predicts every term of (1) and (2) but the split of responses
 * into matched and unmatched or unsolicited (an RMPP-active response that
 * matches nothing goes to the recv_handler of the agent whose hi_tid it
 * carries: every agent here has rmpp_version 0; the test predicts how many
 * RMPP-active responses carry one, each either matched or unsolicited),
 * from its own copy of each input
 * (kmad_mad_validate() and kmad_smi_recv(), both fuzzed on the host
 * against independent models, and its own list of registrations), and
 * checks them after every batch, with: RESP_MATCHED = the requesters'
 * recv_handler calls, each for the request whose TID and class it
 * carries; RESP_UNSOLICITED = the calls with no request for an
 * RMPP-active response carrying the agent's own hi_tid; REQ_DISPATCHED =
 * the registered agents' recv_handler calls, each for the agent's own
 * class, version, method and OUI; REQ_ANSWERED =
 * the answers found on the wire, each of which must pass
 * kmad_mad_validate() and be, byte for byte, the answer fz_predict_answer()
 * predicts for a request injected on that QP (the rules of
 * Documentation/ulp-guide.rst, "Requests kmad answers itself"), every
 * predicted answer sent; every MAD a handler gets passes
 * kmad_mad_validate(); the simulator delivered N less the oversized ones
 * and counted those as recv_errors; no receive buffer was missing, no CQE
 * is left unpolled and every send is off the wire.
 *
 * Time.  kmad allocates and frees a receive buffer for every MAD, and more
 * for every answer; under the debug kernel (KASAN, kmemleak and lockdep
 * record a stack trace or a lock chain per allocation and per lock) in
 * TCG that costs about 1-3 ms of guest time per MAD (Documentation/
 * testing.rst has the measurements), so the default run injects
 * FZ_DEFAULT_COUNT random MADs and a million is a long run asked for with
 * the module parameter "count" (make check KMAD_TEST_ARGS=...).  The KUnit
 * executor waits for a case in an uninterruptible sleep, and the debug
 * kernel panics on a task blocked for 60 s, so fuzz_random runs as
 * FZ_SHARD-sized shards, one parameterised case each, and the last shard
 * asserts that they add up to "count".
 */

#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/vmalloc.h>

#include "kmad_test.h"

/*
 * Inputs from tests/fuzz/replay.h, replayed by fuzz_replay into both QPs;
 * Kbuild defines KMAD_FUZZ_HAVE_REPLAY when that file exists (sparse does
 * not know __has_include).
 */
#ifdef KMAD_FUZZ_HAVE_REPLAY
#ifndef KMAD_FUZZ_INPUT_DEFINED
#define KMAD_FUZZ_INPUT_DEFINED
struct kmad_fuzz_input {
	const char *name;
	unsigned int len;
	const unsigned char *data;
};
#endif
#include "../fuzz/replay.h"
#define FZ_HAVE_REPLAY		1
#ifndef KMAD_FUZZ_REPLAY_COUNT
#define KMAD_FUZZ_REPLAY_COUNT	ARRAY_SIZE(kmad_fuzz_replay)
#endif
#endif

#define FZ_SEED			0x6b6d61645f66757aULL
#define FZ_DEFAULT_COUNT	20000
#define FZ_SHARD		5000	/* random MADs per case, at most */
#define FZ_MAX_SHARDS		1024
#define FZ_RQ_DEPTH		256	/* receive ring, and batch, per QP */
#define FZ_REQ_AGENTS		2	/* send-only requesters per QP */
#define FZ_SLOTS		12	/* outstanding requests per QP */
#define FZ_TIMEOUT_MS		60000	/* never expires: the clock stands */
#define FZ_RECENT		16	/* past inputs kept for mutation */
#define FZ_RAW			512	/* generator buffer: room for oversize */
#define FZ_MAX_SIGS		128	/* distinct invalid answers reported */
#define FZ_MAX_BAD_BATCHES	3	/* batches whose mismatch is printed */
#define FZ_DEV			1	/* the target device */
#define FZ_PEER_LID		1	/* device 0's LID, where requests go */

static unsigned int fz_count = FZ_DEFAULT_COUNT;
module_param_named(count, fz_count, uint, 0444);
MODULE_PARM_DESC(count, "random MADs fuzz_random injects");

static unsigned long long fz_seed = FZ_SEED;
module_param_named(seed, fz_seed, ullong, 0444);
MODULE_PARM_DESC(seed, "base seed of the generated MADs");

static bool fz_dr_full;
module_param_named(dr_full, fz_dr_full, bool, 0444);
MODULE_PARM_DESC(dr_full, "fuzz_dr_hops: all 131072 hop count, hop pointer and direction combinations per method, not only the boundaries");

/* What fuzz_random's shards did, for the last one to check. */
static atomic64_t fz_random_done = ATOMIC64_INIT(0);
static atomic64_t fz_random_ns = ATOMIC64_INIT(0);

/* An agent registered on device 1 for requests. */
struct fz_reg {
	enum kmad_qp_type qpt;
	u8 cls;
	u8 version;
	u32 methods;		/* BIT(method), methods below 32 */
	u8 oui[3];
};

#define M(m)	BIT(KMAD_METHOD_##m)

static const struct fz_reg fz_regs[] = {
	{ KMAD_QPT_GSI, KMAD_MGMT_CLASS_SUBN_ADM, 2,
	  M(GET) | M(SET) | M(GET_TABLE) | M(GET_MULTI) },
	{ KMAD_QPT_GSI, KMAD_MGMT_CLASS_PERF_MGMT, 1, M(GET) },
	{ KMAD_QPT_GSI, KMAD_MGMT_CLASS_BM, 1, M(GET) | M(TRAP) | M(SEND) },
	{ KMAD_QPT_GSI, KMAD_MGMT_CLASS_CM, 2, M(SEND) },
	{ KMAD_QPT_GSI, 0x09, 1, M(GET) | M(SEND) },
	{ KMAD_QPT_GSI, 0x0f, 3, M(SET) },
	{ KMAD_QPT_GSI, KMAD_MGMT_CLASS_DEVICE_ADM, 1, M(GET) | M(REPORT) },
	{ KMAD_QPT_GSI, 0x30, 1, M(GET) | M(SET) | M(SEND),
	  { 0x00, 0x14, 0x05 } },
	{ KMAD_QPT_GSI, 0x4f, 1, M(GET), { 0x12, 0x34, 0x56 } },
	{ KMAD_QPT_SMI, KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, M(GET) | M(TRAP) },
	{ KMAD_QPT_SMI, KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1,
	  M(SET) | M(TRAP) },
};

/* A request the requesters keep outstanding. */
struct fz_tmpl {
	u8 cls;
	u8 version;
	u16 attr;
	bool dr;
	u8 oui[3];
};

static const struct fz_tmpl fz_tmpls[2][6] = {
	[KMAD_QPT_SMI] = {
		{ KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1, KMAD_SMP_ATTR_NODE_INFO },
		{ KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1,
		  KMAD_SMP_ATTR_NODE_INFO, true },
	},
	[KMAD_QPT_GSI] = {
		{ KMAD_MGMT_CLASS_SUBN_ADM, 2, KMAD_SA_ATTR_PATH_REC },
		{ KMAD_MGMT_CLASS_PERF_MGMT, 1, KMAD_PMA_ATTR_PORT_COUNTERS },
		{ KMAD_MGMT_CLASS_CM, 2, KMAD_ATTR_CLASS_PORT_INFO },
		{ KMAD_MGMT_CLASS_BM, 1, 0x0010 },
		{ 0x0a, 1, 0x0010 },
		{ 0x30, 1, 0x0010, false, { 0x00, 0x14, 0x05 } },
	},
};

static const unsigned int fz_ntmpls[2] = { 2, 6 };

/* One outstanding request of a requester. */
struct fz_slot {
	struct fz_fix *f;
	struct kmad_send_buf *buf;
	unsigned int qp;
	const struct fz_tmpl *tmpl;
	u64 tid;			/* as posted, hi_tid included */
	struct kmad_mad sent;		/* the request as posted */
	atomic_t ended;			/* send_handler ran since the post */
};

struct fz_agent {
	struct fz_fix *f;
	struct kmad_agent *agent;
	const struct fz_reg *reg;
};

/* What recv.c does with a MAD, predicted from the test's copy. */
enum fz_fate {
	FZ_DROPPED,		/* drops[verdict] */
	FZ_WRONG_QP,
	FZ_SMI,
	FZ_RECEIVED,
	FZ_RECV_ERROR,		/* longer than the buffer: LOC_ERR */
};

/* One MAD injected in the current batch. */
struct fz_input {
	u64 index;		/* position in the case's input sequence */
	unsigned int len;
	u16 slid;
	u8 qp;
	u8 fate;		/* enum fz_fate */
	u8 verdict;		/* enum kmad_mad_verdict */
	bool dispatched;	/* to a registered agent */
	bool answered;		/* kmad answers it with @answer */
	u8 mad[KMAD_MAD_SIZE];
	u8 answer[KMAD_MAD_SIZE];
};

/* What a MAD is, before injection. */
struct fz_mad {
	u8 raw[FZ_RAW];
	unsigned int len;
	unsigned int qp;
	u16 slid;
	u32 src_qpn;
};

/* Counts the test predicts. */
struct fz_expect {
	u64 injected;
	u64 rejected;			/* refused by the simulator */
	u64 recv_errors;		/* oversized: LOC_ERR receives */
	u64 verdict[KMAD_MAD_VERDICT_COUNT];
	u64 wrong_qp;
	u64 smi;
	u64 received;
	u64 answerable;			/* A of equation (2) */
	u64 responses;			/* received responses */
	u64 user_rmpp;			/* ... RMPP-active, for an agent */
	u64 dispatched;
	u64 answered;
};

/* Counters read from kmad, the simulator and the handlers. */
struct fz_counts {
	s64 pstat[KMAD_PSTAT_COUNT];
	s64 drops[KMAD_MAD_VERDICT_COUNT];
	u64 delivered;
	u64 no_recv;
	u64 sim_recv_errors;
	s64 matched;
	s64 unsolicited;
	s64 user_rmpp;
	s64 matched_active;
	u64 answers;
};

/*
 * A kind of answer that fails kmad_mad_validate(); kept for the suite, so
 * that the first input of each kind is printed once.
 */
struct fz_sig {
	u8 cls;
	u8 method;
	u8 req_verdict;
	u8 ans_method;
	u8 ans_verdict;
	u64 n;			/* in this case */
};

struct fz_fix {
	struct kunit *test;
	struct kmad_sim_fabric *fab;
	struct kmad_port *port[2];
	struct kmad_smi_node node;	/* device 1 for kmad_smi_recv() */
	struct kmad_agent *req_agent[2][FZ_REQ_AGENTS];
	struct fz_agent regs[ARRAY_SIZE(fz_regs)];
	struct fz_slot slots[2][FZ_SLOTS];
	unsigned int on_wire[2];	/* reposts at the head of each wire */
	u32 next_tid;
	u64 rng;
	u64 seed;
	u64 index;			/* inputs generated so far */
	bool closing;			/* teardown: flushes are expected */

	unsigned int rq_depth;		/* receive ring: the batch per QP */
	struct fz_input batch[2][FZ_RQ_DEPTH];
	unsigned int nbatch[2];
	unsigned int scan[2];		/* answer-to-request matching */
	struct fz_mad recent[FZ_RECENT];
	unsigned int nrecent;
	struct fz_mad cur;

	struct fz_expect exp;		/* the case so far */
	struct fz_expect bexp;		/* this batch */
	struct fz_counts last;		/* at the end of the last batch */
	struct fz_counts first;		/* at the start of the case */
	struct fz_counts now, d;	/* scratch, off the stack */
	unsigned int bad_batches;
	u64 batches;

	/* Where the time goes (ns): generating, predicting and injecting;
	 * kmad's receive drain; the answers off the wire; checks, reposts.
	 */
	s64 t_gen, t_recv, t_wire, t_other;
	ktime_t t_mark;
	s64 t_idle_settle;		/* one kmad_sim_settle() with no work */

	atomic64_t matched;		/* requesters' recv_handler calls */
	atomic64_t unsolicited;		/* registered agents' calls */
	atomic64_t user_rmpp;		/* responses given unsolicited */
	atomic64_t matched_active;	/* matched, RMPP-active */
	atomic64_t misrouted;		/* a MAD for someone else */
	atomic64_t invalid;		/* a handler got an invalid MAD */
	atomic64_t bad_send;		/* a request ended other than OK */
	atomic64_t stray;		/* a callback nobody expects */

	u64 answers;
	struct kmad_mad last_answer;	/* the last one seen */
	u64 bad_answers;		/* fail kmad_mad_validate() */
	u64 wrong_answers;		/* not a predicted answer */
	u64 missing_answers;		/* predicted, never sent */
	struct fz_sig sigs[FZ_MAX_SIGS];
	unsigned int nsigs;
	u64 sigs_lost;
};

/* xorshift64*: small, fast, and the same on every kernel. */
static u64 fz_rand(struct fz_fix *f)
{
	u64 x = f->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	f->rng = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* splitmix64: spreads a seed (and a shard number) over all bits. */
static u64 fz_mix(u64 z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fz_seed_rng(struct fz_fix *f, u64 seed)
{
	f->seed = seed;
	f->rng = fz_mix(seed) | 1;
}

static u32 fz_below(struct fz_fix *f, u32 n)
{
	return (u32)(((fz_rand(f) >> 32) * n) >> 32);
}

static bool fz_pct(struct fz_fix *f, u32 pct)
{
	return fz_below(f, 100) < pct;
}

static u8 fz_pick(struct fz_fix *f, const u8 *list, unsigned int n)
{
	return list[fz_below(f, n)];
}

static u16 fz_pick16(struct fz_fix *f, const u16 *list, unsigned int n)
{
	return list[fz_below(f, n)];
}

static void fz_fill(struct fz_fix *f, u8 *p, unsigned int len)
{
	u64 r;

	for (; len >= 8; p += 8, len -= 8) {
		r = fz_rand(f);
		memcpy(p, &r, 8);
	}
	r = fz_rand(f);
	memcpy(p, &r, len);
}

/* ---- counters ---------------------------------------------------------- */

static void fz_read_counts(struct fz_fix *f, struct fz_counts *c)
{
	struct kmad_port *p = f->port[FZ_DEV];
	struct kmad_sim_stats st;
	int i;

	for (i = 0; i < KMAD_PSTAT_COUNT; i++)
		c->pstat[i] = atomic64_read(&p->stats[i]);
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		c->drops[i] = atomic64_read(&p->drops[i]);
	kmad_sim_get_stats(f->fab, FZ_DEV, &st);
	c->delivered = st.delivered;
	c->no_recv = st.dropped_no_recv;
	c->sim_recv_errors = st.recv_errors;
	c->matched = atomic64_read(&f->matched);
	c->unsolicited = atomic64_read(&f->unsolicited);
	c->user_rmpp = atomic64_read(&f->user_rmpp);
	c->matched_active = atomic64_read(&f->matched_active);
	c->answers = f->answers;
}

static s64 fz_drops(const struct fz_counts *c)
{
	s64 sum = 0;
	int i;

	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		sum += c->drops[i];
	return sum;
}

static s64 fz_outcomes(const struct fz_counts *c)
{
	return c->pstat[KMAD_PSTAT_RESP_MATCHED] +
	       c->pstat[KMAD_PSTAT_RESP_UNMATCHED] +
	       c->pstat[KMAD_PSTAT_RESP_UNSOLICITED] +
	       c->pstat[KMAD_PSTAT_REQ_DISPATCHED] +
	       c->pstat[KMAD_PSTAT_REQ_ANSWERED] +
	       c->pstat[KMAD_PSTAT_REQ_DROPPED] +
	       c->pstat[KMAD_PSTAT_REQ_BACKLOG_DROPPED];
}

/* @d = @a - @b, field by field. */
static void fz_counts_sub(struct fz_counts *d, const struct fz_counts *a,
			  const struct fz_counts *b)
{
	int i;

	for (i = 0; i < KMAD_PSTAT_COUNT; i++)
		d->pstat[i] = a->pstat[i] - b->pstat[i];
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		d->drops[i] = a->drops[i] - b->drops[i];
	d->delivered = a->delivered - b->delivered;
	d->no_recv = a->no_recv - b->no_recv;
	d->sim_recv_errors = a->sim_recv_errors - b->sim_recv_errors;
	d->matched = a->matched - b->matched;
	d->unsolicited = a->unsolicited - b->unsolicited;
	d->user_rmpp = a->user_rmpp - b->user_rmpp;
	d->matched_active = a->matched_active - b->matched_active;
	d->answers = a->answers - b->answers;
}

static void fz_expect_add(struct fz_expect *sum, const struct fz_expect *e)
{
	int i;

	sum->injected += e->injected;
	sum->rejected += e->rejected;
	sum->recv_errors += e->recv_errors;
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		sum->verdict[i] += e->verdict[i];
	sum->wrong_qp += e->wrong_qp;
	sum->smi += e->smi;
	sum->received += e->received;
	sum->answerable += e->answerable;
	sum->responses += e->responses;
	sum->user_rmpp += e->user_rmpp;
	sum->dispatched += e->dispatched;
	sum->answered += e->answered;
}

/* ---- handlers ---------------------------------------------------------- */

static void fz_req_send_handler(struct kmad_agent *agent,
				struct kmad_send_wc *wc)
{
	struct fz_slot *s = wc->send_buf->context[0];

	/* The clock stands and nothing is canceled: only a response ends a
	 * request, until teardown flushes the rest.
	 */
	if (wc->status != KMAD_SEND_OK && !READ_ONCE(s->f->closing))
		atomic64_inc(&s->f->bad_send);
	atomic_set_release(&s->ended, 1);
}

/*
 * An RMPP-active response that matched no request, handed to @agent's
 * recv_handler as unsolicited (every agent here has rmpp_version 0):
 * counted apart, and it must carry the agent's own hi_tid.  False for
 * anything else.
 */
static bool fz_user_rmpp(struct fz_fix *f, struct kmad_agent *agent,
			 struct kmad_send_buf *request,
			 struct kmad_recv_wc *wc)
{
	const struct kmad_mad_hdr *h = &wc->mad->mad_hdr;

	if (request || !kmad_mad_is_response(h) || !kmad_rmpp_active(wc->mad))
		return false;
	if (be64_to_cpu(h->tid) >> 32 != agent->hi_tid)
		atomic64_inc(&f->misrouted);
	if (kmad_mad_validate(wc->mad, sizeof(*wc->mad), NULL))
		atomic64_inc(&f->invalid);
	atomic64_inc(&f->user_rmpp);
	kmad_free_recv(wc);
	return true;
}

static void fz_req_recv_handler(struct kmad_agent *agent,
				struct kmad_send_buf *request,
				struct kmad_recv_wc *wc)
{
	struct fz_fix *f = agent->context;
	const struct kmad_mad_hdr *h = &wc->mad->mad_hdr;
	struct fz_slot *s = request ? request->context[0] : NULL;

	if (fz_user_rmpp(f, agent, request, wc))
		return;
	/* A send-only agent gets responses to its own requests only. */
	if (!s || be64_to_cpu(h->tid) != s->tid ||
	    h->mgmt_class != s->sent.mad_hdr.mgmt_class ||
	    !kmad_mad_is_response(h))
		atomic64_inc(&f->misrouted);
	if (kmad_mad_validate(wc->mad, sizeof(*wc->mad), NULL))
		atomic64_inc(&f->invalid);
	atomic64_inc(&f->matched);
	if (kmad_rmpp_active(wc->mad))
		atomic64_inc(&f->matched_active);
	kmad_free_recv(wc);
}

static void fz_reg_send_handler(struct kmad_agent *agent,
				struct kmad_send_wc *wc)
{
	struct fz_agent *a = agent->context;

	atomic64_inc(&a->f->stray);	/* these agents send nothing */
}

static void fz_reg_recv_handler(struct kmad_agent *agent,
				struct kmad_send_buf *request,
				struct kmad_recv_wc *wc)
{
	struct fz_agent *a = agent->context;
	const struct kmad_mad_hdr *h = &wc->mad->mad_hdr;
	const struct kmad_vendor_mad *vm = (const void *)wc->mad;
	const struct fz_reg *r = a->reg;
	u8 m = h->method & KMAD_METHOD_MASK;

	if (fz_user_rmpp(a->f, agent, request, wc))
		return;
	/* A request of the agent's own class, version, method and OUI. */
	if (request || kmad_mad_is_response(h) || wc->qpt != r->qpt ||
	    h->mgmt_class != r->cls || h->class_version != r->version ||
	    m >= 32 || !(r->methods & BIT(m)) ||
	    (kmad_mgmt_class_is_vendor_range2(r->cls) &&
	     memcmp(vm->oui, r->oui, sizeof(r->oui))))
		atomic64_inc(&a->f->misrouted);
	if (kmad_mad_validate(wc->mad, sizeof(*wc->mad), NULL))
		atomic64_inc(&a->f->invalid);
	atomic64_inc(&a->f->unsolicited);
	kmad_free_recv(wc);
}

/* ---- requests ---------------------------------------------------------- */

/* Post slot @s with a fresh TID; it stays on the wire until the drain. */
static int fz_post(struct fz_fix *f, struct fz_slot *s)
{
	static const u8 path[1] = { 1 };
	const struct fz_tmpl *t = s->tmpl;
	struct kmad_mad *m = s->buf->mad;
	struct kmad_vendor_mad *vm = (void *)m;
	int ret;

	memset(m, 0, sizeof(*m));
	if (t->dr) {
		ret = kmad_send_buf_set_dr_path(s->buf, path, 1);
		if (ret)
			return ret;
	}
	m->mad_hdr.base_version = KMAD_MGMT_BASE_VERSION;
	m->mad_hdr.mgmt_class = t->cls;
	m->mad_hdr.class_version = t->version;
	m->mad_hdr.method = KMAD_METHOD_GET;
	m->mad_hdr.tid = cpu_to_be64(++f->next_tid);
	m->mad_hdr.attr_id = cpu_to_be16(t->attr);
	if (kmad_mgmt_class_is_vendor_range2(t->cls))
		memcpy(vm->oui, t->oui, sizeof(vm->oui));
	s->buf->timeout_ms = FZ_TIMEOUT_MS;
	s->buf->retries = 0;
	atomic_set(&s->ended, 0);
	ret = kmad_post_send(s->buf);
	if (ret)
		return ret;
	/* Read back what kmad made of it (hi_tid, hop pointer). */
	s->sent = *m;
	s->tid = be64_to_cpu(s->sent.mad_hdr.tid);
	f->on_wire[s->qp]++;
	return 0;
}

/* Repost every request whose response (and send completion) came. */
static void fz_repost(struct fz_fix *f)
{
	struct fz_slot *s;
	int qp, i;

	for (qp = 0; qp < 2; qp++) {
		for (i = 0; i < FZ_SLOTS; i++) {
			s = &f->slots[qp][i];
			if (atomic_read_acquire(&s->ended))
				KUNIT_EXPECT_EQ(f->test, fz_post(f, s), 0);
		}
	}
}

/* ---- predicting what recv.c does --------------------------------------- */

/*
 * The requests kmad answers although it drops them (Documentation/
 * ulp-guide.rst, "Requests kmad answers itself"): a ClassVersion or a
 * method their class does not define.  Not a method/attribute pair the
 * class forbids: the answer would carry it too.
 */
static bool fz_verdict_answered(enum kmad_mad_verdict v)
{
	return v == KMAD_MAD_VERDICT_CLASS_VERSION ||
	       v == KMAD_MAD_VERDICT_CLASS_METHOD;
}

/*
 * The one ClassVersion of the classes IBTA gives a single one: SMP 1,
 * SA 2, PerfMgt 1, CM 2, CongMgt 2; 0 for the others (the values, not
 * kmad's constants, so that a wrong constant shows).
 */
static u8 fz_class_version(u8 cls)
{
	switch (cls) {
	case 0x01:
	case 0x81:
	case 0x04:
		return 1;
	case 0x03:
	case 0x07:
	case 0x21:
		return 2;
	default:
		return 0;
	}
}

/*
 * The IBTA response method (13.4.5, 15.2.2) of a request that asks for a
 * response, which kmad answers when no agent takes it: Get and Set with
 * GetResp, Report with ReportResp, and in the SA GetTable and
 * GetTraceTable with GetTableResp, GetMulti with GetMultiResp, Delete
 * with DeleteResp.  0 for everything else (responses, Trap, Send, the
 * class-specific methods of other classes): kmad answers none of them.
 */
static u8 fz_answer_method(u8 cls, u8 method)
{
	switch (method) {
	case KMAD_METHOD_GET:
	case KMAD_METHOD_SET:
		return KMAD_METHOD_GET_RESP;
	case KMAD_METHOD_REPORT:
		return KMAD_METHOD_REPORT_RESP;
	}
	if (cls != KMAD_MGMT_CLASS_SUBN_ADM)
		return 0;
	switch (method) {
	case KMAD_METHOD_GET_TABLE:
	case KMAD_METHOD_GET_TRACE_TABLE:
		return KMAD_METHOD_GET_TABLE_RESP;
	case KMAD_METHOD_GET_MULTI:
		return KMAD_METHOD_GET_MULTI_RESP;
	case KMAD_METHOD_DELETE:
		return KMAD_METHOD_DELETE_RESP;
	default:
		return 0;
	}
}

/*
 * Does @cls define the response method @m?  Of the classes whose methods
 * IBTA lists, SMP, PerfMgt and CM define GetResp as their only response,
 * the SA every response (15.2.2); kmad has no list for the others.
 */
static bool fz_class_has_response(u8 cls, u8 m)
{
	switch (cls) {
	case KMAD_MGMT_CLASS_SUBN_LID_ROUTED:
	case KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
	case KMAD_MGMT_CLASS_PERF_MGMT:
	case KMAD_MGMT_CLASS_CM:
		return m == KMAD_METHOD_GET_RESP;
	default:
		return true;
	}
}

/*
 * Does a registered agent (fz_regs[]) take the received request @in?
 * *@class_known: some agent on the QP has its class and version (and OUI,
 * for vendor range 2), which makes the answer "unsupported method" rather
 * than "unsupported class/version" (on QP0 "unsupported
 * method/attribute").
 */
static bool fz_dispatched(const struct fz_input *in, bool *class_known)
{
	const struct kmad_mad_hdr *h = (const void *)in->mad;
	const struct kmad_vendor_mad *vm = (const void *)in->mad;
	u8 m = h->method & KMAD_METHOD_MASK;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fz_regs); i++) {
		const struct fz_reg *r = &fz_regs[i];

		if (r->qpt != in->qp || r->cls != h->mgmt_class ||
		    r->version != h->class_version ||
		    (kmad_mgmt_class_is_vendor_range2(r->cls) &&
		     memcmp(vm->oui, r->oui, sizeof(r->oui))))
			continue;
		*class_known = true;
		if (m < 32 && (r->methods & BIT(m)))
			return true;
	}
	return false;
}

/*
 * The answer kmad must send to the request @in, into @in->answer: the
 * request with its IBTA response method if the class defines it, else
 * GetResp; @status; the ClassVersion the class defines, if it defines
 * one; everything else as received.  None to a CM request of another
 * attribute than ClassPortInfo (CM carries every other in Send), nor to
 * an RMPP packet but a transfer's first DATA segment, whose answer has
 * its RMPP header cleared.  A directed-route SMP travels outbound, passes the SMI's receive step
 * here, and its answer returns (D bit, hop pointer HopCount + 1, the SMI's
 * send step when DrDLID is permissive).  False if kmad sends none.
 */
static bool fz_predict_answer(struct fz_fix *f, struct fz_input *in,
			      u16 status)
{
	const struct kmad_mad_hdr *h = (const void *)in->mad;
	struct kmad_mad_hdr *a = (void *)in->answer;
	struct kmad_smp *smp = (void *)in->answer;
	u8 method = fz_answer_method(h->mgmt_class, h->method);
	u8 version = fz_class_version(h->mgmt_class);

	memcpy(in->answer, in->mad, KMAD_MAD_SIZE);
	if (!method)
		return false;
	/* Of an RMPP transfer only the first DATA segment, and with one
	 * MAD, its RMPP header cleared.
	 */
	if (kmad_mgmt_class_has_rmpp(h->mgmt_class)) {
		const struct kmad_rmpp_hdr *rh =
			&((const struct kmad_rmpp_mad *)in->mad)->rmpp_hdr;
		u8 fl = kmad_rmpp_flags(rh);

		if ((fl & KMAD_RMPP_FLAG_ACTIVE) &&
		    (rh->rmpp_type != KMAD_RMPP_TYPE_DATA ||
		     !(fl & KMAD_RMPP_FLAG_FIRST)))
			return false;
		memset(&((struct kmad_rmpp_mad *)in->answer)->rmpp_hdr, 0,
		       sizeof(struct kmad_rmpp_hdr));
	}
	/* CM answers nothing but ClassPortInfo: the rest is all Send. */
	if (h->mgmt_class == KMAD_MGMT_CLASS_CM &&
	    h->attr_id != cpu_to_be16(KMAD_ATTR_CLASS_PORT_INFO))
		return false;
	if (!fz_class_has_response(h->mgmt_class, method))
		method = KMAD_METHOD_GET_RESP;
	if (version)
		a->class_version = version;
	a->method = method;
	/* C15-0.1.5: an SA response carries SM_Key 0. */
	if (a->mgmt_class == KMAD_MGMT_CLASS_SUBN_ADM)
		kmad_sa_set_sm_key((struct kmad_sa_mad *)in->answer, 0);
	if (a->mgmt_class != KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		a->status = cpu_to_be16(status);
		return true;
	}
	if (kmad_smp_is_returning(smp) ||
	    kmad_smi_recv(smp, &f->node) != KMAD_SMI_HANDLE)
		return false;
	smp->status = cpu_to_be16(status | KMAD_SMP_DIRECTION);
	smp->hop_ptr = smp->hop_cnt + 1;
	if (smp->dr_dlid == cpu_to_be16(KMAD_PERMISSIVE_LID) &&
	    kmad_smi_send(smp, &f->node) != KMAD_SMI_HANDLE)
		return false;
	return true;
}

/*
 * A received response that matches no request goes to an agent's
 * recv_handler as unsolicited if it is RMPP-active and its hi_tid names
 * one of the test's agents (every one without RMPP, with a handler) on
 * its QP (recv.c, recv_user_rmpp()).  True for such a response, whether
 * it then matches or not.
 */
static bool fz_user_rmpp_eligible(struct fz_fix *f, const struct fz_input *in)
{
	u32 hi = be64_to_cpu(((const struct kmad_mad_hdr *)in->mad)->tid) >> 32;
	unsigned int i;

	if (!kmad_rmpp_active((const struct kmad_mad *)in->mad))
		return false;
	for (i = 0; i < ARRAY_SIZE(f->regs); i++)
		if (f->regs[i].reg->qpt == in->qp &&
		    f->regs[i].agent->hi_tid == hi)
			return true;
	for (i = 0; i < FZ_REQ_AGENTS; i++)
		if (f->req_agent[in->qp][i]->hi_tid == hi)
			return true;
	return false;
}

/*
 * A MAD kmad_mad_validate() accepts: false if it goes no further than its
 * fate, else the status kmad's answer would carry.
 */
static bool fz_predict_valid(struct fz_fix *f, struct fz_input *in,
			     bool kind_ok, u16 *status)
{
	const struct kmad_mad_hdr *h = (const void *)in->mad;
	bool class_known = false;
	struct kmad_smp copy;

	if (!kind_ok) {
		in->fate = FZ_WRONG_QP;
		f->bexp.wrong_qp++;
		return false;
	}
	if (h->mgmt_class == KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) {
		memcpy(&copy, in->mad, sizeof(copy));
		if (kmad_smi_recv(&copy, &f->node) != KMAD_SMI_HANDLE) {
			in->fate = FZ_SMI;
			f->bexp.smi++;
			return false;
		}
	}
	in->fate = FZ_RECEIVED;
	f->bexp.received++;
	if (kmad_mad_is_response(h)) {
		f->bexp.responses++;
		if (fz_user_rmpp_eligible(f, in))
			f->bexp.user_rmpp++;
		return false;
	}
	if (fz_dispatched(in, &class_known)) {
		in->dispatched = true;
		f->bexp.dispatched++;
		return false;
	}
	/* On QP0 the class, version and method (Get or Set: validation
	 * answers the others) are the SMA's: what is missing is the
	 * attribute.
	 */
	if (kmad_qpt_is_smi(in->qp))
		*status = KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR;
	else if (class_known)
		*status = KMAD_MAD_STATUS_UNSUPPORTED_METHOD;
	else
		*status = KMAD_MAD_STATUS_BAD_VERSION;
	return true;
}

static void fz_predict(struct fz_fix *f, struct fz_input *in)
{
	const struct kmad_mad_hdr *h = (const void *)in->mad;
	bool kind_ok = kmad_is_smp_class(h->mgmt_class) ==
		       kmad_qpt_is_smi(in->qp);
	enum kmad_mad_verdict v;
	u16 status;

	in->verdict = KMAD_MAD_VERDICT_OK;
	in->dispatched = false;
	in->answered = false;
	if (in->len > KMAD_MAD_SIZE) {
		/* Longer than every receive buffer: a LOC_ERR receive. */
		in->fate = FZ_RECV_ERROR;
		f->bexp.recv_errors++;
		return;
	}
	if (kmad_mad_validate(in->mad, in->len, &v)) {
		in->verdict = v;
		in->fate = FZ_DROPPED;
		f->bexp.verdict[v]++;
		if (!fz_verdict_answered(v) || kmad_mad_is_response(h) ||
		    !kind_ok)
			return;
		f->bexp.answerable++;
		status = v == KMAD_MAD_VERDICT_CLASS_VERSION ?
			 KMAD_MAD_STATUS_BAD_VERSION :
			 KMAD_MAD_STATUS_UNSUPPORTED_METHOD;
	} else if (!fz_predict_valid(f, in, kind_ok, &status)) {
		return;
	}
	in->answered = fz_predict_answer(f, in, status);
	if (in->answered)
		f->bexp.answered++;
}

/* ---- reporting --------------------------------------------------------- */

static void fz_print_mad(struct fz_fix *f, const char *what, const u8 *mad,
			 unsigned int len)
{
	unsigned int i;

	for (i = 0; i < len; i += 64)
		kunit_info(f->test, "  %s[%3u]: %*ph\n", what, i,
			   (int)min(64U, len - i), mad + i);
}

static void fz_print_input(struct fz_fix *f, const char *why,
			   const struct fz_input *in)
{
	kunit_info(f->test, "%s: input #%llu of seed %#llx: QP%u len %u slid %u verdict %s\n",
		   why, in->index, f->seed, in->qp, in->len, in->slid,
		   kmad_mad_verdict_name(in->verdict));
	fz_print_mad(f, "mad", in->mad, min_t(unsigned int, in->len,
					      KMAD_MAD_SIZE));
}

/* ---- answers on the wire ----------------------------------------------- */

/* @in was to be answered; print the first few that were not. */
static void fz_missing_answer(struct fz_fix *f, const struct fz_input *in)
{
	if (!in->answered || f->missing_answers++ >= FZ_MAX_BAD_BATCHES)
		return;
	fz_print_input(f, "answer expected, none sent", in);
	fz_print_mad(f, "expected", in->answer, KMAD_MAD_SIZE);
}

/*
 * The injected request @ans answers, in this batch: answers leave in the
 * order their requests arrived, so it is the first request from the scan
 * point on whose predicted answer is @ans byte for byte.  The requests
 * passed over were to be answered and were not.
 */
static const struct fz_input *fz_find_request(struct fz_fix *f,
					      unsigned int qp,
					      const struct kmad_mad *ans)
{
	unsigned int j, k;

	for (j = f->scan[qp]; j < f->nbatch[qp]; j++) {
		const struct fz_input *in = &f->batch[qp][j];

		if (!in->answered || memcmp(in->answer, ans, KMAD_MAD_SIZE))
			continue;
		for (k = f->scan[qp]; k < j; k++)
			fz_missing_answer(f, &f->batch[qp][k]);
		f->scan[qp] = j + 1;
		return in;
	}
	return NULL;
}

/* The predicted answers no answer on the wire matched: never sent. */
static void fz_missing_answers(struct fz_fix *f)
{
	unsigned int qp, j;

	for (qp = 0; qp < 2; qp++)
		for (j = f->scan[qp]; j < f->nbatch[qp]; j++)
			fz_missing_answer(f, &f->batch[qp][j]);
}

static void fz_bad_answer(struct fz_fix *f, const struct fz_input *in,
			  const struct kmad_mad *ans, enum kmad_mad_verdict v)
{
	const struct kmad_mad_hdr *req = (const void *)in->mad;
	struct fz_sig key = {
		.cls = req->mgmt_class, .method = req->method,
		.req_verdict = in->verdict, .ans_method = ans->mad_hdr.method,
		.ans_verdict = v,
	};
	unsigned int i;

	for (i = 0; i < f->nsigs; i++) {
		struct fz_sig *s = &f->sigs[i];

		if (s->cls == key.cls && s->method == key.method &&
		    s->req_verdict == key.req_verdict &&
		    s->ans_method == key.ans_method &&
		    s->ans_verdict == key.ans_verdict) {
			s->n++;
			return;
		}
	}
	/* A kind not seen before in this suite: print its first input. */
	if (f->nsigs == FZ_MAX_SIGS) {
		f->sigs_lost++;
		return;
	}
	key.n = 1;
	f->sigs[f->nsigs++] = key;
	kunit_info(f->test, "invalid answer (%s): class %#04x method %#04x (%s) answered with method %#04x status %#06x\n",
		   kmad_mad_verdict_name(v), key.cls, key.method,
		   kmad_mad_verdict_name(in->verdict), key.ans_method,
		   be16_to_cpu(ans->mad_hdr.status));
	fz_print_input(f, "  request", in);
	fz_print_mad(f, "answer", (const u8 *)ans, sizeof(*ans));
}

/*
 * Every answer kmad emits must pass kmad_mad_validate() and be the answer
 * predicted for an injected request.
 */
static void fz_check_answer(struct fz_fix *f, unsigned int qp,
			    const struct kmad_mad *ans)
{
	const struct fz_input *in = fz_find_request(f, qp, ans);
	enum kmad_mad_verdict v;

	f->answers++;
	f->last_answer = *ans;
	if (kmad_mad_validate(ans, sizeof(*ans), &v)) {
		f->bad_answers++;
		if (in)
			fz_bad_answer(f, in, ans, v);
	}
	if (in)
		return;
	if (!f->wrong_answers++) {
		kunit_info(f->test, "an answer on QP%u that is the predicted answer of no injected request:\n",
			   qp);
		fz_print_mad(f, "answer", (const u8 *)ans, sizeof(*ans));
	}
}

/*
 * Take every send off device 1's wires: the reposted requests at the head
 * of each (completed, not delivered: device 0 never sees them), then the
 * answers kmad posted, each checked.  Repeats until kmad posted no more
 * (answers beyond the send queue wait on kmad's overflow list).
 */
static void fz_drain_wire(struct fz_fix *f)
{
	struct kmad_mad ans;
	unsigned int qp, n, i, round;
	bool any;

	for (round = 0; round < 1000; round++) {
		any = false;
		for (qp = 0; qp < 2; qp++) {
			n = kmad_sim_pending_sends(f->fab, FZ_DEV, qp);
			for (i = 0; i < n; i++) {
				KUNIT_ASSERT_EQ(f->test,
						kmad_sim_peek_send(f->fab, FZ_DEV, qp,
								   0, &ans,
								   sizeof(ans)),
						(int)sizeof(ans));
				if (f->on_wire[qp])
					f->on_wire[qp]--;
				else
					fz_check_answer(f, qp, &ans);
				KUNIT_ASSERT_EQ(f->test,
						kmad_sim_complete_send(f->fab, FZ_DEV,
								       qp, 0,
								       KMAD_WC_SUCCESS,
								       false), 0);
			}
			if (n) {
				any = true;
				kmad_sim_fire_cq_event(f->fab, FZ_DEV, qp, false);
			}
		}
		if (!any)
			return;
		kmad_sim_settle(f->fab);
	}
	KUNIT_FAIL(f->test, "device %u's wires never emptied", FZ_DEV);
}

/* ---- batches ----------------------------------------------------------- */

static const char *const fz_fate_names[] = {
	[FZ_DROPPED] = "dropped", [FZ_WRONG_QP] = "wrong_qp",
	[FZ_SMI] = "smi", [FZ_RECEIVED] = "received",
	[FZ_RECV_ERROR] = "recv_error",
};

/* Print up to 16 inputs of the batch with fate @fate (or all, for -1). */
static void fz_dump_batch(struct fz_fix *f, int fate)
{
	unsigned int qp, j, shown = 0;

	for (qp = 0; qp < 2; qp++) {
		for (j = 0; j < f->nbatch[qp] && shown < 16; j++) {
			const struct fz_input *in = &f->batch[qp][j];

			if (fate >= 0 && in->fate != fate)
				continue;
			fz_print_input(f, fz_fate_names[in->fate], in);
			shown++;
		}
	}
}

/* REQ_DROPPED as predicted: requests neither dispatched nor answered. */
static u64 fz_req_dropped(const struct fz_expect *e)
{
	return e->received - e->responses - e->dispatched + e->answerable -
	       e->answered;
}

/*
 * Check the batch's counters against its predictions: equations (1) and
 * (2), and each of their terms.
 */
static void fz_check_batch(struct fz_fix *f)
{
	const struct fz_expect *e = &f->bexp;
	struct fz_counts *d = &f->d;
	bool ok = true;
	int fate = -1;
	int i;

	fz_read_counts(f, &f->now);
	fz_counts_sub(d, &f->now, &f->last);
	f->last = f->now;

	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		if (d->drops[i] != e->verdict[i]) {
			ok = false;
			fate = FZ_DROPPED;
		}
	if (d->pstat[KMAD_PSTAT_RECV_ERRORS] != e->recv_errors ||
	    d->sim_recv_errors != e->recv_errors) {
		ok = false;
		fate = FZ_RECV_ERROR;
	}
	if (d->pstat[KMAD_PSTAT_WRONG_QP] != e->wrong_qp) {
		ok = false;
		fate = FZ_WRONG_QP;
	}
	if (d->pstat[KMAD_PSTAT_SMI_DISCARDS] != e->smi) {
		ok = false;
		fate = FZ_SMI;
	}
	if (d->pstat[KMAD_PSTAT_RECEIVED] != e->received ||
	    fz_outcomes(d) != e->received + e->answerable ||
	    d->pstat[KMAD_PSTAT_RESP_MATCHED] +
	    d->pstat[KMAD_PSTAT_RESP_UNMATCHED] +
	    d->pstat[KMAD_PSTAT_RESP_UNSOLICITED] != e->responses ||
	    d->pstat[KMAD_PSTAT_REQ_DISPATCHED] != e->dispatched ||
	    d->pstat[KMAD_PSTAT_REQ_ANSWERED] != e->answered ||
	    d->pstat[KMAD_PSTAT_REQ_DROPPED] != fz_req_dropped(e)) {
		ok = false;
		fate = FZ_RECEIVED;
	}
	if (d->pstat[KMAD_PSTAT_RECV_FLUSHED] || d->pstat[KMAD_PSTAT_RECV_NOBUF] ||
	    d->pstat[KMAD_PSTAT_QP_RECOVERIES] || d->no_recv ||
	    d->delivered != e->injected - e->recv_errors ||
	    d->pstat[KMAD_PSTAT_RESP_MATCHED] != d->matched ||
	    d->pstat[KMAD_PSTAT_RESP_UNSOLICITED] != d->user_rmpp ||
	    d->pstat[KMAD_PSTAT_RESP_UNSOLICITED] + d->matched_active !=
	    (s64)e->user_rmpp ||
	    d->pstat[KMAD_PSTAT_REQ_DISPATCHED] != d->unsolicited ||
	    d->pstat[KMAD_PSTAT_REQ_ANSWERED] != d->answers)
		ok = false;
	for (i = 0; i < 2; i++)
		if (kmad_sim_cqes(f->fab, FZ_DEV, i) ||
		    kmad_sim_pending_sends(f->fab, FZ_DEV, i))
			ok = false;

	if (!ok && f->bad_batches++ < FZ_MAX_BAD_BATCHES) {
		KUNIT_FAIL(f->test,
			   "batch of inputs #%llu..#%llu (seed %#llx): counters do not add up:\n"
			   "  injected %llu, sim delivered %llu, no buffer %llu, recv flushed %lld, nobuf %lld, recoveries %lld\n"
			   "  recv_errors %llu/%lld (sim %llu); drops expected %llu got %lld; wrong_qp %llu/%lld; smi %llu/%lld; received %llu/%lld\n"
			   "  outcomes expected %llu (received + A %llu) got %lld\n"
			   "  responses %llu: matched %lld (handlers %lld) + unmatched %lld + unsolicited %lld (handlers %lld)\n"
			   "  dispatched %llu/%lld (handlers %lld), answered %llu/%lld (on the wire %llu), dropped %llu/%lld\n",
			   f->index - e->injected - e->rejected, f->index - 1,
			   f->seed, e->injected, d->delivered, d->no_recv,
			   d->pstat[KMAD_PSTAT_RECV_FLUSHED],
			   d->pstat[KMAD_PSTAT_RECV_NOBUF],
			   d->pstat[KMAD_PSTAT_QP_RECOVERIES],
			   e->recv_errors, d->pstat[KMAD_PSTAT_RECV_ERRORS],
			   d->sim_recv_errors,
			   e->injected - e->recv_errors - e->wrong_qp - e->smi -
			   e->received,
			   fz_drops(d), e->wrong_qp,
			   d->pstat[KMAD_PSTAT_WRONG_QP], e->smi,
			   d->pstat[KMAD_PSTAT_SMI_DISCARDS], e->received,
			   d->pstat[KMAD_PSTAT_RECEIVED],
			   e->received + e->answerable, e->answerable,
			   fz_outcomes(d), e->responses,
			   d->pstat[KMAD_PSTAT_RESP_MATCHED], d->matched,
			   d->pstat[KMAD_PSTAT_RESP_UNMATCHED],
			   d->pstat[KMAD_PSTAT_RESP_UNSOLICITED], d->user_rmpp,
			   e->dispatched,
			   d->pstat[KMAD_PSTAT_REQ_DISPATCHED], d->unsolicited,
			   e->answered, d->pstat[KMAD_PSTAT_REQ_ANSWERED],
			   d->answers, fz_req_dropped(e),
			   d->pstat[KMAD_PSTAT_REQ_DROPPED]);
		for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
			if (d->drops[i] != e->verdict[i])
				kunit_info(f->test, "  drops[%s]: expected %llu got %lld\n",
					   kmad_mad_verdict_name(i),
					   e->verdict[i], d->drops[i]);
		fz_dump_batch(f, fate);
	}
}

/*
 * End the batch: let kmad drain both receive queues, take its sends off the
 * wires, check the counters, repost the requests that ended.
 */
static void fz_end_batch(struct fz_fix *f)
{
	ktime_t t0, t1, t2;
	unsigned int qp;

	t0 = ktime_get();
	for (qp = 0; qp < 2; qp++)
		if (f->nbatch[qp])
			kmad_sim_fire_cq_event(f->fab, FZ_DEV, qp, false);
	kmad_sim_settle(f->fab);
	t1 = ktime_get();
	fz_drain_wire(f);
	fz_missing_answers(f);
	t2 = ktime_get();
	fz_check_batch(f);
	fz_expect_add(&f->exp, &f->bexp);
	memset(&f->bexp, 0, sizeof(f->bexp));
	fz_repost(f);
	for (qp = 0; qp < 2; qp++) {
		f->nbatch[qp] = 0;
		f->scan[qp] = 0;
	}
	f->batches++;
	cond_resched();
	f->t_gen += ktime_to_ns(ktime_sub(t0, f->t_mark));
	f->t_recv += ktime_to_ns(ktime_sub(t1, t0));
	f->t_wire += ktime_to_ns(ktime_sub(t2, t1));
	f->t_mark = ktime_get();
	f->t_other += ktime_to_ns(ktime_sub(f->t_mark, t2));
}

/*
 * Inject @len bytes at @mad into device 1's QP @qp.  The simulator refuses
 * length 0 with -EINVAL (counted as rejected); a packet longer than a MAD
 * takes a receive buffer and completes it with LOC_ERR (-EMSGSIZE,
 * <kmad/sim.h>); every other is delivered.  Both are predicted and counted.
 */
static void fz_add(struct fz_fix *f, const u8 *mad, unsigned int len,
		   unsigned int qp, u16 slid, u32 src_qpn)
{
	struct fz_input *in;
	int ret;

	f->index++;
	if (!len || len > KMAD_SIM_MAX_PACKET) {
		KUNIT_EXPECT_EQ(f->test, kmad_sim_inject(f->fab, FZ_DEV, qp, mad,
							 len, slid, src_qpn),
				-EINVAL);
		f->bexp.rejected++;
		return;
	}
	if (f->nbatch[qp] == f->rq_depth)
		fz_end_batch(f);
	in = &f->batch[qp][f->nbatch[qp]++];
	in->index = f->index - 1;
	in->len = len;
	in->slid = slid;
	in->qp = qp;
	memcpy(in->mad, mad, min_t(unsigned int, len, KMAD_MAD_SIZE));
	if (len < KMAD_MAD_SIZE)
		memset(in->mad + len, 0, KMAD_MAD_SIZE - len);
	fz_predict(f, in);
	f->bexp.injected++;
	ret = kmad_sim_inject(f->fab, FZ_DEV, qp, mad, len, slid, src_qpn);
	if (ret != (len > KMAD_MAD_SIZE ? -EMSGSIZE : 0))
		fz_print_input(f, "kmad_sim_inject() failed", in);
	KUNIT_ASSERT_EQ(f->test, ret, len > KMAD_MAD_SIZE ? -EMSGSIZE : 0);
}

/* ---- the generator ----------------------------------------------------- */

static const u8 fz_common_methods[] = {
	KMAD_METHOD_GET, KMAD_METHOD_SET, KMAD_METHOD_SEND, KMAD_METHOD_TRAP,
	KMAD_METHOD_REPORT, KMAD_METHOD_TRAP_REPRESS, KMAD_METHOD_GET_TABLE,
	KMAD_METHOD_GET_TRACE_TABLE, KMAD_METHOD_GET_MULTI, KMAD_METHOD_DELETE,
};

static const u8 fz_other_classes[] = {
	KMAD_MGMT_CLASS_SUBN_LID_ROUTED, KMAD_MGMT_CLASS_SUBN_ADM,
	KMAD_MGMT_CLASS_PERF_MGMT, KMAD_MGMT_CLASS_DEVICE_MGMT,
	KMAD_MGMT_CLASS_CM, KMAD_MGMT_CLASS_SNMP, KMAD_MGMT_CLASS_BOOT_MGMT,
	KMAD_MGMT_CLASS_BIS, KMAD_MGMT_CLASS_CONG_MGMT,
	KMAD_MGMT_CLASS_APPLICATION_END, KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE,
};

static const u8 fz_versions[] = { 0, 1, 2, 3, 0x80, 0xff };

static const u16 fz_attrs[] = {
	KMAD_ATTR_CLASS_PORT_INFO, KMAD_ATTR_NOTICE, KMAD_ATTR_INFORM_INFO,
	KMAD_SMP_ATTR_NODE_DESC, KMAD_SMP_ATTR_NODE_INFO,
	KMAD_SMP_ATTR_PORT_INFO, KMAD_SMP_ATTR_LINEAR_FT,
	KMAD_SMP_ATTR_SM_INFO, KMAD_PMA_ATTR_PORT_COUNTERS,
	KMAD_PMA_ATTR_PORT_COUNTERS_EXT, KMAD_SA_ATTR_PATH_REC,
	KMAD_SA_ATTR_MCMEMBER_REC, KMAD_SA_ATTR_INFORM_INFO_REC,
	0x0000, 0xffff, 0xff00,
};

static const u8 fz_hop_vals[] = { 0, 1, 2, 62, 63, 64, 65, 255 };

static const u8 fz_byte_vals[] = { 0x00, 0x01, 0x7f, 0x80, 0x81, 0xff };

static u8 fz_fixed_version(u8 cls)
{
	switch (cls) {
	case KMAD_MGMT_CLASS_SUBN_LID_ROUTED:
	case KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE:
	case KMAD_MGMT_CLASS_PERF_MGMT:
		return 1;
	case KMAD_MGMT_CLASS_SUBN_ADM:
	case KMAD_MGMT_CLASS_CM:
	case KMAD_MGMT_CLASS_CONG_MGMT:
		return 2;
	default:
		return 1;
	}
}

static struct fz_slot *fz_any_slot(struct fz_fix *f)
{
	return &f->slots[fz_below(f, 2)][fz_below(f, FZ_SLOTS)];
}

/* A TID: mostly one aimed at a live agent and an outstanding request. */
static u64 fz_gen_tid(struct fz_fix *f)
{
	static const u64 edges[] = {
		0, ~0ULL, 1ULL << 32, 0xffffffffULL, 0xffffffff00000000ULL,
	};
	u32 r = fz_below(f, 100);
	u64 tid;

	if (r < 55) {
		tid = fz_any_slot(f)->tid;
		r = fz_below(f, 10);
		if (r == 7)
			tid += 1;
		else if (r == 8)
			tid = (tid & ~0xffffffffULL) | (u32)fz_rand(f);
		else if (r == 9)
			tid = (tid & 0xffffffffULL) | (fz_rand(f) << 32);
		return tid;
	}
	if (r < 65) {
		struct kmad_agent *a;

		if (fz_pct(f, 50))
			a = f->regs[fz_below(f, ARRAY_SIZE(f->regs))].agent;
		else
			a = &f->port[FZ_DEV]->responder[fz_below(f, 2)]->agent;
		return (u64)a->hi_tid << 32 | (u32)fz_rand(f);
	}
	if (r < 75)
		return edges[fz_below(f, ARRAY_SIZE(edges))];
	return fz_rand(f);
}

static u16 fz_gen_attr(struct fz_fix *f)
{
	u32 r = fz_below(f, 100);

	if (r < 65)
		return fz_pick16(f, fz_attrs, ARRAY_SIZE(fz_attrs));
	if (r < 75)
		return 0xff00 | fz_below(f, 256);
	return (u16)fz_rand(f);
}

/* Directed-route fields around every boundary of the SMI's checks. */
static void fz_gen_dr(struct fz_fix *f, struct kmad_smp *smp)
{
	u32 r = fz_below(f, 100);
	unsigned int i;
	u8 cnt, ptr;

	if (r < 50)
		cnt = fz_pick(f, fz_hop_vals, ARRAY_SIZE(fz_hop_vals));
	else if (r < 90)
		cnt = fz_below(f, 64);
	else
		cnt = fz_rand(f);
	/* 0, 1, or count - 1 to count + 2, or anything. */
	r = fz_below(f, 7);
	if (r < 2)
		ptr = r;
	else if (r < 6)
		ptr = cnt + r - 3;
	else
		ptr = fz_rand(f);
	smp->hop_cnt = cnt;
	smp->hop_ptr = ptr;
	if (fz_pct(f, 50))
		smp->status |= cpu_to_be16(KMAD_SMP_DIRECTION);
	else
		smp->status &= ~cpu_to_be16(KMAD_SMP_DIRECTION);
	smp->dr_slid = fz_pct(f, 75) ? cpu_to_be16(KMAD_PERMISSIVE_LID) :
		       cpu_to_be16((u16)fz_rand(f));
	smp->dr_dlid = fz_pct(f, 75) ? cpu_to_be16(KMAD_PERMISSIVE_LID) :
		       cpu_to_be16((u16)fz_rand(f));
	if (fz_pct(f, 80)) {
		for (i = 0; i < KMAD_SMP_DR_PATH_SIZE; i++) {
			smp->initial_path[i] = 1;
			smp->return_path[i] = 1;
		}
	} else {
		fz_fill(f, smp->initial_path, KMAD_SMP_DR_PATH_SIZE);
		fz_fill(f, smp->return_path, KMAD_SMP_DR_PATH_SIZE);
	}
}

/* A header from weighted lists; see the top of the file. */
static void fz_gen_header(struct fz_fix *f, struct fz_mad *g)
{
	struct kmad_mad_hdr *h = (void *)g->raw;
	struct kmad_vendor_mad *vm = (void *)g->raw;
	const struct fz_reg *reg = NULL;
	u32 r = fz_below(f, 100);
	u8 cls, version, method = 0;
	bool has_method = false;

	if (fz_pct(f, 50))
		memset(g->raw, 0, KMAD_MAD_SIZE);
	else
		fz_fill(f, g->raw, KMAD_MAD_SIZE);

	if (r < 45) {
		reg = &fz_regs[fz_below(f, ARRAY_SIZE(fz_regs))];
		cls = reg->cls;
		version = reg->version;
		if (fz_pct(f, 60)) {
			do {
				method = fz_below(f, 32);
			} while (!(reg->methods & BIT(method)));
			has_method = true;
		}
	} else if (r < 60) {
		const struct fz_slot *s = fz_any_slot(f);

		cls = s->tmpl->cls;
		version = s->tmpl->version;
	} else if (r < 75) {
		cls = fz_pick(f, fz_other_classes, ARRAY_SIZE(fz_other_classes));
		version = fz_fixed_version(cls);
	} else if (r < 85) {
		cls = fz_pct(f, 50) ? 0x09 + fz_below(f, 7) :
				      0x30 + fz_below(f, 32);
		version = 1;
	} else if (r < 93) {
		static const u8 reserved[] = { 0x00, 0x02, 0x50, 0x80, 0x82,
					       0xff };

		cls = fz_pct(f, 50) ?
		      fz_pick(f, reserved, ARRAY_SIZE(reserved)) :
		      (fz_pct(f, 50) ? 0x50 + fz_below(f, 0x31) :
				       0x82 + fz_below(f, 0x7e));
		version = 1;
	} else {
		cls = fz_rand(f);
		version = fz_rand(f);
	}
	if (fz_pct(f, 15))
		version = fz_pct(f, 70) ?
			  fz_pick(f, fz_versions, ARRAY_SIZE(fz_versions)) :
			  (u8)fz_rand(f);
	if (!has_method) {
		r = fz_below(f, 100);
		if (r < 70)
			method = fz_pick(f, fz_common_methods,
					 ARRAY_SIZE(fz_common_methods));
		else if (r < 80)
			method = fz_pct(f, 30) ? 0x04 : 0x08 + fz_below(f, 8);
		else if (r < 90)
			method = 0x10 + fz_below(f, 0x70);
		else
			method = fz_rand(f);
		if (fz_pct(f, 25))
			method |= KMAD_METHOD_RESP;
	} else if (fz_pct(f, 10)) {
		method |= KMAD_METHOD_RESP;
	}

	h->base_version = fz_pct(f, 95) ? KMAD_MGMT_BASE_VERSION :
			  (u8)(fz_pct(f, 50) ? 0 : fz_rand(f));
	h->mgmt_class = cls;
	h->class_version = version;
	h->method = method;
	r = fz_below(f, 100);
	h->status = r < 75 ? 0 : r < 88 ? cpu_to_be16(KMAD_SMP_DIRECTION) :
		    cpu_to_be16((u16)fz_rand(f));
	h->class_specific = fz_pct(f, 80) ? 0 : cpu_to_be16((u16)fz_rand(f));
	h->tid = cpu_to_be64(fz_gen_tid(f));
	h->attr_id = cpu_to_be16(fz_gen_attr(f));
	r = fz_below(f, 100);
	h->attr_mod = r < 50 ? 0 : r < 70 ? cpu_to_be32(1) :
		      r < 80 ? cpu_to_be32(~0U) : cpu_to_be32((u32)fz_rand(f));

	if (kmad_mgmt_class_is_vendor_range2(cls)) {
		static const u8 ouis[][3] = {
			{ 0x00, 0x14, 0x05 }, { 0x12, 0x34, 0x56 },
			{ 0x00, 0x00, 0x00 },
		};

		r = fz_below(f, 100);
		if (reg && r < 70)
			memcpy(vm->oui, reg->oui, sizeof(vm->oui));
		else if (r < 90)
			memcpy(vm->oui, ouis[fz_below(f, ARRAY_SIZE(ouis))],
			       sizeof(vm->oui));
		else
			fz_fill(f, vm->oui, sizeof(vm->oui));
	}
	if (kmad_is_smp_class(cls))
		fz_gen_dr(f, (struct kmad_smp *)g->raw);

	g->qp = kmad_is_smp_class(cls) ? KMAD_QPT_SMI : KMAD_QPT_GSI;
}

/* A response to an outstanding request, as device 0 would send it. */
static void fz_gen_response(struct fz_fix *f, struct fz_mad *g)
{
	const struct fz_slot *s = fz_any_slot(f);
	struct kmad_smp *smp = (void *)g->raw;

	memcpy(g->raw, &s->sent, KMAD_MAD_SIZE);
	smp->method = KMAD_METHOD_GET_RESP;
	if (s->tmpl->dr) {
		/* Returning, at hop 0 or 1 of its path: for the SMI here. */
		smp->status |= cpu_to_be16(KMAD_SMP_DIRECTION);
		smp->hop_ptr = fz_below(f, 2);
	}
	g->qp = s->qp;
}

static void fz_mutate(struct fz_fix *f, u8 *raw, unsigned int n)
{
	u32 r;

	while (n--) {
		r = fz_below(f, 100);
		if (r < 50)
			raw[fz_below(f, KMAD_MAD_HDR_SIZE)] ^= BIT(fz_below(f, 8));
		else if (r < 70)
			raw[KMAD_MAD_HDR_SIZE + fz_below(f, 40)] ^=
				BIT(fz_below(f, 8));
		else if (r < 85)
			raw[fz_below(f, KMAD_MAD_SIZE)] = fz_rand(f);
		else
			raw[fz_below(f, KMAD_MAD_HDR_SIZE)] =
				fz_pick(f, fz_byte_vals,
					ARRAY_SIZE(fz_byte_vals));
	}
}

static unsigned int fz_gen_len(struct fz_fix *f)
{
	static const u8 edges[] = { 1, 23, 24, 25, 255 };
	static const u16 bad[] = { 0, 257, 300, FZ_RAW };
	u32 r = fz_below(f, 1000);

	if (r < 4)
		return bad[fz_below(f, ARRAY_SIZE(bad))];
	if (r < 60)
		return edges[fz_below(f, ARRAY_SIZE(edges))];
	if (r < 120)
		return 1 + fz_below(f, KMAD_MAD_SIZE - 1);
	return KMAD_MAD_SIZE;
}

/* The next input into @g: what, how long, which QP, from where. */
static void fz_gen(struct fz_fix *f, struct fz_mad *g)
{
	u32 r = fz_below(f, 100);

	if (r < 25) {
		fz_gen_response(f, g);
		if (fz_pct(f, 40))
			fz_mutate(f, g->raw, 1 + fz_below(f, 3));
	} else if (r < 75) {
		fz_gen_header(f, g);
		if (fz_pct(f, 20))
			fz_mutate(f, g->raw, 1 + fz_below(f, 3));
	} else if (r < 90 && f->nrecent) {
		*g = f->recent[fz_below(f, min_t(unsigned int, f->nrecent,
						  FZ_RECENT))];
		fz_mutate(f, g->raw, 1 + fz_below(f, 4));
	} else {
		fz_fill(f, g->raw, KMAD_MAD_SIZE);
		if (fz_pct(f, 60))
			g->raw[0] = KMAD_MGMT_BASE_VERSION;
		g->qp = fz_below(f, 2);
	}
	/* Now and then the other QP: SMPs on QP1, GMPs on QP0. */
	if (fz_pct(f, 15))
		g->qp ^= 1;
	r = fz_below(f, 100);
	g->slid = r < 85 ? FZ_PEER_LID : r < 90 ? kmad_port_lid(f->port[FZ_DEV]) :
		  r < 95 ? KMAD_PERMISSIVE_LID : (u16)fz_rand(f);
	g->src_qpn = fz_pct(f, 90) ? g->qp : (u32)fz_rand(f);
	g->len = fz_gen_len(f);
	if (g->len > KMAD_MAD_SIZE)
		fz_fill(f, g->raw + KMAD_MAD_SIZE, g->len - KMAD_MAD_SIZE);
	f->recent[f->nrecent++ % FZ_RECENT] = *g;
}

/* ---- fixture ----------------------------------------------------------- */

static int fz_register(struct fz_fix *f)
{
	struct kmad_port *p = f->port[FZ_DEV];
	struct kmad_reg_req req;
	struct kmad_agent *a;
	unsigned int i, m, qp;

	for (i = 0; i < ARRAY_SIZE(fz_regs); i++) {
		const struct fz_reg *r = &fz_regs[i];

		memset(&req, 0, sizeof(req));
		req.mgmt_class = r->cls;
		req.class_version = r->version;
		for (m = 0; m < 32; m++)
			if (r->methods & BIT(m))
				__set_bit(m, req.method_mask);
		memcpy(req.oui, r->oui, sizeof(req.oui));
		f->regs[i].f = f;
		f->regs[i].reg = r;
		a = kmad_register_agent(p, r->qpt, &req, fz_reg_send_handler,
					fz_reg_recv_handler, &f->regs[i]);
		if (IS_ERR(a))
			return PTR_ERR(a);
		f->regs[i].agent = a;
	}
	for (qp = 0; qp < 2; qp++) {
		for (i = 0; i < FZ_REQ_AGENTS; i++) {
			a = kmad_register_agent(p, qp, NULL, fz_req_send_handler,
						fz_req_recv_handler, f);
			if (IS_ERR(a))
				return PTR_ERR(a);
			f->req_agent[qp][i] = a;
		}
	}
	return 0;
}

static int fz_slots_init(struct fz_fix *f)
{
	struct kmad_dest dest = { .dlid = FZ_PEER_LID };
	struct fz_slot *s;
	unsigned int qp, i;

	for (qp = 0; qp < 2; qp++) {
		dest.remote_qpn = qp;
		dest.remote_qkey = qp ? KMAD_QP1_QKEY : 0;
		for (i = 0; i < FZ_SLOTS; i++) {
			s = &f->slots[qp][i];
			s->f = f;
			s->qp = qp;
			s->tmpl = &fz_tmpls[qp][i % fz_ntmpls[qp]];
			s->buf = kmad_alloc_send_buf(f->req_agent[qp][i % FZ_REQ_AGENTS],
						     &dest, GFP_KERNEL);
			if (IS_ERR(s->buf)) {
				int ret = PTR_ERR(s->buf);

				s->buf = NULL;
				return ret;
			}
			s->buf->context[0] = s;
		}
	}
	for (qp = 0; qp < 2; qp++) {
		for (i = 0; i < FZ_SLOTS; i++) {
			int ret = fz_post(f, &f->slots[qp][i]);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * The fixture is built once for the suite and shared by its cases: every
 * agent's unregistration waits for an RCU grace period, which takes about
 * half a second in the test guest, so a fixture per case would cost more
 * than most cases.  Each case reads the counters afresh when it starts and
 * checks only what changed; its exit finishes whatever an aborted case
 * left on the QPs.
 */
static struct fz_fix *fz_suite_fix;

/* Build the fabric, register the agents and post the requests. */
static int fz_build(struct fz_fix *f)
{
	struct kmad_sim_config cfg = {
		.topology = KMAD_SIM_TOPO_PAIR,
		.mode = KMAD_SIM_STEP,
		.notify = KMAD_SIM_NOTIFY_IBTA,
		.rq_depth = FZ_RQ_DEPTH,
	};
	char name[KMAD_NAME_LEN - 4], dev[KMAD_NAME_LEN];
	ktime_t t0;
	int i, ret;

	f->rq_depth = FZ_RQ_DEPTH;
	snprintf(name, sizeof(name), "%s%d_", KBUILD_MODNAME,
		 atomic_inc_return(&kt_fabric_seq));
	cfg.name = name;
	f->fab = kmad_sim_create(&cfg);
	if (IS_ERR_OR_NULL(f->fab)) {
		ret = f->fab ? PTR_ERR(f->fab) : -ENOMEM;
		f->fab = NULL;
		return ret;
	}
	for (i = 0; i < 2; i++) {
		snprintf(dev, sizeof(dev), "%s%d", name, i);
		f->port[i] = kmad_port_get(dev, 1);
		if (!f->port[i])
			return -ENODEV;
	}
	kmad_port_smi_node(f->port[FZ_DEV], &f->node);
	ret = fz_register(f);
	if (ret)
		return ret;
	if (!f->port[FZ_DEV]->responder[0] || !f->port[FZ_DEV]->responder[1])
		return -ENODEV;
	ret = fz_slots_init(f);
	if (ret)
		return ret;
	kmad_sim_settle(f->fab);
	t0 = ktime_get();
	kmad_sim_settle(f->fab);
	f->t_idle_settle = ktime_to_ns(ktime_sub(ktime_get(), t0));
	return 0;
}

static void fz_teardown(struct fz_fix *f)
{
	unsigned int qp, i;

	WRITE_ONCE(f->closing, true);
	/* The agents that send nothing can go at once; the requesters'
	 * sends may wait on a step-mode wire, which only the removal of the
	 * fabric flushes, so they go after it.
	 */
	for (i = 0; i < ARRAY_SIZE(f->regs); i++)
		if (f->regs[i].agent)
			kmad_unregister_agent(f->regs[i].agent);
	if (f->fab)
		kmad_sim_destroy(f->fab);
	for (qp = 0; qp < 2; qp++)
		for (i = 0; i < FZ_REQ_AGENTS; i++)
			if (f->req_agent[qp][i])
				kmad_unregister_agent(f->req_agent[qp][i]);
	for (qp = 0; qp < 2; qp++)
		for (i = 0; i < FZ_SLOTS; i++)
			kmad_free_send_buf(f->slots[qp][i].buf);
	for (i = 0; i < 2; i++)
		kmad_port_put(f->port[i]);
	vfree(f);
}

/*
 * The module parameters, read from the module's argument string: KUnit in
 * Linux 6.1 runs a module's suites from the MODULE_STATE_COMING notifier,
 * which load_module() calls before it parses the parameters, so without
 * this they would take effect only after the suite has run.
 */
static int fz_parse_args(void)
{
#ifdef MODULE
	char *args, *next, *param, *val;
	int ret = 0;

	if (!THIS_MODULE->args || !*THIS_MODULE->args)
		return 0;
	args = kstrdup(THIS_MODULE->args, GFP_KERNEL);
	if (!args)
		return -ENOMEM;
	next = skip_spaces(args);
	while (*next && !ret) {
		next = next_arg(next, &param, &val);
		if (!strcmp(param, "dr_full") && !val)
			fz_dr_full = true;
		else if (!val)
			ret = -EINVAL;
		else if (!strcmp(param, "dr_full"))
			ret = kstrtobool(val, &fz_dr_full);
		else if (!strcmp(param, "count"))
			ret = kstrtouint(val, 0, &fz_count);
		else if (!strcmp(param, "seed"))
			ret = kstrtoull(val, 0, &fz_seed);
	}
	kfree(args);
	if (ret)
		pr_err("kmad_fuzz: bad parameters \"%s\": %d\n", THIS_MODULE->args,
		       ret);
	return ret;
#else
	return 0;
#endif
}

static int fz_suite_init(struct kunit_suite *suite)
{
	struct fz_fix *f;
	int ret;

	ret = fz_parse_args();
	if (ret)
		return ret;
	f = vzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	ret = fz_build(f);
	if (ret) {
		fz_teardown(f);
		return ret;
	}
	fz_suite_fix = f;
	return 0;
}

static void fz_suite_exit(struct kunit_suite *suite)
{
	if (fz_suite_fix)
		fz_teardown(fz_suite_fix);
	fz_suite_fix = NULL;
}

/*
 * Take everything off the QPs without checking it: the batch an aborted
 * case left (its receives drained, its answers completed), and the
 * reposted requests, which then wait for their responses.
 */
static void fz_resync(struct fz_fix *f)
{
	unsigned int qp, n, round;

	for (round = 0; round < 1000; round++) {
		for (qp = 0; qp < 2; qp++)
			kmad_sim_fire_cq_event(f->fab, FZ_DEV, qp, false);
		kmad_sim_settle(f->fab);
		n = 0;
		for (qp = 0; qp < 2; qp++) {
			while (kmad_sim_pending_sends(f->fab, FZ_DEV, qp) &&
			       !kmad_sim_complete_send(f->fab, FZ_DEV, qp, 0,
						       KMAD_WC_SUCCESS, false))
				n++;
		}
		if (!n)
			break;
	}
	for (qp = 0; qp < 2; qp++) {
		f->on_wire[qp] = 0;
		f->nbatch[qp] = 0;
		f->scan[qp] = 0;
	}
}

/* A case starts: the shared fixture, with its own counts and seed. */
static int fz_init(struct kunit *test)
{
	struct fz_fix *f = fz_suite_fix;
	unsigned int i;

	if (!f)
		return -ENODEV;
	f->test = test;
	fz_seed_rng(f, fz_seed);
	f->index = 0;
	f->nrecent = 0;
	memset(&f->exp, 0, sizeof(f->exp));
	memset(&f->bexp, 0, sizeof(f->bexp));
	f->bad_batches = 0;
	f->batches = 0;
	f->t_gen = 0;
	f->t_recv = 0;
	f->t_wire = 0;
	f->t_other = 0;
	atomic64_set(&f->misrouted, 0);
	atomic64_set(&f->invalid, 0);
	atomic64_set(&f->bad_send, 0);
	atomic64_set(&f->stray, 0);
	f->answers = 0;
	f->bad_answers = 0;
	f->wrong_answers = 0;
	f->missing_answers = 0;
	for (i = 0; i < f->nsigs; i++)
		f->sigs[i].n = 0;
	f->sigs_lost = 0;
	fz_read_counts(f, &f->last);
	f->first = f->last;
	f->t_mark = ktime_get();
	test->priv = f;
	return 0;
}

static void fz_exit(struct kunit *test)
{
	struct fz_fix *f = test->priv;

	if (!f)
		return;
	fz_resync(f);
	fz_repost(f);
	f->test = NULL;
}

/* ---- the case's verdict ------------------------------------------------ */

/* Equations (1) and (2) over the whole case, and the other invariants. */
static void fz_verdict(struct fz_fix *f, const char *what)
{
	const struct fz_expect *e = &f->exp;
	struct fz_counts *d = &f->d;
	unsigned int i;
	u64 drops = 0;

	fz_read_counts(f, &f->now);
	fz_counts_sub(d, &f->now, &f->first);
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		drops += e->verdict[i];

	kunit_info(f->test, "%s: %llu MADs injected (seed %#llx), %llu of them longer than a MAD, %llu refused by the simulator (length 0)\n",
		   what, e->injected, f->seed, e->recv_errors, e->rejected);
	kunit_info(f->test, "(1) N %llu = recv_flushed %lld + recv_errors %lld + drops %lld + wrong_qp %lld + smi_discards %lld + received %lld = %lld\n",
		   e->injected, d->pstat[KMAD_PSTAT_RECV_FLUSHED],
		   d->pstat[KMAD_PSTAT_RECV_ERRORS], fz_drops(d),
		   d->pstat[KMAD_PSTAT_WRONG_QP],
		   d->pstat[KMAD_PSTAT_SMI_DISCARDS],
		   d->pstat[KMAD_PSTAT_RECEIVED],
		   d->pstat[KMAD_PSTAT_RECV_FLUSHED] +
		   d->pstat[KMAD_PSTAT_RECV_ERRORS] + fz_drops(d) +
		   d->pstat[KMAD_PSTAT_WRONG_QP] +
		   d->pstat[KMAD_PSTAT_SMI_DISCARDS] +
		   d->pstat[KMAD_PSTAT_RECEIVED]);
	kunit_info(f->test, "(2) received %lld + A %llu = resp_matched %lld + resp_unmatched %lld + resp_unsolicited %lld + req_dispatched %lld + req_answered %lld + req_dropped %lld = %lld\n",
		   d->pstat[KMAD_PSTAT_RECEIVED], e->answerable,
		   d->pstat[KMAD_PSTAT_RESP_MATCHED],
		   d->pstat[KMAD_PSTAT_RESP_UNMATCHED],
		   d->pstat[KMAD_PSTAT_RESP_UNSOLICITED],
		   d->pstat[KMAD_PSTAT_REQ_DISPATCHED],
		   d->pstat[KMAD_PSTAT_REQ_ANSWERED],
		   d->pstat[KMAD_PSTAT_REQ_DROPPED], fz_outcomes(d));
	kunit_info(f->test, "predicted: %llu responses, %llu requests dispatched, %llu answered, %llu dropped\n",
		   e->responses, e->dispatched, e->answered,
		   fz_req_dropped(e));
	for (i = 0; i < KMAD_MAD_VERDICT_COUNT; i++)
		if (e->verdict[i] || d->drops[i])
			kunit_info(f->test, "  drops[%s] %lld (predicted %llu)\n",
				   kmad_mad_verdict_name(i), d->drops[i],
				   e->verdict[i]);
	kunit_info(f->test, "answers on the wire %llu: %llu fail kmad_mad_validate(), %llu are no predicted answer, %llu predicted answers never sent\n",
		   f->answers, f->bad_answers, f->wrong_answers,
		   f->missing_answers);
	for (i = 0; i < f->nsigs; i++) {
		const struct fz_sig *s = &f->sigs[i];

		if (!s->n)
			continue;
		kunit_info(f->test, "  %llu x class %#04x method %#04x (%s) -> answer method %#04x: %s\n",
			   s->n, s->cls, s->method,
			   kmad_mad_verdict_name(s->req_verdict), s->ans_method,
			   kmad_mad_verdict_name(s->ans_verdict));
	}
	if (f->sigs_lost)
		kunit_info(f->test, "  %llu more of other kinds\n", f->sigs_lost);
	kunit_info(f->test, "time: %llu batches; generate+inject %lld ms, receive drain %lld ms, answers off the wire %lld ms, checks+reposts %lld ms; an idle settle %lld us\n",
		   f->batches, div_s64(f->t_gen, NSEC_PER_MSEC),
		   div_s64(f->t_recv, NSEC_PER_MSEC),
		   div_s64(f->t_wire, NSEC_PER_MSEC),
		   div_s64(f->t_other, NSEC_PER_MSEC),
		   div_s64(f->t_idle_settle, NSEC_PER_USEC));

	KUNIT_EXPECT_EQ(f->test, d->delivered, e->injected - e->recv_errors);
	KUNIT_EXPECT_EQ(f->test, d->sim_recv_errors, e->recv_errors);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RECV_ERRORS],
			(s64)e->recv_errors);
	KUNIT_EXPECT_EQ(f->test, fz_drops(d), (s64)drops);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RECV_FLUSHED] +
			d->pstat[KMAD_PSTAT_RECV_ERRORS] + fz_drops(d) +
			d->pstat[KMAD_PSTAT_WRONG_QP] +
			d->pstat[KMAD_PSTAT_SMI_DISCARDS] +
			d->pstat[KMAD_PSTAT_RECEIVED], (s64)e->injected);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RECEIVED], (s64)e->received);
	KUNIT_EXPECT_EQ(f->test, fz_outcomes(d),
			(s64)(e->received + e->answerable));
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RESP_MATCHED] +
			d->pstat[KMAD_PSTAT_RESP_UNMATCHED] +
			d->pstat[KMAD_PSTAT_RESP_UNSOLICITED], (s64)e->responses);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_REQ_DISPATCHED],
			(s64)e->dispatched);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_REQ_ANSWERED],
			(s64)e->answered);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_REQ_DROPPED],
			(s64)fz_req_dropped(e));
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RESP_MATCHED], d->matched);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RESP_UNSOLICITED],
			d->user_rmpp);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_RESP_UNSOLICITED] +
			d->matched_active, (s64)e->user_rmpp);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_REQ_DISPATCHED],
			d->unsolicited);
	KUNIT_EXPECT_EQ(f->test, d->pstat[KMAD_PSTAT_REQ_ANSWERED],
			(s64)d->answers);
	KUNIT_EXPECT_EQ(f->test, f->bad_batches, 0U);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&f->misrouted), 0LL);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&f->invalid), 0LL);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&f->bad_send), 0LL);
	KUNIT_EXPECT_EQ(f->test, atomic64_read(&f->stray), 0LL);
	/* Every answer is the one predicted, and every predicted one came. */
	KUNIT_EXPECT_EQ(f->test, f->wrong_answers, 0ULL);
	KUNIT_EXPECT_EQ(f->test, f->missing_answers, 0ULL);
	/* Every answer kmad emits passes its own validator. */
	KUNIT_EXPECT_EQ(f->test, f->bad_answers, 0ULL);
}

/* ---- cases ------------------------------------------------------------- */

static unsigned int fz_shards(void)
{
	return min_t(unsigned int, DIV_ROUND_UP(fz_count, FZ_SHARD),
		     FZ_MAX_SHARDS);
}

static unsigned int fz_shard_ids[FZ_MAX_SHARDS];

static const void *fz_shard_gen(const void *prev, char *desc)
{
	unsigned int next = prev ? *(const unsigned int *)prev + 1 : 0;

	if (next >= fz_shards())
		return NULL;
	fz_shard_ids[next] = next;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "shard %u of %u", next + 1,
		 fz_shards());
	return &fz_shard_ids[next];
}

/* The last shard: all shards together injected "count" MADs. */
static void fz_count_reached(struct kunit *test)
{
	s64 done = atomic64_read(&fz_random_done);
	s64 ns = atomic64_read(&fz_random_ns);

	kunit_info(test, "fuzz_random: %lld MADs into QP0 and QP1 in %lld ms of guest time (%lld ns per MAD); count %u\n",
		   done, div_s64(ns, NSEC_PER_MSEC),
		   done ? div64_s64(ns, done) : 0, fz_count);
	KUNIT_EXPECT_GE(test, done, (s64)fz_count);
}

/*
 * Generated and mutated MADs into both QPs: this shard's part of "count";
 * every counter adds up after every batch, every answer is valid; the last
 * shard checks that the shards injected "count" between them.
 */
static void fuzz_random(struct kunit *test)
{
	struct fz_fix *f = test->priv;
	unsigned int shard = *(const unsigned int *)test->param_value;
	unsigned int shards = fz_shards();
	u64 n = fz_count / shards + (shard < fz_count % shards);
	ktime_t start;
	s64 ns;
	u64 i;

	if (!shard) {
		atomic64_set(&fz_random_done, 0);
		atomic64_set(&fz_random_ns, 0);
	}
	fz_seed_rng(f, fz_mix(fz_seed + shard));
	kunit_info(test, "shard %u: %llu MADs, seed %#llx (module seed %#llx)\n",
		   shard + 1, n, f->seed, fz_seed);
	start = ktime_get();
	for (i = 0; f->exp.injected + f->bexp.injected < n; i++) {
		fz_gen(f, &f->cur);
		fz_add(f, f->cur.raw, f->cur.len, f->cur.qp, f->cur.slid,
		       f->cur.src_qpn);
	}
	fz_end_batch(f);
	ns = ktime_to_ns(ktime_sub(ktime_get(), start));
	atomic64_add(f->exp.injected, &fz_random_done);
	atomic64_add(ns, &fz_random_ns);
	kunit_info(test, "shard %u: %llu MADs (%llu inputs) in %lld ms, %lld ns per MAD\n",
		   shard + 1, f->exp.injected, i, div_s64(ns, NSEC_PER_MSEC),
		   f->exp.injected ? div64_s64(ns, f->exp.injected) : 0);
	KUNIT_EXPECT_EQ(test, f->exp.injected, n);
	fz_verdict(f, "random");
	if (shard == shards - 1)
		fz_count_reached(test);
}

static const u8 fz_dr_methods[] = {
	KMAD_METHOD_GET, KMAD_METHOD_SET, KMAD_METHOD_GET_RESP,
	KMAD_METHOD_TRAP, KMAD_METHOD_TRAP_REPRESS,
};

/* fuzz_dr_hops: one method, hop counts @cnt_lo to @cnt_hi. */
struct fz_dr_param {
	u8 method;
	u8 cnt_lo;
	u8 cnt_hi;
};

/* dr_full=1: 16 hop counts per case, each case well within a minute. */
#define FZ_DR_FULL_SPLIT	16

static struct fz_dr_param fz_dr_params[ARRAY_SIZE(fz_dr_methods) *
				       FZ_DR_FULL_SPLIT];

static const void *fz_dr_gen(const void *prev, char *desc)
{
	unsigned int split = fz_dr_full ? FZ_DR_FULL_SPLIT : 1;
	unsigned int next = prev ? (const struct fz_dr_param *)prev -
				   fz_dr_params + 1 : 0;
	struct fz_dr_param *p = &fz_dr_params[next];
	unsigned int width = 256 / split;

	if (next >= ARRAY_SIZE(fz_dr_methods) * split)
		return NULL;
	p->method = fz_dr_methods[next / split];
	p->cnt_lo = next % split * width;
	p->cnt_hi = p->cnt_lo + width - 1;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "method %#04x hop count %u-%u",
		 p->method, p->cnt_lo, p->cnt_hi);
	return p;
}

/* Hop counts and pointers at the boundaries of the SMI's checks. */
static bool fz_dr_edge(u8 cnt, u8 ptr)
{
	static const u8 cnts[] = { 0, 1, 2, 31, 62, 63, 64, 65, 127, 128, 254,
				   255 };
	static const u8 ptrs[] = { 0, 1, 2, 63, 64, 65, 66, 127, 128, 254,
				   255 };
	unsigned int i;
	bool edge = false;

	for (i = 0; i < ARRAY_SIZE(cnts); i++)
		edge |= cnt == cnts[i];
	if (!edge)
		return false;
	if ((u8)(ptr - cnt + 1) <= 3)	/* count - 1 to count + 2 */
		return true;
	for (i = 0; i < ARRAY_SIZE(ptrs); i++)
		if (ptr == ptrs[i])
			return true;
	return false;
}

/*
 * Directed-route SMPs into QP0 with both directions and, for hop count and
 * hop pointer, every pair of their boundary values (with dr_full=1 every
 * pair of all 256 values), responses aimed at the outstanding
 * directed-route requests: all accounted for, every answer valid.
 */
static void fuzz_dr_hops(struct kunit *test)
{
	const struct fz_dr_param *p = test->param_value;
	struct fz_fix *f = test->priv;
	struct kmad_smp smp = { };
	unsigned int cnt, ptr, dir, slot = 0;
	u64 n = 0;

	smp.base_version = KMAD_MGMT_BASE_VERSION;
	smp.mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp.class_version = KMAD_SMP_CLASS_VERSION;
	smp.method = p->method;
	smp.attr_id = cpu_to_be16(p->method == KMAD_METHOD_TRAP ||
				  p->method == KMAD_METHOD_TRAP_REPRESS ?
				  KMAD_ATTR_NOTICE : KMAD_SMP_ATTR_NODE_INFO);
	smp.dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp.dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	memset(smp.initial_path, 1, sizeof(smp.initial_path));
	memset(smp.return_path, 1, sizeof(smp.return_path));
	for (cnt = p->cnt_lo; cnt <= p->cnt_hi; cnt++) {
		for (ptr = 0; ptr < 256; ptr++) {
			if (!fz_dr_full && !fz_dr_edge(cnt, ptr))
				continue;
			for (dir = 0; dir < 2; dir++) {
				smp.hop_cnt = cnt;
				smp.hop_ptr = ptr;
				smp.status = dir ?
					cpu_to_be16(KMAD_SMP_DIRECTION) : 0;
				/* Aimed at the directed-route requests. */
				do {
					slot = (slot + 1) % FZ_SLOTS;
				} while (!f->slots[KMAD_QPT_SMI][slot].tmpl->dr);
				smp.tid = cpu_to_be64(f->slots[KMAD_QPT_SMI][slot].tid);
				fz_add(f, (const u8 *)&smp, sizeof(smp),
				       KMAD_QPT_SMI, FZ_PEER_LID, 0);
				n++;
			}
		}
	}
	fz_end_batch(f);
	KUNIT_EXPECT_EQ(test, f->exp.injected, n);
	fz_verdict(f, "directed route");
}

/*
 * One request, and the answer kmad must send to it (Documentation/
 * ulp-guide.rst, "Requests kmad answers itself"): @ans_method 0 for none.
 */
struct fz_answer_case {
	const char *name;
	u8 cls;
	u8 version;
	u8 method;
	u16 attr;
	u16 status;
	u8 ans_method;
	u16 ans_status;
	u8 ans_version;
};

/*
 * The answers kmad sends, and the requests it must not answer: each
 * decision of the answer rules, and the kinds of invalid answer
 * fuzz_random found before them.
 */
static const struct fz_answer_case fz_answer_cases[] = {
	{ "vendor Get, no agent for the class", 0x0b, 1, KMAD_METHOD_GET,
	  0x0010, 0, KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 1 },
	{ "DevAdm Get, ClassVersion 2, the agent has 1",
	  KMAD_MGMT_CLASS_DEVICE_ADM, 2, KMAD_METHOD_GET, 0x0010, 0,
	  KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 2 },
	{ "SA GetTraceTable, no agent for it", KMAD_MGMT_CLASS_SUBN_ADM, 2,
	  KMAD_METHOD_GET_TRACE_TABLE, KMAD_SA_ATTR_PATH_REC, 0,
	  KMAD_METHOD_GET_TABLE_RESP,
	  KMAD_MAD_STATUS_UNSUPPORTED_METHOD, 2 },
	{ "SA Report, no agent for it", KMAD_MGMT_CLASS_SUBN_ADM, 2,
	  KMAD_METHOD_REPORT, KMAD_ATTR_NOTICE, 0,
	  KMAD_METHOD_REPORT_RESP,
	  KMAD_MAD_STATUS_UNSUPPORTED_METHOD, 2 },
	{ "SA Get with ClassVersion 1", KMAD_MGMT_CLASS_SUBN_ADM, 1,
	  KMAD_METHOD_GET, KMAD_SA_ATTR_PATH_REC, 0,
	  KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 2 },
	{ "CM Get of ClassPortInfo with ClassVersion 1", KMAD_MGMT_CLASS_CM,
	  1, KMAD_METHOD_GET, KMAD_ATTR_CLASS_PORT_INFO, 0,
	  KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 2 },
	{ "directed-route SMP Get with ClassVersion 2",
	  KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 2, KMAD_METHOD_GET,
	  KMAD_SMP_ATTR_NODE_INFO, 0, KMAD_METHOD_GET_RESP,
	  KMAD_SMP_DIRECTION | KMAD_MAD_STATUS_BAD_VERSION, 1 },
	{ "PerfMgt Report", KMAD_MGMT_CLASS_PERF_MGMT, 1, KMAD_METHOD_REPORT,
	  KMAD_PMA_ATTR_PORT_COUNTERS, 0,
	  KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_UNSUPPORTED_METHOD, 1 },
	{ "LID-routed SMP Report", KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  KMAD_METHOD_REPORT, KMAD_SMP_ATTR_NODE_INFO, 0,
	  KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_UNSUPPORTED_METHOD, 1 },
	{ "LID-routed SMP Report with ClassVersion 2",
	  KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 2, KMAD_METHOD_REPORT,
	  KMAD_SMP_ATTR_NODE_INFO, 0, KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 1 },
	{ "CM Report of ClassPortInfo", KMAD_MGMT_CLASS_CM, 2,
	  KMAD_METHOD_REPORT, KMAD_ATTR_CLASS_PORT_INFO, 0,
	  KMAD_METHOD_GET_RESP, KMAD_MAD_STATUS_UNSUPPORTED_METHOD, 2 },
	{ "CM Get with ClassVersion 1 of an attribute other than ClassPortInfo",
	  KMAD_MGMT_CLASS_CM, 1, KMAD_METHOD_GET, 0x0010, 0, 0, 0, 0 },
	{ "CM Get of an attribute other than ClassPortInfo",
	  KMAD_MGMT_CLASS_CM, 2, KMAD_METHOD_GET, 0x0010, 0, 0, 0, 0 },
	{ "LID-routed SMP GetTable", KMAD_MGMT_CLASS_SUBN_LID_ROUTED, 1,
	  KMAD_METHOD_GET_TABLE, KMAD_SMP_ATTR_NODE_INFO, 0, 0, 0, 0 },
	{ "directed-route SMP Delete", KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE, 1,
	  KMAD_METHOD_DELETE, KMAD_SMP_ATTR_NODE_INFO, 0, 0, 0, 0 },
	{ "vendor Get with Status 0x8000, no agent for the class", 0x0b, 1,
	  KMAD_METHOD_GET, 0x0010, 0x8000, KMAD_METHOD_GET_RESP,
	  KMAD_MAD_STATUS_BAD_VERSION, 1 },
	{ "vendor Trap, no agent for the class", 0x0b, 1, KMAD_METHOD_TRAP,
	  KMAD_ATTR_NOTICE, 0, 0, 0, 0 },
	{ "vendor Send, no agent for the class", 0x0b, 1, KMAD_METHOD_SEND,
	  0x0010, 0, 0, 0, 0 },
};

static void fz_answer_desc(const struct fz_answer_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(fz_answer, fz_answer_cases, fz_answer_desc);

/*
 * kmad answers @c as the table says (or not at all), with a MAD its own
 * validator accepts, and the answer is the one fz_predict() predicts.
 */
static void fuzz_answer_valid(struct kunit *test)
{
	const struct fz_answer_case *c = test->param_value;
	struct fz_fix *f = test->priv;
	struct kmad_smp smp = { };
	unsigned int qp = kmad_is_smp_class(c->cls) ? KMAD_QPT_SMI :
						      KMAD_QPT_GSI;
	const struct kmad_mad_hdr *a = &f->last_answer.mad_hdr;

	smp.base_version = KMAD_MGMT_BASE_VERSION;
	smp.mgmt_class = c->cls;
	smp.class_version = c->version;
	smp.method = c->method;
	smp.status = cpu_to_be16(c->status);
	smp.tid = cpu_to_be64(0x0000abcd00000001ULL);
	smp.attr_id = cpu_to_be16(c->attr);
	smp.dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp.dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	memset(&f->last_answer, 0, sizeof(f->last_answer));
	fz_add(f, (const u8 *)&smp, sizeof(smp), qp, FZ_PEER_LID, qp);
	fz_end_batch(f);
	kunit_info(test, "%llu answer(s) on the wire: method %#04x status %#06x ClassVersion %u\n",
		   f->answers, a->method, be16_to_cpu(a->status),
		   a->class_version);
	KUNIT_EXPECT_EQ(test, f->exp.answered, c->ans_method ? 1ULL : 0ULL);
	KUNIT_EXPECT_EQ(test, f->answers, c->ans_method ? 1ULL : 0ULL);
	if (c->ans_method) {
		KUNIT_EXPECT_EQ(test, a->method, c->ans_method);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(a->status), c->ans_status);
		KUNIT_EXPECT_EQ(test, a->class_version, c->ans_version);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(a->tid),
				0x0000abcd00000001ULL);
		KUNIT_EXPECT_EQ(test, be16_to_cpu(a->attr_id), c->attr);
	}
	fz_verdict(f, c->name);
}

/*
 * Every length from 0 to 257 and some above, of a request for a
 * registered agent, one for nobody and a response, into both QPs: 0 is
 * refused by the simulator, above 256 fails its receive with LOC_ERR
 * (recv_errors), every other is validated; all are accounted for.
 */
static void fuzz_lengths(struct kunit *test)
{
	static const unsigned int big[] = { 300, 511, FZ_RAW };
	struct fz_fix *f = test->priv;
	struct fz_mad *g = &f->cur;
	unsigned int len, kind, qp, i;

	for (kind = 0; kind < 3; kind++) {
		for (qp = 0; qp < 2; qp++) {
			memset(g->raw, 0, sizeof(g->raw));
			if (kind == 2) {
				fz_gen_response(f, g);
			} else {
				struct kmad_mad_hdr *h = (void *)g->raw;
				struct kmad_smp *smp = (void *)g->raw;

				/* Kind 0 for an agent, kind 1 for nobody. */
				h->base_version = KMAD_MGMT_BASE_VERSION;
				if (qp)
					h->mgmt_class = kind ? 0x0b : 0x09;
				else
					h->mgmt_class = kind ?
						KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE :
						KMAD_MGMT_CLASS_SUBN_LID_ROUTED;
				h->class_version = 1;
				h->method = KMAD_METHOD_GET;
				h->tid = cpu_to_be64(0x1234);
				smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
				smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
			}
			for (len = 0; len <= KMAD_MAD_SIZE + 1; len++)
				fz_add(f, g->raw, len, qp, FZ_PEER_LID, qp);
			for (i = 0; i < ARRAY_SIZE(big); i++)
				fz_add(f, g->raw, big[i], qp, FZ_PEER_LID, qp);
		}
	}
	fz_end_batch(f);
	/* 1-256, and 257 and the big ones complete with LOC_ERR. */
	KUNIT_EXPECT_EQ(test, f->exp.injected,
			3ULL * 2 * (KMAD_MAD_SIZE + 1 + ARRAY_SIZE(big)));
	KUNIT_EXPECT_EQ(test, f->exp.recv_errors,
			3ULL * 2 * (1 + ARRAY_SIZE(big)));
	KUNIT_EXPECT_EQ(test, f->exp.rejected, 3ULL * 2);
	fz_verdict(f, "lengths");
}

/* Every input of tests/fuzz/replay.h into both QPs, accounted for. */
static void fuzz_replay(struct kunit *test)
{
#ifdef FZ_HAVE_REPLAY
	struct fz_fix *f = test->priv;
	unsigned int i, qp;

	for (i = 0; i < KMAD_FUZZ_REPLAY_COUNT; i++) {
		const struct kmad_fuzz_input *in = &kmad_fuzz_replay[i];

		for (qp = 0; qp < 2; qp++) {
			if (in->len > KMAD_MAD_SIZE)
				kunit_info(test, "%s: %u bytes, longer than a MAD: a LOC_ERR receive\n",
					   in->name, in->len);
			fz_add(f, in->data, in->len, qp, FZ_PEER_LID, qp);
		}
	}
	fz_end_batch(f);
	kunit_info(test, "replayed %u inputs of tests/fuzz/replay.h\n",
		   (unsigned int)KMAD_FUZZ_REPLAY_COUNT);
	fz_verdict(f, "replay");
#else
	kunit_skip(test, "tests/fuzz/replay.h does not exist");
#endif
}

static struct kunit_case fuzz_cases[] = {
	KUNIT_CASE(fuzz_lengths),
	KUNIT_CASE_PARAM(fuzz_answer_valid, fz_answer_gen_params),
	KUNIT_CASE_PARAM(fuzz_dr_hops, fz_dr_gen),
	KUNIT_CASE(fuzz_replay),
	KUNIT_CASE_PARAM(fuzz_random, fz_shard_gen),
	{}
};

static struct kunit_suite fuzz_suite = {
	.name = "kmad_fuzz",
	.suite_init = fz_suite_init,
	.suite_exit = fz_suite_exit,
	.init = fz_init,
	.exit = fz_exit,
	.test_cases = fuzz_cases,
};

kunit_test_suites(&fuzz_suite);

MODULE_DESCRIPTION("KUnit fuzzing of kmad's receive path");
MODULE_LICENSE("GPL");
