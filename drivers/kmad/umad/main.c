// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_umad: rdma-core's user MAD interface (ib_umad, ABI version 5) over
 * kmad, so that libibumad and the tools built on it (infiniband-diags:
 * ibstat, smpquery, perfquery, ibnetdiscover...) run unmodified on kmad's
 * ports.  Documentation/umad.rst describes the ABI, the sysfs files and
 * what differs from ib_umad.
 *
 * Module init and exit, and the kmad client: every kmad port becomes
 * /dev/infiniband/umadN and issmN (class infiniband_mad, dynamic major,
 * minors N and UMAD_MAX_PORTS + N), and its device an entry in class
 * infiniband (sysfs.c).  libibumad reads fixed paths under
 * /sys/class/infiniband*, which ib_core owns where it is loaded: the
 * module refuses to load beside it.
 */

#define pr_fmt(fmt) "kmad_umad: " fmt

#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "umad.h"

static dev_t umad_base;
static DEFINE_IDA(umad_ida);
/* M: add and remove; kmad's client lock orders them already, M documents it. */
static DEFINE_MUTEX(umad_mutex);

static ssize_t ibdev_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct umad_port *port = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", kmad_port_dev_name(port->kport));
}
static DEVICE_ATTR_RO(ibdev);

static ssize_t port_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct umad_port *port = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", kmad_port_num(port->kport));
}
static DEVICE_ATTR_RO(port);

/* kmad_umad's own (ib_umad has no such file): see &umad_port.recv_dropped. */
static ssize_t recv_dropped_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct umad_port *port = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&port->recv_dropped));
}
static DEVICE_ATTR_RO(recv_dropped);

static struct attribute *umad_class_dev_attrs[] = {
	&dev_attr_ibdev.attr,
	&dev_attr_port.attr,
	&dev_attr_recv_dropped.attr,
	NULL,
};
ATTRIBUTE_GROUPS(umad_class_dev);

static char *umad_devnode(struct device *dev, umode_t *mode)
{
	return kasprintf(GFP_KERNEL, "infiniband/%s", dev_name(dev));
}

/* /sys/class/infiniband_mad/abi_version, "5", as ib_umad has it. */
static CLASS_ATTR_STRING(abi_version, 0444,
			 __stringify(IB_USER_MAD_ABI_VERSION));

static struct class umad_class = {
	.name = "infiniband_mad",
	.owner = THIS_MODULE,
	.devnode = umad_devnode,
	.dev_groups = umad_class_dev_groups,
};

static void umad_port_free(struct kref *ref)
{
	struct umad_port *port = container_of(ref, struct umad_port, refs);

	ida_free(&umad_ida, port->index);
	kfree(port);
}

static void umad_dev_release(struct device *dev)
{
	struct umad_port *port = dev_get_drvdata(dev);

	kref_put(&port->refs, umad_port_free);
}

static void umad_init_dev(struct umad_port *port, struct device *dev,
			  struct cdev *cdev, const struct file_operations *fops,
			  unsigned int minor)
{
	device_initialize(dev);
	dev->class = &umad_class;
	dev->devt = MKDEV(MAJOR(umad_base), minor);
	dev->release = umad_dev_release;
	dev_set_drvdata(dev, port);
	cdev_init(cdev, fops);
	cdev->owner = THIS_MODULE;
}

/*
 * A port: while its entry is made, the port's kmad port lives (kmad holds
 * it until remove returns), so the sysfs files may show its name.
 */
