// SPDX-License-Identifier: GPL-2.0
/*
 * kmad_wheel: a hierarchical timing wheel for an agent's response
 * deadlines.  O(1) to add, remove and expire an entry, whatever the number
 * outstanding, and exact: an entry is handed out by the first advance to a
 * time at or after its expiry, never before, and never later than that.
 *
 * Time is in the agent's clock (jiffies, or the provider's clock in step
 * mode).  Level 0 has one slot per tick for the next KMAD_WHEEL_SLOTS
 * ticks; each level above has slots KMAD_WHEEL_SLOTS times as wide.  An
 * entry goes to the lowest level whose span covers its expiry; when the
 * wheel's clock reaches the start of an upper slot, that slot's entries
 * are placed again one or more levels down ("cascade"), so each entry
 * moves at most KMAD_WHEEL_LEVELS - 1 times.  Expiries beyond the top
 * level's span are parked in its farthest slot and placed again from
 * there.  An advance further than the whole wheel spans (a clock that
 * jumped) does not turn it slot by slot: it visits every pending entry
 * once.  (The layout is the classic one of Varghese and Lauck, which
 * Linux's timers used before 4.8; unlike today's timer wheel it keeps
 * exact expiry times instead of trading them for fewer cascades.)
 *
 * The wheel does no locking and no timers: its owner serializes calls and
 * asks kmad_wheel_next() when to call kmad_wheel_advance().
 */

#include <kunit/visibility.h>
#include <linux/bitmap.h>
#include <linux/bug.h>
#include <linux/list_sort.h>
#include <linux/slab.h>

#include "wheel.h"

/* kmad_wheel_entry.slot of an entry on the due list. */
#define KMAD_WHEEL_DUE		KMAD_WHEEL_NR_SLOTS
/* Ticks the whole wheel spans: further expiries are parked in the top. */
#define KMAD_WHEEL_SPAN		(1ULL << (KMAD_WHEEL_LEVELS * KMAD_WHEEL_BITS))

static unsigned int level_shift(unsigned int level)
{
	return level * KMAD_WHEEL_BITS;
}

static unsigned int wheel_index(unsigned int level, u64 t)
{
	return (t >> level_shift(level)) & KMAD_WHEEL_MASK;
}

/**
 * kmad_wheel_init() - set up an empty wheel.
 * @w: the wheel.
 * @now: the current time: nothing before it will be added.
 * @gfp: allocation flags for the slot array.
 *
 * Return: 0 or -ENOMEM.
 */
int kmad_wheel_init(struct kmad_wheel *w, u64 now, gfp_t gfp)
{
	unsigned int i;

	w->slot = kmalloc_array(KMAD_WHEEL_NR_SLOTS, sizeof(*w->slot), gfp);
	if (!w->slot)
		return -ENOMEM;
	for (i = 0; i < KMAD_WHEEL_NR_SLOTS; i++)
		INIT_LIST_HEAD(&w->slot[i]);
	INIT_LIST_HEAD(&w->due);
	bitmap_zero(w->pending, KMAD_WHEEL_NR_SLOTS);
	w->clk = now;
	w->moves = 0;
	w->count = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_init);

/**
 * kmad_wheel_destroy() - free an empty wheel.
 * @w: the wheel.
 */
void kmad_wheel_destroy(struct kmad_wheel *w)
{
	WARN_ON_ONCE(w->count);
	kfree(w->slot);
	w->slot = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_destroy);

/**
 * kmad_wheel_clear() - empty the wheel at once, its clock kept.
 * @w: the wheel.
 *
 * The entries are left as they are; the caller must never
 * kmad_wheel_del() them.  Touches no entry.
 */
void kmad_wheel_clear(struct kmad_wheel *w)
{
	unsigned int i;

	for (i = 0; i < KMAD_WHEEL_NR_SLOTS; i++)
		INIT_LIST_HEAD(&w->slot[i]);
	INIT_LIST_HEAD(&w->due);
	bitmap_zero(w->pending, KMAD_WHEEL_NR_SLOTS);
	w->count = 0;
}

/* Put @e in the slot its expiry calls for, relative to the wheel's clock. */
static void wheel_place(struct kmad_wheel *w, struct kmad_wheel_entry *e)
{
	u64 t = e->expires, delta;
	unsigned int level, idx;

	if (t < w->clk)		/* late: expires at the next advance */
		t = w->clk;
	delta = t - w->clk;
	for (level = 0; level < KMAD_WHEEL_LEVELS - 1; level++) {
		if (delta < (1ULL << level_shift(level + 1)))
			break;
	}
	if (delta >= KMAD_WHEEL_SPAN)
		/* Beyond the top level: park in its farthest slot. */
		t = w->clk + KMAD_WHEEL_SPAN - 1;
	idx = level * KMAD_WHEEL_SLOTS + wheel_index(level, t);
	list_add_tail(&e->node, &w->slot[idx]);
	e->slot = idx;
	__set_bit(idx, w->pending);
}

