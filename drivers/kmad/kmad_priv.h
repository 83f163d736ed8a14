/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad internal declarations shared by the core's source files.
 *
 * Locking legend; every field below names its rule in a trailing comment:
 *
 *   G: kmad_devices_lock (mutex): the device list and client list (its
 *      writers also hold kmad_clients_lock, which a handler reads it under).
 *   P: kmad_port.reg_mutex: agent registration on a port; writers of the
 *      port's agent list (readers use RCU).
 *   Q: kmad_qp_info.lock (irq-safe spinlock): a QP's send slots,
 *      overflow, replay and failed lists, receive buffer count and run
 *      state.
 *   A: kmad_agent_priv.lock (irq-safe spinlock): everything about the
 *      agent's sends: their state, references, TID table, deadline wheel,
 *      done list, flow control slots and backlog, and the agent's own
 *      state.
 *   H: kmad_ah_cache.lock (irq-safe spinlock): a port's address handle
 *      cache, its entries' state, users and lists.  Taken under Q (a send
 *      looks its handle up as it is queued); nothing is taken under it.
 *   I: immutable after creation.
 *   W: only the owning work item touches it.
 *
 * Both spinlocks are always taken with interrupts disabled
 * (spin_lock_irqsave()): kmad_post_send(), kmad_cancel_send() and
 * kmad_modify_send() may be called from softirq context or under a ULP's
 * own spin_lock_irqsave(), as ib_cm calls ib_mad.  Under them nothing
 * sleeps, and nothing allocates but with GFP_ATOMIC (an address handle
 * cache entry, under A, Q and H; a provider's post_send may too; the TID
 * table is resized from the agent's work), and the provider ops called
 * under A or Q (post_send, post_recv, now, query_gid) are callable with
 * interrupts off; query_gid and now run in kmad_provider_srcu read
 * sections, under A.  kmad's own work (CQ drain, agent work,
 * QP recovery) runs in process context on kmad's workqueue; providers
 * signal events with kmad_cq_event(), which only queues work.
 * kmad_port.attr_lock is an irq-safe leaf lock too, taken in any context by
 * kmad_device_port_changed().
 *
 * Lock order: G, then P, then A, then Q, then H: a send is queued on its QP (post,
 * retry) and taken back from it (cancel, flush) under its agent's lock, so
 * a flush that sees a send SENDING always finds it on its QP; nothing takes
 * A while holding Q.  No kmad lock is held while a ULP handler runs, and
 * no spinlock while a provider op that may sleep runs: create_*,
 * modify_qp and destroy_* run under G at most (registration, teardown),
 * bridge_add and bridge_del under P; post_send/post_recv run under Q (a
 * provider's own locks nest inside it: the sim's CQ lock, then its fabric
 * lock).  Clients' add, remove and port_changed callbacks run under G.
 * Leaf spinlocks outside the order: kmad_port.attr_lock (above),
 * kmad_devices_spin and kmad_clients_lock (process context).
 */
#ifndef KMAD_PRIV_H
#define KMAD_PRIV_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <kmad/mad.h>
#include <kmad/provider.h>
#include <kmad/smi.h>
#include <kmad/wire.h>

#include "tid.h"
#include "wheel.h"

struct dentry;

#define KMAD_NAME_LEN		32
#define KMAD_DEFAULT_SQ_DEPTH	128
#define KMAD_DEFAULT_RQ_DEPTH	256
/* How long a QP left without receive buffers waits to try a refill again. */
#define KMAD_RECV_REFILL_RETRY_MS	100
/* CQEs one drain pass handles before it yields to other CQs. */
#define KMAD_CQ_BUDGET		64
/* CQEs polled per provider call. */
#define KMAD_POLL_BATCH		16
/* Resets a QP recovery tries before it gives the QP up (KMAD_QP_FAILED),
 * and the wait before the first retry, doubled before each next one
 * (10 + 20 + 40 + 80 ms in all).
 */
/* Hop limit of a GID-routed send on an Ethernet port that asked for 0. */
#define KMAD_ETH_HOP_LIMIT	64
/* Hop limit of a response kmad addresses by GID on InfiniBand (as ib_mad's
 * ib_init_ah_attr_from_wc()): the requester's subnet may be any distance.
 */
#define KMAD_IB_RESP_HOP_LIMIT	0xff
/*
 * The interface ID of the SA's well-known GID (IBTA 15.4.1): a MAD sent to
 * it on InfiniBand is answered from GID index 0, as ib_mad answers it.
 */
#define KMAD_SA_WELL_KNOWN_GUID	0x0200000000000002ULL
#define KMAD_QP_RECOVER_TRIES		5
#define KMAD_QP_RECOVER_BACKOFF_MS	10
/*
 * Unsolicited MADs waiting for one agent's recv_handler, at most, in
 * number and in bytes (a reassembled RMPP message counts its length): a
 * handler may sleep, and receive buffers are reposted at once, so past
 * these a peer's flood is dropped and counted
 * (KMAD_PSTAT_REQ_BACKLOG_DROPPED).  One MAD is always taken when none
 * waits, however long.
 */
#define KMAD_AGENT_RECVS_MAX		1024
#define KMAD_AGENT_RECV_BYTES_MAX	(32U << 20)
/*
 * recv_handler calls one run of an agent's work makes at most before it
 * queues itself again: its deadlines, and other work on that CPU, get
 * their turn during a flood.
 */
#define KMAD_AGENT_RECV_BUDGET		64
/*
 * Due sends agent_expire() retries or ends in one hold of the agent lock
 * (interrupts off): deadlines of thousands of sends can fall in one tick,
 * and a retry transmits under the lock.
 */
#define KMAD_EXPIRE_BATCH		64
/* kmad_device_flush()'s rounds at most. */
#define KMAD_FLUSH_MAX_ROUNDS		64

/* The kmad/ directory in debugfs; NULL or an error pointer if unavailable. */
extern struct dentry *kmad_debugfs_root;
/* kmad's workqueue: CQ drains, QP recovery.  Unbound. */
extern struct workqueue_struct *kmad_wq;
/*
 * The agents' work (timeouts, callbacks, unsolicited MADs): bound, so it
 * runs on the CPU that queued it (main.c says why).  Flushed with kmad_wq
 * (kmad_device_flush()), under the same rules.
 */
extern struct workqueue_struct *kmad_agent_wq;
/*
 * Clients' port_changed calls, which take G.  Separate from kmad_wq because
 * kmad flushes work on kmad_wq with G held; nothing waits for this one
 * with G held.
 */
