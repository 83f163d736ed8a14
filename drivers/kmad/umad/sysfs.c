// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_umad: class "infiniband", one entry per kmad device, in the
 * formats of ib_core's sysfs code, which libibumad parses:
 *
 *   /sys/class/infiniband/<dev>/{node_type,node_guid,sys_image_guid,
 *	fw_ver,hw_rev,hca_type,node_desc}
 *   /sys/class/infiniband/<dev>/ports/<n>/{lid,sm_lid,sm_sl,
 *	lid_mask_count,state,phys_state,rate,cap_mask,link_layer,
 *	gids/<i>,pkeys/<i>}
 *
 * kmad has no "query port" operation: as mlx4 and mthca do with their
 * firmware, every read asks the port's own SMA (NodeInfo,
 * NodeDescription, PortInfo), so the files follow whatever the SMA or an
 * SM changes: with kmad_port_query_smp() where the provider has
 * query_smp (kmad_sim), which skips the M_Key check as their MAD_IFC
 * "ignore M_Key" does, else with a local directed-route SMP (hop count
 * 0), which an M_Key at ProtectBits 2 refuses.  GIDs and P_Keys
 * come from kmad_port_query_gid() and kmad_port_query_pkey().  A port
 * without QP0 (Ethernet) answers its link layer, GIDs and P_Keys only; its
 * other files read as ib_core has them for RoCE (LID 0, state from
 * nothing known: "4: ACTIVE").
 *
 * Lifetime: the entry of a device is made with its first port's add and
 * removed with its last port's remove (under M, main.c).  Removing a
 * port's kobject waits for every read in progress (kernfs drains them);
 * only then is the port's query agent unregistered.
 */

#define pr_fmt(fmt) "kmad_umad: " fmt

#include <linux/completion.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <asm/unaligned.h>

#include "umad.h"

/* How long a local SMP may take: the SMA answers at once. */
#define UMAD_QUERY_TIMEOUT_MS	1000
#define UMAD_QUERY_RETRIES	2
/* GID and P_Key table entries probed at most. */
#define UMAD_MAX_TBL		256

/* NodeInfo and PortInfo byte offsets (IBTA 14.2.5.3, 14.2.5.6). */
enum {
	NI_NODE_TYPE = 2,
	NI_NUM_PORTS = 3,
	NI_SYS_GUID = 4,
	NI_NODE_GUID = 12,
	NI_DEVICE_ID = 30,
	NI_REVISION = 32,
	PI_LID = 16,
	PI_SM_LID = 18,
	PI_CAP_MASK = 20,
	PI_WIDTH_ACTIVE = 31,
	PI_SPEED_STATE = 32,
	PI_PHYS_DOWNDEF = 33,
	PI_MKEYPROT_LMC = 34,
	PI_SPEED_ACT_ENA = 35,
	PI_MTU_SMSL = 36,
};

/* PortInfo.CapabilityMask.IsSM (IBTA 14.2.5.6). */
#define UMAD_CAP_IS_SM		0x00000002

/* One GID or P_Key file: its index. */
struct umad_tbl_attr {
	struct attribute attr;
	unsigned int index;
	char name[8];
};

struct umad_ibport {
	struct kobject kobj;
	struct kmad_port *kport;
	struct kmad_agent *agent;	/* QP0, send-only; NULL without SMI */
	bool is_sm;			/* issm held, provider can't say;
					 * written under P
					 */
	unsigned int num_gids;
	unsigned int num_pkeys;
	struct umad_tbl_attr *gid_attrs;
	struct umad_tbl_attr *pkey_attrs;
	struct attribute **gid_list;
	struct attribute **pkey_list;
	struct attribute_group gid_group;
	struct attribute_group pkey_group;
};

/**
 * struct umad_ibdev - a kmad device's entry in class infiniband.
 * @dev: /sys/class/infiniband/<name>.
 * @list: M: in umad_ibdevs.
 * @users: M: its ports that were added and not yet removed.
 * @query_mutex: Q, inside M: @ports, for the device attributes, which
 *	query through a port's agent (a port's own files need no lock: its
 *	removal waits for them).
 * @ports_kobj: ports/.
 * @ports: [port_num - 1], Q; NULL until that port is added.  Any port
 *	number kmad has (1..255), not just the first 64 (umadN devices,
 *	UMAD_MAX_PORTS, count ports of all devices, not port numbers).
 */
