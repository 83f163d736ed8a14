// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_tid_table: an agent's outstanding requests by TID.
 *
 * A plain chained hash table under the agent's lock.  kmad cannot use the
 * kernel's rhashtable here: its bucket locks disable bottom halves, which
 * must not be re-enabled with interrupts off, and kmad_post_send() may be
 * called under the ULP's spin_lock_irqsave().  Resizing allocates, so it
 * is done by the agent's work (process context): kmad_tid_add() only
 * reports that the table wants another size.
 */

#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "tid.h"

static struct hlist_head *tid_bucket(const struct kmad_tid_table *t, u64 tid)
{
	return &t->bucket[hash_64(tid, t->bits)];
}

/**
 * kmad_tid_alloc_buckets() - allocate 2^@bits empty chain heads.
 * @bits: KMAD_TID_MIN_BITS..KMAD_TID_MAX_BITS.
 *
 * Context: process context, may sleep.
 * Return: the heads, or NULL.
 */
struct hlist_head *kmad_tid_alloc_buckets(unsigned int bits)
{
	struct hlist_head *bucket;
	size_t i, n = (size_t)1 << bits;

	/* A failure is handled (the table keeps its size): no warning. */
	bucket = kvmalloc_array(n, sizeof(*bucket), GFP_KERNEL | __GFP_NOWARN);
	if (bucket)
		for (i = 0; i < n; i++)
			INIT_HLIST_HEAD(&bucket[i]);
	return bucket;
}

void kmad_tid_free_buckets(struct hlist_head *bucket)
{
	kvfree(bucket);
}

/**
 * kmad_tid_init() - an empty table of the smallest size.
 * @t: the table.
 * @gfp: GFP_KERNEL (the only use: agent registration).
 *
 * Return: 0 or -ENOMEM.
 */
int kmad_tid_init(struct kmad_tid_table *t, gfp_t gfp)
{
	t->bits = KMAD_TID_MIN_BITS;
	t->count = 0;
	t->bucket = kmad_tid_alloc_buckets(t->bits);
	return t->bucket ? 0 : -ENOMEM;
}

/* Context: the table is empty and unreachable. */
void kmad_tid_destroy(struct kmad_tid_table *t)
{
	WARN_ON_ONCE(t->count);
	kmad_tid_free_buckets(t->bucket);
	t->bucket = NULL;
}

/**
 * kmad_tid_find() - the entry with @tid.
 * @t: the table.
 * @tid: the key.
 *
 * Return: the entry or NULL.
 */
struct kmad_tid_entry *kmad_tid_find(const struct kmad_tid_table *t, u64 tid)
{
	struct kmad_tid_entry *e;

	hlist_for_each_entry(e, tid_bucket(t, tid), node)
		if (e->tid == tid)
			return e;
	return NULL;
}

/**
 * kmad_tid_add() - add @e under its key, unless the key is taken.
 * @t: the table.
 * @e: the entry, @e->tid set.
 *
 * Return: 0, or -EEXIST.
 */
int kmad_tid_add(struct kmad_tid_table *t, struct kmad_tid_entry *e)
{
	if (kmad_tid_find(t, e->tid))
		return -EEXIST;
	hlist_add_head(&e->node, tid_bucket(t, e->tid));
	t->count++;
	return 0;
}

/**
 * kmad_tid_clear() - empty the table at once.
 * @t: the table.
 *
 * The entries' nodes are left as they are, unhashed only in the sense that
 * no chain leads to them: the caller must never kmad_tid_del() them.
 * O(buckets), touching no entry.
 */
void kmad_tid_clear(struct kmad_tid_table *t)
{
	size_t i, n = (size_t)1 << t->bits;

	for (i = 0; i < n; i++)
		INIT_HLIST_HEAD(&t->bucket[i]);
	t->count = 0;
}

void kmad_tid_del(struct kmad_tid_table *t, struct kmad_tid_entry *e)
{
	hlist_del_init(&e->node);
	t->count--;
}

/**
 * kmad_tid_wanted_bits() - the size the table should have for its count.
 * @t: the table.
 *
 * Return: @t->bits if the size is right, else the log2 of the bucket
 * count to resize to.
 */
unsigned int kmad_tid_wanted_bits(const struct kmad_tid_table *t)
{
	unsigned int bits = t->bits;

	while (bits < KMAD_TID_MAX_BITS && t->count > (2U << bits))
		bits++;
	while (bits > KMAD_TID_MIN_BITS && t->count < (1U << bits) / 8)
		bits--;
	return bits;
}

/**
 * kmad_tid_swap() - move every entry into @bucket (2^@bits heads).
 * @t: the table.
 * @bucket: empty heads from kmad_tid_alloc_buckets(@bits).
 * @bits: their log2.
 *
 * O(entries), under the agent's lock; happens only when the count has
 * doubled or fallen eightfold since the last resize.
 *
 * Return: the old heads, for kmad_tid_free_buckets() outside the lock.
 */
struct hlist_head *kmad_tid_swap(struct kmad_tid_table *t,
				 struct hlist_head *bucket,
				 unsigned int bits)
{
	struct hlist_head *old = t->bucket;
	size_t i, n = (size_t)1 << t->bits;
	struct kmad_tid_entry *e;
	struct hlist_node *tmp;

	for (i = 0; i < n; i++) {
		hlist_for_each_entry_safe(e, tmp, &old[i], node) {
			hlist_del(&e->node);
			hlist_add_head(&e->node, &bucket[hash_64(e->tid, bits)]);
		}
	}
	t->bucket = bucket;
	t->bits = bits;
	return old;
}
