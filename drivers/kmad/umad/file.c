// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_umad: the file operations of /dev/infiniband/umadN and issmN, the
 * ib_umad ABI version 5 (include/uapi/rdma/ib_user_mad.h) as libibumad
 * uses it:
 *
 * - ioctl REGISTER_AGENT, REGISTER_AGENT2 and UNREGISTER_AGENT: a kmad
 *   agent per id, at most %UMAD_MAX_AGENTS per open file (-ENOMEM past
 *   that, as ib_umad).  A registration with a class but no method
 *   becomes a send-only kmad agent (kmad refuses an empty method mask;
 *   ib_mad takes it and delivers nothing unsolicited either).
 * - ioctl ENABLE_PKEY: 64-byte &struct ib_user_mad_hdr instead of the old
 *   56-byte one; refused (-EINVAL) once an agent was registered.
 *   REGISTER_AGENT2 implies it.
 * - write(): one header and one MAD of 36 to 256 bytes (shorter MADs are
 *   zero-padded); a request gets the agent's hi_tid in the upper 32 bits
 *   of its TID (kmad does it); timeouts and retries are kmad's.  For an
 *   agent registered with an RMPP version, a MAD of an RMPP class whose
 *   RMPP header is Active is an RMPP message of any length up to
 *   %UMAD_MAX_RMPP_LEN: its header (kmad_rmpp_hdr_len() of the class)
 *   and data, which kmad segments and sends (ib_umad's layout, RRespTime
 *   0); its timeout and retries are the ACK timeout and retries, for a
 *   response too.  An agent registered with an RMPP version (kernel or
 *   user RMPP) writing a MAD of a class without the RMPP header:
 *   -EINVAL, as ib_mad.
 * - read(): one header and MAD per call: a received MAD (status 0), or a
 *   request that timed out (status ETIMEDOUT, its 24-byte MAD header).  A
 *   buffer too small for the next packet gets -EINVAL and the packet stays
 *   first in the queue -- except an RMPP message kmad reassembled (longer
 *   than 256 bytes): a buffer that holds its first 256 bytes but not all
 *   of it gets them, with the header whose length says how much is
 *   needed, and -ENOSPC, and the message stays first in the queue
 *   (ib_umad's rule, which libibumad's umad_recv() relies on).
 *   O_NONBLOCK gives -EAGAIN on an empty queue; poll() says EPOLLIN when a
 *   packet waits, EPOLLERR once the port is gone.
 *
 * Errors, as ib_umad: a write shorter than header + 36 bytes, or than
 * header + the class's header (kmad_rmpp_hdr_len(): 56 bytes for SA), an
 * agent id of 32 or more, a duplicate outstanding TID (two requests, or
 * two responses to one destination): -EINVAL; an id with no
 * agent: -EIO; a MAD kmad refuses to post (a bad directed route, class
 * not matching the agent's QP): kmad's error, -EINVAL.  After the port is
 * gone: read and write -EIO, registration -EPIPE.
 *
 * RMPP is kmad's (Documentation/rmpp.rst): a registration's rmpp_version
 * goes to kmad, which refuses (-EINVAL) one it does not support, as
 * ib_mad does.  REGISTER_AGENT2's IB_USER_MAD_USER_RMPP (user space does
 * RMPP itself) registers a kmad agent without RMPP (rmpp_version 0, after
 * the same checks of the version asked): kmad then passes every RMPP
 * packet through, as single MADs both ways (mad.h, @rmpp_version).  Any
 * other flag is -EINVAL, with the supported one written back.  An agent
 * without kernel RMPP may write RMPP-active MADs sharing a TID (its
 * segments, its ACKs): the file's duplicate check skips them, as ib_umad's
 * does.
 */

#define pr_fmt(fmt) "kmad_umad: " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "umad.h"

/*
 * A packet on a file's send_list (from write() to its send_handler) or
 * recv_list (a received MAD, or a send that timed out, until read()).
 * @hdr is what read() returns; @mad_hdr is the sent MAD's header, with
 * the TID kmad gave it; @mad is the MAD written, or the one received
 * (@is_recv).
 */
struct umad_packet {
	struct list_head list;
	struct ib_user_mad_hdr hdr;
	struct kmad_send_buf *msg;
	bool is_recv;
	u32 length;
	struct kmad_mad_hdr mad_hdr;
	u8 mad[];
};

/*
 * The longest RMPP message write() takes (header and data); kmad may
 * refuse a shorter one (kmad_alloc_send_buf_rmpp()).
 */
#define UMAD_MAX_RMPP_LEN	(16U << 20)

static void umad_packet_free(struct umad_packet *packet)
{
	kvfree(packet);
}

/*
 * The header size of @file's reads and writes.  Under F it is the one the
 * next read copies; read() and write() also look before taking F, where a
 * concurrent first REGISTER_AGENT2 or ENABLE_PKEY of the same file may
 * change it (the caller's own race, as with ib_umad).
 */
static size_t umad_hdr_size(const struct umad_file *file)
{
	return READ_ONCE(file->use_pkey_index) ?
		sizeof(struct ib_user_mad_hdr) :
		sizeof(struct ib_user_mad_hdr_old);
}

static struct kmad_agent *umad_get_agent(struct umad_file *file, u32 id)
{
	lockdep_assert_held(&file->mutex);
	if (file->agents_dead || id >= UMAD_MAX_AGENTS)
		return NULL;
	return file->agents[array_index_nospec(id, UMAD_MAX_AGENTS)];
}

/*
 * Take agent @id (one umad_get_agent() finds) out of @file; the caller
 * unregisters it once F is dropped, as its handlers take F.
 */