struct umad_ibdev {
	struct device dev;
	struct list_head list;
	unsigned int users;
	struct mutex query_mutex;	/* Q */
	struct kobject *ports_kobj;
	struct umad_ibport *ports[U8_MAX];
};

static struct class *umad_ib_class;
static LIST_HEAD(umad_ibdevs);
static atomic_t umad_query_tid = ATOMIC_INIT(0);

struct umad_query {
	struct completion done;
	u16 status;
	bool answered;
	u8 data[KMAD_SMP_DATA_SIZE];
};

static void umad_query_send_handler(struct kmad_agent *agent,
				    struct kmad_send_wc *wc)
{
	struct umad_query *q = wc->send_buf->context[0];

	complete(&q->done);
}

static void umad_query_recv_handler(struct kmad_agent *agent,
				    struct kmad_send_buf *request,
				    struct kmad_recv_wc *wc)
{
	const struct kmad_smp *smp = (const struct kmad_smp *)wc->mad;
	struct umad_query *q;

	if (request) {
		q = request->context[0];
		q->status = be16_to_cpu(smp->status) & ~KMAD_SMP_DIRECTION;
		memcpy(q->data, smp->data, sizeof(q->data));
		q->answered = true;
	}
	kmad_free_recv(wc);
}

/* @smp becomes a local directed-route SubnGet of @attr_id, @attr_mod. */
static void umad_smp_get(struct kmad_smp *smp, u16 attr_id, u32 attr_mod)
{
	memset(smp, 0, sizeof(*smp));
	smp->base_version = KMAD_MGMT_BASE_VERSION;
	smp->mgmt_class = KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
	smp->class_version = KMAD_SMP_CLASS_VERSION;
	smp->method = KMAD_METHOD_GET;
	smp->attr_id = cpu_to_be16(attr_id);
	smp->attr_mod = cpu_to_be32(attr_mod);
	smp->dr_slid = cpu_to_be16(KMAD_PERMISSIVE_LID);
	smp->dr_dlid = cpu_to_be16(KMAD_PERMISSIVE_LID);
}

/*
 * Ask the port's SMA through the provider (kmad_port_query_smp()), as
 * ib_core asks a driver, which asks its firmware without the M_Key check:
 * the files work on a port an SM protects with M_KeyProtectBits 2.
 * Return: 0 and the attribute in @data; -EIO for an error status;
 * -EOPNOTSUPP if the provider cannot (then a local SMP asks).
 */
static int umad_query_direct(struct umad_ibport *p, u16 attr_id,
			     u32 attr_mod, u8 *data)
{
	struct kmad_smp *smp;
	int ret;

	smp = kmalloc(sizeof(*smp), GFP_KERNEL);
	if (!smp)
		return -ENOMEM;
	umad_smp_get(smp, attr_id, attr_mod);
	ret = kmad_port_query_smp(p->kport, smp);
	if (ret > 0)
		ret = -EIO;
	if (!ret)
		memcpy(data, smp->data, KMAD_SMP_DATA_SIZE);
	kfree(smp);
	return ret;
}

/*
 * Ask the port's own SMA for an attribute: through the provider if it can
 * (umad_query_direct()), else with a SubnGet directed-route SMP of hop
 * count 0.  Return: 0 and the attribute in @data; -EIO if the
 * SMA did not answer or answered with an error status; -ENODEV without
 * SMI; -ENOMEM.
 */
static int umad_query(struct umad_ibport *p, u16 attr_id, u32 attr_mod,
		      u8 *data)
{
	struct kmad_dest dest = {
		.dlid = KMAD_PERMISSIVE_LID,
		.remote_qpn = 0,
	};
	struct kmad_send_buf *buf;
	struct umad_query q = {};
	struct kmad_smp *smp;
	int ret;

	if (!p->agent)
		return -ENODEV;
	ret = umad_query_direct(p, attr_id, attr_mod, data);
	if (ret != -EOPNOTSUPP)
		return ret;
	buf = kmad_alloc_send_buf(p->agent, &dest, GFP_KERNEL);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	init_completion(&q.done);
	smp = (struct kmad_smp *)buf->mad;
	umad_smp_get(smp, attr_id, attr_mod);
	smp->tid = cpu_to_be64(atomic_inc_return(&umad_query_tid));
	buf->timeout_ms = UMAD_QUERY_TIMEOUT_MS;
	buf->retries = UMAD_QUERY_RETRIES;
	buf->context[0] = &q;
	ret = kmad_post_send(buf);
	if (!ret) {
		/* kmad calls send_handler once, after any response. */
		wait_for_completion(&q.done);
		ret = q.answered && !q.status ? 0 : -EIO;
		if (!ret)
			memcpy(data, q.data, KMAD_SMP_DATA_SIZE);
	}
	kmad_free_send_buf(buf);
	return ret;
}

