/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_tid_table: the hash table in which an agent finds its outstanding
 * requests by TID (tid.c).
 *
 * The agent's lock (irq-safe, so a ULP can post with interrupts off)
 * serializes every call; nothing here sleeps or allocates except
 * kmad_tid_init() and kmad_tid_resize(), which run in process context
 * without the lock and install their result with kmad_tid_swap() under
 * it.  Chains stay short because the table doubles when it holds more
 * than two entries a bucket and halves below one in eight; a table that
 * cannot grow (no memory) keeps working with longer chains.
 */
#ifndef KMAD_TID_H
#define KMAD_TID_H

#include <linux/list.h>
#include <linux/types.h>

/* 64 buckets at least; 2^20 at most (8 MiB of heads, 2M sends). */
#define KMAD_TID_MIN_BITS	6
#define KMAD_TID_MAX_BITS	20

/**
 * struct kmad_tid_entry - something findable by TID.
 * @node: in its bucket.
 * @tid: the key.
 */
struct kmad_tid_entry {
	struct hlist_node node;
	u64 tid;
};

/**
 * struct kmad_tid_table - the table.
 * @bucket: 2^@bits chain heads.
 * @bits: log2 of the number of buckets.
 * @count: entries in the table.
 */
struct kmad_tid_table {
	struct hlist_head *bucket;
	unsigned int bits;
	unsigned int count;
};

int kmad_tid_init(struct kmad_tid_table *t, gfp_t gfp);
void kmad_tid_destroy(struct kmad_tid_table *t);
struct kmad_tid_entry *kmad_tid_find(const struct kmad_tid_table *t, u64 tid);
int kmad_tid_add(struct kmad_tid_table *t, struct kmad_tid_entry *e);
void kmad_tid_clear(struct kmad_tid_table *t);
void kmad_tid_del(struct kmad_tid_table *t, struct kmad_tid_entry *e);
unsigned int kmad_tid_wanted_bits(const struct kmad_tid_table *t);
struct hlist_head *kmad_tid_alloc_buckets(unsigned int bits);
struct hlist_head *kmad_tid_swap(struct kmad_tid_table *t,
				 struct hlist_head *bucket,
				 unsigned int bits);
void kmad_tid_free_buckets(struct hlist_head *bucket);

#endif /* KMAD_TID_H */