/**
 * kmad_wheel_sync() - tell an empty wheel the time.
 * @w: the wheel.
 * @now: the current time.
 *
 * An empty wheel's clock may lag behind; moving it up to @now before an
 * add keeps new entries in the lowest level that holds them.  Does nothing
 * to a wheel with entries (kmad_wheel_advance() moves its clock).
 */
void kmad_wheel_sync(struct kmad_wheel *w, u64 now)
{
	if (!w->count && now > w->clk)
		w->clk = now;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_sync);

/**
 * kmad_wheel_add() - add an entry.
 * @w: the wheel.
 * @e: an entry not in any wheel.
 * @expires: when it expires.  An expiry before the wheel's clock (a time
 *	kmad_wheel_advance() has already passed) is taken as the clock: the
 *	entry comes out at the next advance to the clock or later, behind
 *	entries already in that slot.
 */
void kmad_wheel_add(struct kmad_wheel *w, struct kmad_wheel_entry *e,
		    u64 expires)
{
	e->expires = expires;
	wheel_place(w, e);
	w->count++;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_add);

/**
 * kmad_wheel_del() - remove an entry (pending or due).
 * @w: the wheel.
 * @e: an entry in @w.
 */
void kmad_wheel_del(struct kmad_wheel *w, struct kmad_wheel_entry *e)
{
	list_del(&e->node);
	if (e->slot != KMAD_WHEEL_DUE && list_empty(&w->slot[e->slot]))
		__clear_bit(e->slot, w->pending);
	if (!WARN_ON_ONCE(!w->count))
		w->count--;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_del);

/*
 * The next time at or after the wheel's clock at which slot @idx of @level
 * needs attention: its entries expire (level 0) or cascade (above).
 */
static u64 slot_time(const struct kmad_wheel *w, unsigned int level,
		     unsigned int idx)
{
	unsigned int shift = level_shift(level);
	unsigned int cur = wheel_index(level, w->clk);
	u64 period = (w->clk >> shift) - cur + idx;

	/* Level 0's current slot is due at clk itself; an upper level's
	 * current slot only if clk is exactly at its start (its cascade is
	 * still to come), else it comes round again a full turn later.
	 */
	if (idx < cur ||
	    (idx == cur && (w->clk & ((1ULL << shift) - 1))))
		period += KMAD_WHEEL_SLOTS;
	return period << shift;
}

/* The earliest time a pending (not yet due) slot needs attention. */
static bool wheel_next_pending(const struct kmad_wheel *w, u64 *when)
{
	unsigned int level, cur, idx, next;
	const unsigned long *bits;
	u64 best = U64_MAX, t;

	BUILD_BUG_ON(KMAD_WHEEL_SLOTS % BITS_PER_LONG);
	for (level = 0; level < KMAD_WHEEL_LEVELS; level++) {
		bits = w->pending + BIT_WORD(level * KMAD_WHEEL_SLOTS);
		cur = wheel_index(level, w->clk);
		/* The first pending slot from the current one, wrapping. */
		idx = find_next_bit(bits, KMAD_WHEEL_SLOTS, cur);
		if (idx >= KMAD_WHEEL_SLOTS)
			idx = find_first_bit(bits, KMAD_WHEEL_SLOTS);
		if (idx >= KMAD_WHEEL_SLOTS)
			continue;
		t = slot_time(w, level, idx);
		/* At an upper level, the current slot with the clock past
		 * its start comes round last; a slot after it comes sooner.
		 */
		if (level && idx == cur && t != w->clk) {
			next = find_next_bit(bits, KMAD_WHEEL_SLOTS, cur + 1);
			if (next >= KMAD_WHEEL_SLOTS)
				next = find_first_bit(bits, KMAD_WHEEL_SLOTS);
			t = min(t, slot_time(w, level, next));
		}
		best = min(best, t);
	}
	if (best == U64_MAX)
		return false;
	*when = best;
	return true;
}

/**
 * kmad_wheel_next() - when the wheel next needs kmad_wheel_advance().
 * @w: the wheel.
 * @when: set to that time (before the clock if entries are already due).
 *
 * This is the earliest time at which an entry expires or has to move down
 * a level; advancing to it may hand out nothing.
 *
 * Return: false if the wheel is empty.
 */
bool kmad_wheel_next(const struct kmad_wheel *w, u64 *when)
{
	if (!w->count)
		return false;
	if (!list_empty(&w->due)) {
		*when = w->clk ? w->clk - 1 : 0;
		return true;
	}
	return !WARN_ON_ONCE(!wheel_next_pending(w, when));
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_next);