/* Device attributes. */

/*
 * A node attribute, asked through the first port with SMI: -ENODEV if
 * the device has ports but none with SMI (an RNIC), -ENXIO if it has no
 * port at the moment (the device's files appear before its first port,
 * and stay a little after its last).
 */
static int umad_dev_query(struct device *dev, u16 attr, u8 *data)
{
	struct umad_ibdev *ibdev = container_of(dev, struct umad_ibdev, dev);
	int ret = -ENXIO;
	unsigned int i;

	mutex_lock(&ibdev->query_mutex);
	for (i = 0; i < ARRAY_SIZE(ibdev->ports); i++) {
		if (!ibdev->ports[i])
			continue;
		ret = -ENODEV;
		if (ibdev->ports[i]->agent) {
			ret = umad_query(ibdev->ports[i], attr, 0, data);
			/* Not an RNIC: the port lost its SMI meanwhile. */
			if (ret == -ENODEV)
				ret = -ENXIO;
			break;
		}
	}
	mutex_unlock(&ibdev->query_mutex);
	return ret;
}

/*
 * NodeInfo or NodeDescription for a device file: 0 with it in @data; 1 if
 * the device has no port with SMI, an RNIC's case (the file then shows
 * what an RNIC's driver would); else the error the read returns: no
 * made-up value for an SMA that did not answer or an allocation that
 * failed.
 */
static int umad_dev_node(struct device *dev, u16 attr, u8 *data)
{
	int ret = umad_dev_query(dev, attr, data);

	return ret == -ENODEV ? 1 : ret;
}

static ssize_t node_type_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	static const char * const names[] = {
		[1] = "CA", [2] = "switch", [3] = "router",
	};
	u8 d[KMAD_SMP_DATA_SIZE];
	u8 type;
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return sysfs_emit(buf, "1: CA\n");	/* RoCE: an RNIC's CA */
	type = d[NI_NODE_TYPE];
	return sysfs_emit(buf, "%u: %s\n", type,
			  type < ARRAY_SIZE(names) && names[type] ?
			  names[type] : "<unknown>");
}
static DEVICE_ATTR_RO(node_type);

static ssize_t umad_emit_guid(char *buf, u64 guid)
{
	return sysfs_emit(buf, "%04x:%04x:%04x:%04x\n",
			  (u16)(guid >> 48), (u16)(guid >> 32),
			  (u16)(guid >> 16), (u16)guid);
}

/* Without SMI: the GUID in port 1's GID 0, as an RNIC derives it. */
static u64 umad_gid_guid(struct device *dev)
{
	struct umad_ibdev *ibdev = container_of(dev, struct umad_ibdev, dev);
	union kmad_gid gid;
	u64 guid = 0;

	mutex_lock(&ibdev->query_mutex);
	if (ibdev->ports[0] &&
	    !kmad_port_query_gid(ibdev->ports[0]->kport, 0, &gid))
		guid = be64_to_cpu(gid.global.interface_id);
	mutex_unlock(&ibdev->query_mutex);
	return guid;
}

static ssize_t node_guid_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return umad_emit_guid(buf, umad_gid_guid(dev));
	return umad_emit_guid(buf, get_unaligned_be64(d + NI_NODE_GUID));
}
static DEVICE_ATTR_RO(node_guid);

static ssize_t sys_image_guid_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return umad_emit_guid(buf, umad_gid_guid(dev));
	return umad_emit_guid(buf, get_unaligned_be64(d + NI_SYS_GUID));
}
static DEVICE_ATTR_RO(sys_image_guid);

static ssize_t fw_ver_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return sysfs_emit(buf, "0.0.0\n");
	/* NodeInfo.Revision as major.minor.subminor, as HCA drivers do. */
	return sysfs_emit(buf, "%u.%u.%u\n", d[NI_REVISION + 1],
			  d[NI_REVISION + 2], d[NI_REVISION + 3]);
}
static DEVICE_ATTR_RO(fw_ver);

