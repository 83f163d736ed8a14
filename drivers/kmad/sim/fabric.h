/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_sim private: the fabric, its ports and links, and what the other
 * files need from fabric.c (QP lookup, routing, faults, clock, counters).
 *
 * Locking legend for the fields below (hw.h has the CQ lock, C):
 *
 * I: set before the fabric is visible to anyone, read-only afterwards.
 * F: kmad_sim_fabric.lock.  A spinlock taken with interrupts disabled, in
 *    any context.  It is a leaf: nothing else is ever acquired while it is
 *    held, so it may be taken inside C.
 * M: kmad_sim_fabric.devices_mutex.  Process context.  Held around every
 *    change of a port's device (registration, removal) and around every
 *    use of a port's &kmad_device outside kmad's own callbacks (settle,
 *    clock), so the device cannot be freed under such a use.  Fields
 *    marked "F, M" are written with both held and may be read with either.
 * A: atomic, no lock.
 *
 * Lifetime of a port's QPs as seen from the fabric: create_qp publishes
 * the QP in its port's qps[] (F); destroy_qp unpublishes it, then waits
 * for every reference taken through kmad_sim_qp_get() to be dropped.  A
 * port that is being removed is unreachable (lookups fail) although its
 * QPs are still published until kmad destroys them.
 */
#ifndef KMAD_SIM_FABRIC_H
#define KMAD_SIM_FABRIC_H

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <kmad/sim.h>
#include <kmad/wire.h>

struct sim_qp;

/* Every simulated device has one port, port 1, with QP0 and QP1. */
#define SIM_PORT_NUM		1
#define SIM_NUM_QPS		2
#define SIM_NO_PEER		UINT_MAX
#define SIM_PERMISSIVE_LID	0xffff
#define SIM_SM_LID		1
#define SIM_NAME_MAX		32

/**
 * enum sim_port_state - whether a port's device exists.
 * @SIM_PORT_ABSENT: no device: never created, or removed and freed.
 * @SIM_PORT_LIVE: registered with kmad; MADs reach it.
 * @SIM_PORT_REMOVING: being unregistered; its device still exists but
 *	nothing reaches it any more.
 */
enum sim_port_state {
	SIM_PORT_ABSENT,
	SIM_PORT_LIVE,
	SIM_PORT_REMOVING,
};

/*
 * enum sim_stat - index of a counter in &sim_port.stats; each is the
 * &struct kmad_sim_stats field of the same name.
 */
enum sim_stat {
	SIM_STAT_SENT,
	SIM_STAT_DELIVERED,
	SIM_STAT_DROPPED_NO_RECV,
	SIM_STAT_DROPPED_NO_ROUTE,
	SIM_STAT_DROPPED_FAULT,
	SIM_STAT_DUPLICATED,
	SIM_STAT_CORRUPTED,
	SIM_STAT_SEND_ERRORS,
	SIM_STAT_CQ_EVENTS,
	SIM_STAT_DROPPED_BAD_QKEY,
	SIM_STAT_RECV_ERRORS,
	SIM_STAT_CQ_OVERFLOWS,
	SIM_STAT_COUNT,
};

/**
 * struct sim_port - one HCA port of the fabric and the device that owns it.
 * @name: the device's name, "<fabric name><index>" (I).
 * @lid: the port's LID (I).
 * @peer: index of the port at the other end of the link, or SIM_NO_PEER (I).
 * @state: whether the device exists (F, M).
 * @kdev: the device, while @state is not SIM_PORT_ABSENT (F, M).
 * @qps: the published QPs by QP number (F).
 * @stats: counters; they outlive the device (A).
 */
struct sim_port {
	char name[SIM_NAME_MAX];
	u16 lid;
	unsigned int peer;
	enum sim_port_state state;
	struct kmad_device *kdev;
	struct sim_qp *qps[SIM_NUM_QPS];
	atomic64_t stats[SIM_STAT_COUNT];
};