extern struct workqueue_struct *kmad_event_wq;
/*
 * Address handle creation (ah.c), which may sleep in the provider for as
 * long as it takes (a RoCE neighbour lookup, a simulated fabric holding it
 * for a test): apart from kmad_wq, so that kmad_device_flush() never waits
 * for it.
 */
extern struct workqueue_struct *kmad_ah_wq;
/*
 * Runs of kmad's work items that queue or end anything (CQ drains, agent
 * work, QP recovery and refill, address handle work, clients' calls),
 * counted as each returns: kmad_device_flush() repeats its rounds until
 * one in which none returned.
 */
extern atomic_t kmad_work_ends;

static inline void kmad_work_ended(void)
{
	atomic_inc(&kmad_work_ends);
}

/*
 * struct kmad_send_wr objects: a cache of their exact size, not
 * kmalloc()'s next size class (512 B for the 424 bytes one takes).
 */
extern struct kmem_cache *kmad_send_cache;

/**
 * enum kmad_port_stat - per-port counters (debugfs).
 */
enum kmad_port_stat {
	KMAD_PSTAT_SENT,		/* send completions, any status */
	KMAD_PSTAT_SEND_ERRORS,		/* send completions with an error
					 * (a flush replayed too), and sends
					 * failed without one (refused post,
					 * no AH, QP given up or going away)
					 */
	KMAD_PSTAT_RECEIVED,		/* receive completions that validated */
	KMAD_PSTAT_WRONG_QP,		/* SMP on QP1 or GMP on QP0: dropped */
	KMAD_PSTAT_SMI_DISCARDS,	/* DR SMPs the SMI receive step discards */
	KMAD_PSTAT_RESP_MATCHED,	/* responses matched to a request */
	KMAD_PSTAT_RESP_UNMATCHED,	/* responses that matched nothing */
	KMAD_PSTAT_RESP_UNSOLICITED,	/* RMPP-active responses that matched
					 * nothing, given to a non-RMPP agent
					 * as unsolicited (recv_user_rmpp())
					 */
	KMAD_PSTAT_REQ_DISPATCHED,	/* requests given to an agent */
	KMAD_PSTAT_REQ_ANSWERED,	/* requests answered "unsupported" */
	KMAD_PSTAT_REQ_DROPPED,		/* requests no agent took, unanswered */
	KMAD_PSTAT_REQ_BACKLOG_DROPPED,	/* requests (and RESP_UNSOLICITED's
					 * responses) for an agent that had
					 * KMAD_AGENT_RECVS_MAX (or
					 * KMAD_AGENT_RECV_BYTES_MAX) waiting
					 * for its recv_handler: dropped
					 */
	KMAD_PSTAT_TIMEOUTS,		/* sends ended by timeout */
	KMAD_PSTAT_RETRIES,		/* resends after a timeout */
	KMAD_PSTAT_CANCELED,		/* sends ended as canceled */
	KMAD_PSTAT_FLUSHED,		/* sends ended as flushed */
	KMAD_PSTAT_RECV_FLUSHED,	/* receive buffers flushed */
	KMAD_PSTAT_RECV_ERRORS,		/* receives failed otherwise: dropped */
	KMAD_PSTAT_RECV_NOBUF,		/* receive buffer allocation failures */
	KMAD_PSTAT_RECV_POST_FAILED,	/* receive buffers the provider
					 * refused (post_recv() failed)
					 */
	KMAD_PSTAT_QP_RECOVERIES,	/* QP error recoveries */
	KMAD_PSTAT_CQ_EVENTS,		/* completion events */
	KMAD_PSTAT_CQ_EMPTY_EVENTS,	/* drains that found nothing */
	KMAD_PSTAT_CQ_REQUEUES,		/* drains that ran out of budget */
	KMAD_PSTAT_RESP_MISADDRESSED,	/* responses whose TID matched but
					 * not the address (GRH, path bits):
					 * also counted unmatched
					 */
	KMAD_PSTAT_AH_HITS,		/* sends that found their AH cached */
	KMAD_PSTAT_AH_MISSES,		/* sends that had to wait for one */
	KMAD_PSTAT_AH_FAILURES,		/* AH creations that failed, and
					 * misses refused: the cache full
					 * of entries in use
					 */
	KMAD_PSTAT_AH_DESTROYED,	/* AHs destroyed (evicted, flushed) */
	/* RMPP receiving side (rmpp_recv.c, Documentation/rmpp.rst). */
	KMAD_PSTAT_RMPP_BUFFERS,	/* message buffers allocated for a
					 * first segment that would start a
					 * transfer
					 */
	KMAD_PSTAT_RMPP_REASSEMBLED,	/* RMPP messages received whole */
	KMAD_PSTAT_RMPP_ACKS,		/* ACKs sent as a receiver */
	KMAD_PSTAT_RMPP_DUPLICATES,	/* DATA segments already had: re-ACKed */
	KMAD_PSTAT_RMPP_OUT_OF_ORDER,	/* DATA past the next expected:
					 * dropped, the last good re-ACKed
					 */
	KMAD_PSTAT_RMPP_ABORTS,		/* ABORTs sent as a receiver (the
					 * sender broke the protocol, T2L):
					 * counted once posted
					 */
	KMAD_PSTAT_RMPP_RESX,		/* transfers refused with STOP RESX:
					 * limits, no memory
					 */
	KMAD_PSTAT_RMPP_TIMEOUTS,	/* reassemblies dropped idle */
	KMAD_PSTAT_RMPP_REMOTE_ENDED,	/* reassemblies the sender ended
					 * (STOP, ABORT)
					 */
	KMAD_PSTAT_RMPP_DROPPED,	/* RMPP packets dropped otherwise */
	KMAD_PSTAT_COUNT
};

/**
 * enum kmad_qp_run - where a QP is in its life.
 * @KMAD_QP_DOWN: not created, or destroyed.
 * @KMAD_QP_RUNNING: in RTS; sends are posted as slots free.
 * @KMAD_QP_RECOVERING: went to error; flushed sends wait on the replay list
 *	and new sends on the overflow list until the QP is back in RTS.
 * @KMAD_QP_DYING: the port is going away; flushed sends complete as flushed.
 * @KMAD_QP_FAILED: recovery gave up: the provider failed to reset the QP
 *	to RTS, or to move it to the error state, KMAD_QP_RECOVER_TRIES
 *	times.  It is given nothing: every send queued on it ends at once
 *	with %KMAD_SEND_LOCAL_ERROR, until the port goes away.  After a
 *	failed reset it holds nothing and receives nothing; after refused
 *	moves to the error state the provider may still hold receives
 *	(delivered if they complete) and sends (each ends at its
 *	completion, a flushed one with %KMAD_SEND_LOCAL_ERROR too, or at
 *	the port's removal).
 */
