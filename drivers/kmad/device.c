// SPDX-License-Identifier: GPL-2.0
/*
 * kmad devices, ports and clients.
 *
 * A provider allocates a device, describes its ports and registers it;
 * kmad creates each port's QP0 and QP1, then tells every client about the
 * new ports.  Unregistering reverses that: the port is marked dying (no new
 * agents), its QPs are flushed (every send the hardware held completes as
 * flushed), clients' remove callbacks unregister their agents, agents still
 * left are flushed, and the QPs are destroyed.
 */

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/string.h>

#include "kmad_priv.h"

/* G: registered devices and clients. */
static DEFINE_MUTEX(kmad_devices_lock);
/*
 * Writers of kmad_devices hold G and this; kmad_port_get() holds only this,
 * so a ULP handler may look up ports while G is held by a device removal
 * that waits for the handler.
 */
static DEFINE_SPINLOCK(kmad_devices_spin);
static LIST_HEAD(kmad_devices);		/* G + kmad_devices_spin */
/*
 * Devices being unregistered while their ports stop, which
 * kmad_device_unregister() does without G (a provider may hold a QP's
 * flush for long, and every other device and client would wait): their
 * names stay taken, and kmad_unregister_client() waits, without G, for
 * those its client has records on.  Same locks as kmad_devices.
 */
static LIST_HEAD(kmad_devices_leaving);
/*
 * Registered clients.  Writers hold G and kmad_clients_lock, so that a
 * handler's kmad_register_client(), which cannot take G, can tell a
 * registered client under the spinlock alone.
 */
static LIST_HEAD(kmad_clients);		/* G + kmad_clients_lock */
/*
 * Clients registered from a ULP handler, whose add calls are deferred to
 * kmad_event_wq: the handler cannot take G (a removal holding G may be
 * waiting for it).  A client is on one list at most: the check and the
 * move are made in one hold of kmad_clients_lock.
 */
static DEFINE_SPINLOCK(kmad_clients_lock);
static LIST_HEAD(kmad_clients_pending);	/* kmad_clients_lock */
static void clients_pending_work(struct work_struct *work);
static DECLARE_WORK(kmad_clients_pending_work, clients_pending_work);

/* A client's data for one port, on kmad_port.client_data. */
struct kmad_client_data {
	struct kmad_client *client;	/* G */
	void *data;			/* G */
	struct list_head entry;		/* G */
};

/*
 * The provider ops a call may reach after the port's QPs are torn down
 * (the clock, query_gid, query_pkey, modify_port_cap: a ULP's call with
 * only a port reference, a post racing the device's removal, a timer)
 * run inside this SRCU, after a check of &kmad_device.gone.
 * kmad_device_unregister() sets gone, then waits for the readers: so when
 * it returns none of these ops runs or will run, and the provider may
 * free what they use (its ops with it).  SRCU, not RCU: modify_port_cap
 * sleeps; and with no reader, as at almost every removal, its grace
 * period is short.
 */
DEFINE_STATIC_SRCU(kmad_provider_srcu);

/*
 * The port's clock, which deadlines are measured in: the provider's, if it
 * has one, else jiffies.  False once the device is gone: after
 * kmad_device_unregister() has returned the provider (and its module) may
 * be gone, so its ops are not touched, and which clock it had is unknown.
 */
bool kmad_port_clock(struct kmad_port *port, u64 *now)
{
	struct kmad_device *dev = port->dev;
	bool alive;
	int idx;

	if (!dev->has_clock) {
		if (READ_ONCE(dev->gone))
			return false;
		*now = get_jiffies_64();
		return true;
	}
	idx = srcu_read_lock(&kmad_provider_srcu);
	alive = !READ_ONCE(dev->gone);
	if (alive)
		*now = dev->ops->now(dev);
	srcu_read_unlock(&kmad_provider_srcu, idx);
	return alive;
}

/* The port's clock, or jiffies once the device is gone. */
u64 kmad_now(struct kmad_port *port)
{
	u64 now;

	return kmad_port_clock(port, &now) ? now : get_jiffies_64();
}

void kmad_port_stat_inc(struct kmad_port *port, enum kmad_port_stat s)
{
	atomic64_inc(&port->stats[s]);
}

void kmad_port_stat_add(struct kmad_port *port, enum kmad_port_stat s,
			unsigned int n)
{
	atomic64_add(n, &port->stats[s]);
}

static bool ops_complete(const struct kmad_provider_ops *ops)
{
	return ops && ops->create_cq && ops->destroy_cq && ops->create_qp &&
	       ops->destroy_qp && ops->modify_qp && ops->post_send &&
	       ops->post_recv && ops->poll_cq && ops->req_notify_cq &&
	       !ops->create_ah == !ops->destroy_ah &&
	       !ops->bridge_add == !ops->bridge_del;
}

/*
 * The task running a client's add, remove or port_changed callback, which
 * it does holding G (NULL: none).  Callbacks are serialized by G, so one
 * pointer covers them; a client call from one would wait for G forever.
 */
static struct task_struct *kmad_client_cb_task;

static bool in_client_callback(void)
{
	return READ_ONCE(kmad_client_cb_task) == current;
}

static void client_cb_enter(void)
{
	lockdep_assert_held(&kmad_devices_lock);
	WRITE_ONCE(kmad_client_cb_task, current);
}

static void client_cb_exit(void)
{
	WRITE_ONCE(kmad_client_cb_task, NULL);
}

/*
 * Tell the clients of @port that its LID, LMC or SM LID changed.  G
 * serializes it with clients' add and remove.  It runs on kmad_event_wq,
 * not kmad_wq: kmad flushes kmad_wq work (CQ drains) with G held, which
 * must never wait for this.
 */
static void port_change_work(struct work_struct *work)
{
	struct kmad_port *port = container_of(work, struct kmad_port,
					      change_work);
	struct kmad_client_data *cd;

	mutex_lock(&kmad_devices_lock);
	if (port->dev->registered) {
		list_for_each_entry(cd, &port->client_data, entry) {
			if (!cd->client->port_changed)
				continue;
			client_cb_enter();
			cd->client->port_changed(cd->client, port, cd->data);
			client_cb_exit();
		}
	}
	mutex_unlock(&kmad_devices_lock);
	kmad_work_ended();
}