/**
 * struct kmad_sim_fabric - a simulated fabric.
 * @name: name prefix of its devices (I).
 * @cfg: the configuration it was built from; cfg.name is @name (I).
 * @ops: provider operations of its devices, per mode (I).
 * @wq: runs transmissions (async mode), CQ event deliveries and fatal QP
 *	events (I).
 * @lock: F, see above.
 * @devices_mutex: M, see above.
 * @clock: step mode: the virtual jiffies counter (F).
 * @faults: fault injection settings (F).
 * @rnd: fault injection PRNG, seeded at creation so that a step-mode run
 *	is reproducible (F).
 * @wire_sends: sends posted and not yet completed, on every QP (A).
 * @wire_idle: woken when @wire_sends drops to zero.
 * @progress: bumped whenever a work request, CQE or event moves; settle
 *	stops when a round leaves it unchanged (A).
 * @num_ports: number of ports, one per device (I).
 * @ports: the ports.
 */
struct kmad_sim_fabric {
	char *name;
	struct kmad_sim_config cfg;
	const struct kmad_provider_ops *ops;
	struct workqueue_struct *wq;
	spinlock_t lock;		/* F: see the legend above */
	struct mutex devices_mutex;	/* M: see the legend above */
	u64 clock;
	struct kmad_sim_faults faults;
	struct rnd_state rnd;
	atomic_t wire_sends;
	wait_queue_head_t wire_idle;
	atomic_t progress;
	unsigned int num_ports;
	struct sim_port ports[];
};

/**
 * struct sim_dev - kmad_device_priv() of a simulated device.
 * @fab: its fabric (I).
 * @index: its port's index in &kmad_sim_fabric.ports (I).
 * @teardown: set once, before the device is unregistered: CQ events are
 *	then delivered at once even in step mode, so that kmad's teardown
 *	never waits for a step that cannot come.  Written with WRITE_ONCE()
 *	before a pass that takes every one of the device's CQ locks; read
 *	under a CQ lock (hw.c).
 */
struct sim_dev {
	struct kmad_sim_fabric *fab;
	unsigned int index;
	bool teardown;
};

/**
 * struct sim_packet - a MAD on the wire, or injected as if it were.
 * @len: length of @mad.
 * @slid: source LID.
 * @dlid: destination LID.
 * @src_qpn: sending QP.
 * @dst_qpn: destination QP.
 * @qkey: Q_Key.
 * @sl: service level.
 * @pkey_index: P_Key index.
 * @copies: how many times it is delivered (2 when duplicated).
 * @mad: the MAD, copied from kmad's buffer at transmission.
 */
struct sim_packet {
	u32 len;
	u16 slid;
	u16 dlid;
	u32 src_qpn;
	u32 dst_qpn;
	u32 qkey;
	u8 sl;
	u16 pkey_index;
	unsigned int copies;
	u8 mad[KMAD_MAD_SIZE];
};

/**
 * struct sim_verdict - what fault injection does to one transmitted MAD.
 * @send_err: the send fails locally; nothing goes on the wire.
 * @drop: lost on the wire.
 * @corrupt: byte @corrupt_at of the header is flipped.
 * @dup: delivered twice.
 * @corrupt_at: offset of the flipped byte, below %KMAD_MAD_HDR_SIZE.
 */
struct sim_verdict {
	bool send_err;
	bool drop;
	bool corrupt;
	bool dup;
	unsigned int corrupt_at;
};

static inline struct sim_port *sim_port_of(const struct sim_dev *sdev)
{
	return &sdev->fab->ports[sdev->index];
}

static inline void sim_count(const struct sim_dev *sdev, enum sim_stat stat)
{
	atomic64_inc(&sim_port_of(sdev)->stats[stat]);
}

static inline void sim_progress(struct kmad_sim_fabric *fab)
{
	atomic_inc(&fab->progress);
}

struct sim_qp *kmad_sim_qp_get(struct kmad_sim_fabric *fab, unsigned int dev,
			       u32 qpn);
int kmad_sim_publish_qp(struct sim_qp *qp);
void kmad_sim_unpublish_qp(struct sim_qp *qp);
void kmad_sim_route(struct sim_qp *src, const struct sim_packet *pkt);
void kmad_sim_draw_faults(struct kmad_sim_fabric *fab, struct sim_verdict *v);
unsigned long kmad_sim_send_delay(struct kmad_sim_fabric *fab);
u64 kmad_sim_clock(struct kmad_sim_fabric *fab);

#endif /* KMAD_SIM_FABRIC_H */