static struct kmad_agent *umad_take_agent(struct umad_file *file, u32 id)
{
	struct kmad_agent *agent;

	lockdep_assert_held(&file->mutex);
	id = array_index_nospec(id, UMAD_MAX_AGENTS);
	agent = file->agents[id];
	file->agents[id] = NULL;
	file->agent_rmpp[id] = false;
	file->agent_rmpp_only[id] = false;
	return agent;
}

unsigned int umad_recv_queue_bytes = UMAD_MAX_RECV_BYTES;
module_param_named(recv_queue_bytes, umad_recv_queue_bytes, uint, 0644);
MODULE_PARM_DESC(recv_queue_bytes,
		 "bytes of received MADs one open umadN holds unread, at most (one MAD is always taken)");

/* Context: F held.  Would a received MAD of @len bytes overfill @file? */
static bool umad_recv_full(const struct umad_file *file, size_t len)
{
	size_t max = READ_ONCE(umad_recv_queue_bytes);

	lockdep_assert_held(&file->mutex);
	/* ib_umad's count: every packet waiting, timeout records too. */
	if (file->recv_count > UMAD_MAX_RECV_LIST)
		return true;
	/* With no received MAD waiting, one of any length is taken. */
	return file->recv_bytes && (len > max || file->recv_bytes > max - len);
}

/* Context: F held.  Put @packet back first in @file's queue for read(). */
static void umad_requeue_first(struct umad_file *file,
			       struct umad_packet *packet)
{
	lockdep_assert_held(&file->mutex);
	list_add(&packet->list, &file->recv_list);
	file->recv_count++;
	if (packet->is_recv)
		file->recv_bytes += packet->length;
	/* Another reader may have found the queue empty meanwhile. */
	wake_up_interruptible(&file->recv_wait);
}

/*
 * Queue @packet for read() under the id @agent has in @file.  Fails if
 * the agent has left the file (unregistering: -ENOENT) or, for a received
 * MAD, the queue is full (-ENOSPC); the caller then frees the packet.
 */
static int umad_queue_packet(struct umad_file *file, struct kmad_agent *agent,
			     struct umad_packet *packet, bool is_recv)
{
	int ret = -ENOENT;
	u32 id;

	mutex_lock(&file->mutex);
	if (is_recv && umad_recv_full(file, packet->length)) {
		ret = -ENOSPC;
		goto unlock;
	}
	for (id = 0; id < UMAD_MAX_AGENTS; id++) {
		if (umad_get_agent(file, id) != agent)
			continue;
		packet->hdr.id = id;
		/* Under F: the header size the read will copy, even if the
		 * file's first REGISTER_AGENT2 just changed it.
		 */
		packet->hdr.length = umad_hdr_size(file) + packet->length;
		list_add_tail(&packet->list, &file->recv_list);
		file->recv_count++;
		if (is_recv)
			file->recv_bytes += packet->length;
		wake_up_interruptible(&file->recv_wait);
		ret = 0;
		break;
	}
unlock:
	mutex_unlock(&file->mutex);
	return ret;
}

static void umad_dequeue_send(struct umad_file *file,
			      struct umad_packet *packet)
{
	spin_lock_irq(&file->send_lock);
	list_del(&packet->list);
	spin_unlock_irq(&file->send_lock);
}

/* kmad's send_handler: a timed-out request becomes an ETIMEDOUT record. */
static void umad_send_handler(struct kmad_agent *agent,
			      struct kmad_send_wc *wc)
{
	struct umad_file *file = agent->context;
	struct umad_packet *packet = wc->send_buf->context[0];

	umad_dequeue_send(file, packet);
	kmad_free_send_buf(packet->msg);
	packet->msg = NULL;
	if (wc->status == KMAD_SEND_RESP_TIMEOUT) {
		packet->length = sizeof(packet->mad_hdr);
		packet->hdr.status = ETIMEDOUT;
		if (!umad_queue_packet(file, agent, packet, false))
			return;
	}
	umad_packet_free(packet);
}

/* kmad's recv_handler: a response or an unsolicited MAD for the agent. */
static void umad_recv_handler(struct kmad_agent *agent,
			      struct kmad_send_buf *request,
			      struct kmad_recv_wc *wc)
{
	struct umad_file *file = agent->context;
	struct umad_packet *packet;
	int ret;

	/* An RMPP message kmad reassembled may be large: kvzalloc. */
	packet = kvzalloc(struct_size(packet, mad, wc->mad_len), GFP_KERNEL);
	if (!packet)
		goto dropped;
	/*
	 * Copied: kmad's receive buffers live in a slab cache without a
	 * usercopy region, and the receive is given back at once.
	 */
	memcpy(packet->mad, wc->mad, wc->mad_len);
	packet->is_recv = true;
	packet->length = wc->mad_len;
	packet->hdr.qpn = cpu_to_be32(wc->src_qpn);
	packet->hdr.lid = cpu_to_be16(wc->slid);
	packet->hdr.sl = wc->sl;
	packet->hdr.path_bits = wc->dlid_path_bits;
	packet->hdr.pkey_index = wc->pkey_index;
	packet->hdr.grh_present = wc->grh_present;
	if (wc->grh_present) {
		struct kmad_dest dest;

		/*
		 * The address to answer to, as ib_umad gives it
		 * (ib_init_ah_attr_from_wc()): the sender's GID, the index
		 * of the port's GID the MAD was sent to, the hop limit to
		 * answer with.  A MAD sent to none of the port's GIDs (a
		 * multicast DGID) is dropped, as there.
		 */
		if (kmad_dest_from_wc(agent->port, wc, &dest) ||
		    !dest.grh_present) {
			umad_packet_free(packet);
			goto dropped;
		}
		memcpy(packet->hdr.gid, dest.grh.dgid.raw, 16);
		packet->hdr.gid_index = dest.grh.sgid_index;
		packet->hdr.hop_limit = dest.grh.hop_limit;
		packet->hdr.traffic_class = dest.grh.traffic_class;
		packet->hdr.flow_label = cpu_to_be32(dest.grh.flow_label);
	}
	ret = umad_queue_packet(file, agent, packet, true);
	if (!ret)
		goto out_free_recv;
	umad_packet_free(packet);
	/* For an agent leaving the file: not a drop, nobody asks for it. */
	if (ret == -ENOENT)
		goto out_free_recv;
dropped:
	atomic64_inc(&file->port->recv_dropped);
out_free_recv:
	kmad_free_recv(wc);
}