static ssize_t hw_rev_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return sysfs_emit(buf, "0\n");
	/* "%x", as the HCA drivers that have the file print it. */
	return sysfs_emit(buf, "%x\n", get_unaligned_be32(d + NI_REVISION));
}
static DEVICE_ATTR_RO(hw_rev);

static ssize_t hca_type_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_INFO, d);
	if (ret < 0)
		return ret;
	if (ret)
		return sysfs_emit(buf, "kmad\n");
	return sysfs_emit(buf, "kmad-%04x\n",
			  get_unaligned_be16(d + NI_DEVICE_ID));
}
static DEVICE_ATTR_RO(hca_type);

static ssize_t node_desc_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	u8 d[KMAD_SMP_DATA_SIZE];
	int ret;

	ret = umad_dev_node(dev, KMAD_SMP_ATTR_NODE_DESC, d);
	if (ret < 0)
		return ret;
	if (ret)
		return sysfs_emit(buf, "%s\n", dev_name(dev));
	return sysfs_emit(buf, "%.64s\n", d);
}
static DEVICE_ATTR_RO(node_desc);

static struct attribute *umad_ibdev_attrs[] = {
	&dev_attr_node_type.attr,
	&dev_attr_node_guid.attr,
	&dev_attr_sys_image_guid.attr,
	&dev_attr_fw_ver.attr,
	&dev_attr_hw_rev.attr,
	&dev_attr_hca_type.attr,
	&dev_attr_node_desc.attr,
	NULL,
};
ATTRIBUTE_GROUPS(umad_ibdev);

/* Port attributes. */

struct umad_port_attr {
	struct attribute attr;
	ssize_t (*show)(struct umad_ibport *p, const u8 *pi, char *buf);
};

static ssize_t lid_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	return sysfs_emit(buf, "0x%x\n", pi ? get_unaligned_be16(pi + PI_LID) :
				      0);
}

static ssize_t sm_lid_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	return sysfs_emit(buf, "0x%x\n",
			  pi ? get_unaligned_be16(pi + PI_SM_LID) : 0);
}

static ssize_t sm_sl_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	return sysfs_emit(buf, "%u\n", pi ? pi[PI_MTU_SMSL] & 0xf : 0);
}

static ssize_t lid_mask_count_show(struct umad_ibport *p, const u8 *pi,
				   char *buf)
{
	return sysfs_emit(buf, "%u\n", pi ? pi[PI_MKEYPROT_LMC] & 0x7 : 0);
}

static ssize_t cap_mask_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	return sysfs_emit(buf, "0x%08x\n",
			  pi ? get_unaligned_be32(pi + PI_CAP_MASK) : 0);
}

static ssize_t state_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	static const char * const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
	};
	u8 state = pi ? pi[PI_SPEED_STATE] & 0xf : 4;

	return sysfs_emit(buf, "%u: %s\n", state,
			  state < ARRAY_SIZE(names) ? names[state] : "UNKNOWN");
}

static ssize_t phys_state_show(struct umad_ibport *p, const u8 *pi,
			       char *buf)
{
	static const char * const names[] = {
		[1] = "Sleep", [2] = "Polling", [3] = "Disabled",
		[4] = "PortConfigurationTraining", [5] = "LinkUp",
		[6] = "LinkErrorRecovery", [7] = "Phy Test",
	};
	u8 phys = pi ? pi[PI_PHYS_DOWNDEF] >> 4 : 5;

	return sysfs_emit(buf, "%u: %s\n", phys,
			  phys < ARRAY_SIZE(names) && names[phys] ?
			  names[phys] : "<unknown>");
}

static ssize_t rate_show(struct umad_ibport *p, const u8 *pi, char *buf)
{
	unsigned int width, rate;
	const char *speed;

	if (!pi)
		return sysfs_emit(buf, "10 Gb/sec (4X SDR)\n");
	switch (pi[PI_WIDTH_ACTIVE]) {
	case 1:
		width = 1;
		break;
	case 2:
		width = 4;
		break;
	case 4:
		width = 8;
		break;
	case 8:
		width = 12;
		break;
	case 16:
		width = 2;
		break;
	default:
		return -EINVAL;
	}
	/* ib_core's rule: rate in units of 100 Mb/s, unknown speeds SDR. */
	switch (pi[PI_SPEED_ACT_ENA] >> 4) {
	case 2:
		speed = " DDR";
		rate = 50;
		break;
	case 4:
		speed = " QDR";
		rate = 100;
		break;
	default:
		speed = " SDR";
		rate = 25;
		break;
	}
	rate *= width;
	return sysfs_emit(buf, "%u%s Gb/sec (%uX%s)\n", rate / 10,
			  rate % 10 ? ".5" : "", width, speed);
}

