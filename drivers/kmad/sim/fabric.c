// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: fabrics.  Creation and destruction, devices and their ports,
 * links and LID routing, fault injection, the virtual clock, counters and
 * settling.
 *
 * Locks: F (&kmad_sim_fabric.lock) and M (&kmad_sim_fabric.devices_mutex),
 * described in fabric.h with every field they guard.
 *
 * Routing.  A MAD sent on a port goes over the port's link; the port at the
 * other end accepts it if the destination LID is its LID, or if it is the
 * permissive LID and the MAD was sent from QP0 (a directed-route SMP).  It
 * then goes to the QP with the destination QP number; QP1 drops it unless
 * its Q_Key is %KMAD_QP1_QKEY.  A MAD with nowhere to go counts as
 * dropped_no_route on the sending port; one that reaches a port counts
 * there.
 *
 * Removing a device.  With M held: mark the port REMOVING (F), so nothing
 * finds it any more; set its teardown flag and release step-mode pending
 * events, so kmad's teardown never waits for a step; unregister it from
 * kmad, which destroys its QPs and CQs (destroy_qp waits for whoever still
 * holds a QP); mark the port ABSENT and free the device.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "fabric.h"
#include "hw.h"

/* Fault PRNG seed: the same faults for the same sequence of calls. */
#define SIM_FAULT_SEED			0x6b6d6164ULL
/* kmad_sim_settle(): rounds before giving up, and wait per round. */
#define SIM_SETTLE_MAX_ROUNDS		1000
#define SIM_SETTLE_WIRE_TIMEOUT_MS	10000

/**
 * kmad_sim_qp_get() - find a QP by address and take a reference.
 * @fab: the fabric.
 * @dev: device index.
 * @qpn: 0 or 1.
 *
 * Only a QP of a live device is found.  The reference keeps the QP and its
 * CQ from being destroyed; drop it with kmad_sim_qp_put().
 *
 * Context: any.
 * Return: the QP, ERR_PTR(-EINVAL) for a bad address, or ERR_PTR(-ENODEV)
 * if the device is gone or has no such QP.
 */
struct sim_qp *kmad_sim_qp_get(struct kmad_sim_fabric *fab, unsigned int dev,
			       u32 qpn)
{
	struct sim_qp *qp = NULL;
	struct sim_port *port;
	unsigned long flags;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_ports || qpn >= SIM_NUM_QPS)
		return ERR_PTR(-EINVAL);
	port = &fab->ports[dev];
	spin_lock_irqsave(&fab->lock, flags);
	if (port->state == SIM_PORT_LIVE)
		qp = port->qps[qpn];
	if (qp)
		sim_qp_get(qp);
	spin_unlock_irqrestore(&fab->lock, flags);
	return qp ?: ERR_PTR(-ENODEV);
}

/**
 * kmad_sim_publish_qp() - make a new QP reachable by its address.
 * @qp: the QP, fully initialised.
 *
 * Return: 0, or -EBUSY if the port already has a QP with that number.
 */
int kmad_sim_publish_qp(struct sim_qp *qp)
{
	struct kmad_sim_fabric *fab = qp->sdev->fab;
	struct sim_port *port = sim_port_of(qp->sdev);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&fab->lock, flags);
	if (port->qps[qp->qpn])
		ret = -EBUSY;
	else
		port->qps[qp->qpn] = qp;
	spin_unlock_irqrestore(&fab->lock, flags);
	return ret;
}

/**
 * kmad_sim_unpublish_qp() - make a QP unreachable; no new reference can be
 * taken on it afterwards.
 * @qp: the QP.
 */
void kmad_sim_unpublish_qp(struct sim_qp *qp)
{
	struct kmad_sim_fabric *fab = qp->sdev->fab;
	struct sim_port *port = sim_port_of(qp->sdev);
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	port->qps[qp->qpn] = NULL;
	spin_unlock_irqrestore(&fab->lock, flags);
}

