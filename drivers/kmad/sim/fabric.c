// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: fabrics.  Creation and destruction, HCAs and their devices,
 * QP lookup, fault injection, the virtual clock, counters and settling.
 * The topologies, LIDs and links are in topo.c, the carrying of MADs in
 * route.c, the firmware in sma.c and pma.c.
 *
 * Locks: F (&kmad_sim_fabric.lock) and M (&kmad_sim_fabric.devices_mutex),
 * described in fabric.h with every field they guard.
 *
 * Removing a device.  With M held: mark the HCA REMOVING (F), so nothing
 * finds it any more; set its teardown flag and release step-mode pending
 * events, so kmad's teardown never waits for a step; unregister it from
 * kmad, which destroys its QPs and CQs (destroy_qp waits for whoever still
 * holds a QP); mark the HCA ABSENT and free the device.  Its ports and
 * cables stay: MADs still reach them and are dropped there.
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
 * kmad_sim_port() - a port by node index and port number.
 * @fab: the fabric.
 * @node: node index.
 * @port: port number: 1 to the node's number of ports, or 0 for a
 *	switch's management port.
 *
 * Return: the port, or NULL if the fabric has no such port.
 */
struct sim_port *kmad_sim_port(struct kmad_sim_fabric *fab, unsigned int node,
			       u8 port)
{
	struct sim_node *n;

	if (IS_ERR_OR_NULL(fab) || node >= fab->num_nodes)
		return NULL;
	n = fab->nodes[node];
	if (port > n->num_ports || (!port && !sim_is_switch(n)))
		return NULL;
	return &n->ports[port];
}

/**
 * kmad_sim_port_lid_of() - the current LID of an endport.
 * @port: an HCA port, or a switch's port 0.
 *
 * Context: any; takes F.
 * Return: the LID (it changes with PortInfo Sets).
 */
u16 kmad_sim_port_lid_of(struct sim_port *port)
{
	struct kmad_sim_fabric *fab = port->node->fab;
	unsigned long flags;
	u16 lid;

	spin_lock_irqsave(&fab->lock, flags);
	lid = port->pi.lid;
	spin_unlock_irqrestore(&fab->lock, flags);
	return lid;
}

/**
 * kmad_sim_qp_get() - find a QP by address and take a reference.
 * @fab: the fabric.
 * @dev: device (HCA) index.
 * @qpn: 0 or 1 for port 1, or KMAD_SIM_QP(port, 0 or 1).
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
	u32 port_num = (qpn >> 16) + 1;
	struct sim_qp *qp = NULL;
	struct sim_node *node;
	unsigned long flags;

	qpn &= 0xffff;
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas ||
	    qpn >= SIM_NUM_QPS)
		return ERR_PTR(-EINVAL);
	node = fab->nodes[dev];
	if (port_num > node->num_ports)
		return ERR_PTR(-EINVAL);
	spin_lock_irqsave(&fab->lock, flags);
	if (node->state == SIM_DEV_LIVE)
		qp = node->ports[port_num].qps[qpn];
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
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&fab->lock, flags);
	if (qp->port->qps[qp->qpn])
		ret = -EBUSY;
	else
		qp->port->qps[qp->qpn] = qp;
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
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	qp->port->qps[qp->qpn] = NULL;
	spin_unlock_irqrestore(&fab->lock, flags);
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
	u64 us;

	spin_lock_irqsave(&fab->lock, flags);
	us = (u64)fab->cfg.latency_us + fab->faults.delay_us;
	spin_unlock_irqrestore(&fab->lock, flags);
	/* Two huge settings add up to the longest delay, not to a wrap. */
	return usecs_to_jiffies(min_t(u64, us, UINT_MAX));
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
static void sim_node_release_events(struct kmad_sim_fabric *fab,
				    struct sim_node *node)
{
	struct sim_qp *qps[SIM_NUM_QPS];
	unsigned long flags;
	unsigned int i;
	u8 p;

