/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_wheel: a hierarchical timing wheel with exact expiry (wheel.c).
 * kmad keeps one per agent for the deadlines of its sends that wait for a
 * response; the agent's lock serializes every call.
 */
#ifndef KMAD_WHEEL_H
#define KMAD_WHEEL_H

#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/types.h>

/* 64 slots per level, 4 levels: exact for expiries up to 2^24 ticks
 * ahead (4.6 hours at HZ=1000), parked and placed again beyond.
 */
#define KMAD_WHEEL_BITS		6
#define KMAD_WHEEL_SLOTS	BIT(KMAD_WHEEL_BITS)
#define KMAD_WHEEL_MASK		(KMAD_WHEEL_SLOTS - 1)
#define KMAD_WHEEL_LEVELS	4
#define KMAD_WHEEL_NR_SLOTS	(KMAD_WHEEL_LEVELS * KMAD_WHEEL_SLOTS)

/**
 * struct kmad_wheel_entry - something with an expiry time in a wheel.
 * @expires: when it expires.
 * @slot: which slot list @node is on; KMAD_WHEEL_NR_SLOTS: the due list.
 * @node: in a slot's list, or the due list.
 *
 * @expires comes first: a send keeps it, for its lateness, in a union
 * with fields that are written when it leaves the wheel (kmad_priv.h).
 */
struct kmad_wheel_entry {
	u64 expires;
	unsigned int slot;
	struct list_head node;
};

/**
 * struct kmad_wheel - the wheel.
 * @clk: the next time kmad_wheel_advance() has not handled yet; every
 *	pending entry expires at or after it.
 * @count: entries, pending and due.
 * @pending: bit per slot: its list is not empty.
 * @due: expired entries, in expiry order, until kmad_wheel_del().
 * @slot: KMAD_WHEEL_NR_SLOTS slot lists, level by level (a 4 KiB array).
 * @moves: how many times an entry was placed again after its add (by a
 *	cascade or a clock jump), since kmad_wheel_init(): what advancing
 *	cost, which tests check.
 */
struct kmad_wheel {
	u64 clk;
	u64 moves;
	unsigned int count;
	DECLARE_BITMAP(pending, KMAD_WHEEL_NR_SLOTS);
	struct list_head due;
	struct list_head *slot;
};

int kmad_wheel_init(struct kmad_wheel *w, u64 now, gfp_t gfp);
void kmad_wheel_destroy(struct kmad_wheel *w);
void kmad_wheel_sync(struct kmad_wheel *w, u64 now);
void kmad_wheel_add(struct kmad_wheel *w, struct kmad_wheel_entry *e,
		    u64 expires);
void kmad_wheel_clear(struct kmad_wheel *w);
void kmad_wheel_del(struct kmad_wheel *w, struct kmad_wheel_entry *e);
bool kmad_wheel_next(const struct kmad_wheel *w, u64 *when);
void kmad_wheel_advance(struct kmad_wheel *w, u64 now);
struct kmad_wheel_entry *kmad_wheel_first_due(struct kmad_wheel *w);

#endif /* KMAD_WHEEL_H */