static ssize_t link_layer_show(struct umad_ibport *p, const u8 *pi,
			       char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  kmad_port_link_layer(p->kport) ==
			  KMAD_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
}

#define UMAD_PORT_ATTR(_name) \
	static struct umad_port_attr umad_port_attr_##_name = { \
		.attr = { .name = __stringify(_name), .mode = 0444 }, \
		.show = _name##_show, \
	}

UMAD_PORT_ATTR(lid);
UMAD_PORT_ATTR(sm_lid);
UMAD_PORT_ATTR(sm_sl);
UMAD_PORT_ATTR(lid_mask_count);
UMAD_PORT_ATTR(cap_mask);
UMAD_PORT_ATTR(state);
UMAD_PORT_ATTR(phys_state);
UMAD_PORT_ATTR(rate);
UMAD_PORT_ATTR(link_layer);

static struct attribute *umad_port_attrs[] = {
	&umad_port_attr_lid.attr,
	&umad_port_attr_sm_lid.attr,
	&umad_port_attr_sm_sl.attr,
	&umad_port_attr_lid_mask_count.attr,
	&umad_port_attr_cap_mask.attr,
	&umad_port_attr_state.attr,
	&umad_port_attr_phys_state.attr,
	&umad_port_attr_rate.attr,
	&umad_port_attr_link_layer.attr,
	NULL,
};
ATTRIBUTE_GROUPS(umad_port);

static bool umad_is_tbl_attr(const struct umad_ibport *p,
			     const struct attribute *attr,
			     const struct umad_tbl_attr *tbl, unsigned int n)
{
	const struct umad_tbl_attr *t = container_of(attr,
						     struct umad_tbl_attr,
						     attr);

	return n && t >= tbl && t < tbl + n;
}

static ssize_t umad_port_show(struct kobject *kobj, struct attribute *attr,
			      char *buf)
{
	struct umad_ibport *p = container_of(kobj, struct umad_ibport, kobj);
	const struct umad_tbl_attr *t;
	struct umad_port_attr *pa;
	u8 pi[KMAD_SMP_DATA_SIZE];
	union kmad_gid gid;
	u16 pkey;
	int ret;

	if (umad_is_tbl_attr(p, attr, p->gid_attrs, p->num_gids)) {
		t = container_of(attr, struct umad_tbl_attr, attr);
		ret = kmad_port_query_gid(p->kport, t->index, &gid);
		if (ret == -EAGAIN)
			memset(&gid, 0, sizeof(gid));
		else if (ret)
			return ret;
		return sysfs_emit(buf, "%pI6\n", gid.raw);
	}
	if (umad_is_tbl_attr(p, attr, p->pkey_attrs, p->num_pkeys)) {
		t = container_of(attr, struct umad_tbl_attr, attr);
		ret = kmad_port_query_pkey(p->kport, t->index, &pkey);
		if (ret)
			return ret;
		return sysfs_emit(buf, "0x%04x\n", pkey);
	}
	pa = container_of(attr, struct umad_port_attr, attr);
	if (!p->agent)
		return pa->show(p, NULL, buf);
	ret = umad_query(p, KMAD_SMP_ATTR_PORT_INFO, kmad_port_num(p->kport),
			 pi);
	if (ret)
		return ret;
	if (READ_ONCE(p->is_sm))
		put_unaligned_be32(get_unaligned_be32(pi + PI_CAP_MASK) |
				   UMAD_CAP_IS_SM, pi + PI_CAP_MASK);
	return pa->show(p, pi, buf);
}

static const struct sysfs_ops umad_port_sysfs_ops = {
	.show = umad_port_show,
};

static void umad_ibport_release(struct kobject *kobj)
{
	struct umad_ibport *p = container_of(kobj, struct umad_ibport, kobj);

	kfree(p->gid_attrs);
	kfree(p->pkey_attrs);
	kfree(p->gid_list);
	kfree(p->pkey_list);
	kfree(p);
}

static struct kobj_type umad_port_ktype = {
	.release = umad_ibport_release,
	.sysfs_ops = &umad_port_sysfs_ops,
	.default_groups = umad_port_groups,
};