static ssize_t umad_copy_packet(struct umad_file *file, char __user *buf,
				struct umad_packet *packet, size_t count)
{
	size_t hdr_len = umad_hdr_size(file);
	size_t len = packet->length;
	const void *mad;

	if (count < hdr_len + len) {
		/*
		 * A reassembled RMPP message: its first segment, whose
		 * header says how long it is, and -ENOSPC (ib_umad's
		 * copy_recv_mad()).
		 */
		if (!packet->is_recv || len <= KMAD_MAD_SIZE ||
		    count < hdr_len + KMAD_MAD_SIZE)
			return -EINVAL;
		len = KMAD_MAD_SIZE;
	}
	if (copy_to_user(buf, &packet->hdr, hdr_len))
		return -EFAULT;
	mad = packet->is_recv ? (const void *)packet->mad :
				(const void *)&packet->mad_hdr;
	if (copy_to_user(buf + hdr_len, mad, len))
		return -EFAULT;
	if (len < packet->length)
		return -ENOSPC;
	return hdr_len + len;
}

static ssize_t umad_read(struct file *filp, char __user *buf, size_t count,
			 loff_t *pos)
{
	struct umad_file *file = filp->private_data;
	struct umad_packet *packet;
	ssize_t ret;

	if (count < umad_hdr_size(file))
		return -EINVAL;

	mutex_lock(&file->mutex);
	while (list_empty(&file->recv_list) && !file->agents_dead) {
		mutex_unlock(&file->mutex);
		if (filp->f_flags & O_NONBLOCK)
			return -EAGAIN;
		if (wait_event_interruptible(file->recv_wait,
					     !list_empty(&file->recv_list) ||
					     READ_ONCE(file->agents_dead)))
			return -ERESTARTSYS;
		mutex_lock(&file->mutex);
	}
	if (file->agents_dead) {
		mutex_unlock(&file->mutex);
		return -EIO;
	}
	/*
	 * Taken off the queue, and copied without F, which the file's
	 * handlers take (a copy may fault and wait, ib_umad's read copies
	 * without its mutex too).  A failed copy puts it back first.
	 */
	packet = list_first_entry(&file->recv_list, struct umad_packet, list);
	list_del(&packet->list);
	file->recv_count--;
	if (packet->is_recv)
		file->recv_bytes -= packet->length;
	mutex_unlock(&file->mutex);
	ret = umad_copy_packet(file, buf, packet, count);
	if (ret < 0) {
		mutex_lock(&file->mutex);
		umad_requeue_first(file, packet);
		mutex_unlock(&file->mutex);
		return ret;
	}
	umad_packet_free(packet);
	return ret;
}

/* ib_umad's same_destination(): the LIDs, or the GIDs, of two headers. */
static bool umad_same_dest(const struct ib_user_mad_hdr *a,
			   const struct ib_user_mad_hdr *b)
{
	if (!a->grh_present && !b->grh_present)
		return a->lid == b->lid;
	if (a->grh_present && b->grh_present)
		return !memcmp(a->gid, b->gid, sizeof(a->gid));
	return false;
}

/*
 * ib_umad's rule (is_duplicate()): among the file's sends still
 * outstanding, two requests may not share a TID and class, nor two
 * responses a TID, class and destination (a response stays outstanding
 * until its send completion; an RMPP one until its final ACK).  Except
 * an RMPP-active MAD of an agent without kernel RMPP (@user_rmpp), whose
 * segments and ACKs share their transfer's TID.
 */
static bool umad_is_duplicate(struct umad_file *file,
			      const struct umad_packet *packet, bool user_rmpp)
{
	const struct kmad_mad_hdr *hdr = &packet->mad_hdr;
	bool resp = kmad_mad_is_response(hdr);
	struct umad_packet *sent;

	lockdep_assert_held(&file->send_lock);
	if (user_rmpp)
		return false;
	list_for_each_entry(sent, &file->send_list, list) {
		if (sent->mad_hdr.tid != hdr->tid ||
		    sent->mad_hdr.mgmt_class != hdr->mgmt_class ||
		    kmad_mad_is_response(&sent->mad_hdr) != resp)
			continue;
		if (!resp || umad_same_dest(&packet->hdr, &sent->hdr))
			return true;
	}
	return false;
}

/*
 * The header's qkey is not read: ib_umad's sends all carry
 * IB_QP_SET_QKEY, so that the QP's own Q_Key goes out (QP1's, 0x80010000,
 * on a GSI agent; QP0's 0 on an SMI one), whatever the header says (a
 * received header's is 0, and a responder may write it back as it is).
 */
