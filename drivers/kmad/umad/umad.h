/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_umad private: the ib_umad user ABI (abi_version 5) over kmad.
 *
 * One &struct umad_port per kmad port, made by the kmad client's add
 * callback: the character devices umadN and issmN (class infiniband_mad)
 * and, with the first port of a kmad device, that device's entry in class
 * infiniband (&struct umad_ibdev, sysfs.c).  Every open umadN is a
 * &struct umad_file (file.c) holding up to %UMAD_MAX_AGENTS kmad agents.
 *
 * Locks, outermost first:
 *   M (umad_mutex, main.c): the port and device tables, umad_ibdevs.
 *   Q (&umad_ibdev.query_mutex, sysfs.c): a device's ports[].
 *   P (&umad_port.file_mutex): &umad_port.files, &umad_port.dead, and
 *	every registration or unregistration of a file's agents.
 *   F (&umad_file.mutex): the file's agents[], recv_list, flags.
 *   S (&umad_file.send_lock, a spinlock): the file's send_list.
 * kmad's agent handlers take F (never P): so an agent is always
 * unregistered with F dropped (its handlers may be waiting for F).
 *
 * Lifetimes: a &struct umad_port is freed when both of its struct devices
 * are released (&umad_port.refs counts them); an open file holds a
 * reference on the device it opened, so the port outlives its files.  The
 * kmad port (&umad_port.kport) may be used only while !dead: the remove
 * callback sets dead under P, takes every file's agents away and
 * unregisters them before it returns.
 */
#ifndef KMAD_UMAD_H
#define KMAD_UMAD_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_user_mad.h>

#include <kmad/mad.h>

/*
 * As ib_umad: agents per open file, ports (umadN minors), receive queue
 * (a received MAD is dropped when more than this many wait, so one more
 * may be queued).
 */
#define UMAD_MAX_AGENTS		32
#define UMAD_MAX_PORTS		64
#define UMAD_MAX_RECV_LIST	200000
/*
 * And the bytes of received MADs one file may hold unread (their
 * lengths): module parameter recv_queue_bytes, this by default.  ib_umad
 * has the count alone; a reassembled RMPP message can be megabytes, so
 * kmad_umad bounds the bytes too, as kmad bounds what waits for an
 * agent's handler.  One MAD is always taken when none waits.
 */
#define UMAD_MAX_RECV_BYTES	(64U << 20)
extern unsigned int umad_recv_queue_bytes;

struct umad_ibdev;

/**
 * struct umad_port - one kmad port as umadN and issmN.
 * @kport: the kmad port; only while !@dead (see above).
 * @index: N.
 * @ibdev: its device's class infiniband entry.
 * @dev: umadN.
 * @cdev: umadN's character device.
 * @sm_dev: issmN.
 * @sm_cdev: issmN's character device.
 * @sm_sem: held by the one open issmN.
 * @file_mutex: P.
 * @files: P: open umadN files, &umad_file.port_entry.
 * @dead: P: the kmad port is gone.
 * @recv_dropped: received MADs its files did not queue: a queue full
 *	(count or bytes), a failed allocation, a GRH to none of the port's
 *	GIDs.  sysfs umadN/recv_dropped.
 * @refs: one per struct device; the last release frees the port.
 */
struct umad_port {
	struct kmad_port *kport;
	unsigned int index;
	struct umad_ibdev *ibdev;
	struct device dev;
	struct cdev cdev;
	struct device sm_dev;
	struct cdev sm_cdev;
	struct semaphore sm_sem;
	struct mutex file_mutex;	/* P */
	struct list_head files;
	bool dead;
	atomic64_t recv_dropped;
	struct kref refs;
};

/**
 * struct umad_file - an open umadN.
 * @port: its port (a reference on @port->dev is held).
 * @port_entry: P: in &umad_port.files.
 * @mutex: F.
 * @agents: F: the agents by id; NULL: free.
 * @recv_list: F: packets for read(), &struct umad_packet.
 * @recv_count: F: packets on @recv_list (received MADs and timeout
 *	records, as ib_umad's recv_list_size).
 * @recv_bytes: F: the received MADs' lengths, summed.
 * @recv_wait: woken when @recv_list grows or the port dies.
 * @send_lock: S.
 * @send_list: S: posted sends, for the duplicate check.
 * @use_pkey_index: F: 64-byte headers (ENABLE_PKEY or REGISTER_AGENT2);
 *	read() and write() also read it without F (READ_ONCE()).
 * @already_used: F: an agent was registered; ENABLE_PKEY is refused.
 * @agents_dead: F: the port went away; every call fails.  read()'s
 *	wait also reads it without F (READ_ONCE()).
 */
struct umad_file {
	struct umad_port *port;
	struct list_head port_entry;
	struct mutex mutex;		/* F */
	struct kmad_agent *agents[UMAD_MAX_AGENTS];
	/* F: agents[i] was registered with an RMPP version: kmad does RMPP */
	bool agent_rmpp[UMAD_MAX_AGENTS];
	/*
	 * F: agents[i] was registered with an RMPP version, kernel or user
	 * RMPP (IB_USER_MAD_USER_RMPP): it may send RMPP classes only, as
	 * ib_mad's agent.rmpp_version makes it.
	 */
	bool agent_rmpp_only[UMAD_MAX_AGENTS];
	struct list_head recv_list;
	unsigned int recv_count;
	size_t recv_bytes;
	wait_queue_head_t recv_wait;
	spinlock_t send_lock;		/* S */
	struct list_head send_list;
	bool use_pkey_index;
	bool already_used;
	bool agents_dead;
};

/* file.c */
extern const struct file_operations umad_fops;
extern const struct file_operations umad_sm_fops;
void umad_file_kill_port(struct umad_port *port);

/* sysfs.c */
int umad_sysfs_init(void);
void umad_sysfs_exit(void);
struct umad_ibdev *umad_ibdev_get(struct kmad_port *kport);
void umad_ibdev_put(struct umad_ibdev *ibdev, struct kmad_port *kport);
int umad_port_set_sm(struct umad_port *port, bool is_sm);

#endif /* KMAD_UMAD_H */
