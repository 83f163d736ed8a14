// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_sim: addresses.  GID and P_Key tables (provider ops query_gid,
 * query_pkey), address handles (create_ah, destroy_ah, with the fabric's
 * ah option) and their step controls.
 *
 * GIDs.  Entry i of a port's GID table is its GidPrefix (PortInfo,
 * fe80::/64 unless the SM set another) followed by entry i of its
 * GUIDInfo: entry 0, the port GUID, is always there; the others are empty
 * (-EAGAIN) until an SM sets them.  %SIM_GUIDS entries.  P_Keys are the
 * P_KeyTable, %SIM_PKEYS entries.
 *
 * Address handles.  A handle holds nothing but a reference count: one for
 * its creation, dropped by destroy_ah(), one per send on a wire that uses
 * it, dropped when the send's CQE is made.  A destroy_ah() while a send
 * still uses it is counted as destroyed_busy (kmad must never do it); the
 * memory stays until the send is done with it.  With %KMAD_SIM_AH_HOLD,
 * create_ah() waits on the fabric's held list until kmad_sim_complete_ah()
 * or the device's removal decides its result.
 *
 * Locks: F for the tables and the held list; the counters are atomic.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "fabric.h"
#include "fw.h"
#include "hw.h"

enum sim_ah_stat {
	SIM_AH_CREATED,
	SIM_AH_FAILED,
	SIM_AH_DESTROYED,
	SIM_AH_DESTROYED_BUSY,
};

/**
 * kmad_sim_port_gid_locked() - entry @index of a port's GID table.
 * @port: the port.
 * @index: the entry.
 * @gid: filled in.
 *
 * Context: F held.
 * Return: 0, -EINVAL past the table, -EAGAIN for an empty entry.
 */
int kmad_sim_port_gid_locked(struct sim_port *port, unsigned int index,
			     union kmad_gid *gid)
{
	lockdep_assert_held(&port->node->fab->lock);
	if (index >= SIM_GUIDS)
		return -EINVAL;
	if (!port->guids[index])
		return -EAGAIN;
	gid->global.subnet_prefix = cpu_to_be64(port->pi.gid_prefix);
	gid->global.interface_id = cpu_to_be64(port->guids[index]);
	return 0;
}

/**
 * kmad_sim_find_gid() - the HCA port whose GID table holds @gid.
 * @fab: the fabric.
 * @gid: the GID.
 *
 * Context: any; takes F.
 * Return: the port, or NULL.
 */
struct sim_port *kmad_sim_find_gid(struct kmad_sim_fabric *fab,
				   const union kmad_gid *gid)
{
	struct sim_port *found = NULL;
	union kmad_gid cur;
	unsigned long flags;
	unsigned int n, i;
	u8 p;

	spin_lock_irqsave(&fab->lock, flags);
	for (n = 0; n < fab->num_hcas && !found; n++) {
		for (p = 1; p <= fab->nodes[n]->num_ports && !found; p++) {
			for (i = 0; i < SIM_GUIDS; i++) {
				if (kmad_sim_port_gid_locked(&fab->nodes[n]->ports[p],
							     i, &cur) ||
				    memcmp(&cur, gid, sizeof(cur)))
					continue;
				found = &fab->nodes[n]->ports[p];
				break;
			}
		}
	}
	spin_unlock_irqrestore(&fab->lock, flags);
	return found;
}

static struct sim_port *sim_kdev_port(struct kmad_device *kdev, u8 port_num)
{
	struct sim_dev *sdev = kmad_device_priv(kdev);

	if (!port_num || port_num > sdev->node->num_ports)
		return NULL;
	return &sdev->node->ports[port_num];
}

int kmad_sim_query_gid(struct kmad_device *kdev, u8 port_num,
		       unsigned int index, union kmad_gid *gid)
{
	struct sim_port *port = sim_kdev_port(kdev, port_num);
	unsigned long flags;
	int ret;

	if (!port)
		return -EINVAL;
	if (atomic_read(&port->node->hold_queries)) {
		/* kmad_sim_hold_queries(): wait, busy (any context) */
		atomic_inc(&port->node->queries_waiting);
		while (atomic_read(&port->node->hold_queries))
			cpu_relax();
		atomic_dec(&port->node->queries_waiting);
	}
	spin_lock_irqsave(&port->node->fab->lock, flags);
	ret = kmad_sim_port_gid_locked(port, index, gid);
	spin_unlock_irqrestore(&port->node->fab->lock, flags);
	return ret;
}