static void umad_hdr_to_dest(const struct umad_file *file,
			     const struct kmad_agent *agent,
			     const struct ib_user_mad_hdr *hdr,
			     struct kmad_dest *dest)
{
	memset(dest, 0, sizeof(*dest));
	dest->dlid = be16_to_cpu(hdr->lid);
	dest->remote_qpn = be32_to_cpu(hdr->qpn);
	dest->remote_qkey = agent->qpt == KMAD_QPT_GSI ? KMAD_QP1_QKEY : 0;
	dest->sl = hdr->sl;
	dest->src_path_bits = hdr->path_bits;
	if (file->use_pkey_index)
		dest->pkey_index = hdr->pkey_index;
	dest->grh_present = hdr->grh_present;
	if (hdr->grh_present) {
		memcpy(dest->grh.dgid.raw, hdr->gid, 16);
		dest->grh.flow_label = be32_to_cpu(hdr->flow_label);
		dest->grh.sgid_index = hdr->gid_index;
		dest->grh.hop_limit = hdr->hop_limit;
		dest->grh.traffic_class = hdr->traffic_class;
	}
}

/*
 * An RMPP message of @len bytes at @ubuf (ib_umad's layout: the class's
 * header, then the data) as a kmad multi-segment send buffer: the header
 * goes into the first segment (kmad repeats it in the others), the data
 * is cut into the segments' data areas.  Through a bounce buffer: kmad's
 * segments are not meant for copy_from_user().
 */
static struct kmad_send_buf *umad_rmpp_msg(struct kmad_agent *agent,
					   const struct kmad_dest *dest,
					   const struct kmad_mad *first,
					   const char __user *ubuf, size_t len)
{
	unsigned int hdr_len = kmad_rmpp_hdr_len(first->mad_hdr.mgmt_class);
	size_t seg_data = KMAD_MAD_SIZE - hdr_len, off, n;
	struct kmad_rmpp_mad *first_seg;
	struct kmad_send_buf *msg;
	unsigned int seg;
	u8 *data;

	if (len < hdr_len)
		return ERR_PTR(-EINVAL);
	data = kvmalloc(len, GFP_KERNEL_ACCOUNT);
	if (!data)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(data, ubuf, len)) {
		msg = ERR_PTR(-EFAULT);
		goto out;
	}
	/*
	 * The MAD's start as first read, which the checks of umad_write()
	 * judged (class, method, RMPP flags): another thread of the writer
	 * may have changed the user's buffer since.  As ib_umad, which copies
	 * its first read of the header into the message.
	 */
	memcpy(data, first, min_t(size_t, len, KMAD_MAD_SIZE));
	msg = kmad_alloc_send_buf_rmpp(agent, dest, hdr_len, len - hdr_len,
				       GFP_KERNEL);
	if (IS_ERR(msg))
		goto out;
	first_seg = (struct kmad_rmpp_mad *)kmad_send_buf_seg(msg, 1);
	memcpy(first_seg, data, hdr_len);
	/*
	 * As ib_umad: RRespTime 0 in every segment (it copies the common
	 * header and what follows the RMPP header; the RMPP header is the
	 * kernel's).
	 */
	first_seg->rmpp_hdr.rmpp_rtime_flags &= KMAD_RMPP_FLAGS_MASK;
	for (seg = 1, off = hdr_len; off < len; seg++, off += n) {
		n = min(len - off, seg_data);
		memcpy((u8 *)kmad_send_buf_seg(msg, seg) + hdr_len, data + off,
		       n);
	}
out:
	kvfree(data);
	return msg;
}