	for (p = 1; p <= node->num_ports; p++) {
		spin_lock_irqsave(&fab->lock, flags);
		for (i = 0; i < SIM_NUM_QPS; i++) {
			qps[i] = node->ports[p].qps[i];
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
}

static void sim_node_set_device(struct kmad_sim_fabric *fab,
				struct sim_node *node,
				enum sim_dev_state state,
				struct kmad_device *kdev)
{
	unsigned long flags;

	lockdep_assert_held(&fab->devices_mutex);
	spin_lock_irqsave(&fab->lock, flags);
	node->state = state;
	node->kdev = kdev;
	spin_unlock_irqrestore(&fab->lock, flags);
}

static bool sim_node_clock_idle(struct kmad_sim_fabric *fab,
				struct sim_node *node)
{
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&fab->lock, flags);
	idle = !node->clock_users;
	spin_unlock_irqrestore(&fab->lock, flags);
	return idle;
}

/*
 * Before a node's device goes (no longer live): a clock advance that
 * found it live is done with it first.
 */
static void sim_node_clock_wait(struct kmad_sim_fabric *fab,
				struct sim_node *node)
{
	wait_event(fab->clock_idle, sim_node_clock_idle(fab, node));
}

static void sim_node_remove(struct kmad_sim_fabric *fab, struct sim_node *node)
{
	struct kmad_device *kdev = node->kdev;
	struct sim_dev *sdev;

	lockdep_assert_held(&fab->devices_mutex);
	if (node->state != SIM_DEV_LIVE)
		return;
	sim_node_set_device(fab, node, SIM_DEV_REMOVING, kdev);
	sim_node_clock_wait(fab, node);
	sdev = kmad_device_priv(kdev);
	WRITE_ONCE(sdev->teardown, true);
	sim_node_release_events(fab, node);
	/* kmad's teardown waits for its address handle work. */
	kmad_sim_ah_release_held(fab, node);
	kmad_device_unregister(kdev);
	sim_node_set_device(fab, node, SIM_DEV_ABSENT, NULL);
	kmad_device_free(kdev);
}

/**
 * kmad_sim_pinfo_attr() - the LID, LMC and SM LID of @pi, as kmad has them.
 * @pi: a port's PortInfo (read under F).
 * @attr: its lid, lmc and sm_lid are set; nothing else.
 */
void kmad_sim_pinfo_attr(const struct sim_pinfo *pi,
			 struct kmad_port_attr *attr)
{
	attr->lid = pi->lid;
	attr->lmc = pi->lmc;
	attr->sm_lid = pi->sm_lid;
}

/**
 * kmad_sim_report_port_locked() - tell kmad if an HCA port's LID, LMC or
 * SM LID is no longer what it was, as an HCA driver reports a port event.
 * @port: a port.
 * @was: what kmad was last told.
 *
 * Context: F held.
 */
void kmad_sim_report_port_locked(struct sim_port *port,
				 const struct kmad_port_attr *was)
{
	struct sim_node *node = port->node;
	struct kmad_port_attr now;

	lockdep_assert_held(&node->fab->lock);
	kmad_sim_pinfo_attr(&port->pi, &now);
	if (sim_is_switch(node) || node->state != SIM_DEV_LIVE ||
	    (now.lid == was->lid && now.lmc == was->lmc &&
	     now.sm_lid == was->sm_lid))
		return;
	kmad_device_port_changed(node->kdev, port->num, &now);
}

static int sim_node_add(struct kmad_sim_fabric *fab, struct sim_node *node)
{
	struct kmad_port_attr attr[SIM_HCA_MAX_PORTS + 1] = {};
	struct kmad_device *kdev;
	struct sim_dev *sdev;
	unsigned long flags;
	int ret;
	u8 p;

	lockdep_assert_held(&fab->devices_mutex);
	if (WARN_ON_ONCE(node->num_ports > SIM_HCA_MAX_PORTS))
		return -EINVAL;
	kdev = kmad_device_alloc(fab->ops, node->name, node->num_ports,
				 sizeof(*sdev));
	if (IS_ERR_OR_NULL(kdev))
		return kdev ? PTR_ERR(kdev) : -ENOMEM;
	sdev = kmad_device_priv(kdev);
	sdev->fab = fab;
	sdev->node = node;
	for (p = 1; p <= node->num_ports; p++) {
		attr[p].sq_depth = fab->cfg.sq_depth;
		attr[p].rq_depth = fab->cfg.rq_depth;
		attr[p].link_layer = fab->cfg.link_layer;
		attr[p].no_smi = sim_eth(fab);
		attr[p].gid_tbl_len = SIM_GUIDS;
		attr[p].pkey_tbl_len = SIM_PKEYS;
		spin_lock_irqsave(&fab->lock, flags);
		kmad_sim_pinfo_attr(&node->ports[p].pi, &attr[p]);
		spin_unlock_irqrestore(&fab->lock, flags);
		ret = kmad_device_set_port_attr(kdev, p, &attr[p]);
		if (ret)
			goto err_free_device;
	}

	sim_node_set_device(fab, node, SIM_DEV_LIVE, kdev);
	ret = kmad_device_register(kdev);
	if (ret)
		goto err_clear_node;
	/* What kmad was told at registration (@attr) may be older than
	 * PortInfo now: a Set while it ran was reported as it came, so
	 * this only repeats it (kmad then calls port_changed once more).
	 */
	for (p = 1; p <= node->num_ports; p++) {
		spin_lock_irqsave(&fab->lock, flags);
		kmad_sim_report_port_locked(&node->ports[p], &attr[p]);
		spin_unlock_irqrestore(&fab->lock, flags);
	}
	return 0;

err_clear_node:
	sim_node_set_device(fab, node, SIM_DEV_ABSENT, NULL);
	sim_node_clock_wait(fab, node);
err_free_device:
	kmad_device_free(kdev);
	return ret;
}

/* Check @cfg and copy it to @out with the defaults filled in. */
static int sim_check_config(const struct kmad_sim_config *cfg,
			    struct kmad_sim_config *out)
{
	if (!cfg)
		return -EINVAL;
	if (cfg->mode != KMAD_SIM_ASYNC && cfg->mode != KMAD_SIM_STEP)
		return -EINVAL;
	if (cfg->notify != KMAD_SIM_NOTIFY_IBTA &&
	    cfg->notify != KMAD_SIM_NOTIFY_MISSED)
		return -EINVAL;
	if (cfg->sq_depth > KMAD_MAX_QP_DEPTH ||
	    cfg->rq_depth > KMAD_MAX_QP_DEPTH ||
	    cfg->cq_depth > 2 * KMAD_MAX_QP_DEPTH)
		return -EINVAL;
	if ((cfg->link_layer != KMAD_LINK_LAYER_INFINIBAND &&
	     cfg->link_layer != KMAD_LINK_LAYER_ETHERNET) ||
	    (cfg->ah != KMAD_SIM_AH_NONE && cfg->ah != KMAD_SIM_AH_AUTO &&
	     cfg->ah != KMAD_SIM_AH_HOLD))
		return -EINVAL;
	*out = *cfg;
	if (out->topology == KMAD_SIM_TOPO_PAIR)
		out->hcas = 2;
	else if (!out->hcas)
		out->hcas = KMAD_SIM_DEFAULT_HCAS;
	if (!out->leaves)
		out->leaves = KMAD_SIM_DEFAULT_LEAVES;
	if (!out->spines)
		out->spines = KMAD_SIM_DEFAULT_SPINES;
	if (!out->hca_ports)
		out->hca_ports = 1;
	if (out->hca_ports > SIM_HCA_MAX_PORTS)
		return -EINVAL;
	if (out->topology == KMAD_SIM_TOPO_FATTREE)
		return kmad_sim_fattree_check(out);
	if (out->hcas > KMAD_SIM_MAX_HCAS ||
	    (out->topology == KMAD_SIM_TOPO_TREE &&
	     out->leaves > KMAD_SIM_MAX_LEAVES))
		return -EINVAL;
	return 0;
}

static void sim_fabric_free(struct kmad_sim_fabric *fab)
{
	kmad_sim_topo_free(fab);
	kfree(fab->ah_stats);
	mutex_destroy(&fab->devices_mutex);
	kfree(fab->name);
	kfree(fab);
}

/**
 * kmad_sim_create() - build a fabric and register its HCAs with kmad.
 * @cfg: what to build; copied (its name too).
 *
 * HCAs are named "<cfg->name><i>" ("sim<i>" if the name is NULL), switches
 * "<cfg->name>sw<j>".  LIDs, cabling and forwarding tables follow the plan
 * in Documentation/simulated-fabric.rst: in a pair, the port of HCA i has
 * LID i + 1; every port's master SM LID is 1.
 *
 * Context: process context.
 * Return: the fabric, or an ERR_PTR(): -EINVAL for a bad configuration,
 * -ENOMEM, or what kmad returned when registering a device.
 */
struct kmad_sim_fabric *kmad_sim_create(const struct kmad_sim_config *cfg)
{
	unsigned int num_hcas, num_switches, i;
	struct kmad_sim_config conf;
	struct kmad_sim_fabric *fab;
	int ret;