enum kmad_qp_run {
	KMAD_QP_DOWN,
	KMAD_QP_RUNNING,
	KMAD_QP_RECOVERING,
	KMAD_QP_DYING,
	KMAD_QP_FAILED,
};

struct kmad_qp_info;

/* The provider-visible QP handle. */
struct kmad_qp {
	struct kmad_qp_info *info;	/* I */
	u32 qpn;			/* I */
	u32 hw_qpn;			/* the provider's QP number (create_qp) */
	void *priv;			/* provider's */
};

/* The provider-visible CQ handle, with the drain that reaps it. */
struct kmad_cq {
	struct kmad_qp_info *info;	/* I */
	void *priv;			/* provider's */
	struct work_struct drain_work;
	unsigned int budget;		/* I: CQEs per drain pass */
};

/**
 * struct kmad_qp_info - one of a port's two special QPs (QP0 or QP1), its
 * CQ, its send queue and its receive buffers.
 */
struct kmad_qp_info {
	struct kmad_port *port;		/* I */
	enum kmad_qp_type qpt;		/* I */
	struct kmad_qp qp;
	struct kmad_cq cq;
	spinlock_t lock;		/* Q: see the legend above */
	enum kmad_qp_run run;		/* Q */
	unsigned int sq_depth;		/* I */
	unsigned int sq_posted;		/* Q: sends the provider holds */
	struct list_head overflow;	/* Q: sends waiting for a slot */
	struct list_head replay;	/* Q: flushed sends to post again */
	struct list_head failed;	/* Q: sends the provider refused */
	struct list_head ah_wait;	/* Q: sends waiting for their address
					 * handle (kmad_ah_cache)
					 */
	unsigned int rq_depth;		/* I */
	unsigned int rq_posted;		/* Q: receive buffers the provider holds */
	/* A refill that left the QP no receive buffer, tried again later:
	 * no receive completion would come to try it (kmad_recv_refill()).
	 */
	struct delayed_work refill_work;
	struct delayed_work recover_work;
	unsigned int recover_tries;	/* W: recover_work; failed resets
					 * or moves to the error state
					 * since the last recovery
					 */
	unsigned long flags;		/* atomic bitops: KMAD_QP_* bits */
};

/* kmad_qp_info.flags: a fatal QP event waits for the drain to handle it. */
#define KMAD_QP_FATAL_PENDING	0
/* kmad_qp_info.flags: the recovery work must move the QP to error first. */
#define KMAD_QP_FLUSH_PENDING	1

/**
 * enum kmad_ah_state - an address handle cache entry's life.
 * @KMAD_AH_NEW: to be created by the cache work; sends wait for it.
 * @KMAD_AH_CREATING: the cache work is in the provider's create_ah().
 * @KMAD_AH_READY: created: &kmad_ah.hw is the provider's handle.
 * @KMAD_AH_FAILED: create_ah() failed; never cached again.
 */
enum kmad_ah_state {
	KMAD_AH_NEW,
	KMAD_AH_CREATING,
	KMAD_AH_READY,
	KMAD_AH_FAILED,
};

/**
 * struct kmad_ah - an address handle kmad caches for a port.
 *
 * Lifetime: @users counts the sends holding it (from kmad_qp_send() until
 * the send is idle again: CQE polled, failed or taken back) and the cache
 * work while it creates it.  A cached entry stays when unused, until it
 * is evicted, flushed or idle for &kmad_ah_cache.idle_jiffies; an entry
 * that is no longer cached goes when its last user does: its handle is
 * destroyed by the cache work, in process context, so never before the
 * CQE of every send that used it.
 */
struct kmad_ah {
	struct kmad_ah_attr attr;	/* I: the key */
	enum kmad_ah_state state;	/* H */
	bool cached;			/* H: on the cache's hash and lru */
	unsigned int users;		/* H */
	unsigned long got;		/* H: jiffies of its last lookup */
	unsigned long made;		/* H: READY: jiffies it became so */
	void *hw;			/* H: READY: the provider's handle;
					 * written before READY, so a send
					 * that got the entry READY (or
					 * through kmad_qp_ah_resolved())
					 * reads it under Q alone
					 */
	struct hlist_node node;		/* H: cache->hash while cached */
	struct list_head lru;		/* H: cache->lru while cached,
					 * cache->reap once dead and unused
					 */
	struct list_head pend;		/* H: cache->pending while NEW */
};

/* Most address handles a port caches; unused ones beyond go, LRU first. */
#define KMAD_AH_CACHE_MAX	256
/*
 * Most entries a port's cache holds at all: beyond KMAD_AH_CACHE_MAX only
 * entries in use or being created stay (a send to as many addresses at
 * once, or a peer whose requests each want their own: flow labels); a
 * send that would need one more fails with a local error, as one whose
 * entry could not be allocated.
 */
#define KMAD_AH_CACHE_LIMIT	(4 * KMAD_AH_CACHE_MAX)
/* Buckets of a port's lookup hash: 2^7, two entries a bucket when full. */
#define KMAD_AH_HASH_BITS	7
/* An unused handle not looked up for this long is destroyed. */
#define KMAD_AH_IDLE_MS		60000

/**
 * struct kmad_ah_cache - a port's address handles, for a provider with
 * create_ah().
 */
struct kmad_ah_cache {
	spinlock_t lock;		/* H: see the legend above */
	DECLARE_HASHTABLE(hash, KMAD_AH_HASH_BITS);	/* H: cached
							 * entries, by attr
							 */
	struct list_head lru;		/* H: cached, least recently looked
					 * up first
					 */
	unsigned int count;		/* H: entries on @lru */
	struct list_head pending;	/* H: NEW entries */
	struct list_head reap;		/* H: dead, unused, to destroy */
	bool dead;			/* H: the port is going: no work */
	bool in_provider;		/* H: the work is in create_ah() */
	bool queued;			/* H: the work was queued and has not
					 * begun since (its pending bit clears
					 * before it runs: not a substitute)
					 */
	bool running;			/* H: the work is running */
	unsigned long idle_jiffies;	/* KMAD_AH_IDLE_MS, or less set by
					 * a test before any send
					 */
	wait_queue_head_t idle;		/* woken as @running, @queued
					 * or @in_provider change
					 */
	struct work_struct work;	/* creates and destroys handles */
	struct delayed_work expire;	/* uncaches idle handles */
};

