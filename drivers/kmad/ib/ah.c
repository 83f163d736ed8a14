// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_ib: GIDs, P_Keys and address handles.
 *
 * GIDs and P_Keys are read from ib_core's caches, which take only
 * irq-safe locks, so kmad may read them from any context but hard
 * interrupt.
 *
 * Address handles are made in process context (kmad's AH cache calls
 * create_ah from a work item).  On an InfiniBand port the AH is the LID
 * route, with the GRH if kmad asks for one.  On an Ethernet (RoCE) port
 * every AH has a GRH and needs the destination MAC: a link-local
 * destination GID whose interface ID is an EUI-64 (the default for IPv6
 * link-local addresses) carries the MAC, which is read from it; any other
 * destination is resolved by ib_core through the IP stack (neighbour
 * discovery or ARP, up to a second), by rdma_create_user_ah(), which does
 * that before making the AH and which kernel callers may use without user
 * data.  A handle for sends from the real QP1 or QP0
 * (&kmad_ah_attr.from_qp1) is made on the protection domain of ib_mad's
 * QP0 and QP1, which send them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "kmad_ib.h"

int kmad_ib_query_gid(struct kmad_device *dev, u8 port_num,
		      unsigned int index, union kmad_gid *gid)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(dev);
	union ib_gid g;
	int ret;

	if (index > INT_MAX)
		return -EINVAL;
	ret = rdma_query_gid(kdev->ibdev, port_num, index, &g);
	if (ret == -ENOENT)
		return -EAGAIN;		/* an empty entry */
	if (ret)
		return ret;
	BUILD_BUG_ON(sizeof(*gid) != sizeof(g));
	memcpy(gid->raw, g.raw, sizeof(gid->raw));
	return 0;
}

int kmad_ib_query_pkey(struct kmad_device *dev, u8 port_num,
		       unsigned int index, u16 *pkey)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(dev);

	if (index > U16_MAX)
		return -EINVAL;
	return ib_get_cached_pkey(kdev->ibdev, port_num, index, pkey);
}

/* A link-local GID whose interface ID is an EUI-64 made from a MAC. */
static bool gid_is_ll_eui64(const union ib_gid *gid)
{
	return rdma_link_local_addr((struct in6_addr *)gid->raw) &&
	       gid->raw[11] == 0xff && gid->raw[12] == 0xfe;
}

/*
 * The GID index to send from for @index: on a port that has RoCE v2, the
 * v2 entry of the same GID (and network device) when @index is its RoCE
 * v1 entry.  kmad knows no GID types: a ULP's send names an index, often
 * the lowest holding a GID, and ib_core puts a GID's v1 entry before its
 * v2 one on a device with both (mlx4, mlx5, bnxt_re): every GRH send
 * would go out as RoCE v1, which a v2 peer (rxe is v2 only, rdma_cm's
 * default is v2) does not receive.  ib_mad answers with the type the
 * request came with (ib_init_ah_attr_from_wc()); kmad answers from the
 * entry a request arrived at (roce_dgid_index() in verbs.c), a v1 one
 * for a v1 request, but the handle does not say it is an answer, so
 * kmad_ib sends v2 wherever the port has it, answers included
 * (Documentation/kmad_ib.rst).
 */
static u8 roce_v2_index(struct ib_device *ibdev, u8 port_num, u8 index)
{
	const struct ib_gid_attr *a, *v2;
	u8 ret = index;

	if (!rdma_protocol_roce_udp_encap(ibdev, port_num))
		return index;
	a = rdma_get_gid_attr(ibdev, port_num, index);
	if (IS_ERR(a))
		return index;
	if (a->gid_type == IB_GID_TYPE_ROCE) {
		/* The same netdev: a VLAN's GID is another entry. */
		v2 = rdma_find_gid_by_port(ibdev, &a->gid,
					   IB_GID_TYPE_ROCE_UDP_ENCAP,
					   port_num,
					   rcu_access_pointer(a->ndev));
		if (!IS_ERR(v2)) {
			ret = v2->index;
			rdma_put_gid_attr(v2);
		}
	}
	rdma_put_gid_attr(a);
	return ret;
}

int kmad_ib_create_ah(struct kmad_device *dev, u8 port_num,
		      const struct kmad_ah_attr *attr, void **ah)
{
	struct kmad_ib_dev *kdev = kmad_ib_dev(dev);
	struct kmad_ib_port *port = &kdev->ports[port_num - 1];
	/* ib_mad's QP0 and QP1 share its PD: either agent's will do. */
	struct ib_mad_agent *qp1 = port->qp1_agent ?: port->qp0_agent;
	struct rdma_ah_attr aa = {};
	const struct kmad_grh_attr *g = &attr->grh;
	struct ib_pd *pd = kdev->pd;
	union ib_gid dgid;
	struct ib_ah *iah;

	if (attr->from_qp1) {
		if (!qp1)
			return -EOPNOTSUPP;
		pd = qp1->qp->pd;
	}

	aa.type = rdma_ah_find_type(kdev->ibdev, port_num);
	rdma_ah_set_port_num(&aa, port_num);
	rdma_ah_set_sl(&aa, attr->sl);
	if (attr->grh_present) {
		memcpy(dgid.raw, g->dgid.raw, sizeof(dgid.raw));
		rdma_ah_set_grh(&aa, &dgid, g->flow_label,
				roce_v2_index(kdev->ibdev, port_num,
					      g->sgid_index),
				g->hop_limit, g->traffic_class);
	}
	if (aa.type != RDMA_AH_ATTR_TYPE_ROCE) {
		rdma_ah_set_dlid(&aa, attr->dlid);
		rdma_ah_set_path_bits(&aa, attr->src_path_bits);
		iah = rdma_create_ah(pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	} else if (!attr->grh_present) {
		return -EINVAL;		/* RoCE is GID routed only */
	} else if (gid_is_ll_eui64(&dgid)) {
		rdma_get_ll_mac((struct in6_addr *)dgid.raw, aa.roce.dmac);
		iah = rdma_create_ah(pd, &aa, RDMA_CREATE_AH_SLEEPABLE);
	} else {
		iah = rdma_create_user_ah(pd, &aa, NULL);
	}
	if (IS_ERR(iah)) {
		pr_warn_ratelimited("%s port %u: no address handle for %pI6 (LID %u): %ld\n",
				    dev_name(&kdev->ibdev->dev), port_num,
				    g->dgid.raw,
				    attr->dlid, PTR_ERR(iah));
		return PTR_ERR(iah);
	}
	*ah = iah;
	return 0;
}

void kmad_ib_destroy_ah(struct kmad_device *dev, u8 port_num, void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}