static ssize_t umad_write(struct file *filp, const char __user *buf,
			  size_t count, loff_t *pos)
{
	struct umad_file *file = filp->private_data;
	size_t hdr_len = umad_hdr_size(file);
	struct umad_packet *packet;
	struct kmad_agent *agent;
	struct kmad_send_buf *msg;
	struct kmad_dest dest;
	size_t mad_len;
	bool active, kernel_rmpp, rmpp;
	int ret;

	if (count < hdr_len + KMAD_RMPP_MAD_HDR_SIZE ||
	    count > hdr_len + UMAD_MAX_RMPP_LEN)
		return -EINVAL;
	mad_len = count - hdr_len;

	/* Zeroed: a MAD shorter than 256 bytes is padded with zeros. */
	packet = kzalloc(struct_size(packet, mad, KMAD_MAD_SIZE),
			 GFP_KERNEL_ACCOUNT);
	if (!packet)
		return -ENOMEM;
	if (copy_from_user(&packet->hdr, buf, hdr_len)) {
		ret = -EFAULT;
		goto err_free_packet;
	}
	if (packet->hdr.id >= UMAD_MAX_AGENTS) {
		ret = -EINVAL;
		goto err_free_packet;
	}
	/*
	 * Through a buffer of the packet's: kmad's send buffers live in a
	 * slab cache without a usercopy region.
	 */
	if (copy_from_user(packet->mad, buf + hdr_len,
			   min_t(size_t, mad_len, KMAD_MAD_SIZE))) {
		ret = -EFAULT;
		goto err_free_packet;
	}

	mutex_lock(&file->mutex);
	agent = umad_get_agent(file, packet->hdr.id);
	if (!agent) {
		ret = -EIO;
		goto err_unlock;
	}
	/* As ib_umad: at least the class's header (56 bytes for SA). */
	if (mad_len < kmad_rmpp_hdr_len(packet->mad[1])) {
		ret = -EINVAL;
		goto err_unlock;
	}
	/* Kernel RMPP for a kernel-RMPP agent, else user RMPP (or none). */
	active = kmad_rmpp_active((const struct kmad_mad *)packet->mad);
	kernel_rmpp = file->agent_rmpp[array_index_nospec(packet->hdr.id,
							  UMAD_MAX_AGENTS)];
	rmpp = active && kernel_rmpp;
	if (!rmpp && mad_len > KMAD_MAD_SIZE) {
		ret = -EINVAL;
		goto err_unlock;
	}
	/*
	 * As ib_mad's ib_post_send_mad(): an agent registered with an RMPP
	 * version (kernel or user RMPP, a send-only one too) sends only
	 * classes with the RMPP header.
	 */
	if (file->agent_rmpp_only[array_index_nospec(packet->hdr.id,
						     UMAD_MAX_AGENTS)] &&
	    !kmad_mgmt_class_has_rmpp(packet->mad[1])) {
		ret = -EINVAL;
		goto err_unlock;
	}
	umad_hdr_to_dest(file, agent, &packet->hdr, &dest);
	if (rmpp)
		msg = umad_rmpp_msg(agent, &dest,
				    (const struct kmad_mad *)packet->mad,
				    buf + hdr_len, mad_len);
	else
		msg = kmad_alloc_send_buf(agent, &dest, GFP_KERNEL);
	if (IS_ERR(msg)) {
		ret = PTR_ERR(msg);
		goto err_unlock;
	}
	if (!rmpp)
		memcpy(msg->mad, packet->mad, KMAD_MAD_SIZE);
	/*
	 * As ib_umad: a kernel-RMPP agent's MAD of an RMPP class without
	 * the Active flag goes with an RMPP header of zeros (ib_umad copies
	 * the common header and the data after the RMPP header into a
	 * zeroed buffer).
	 */
	if (!active && kernel_rmpp &&
	    kmad_mgmt_class_has_rmpp(msg->mad->mad_hdr.mgmt_class))
		memset(&((struct kmad_rmpp_mad *)msg->mad)->rmpp_hdr, 0,
		       sizeof(struct kmad_rmpp_hdr));
	/* ib_umad takes any __u32: beyond INT_MAX ms its timeout is, in
	 * effect, never (msecs_to_jiffies() saturates).  kmad's longest
	 * (24.8 days) is as good; refusing it broke writes ib_umad takes.
	 */
	msg->timeout_ms = min_t(u32, packet->hdr.timeout_ms,
				KMAD_MAX_TIMEOUT_MS);
	msg->retries = packet->hdr.retries;
	/*
	 * A response waits for nothing.  libibmad's mad_respond_via() writes
	 * responses with its default timeout; ib_mad takes that (and later
	 * reports the response as timed out), kmad refuses it: drop it.  An
	 * RMPP response keeps them: they time its ACKs.
	 */
	if (!rmpp && kmad_mad_is_response(&msg->mad->mad_hdr)) {
		msg->timeout_ms = 0;
		msg->retries = 0;
	}
	msg->context[0] = packet;
	packet->msg = msg;
	/* kmad writes the hi_tid when it posts; keep the TID it will use. */
	packet->mad_hdr = msg->mad->mad_hdr;
	if (!kmad_mad_is_response(&packet->mad_hdr))
		packet->mad_hdr.tid =
			cpu_to_be64((u64)agent->hi_tid << 32 |
				    (be64_to_cpu(packet->mad_hdr.tid) &
				     0xffffffffULL));

	spin_lock_irq(&file->send_lock);
	if (umad_is_duplicate(file, packet, active && !rmpp)) {
		spin_unlock_irq(&file->send_lock);
		ret = -EINVAL;
		goto err_free_msg;
	}
	list_add_tail(&packet->list, &file->send_list);
	spin_unlock_irq(&file->send_lock);

	ret = kmad_post_send(msg);
	if (ret)
		goto err_dequeue;
	mutex_unlock(&file->mutex);
	return count;

err_dequeue:
	umad_dequeue_send(file, packet);
err_free_msg:
	kmad_free_send_buf(msg);
err_unlock:
	mutex_unlock(&file->mutex);
err_free_packet:
	kfree(packet);
	return ret;
}

static __poll_t umad_poll(struct file *filp, struct poll_table_struct *wait)
{
	struct umad_file *file = filp->private_data;
	/* A send can always be written. */
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(filp, &file->recv_wait, wait);
	mutex_lock(&file->mutex);
	if (!list_empty(&file->recv_list))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (file->agents_dead)
		mask = EPOLLERR;
	mutex_unlock(&file->mutex);
	return mask;
}

/* ib_mad's MAX_MGMT_CLASS: the classes below it are in its tables. */
#define UMAD_MAX_MGMT_CLASS	0x50

/* What both registration ioctls ask for, in kmad's terms. */
struct umad_reg {
	u32 qpn;
	u8 mgmt_class;
	u8 class_version;
	u8 oui[3];
	u8 rmpp_version;
	bool user_rmpp;			/* IB_USER_MAD_USER_RMPP */
	bool oui_too_wide;		/* REGISTER_AGENT2's, above 24 bits */
	DECLARE_BITMAP(method_mask, KMAD_METHODS);
};

/*
 * Register an agent for @reg and store it in a free id of @file.
 * Return: the id, or -EPIPE (port gone), -EINVAL (QPN not 0 or 1, kmad
 * refused the registration, or it overlaps another agent's methods: as
 * ib_umad), -EPROTONOSUPPORT (QP0 on a port without one: as ib_umad),
 * -ENOMEM (no free id).
 */