int kmad_sim_query_pkey(struct kmad_device *kdev, u8 port_num,
			unsigned int index, u16 *pkey)
{
	struct sim_port *port = sim_kdev_port(kdev, port_num);
	unsigned long flags;

	if (!port || index >= SIM_PKEYS)
		return -EINVAL;
	spin_lock_irqsave(&port->node->fab->lock, flags);
	*pkey = port->pkeys[index];
	spin_unlock_irqrestore(&port->node->fab->lock, flags);
	return 0;
}

/**
 * kmad_sim_query_smp() - the provider's query_smp: an HCA port's own SMA
 * answers a SubnGet from its driver, without the M_Key check.
 * @kdev: the device.
 * @port_num: the port.
 * @smp: the SubnGet (kmad checked it is one); its data is filled in.
 *
 * Context: any but hard interrupt; takes F.
 * Return: the MAD status, or -EINVAL for no such port.
 */
int kmad_sim_query_smp(struct kmad_device *kdev, u8 port_num,
		       struct kmad_smp *smp)
{
	struct sim_port *port = sim_kdev_port(kdev, port_num);

	if (!port)
		return -EINVAL;
	return kmad_sim_sma(port, smp, NULL);
}

static void sim_ah_count(struct sim_dev *sdev, enum sim_ah_stat stat)
{
	atomic64_inc(&sdev->fab->ah_stats[sdev->node->index][stat]);
}

static void sim_ah_release(struct kref *ref)
{
	kfree(container_of(ref, struct sim_ah, ref));
}

/* Drop a reference: a send's, or the creation's. */
void kmad_sim_ah_put(struct sim_ah *ah)
{
	kref_put(&ah->ref, sim_ah_release);
}

/* %KMAD_SIM_AH_HOLD: wait for the test's verdict on this creation. */
static int sim_ah_hold(struct sim_dev *sdev)
{
	struct kmad_sim_fabric *fab = sdev->fab;
	struct sim_ah_req req = { .node = sdev->node };
	unsigned long flags;
	int err;

	init_completion(&req.done);
	spin_lock_irqsave(&fab->lock, flags);
	if (READ_ONCE(sdev->teardown)) {
		spin_unlock_irqrestore(&fab->lock, flags);
		return -ENODEV;
	}
	list_add_tail(&req.entry, &fab->ah_held);
	spin_unlock_irqrestore(&fab->lock, flags);
	sim_progress(fab);

	wait_for_completion(&req.done);
	spin_lock_irqsave(&fab->lock, flags);
	err = req.err;
	spin_unlock_irqrestore(&fab->lock, flags);
	return err;
}

int kmad_sim_create_ah(struct kmad_device *kdev, u8 port_num,
		       const struct kmad_ah_attr *attr, void **ah)
{
	struct sim_dev *sdev = kmad_device_priv(kdev);
	struct sim_ah *sah;
	int ret = 0;

	might_sleep();
	if (!sim_kdev_port(kdev, port_num) || !attr || !ah)
		return -EINVAL;
	if (sdev->fab->cfg.ah == KMAD_SIM_AH_HOLD)
		ret = sim_ah_hold(sdev);
	sah = ret ? NULL : kzalloc(sizeof(*sah), GFP_KERNEL);
	if (!ret && !sah)
		ret = -ENOMEM;
	if (ret) {
		sim_ah_count(sdev, SIM_AH_FAILED);
		return ret;
	}
	kref_init(&sah->ref);
	sah->sdev = sdev;
	*ah = sah;
	sim_ah_count(sdev, SIM_AH_CREATED);
	return 0;
}

void kmad_sim_destroy_ah(struct kmad_device *kdev, u8 port_num, void *ah)
{
	struct sim_ah *sah = ah;

	might_sleep();
	if (!sah)
		return;
	WRITE_ONCE(sah->dead, true);
	sim_ah_count(sah->sdev, SIM_AH_DESTROYED);
	if (kref_read(&sah->ref) > 1) {
		sim_ah_count(sah->sdev, SIM_AH_DESTROYED_BUSY);
		pr_err("%s: destroy_ah() of a handle a send on the wire uses\n",
		       sah->sdev->node->name);
	}
	kmad_sim_ah_put(sah);
}