/**
 * struct kmad_port - a port of a registered device.
 */
struct kmad_port {
	struct kmad_device *dev;	/* I */
	u8 port_num;			/* I */
	/* sq_depth, rq_depth: I while registered; lid, lmc, sm_lid: written
	 * under @attr_lock (irq-safe: providers report changes from any
	 * context), read with READ_ONCE().
	 */
	struct kmad_port_attr attr;
	spinlock_t attr_lock;		/* attr writes, change_dead */
	u32 reregisters;		/* @attr_lock writes, READ_ONCE()
					 * reads: the SM's ClientReregister
					 * requests since registration
					 */
	bool change_dead;		/* @attr_lock: no change work now
					 * (not registered, or going)
					 */
	struct work_struct change_work;	/* clients' port_changed calls */
	bool dying;			/* P; read locklessly by posts */
	struct mutex reg_mutex;
	struct list_head agents;	/* P writes, RCU reads */
	struct list_head client_data;	/* G: struct kmad_client_data */
	/* kmad's own send-only agents that answer unsupported requests. */
	struct kmad_agent_priv *responder[2];	/* I while registered; NULL
						 * before its unregister;
						 * read only through
						 * kmad_port_responder_get()
						 * (RCU and a reference)
						 */
	struct kmad_qp_info qpi[2];	/* [KMAD_QPT_SMI], [KMAD_QPT_GSI];
					 * no SMI QP if !kmad_port_has_smi()
					 */
	struct kmad_ah_cache ah;	/* used if the provider has
					 * create_ah()
					 */
	atomic64_t stats[KMAD_PSTAT_COUNT];
	atomic64_t drops[KMAD_MAD_VERDICT_COUNT];
	struct dentry *debugfs;
};

/**
 * struct kmad_device - a device a provider registered.
 *
 * Lifetime: kmad_device_alloc() returns it with one reference, which
 * kmad_device_free() drops; kmad_port_get() takes one more per port
 * reference handed to a ULP, and every agent one.  The last put frees it
 * after an RCU grace period, as an agent is freed: a kmad_post_send()
 * that races the unregister dropping the last reference reads the
 * agent's port inside its RCU read section.
 */
struct kmad_device {
	char name[KMAD_NAME_LEN];		/* I */
	const struct kmad_provider_ops *ops;	/* I */
	/* I: copies of what @ops has, for checks a ULP's call may make
	 * after the device is gone (and the provider's module with it)
	 */
	bool bridges;				/* ops->bridge_add */
	bool has_gids;				/* ops->query_gid */
	bool has_pkeys;				/* ops->query_pkey */
	bool has_clock;				/* ops->now */
	u8 num_ports;				/* I */
	bool registered;			/* G */
	bool registering;			/* G, read locklessly by
						 * port changes:
						 * kmad_device_register()
						 * is setting the ports up
						 */
	bool spent;				/* G: torn down once (a failed
						 * register, an unregister):
						 * never registered again
						 */
	bool gone;				/* set once unregistered:
						 * ops must not be called;
						 * read inside
						 * kmad_provider_srcu where
						 * they may be
						 * (device.c)
						 */
	struct kref ref;
	struct rcu_head rcu;			/* the free, after the last
						 * put
						 */
	struct list_head list;			/* G + kmad_devices_spin:
						 * kmad_devices while
						 * registered, then
						 * kmad_devices_leaving
						 * while it unregisters
						 */
	bool leaving;				/* G: unregistering */
	struct completion left;			/* its unregister returned */
	struct dentry *debugfs;
	void *priv;				/* provider's, after ports[] */
	struct kmad_port ports[];		/* [port_num - 1] */
};

/**
 * enum kmad_agent_state - an agent's life.
 * @KMAD_AGENT_ACTIVE: registered; posts are accepted.
 * @KMAD_AGENT_DYING: unregistering: posts fail, everything is flushed.
 * @KMAD_AGENT_REGISTERING: in the port's list while the provider's
 *	bridge_add() runs (agent_create()): a request for it is dropped,
 *	not answered as for no agent; then ACTIVE, or unlinked and freed.
 */
enum kmad_agent_state {
	KMAD_AGENT_ACTIVE,
	KMAD_AGENT_DYING,
	KMAD_AGENT_REGISTERING,
};

/**
 * enum kmad_agent_stat - per-agent counters (debugfs).
 */
enum kmad_agent_stat {
	KMAD_ASTAT_POSTED,
	KMAD_ASTAT_COMPLETED,
	KMAD_ASTAT_RESP_MATCHED,
	KMAD_ASTAT_UNSOLICITED,
	KMAD_ASTAT_TIMEOUTS,
	KMAD_ASTAT_RETRIES,
	KMAD_ASTAT_CANCELED,
	KMAD_ASTAT_FLUSHED,
	KMAD_ASTAT_COUNT
};

/**
 * struct kmad_flow - an agent's solicited flow control (flow.c).
 *
 * A solicited send (kmad_flow_is_solicited(): a request of the SA, CM or
 * SMP classes posted with a timeout, not RMPP-active) holds one of the
 * agent's @limit slots while it waits for its response: SENDING or
 * WAIT_RESP, retries included.  A post that finds the slots taken, or
 * older sends already waiting, waits BACKLOG on @backlog, in posting
 * order, and is handed to its QP when a slot frees.
 */
struct kmad_flow {
	unsigned int limit;		/* A: slots; 0: no limit */
	unsigned int outstanding;	/* A: slots held */
	unsigned int backlogged;	/* A: sends on @backlog */
	unsigned int backlog_max;	/* A: most on @backlog at once */
	u64 backlog_total;		/* A: sends that waited there */
	struct list_head backlog;	/* A: BACKLOG sends, oldest first */
};

/**
 * struct kmad_agent_priv - an agent and everything it has in flight.
 *
 * Lifetime: @refs starts at 1 for the registration.  Every posted send
 * holds one until its send_handler has returned; every receive being
 * dispatched to the agent holds one while its handler runs; the agent's
 * work holds one while it runs.  kmad_unregister_agent() makes the agent
 * DYING (so no new reference is taken by a post), unlinks it from
 * dispatch, flushes its sends, drops the registration reference and waits
 * for @released; only then can no handler run any more, and the agent is
 * freed after an RCU grace period (TID lookups run under RCU).
 */