/*
 * Find where @pkt, sent from port @from, goes.  Returns the port index, or
 * SIM_NO_PEER if no port takes it; *@dst is then the destination QP with a
 * reference, or NULL if that port has no such QP.
 */
static unsigned int sim_route_lookup(struct kmad_sim_fabric *fab,
				     unsigned int from,
				     const struct sim_packet *pkt,
				     struct sim_qp **dst)
{
	unsigned int to = fab->ports[from].peer;
	struct sim_port *port;
	unsigned long flags;

	*dst = NULL;
	if (to == SIM_NO_PEER || pkt->dst_qpn >= SIM_NUM_QPS)
		return SIM_NO_PEER;
	port = &fab->ports[to];
	spin_lock_irqsave(&fab->lock, flags);
	if (port->state != SIM_PORT_LIVE)
		to = SIM_NO_PEER;
	else if (pkt->dlid != port->lid &&
		 !(pkt->dlid == SIM_PERMISSIVE_LID && pkt->src_qpn == 0))
		to = SIM_NO_PEER;
	else
		*dst = port->qps[pkt->dst_qpn];
	if (*dst)
		sim_qp_get(*dst);
	spin_unlock_irqrestore(&fab->lock, flags);
	return to;
}

/**
 * kmad_sim_route() - carry a transmitted MAD to its destination.
 * @src: the sending QP.
 * @pkt: the MAD, delivered &sim_packet.copies times.
 *
 * Context: any; no sim lock held.
 */
void kmad_sim_route(struct sim_qp *src, const struct sim_packet *pkt)
{
	struct kmad_sim_fabric *fab = src->sdev->fab;
	struct sim_qp *dst;
	unsigned int to, i;

	to = sim_route_lookup(fab, src->sdev->index, pkt, &dst);
	if (to == SIM_NO_PEER) {
		sim_count(src->sdev, SIM_STAT_DROPPED_NO_ROUTE);
		return;
	}
	for (i = 0; i < pkt->copies; i++) {
		if (!dst)
			atomic64_inc(&fab->ports[to].stats[SIM_STAT_DROPPED_NO_RECV]);
		else if (pkt->dst_qpn == 1 && pkt->qkey != KMAD_QP1_QKEY)
			sim_count(dst->sdev, SIM_STAT_DROPPED_BAD_QKEY);
		else
			kmad_sim_qp_receive(dst, pkt);
	}
	if (dst)
		kmad_sim_qp_put(dst);
}

static bool sim_draw_pct(struct kmad_sim_fabric *fab, unsigned int pct)
{
	lockdep_assert_held(&fab->lock);
	return pct && prandom_u32_state(&fab->rnd) % 100 < pct;
}

/**
 * kmad_sim_draw_faults() - decide what fault injection does to one MAD.
 * @fab: the fabric.
 * @v: the verdict, filled in.
 *
 * Context: any; F must not be held (C may be).
 */
void kmad_sim_draw_faults(struct kmad_sim_fabric *fab, struct sim_verdict *v)
{
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	v->send_err = sim_draw_pct(fab, fab->faults.send_err_pct);
	v->drop = sim_draw_pct(fab, fab->faults.drop_pct);
	v->corrupt = sim_draw_pct(fab, fab->faults.corrupt_pct);
	if (v->corrupt)
		v->corrupt_at = prandom_u32_state(&fab->rnd) % KMAD_MAD_HDR_SIZE;
	v->dup = sim_draw_pct(fab, fab->faults.dup_pct);
	spin_unlock_irqrestore(&fab->lock, flags);
}

/**
 * kmad_sim_send_delay() - async mode: how long a send posted now waits
 * before transmission.
 * @fab: the fabric.
 *
 * Return: latency_us plus the fault delay_us, in jiffies.
 */
unsigned long kmad_sim_send_delay(struct kmad_sim_fabric *fab)
{
	unsigned long flags;
	unsigned int us;

	spin_lock_irqsave(&fab->lock, flags);
	us = fab->cfg.latency_us + fab->faults.delay_us;
	spin_unlock_irqrestore(&fab->lock, flags);
	return usecs_to_jiffies(us);
}