/* Fail the held creations of @node (it is being removed) with -ENODEV. */
void kmad_sim_ah_release_held(struct kmad_sim_fabric *fab,
			      struct sim_node *node)
{
	struct sim_ah_req *req, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&fab->lock, flags);
	list_for_each_entry_safe(req, tmp, &fab->ah_held, entry) {
		if (req->node != node)
			continue;
		list_del_init(&req->entry);
		req->err = -ENODEV;
		complete(&req->done);
	}
	spin_unlock_irqrestore(&fab->lock, flags);
}

/**
 * kmad_sim_ah_pending() - how many create_ah() calls of a device the
 * fabric holds (%KMAD_SIM_AH_HOLD).
 * @fab: the fabric.
 * @dev: device index.
 *
 * Context: any.
 * Return: the count (0 for bad arguments).
 */
unsigned int kmad_sim_ah_pending(struct kmad_sim_fabric *fab,
				 unsigned int dev)
{
	struct sim_ah_req *req;
	unsigned long flags;
	unsigned int n = 0;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		return 0;
	spin_lock_irqsave(&fab->lock, flags);
	list_for_each_entry(req, &fab->ah_held, entry)
		n += req->node == fab->nodes[dev];
	spin_unlock_irqrestore(&fab->lock, flags);
	return n;
}
EXPORT_SYMBOL_GPL(kmad_sim_ah_pending);

/**
 * kmad_sim_complete_ah() - end a held create_ah() of a device.
 * @fab: the fabric.
 * @dev: device index.
 * @n: which of its held calls, 0 for the oldest.
 * @err: 0 to create the handle, or the (negative) error to return.
 *
 * The call returns to kmad, which then goes on by itself (kmad's address
 * handle work, not a CQ step): a test waits for what it expects.
 *
 * Context: any.
 * Return: 0, -EINVAL for bad arguments, -ENOENT if fewer are held.
 */
int kmad_sim_complete_ah(struct kmad_sim_fabric *fab, unsigned int dev,
			 unsigned int n, int err)
{
	struct sim_ah_req *req, *found = NULL;
	unsigned long flags;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas || err > 0)
		return -EINVAL;
	spin_lock_irqsave(&fab->lock, flags);
	list_for_each_entry(req, &fab->ah_held, entry) {
		if (req->node != fab->nodes[dev])
			continue;
		if (!n--) {
			found = req;
			break;
		}
	}
	if (found) {
		list_del_init(&found->entry);
		found->err = err;
		complete(&found->done);
	}
	spin_unlock_irqrestore(&fab->lock, flags);
	if (found)
		sim_progress(fab);
	return found ? 0 : -ENOENT;
}
EXPORT_SYMBOL_GPL(kmad_sim_complete_ah);

/**
 * kmad_sim_get_ah_stats() - a device's address handle counters.
 * @fab: the fabric.
 * @dev: device index.
 * @stats: filled in; zero for bad arguments.
 *
 * Context: any.
 */
void kmad_sim_get_ah_stats(struct kmad_sim_fabric *fab, unsigned int dev,
			   struct kmad_sim_ah_stats *stats)
{
	atomic64_t *c;

	if (!stats)
		return;
	memset(stats, 0, sizeof(*stats));
	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas)
		return;
	c = fab->ah_stats[dev];
	stats->created = atomic64_read(&c[SIM_AH_CREATED]);
	stats->failed = atomic64_read(&c[SIM_AH_FAILED]);
	stats->destroyed = atomic64_read(&c[SIM_AH_DESTROYED]);
	stats->destroyed_busy = atomic64_read(&c[SIM_AH_DESTROYED_BUSY]);
}
EXPORT_SYMBOL_GPL(kmad_sim_get_ah_stats);

/**
 * kmad_sim_port_gid() - entry @index of an HCA port's GID table.
 * @fab: the fabric.
 * @dev: device index.
 * @port: port number.
 * @index: the entry.
 * @gid: filled in.
 *
 * Context: any.
 * Return: 0, -EINVAL for bad arguments or past the table, -EAGAIN for an
 * empty entry.
 */
int kmad_sim_port_gid(struct kmad_sim_fabric *fab, unsigned int dev, u8 port,
		      unsigned int index, union kmad_gid *gid)
{
	struct sim_port *p;
	unsigned long flags;
	int ret;

	if (IS_ERR_OR_NULL(fab) || dev >= fab->num_hcas || !gid)
		return -EINVAL;
	p = kmad_sim_port(fab, dev, port);
	if (!p)
		return -EINVAL;
	spin_lock_irqsave(&fab->lock, flags);
	ret = kmad_sim_port_gid_locked(p, index, gid);
	spin_unlock_irqrestore(&fab->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_sim_port_gid);