/* A group "gids" or "pkeys" of @n files named 0 to n - 1. */
static int umad_tbl_group(struct attribute_group *group, const char *name,
			  unsigned int n, struct umad_tbl_attr **attrs,
			  struct attribute ***list)
{
	unsigned int i;

	*attrs = kcalloc(n, sizeof(**attrs), GFP_KERNEL);
	*list = kcalloc(n + 1, sizeof(**list), GFP_KERNEL);
	if (!*attrs || !*list)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct umad_tbl_attr *t = &(*attrs)[i];

		snprintf(t->name, sizeof(t->name), "%u", i);
		sysfs_attr_init(&t->attr);
		t->attr.name = t->name;
		t->attr.mode = 0444;
		t->index = i;
		(*list)[i] = &t->attr;
	}
	group->name = name;
	group->attrs = *list;
	return 0;
}

/* Entries of a table: probe until the index is past its end (-EINVAL). */
static unsigned int umad_count_gids(struct kmad_port *kport)
{
	union kmad_gid gid;
	unsigned int n;

	for (n = 0; n < UMAD_MAX_TBL; n++)
		if (kmad_port_query_gid(kport, n, &gid) == -EINVAL)
			break;
	return n;
}

static unsigned int umad_count_pkeys(struct kmad_port *kport)
{
	unsigned int n;
	u16 pkey;

	for (n = 0; n < UMAD_MAX_TBL; n++)
		if (kmad_port_query_pkey(kport, n, &pkey) == -EINVAL)
			break;
	return n;
}

static void umad_query_agent_stop(struct umad_ibport *p)
{
	if (p->agent)
		kmad_unregister_agent(p->agent);
	p->agent = NULL;
}

static int umad_ibport_add(struct umad_ibdev *ibdev, struct kmad_port *kport)
{
	u8 num = kmad_port_num(kport);
	struct umad_ibport *p;
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->kport = kport;
	kobject_init(&p->kobj, &umad_port_ktype);
	p->num_gids = umad_count_gids(kport);
	p->num_pkeys = umad_count_pkeys(kport);
	ret = umad_tbl_group(&p->gid_group, "gids", p->num_gids,
			     &p->gid_attrs, &p->gid_list);
	if (ret)
		goto err_put;
	ret = umad_tbl_group(&p->pkey_group, "pkeys", p->num_pkeys,
			     &p->pkey_attrs, &p->pkey_list);
	if (ret)
		goto err_put;
	if (kmad_port_has_smi(kport)) {
		p->agent = kmad_register_agent(kport, KMAD_QPT_SMI, NULL,
					       umad_query_send_handler,
					       umad_query_recv_handler, p);
		if (IS_ERR(p->agent)) {
			ret = PTR_ERR(p->agent);
			p->agent = NULL;
			goto err_put;
		}
	}
	ret = kobject_add(&p->kobj, ibdev->ports_kobj, "%u", num);
	if (ret)
		goto err_stop;
	ret = sysfs_create_group(&p->kobj, &p->gid_group);
	if (ret)
		goto err_del;
	ret = sysfs_create_group(&p->kobj, &p->pkey_group);
	if (ret)
		goto err_remove_gids;
	mutex_lock(&ibdev->query_mutex);
	ibdev->ports[num - 1] = p;
	mutex_unlock(&ibdev->query_mutex);
	return 0;

err_remove_gids:
	sysfs_remove_group(&p->kobj, &p->gid_group);
err_del:
	kobject_del(&p->kobj);
err_stop:
	umad_query_agent_stop(p);
err_put:
	kobject_put(&p->kobj);
	return ret;
}

static void umad_ibport_remove(struct umad_ibdev *ibdev, u8 num)
{
	struct umad_ibport *p = ibdev->ports[num - 1];

	if (!p)
		return;
	sysfs_remove_group(&p->kobj, &p->pkey_group);
	sysfs_remove_group(&p->kobj, &p->gid_group);
	/* Waits for the port's reads in progress; none starts afterwards. */
	kobject_del(&p->kobj);
	/* And for the device attribute reads that use the port. */
	mutex_lock(&ibdev->query_mutex);
	ibdev->ports[num - 1] = NULL;
	umad_query_agent_stop(p);
	mutex_unlock(&ibdev->query_mutex);
	kobject_put(&p->kobj);
}

static void umad_ibdev_release(struct device *dev)
{
	kfree(container_of(dev, struct umad_ibdev, dev));
}