/**
 * kmad_sim_clock() - read the step-mode virtual clock.
 * @fab: the fabric.
 *
 * Return: the virtual jiffies counter.
 */
u64 kmad_sim_clock(struct kmad_sim_fabric *fab)
{
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(&fab->lock, flags);
	now = fab->clock;
	spin_unlock_irqrestore(&fab->lock, flags);
	return now;
}

/* Hand the device's step-mode pending events to its event works. */
static void sim_port_release_events(struct kmad_sim_fabric *fab,
				    struct sim_port *port)
{
	struct sim_qp *qps[SIM_NUM_QPS] = {};
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&fab->lock, flags);
	for (i = 0; i < SIM_NUM_QPS; i++) {
		qps[i] = port->qps[i];
		if (qps[i])
			sim_qp_get(qps[i]);
	}
	spin_unlock_irqrestore(&fab->lock, flags);

	for (i = 0; i < SIM_NUM_QPS; i++) {
		if (!qps[i])
			continue;
		kmad_sim_cq_teardown(qps[i]->cq);
		kmad_sim_qp_put(qps[i]);
	}
}

static void sim_port_set_device(struct kmad_sim_fabric *fab,
				struct sim_port *port,
				enum sim_port_state state,
				struct kmad_device *kdev)
{
	unsigned long flags;

	lockdep_assert_held(&fab->devices_mutex);
	spin_lock_irqsave(&fab->lock, flags);
	port->state = state;
	port->kdev = kdev;
	spin_unlock_irqrestore(&fab->lock, flags);
}

static void sim_port_remove(struct kmad_sim_fabric *fab, struct sim_port *port)
{
	struct kmad_device *kdev = port->kdev;
	struct sim_dev *sdev;

	lockdep_assert_held(&fab->devices_mutex);
	if (port->state != SIM_PORT_LIVE)
		return;
	sim_port_set_device(fab, port, SIM_PORT_REMOVING, kdev);
	sdev = kmad_device_priv(kdev);
	WRITE_ONCE(sdev->teardown, true);
	sim_port_release_events(fab, port);
	kmad_device_unregister(kdev);
	sim_port_set_device(fab, port, SIM_PORT_ABSENT, NULL);
	kmad_device_free(kdev);
}

static int sim_port_add(struct kmad_sim_fabric *fab, unsigned int index)
{
	struct sim_port *port = &fab->ports[index];
	const struct kmad_port_attr attr = {
		.lid = port->lid,
		.sm_lid = SIM_SM_LID,
		.sq_depth = fab->cfg.sq_depth,
		.rq_depth = fab->cfg.rq_depth,
	};
	struct kmad_device *kdev;
	struct sim_dev *sdev;
	int ret;

	lockdep_assert_held(&fab->devices_mutex);
	kdev = kmad_device_alloc(fab->ops, port->name, 1, sizeof(*sdev));
	if (IS_ERR_OR_NULL(kdev))
		return kdev ? PTR_ERR(kdev) : -ENOMEM;
	sdev = kmad_device_priv(kdev);
	sdev->fab = fab;
	sdev->index = index;
	ret = kmad_device_set_port_attr(kdev, SIM_PORT_NUM, &attr);
	if (ret)
		goto err_free_device;

	sim_port_set_device(fab, port, SIM_PORT_LIVE, kdev);
	ret = kmad_device_register(kdev);
	if (ret)
		goto err_clear_port;
	return 0;

err_clear_port:
	sim_port_set_device(fab, port, SIM_PORT_ABSENT, NULL);
err_free_device:
	kmad_device_free(kdev);
	return ret;
}

static int sim_check_config(const struct kmad_sim_config *cfg)
{
	if (!cfg || cfg->topology != KMAD_SIM_TOPO_PAIR)
		return -EINVAL;
	if (cfg->mode != KMAD_SIM_ASYNC && cfg->mode != KMAD_SIM_STEP)
		return -EINVAL;
	if (cfg->notify != KMAD_SIM_NOTIFY_IBTA &&
	    cfg->notify != KMAD_SIM_NOTIFY_MISSED)
		return -EINVAL;
	return 0;
}