static int umad_reg(struct umad_file *file, const struct umad_reg *reg)
{
	struct umad_port *port = file->port;
	struct kmad_reg_req req = {};
	struct kmad_agent *agent;
	bool any_method;
	int id;

	lockdep_assert_held(&port->file_mutex);
	lockdep_assert_held(&file->mutex);
	if (port->dead || file->agents_dead)
		return -EPIPE;
	if (reg->qpn > 1)
		return -EINVAL;
	for (id = 0; id < UMAD_MAX_AGENTS; id++)
		if (!file->agents[id])
			break;
	if (id == UMAD_MAX_AGENTS) {
		dev_notice_ratelimited(&port->dev,
				       "max agents (%u) reached\n",
				       UMAD_MAX_AGENTS);
		return -ENOMEM;
	}
	if (reg->mgmt_class && reg->oui_too_wide)
		return -EINVAL;
	/*
	 * Method 0 does not exist (libibmad's servers, ibping's, register
	 * all ones): dropped, so that a mask of it alone is no method, as
	 * an empty one is, and the agent is send-only.
	 */
	bitmap_copy(req.method_mask, reg->method_mask, KMAD_METHODS);
	clear_bit(0, req.method_mask);
	any_method = !bitmap_empty(req.method_mask, KMAD_METHODS);
	if (reg->mgmt_class && any_method) {
		req.mgmt_class = reg->mgmt_class;
		req.class_version = reg->class_version;
		/*
		 * Only vendor range 2 has an OUI, and ib_mad reads it only
		 * there; libibumad's umad_register() sends the OpenIB OUI
		 * with every class (OpenSM's SMI, SA and PerfMgr agents).
		 */
		if (kmad_mgmt_class_is_vendor_range2(reg->mgmt_class))
			memcpy(req.oui, reg->oui, sizeof(req.oui));
	}
	/*
	 * kmad checks it (-EINVAL for a class without RMPP), as ib_mad;
	 * a class registered without methods is a send-only kmad agent,
	 * which kmad lets do RMPP: check its class here, as ib_mad does.
	 */
	if (reg->rmpp_version && reg->mgmt_class &&
	    !kmad_mgmt_class_has_rmpp(reg->mgmt_class))
		return -EINVAL;
	/* Likewise the class version, which ib_mad checks for any class. */
	if (reg->mgmt_class && reg->class_version >= KMAD_MAX_CLASS_VERSION)
		return -EINVAL;
	/*
	 * And, for a class without methods (a send-only kmad agent, which
	 * kmad checks no class of), what ib_mad checks of every class: none
	 * at or above 0x50 but 0x81, an OUI for vendor range 2, and the
	 * class's own QP.
	 */
	if (reg->mgmt_class && !any_method &&
	    ((reg->mgmt_class >= UMAD_MAX_MGMT_CLASS &&
	      reg->mgmt_class != KMAD_MGMT_CLASS_SUBN_DIRECTED_ROUTE) ||
	     (kmad_mgmt_class_is_vendor_range2(reg->mgmt_class) &&
	      !(reg->oui[0] | reg->oui[1] | reg->oui[2])) ||
	     kmad_is_smp_class(reg->mgmt_class) != !reg->qpn))
		return -EINVAL;
	/*
	 * User-level RMPP: for a class (ib_mad refuses the flag without
	 * one); the version asked is checked as kmad would check it (only
	 * %KMAD_RMPP_VERSION, only on QP1), and kmad gets none.
	 */
	if (reg->user_rmpp &&
	    (!reg->mgmt_class || (reg->rmpp_version &&
	     (reg->rmpp_version != KMAD_RMPP_VERSION || !reg->qpn))))
		return -EINVAL;
	req.rmpp_version = reg->user_rmpp ? 0 : reg->rmpp_version;
	agent = kmad_register_agent(port->kport,
				    reg->qpn ? KMAD_QPT_GSI : KMAD_QPT_SMI,
				    req.mgmt_class || req.rmpp_version ?
				    &req : NULL,
				    umad_send_handler, umad_recv_handler, file);
	if (IS_ERR(agent)) {
		/*
		 * ib_umad's codes for these two refusals (ib_mad's
		 * method_in_use() and its missing QP): libibumad's
		 * umad_register2() falls back to REGISTER_AGENT on EINVAL.
		 */
		switch (PTR_ERR(agent)) {
		case -EBUSY:
			return -EINVAL;
		case -EOPNOTSUPP:
			return -EPROTONOSUPPORT;
		}
		return PTR_ERR(agent);
	}
	file->agents[id] = agent;
	file->agent_rmpp[id] = req.rmpp_version;
	file->agent_rmpp_only[id] = reg->rmpp_version;
	return id;
}

/*
 * After umad_reg() (P and F held), with its result @id: write the new
 * agent's id to @uid.  If that fails the agent is unregistered again and
 * the file left as it was, as ib_umad does (it stores the agent only
 * once the id is written): else its class and methods would stay taken
 * by an id user space never learned.  @reg2: IB_USER_MAD_REGISTER_AGENT2,
 * whose first use selects the 64-byte header.  Drops F and P.
 */
static long umad_reg_finish(struct umad_file *file, int id,
			    void __user *uid, bool reg2)
{
	struct kmad_agent *agent = NULL;
	long ret = id;

	lockdep_assert_held(&file->port->file_mutex);
	lockdep_assert_held(&file->mutex);
	if (id >= 0) {
		if (put_user((u32)id, (u32 __user *)uid)) {
			agent = umad_take_agent(file, id);
			ret = -EFAULT;
		} else {
			if (reg2 && !file->already_used)
				WRITE_ONCE(file->use_pkey_index, true);
			file->already_used = true;
			ret = 0;
		}
	}
	mutex_unlock(&file->mutex);
	/* F dropped: its handlers may be waiting for it. */
	if (agent)
		kmad_unregister_agent(agent);
	mutex_unlock(&file->port->file_mutex);
	return ret;
}