static int umad_add(struct kmad_client *client, struct kmad_port *kport,
		    void **data)
{
	struct umad_port *port;
	int index, ret;

	index = ida_alloc_max(&umad_ida, UMAD_MAX_PORTS - 1, GFP_KERNEL);
	if (index < 0) {
		if (index == -ENOSPC)
			pr_warn_ratelimited("%s port %u: no umad device (all %d in use)\n",
					    kmad_port_dev_name(kport),
					    kmad_port_num(kport), UMAD_MAX_PORTS);
		return index;
	}
	port = kzalloc(sizeof(*port), GFP_KERNEL);
	if (!port) {
		ida_free(&umad_ida, index);
		return -ENOMEM;
	}
	port->kport = kport;
	port->index = index;
	mutex_init(&port->file_mutex);
	INIT_LIST_HEAD(&port->files);
	sema_init(&port->sm_sem, 1);
	/* One reference per struct device; the last release frees. */
	kref_init(&port->refs);
	kref_get(&port->refs);
	umad_init_dev(port, &port->dev, &port->cdev, &umad_fops, index);
	umad_init_dev(port, &port->sm_dev, &port->sm_cdev, &umad_sm_fops,
		      UMAD_MAX_PORTS + index);

	mutex_lock(&umad_mutex);
	port->ibdev = umad_ibdev_get(kport);
	if (IS_ERR(port->ibdev)) {
		ret = PTR_ERR(port->ibdev);
		goto err_unlock;
	}
	ret = dev_set_name(&port->dev, "umad%u", index);
	if (ret)
		goto err_ibdev;
	ret = dev_set_name(&port->sm_dev, "issm%u", index);
	if (ret)
		goto err_ibdev;
	ret = cdev_device_add(&port->cdev, &port->dev);
	if (ret)
		goto err_ibdev;
	ret = cdev_device_add(&port->sm_cdev, &port->sm_dev);
	if (ret)
		goto err_del_umad;
	mutex_unlock(&umad_mutex);
	*data = port;
	return 0;

err_del_umad:
	/*
	 * umadN was openable: a file opened meanwhile may hold agents on
	 * the port, which must go now (kmad calls no remove after a failed
	 * add), and a reader blocked on it must get EIO, as umad_remove()
	 * does.
	 */
	cdev_device_del(&port->cdev, &port->dev);
	mutex_lock(&port->file_mutex);
	port->dead = true;
	mutex_unlock(&port->file_mutex);
	umad_file_kill_port(port);
err_ibdev:
	umad_ibdev_put(port->ibdev, kport);
err_unlock:
	mutex_unlock(&umad_mutex);
	port->dead = true;
	put_device(&port->sm_dev);
	put_device(&port->dev);
	return ret;
}

static void umad_remove(struct kmad_client *client, struct kmad_port *kport,
			void *data)
{
	struct umad_port *port = data;

	mutex_lock(&umad_mutex);
	/* No new open, registration or issm change from here on. */
	cdev_device_del(&port->sm_cdev, &port->sm_dev);
	cdev_device_del(&port->cdev, &port->dev);
	mutex_lock(&port->file_mutex);
	port->dead = true;
	mutex_unlock(&port->file_mutex);
	umad_file_kill_port(port);
	umad_ibdev_put(port->ibdev, kport);
	mutex_unlock(&umad_mutex);
	put_device(&port->sm_dev);
	put_device(&port->dev);
}

static struct kmad_client umad_client = {
	.name = "kmad_umad",
	.add = umad_add,
	.remove = umad_remove,
};

/*
 * ib_core is there (loaded or built in): its classes infiniband and
 * infiniband_mad are, or will be, ib_core's and ib_umad's.  symbol_get()
 * finds only EXPORT_SYMBOL_GPL symbols (Linux 6.1.53 on, and Debian's 6.1
 * kernels): ib_register_client is a plain EXPORT_SYMBOL, which it never
 * finds there (it warns instead), so ask for ib_core's GPL export ib_wq
 * (device.c).
 */
static bool umad_ib_core_present(void)
{
	struct workqueue_struct **wq = symbol_get(ib_wq);

	if (!wq)
		return false;
	symbol_put(ib_wq);
	return true;
}

static int __init umad_init(void)
{
	int ret;

	if (umad_ib_core_present()) {
		pr_err("the kernel's ib_core is present: /sys/class/infiniband and infiniband_mad are its own; use its ib_umad\n");
		return -EEXIST;
	}
	ret = alloc_chrdev_region(&umad_base, 0, 2 * UMAD_MAX_PORTS,
				  "infiniband_mad");
	if (ret)
		return ret;
	ret = class_register(&umad_class);
	if (ret)
		goto err_chrdev;
	ret = class_create_file(&umad_class, &class_attr_abi_version.attr);
	if (ret)
		goto err_class;
	ret = umad_sysfs_init();
	if (ret)
		goto err_class;
	ret = kmad_register_client(&umad_client);
	if (ret)
		goto err_sysfs;
	return 0;

err_sysfs:
	umad_sysfs_exit();
err_class:
	class_unregister(&umad_class);
err_chrdev:
	unregister_chrdev_region(umad_base, 2 * UMAD_MAX_PORTS);
	return ret;
}

static void __exit umad_exit(void)
{
	kmad_unregister_client(&umad_client);
	umad_sysfs_exit();
	class_unregister(&umad_class);
	unregister_chrdev_region(umad_base, 2 * UMAD_MAX_PORTS);
}

module_init(umad_init);
module_exit(umad_exit);

MODULE_DESCRIPTION("kmad: the ib_umad user MAD ABI over kmad");
MODULE_LICENSE("GPL");
