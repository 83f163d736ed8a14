// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_diags_fabric: at load, prints kmad_sim's description of its default
 * fabric, from the sim's control API (<kmad/sim.h>), one line per fact:
 *
 *   kmad_diags: node <n> type <1|2> ports <p> guid <hex> lid <lid> name <name>
 *   kmad_diags: port <n> <p> lid <lid>
 *   kmad_diags: link <n> <p> <peer node> <peer port>
 *   kmad_diags: end <nodes>
 *
 * With sm_dev=<HCA> it is also a test subnet manager's agent on that HCA's
 * port 1: registered for SubnGet in both SMP classes, it answers SMInfo
 * (IBTA 14.2.5.13) with the port GUID, SM_Key 0, ActCount
 * %DIAGS_SM_ACT_COUNT, Priority %DIAGS_SM_PRIORITY and SMState MASTER,
 * and any other attribute "unsupported method/attribute" (kmad_sim's
 * firmware answers the rest; SMInfo is the SM's and comes to kmad), and
 * prints
 *
 *   kmad_diags: sm <dev> lid <lid> guid <hex> key 0 act <n> priority <p> state 3
 *
 * tests/diags/check.py compares what infiniband-diags print over kmad_umad
 * with these lines.  It stays loaded until it is removed; the agents (and
 * the port reference) go at removal, which must come before kmad_sim's.
 */

#define pr_fmt(fmt) "kmad_diags: " fmt

#include <linux/err.h>
#include <linux/module.h>
#include <asm/unaligned.h>

#include <kmad/mad.h>
#include <kmad/sim.h>
#include <kmad/wire.h>

#define DIAGS_SM_ACT_COUNT	4660
#define DIAGS_SM_PRIORITY	14
#define DIAGS_SM_MASTER		3

static char *sm_dev;
module_param(sm_dev, charp, 0444);
MODULE_PARM_DESC(sm_dev, "HCA whose port 1 gets a test SM agent (none: no SM)");

/* Set at load, read by the receive handler, cleared at removal. */
static struct kmad_port *sm_port;
static struct kmad_agent *sm_agents[2];
static u64 sm_guid;

static void diags_sm_send_done(struct kmad_agent *agent,
			       struct kmad_send_wc *wc)
{
	kmad_free_send_buf(wc->send_buf);
}

/* An unsolicited SubnGet: answer SMInfo, refuse anything else. */
static void diags_sm_recv(struct kmad_agent *agent,
			  struct kmad_send_buf *request,
			  struct kmad_recv_wc *wc)
{
	struct kmad_send_buf *buf;
	struct kmad_smp *smp;

	if (request)
		goto out;
	buf = kmad_create_response(agent, wc, GFP_ATOMIC);
	if (IS_ERR(buf)) {
		pr_warn("sm: no response: %ld\n", PTR_ERR(buf));
		goto out;
	}
	smp = (struct kmad_smp *)buf->mad;
	memset(smp->data, 0, KMAD_SMP_DATA_SIZE);
	if (smp->attr_id == cpu_to_be16(KMAD_SMP_ATTR_SM_INFO)) {
		put_unaligned_be64(sm_guid, smp->data);
		put_unaligned_be64(0, smp->data + 8);
		put_unaligned_be32(DIAGS_SM_ACT_COUNT, smp->data + 16);
		smp->data[20] = DIAGS_SM_PRIORITY << 4 | DIAGS_SM_MASTER;
	} else {
		smp->status |= cpu_to_be16(KMAD_MAD_STATUS_UNSUPPORTED_METHOD_ATTR);
	}
	if (kmad_post_send(buf))
		kmad_free_send_buf(buf);
out:
	kmad_free_recv(wc);
}

static void diags_sm_stop(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(sm_agents); i++) {
		if (sm_agents[i])
			kmad_unregister_agent(sm_agents[i]);
		sm_agents[i] = NULL;
	}
	if (sm_port)
		kmad_port_put(sm_port);
	sm_port = NULL;
}

static int diags_sm_start(void)
{
	static const u8 classes[] = { KMAD_MGMT_CLASS_SUBN_LID_ROUTED,
				      KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE };
	struct kmad_reg_req req = { .class_version = 1 };
	union kmad_gid gid;
	int i, ret;

	sm_port = kmad_port_get(sm_dev, 1);
	if (!sm_port) {
		pr_err("sm: no port 1 on %s\n", sm_dev);
		return -ENODEV;
	}
	ret = kmad_port_query_gid(sm_port, 0, &gid);
	if (ret)
		goto err;
	sm_guid = be64_to_cpu(gid.global.interface_id);
	__set_bit(KMAD_METHOD_GET, req.method_mask);
	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		req.mgmt_class = classes[i];
		sm_agents[i] = kmad_register_agent(sm_port, KMAD_QPT_SMI, &req,
						   diags_sm_send_done,
						   diags_sm_recv, NULL);
		if (IS_ERR(sm_agents[i])) {
			ret = PTR_ERR(sm_agents[i]);
			sm_agents[i] = NULL;
			goto err;
		}
	}
	pr_info("sm %s lid %u guid 0x%016llx key 0 act %u priority %u state %u\n",
		sm_dev, kmad_port_lid(sm_port), sm_guid, DIAGS_SM_ACT_COUNT,
		DIAGS_SM_PRIORITY, DIAGS_SM_MASTER);
	return 0;
err:
	pr_err("sm: registering on %s: %d\n", sm_dev, ret);
	diags_sm_stop();
	return ret;
}

static int __init kmad_diags_init(void)
{
	struct kmad_sim_fabric *fab = kmad_sim_default_fabric();
	struct kmad_sim_node_info info;
	unsigned int n, nodes, peer;
	u8 p, peer_port;
	int ret;

	if (!fab) {
		pr_err("kmad_sim has no default fabric\n");
		return -ENODEV;
	}
	nodes = kmad_sim_num_nodes(fab);
	for (n = 0; n < nodes; n++) {
		ret = kmad_sim_node_info(fab, n, &info);
		if (ret)
			return ret;
		pr_info("node %u type %d ports %u guid 0x%016llx lid %u name %s\n",
			n, info.type, info.num_ports, info.guid, info.lid,
			info.name);
		for (p = 1; p <= info.num_ports; p++) {
			pr_info("port %u %u lid %u\n", n, p,
				kmad_sim_port_lid(fab, n, p));
			if (!kmad_sim_link_peer(fab, n, p, &peer, &peer_port))
				pr_info("link %u %u %u %u\n", n, p, peer,
					peer_port);
		}
	}
	if (sm_dev && *sm_dev) {
		ret = diags_sm_start();
		if (ret)
			return ret;
	}
	pr_info("end %u\n", nodes);
	return 0;
}

static void __exit kmad_diags_exit(void)
{
	diags_sm_stop();
}

module_init(kmad_diags_init);
module_exit(kmad_diags_exit);

MODULE_DESCRIPTION("kmad: kmad_sim's fabric, described for make diags");
MODULE_LICENSE("GPL");