	ret = sim_check_config(cfg, &conf);
	if (ret)
		return ERR_PTR(ret);
	ret = kmad_sim_topo_size(&conf, &num_hcas, &num_switches);
	if (ret)
		return ERR_PTR(ret);
	fab = kzalloc(struct_size(fab, nodes, num_hcas + num_switches),
		      GFP_KERNEL);
	if (!fab)
		return ERR_PTR(-ENOMEM);
	mutex_init(&fab->devices_mutex);
	fab->name = kstrdup(conf.name ?: "sim", GFP_KERNEL);
	if (!fab->name) {
		ret = -ENOMEM;
		goto err_free_fabric;
	}
	fab->cfg = conf;
	fab->cfg.name = fab->name;
	fab->ops_buf = conf.mode == KMAD_SIM_STEP ? kmad_sim_step_ops :
						    kmad_sim_async_ops;
	if (conf.ah != KMAD_SIM_AH_NONE) {
		fab->ops_buf.create_ah = kmad_sim_create_ah;
		fab->ops_buf.destroy_ah = kmad_sim_destroy_ah;
	}
	if (conf.bridge_add) {
		fab->ops_buf.bridge_add = kmad_sim_bridge_add;
		fab->ops_buf.bridge_del = kmad_sim_bridge_del;
	}
	if (conf.minimal_ops) {
		fab->ops_buf.query_gid = NULL;
		fab->ops_buf.query_pkey = NULL;
		fab->ops_buf.modify_port_cap = NULL;
		fab->ops_buf.query_smp = NULL;
	}
	fab->ops = &fab->ops_buf;
	INIT_LIST_HEAD(&fab->ah_held);
	fab->ah_stats = kcalloc(num_hcas, sizeof(*fab->ah_stats), GFP_KERNEL);
	if (!fab->ah_stats) {
		ret = -ENOMEM;
		goto err_free_fabric;
	}
	spin_lock_init(&fab->lock);
	fab->clock = KMAD_SIM_CLOCK_START;
	prandom_seed_state(&fab->rnd, SIM_FAULT_SEED);
	init_waitqueue_head(&fab->wire_idle);
	init_waitqueue_head(&fab->clock_idle);
	fab->num_hcas = num_hcas;
	fab->num_nodes = num_hcas + num_switches;
	ret = kmad_sim_topo_build(fab);
	if (ret)
		goto err_free_fabric;
	fab->wq = alloc_workqueue("kmad_sim_%s", WQ_UNBOUND, 0, fab->name);
	if (!fab->wq) {
		ret = -ENOMEM;
		goto err_free_fabric;
	}