struct kmad_agent_priv {
	struct kmad_agent agent;		/* I (public part) */
	struct kmad_qp_info *qpi;		/* I */
	struct kmad_reg_req reg;		/* I */
	bool send_only;				/* I */
	bool internal;				/* I: kmad's own responder */
	refcount_t refs;
	struct completion released;
	spinlock_t lock;			/* A: see the legend above */
	enum kmad_agent_state state;		/* A; dispatch reads it
						 * with READ_ONCE()
						 */
	struct list_head sends;			/* A: posted sends not yet
						 * DONE, but for @waiting's
						 */
	struct list_head waiting;		/* A: WAIT_RESP sends that
						 * are not RMPP; once
						 * @tables_emptied, the ones
						 * the flush left to the
						 * agent's work to end, and
						 * behind them the DONE ones
						 * the flush ended
						 * (kmad_agent_flush_sends())
						 */
	struct list_head done;			/* A: DONE, callback pending */
	struct list_head recvs;			/* A: unsolicited MADs for
						 * recv_handler, each with a
						 * reference
						 */
	unsigned int recvs_queued;		/* A: on @recvs */
	size_t recv_bytes;			/* A: their mad_len, summed */
	struct kmad_tid_table tids;		/* A: matchable sends by TID */
	bool tids_resize;			/* A: @work is queued to
						 * resize @tids
						 */
	u8 tids_failed_bits;			/* A: the size (log2) whose
						 * buckets could not be
						 * allocated: not asked for
						 * again until the count
						 * wants another, or falls
						 * to 2^tids.bits (a failed
						 * growth) or rises to
						 * 2^tids.bits / 4 (a failed
						 * shrink); 0: none
						 */
	struct kmad_wheel deadlines;		/* A: WAIT_RESP sends */
	struct list_head rmpp_sends;		/* A: its RMPP sends that
						 * are posted and not DONE
						 * (rmpp_send.c), where
						 * their ACKs are matched
						 */
	bool tables_emptied;			/* A: @tids and @deadlines
						 * were emptied by the flush
						 * of a DYING agent and stay
						 * empty
						 */
	u8 flush_status;			/* A: enum kmad_send_status
						 * the flush ends @waiting's
						 * sends with
						 */
	struct delayed_work work;		/* timeouts and done list */
	u64 timer_at;				/* A: @work is queued to run
						 * by then; U64_MAX: not
						 * queued by a deadline
						 */
	unsigned long work_runs;		/* W: runs of @work; written
						 * by it alone, read with
						 * READ_ONCE() (debugfs)
						 */
	struct list_head port_entry;		/* P: kmad_port.agents */
	bool unlinked;				/* P: taken off @port_entry
						 * by the first stop
						 */
	bool bridged;				/* P: the provider's
						 * bridge_add took @reg
						 */
	struct rcu_head rcu;
	atomic64_t stats[KMAD_ASTAT_COUNT];
	u64 timeout_late_max;			/* A: jiffies from a final
						 * deadline to its callback
						 */
	struct list_head rmpp_recvs;		/* A: RMPP reassemblies, in
						 * progress or lingering
						 * done (rmpp_recv.c)
						 */
	unsigned int rmpp_recvs_active;		/* A: those in progress */
	unsigned int rmpp_recvs_done;		/* A: those lingering done */
	struct kmad_flow flow;			/* A: solicited flow control */
};

/**
 * enum kmad_send_state - where a posted send is; see
 * Documentation/send-lifecycle.rst for the diagram.
 * @KMAD_SS_INIT: allocated (or completed and reusable), not posted.
 * @KMAD_SS_BACKLOG: posted, solicited, waiting for a flow control slot
 *	on its agent's backlog (flow.c); not given to the QP, no deadline,
 *	its TID reserved but matched by no response.  References: 2, the
 *	ones it holds once SENDING.
 * @KMAD_SS_SENDING: handed to the QP; its send completion is pending.
 *	References: 2 if it expects a response or is an RMPP send (whose
 *	transfer must end too), else 1.  An RMPP send stays SENDING from
 *	one segment to the next (Documentation/rmpp.rst).
 * @KMAD_SS_EARLY_RESP: its response arrived before its send completion
 *	and is parked on it.  References: 1 (send completion).
 * @KMAD_SS_WAIT_RESP: sent; waiting for the response or the deadline (an
 *	RMPP send also: for an ACK).  References: 1 (response/timeout).
 * @KMAD_SS_CANCELED: canceled, flushed or (RMPP) aborted while its send
 *	completion was pending; no response or ACK can match it.
 *	References: 1 (send completion).
 * @KMAD_SS_DONE: outcome decided, references 0; its callback is pending
 *	or running.
 */
enum kmad_send_state {
	KMAD_SS_INIT,
	KMAD_SS_BACKLOG,
	KMAD_SS_SENDING,
	KMAD_SS_EARLY_RESP,
	KMAD_SS_WAIT_RESP,
	KMAD_SS_CANCELED,
	KMAD_SS_DONE,
	KMAD_SS_NR_STATES
};

/**
 * enum kmad_hw_state - where a send is relative to the hardware queue.
 * @KMAD_HW_IDLE: not in the QP (before posting, or completed).
 * @KMAD_HW_WAITING: on the overflow, replay or ah_wait list (or the
 *	failed list, to be completed by the drain), not yet given to the
 *	provider.
 * @KMAD_HW_POSTED: the provider holds it; a CQE will come.
 * @KMAD_HW_CANCELED: the provider holds it, and its outcome was decided
 *	meanwhile: canceled or flushed (its send state is %KMAD_SS_CANCELED),
 *	or its response matched (%KMAD_SS_EARLY_RESP): its CQE ends it,
 *	even a flush after a QP error, which is not replayed.  Set under A
 *	and Q by kmad_qp_cancel(), so the CQ drain, which holds only Q,
 *	sees it; the send state follows under the same A (only holders of
 *	A read it).
 */
enum kmad_hw_state {
	KMAD_HW_IDLE,
	KMAD_HW_WAITING,
	KMAD_HW_POSTED,
	KMAD_HW_CANCELED,
};

struct kmad_recv_priv;