/**
 * kmad_device_alloc() - allocate a device for a provider.
 * @ops: the provider's operations; all but @ops->now, @ops->query_gid,
 *	@ops->query_pkey, @ops->modify_port_cap, @ops->query_smp and the
 *	pairs @ops->create_ah, @ops->destroy_ah and @ops->bridge_add,
 *	@ops->bridge_del are required (a pair: both or neither).
 * @name: unique device name (at most 31 characters).
 * @num_ports: number of ports, 1-255.
 * @priv_size: bytes of provider data, see kmad_device_priv().
 *
 * Return: the device (free it with kmad_device_free()), or NULL for bad
 * arguments or no memory.
 */
struct kmad_device *kmad_device_alloc(const struct kmad_provider_ops *ops,
				      const char *name, u8 num_ports,
				      size_t priv_size)
{
	struct kmad_device *dev;
	size_t size, total;
	int i;

	if (!ops_complete(ops) || !name || !*name ||
	    strlen(name) >= KMAD_NAME_LEN || !num_ports)
		return NULL;
	size = struct_size(dev, ports, num_ports);
	/* A @priv_size that wraps the sum would get a small device. */
	if (check_add_overflow(size, priv_size, &total))
		return NULL;
	dev = kzalloc(total, GFP_KERNEL);
	if (!dev)
		return NULL;
	strscpy(dev->name, name, sizeof(dev->name));
	dev->ops = ops;
	dev->bridges = !!ops->bridge_add;
	dev->has_gids = !!ops->query_gid;
	dev->has_pkeys = !!ops->query_pkey;
	dev->has_clock = !!ops->now;
	dev->num_ports = num_ports;
	dev->priv = priv_size ? (char *)dev + size : NULL;
	kref_init(&dev->ref);
	INIT_LIST_HEAD(&dev->list);
	init_completion(&dev->left);
	for (i = 0; i < num_ports; i++) {
		struct kmad_port *port = &dev->ports[i];

		port->dev = dev;
		port->port_num = i + 1;
		mutex_init(&port->reg_mutex);
		spin_lock_init(&port->attr_lock);
		port->change_dead = true;	/* until registered */
		INIT_WORK(&port->change_work, port_change_work);
		INIT_LIST_HEAD(&port->agents);
		INIT_LIST_HEAD(&port->client_data);
		port->qpi[KMAD_QPT_SMI].port = port;
		port->qpi[KMAD_QPT_SMI].qpt = KMAD_QPT_SMI;
		port->qpi[KMAD_QPT_GSI].port = port;
		port->qpi[KMAD_QPT_GSI].qpt = KMAD_QPT_GSI;
		kmad_ah_cache_init(port);
	}
	return dev;
}
EXPORT_SYMBOL_GPL(kmad_device_alloc);

/**
 * kmad_device_priv() - the provider's data area of @dev.
 * @dev: the device.
 *
 * Return: the @priv_size bytes given to kmad_device_alloc(), or NULL.
 */
void *kmad_device_priv(struct kmad_device *dev)
{
	return dev->priv;
}
EXPORT_SYMBOL_GPL(kmad_device_priv);

/**
 * kmad_device_name() - the device's name.
 * @dev: the device.
 *
 * Return: the name given to kmad_device_alloc().
 */
const char *kmad_device_name(const struct kmad_device *dev)
{
	return dev->name;
}
EXPORT_SYMBOL_GPL(kmad_device_name);

/*
 * Port changes are taken from kmad_device_register()'s first provider
 * call (the provider's event handler may run while the ports are set up:
 * the values are kept, and the clients registration adds see them,
 * without a port_changed call of their own) until the device is
 * unregistered.
 */
static bool device_takes_changes(const struct kmad_device *dev)
{
	if (READ_ONCE(dev->registering))
		return true;
	/* Pairs with kmad_device_register()'s smp_wmb(): a registration
	 * seen over is seen registered.
	 */
	smp_rmb();
	return READ_ONCE(dev->registered);
}

/**
 * kmad_device_set_port_attr() - describe a port before registration.
 * @dev: the device, not yet registered.
 * @port_num: 1..num_ports.
 * @attr: the attributes.
 *
 * Return: 0, or -EINVAL for a bad port number, an LMC above 7, a queue
 * depth above %KMAD_MAX_QP_DEPTH, a P_Key table of no entry from a
 * provider with query_pkey, or a device registered or registering (from
 * then on changes go through kmad_device_port_changed()).
 */