/* Name the ports and wire the links of the topology. */
static int sim_build_topology(struct kmad_sim_fabric *fab)
{
	struct sim_port *port;
	unsigned int i;
	int len;

	for (i = 0; i < fab->num_ports; i++) {
		port = &fab->ports[i];
		len = snprintf(port->name, sizeof(port->name), "%s%u",
			       fab->name, i);
		if (len >= sizeof(port->name))
			return -EINVAL;
		port->lid = i + 1;
		port->state = SIM_PORT_ABSENT;
	}
	/* KMAD_SIM_TOPO_PAIR: port 1 of device 0 <-> port 1 of device 1. */
	fab->ports[0].peer = 1;
	fab->ports[1].peer = 0;
	return 0;
}

/**
 * kmad_sim_create() - build a fabric and register its devices with kmad.
 * @cfg: what to build; copied (its name too).
 *
 * Devices are named "<cfg->name><i>" ("sim<i>" if the name is NULL); the
 * port of device i has LID i + 1 and the subnet manager at LID 1.
 *
 * Context: process context.
 * Return: the fabric, or an ERR_PTR(): -EINVAL for a bad configuration,
 * -ENOMEM, or what kmad returned when registering a device.
 */
struct kmad_sim_fabric *kmad_sim_create(const struct kmad_sim_config *cfg)
{
	struct kmad_sim_fabric *fab;
	const unsigned int num_ports = 2;
	unsigned int i;
	int ret;

	ret = sim_check_config(cfg);
	if (ret)
		return ERR_PTR(ret);
	fab = kzalloc(struct_size(fab, ports, num_ports), GFP_KERNEL);
	if (!fab)
		return ERR_PTR(-ENOMEM);
	fab->name = kstrdup(cfg->name ?: "sim", GFP_KERNEL);
	if (!fab->name) {
		ret = -ENOMEM;
		goto err_free_fabric;
	}
	fab->cfg = *cfg;
	fab->cfg.name = fab->name;
	fab->ops = cfg->mode == KMAD_SIM_STEP ? &kmad_sim_step_ops :
						&kmad_sim_async_ops;
	spin_lock_init(&fab->lock);
	mutex_init(&fab->devices_mutex);
	fab->clock = KMAD_SIM_CLOCK_START;
	prandom_seed_state(&fab->rnd, SIM_FAULT_SEED);
	init_waitqueue_head(&fab->wire_idle);
	fab->num_ports = num_ports;
	ret = sim_build_topology(fab);
	if (ret)
		goto err_free_name;
	fab->wq = alloc_workqueue("kmad_sim_%s", WQ_UNBOUND, 0, fab->name);
	if (!fab->wq) {
		ret = -ENOMEM;
		goto err_free_name;
	}