/**
 * struct kmad_send_wr - kmad's tracking of one send buffer.
 *
 * One per send buffer, from a cache of its exact size (kmad_send_cache):
 * 424 bytes on x86-64, of which the MAD is 256 and the public
 * &struct kmad_send_buf 80.  To keep it so:
 *
 * - its agent is the buffer's (kmad_send_agent()), which the ULP does
 *   not change;
 * - its address is the buffer's &kmad_send_buf.dest, which the ULP does
 *   not change while the send is posted: the hardware address
 *   (&struct kmad_ah_attr) is built from it when the QP needs it
 *   (kmad_send_ah_attr()), and the source GID a response must come back
 *   to is read from the port's table when the response arrives, as
 *   ib_mad does;
 * - its response timeout is &kmad_send_buf.timeout_ms, which
 *   kmad_modify_send() updates (as ib_modify_mad() does);
 * - @deadline_node, used only while WAIT_RESP, shares its memory with
 *   what is used only outside WAIT_RESP: the QP list entry, the parked
 *   response and the address handle.  send_set_state() clears the last
 *   two as the send leaves WAIT_RESP; @deadline_node.expires overlaps
 *   only @qp_entry, which nothing writes before the send is queued on
 *   its QP again, so a send that timed out keeps its deadline until its
 *   callback (for the lateness kmad_agent_get_stats() reports);
 * - an RMPP send (kmad_alloc_send_buf_rmpp()) is a larger allocation
 *   that embeds this one, its segment 1 being @mad, and says so in
 *   @rmpp: a single-MAD send pays nothing for RMPP;
 * - its small fields are bytes and bit-fields of bytes.  A byte is
 *   written under one lock only: @refs and @status share one (A); the
 *   flags constant while the send is on a QP (@expects_resp, @rmpp,
 *   @solicited: set at post or allocation) have their own, which
 *   qp_hw_send() reads under Q; then @state (A), and @hw and @hw_status
 *   (Q) share the last, so that no bit-field of one lock shares a byte
 *   with one of the other.
 */
struct kmad_send_wr {
	struct kmad_send_buf buf;		/* public part; .agent: I */
	struct kmad_cqe cqe;			/* I */
	struct kmad_tid_entry tid;		/* A: .tid is the TID; in
						 * the agent's tids while
						 * matchable
						 */
	struct list_head agent_entry;		/* A: agent->sends, ->waiting
						 * or ->done; once taken off
						 * ->done into a delivery
						 * batch, the agent's work
						 * alone (send_deliver())
						 */
	union {
		/* A: in agent->deadlines while WAIT_RESP; .expires is the
		 * deadline, kept after it for the lateness
		 */
		struct kmad_wheel_entry deadline_node;
		/* A: agent->flow.backlog while BACKLOG, when the send is
		 * on no QP list; overlaps @qp_entry only
		 */
		struct list_head backlog_entry;
		struct {
			/* Q: overflow, replay, failed or ah_wait */
			struct list_head qp_entry;
			/* A: the parked response: EARLY_RESP, DONE; in a
			 * delivery batch the agent's work alone
			 */
			struct kmad_recv_priv *early_resp;
			/* Q: the cached handle it holds, while not idle;
			 * cleared under A alone as the send leaves
			 * WAIT_RESP (idle: on no QP list)
			 */
			struct kmad_ah *ah;
		};
	};
	u32 retries_left;			/* A */
	u8 refs:4;				/* A: as the contract counts
						 * them
						 */
	u8 status:4;				/* A: enum kmad_send_status,
						 * the outcome once decided
						 */
	u8 expects_resp:1;			/* A, set at post, constant
						 * until the next: posted with
						 * a timeout, a request: waits
						 * for a response
						 */
	u8 rmpp:1;				/* I: an RMPP send, inside a
						 * struct kmad_rmpp_send
						 * (rmpp_send.c)
						 */
	u8 solicited:1;				/* A, set at post, constant
						 * until the next: flow
						 * controlled
						 * (kmad_flow_is_solicited())
						 */
	u8 state;				/* A: enum kmad_send_state */
	u8 hw:4;				/* Q: enum kmad_hw_state */
	u8 hw_status:4;				/* Q: enum kmad_wc_status, the
						 * last send completion
						 */
	struct kmad_mad mad;			/* the MAD; buf.mad points here */
};

/* Every send carries one (mad.h says so). */
static_assert(sizeof(struct kmad_dest) == 40);

/* &kmad_send_wr.status has four bits. */
static_assert(KMAD_SEND_REMOTE_ABORT < 1 << 4);

/* The layout the comment above relies on. */
static_assert(offsetof(struct kmad_send_wr, deadline_node.expires) +
	      sizeof(u64) <= offsetof(struct kmad_send_wr, early_resp));
static_assert(offsetof(struct kmad_send_wr, qp_entry) ==
	      offsetof(struct kmad_send_wr, deadline_node));
static_assert(offsetof(struct kmad_send_wr, backlog_entry) ==
	      offsetof(struct kmad_send_wr, qp_entry));

/**
 * struct kmad_recv_priv - a receive buffer and, once received, the
 * work completion handed to the ULP.
 *
 * The provider writes the packet from @grh on: the GRH area
 * (%KMAD_GRH_BYTES), then the MAD right behind it.
 */
struct kmad_recv_priv {
	struct kmad_cqe cqe;			/* I */
	struct kmad_qp_info *qpi;		/* I */
	struct list_head agent_entry;		/* A: agent->recvs */
	/*
	 * An RMPP request whose last segment was ACKed: rmpp_recv.c checked
	 * the agent's backlog under A before, so kmad_agent_queue_recv()
	 * queues it past KMAD_AGENT_RECVS_MAX (by at most the receives other
	 * contexts queued meanwhile) rather than lose what the sender was
	 * told arrived.  Written before it is queued, then constant.
	 */
	bool acked;
	struct kmad_recv_wc wc;
	struct kmad_wire_grh grh;
	struct kmad_mad mad;
};

static_assert(offsetof(struct kmad_recv_priv, mad) -
	      offsetof(struct kmad_recv_priv, grh) == KMAD_GRH_BYTES);

/*
 * The allocations kmad makes in the CQ drain and in its work items, where
 * no caller's fail_nth reaches (tests/kunit/faults_test.c sweeps those of
 * the API calls).  Each fails as its comment says, counted.
 */