/* Place slot @idx of @level's entries again, relative to the clock. */
static void wheel_cascade(struct kmad_wheel *w, unsigned int level,
			  unsigned int idx)
{
	unsigned int s = level * KMAD_WHEEL_SLOTS + idx;
	struct kmad_wheel_entry *e, *tmp;
	LIST_HEAD(moving);

	list_splice_init(&w->slot[s], &moving);
	__clear_bit(s, w->pending);
	list_for_each_entry_safe(e, tmp, &moving, node) {
		list_del(&e->node);
		wheel_place(w, e);
		w->moves++;
	}
}

static int wheel_cmp_expires(void *priv, const struct list_head *a,
			     const struct list_head *b)
{
	const struct kmad_wheel_entry *ea, *eb;

	ea = list_entry(a, struct kmad_wheel_entry, node);
	eb = list_entry(b, struct kmad_wheel_entry, node);
	return ea->expires > eb->expires;
}

/*
 * The clock jumped to @now, at least KMAD_WHEEL_SPAN past the wheel's:
 * turning the wheel up to it would cascade the top level's parked slot
 * once per KMAD_WHEEL_SPAN ticks, placing its entries again every time.
 * Instead each pending entry is visited once: one expiring by @now goes
 * to the due list, sorted by expiry (list_sort() keeps equal expiries in
 * their order), any other is placed again from the new clock.
 */
static void wheel_jump(struct kmad_wheel *w, u64 now)
{
	struct kmad_wheel_entry *e, *tmp;
	LIST_HEAD(pending);
	LIST_HEAD(due);
	unsigned int s;

	for_each_set_bit(s, w->pending, KMAD_WHEEL_NR_SLOTS)
		list_splice_tail_init(&w->slot[s], &pending);
	bitmap_zero(w->pending, KMAD_WHEEL_NR_SLOTS);
	w->clk = now + 1;
	list_for_each_entry_safe(e, tmp, &pending, node) {
		if (e->expires <= now) {
			list_move_tail(&e->node, &due);
			e->slot = KMAD_WHEEL_DUE;
		} else {
			list_del(&e->node);
			wheel_place(w, e);
			w->moves++;
		}
	}
	list_sort(NULL, &due, wheel_cmp_expires);
	list_splice_tail(&due, &w->due);
}

/**
 * kmad_wheel_advance() - hand out everything that expires up to @now.
 * @w: the wheel.
 * @now: the current time.
 *
 * Entries whose expiry is at or before @now move to the due list, in
 * expiry order; kmad_wheel_first_due() returns them.  They stay in the
 * wheel until kmad_wheel_del().
 *
 * What it costs does not grow with how far @now is: within the wheel's
 * span (2^24 ticks), one step per pending slot reached and each entry
 * moved at most once per level; beyond it, one pass over the pending
 * entries and a sort of those handed out.
 */
void kmad_wheel_advance(struct kmad_wheel *w, u64 now)
{
	struct kmad_wheel_entry *e, *tmp;
	unsigned int level, idx;
	u64 t;

	if (now >= w->clk && now - w->clk >= KMAD_WHEEL_SPAN) {
		wheel_jump(w, now);
		return;
	}
	while (wheel_next_pending(w, &t) && t <= now) {
		w->clk = t;
		/* At a slot boundary, cascade the levels whose index turns
		 * over here.  The order does not matter: each entry is
		 * placed by its distance from the clock, so one from the
		 * top level can land directly in level 0.
		 */
		for (level = KMAD_WHEEL_LEVELS - 1; level > 0; level--) {
			if (w->clk & ((1ULL << level_shift(level)) - 1))
				continue;
			idx = wheel_index(level, w->clk);
			if (test_bit(level * KMAD_WHEEL_SLOTS + idx, w->pending))
				wheel_cascade(w, level, idx);
		}
		idx = wheel_index(0, w->clk);
		list_for_each_entry_safe(e, tmp, &w->slot[idx], node) {
			list_move_tail(&e->node, &w->due);
			e->slot = KMAD_WHEEL_DUE;
		}
		__clear_bit(idx, w->pending);
		w->clk++;
	}
	if (now >= w->clk)
		w->clk = now + 1;
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_advance);

/**
 * kmad_wheel_first_due() - the oldest expired entry, or NULL.
 * @w: the wheel.
 *
 * The entry stays due until kmad_wheel_del() removes it.
 */
struct kmad_wheel_entry *kmad_wheel_first_due(struct kmad_wheel *w)
{
	return list_first_entry_or_null(&w->due,
					struct kmad_wheel_entry, node);
}
EXPORT_SYMBOL_IF_KUNIT(kmad_wheel_first_due);