	mutex_lock(&fab->devices_mutex);
	for (i = 0; i < fab->num_ports; i++) {
		ret = sim_port_add(fab, i);
		if (ret)
			goto err_remove_ports;
	}
	mutex_unlock(&fab->devices_mutex);
	return fab;

err_remove_ports:
	while (i--)
		sim_port_remove(fab, &fab->ports[i]);
	mutex_unlock(&fab->devices_mutex);
	destroy_workqueue(fab->wq);
err_free_name:
	mutex_destroy(&fab->devices_mutex);
	kfree(fab->name);
err_free_fabric:
	kfree(fab);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_GPL(kmad_sim_create);

/**
 * kmad_sim_destroy() - unregister and free every device, then the fabric.
 * @fab: the fabric; NULL or an error pointer is ignored.
 *
 * kmad flushes whatever is outstanding while unregistering.
 *
 * Context: process context.
 */
void kmad_sim_destroy(struct kmad_sim_fabric *fab)
{
	unsigned int i;

	if (IS_ERR_OR_NULL(fab))
		return;
	mutex_lock(&fab->devices_mutex);
	for (i = fab->num_ports; i--; )
		sim_port_remove(fab, &fab->ports[i]);
	mutex_unlock(&fab->devices_mutex);
	destroy_workqueue(fab->wq);
	mutex_destroy(&fab->devices_mutex);
	kfree(fab->name);
	kfree(fab);
}
EXPORT_SYMBOL_GPL(kmad_sim_destroy);

/**
 * kmad_sim_num_devices() - how many devices the fabric was built with.
 * @fab: the fabric.
 *
 * Removed devices still count: indices do not change.
 *
 * Return: the number, or 0 for a NULL or error-pointer fabric.
 */
unsigned int kmad_sim_num_devices(const struct kmad_sim_fabric *fab)
{
	return IS_ERR_OR_NULL(fab) ? 0 : fab->num_ports;
}
EXPORT_SYMBOL_GPL(kmad_sim_num_devices);

/**
 * kmad_sim_device() - a device of the fabric.
 * @fab: the fabric.
 * @dev: device index.
 *
 * The pointer is valid until the device is removed or the fabric is
 * destroyed; the caller orders those.
 *
 * Return: the registered device, or NULL for a bad index or a device that
 * is being removed or is gone.
 */
struct kmad_device *kmad_sim_device(struct kmad_sim_fabric *fab,
				    unsigned int dev)
{
	struct kmad_device *kdev = NULL;
	unsigned long flags;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_ports)
		return NULL;
	spin_lock_irqsave(&fab->lock, flags);
	if (fab->ports[dev].state == SIM_PORT_LIVE)
		kdev = fab->ports[dev].kdev;
	spin_unlock_irqrestore(&fab->lock, flags);
	return kdev;
}
EXPORT_SYMBOL_GPL(kmad_sim_device);

/**
 * kmad_sim_remove_device() - unregister one device and free it while the
 * rest of the fabric keeps going.
 * @fab: the fabric.
 * @dev: device index; a bad index or a device already removed is ignored.
 *
 * From the start of the removal nothing reaches the device: MADs sent to
 * it count as dropped_no_route at the sender, and control functions
 * addressing it return -ENODEV.  Its counters stay readable.
 *
 * Context: process context.
 */
void kmad_sim_remove_device(struct kmad_sim_fabric *fab, unsigned int dev)
{
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_ports)
		return;
	mutex_lock(&fab->devices_mutex);
	sim_port_remove(fab, &fab->ports[dev]);
	mutex_unlock(&fab->devices_mutex);
}
EXPORT_SYMBOL_GPL(kmad_sim_remove_device);

/**
 * kmad_sim_set_faults() - set fault injection for every later
 * transmission.
 * @fab: the fabric.
 * @faults: the settings; percentages above 100 count as 100.
 *
 * Faults are drawn from a PRNG seeded when the fabric was created, so in
 * step mode the same calls give the same faults.
 *
 * Context: any.
 */
void kmad_sim_set_faults(struct kmad_sim_fabric *fab,
			 const struct kmad_sim_faults *faults)
{
	unsigned long flags;

	if (IS_ERR_OR_NULL(fab) || !faults)
		return;
	spin_lock_irqsave(&fab->lock, flags);
	fab->faults = *faults;
	fab->faults.drop_pct = min(faults->drop_pct, 100U);
	fab->faults.dup_pct = min(faults->dup_pct, 100U);
	fab->faults.corrupt_pct = min(faults->corrupt_pct, 100U);
	fab->faults.send_err_pct = min(faults->send_err_pct, 100U);
	spin_unlock_irqrestore(&fab->lock, flags);
}
EXPORT_SYMBOL_GPL(kmad_sim_set_faults);

/**
 * kmad_sim_get_stats() - read a port's counters.
 * @fab: the fabric.
 * @dev: device index; the counters of a removed device stay readable.
 * @stats: filled in; all zero for a bad fabric or index.
 *
 * Each counter is read atomically, the set is not a snapshot.
 *
 * Context: any.
 */