	mutex_lock(&fab->devices_mutex);
	for (i = 0; i < fab->num_hcas; i++) {
		ret = sim_node_add(fab, fab->nodes[i]);
		if (ret)
			goto err_remove_nodes;
	}
	mutex_unlock(&fab->devices_mutex);
	kmad_sim_netlist_add(fab);
	return fab;

err_remove_nodes:
	while (i--)
		sim_node_remove(fab, fab->nodes[i]);
	mutex_unlock(&fab->devices_mutex);
	destroy_workqueue(fab->wq);
err_free_fabric:
	sim_fabric_free(fab);
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
	kmad_sim_netlist_remove(fab);
	mutex_lock(&fab->devices_mutex);
	for (i = fab->num_hcas; i--; )
		sim_node_remove(fab, fab->nodes[i]);
	mutex_unlock(&fab->devices_mutex);
	destroy_workqueue(fab->wq);
	sim_fabric_free(fab);
}
EXPORT_SYMBOL_GPL(kmad_sim_destroy);

/**
 * kmad_sim_num_devices() - how many devices (HCAs) the fabric was built
 * with.
 * @fab: the fabric.
 *
 * Removed devices still count: indices do not change.
 *
 * Return: the number, or 0 for a NULL or error-pointer fabric.
 */
unsigned int kmad_sim_num_devices(const struct kmad_sim_fabric *fab)
{
	return IS_ERR_OR_NULL(fab) ? 0 : fab->num_hcas;
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

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		return NULL;
	spin_lock_irqsave(&fab->lock, flags);
	if (fab->nodes[dev]->state == SIM_DEV_LIVE)
		kdev = fab->nodes[dev]->kdev;
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
 * it count as dropped_no_route at the sender (its firmware is gone too),
 * and control functions addressing it return -ENODEV.  Its counters stay
 * readable.
 *
 * Context: process context.
 */
void kmad_sim_remove_device(struct kmad_sim_fabric *fab, unsigned int dev)
{
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		return;
	mutex_lock(&fab->devices_mutex);
	sim_node_remove(fab, fab->nodes[dev]);
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
 * Return: 0; -EINVAL for a NULL or error-pointer @fab or a NULL @faults,
 * which changes nothing.
 */
int kmad_sim_set_faults(struct kmad_sim_fabric *fab,
			const struct kmad_sim_faults *faults)
{
	unsigned long flags;

	if (IS_ERR_OR_NULL(fab) || !faults)
		return -EINVAL;
	spin_lock_irqsave(&fab->lock, flags);
	fab->faults = *faults;
	fab->faults.drop_pct = min(faults->drop_pct, 100U);
	fab->faults.dup_pct = min(faults->dup_pct, 100U);
	fab->faults.corrupt_pct = min(faults->corrupt_pct, 100U);
	fab->faults.send_err_pct = min(faults->send_err_pct, 100U);
	spin_unlock_irqrestore(&fab->lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_sim_set_faults);

static void sim_stats_read(struct sim_port *port,
			   struct kmad_sim_stats *stats)
{
	atomic64_t *c = port->stats;

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
	stats->dropped_bad_pkey = atomic64_read(&c[SIM_STAT_DROPPED_BAD_PKEY]);
	stats->recv_errors = atomic64_read(&c[SIM_STAT_RECV_ERRORS]);
	stats->cq_overflows = atomic64_read(&c[SIM_STAT_CQ_OVERFLOWS]);
	stats->dropped_link = atomic64_read(&c[SIM_STAT_DROPPED_LINK]);
	stats->dropped_smi = atomic64_read(&c[SIM_STAT_DROPPED_SMI]);
	stats->fw_answered = atomic64_read(&c[SIM_STAT_FW_ANSWERED]);
}

/**
 * kmad_sim_get_stats() - read the counters of a device's port 1.
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
	if (!stats)
		return;
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		memset(stats, 0, sizeof(*stats));
	else
		kmad_sim_get_port_stats(fab, dev, 1, stats);
}
EXPORT_SYMBOL_GPL(kmad_sim_get_stats);

/**
 * kmad_sim_get_port_stats() - read the counters of any port.
 * @fab: the fabric.
 * @node: node index (an HCA's is its device index).
 * @port: port number; a switch's firmware counts on port 0.
 * @stats: filled in; all zero for a bad fabric, node or port.
 *
 * Each counter is read atomically, the set is not a snapshot.
 *
 * Context: any.
 */
void kmad_sim_get_port_stats(struct kmad_sim_fabric *fab, unsigned int node,
			     u8 port, struct kmad_sim_stats *stats)
{
	struct sim_port *p;

	if (!stats)
		return;
	memset(stats, 0, sizeof(*stats));
	p = kmad_sim_port(fab, node, port);
	if (p)
		sim_stats_read(p, stats);
}
EXPORT_SYMBOL_GPL(kmad_sim_get_port_stats);

/*
 * Let kmad finish what it has queued: its workqueues are shared, but each
 * port has its own address handle work, so every live device is flushed.
 */
static void sim_flush_devices(struct kmad_sim_fabric *fab)
{
	unsigned int i;

	mutex_lock(&fab->devices_mutex);
	for (i = 0; i < fab->num_hcas; i++)
		if (fab->nodes[i]->state == SIM_DEV_LIVE)
			kmad_device_flush(fab->nodes[i]->kdev);
	mutex_unlock(&fab->devices_mutex);
}

/**
 * kmad_sim_settle() - wait until nothing is in flight.
 * @fab: the fabric.
 *
 * Repeats rounds until one changes nothing: wait until no send is on a
 * wire (async mode only; in step mode sends wait for the caller), flush
 * the fabric's workqueue (transmissions, event and fatal-event
 * deliveries), then kmad's work (kmad_device_flush()).  Gives up with an
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