static struct umad_ibdev *umad_ibdev_find(const char *name)
{
	struct umad_ibdev *ibdev;

	list_for_each_entry(ibdev, &umad_ibdevs, list)
		if (!strcmp(dev_name(&ibdev->dev), name))
			return ibdev;
	return NULL;
}

/**
 * umad_ibdev_get() - add a port to its device's class infiniband entry.
 * @kport: the port (from the client's add callback).
 *
 * Makes the device's entry with its first port.  Context: under M.
 * Return: the entry, or an ERR_PTR.
 */
struct umad_ibdev *umad_ibdev_get(struct kmad_port *kport)
{
	const char *name = kmad_port_dev_name(kport);
	u8 num = kmad_port_num(kport);
	struct umad_ibdev *ibdev;
	bool created = false;
	int ret;

	ibdev = umad_ibdev_find(name);
	if (!ibdev) {
		ibdev = kzalloc(sizeof(*ibdev), GFP_KERNEL);
		if (!ibdev)
			return ERR_PTR(-ENOMEM);
		mutex_init(&ibdev->query_mutex);
		device_initialize(&ibdev->dev);
		ibdev->dev.class = umad_ib_class;
		ibdev->dev.groups = umad_ibdev_groups;
		ibdev->dev.release = umad_ibdev_release;
		ret = dev_set_name(&ibdev->dev, "%s", name);
		if (ret)
			goto err_put;
		ret = device_add(&ibdev->dev);
		if (ret)
			goto err_put;
		ibdev->ports_kobj = kobject_create_and_add("ports",
							   &ibdev->dev.kobj);
		if (!ibdev->ports_kobj) {
			ret = -ENOMEM;
			goto err_del;
		}
		list_add_tail(&ibdev->list, &umad_ibdevs);
		created = true;
	}
	if (!num || ibdev->ports[num - 1]) {
		ret = -EINVAL;
		goto err_undo;
	}
	ret = umad_ibport_add(ibdev, kport);
	if (ret)
		goto err_undo;
	ibdev->users++;
	return ibdev;

err_undo:
	if (!created)
		return ERR_PTR(ret);
	list_del(&ibdev->list);
	kobject_put(ibdev->ports_kobj);
err_del:
	device_del(&ibdev->dev);
err_put:
	put_device(&ibdev->dev);
	return ERR_PTR(ret);
}

/**
 * umad_ibdev_put() - remove a port from its device's entry.
 * @ibdev: the entry.
 * @kport: the port going away.
 *
 * Removes the entry with the last port.  Context: under M.
 */
void umad_ibdev_put(struct umad_ibdev *ibdev, struct kmad_port *kport)
{
	umad_ibport_remove(ibdev, kmad_port_num(kport));
	if (--ibdev->users)
		return;
	list_del(&ibdev->list);
	kobject_put(ibdev->ports_kobj);
	device_unregister(&ibdev->dev);
}

/**
 * umad_port_set_sm() - an issm holder came or went.
 * @port: the port, not dead (P held).
 * @is_sm: IsSM set (open) or cleared (close).
 *
 * Sets or clears IsSM in the port's CapabilityMask with
 * kmad_port_modify_cap(), so that the SMA's PortInfo and the cap_mask file
 * show it.  A provider without that operation gets IsSM in the cap_mask
 * file only.  The port's entry stays while the port is not dead: the
 * remove callback marks it dead under P before it removes the entry.
 *
 * Return: 0 or kmad_port_modify_cap()'s error.
 */
int umad_port_set_sm(struct umad_port *port, bool is_sm)
{
	struct umad_ibport *p;
	int ret;

	lockdep_assert_held(&port->file_mutex);
	p = port->ibdev->ports[kmad_port_num(port->kport) - 1];
	ret = kmad_port_modify_cap(port->kport, is_sm ? UMAD_CAP_IS_SM : 0,
				   is_sm ? 0 : UMAD_CAP_IS_SM);
	if (ret == -EOPNOTSUPP) {
		WRITE_ONCE(p->is_sm, is_sm);
		ret = 0;
	}
	return ret;
}

int umad_sysfs_init(void)
{
	umad_ib_class = class_create(THIS_MODULE, "infiniband");
	return PTR_ERR_OR_ZERO(umad_ib_class);
}

void umad_sysfs_exit(void)
{
	class_destroy(umad_ib_class);
}