enum kmad_alloc_site {
	KMAD_ALLOC_RECV_BUF,	/* recv.c: a receive buffer for the refill:
				 * recv_nobuf, the refill tried again later
				 */
	KMAD_ALLOC_ANSWER,	/* recv.c: kmad's answer to a request no
				 * agent takes: requests_dropped, unanswered
				 */
	KMAD_ALLOC_RMPP_OUT,	/* rmpp_recv.c: the receiver's record of one
				 * RMPP packet: rmpp_recv_dropped, the packet
				 * dropped unanswered (its sender repeats it)
				 */
	KMAD_ALLOC_RMPP_XFER,	/* rmpp_recv.c: a transfer's record: a first
				 * segment refused with STOP (ResX), a
				 * one-segment message dropped unanswered
				 * (rmpp_recv_dropped)
				 */
	KMAD_ALLOC_RMPP_BUF,	/* rmpp_recv.c: a message's buffer: refused
				 * with STOP (ResX)
				 */
	KMAD_ALLOC_RMPP_CTL,	/* rmpp_recv.c, rmpp_send.c: an ACK, STOP or
				 * ABORT to send: rmpp_recv_dropped, not sent
				 */
	KMAD_ALLOC_TID_BUCKETS,	/* send.c: a TID table's new buckets: the
				 * table keeps its size (longer chains), not
				 * tried again at that size
				 */
	KMAD_ALLOC_SITES
};

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit seam: every allocation at a site of enum kmad_alloc_site asks it
 * first (if set), and fails if it says so (main.c).
 */
typedef bool (*kmad_test_alloc_hook_t)(enum kmad_alloc_site site);
extern kmad_test_alloc_hook_t kmad_test_alloc_hook;

static inline bool kmad_alloc_fails(enum kmad_alloc_site site)
{
	kmad_test_alloc_hook_t hook = READ_ONCE(kmad_test_alloc_hook);

	return hook && hook(site);
}
#else
static inline bool kmad_alloc_fails(enum kmad_alloc_site site)
{
	return false;
}
#endif

/* main.c / device.c */
bool kmad_port_clock(struct kmad_port *port, u64 *now);
u64 kmad_now(struct kmad_port *port);
void kmad_port_stat_inc(struct kmad_port *port, enum kmad_port_stat s);
void kmad_port_stat_add(struct kmad_port *port, enum kmad_port_stat s,
			unsigned int n);
int kmad_port_find_gid(struct kmad_port *port, const union kmad_gid *gid,
		       u8 *index);
unsigned int kmad_port_gid_count(const struct kmad_port *port);
unsigned int kmad_port_pkey_count(const struct kmad_port *port);

/* qp.c */
/* KUnit seams in a QP's life: see kmad_test_set_qp_hook() in qp.c. */
enum kmad_test_qp_seam {
	KMAD_TEST_QP_DESTROY,	/* kmad_qp_destroy(), kmad_qp_create()'s
				 * error path
				 */
	KMAD_TEST_QP_RESET,	/* the recovery work, before its reset */
	KMAD_TEST_QP_STOP,	/* kmad_qp_stop(), first (no lock held) */
	KMAD_TEST_QP_SEAMS
};

#if IS_ENABLED(CONFIG_KUNIT)
void kmad_test_set_qp_hook(enum kmad_test_qp_seam seam,
			   void (*hook)(struct kmad_qp_info *qpi));
#endif
int kmad_qp_create(struct kmad_qp_info *qpi);
void kmad_qp_stop(struct kmad_qp_info *qpi);
void kmad_qp_destroy(struct kmad_qp_info *qpi);
void kmad_qp_send(struct kmad_qp_info *qpi, struct kmad_send_wr *wr);
bool kmad_qp_cancel(struct kmad_qp_info *qpi, struct kmad_send_wr *wr);
void kmad_cq_drain_work(struct work_struct *work);
void kmad_qp_send_cqe_done(struct kmad_cq *cq, struct kmad_wc *wc);
void kmad_qp_recv_returned(struct kmad_qp_info *qpi, bool flushed);

/* send.c */
void kmad_send_ah_attr(const struct kmad_send_wr *wr,
		       struct kmad_ah_attr *attr);
void kmad_send_hw_done(struct kmad_send_wr *wr, enum kmad_wc_status status);
int kmad_send_resp_match(struct kmad_agent_priv *agent,
			 const struct kmad_recv_priv *recv);
bool kmad_send_response(struct kmad_agent_priv *agent,
			struct kmad_recv_priv *recv);
bool kmad_agent_recvs_full(const struct kmad_agent_priv *agent, size_t len);
int kmad_agent_queue_recv(struct kmad_agent_priv *agent,
			  struct kmad_recv_priv *recv);
void kmad_agent_work(struct work_struct *work);
void kmad_agent_flush_sends(struct kmad_agent_priv *agent,
			    enum kmad_send_status status);
int kmad_agent_tables_init(struct kmad_agent_priv *agent);
void kmad_agent_tables_destroy(struct kmad_agent_priv *agent);
const char *kmad_send_state_name(enum kmad_send_state state);
void kmad_send_wr_init(struct kmad_send_wr *wr, struct kmad_agent *agent,
		       const struct kmad_dest *dest);
void kmad_send_transmit(struct kmad_send_wr *wr);
void kmad_send_wait(struct kmad_send_wr *wr, unsigned int timeout_ms);
void kmad_send_finish(struct kmad_send_wr *wr, enum kmad_send_status status);
int kmad_send_abort(struct kmad_send_wr *wr, enum kmad_send_status status);

/* rmpp_send.c: the hooks send.c and qp.c call for an RMPP send (@wr->rmpp) */
int kmad_rmpp_send_check(struct kmad_send_wr *wr);
bool kmad_rmpp_send_busy(const struct kmad_send_wr *wr, u64 tid);
void kmad_rmpp_send_start(struct kmad_send_wr *wr);
void kmad_rmpp_send_hw_done(struct kmad_send_wr *wr);
bool kmad_rmpp_send_rewind(struct kmad_send_wr *wr);
unsigned int kmad_rmpp_send_wait_ms(struct kmad_send_wr *wr,
				    unsigned int timeout_ms);
void kmad_rmpp_send_listed(struct kmad_send_wr *wr, bool on);
struct kmad_mad *kmad_rmpp_send_wire_mad(struct kmad_send_wr *wr);
void kmad_rmpp_send_free(struct kmad_send_wr *wr);

void kmad_send_drain_backlog(struct kmad_agent_priv *agent);

/* flow.c */
void kmad_flow_init(struct kmad_agent_priv *agent);
bool kmad_flow_is_solicited(const struct kmad_agent_priv *agent,
			    const struct kmad_send_wr *wr);