int kmad_device_set_port_attr(struct kmad_device *dev, u8 port_num,
			      const struct kmad_port_attr *attr)
{
	struct kmad_port_attr *a;

	if (!dev || !attr || !port_num || port_num > dev->num_ports ||
	    device_takes_changes(dev) || attr->lmc > KMAD_MAX_LMC ||
	    attr->sq_depth > KMAD_MAX_QP_DEPTH ||
	    attr->rq_depth > KMAD_MAX_QP_DEPTH ||
	    (dev->has_pkeys && !attr->pkey_tbl_len) ||
	    (attr->link_layer != KMAD_LINK_LAYER_INFINIBAND &&
	     attr->link_layer != KMAD_LINK_LAYER_ETHERNET))
		return -EINVAL;
	a = &dev->ports[port_num - 1].attr;
	*a = *attr;
	/* RoCE has no QP0, and LIDs mean nothing there. */
	if (a->link_layer == KMAD_LINK_LAYER_ETHERNET) {
		a->no_smi = true;
		a->lid = 0;
		a->lmc = 0;
		a->sm_lid = 0;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_device_set_port_attr);

/* Free the records client_data_alloc() made that were not used. */
static void client_data_free(struct list_head *cds)
{
	struct kmad_client_data *cd, *tmp;

	list_for_each_entry_safe(cd, tmp, cds, entry)
		kfree(cd);
	INIT_LIST_HEAD(cds);
}

/* Context: G held.  How many clients are registered. */
static unsigned int clients_count(void)
{
	struct kmad_client *client;
	unsigned int n = 0;

	lockdep_assert_held(&kmad_devices_lock);
	list_for_each_entry(client, &kmad_clients, list)
		n++;
	return n;
}

/*
 * Allocate @n records of a client's port, onto @cds: made before any add
 * callback runs, so that telling a client of a port cannot fail halfway
 * through a registration for want of memory.  Return: 0 or -ENOMEM (none
 * left on @cds).
 */
static int client_data_alloc(struct list_head *cds, unsigned int n, gfp_t gfp)
{
	struct kmad_client_data *cd;

	while (n--) {
		cd = kzalloc(sizeof(*cd), gfp);
		if (!cd) {
			client_data_free(cds);
			return -ENOMEM;
		}
		list_add(&cd->entry, cds);
	}
	return 0;
}

/*
 * Context: G held.  Tell @client about @port, with a record taken from
 * @cds (client_data_alloc()).
 */
static void client_add_port(struct kmad_client *client,
			    struct kmad_port *port, struct list_head *cds)
{
	struct kmad_client_data *cd;

	lockdep_assert_held(&kmad_devices_lock);
	cd = list_first_entry_or_null(cds, struct kmad_client_data, entry);
	if (WARN_ON_ONCE(!cd))
		return;
	list_del(&cd->entry);
	cd->client = client;
	if (client->add) {
		int ret;

		client_cb_enter();
		ret = client->add(client, port, &cd->data);
		client_cb_exit();
		if (ret) {
			kfree(cd);
			return;
		}
	}
	list_add_tail(&cd->entry, &port->client_data);
}

/* Context: G held.  Tell @client (or every client, if NULL) @port goes. */
static void client_remove_port(struct kmad_client *client,
			       struct kmad_port *port)
{
	struct kmad_client_data *cd, *tmp;

	lockdep_assert_held(&kmad_devices_lock);
	list_for_each_entry_safe_reverse(cd, tmp, &port->client_data, entry) {
		if (client && cd->client != client)
			continue;
		list_del(&cd->entry);
		if (cd->client->remove) {
			client_cb_enter();
			cd->client->remove(cd->client, port, cd->data);
			client_cb_exit();
		}
		kfree(cd);
	}
}

/*
 * Mark @port dying (no new agents or posts) and flush both QPs: every send
 * the provider held completes as flushed.
 */
static void port_stop(struct kmad_port *port)
{
	mutex_lock(&port->reg_mutex);
	WRITE_ONCE(port->dying, true);
	mutex_unlock(&port->reg_mutex);
	if (kmad_port_has_smi(port))
		kmad_qp_stop(&port->qpi[KMAD_QPT_SMI]);
	kmad_qp_stop(&port->qpi[KMAD_QPT_GSI]);
}

/* Allow (@dead false) or stop port_changed work for @port. */
static void port_change_set_dead(struct kmad_port *port, bool dead)
{
	unsigned long flags;

	spin_lock_irqsave(&port->attr_lock, flags);
	port->change_dead = dead;
	spin_unlock_irqrestore(&port->attr_lock, flags);
}

/*
 * After port_stop(): unregister kmad's responders, flush agents still
 * registered, destroy the QPs.  A send queued on a stopped QP meanwhile
 * (a retry) is taken back by the agent flush: sends are queued and taken
 * back under their agent's lock.
 */
static void port_teardown(struct kmad_port *port)
{
	kmad_port_responder_destroy(port);
	kmad_port_flush_agents(port);
	/* The QPs are stopped: no send holds or waits for a handle. */
	kmad_ah_cache_teardown(port);
	if (kmad_port_has_smi(port))
		kmad_qp_destroy(&port->qpi[KMAD_QPT_SMI]);
	kmad_qp_destroy(&port->qpi[KMAD_QPT_GSI]);
}

static int port_setup(struct kmad_port *port)
{
	bool smi = kmad_port_has_smi(port);
	int ret;

	port->dying = false;
	if (smi) {
		ret = kmad_qp_create(&port->qpi[KMAD_QPT_SMI]);
		if (ret)
			return ret;
	}
	ret = kmad_qp_create(&port->qpi[KMAD_QPT_GSI]);
	if (ret)
		goto err_smi;
	ret = kmad_port_responder_create(port);
	if (ret)
		goto err_gsi;
	return 0;

err_gsi:
	kmad_qp_stop(&port->qpi[KMAD_QPT_GSI]);
	kmad_ah_cache_teardown(port);
	kmad_qp_destroy(&port->qpi[KMAD_QPT_GSI]);
err_smi:
	if (smi) {
		kmad_qp_stop(&port->qpi[KMAD_QPT_SMI]);
		kmad_qp_destroy(&port->qpi[KMAD_QPT_SMI]);
	}
	return ret;
}

static struct kmad_device *device_find(struct list_head *devices,
				       const char *name)
{
	struct kmad_device *dev;

	lockdep_assert(lockdep_is_held(&kmad_devices_lock) ||
		       lockdep_is_held(&kmad_devices_spin));
	list_for_each_entry(dev, devices, list)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

/**
 * kmad_device_register() - make a device's ports usable.
 * @dev: the device, with its port attributes set.
 *
 * Creates each port's QP0 and QP1 (and their CQs) through the provider,
 * posts receive buffers, and calls every client's add callback for each
 * port.
 *
 * A device registers once: after a failed kmad_device_register() or a
 * kmad_device_unregister() (which tear its ports down) the provider frees
 * it with kmad_device_free() and allocates another.
 *
 * Context: process context, may sleep.
 * Return: 0; -EEXIST if a device of that name is registered, or is being
 * unregistered and its clients not yet told; -EINVAL if
 * @dev is registered, or was torn down before, or has query_pkey and a
 * port whose P_Key table has no entry (one never described by
 * kmad_device_set_port_attr(), which refuses that); -ENOMEM; or the
 * provider's error.
 */
int kmad_device_register(struct kmad_device *dev)
{
	struct kmad_client *client;
	LIST_HEAD(cds);
	int i, ret;

	if (!dev)
		return -EINVAL;
	mutex_lock(&kmad_devices_lock);
	if (dev->registered || dev->spent) {
		ret = -EINVAL;
		goto out_unlock;
	}
	for (i = 0; i < dev->num_ports; i++) {
		if (dev->has_pkeys && !dev->ports[i].attr.pkey_tbl_len) {
			ret = -EINVAL;
			goto out_unlock;
		}
	}
	/* A name stays taken until its leaving device's clients have been
	 * told: clients (kmad_umad's sysfs entries) know devices by name.
	 */
	if (device_find(&kmad_devices, dev->name) ||
	    device_find(&kmad_devices_leaving, dev->name)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	ret = client_data_alloc(&cds, clients_count() * dev->num_ports,
				GFP_KERNEL);
	if (ret)
		goto out_unlock;
	/* From here the provider may report port changes (its event
	 * handler runs while the ports are set up); clients added below
	 * read the new values.
	 */
	WRITE_ONCE(dev->registering, true);
	for (i = 0; i < dev->num_ports; i++) {
		ret = port_setup(&dev->ports[i]);
		if (ret)
			goto err_ports;
	}
	WRITE_ONCE(dev->registered, true);
	smp_wmb();	/* device_takes_changes() */
	WRITE_ONCE(dev->registering, false);
	/* Only now can change work be queued: the error path above never
	 * has any to cancel (it holds G, which that work takes).
	 */
	for (i = 0; i < dev->num_ports; i++)
		port_change_set_dead(&dev->ports[i], false);
	spin_lock(&kmad_devices_spin);
	list_add_tail(&dev->list, &kmad_devices);
	spin_unlock(&kmad_devices_spin);
	kmad_debugfs_device_add(dev);
	list_for_each_entry(client, &kmad_clients, list)
		for (i = 0; i < dev->num_ports; i++)
			client_add_port(client, &dev->ports[i], &cds);
	client_data_free(&cds);
	mutex_unlock(&kmad_devices_lock);
	return 0;

err_ports:
	/* The failed port_setup() tore its port's AH cache down too. */
	WRITE_ONCE(dev->registering, false);
	dev->spent = true;
	while (--i >= 0) {
		port_stop(&dev->ports[i]);
		port_teardown(&dev->ports[i]);
	}
	client_data_free(&cds);
out_unlock:
	mutex_unlock(&kmad_devices_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_device_register);

/**
 * kmad_device_unregister() - take a device's ports away.
 * @dev: a registered device.
 *
 * Every send on its ports ends with a callback (flushed, unless it ended
 * otherwise), clients' remove callbacks run, and after it returns kmad
 * calls none of the provider's ops for @dev: it waits for a call in
 * progress (a ULP's kmad_port_query_gid(), a post that reads the port's
 * GID table) to return.  Agents ULPs have not unregistered yet stay
 * valid, flushed, until they do.
 *
 * Context: process context, may sleep.
 */
void kmad_device_unregister(struct kmad_device *dev)
{
	int i;

	if (!dev)
		return;
	mutex_lock(&kmad_devices_lock);
	if (!dev->registered) {
		bool leaving = dev->leaving;

		mutex_unlock(&kmad_devices_lock);
		/* Another unregister of it runs: returns with it. */
		if (leaving)
			wait_for_completion(&dev->left);
		return;
	}
	WRITE_ONCE(dev->registered, false);
	dev->spent = true;
	dev->leaving = true;
	/* No lookup finds it from here on and no client registered from
	 * now on is told of it; its name stays taken until its clients
	 * have been told it went (as before 2026-12-03, when all this held
	 * G).
	 */
	spin_lock(&kmad_devices_spin);
	list_move_tail(&dev->list, &kmad_devices_leaving);
	spin_unlock(&kmad_devices_spin);
	/* Waits for readers of the files, whose show functions never take
	 * G.
	 */
	kmad_debugfs_device_remove(dev);
	mutex_unlock(&kmad_devices_lock);

	/* Flush the hardware first, so that agents the clients unregister
	 * below need not wait for it.  Without G: a provider that holds a
	 * flush (a failing move to the error state, sends it never gives
	 * back) keeps this removal waiting, and the unregister of a client
	 * that has its ports (kmad_unregister_client() waits for this
	 * without G), not every other device's and client's registration.
	 */
	for (i = 0; i < dev->num_ports; i++)
		port_stop(&dev->ports[i]);

	mutex_lock(&kmad_devices_lock);
	for (i = 0; i < dev->num_ports; i++)
		client_remove_port(NULL, &dev->ports[i]);
	spin_lock(&kmad_devices_spin);
	list_del_init(&dev->list);
	spin_unlock(&kmad_devices_spin);
	mutex_unlock(&kmad_devices_lock);

	for (i = 0; i < dev->num_ports; i++) {
		/* Outside G, which the change work takes.  A work queued
		 * before this finds the device unregistered and calls no one.
		 */
		port_change_set_dead(&dev->ports[i], true);
		cancel_work_sync(&dev->ports[i].change_work);
		port_teardown(&dev->ports[i]);
	}
	/*
	 * From here on kmad does not call the provider for @dev: a call
	 * that saw gone false ends before synchronize_srcu() returns.
	 */
	WRITE_ONCE(dev->gone, true);
	synchronize_srcu(&kmad_provider_srcu);
	complete_all(&dev->left);
}
EXPORT_SYMBOL_GPL(kmad_device_unregister);

/**
 * kmad_device_free() - drop the provider's reference to a device.
 * @dev: an unregistered (or never registered) device; NULL is ignored.
 *
 * The memory goes when the last port reference and agent are gone too.
 */
void kmad_device_free(struct kmad_device *dev)
{
	if (dev)
		kmad_device_put(dev);
}
EXPORT_SYMBOL_GPL(kmad_device_free);

/**
 * kmad_device_clock_changed() - the provider's clock moved forward.
 * @dev: a device whose provider implements &kmad_provider_ops.now.
 *
 * Every agent on the device re-examines its deadlines from kmad's
 * workqueue.
 */
void kmad_device_clock_changed(struct kmad_device *dev)
{
	int i;

	for (i = 0; i < dev->num_ports; i++)
		kmad_port_agents_kick(&dev->ports[i]);
}
EXPORT_SYMBOL_GPL(kmad_device_clock_changed);

/**
 * kmad_device_flush() - wait for kmad's pending work.
 * @dev: the device.
 *
 * Waits for work queued before the call and for the work that work queues
 * in turn (a drain that ends sends kicks their agents' work; a handler
 * may cancel another agent's send; a client's port_changed call may
 * cancel or post), so that a step-mode test sees every consequence of its
 * last step.  kmad's workqueues are shared by every device, but the
 * address handle work is per port: this waits for @dev's ports' only
 * (never for a creation the provider holds).  A provider with several
 * devices flushes each (kmad_sim_settle() does).
 *
 * It flushes in rounds until one in which none of kmad's work items ran,
 * at most %KMAD_FLUSH_MAX_ROUNDS: work that keeps queueing more (traffic
 * that never stops, on any device) is not waited for to its end.
 *
 * Context: process context, not from kmad's handlers or client callbacks.
 */
void kmad_device_flush(struct kmad_device *dev)
{
	int i, round, ends;

	/* Clients' calls (kmad_event_wq) may cancel or post sends, which
	 * queues agent work or a drain.  Address handle work may end sends
	 * (kmad_wq), whose completions may free handles (the AH work
	 * again).  A drain (kmad_wq) queues agent work (kmad_agent_wq),
	 * whose handlers may post (a drain), cancel (agent work) or
	 * register clients (kmad_event_wq).  A round flushes each in turn;
	 * a work item that returned during it may have queued more, on a
	 * queue the round had flushed already, so one more round.  A
	 * round in which none returned found every queue empty, since
	 * flushing waits for everything queued before it.
	 */
	for (round = 0; round < KMAD_FLUSH_MAX_ROUNDS; round++) {
		ends = atomic_read(&kmad_work_ends);
		flush_workqueue(kmad_event_wq);
		for (i = 0; i < dev->num_ports; i++)
			kmad_ah_cache_flush_work(&dev->ports[i]);
		flush_workqueue(kmad_wq);
		flush_workqueue(kmad_agent_wq);
		if (atomic_read(&kmad_work_ends) == ends)
			return;
	}
	pr_debug("kmad: %s: flush: work still queued after %d rounds\n",
		 dev->name, KMAD_FLUSH_MAX_ROUNDS);
}
EXPORT_SYMBOL_GPL(kmad_device_flush);

/*
 * Context: kmad_clients_lock held.  Is @client on @list; on either list
 * (client_known()): registered, or waiting for its add calls (registered
 * from a handler)?
 */
static bool client_on(const struct list_head *list,
		      const struct kmad_client *client)
{
	const struct kmad_client *c;

	lockdep_assert_held(&kmad_clients_lock);
	list_for_each_entry(c, list, list)
		if (c == client)
			return true;
	return false;
}

static bool client_known(const struct kmad_client *client)
{
	return client_on(&kmad_clients, client) ||
	       client_on(&kmad_clients_pending, client);
}

/* Is the caller a ULP handler (which runs from its agent's work)? */
static bool in_agent_handler(void)
{
	struct work_struct *work = current_work();

	return work && work->func == kmad_agent_work;
}

/*
 * Context: G held.  Add @client to the registered clients and tell it of
 * every registered port.  @pending: it is on the pending list (registered
 * from a handler), and moves from there.
 * Return: 0; -EBUSY if it is known already (not @pending); -ENOMEM with
 * @client not added (@gfp without __GFP_NOFAIL).
 */
static int client_add_all(struct kmad_client *client, gfp_t gfp,
			  bool pending)
{
	struct kmad_device *dev;
	unsigned int ports = 0;
	LIST_HEAD(cds);
	int i;

	lockdep_assert_held(&kmad_devices_lock);
	list_for_each_entry(dev, &kmad_devices, list)
		ports += dev->num_ports;
	if (client_data_alloc(&cds, ports, gfp))
		return -ENOMEM;
	spin_lock(&kmad_clients_lock);
	if (!pending && client_known(client)) {
		spin_unlock(&kmad_clients_lock);
		client_data_free(&cds);
		return -EBUSY;
	}
	if (pending)
		list_move_tail(&client->list, &kmad_clients);
	else
		list_add_tail(&client->list, &kmad_clients);
	spin_unlock(&kmad_clients_lock);
	list_for_each_entry(dev, &kmad_devices, list)
		for (i = 0; i < dev->num_ports; i++)
			client_add_port(client, &dev->ports[i], &cds);
	client_data_free(&cds);
	return 0;
}

/* kmad_event_wq: register the clients handlers asked for. */
static void clients_pending_work(struct work_struct *work)
{
	struct kmad_client *client;

	/* With G held the pending list only grows (an unregister takes G
	 * first): the first client stays first until moved.
	 */
	mutex_lock(&kmad_devices_lock);
	for (;;) {
		spin_lock(&kmad_clients_lock);
		client = list_first_entry_or_null(&kmad_clients_pending,
						  struct kmad_client, list);
		spin_unlock(&kmad_clients_lock);
		if (!client)
			break;
		/* Its kmad_register_client() returned 0 long ago: the
		 * records, a few dozen bytes a port, must come.
		 */
		client_add_all(client, GFP_KERNEL | __GFP_NOFAIL, true);
	}
	mutex_unlock(&kmad_devices_lock);
	kmad_work_ended();
}

/**
 * kmad_register_client() - register a ULP for port add/remove callbacks.
 * @client: the client, with @add and/or @remove set.
 *
 * @add runs at once for every port already registered; called from a ULP
 * handler (send_handler or recv_handler), it returns at once and the add
 * calls run soon after from kmad's event workqueue (a handler must not
 * wait for client callbacks: a device removal may be waiting for it).
 *
 * Context: process context, may sleep; not from a client callback.
 * Return: 0; -EINVAL for NULL; -EBUSY if @client is registered already;
 * -EDEADLK from a client's callback (they run under the lock this
 * takes); -ENOMEM (no callback ran, the client is not registered).
 */
int kmad_register_client(struct kmad_client *client)
{
	int ret;

	if (!client)
		return -EINVAL;
	if (in_client_callback())
		return -EDEADLK;
	if (in_agent_handler()) {
		spin_lock(&kmad_clients_lock);
		ret = client_known(client) ? -EBUSY : 0;
		if (!ret)
			list_add_tail(&client->list, &kmad_clients_pending);
		spin_unlock(&kmad_clients_lock);
		if (!ret)
			queue_work(kmad_event_wq, &kmad_clients_pending_work);
		return ret;
	}
	mutex_lock(&kmad_devices_lock);
	ret = client_add_all(client, GFP_KERNEL, false);
	mutex_unlock(&kmad_devices_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_register_client);

/* Context: G held.  A leaving device with records of @client, or NULL. */
static struct kmad_device *client_leaving_device(struct kmad_client *client)
{
	struct kmad_client_data *cd;
	struct kmad_device *dev;
	int i;

	lockdep_assert_held(&kmad_devices_lock);
	list_for_each_entry(dev, &kmad_devices_leaving, list)
		for (i = 0; i < dev->num_ports; i++)
			list_for_each_entry(cd, &dev->ports[i].client_data,
					    entry)
				if (cd->client == client)
					return dev;
	return NULL;
}

/**
 * kmad_unregister_client() - unregister a client.
 * @client: the client.
 *
 * @remove runs for every port the client accepted, before this returns:
 * for a port whose device is being unregistered, once that unregister
 * has stopped its ports (this waits for it, without kmad's lock).
 *
 * A client that is not registered (never was, its registration failed,
 * or it was unregistered already) is ignored.
 *
 * Context: process context, may sleep; not from an agent's handler (it
 * would wait under G for a device removal that may be waiting for that
 * handler: warned once, carried on); not from a client callback (it would
 * wait for G, which the callback's caller holds: warned once, ignored).
 */
void kmad_unregister_client(struct kmad_client *client)
{
	bool pending, registered;
	struct kmad_device *dev;
	int i;

	if (!client)
		return;
	if (WARN_ONCE(in_client_callback(),
		      "kmad: %s() from a client callback would deadlock; ignored\n",
		      __func__))
		return;
	WARN_ONCE(in_agent_handler(),
		  "kmad: %s() from an agent's handler may deadlock with a device removal\n",
		  __func__);
	mutex_lock(&kmad_devices_lock);
	/*
	 * A device whose ports are stopping tells the client of them once
	 * they have (its remove may unregister agents, which would wait for
	 * the provider): wait for it without G, as its unregister does.
	 * First: what follows holds G throughout, and no device starts
	 * leaving, nor is a client added to a leaving one, without G.
	 */
	while ((dev = client_leaving_device(client))) {
		kref_get(&dev->ref);
		mutex_unlock(&kmad_devices_lock);
		wait_for_completion(&dev->left);
		kmad_device_put(dev);
		mutex_lock(&kmad_devices_lock);
	}
	/* Registered from a handler and not added yet: just forget it (the
	 * pending work adds under G, so it cannot be halfway through).
	 */
	spin_lock(&kmad_clients_lock);
	pending = client_on(&kmad_clients_pending, client);
	if (pending)
		list_del(&client->list);
	registered = !pending && client_on(&kmad_clients, client);
	spin_unlock(&kmad_clients_lock);
	if (!registered) {
		mutex_unlock(&kmad_devices_lock);
		return;
	}
	list_for_each_entry(dev, &kmad_devices, list)
		for (i = 0; i < dev->num_ports; i++)
			client_remove_port(client, &dev->ports[i]);
	spin_lock(&kmad_clients_lock);
	list_del(&client->list);
	spin_unlock(&kmad_clients_lock);
	mutex_unlock(&kmad_devices_lock);
}
EXPORT_SYMBOL_GPL(kmad_unregister_client);

/**
 * kmad_port_get() - look up a port of a registered device.
 * @dev_name: the device's name.
 * @port_num: the port number.
 *
 * Return: the port with a reference (drop it with kmad_port_put()), or
 * NULL.
 */
struct kmad_port *kmad_port_get(const char *dev_name, u8 port_num)
{
	struct kmad_port *port = NULL;
	struct kmad_device *dev;

	if (!dev_name)
		return NULL;
	/* Not G: handlers may call this while a removal holding G waits
	 * for them.
	 */
	spin_lock(&kmad_devices_spin);
	dev = device_find(&kmad_devices, dev_name);
	if (dev && port_num >= 1 && port_num <= dev->num_ports) {
		port = &dev->ports[port_num - 1];
		kref_get(&dev->ref);
	}
	spin_unlock(&kmad_devices_spin);
	return port;
}
EXPORT_SYMBOL_GPL(kmad_port_get);

/**
 * kmad_port_put() - drop a reference from kmad_port_get().
 * @port: the port; NULL is ignored.
 */
void kmad_port_put(struct kmad_port *port)
{
	if (!IS_ERR_OR_NULL(port))
		kmad_device_put(port->dev);
}
EXPORT_SYMBOL_GPL(kmad_port_put);

/**
 * kmad_port_dev_name() - the name of a port's device.
 * @port: the port.
 *
 * Return: the device name.
 */
const char *kmad_port_dev_name(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return NULL;
	return port->dev->name;
}
EXPORT_SYMBOL_GPL(kmad_port_dev_name);

/**
 * kmad_port_num() - a port's number.
 * @port: the port.
 *
 * Return: 1..num_ports.
 */
u8 kmad_port_num(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return 0;
	return port->port_num;
}
EXPORT_SYMBOL_GPL(kmad_port_num);

/**
 * kmad_port_lid() - a port's LID.
 * @port: the port.
 *
 * Return: the port's base LID as its provider last reported it (0 while
 * the subnet manager has not assigned one).
 */
u16 kmad_port_lid(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return 0;
	return READ_ONCE(port->attr.lid);
}
EXPORT_SYMBOL_GPL(kmad_port_lid);

/**
 * kmad_port_lmc() - a port's LID mask control.
 * @port: the port.
 *
 * Return: the LMC as the provider last reported it: the port answers to
 * 2^LMC LIDs from kmad_port_lid().
 */
u8 kmad_port_lmc(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return 0;
	return READ_ONCE(port->attr.lmc);
}
EXPORT_SYMBOL_GPL(kmad_port_lmc);

/**
 * kmad_port_sm_lid() - the LID of the port's subnet manager.
 * @port: the port.
 *
 * Return: the SM LID as the provider last reported it (0: none known).
 */
u16 kmad_port_sm_lid(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return 0;
	return READ_ONCE(port->attr.sm_lid);
}
EXPORT_SYMBOL_GPL(kmad_port_sm_lid);

/**
 * kmad_port_reregisters() - how many times the subnet manager asked the
 * port's clients to register with it again.
 * @port: the port.
 *
 * Requests close together may be counted once (a provider may fold them).
 *
 * Return: the count since the port was added (0 for a bad port).
 */
u32 kmad_port_reregisters(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return 0;
	return READ_ONCE(port->reregisters);
}
EXPORT_SYMBOL_GPL(kmad_port_reregisters);

/**
 * kmad_device_port_reregister() - the subnet manager asked a port's
 * clients to register with it again.
 * @dev: a registered device.
 * @port_num: 1..num_ports.
 *
 * A PortInfo Set with ClientReregister (IBTA 14.4.11; ib_core's
 * IB_EVENT_CLIENT_REREGISTER): an SM that lost its state (a new SM, a
 * failover) asks the port's clients to subscribe to reports (InformInfo)
 * and join multicast groups again.  kmad counts it (kmad_port_reregisters())
 * and calls every client's port_changed callback afterwards, from a kmad
 * workqueue, as kmad_device_port_changed() does; requests close together
 * may be told in one call.  Same rules of use as kmad_device_port_changed()
 * (one while kmad_device_register() runs is counted; the clients it adds
 * register from scratch anyway).
 *
 * Context: any.
 * Return: 0, or -EINVAL for a bad port or a device neither registered nor
 * registering.
 */
int kmad_device_port_reregister(struct kmad_device *dev, u8 port_num)
{
	struct kmad_port *port;
	unsigned long flags;

	if (!dev || !port_num || port_num > dev->num_ports ||
	    !device_takes_changes(dev))
		return -EINVAL;
	port = &dev->ports[port_num - 1];
	spin_lock_irqsave(&port->attr_lock, flags);
	WRITE_ONCE(port->reregisters, port->reregisters + 1);
	if (!port->change_dead)
		queue_work(kmad_event_wq, &port->change_work);
	spin_unlock_irqrestore(&port->attr_lock, flags);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_device_port_reregister);

/**
 * kmad_device_port_changed() - a port's LID, LMC, SM LID, GIDs or P_Keys
 * changed.
 * @dev: a registered device.
 * @port_num: 1..num_ports.
 * @attr: the port's attributes now; only lid, lmc and sm_lid are read.
 *
 * kmad_port_lid() and kmad_port_sm_lid() return the new values as soon as
 * this returns (an Ethernet port's stay 0), and kmad forgets the port's
 * cached address handles: sends posted from now on get new ones.  The
 * port_changed callback of every client of the port
 * runs afterwards, from a kmad workqueue; changes reported close together
 * may be told in one call, so clients read the values they care about.
 * The provider calls it only between the start of kmad_device_register()
 * and the end of kmad_device_unregister() (the device must not be freed
 * meanwhile).  A change reported while kmad_device_register() runs is
 * kept: the clients it adds read the new values (and get no port_changed
 * call for it); before kmad_device_register() is called, or after a
 * failed one, it is refused.
 *
 * Context: any (an HCA driver may report from its event handler).
 * Return: 0, or -EINVAL for a bad port, an LMC above 7 or a device neither
 * registered nor registering.
 */
int kmad_device_port_changed(struct kmad_device *dev, u8 port_num,
			     const struct kmad_port_attr *attr)
{
	struct kmad_port *port;
	unsigned long flags;

	if (!dev || !attr || !port_num || port_num > dev->num_ports ||
	    !device_takes_changes(dev) || attr->lmc > KMAD_MAX_LMC)
		return -EINVAL;
	port = &dev->ports[port_num - 1];
	spin_lock_irqsave(&port->attr_lock, flags);
	/* An Ethernet port's LIDs stay 0. */
	if (port->attr.link_layer == KMAD_LINK_LAYER_INFINIBAND) {
		WRITE_ONCE(port->attr.lid, attr->lid);
		WRITE_ONCE(port->attr.lmc, attr->lmc);
		WRITE_ONCE(port->attr.sm_lid, attr->sm_lid);
	}
	if (!port->change_dead)
		queue_work(kmad_event_wq, &port->change_work);
	spin_unlock_irqrestore(&port->attr_lock, flags);
	/* Its GIDs or P_Keys may have changed too: new handles from now. */
	kmad_ah_cache_flush(port);
	return 0;
}

/**
 * kmad_port_link_layer() - what a port's link is.
 * @port: the port.
 *
 * Return: %KMAD_LINK_LAYER_INFINIBAND or %KMAD_LINK_LAYER_ETHERNET (RoCE:
 * every MAD carries a GRH, LIDs are 0, no QP0).
 */
enum kmad_link_layer kmad_port_link_layer(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return KMAD_LINK_LAYER_INFINIBAND;
	return port->attr.link_layer;
}
EXPORT_SYMBOL_GPL(kmad_port_link_layer);

/**
 * kmad_port_has_smi() - whether a port has QP0 (SMI agents, SMPs).
 * @port: the port.
 *
 * Return: false on an Ethernet port or one whose provider set no_smi;
 * registering an SMI agent there fails with -EOPNOTSUPP.
 */
bool kmad_port_has_smi(const struct kmad_port *port)
{
	if (IS_ERR_OR_NULL(port))
		return false;
	return port->attr.link_layer == KMAD_LINK_LAYER_INFINIBAND &&
	       !port->attr.no_smi;
}
EXPORT_SYMBOL_GPL(kmad_port_has_smi);

/**
 * kmad_port_qp_num() - the number of a port's QP0 or QP1 on the wire.
 * @port: the port.
 * @qpt: %KMAD_QPT_SMI or %KMAD_QPT_GSI.
 * @qpn: set to the number peers see as the source QP of kmad's sends on
 *	that QP, and must send to in order to reach kmad's own QP.
 *
 * 0 and 1 where kmad's QPs are the port's real QP0 and QP1 (kmad_sim).
 * Where another MAD layer owns those (kmad_ib: ib_mad), kmad's "QP1" is a
 * QP of its own and this is its number, what the provider set with
 * kmad_qp_set_hw_num(); requests sent to the real QP1 still reach kmad's
 * agents through the provider's bridge, if it has one.  The number may
 * change when the provider recreates the QP (device removal and
 * re-registration): it is a snapshot, not a reference.
 *
 * Context: any.
 * Return: 0; -EINVAL for a NULL @port or @qpn or another @qpt,
 * -EOPNOTSUPP for QP0 of a port without one (kmad_port_has_smi()),
 * -ENODEV once the port is going away.
 */
int kmad_port_qp_num(const struct kmad_port *port, enum kmad_qp_type qpt,
		     u32 *qpn)
{
	if (IS_ERR_OR_NULL(port) || !qpn ||
	    (qpt != KMAD_QPT_SMI && qpt != KMAD_QPT_GSI))
		return -EINVAL;
	if (qpt == KMAD_QPT_SMI && !kmad_port_has_smi(port))
		return -EOPNOTSUPP;
	if (READ_ONCE(port->dying))
		return -ENODEV;
	*qpn = kmad_qp_hw_num(&port->qpi[qpt].qp);
	return 0;
}
EXPORT_SYMBOL_GPL(kmad_port_qp_num);

/* Entries in the port's GID table kmad can read: none without query_gid. */
static u32 port_gid_tbl_len(const struct kmad_port *port)
{
	return port->dev->has_gids ? port->attr.gid_tbl_len : 0;
}

/**
 * kmad_port_query_gid() - read an entry of a port's GID table.
 * @port: the port.
 * @index: the entry.
 * @gid: filled in.
 *
 * Context: any but hard interrupt; does not sleep.
 * Return: 0; -EINVAL past the end of the table (every index, if the
 * provider has no GIDs); -EAGAIN for an empty entry; -ENODEV once the
 * device is gone.
 */
int kmad_port_query_gid(struct kmad_port *port, unsigned int index,
			union kmad_gid *gid)
{
	struct kmad_device *dev;
	int idx, ret;

	if (IS_ERR_OR_NULL(port) || !gid)
		return -EINVAL;
	dev = port->dev;
	if (index >= port_gid_tbl_len(port))
		return READ_ONCE(dev->gone) ? -ENODEV : -EINVAL;
	idx = srcu_read_lock(&kmad_provider_srcu);
	if (READ_ONCE(dev->gone))
		ret = -ENODEV;
	else
		ret = dev->ops->query_gid(dev, port->port_num, index, gid);
	srcu_read_unlock(&kmad_provider_srcu, idx);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_port_query_gid);

/**
 * kmad_port_modify_cap() - change a port's PortInfo CapabilityMask.
 * @port: the port.
 * @set: bits to set (big-endian PortInfo bit numbering, as a u32 in host
 *	order: IsSM is 0x2).
 * @clear: bits to clear afterwards.
 *
 * For a subnet manager's claim on the port (kmad_umad's issmN, as ib_umad
 * calls ib_modify_port()): the port's SMA reports the new mask in
 * PortInfo.  The provider counts nothing: two claims must not overlap
 * (issmN allows one holder).
 *
 * Context: process context, may sleep.
 * Return: 0; -EOPNOTSUPP if the provider cannot (no modify_port_cap);
 * -ENODEV once the device is gone; -EINVAL for a NULL port; or the
 * provider's error.
 */
int kmad_port_modify_cap(struct kmad_port *port, u32 set, u32 clear)
{
	struct kmad_device *dev;
	int idx, ret;

	might_sleep();
	if (IS_ERR_OR_NULL(port))
		return -EINVAL;
	dev = port->dev;
	idx = srcu_read_lock(&kmad_provider_srcu);
	if (READ_ONCE(dev->gone))
		ret = -ENODEV;
	else if (!dev->ops->modify_port_cap)
		ret = -EOPNOTSUPP;
	else
		ret = dev->ops->modify_port_cap(dev, port->port_num, set,
						clear);
	srcu_read_unlock(&kmad_provider_srcu, idx);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_port_modify_cap);

/* Entries of the port's GID table kmad may read (0 without query_gid). */
unsigned int kmad_port_gid_count(const struct kmad_port *port)
{
	return port_gid_tbl_len(port);
}

/**
 * kmad_port_pkey_count() - how many entries a port's P_Key table has:
 * the provider's &kmad_port_attr.pkey_tbl_len, or 1 (the default P_Key)
 * for a provider without query_pkey.  Fixed while the port is registered;
 * reads no provider op, so a ULP's post may ask after the device is gone.
 * @port: the port.
 */
unsigned int kmad_port_pkey_count(const struct kmad_port *port)
{
	return port->dev->has_pkeys ? port->attr.pkey_tbl_len : 1;
}

/**
 * kmad_port_query_pkey() - read an entry of a port's P_Key table.
 * @port: the port.
 * @index: the entry.
 * @pkey: filled in.
 *
 * Without the provider's query_pkey the table is the default P_Key
 * 0xffff alone.
 *
 * Context: any but hard interrupt; does not sleep.
 * Return: 0; -EINVAL past the end of the table; -ENODEV once the device
 * is gone.
 */
int kmad_port_query_pkey(struct kmad_port *port, unsigned int index,
			 u16 *pkey)
{
	struct kmad_device *dev;
	int idx, ret;

	if (IS_ERR_OR_NULL(port) || !pkey)
		return -EINVAL;
	dev = port->dev;
	idx = srcu_read_lock(&kmad_provider_srcu);
	if (READ_ONCE(dev->gone)) {
		ret = -ENODEV;
	} else if (index >= kmad_port_pkey_count(port)) {
		ret = -EINVAL;
	} else if (!dev->has_pkeys) {
		*pkey = 0xffff;
		ret = 0;
	} else {
		ret = dev->ops->query_pkey(dev, port->port_num, index, pkey);
	}
	srcu_read_unlock(&kmad_provider_srcu, idx);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_port_query_pkey);

/**
 * kmad_port_query_smp() - ask the port's own SMA, as a driver asks its
 * firmware (ib_core's query_port), without a MAD on the wire.
 * @port: the port.
 * @smp: a SubnGet (class 0x01 or 0x81, base and class version 1) of an
 *	attribute of the port's node or of one of its ports (a PortInfo
 *	naming another port is answered, M_Key and all, as the firmware
 *	answers its driver); its data is filled in.
 *
 * The provider's query_smp answers it as firmware answers its driver: the
 * SMA's M_Key check does not apply (a port an SM protects with
 * M_KeyProtectBits 2 still answers; no violation is counted), unlike a
 * local directed-route SMP sent with kmad_post_send(), which the SMA
 * checks as any other.
 *
 * Context: process; may sleep (a provider may ask its firmware).
 * Return: the MAD status of the answer (0: @smp's data is the attribute);
 * -EINVAL for anything but such a SubnGet; -EOPNOTSUPP if the provider
 * has no query_smp (send a local SMP instead) or the port has no SMA
 * (no QP0: Ethernet); -ENODEV once the device is gone; or the provider's
 * error.
 */
int kmad_port_query_smp(struct kmad_port *port, struct kmad_smp *smp)
{
	struct kmad_device *dev;
	int idx, ret;

	might_sleep();
	if (IS_ERR_OR_NULL(port) || !smp ||
	    smp->base_version != KMAD_MGMT_BASE_VERSION ||
	    !kmad_is_smp_class(smp->mgmt_class) ||
	    smp->class_version != KMAD_SMP_CLASS_VERSION ||
	    smp->method != KMAD_METHOD_GET)
		return -EINVAL;
	dev = port->dev;
	idx = srcu_read_lock(&kmad_provider_srcu);
	if (READ_ONCE(dev->gone))
		ret = -ENODEV;
	else if (!dev->ops->query_smp || !kmad_port_has_smi(port))
		ret = -EOPNOTSUPP;
	else
		ret = dev->ops->query_smp(dev, port->port_num, smp);
	srcu_read_unlock(&kmad_provider_srcu, idx);
	return ret;
}
EXPORT_SYMBOL_GPL(kmad_port_query_smp);

/**
 * kmad_port_find_gid() - the index of a GID in a port's table.
 * @port: the port.
 * @gid: the GID.
 * @index: set to the lowest index holding @gid.
 *
 * Context: any but hard interrupt.
 * Return: 0, or -ENOENT if the table does not hold it.
 */
int kmad_port_find_gid(struct kmad_port *port, const union kmad_gid *gid,
		       u8 *index)
{
	union kmad_gid cur;
	u32 i, len = min_t(u32, port_gid_tbl_len(port), U8_MAX + 1);

	for (i = 0; i < len; i++) {
		if (kmad_port_query_gid(port, i, &cur))
			continue;
		if (!memcmp(&cur, gid, sizeof(cur))) {
			*index = i;
			return 0;
		}
	}
	return -ENOENT;
}
EXPORT_SYMBOL_GPL(kmad_device_port_changed);