/*
 * REGISTER_AGENT's method_mask is 128 bits as the caller's longs, as
 * libibumad fills it.  A 32-bit process on a 64-bit kernel (@compat) wrote
 * four 32-bit longs: word i holds methods 32i to 32i + 31, which 64-bit
 * longs hold in the other order on a big-endian host.  (As ib_umad does;
 * on little-endian hosts both are the same bytes.)
 */
static long umad_reg_agent(struct umad_file *file, void __user *arg,
			   bool compat)
{
	struct ib_user_mad_reg_req ureq;
	struct umad_reg reg = {};
	int ret;

	if (copy_from_user(&ureq, arg, sizeof(ureq)))
		return -EFAULT;
	reg.qpn = ureq.qpn;
	reg.mgmt_class = ureq.mgmt_class;
	reg.class_version = ureq.mgmt_class_version;
	reg.rmpp_version = ureq.rmpp_version;
	memcpy(reg.oui, ureq.oui, sizeof(reg.oui));
	if (compat)
		bitmap_from_arr32(reg.method_mask,
				  (const u32 *)ureq.method_mask,
				  KMAD_METHODS);
	else
		bitmap_copy(reg.method_mask,
			    (const unsigned long *)ureq.method_mask,
			    KMAD_METHODS);

	mutex_lock(&file->port->file_mutex);
	mutex_lock(&file->mutex);
	ret = umad_reg(file, &reg);
	return umad_reg_finish(file, ret, arg +
			       offsetof(struct ib_user_mad_reg_req, id), false);
}

static long umad_reg_agent2(struct umad_file *file, void __user *arg)
{
	struct ib_user_mad_reg_req2 ureq;
	struct umad_reg reg = {};
	int ret;

	if (copy_from_user(&ureq, arg, sizeof(ureq)))
		return -EFAULT;
	reg.user_rmpp = ureq.flags & IB_USER_MAD_USER_RMPP;
	reg.qpn = ureq.qpn;
	reg.mgmt_class = ureq.mgmt_class;
	reg.class_version = ureq.mgmt_class_version;
	reg.rmpp_version = ureq.rmpp_version;
	reg.oui_too_wide = ureq.oui & 0xff000000;
	reg.oui[0] = ureq.oui >> 16;
	reg.oui[1] = ureq.oui >> 8;
	reg.oui[2] = ureq.oui;
	bitmap_from_arr64(reg.method_mask, ureq.method_mask, KMAD_METHODS);

	mutex_lock(&file->port->file_mutex);
	mutex_lock(&file->mutex);
	/*
	 * In ib_umad's order: a dead port (EPIPE) and a bad QPN (EINVAL)
	 * first, as umad_reg() checks them; then a flag other than
	 * USER_RMPP, the one flag, written back; umad_reg() checks the
	 * rest (no free id, then an OUI above 24 bits with a class).
	 */
	if (!file->port->dead && !file->agents_dead && ureq.qpn <= 1 &&
	    (ureq.flags & ~IB_USER_MAD_REG_FLAGS_CAP)) {
		mutex_unlock(&file->mutex);
		mutex_unlock(&file->port->file_mutex);
		if (put_user((u32)IB_USER_MAD_REG_FLAGS_CAP,
			     (u32 __user *)(arg +
				offsetof(struct ib_user_mad_reg_req2, flags))))
			return -EFAULT;
		return -EINVAL;
	}
	ret = umad_reg(file, &reg);
	return umad_reg_finish(file, ret, arg +
			       offsetof(struct ib_user_mad_reg_req2, id), true);
}

static long umad_unreg_agent(struct umad_file *file, u32 __user *arg)
{
	struct kmad_agent *agent = NULL;
	int ret = 0;
	u32 id;

	if (get_user(id, arg))
		return -EFAULT;
	if (id >= UMAD_MAX_AGENTS)
		return -EINVAL;

	mutex_lock(&file->port->file_mutex);
	mutex_lock(&file->mutex);
	if (umad_get_agent(file, id))
		agent = umad_take_agent(file, id);
	else
		ret = -EINVAL;
	mutex_unlock(&file->mutex);
	/* F dropped: its handlers may be waiting for it. */
	if (agent)
		kmad_unregister_agent(agent);
	mutex_unlock(&file->port->file_mutex);
	return ret;
}

static long umad_enable_pkey(struct umad_file *file)
{
	long ret = 0;

	mutex_lock(&file->mutex);
	if (file->already_used)
		ret = -EINVAL;
	else
		WRITE_ONCE(file->use_pkey_index, true);
	mutex_unlock(&file->mutex);
	return ret;
}

static long umad_do_ioctl(struct file *filp, unsigned int cmd,
			  void __user *arg, bool compat)
{
	struct umad_file *file = filp->private_data;

	switch (cmd) {
	case IB_USER_MAD_REGISTER_AGENT:
		return umad_reg_agent(file, arg, compat);
	case IB_USER_MAD_UNREGISTER_AGENT:
		return umad_unreg_agent(file, arg);
	case IB_USER_MAD_ENABLE_PKEY:
		return umad_enable_pkey(file);
	case IB_USER_MAD_REGISTER_AGENT2:
		return umad_reg_agent2(file, arg);
	default:
		return -ENOIOCTLCMD;
	}
}

static long umad_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	return umad_do_ioctl(filp, cmd, (void __user *)arg, false);
}