bool kmad_flow_admit(struct kmad_agent_priv *agent, struct kmad_send_wr *wr);
bool kmad_flow_account(struct kmad_send_wr *wr, enum kmad_send_state old,
		       enum kmad_send_state new);
struct kmad_send_wr *kmad_flow_next(struct kmad_agent_priv *agent);
struct seq_file;
void kmad_flow_show(struct seq_file *m, struct kmad_agent_priv *agent);

/* agent.c */
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit seam: port removal calls it (if set) between taking a reference to
 * an agent still registered on the port and stopping that agent, so a test
 * can run the ULP's own unregister exactly there.
 */
typedef void (*kmad_test_agent_hook_t)(struct kmad_agent_priv *agent);
extern kmad_test_agent_hook_t kmad_test_port_flush_hook;
/*
 * KUnit seam: the agent's work calls it (if set) once it has begun, just
 * before it re-arms its timer (agent_expire()), so a test can queue the
 * work again exactly there (send.c).
 */
extern kmad_test_agent_hook_t kmad_test_agent_work_hook;
/*
 * KUnit seam: agent_expire() calls it (if set) between two batches of due
 * sends, with the agent lock dropped (send.c).
 */
extern kmad_test_agent_hook_t kmad_test_expire_batch_hook;
/*
 * KUnit seam: the receive path calls it (if set) once it found the agent
 * for an unsolicited MAD, holding a reference, before it queues the MAD
 * for the agent's recv_handler (recv.c).
 */
extern kmad_test_agent_hook_t kmad_test_recv_queue_hook;
void kmad_test_set_next_hi_tid(u32 next);
#endif
struct kmad_agent_priv *kmad_agent_find_by_tid(struct kmad_qp_info *qpi,
					       u64 tid);
struct kmad_agent_priv *kmad_agent_find_for_request(struct kmad_qp_info *qpi,
						    const struct kmad_mad *mad,
						    bool *class_known);
void kmad_agent_put(struct kmad_agent_priv *agent);
void kmad_agent_put_many(struct kmad_agent_priv *agent, unsigned int n);
unsigned long kmad_timer_delay(unsigned long delay);
void kmad_agent_queue_work(struct kmad_agent_priv *agent, unsigned long delay);
void kmad_agent_run_now(struct kmad_agent_priv *agent);
bool kmad_agent_get(struct kmad_agent_priv *agent);
struct kmad_agent_priv *kmad_port_responder_get(struct kmad_port *port,
						enum kmad_qp_type qpt);
int kmad_port_responder_create(struct kmad_port *port);
void kmad_port_responder_destroy(struct kmad_port *port);
void kmad_port_agents_kick(struct kmad_port *port);
void kmad_port_flush_agents(struct kmad_port *port);
void kmad_device_put(struct kmad_device *dev);

/* ah.c */
#if IS_ENABLED(CONFIG_KUNIT)
/*
 * KUnit seam: the address handle work calls it (if set) first thing, before
 * it takes the cache lock, so a test can hold the work between its
 * dequeueing and its start.
 */
typedef void (*kmad_test_ah_hook_t)(struct kmad_port *port);
extern kmad_test_ah_hook_t kmad_test_ah_work_hook;
#endif
void kmad_ah_cache_init(struct kmad_port *port);
bool kmad_ah_cache_used(const struct kmad_port *port);
struct kmad_ah *kmad_ah_get(struct kmad_port *port,
			    const struct kmad_ah_attr *attr, bool *ready);
void kmad_ah_put(struct kmad_port *port, struct kmad_ah *ah);
void kmad_ah_cache_flush(struct kmad_port *port);
void kmad_ah_cache_teardown(struct kmad_port *port);
void kmad_ah_cache_flush_work(struct kmad_port *port);
void kmad_qp_ah_resolved(struct kmad_qp_info *qpi, struct kmad_ah *ah,
			 bool ok);
bool kmad_qp_exists(const struct kmad_qp_info *qpi);

/* recv.c */
void kmad_recv_done(struct kmad_cq *cq, struct kmad_wc *wc);
int kmad_recv_refill(struct kmad_qp_info *qpi);
void kmad_recv_free(struct kmad_recv_priv *recv);
int kmad_recv_reply_dest(struct kmad_port *port, struct kmad_dest *dest,
			 const struct kmad_recv_wc *req);

/* rmpp_recv.c */
void kmad_rmpp_recv_expire(struct kmad_agent_priv *agent);
void kmad_rmpp_recv_flush(struct kmad_agent_priv *agent);

/* debugfs.c */
void kmad_debugfs_device_add(struct kmad_device *dev);
void kmad_debugfs_device_remove(struct kmad_device *dev);
#if IS_ENABLED(CONFIG_KUNIT)
/* What the port<N>/stats and port<N>/sends files show; m->private is the
 * port.  Exported to KUnit tests only.
 */
int kmad_debugfs_stats_show(struct seq_file *m, void *v);
int kmad_debugfs_sends_show(struct seq_file *m, void *v);
int kmad_debugfs_flow_show(struct seq_file *m, void *v);
#endif

/* This port as a node for the SMI's directed-route checks. */
static inline void kmad_port_smi_node(const struct kmad_port *port,
				      struct kmad_smi_node *node)
{
	node->is_switch = false;
	node->port_num = port->port_num;
	node->num_ports = port->dev->num_ports;
}

static inline bool kmad_qpt_is_smi(enum kmad_qp_type qpt)
{
	return qpt == KMAD_QPT_SMI;
}

static inline struct kmad_send_wr *kmad_send_wr(struct kmad_send_buf *buf)
{
	return container_of(buf, struct kmad_send_wr, buf);
}

/*
 * Is @buf one kmad allocated (kmad_alloc_send_buf*())?  Its MAD pointer
 * names the MAD inside the send; a caller's own struct kmad_send_buf is
 * refused before anything past it is read.
 */
static inline bool kmad_send_buf_ours(const struct kmad_send_buf *buf)
{
	return buf->mad ==
	       &container_of(buf, const struct kmad_send_wr, buf)->mad;
}

static inline struct kmad_agent_priv *kmad_agent_priv(struct kmad_agent *a)
{
	return container_of(a, struct kmad_agent_priv, agent);
}

/* The agent a send belongs to: its buffer's (I). */
static inline struct kmad_agent_priv *
kmad_send_agent(const struct kmad_send_wr *wr)
{
	return kmad_agent_priv(wr->buf.agent);
}

#endif /* KMAD_PRIV_H */