void kmad_sim_get_stats(struct kmad_sim_fabric *fab, unsigned int dev,
			struct kmad_sim_stats *stats)
{
	atomic64_t *c;

	if (!stats)
		return;
	memset(stats, 0, sizeof(*stats));
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_ports)
		return;
	c = fab->ports[dev].stats;
	stats->sent = atomic64_read(&c[SIM_STAT_SENT]);
	stats->delivered = atomic64_read(&c[SIM_STAT_DELIVERED]);
	stats->dropped_no_recv = atomic64_read(&c[SIM_STAT_DROPPED_NO_RECV]);
	stats->dropped_no_route = atomic64_read(&c[SIM_STAT_DROPPED_NO_ROUTE]);
	stats->dropped_fault = atomic64_read(&c[SIM_STAT_DROPPED_FAULT]);
	stats->duplicated = atomic64_read(&c[SIM_STAT_DUPLICATED]);
	stats->corrupted = atomic64_read(&c[SIM_STAT_CORRUPTED]);
	stats->send_errors = atomic64_read(&c[SIM_STAT_SEND_ERRORS]);
	stats->cq_events = atomic64_read(&c[SIM_STAT_CQ_EVENTS]);
	stats->dropped_bad_qkey = atomic64_read(&c[SIM_STAT_DROPPED_BAD_QKEY]);
	stats->recv_errors = atomic64_read(&c[SIM_STAT_RECV_ERRORS]);
	stats->cq_overflows = atomic64_read(&c[SIM_STAT_CQ_OVERFLOWS]);
}
EXPORT_SYMBOL_GPL(kmad_sim_get_stats);

/* Let kmad finish what it has queued on every live device. */
static void sim_flush_devices(struct kmad_sim_fabric *fab)
{
	unsigned int i;

	mutex_lock(&fab->devices_mutex);
	for (i = 0; i < fab->num_ports; i++) {
		if (fab->ports[i].state == SIM_PORT_LIVE)
			kmad_device_flush(fab->ports[i].kdev);
	}
	mutex_unlock(&fab->devices_mutex);
}

/**
 * kmad_sim_settle() - wait until nothing is in flight.
 * @fab: the fabric.
 *
 * Repeats rounds until one changes nothing: wait until no send is on a
 * wire (async mode only; in step mode sends wait for the caller), flush
 * the fabric's workqueue (transmissions, event and fatal-event
 * deliveries), then kmad_device_flush() every device.  Gives up with an
 * error message after %SIM_SETTLE_MAX_ROUNDS rounds, or if the wires do
 * not empty within %SIM_SETTLE_WIRE_TIMEOUT_MS in one round.
 *
 * Context: process context; may sleep.
 */
void kmad_sim_settle(struct kmad_sim_fabric *fab)
{
	bool async;
	int before;
	unsigned int round;

	if (IS_ERR_OR_NULL(fab))
		return;
	async = fab->cfg.mode == KMAD_SIM_ASYNC;
	for (round = 0; round < SIM_SETTLE_MAX_ROUNDS; round++) {
		before = atomic_read(&fab->progress);
		if (async &&
		    !wait_event_timeout(fab->wire_idle,
					!atomic_read(&fab->wire_sends),
					msecs_to_jiffies(SIM_SETTLE_WIRE_TIMEOUT_MS))) {
			pr_err("%s: settle: %d sends still on the wire after %u ms\n",
			       fab->name, atomic_read(&fab->wire_sends),
			       SIM_SETTLE_WIRE_TIMEOUT_MS);
			return;
		}
		flush_workqueue(fab->wq);
		sim_flush_devices(fab);
		if (atomic_read(&fab->progress) == before &&
		    (!async || !atomic_read(&fab->wire_sends)))
			return;
	}
	pr_err("%s: settle: still busy after %u rounds\n", fab->name,
	       SIM_SETTLE_MAX_ROUNDS);
}
EXPORT_SYMBOL_GPL(kmad_sim_settle);