#ifdef CONFIG_COMPAT
/* Every argument is a pointer; only REGISTER_AGENT's mask differs. */
static long umad_compat_ioctl(struct file *filp, unsigned int cmd,
			      unsigned long arg)
{
	return umad_do_ioctl(filp, cmd, compat_ptr(arg), true);
}
#endif

static int umad_open(struct inode *inode, struct file *filp)
{
	struct umad_port *port = container_of(inode->i_cdev, struct umad_port,
					      cdev);
	struct umad_file *file;
	int ret;

	file = kzalloc(sizeof(*file), GFP_KERNEL);
	if (!file)
		return -ENOMEM;
	mutex_init(&file->mutex);
	INIT_LIST_HEAD(&file->recv_list);
	init_waitqueue_head(&file->recv_wait);
	spin_lock_init(&file->send_lock);
	INIT_LIST_HEAD(&file->send_list);
	file->port = port;

	mutex_lock(&port->file_mutex);
	if (port->dead) {
		ret = -ENXIO;
		goto err_unlock;
	}
	ret = nonseekable_open(inode, filp);
	if (ret)
		goto err_unlock;
	get_device(&port->dev);
	filp->private_data = file;
	list_add_tail(&file->port_entry, &port->files);
	mutex_unlock(&port->file_mutex);
	return 0;

err_unlock:
	mutex_unlock(&port->file_mutex);
	kfree(file);
	return ret;
}

/*
 * Take every agent away from @file and unregister them: each outstanding
 * send gets its (flushed) callback, which frees it.  Caller holds P.
 */
static void umad_file_stop(struct umad_file *file, bool dead)
{
	struct kmad_agent *agents[UMAD_MAX_AGENTS];
	unsigned int i;

	lockdep_assert_held(&file->port->file_mutex);
	mutex_lock(&file->mutex);
	memcpy(agents, file->agents, sizeof(agents));
	memset(file->agents, 0, sizeof(file->agents));
	memset(file->agent_rmpp, 0, sizeof(file->agent_rmpp));
	memset(file->agent_rmpp_only, 0, sizeof(file->agent_rmpp_only));
	if (dead)
		WRITE_ONCE(file->agents_dead, true);
	mutex_unlock(&file->mutex);
	wake_up_interruptible(&file->recv_wait);
	for (i = 0; i < UMAD_MAX_AGENTS; i++)
		if (agents[i])
			kmad_unregister_agent(agents[i]);
}

/**
 * umad_file_kill_port() - the port is going away: stop every open file.
 * @port: the port, dead already.
 *
 * Context: the kmad client's remove callback, or its add callback failing
 * after umadN was created; takes P and F.
 */
void umad_file_kill_port(struct umad_port *port)
{
	struct umad_file *file;

	mutex_lock(&port->file_mutex);
	list_for_each_entry(file, &port->files, port_entry)
		umad_file_stop(file, true);
	mutex_unlock(&port->file_mutex);
}

static int umad_release(struct inode *inode, struct file *filp)
{
	struct umad_file *file = filp->private_data;
	struct umad_port *port = file->port;
	struct umad_packet *packet, *next;

	mutex_lock(&port->file_mutex);
	umad_file_stop(file, false);
	list_del(&file->port_entry);
	mutex_unlock(&port->file_mutex);

	/* No agent is left: nothing adds to the lists any more. */
	WARN_ON(!list_empty(&file->send_list));
	list_for_each_entry_safe(packet, next, &file->recv_list, list)
		umad_packet_free(packet);
	mutex_destroy(&file->mutex);
	kfree(file);
	put_device(&port->dev);
	return 0;
}

const struct file_operations umad_fops = {
	.owner = THIS_MODULE,
	.read = umad_read,
	.write = umad_write,
	.poll = umad_poll,
	.unlocked_ioctl = umad_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = umad_compat_ioctl,
#endif
	.open = umad_open,
	.release = umad_release,
	.llseek = no_llseek,
};

/*
 * issmN: one holder at a time; while it is open the port's
 * CapabilityMask has IsSM (umad_port_set_sm()).  O_NONBLOCK: -EAGAIN if
 * another holds it.
 */
static int umad_sm_open(struct inode *inode, struct file *filp)
{
	struct umad_port *port = container_of(inode->i_cdev, struct umad_port,
					      sm_cdev);
	int ret;

	if (filp->f_flags & O_NONBLOCK) {
		if (down_trylock(&port->sm_sem))
			return -EAGAIN;
	} else if (down_interruptible(&port->sm_sem)) {
		return -ERESTARTSYS;
	}
	ret = nonseekable_open(inode, filp);
	if (ret)
		goto err_up;
	mutex_lock(&port->file_mutex);
	ret = port->dead ? -ENXIO : umad_port_set_sm(port, true);
	mutex_unlock(&port->file_mutex);
	if (ret)
		goto err_up;
	get_device(&port->sm_dev);
	filp->private_data = port;
	return 0;

err_up:
	up(&port->sm_sem);
	return ret;
}

static int umad_sm_close(struct inode *inode, struct file *filp)
{
	struct umad_port *port = filp->private_data;

	mutex_lock(&port->file_mutex);
	if (!port->dead)
		umad_port_set_sm(port, false);
	mutex_unlock(&port->file_mutex);
	up(&port->sm_sem);
	put_device(&port->sm_dev);
	return 0;
}

const struct file_operations umad_sm_fops = {
	.owner = THIS_MODULE,
	.open = umad_sm_open,
	.release = umad_sm_close,
	.llseek = no_llseek,
};
