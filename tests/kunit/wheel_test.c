// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for kmad's timing wheel (drivers/kmad/wheel.c): every entry
 * is handed out by the first advance that reaches its expiry, never
 * sooner, in expiry order; kmad_wheel_next() never lets one be late; and
 * removal at any point leaves nothing behind.  A randomized case checks
 * all of it against a plain array, over every level and beyond the top.
 */

#include <kunit/test.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "wheel.h"

#define WT_MAX		256

struct wt_entry {
	struct kmad_wheel_entry e;
	bool in;		/* in the wheel (pending or due) */
	bool due;		/* handed out */
};

struct wt {
	struct kunit *test;
	struct kmad_wheel w;
	struct wt_entry *ent;	/* [WT_MAX] */
	u64 now;
};

static int wt_init(struct kunit *test)
{
	struct wt *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	t->test = test;
	t->ent = kunit_kcalloc(test, WT_MAX, sizeof(*t->ent), GFP_KERNEL);
	if (!t->ent)
		return -ENOMEM;
	/* Start away from 0 and off any slot boundary. */
	t->now = 1000003;
	if (kmad_wheel_init(&t->w, t->now, GFP_KERNEL))
		return -ENOMEM;
	test->priv = t;
	return 0;
}

static void wt_exit(struct kunit *test)
{
	struct wt *t = test->priv;
	int i;

	if (!t)
		return;
	for (i = 0; i < WT_MAX; i++) {
		if (t->ent[i].in)
			kmad_wheel_del(&t->w, &t->ent[i].e);
	}
	kmad_wheel_destroy(&t->w);
}

static void wt_add(struct wt *t, int i, u64 expires)
{
	kmad_wheel_sync(&t->w, t->now);
	kmad_wheel_add(&t->w, &t->ent[i].e, expires);
	t->ent[i].in = true;
	t->ent[i].due = false;
}

static void wt_del(struct wt *t, int i)
{
	kmad_wheel_del(&t->w, &t->ent[i].e);
	t->ent[i].in = false;
	t->ent[i].due = false;
}

/*
 * Advance to @now and check what came out: exactly the entries that
 * expire by @now and were not due yet, in expiry order.  Due entries are
 * removed, as kmad does.  Returns how many came out.
 */
static int wt_advance(struct wt *t, u64 now)
{
	struct kunit *test = t->test;
	struct kmad_wheel_entry *e;
	u64 last = 0;
	int i, n = 0;

	t->now = now;
	kmad_wheel_advance(&t->w, now);
	while ((e = kmad_wheel_first_due(&t->w))) {
		struct wt_entry *we = container_of(e, struct wt_entry, e);

		KUNIT_EXPECT_TRUE(test, we->in);
		if (e->expires > now || e->expires < last)
			KUNIT_FAIL(test, "handed out %llu at %llu after %llu",
				   e->expires, now, last);
		last = e->expires;
		we->due = true;
		wt_del(t, we - t->ent);
		n++;
	}
	for (i = 0; i < WT_MAX; i++) {
		if (t->ent[i].in && t->ent[i].e.expires <= now)
			KUNIT_FAIL(test, "entry %d (expires %llu) missed at %llu",
				   i, t->ent[i].e.expires, now);
	}
	return n;
}

/*
 * Follow kmad_wheel_next() until the wheel is empty: every step must be
 * no later than the earliest expiry left.  Returns the number of steps.
 */
static int wt_run_out(struct wt *t)
{
	struct kunit *test = t->test;
	int i, steps = 0;
	u64 when, first;

	while (kmad_wheel_next(&t->w, &when)) {
		first = U64_MAX;
		for (i = 0; i < WT_MAX; i++) {
			if (t->ent[i].in)
				first = min(first, t->ent[i].e.expires);
		}
		KUNIT_ASSERT_NE(test, first, U64_MAX);
		KUNIT_ASSERT_LE_MSG(test, when, max(first, t->now),
				    "next %llu is after the first expiry %llu",
				    when, first);
		wt_advance(t, max(when, t->now));
		if (++steps > 100000) {
			KUNIT_FAIL(test, "no end after %d steps", steps);
			break;
		}
	}
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);
	return steps;
}

/* Deltas at and around every level boundary expire exactly on time. */
static void wheel_boundaries_exact(struct kunit *test)
{
	static const u64 deltas[] = {
		0, 1, 2, 62, 63, 64, 65, 127, 128, 4095, 4096, 4097,
		(1 << 18) - 1, 1 << 18, (1 << 18) + 1, (1 << 24) - 2,
		(1 << 24) - 1, 1 << 24, (1 << 24) + 1, 1ULL << 30,
	};
	struct wt *t = test->priv;
	u64 base = t->now;
	int i;

	for (i = 0; i < ARRAY_SIZE(deltas); i++)
		wt_add(t, i, base + deltas[i]);
	for (i = 0; i < ARRAY_SIZE(deltas); i++) {
		/* One tick before: not yet.  At it: out. */
		if (deltas[i])
			KUNIT_EXPECT_EQ(test,
					wt_advance(t, base + deltas[i] - 1), 0);
		KUNIT_EXPECT_GE(test, wt_advance(t, base + deltas[i]), 1);
		KUNIT_EXPECT_FALSE(test, t->ent[i].in);
	}
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);
	KUNIT_EXPECT_FALSE(test, kmad_wheel_next(&t->w, &base));
}

/* Following kmad_wheel_next() alone never makes an entry late. */
static void wheel_next_never_late(struct kunit *test)
{
	static const u64 deltas[] = {
		5, 70, 4000, 5000, 300000, 20000000, 1ULL << 26,
	};
	struct wt *t = test->priv;
	int i;

	for (i = 0; i < ARRAY_SIZE(deltas); i++)
		wt_add(t, i, t->now + deltas[i]);
	wt_run_out(t);
}

/* Entries with one expiry come out in the order they were added; an
 * entry already late comes out at the next advance.
 */
static void wheel_order_and_late(struct kunit *test)
{
	struct wt *t = test->priv;
	struct kmad_wheel_entry *e;
	int i;

	for (i = 0; i < 8; i++)
		wt_add(t, i, t->now + 10);
	wt_add(t, 8, t->now - 5);		/* already late */
	kmad_wheel_advance(&t->w, t->now);
	e = kmad_wheel_first_due(&t->w);
	KUNIT_ASSERT_PTR_EQ(test, e, &t->ent[8].e);
	wt_del(t, 8);
	KUNIT_EXPECT_NULL(test, kmad_wheel_first_due(&t->w));

	t->now += 10;
	kmad_wheel_advance(&t->w, t->now);
	for (i = 0; i < 8; i++) {
		e = kmad_wheel_first_due(&t->w);
		KUNIT_ASSERT_PTR_EQ(test, e, &t->ent[i].e);
		wt_del(t, i);
	}
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);
}

/* Removing entries anywhere (pending at any level, or due) leaves the
 * wheel empty with no pending slot.
 */
static void wheel_del_everywhere(struct kunit *test)
{
	struct wt *t = test->priv;
	u64 when;
	int i;

	for (i = 0; i < 64; i++)
		wt_add(t, i, t->now + (1ULL << (i % 27)));
	kmad_wheel_advance(&t->w, t->now + 40);	/* some are due now */
	for (i = 63; i >= 0; i--) {
		if (t->ent[i].in)
			wt_del(t, i);
	}
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);
	KUNIT_EXPECT_FALSE(test, kmad_wheel_next(&t->w, &when));
	KUNIT_EXPECT_TRUE(test, bitmap_empty(t->w.pending,
					     KMAD_WHEEL_NR_SLOTS));
}

/* A random number below 2^@bits; one draw for fewer than 32 bits. */
static u64 wt_rand_bits(struct rnd_state *rnd, unsigned int bits)
{
	u64 r = prandom_u32_state(rnd);

	if (bits < 32)
		return r & ((1U << bits) - 1);
	r = r << 32 | prandom_u32_state(rnd);
	return r & ((1ULL << bits) - 1);
}

/*
 * Random adds (up to 2^@add_bits ticks ahead), removals and advances (by
 * small steps, jumps of up to 2^@jump_bits ticks, and to
 * kmad_wheel_next()), checked against the array after every advance.
 */
static void wt_random(struct wt *t, u64 seed, unsigned int add_bits,
		      unsigned int jump_bits)
{
	struct kunit *test = t->test;
	struct rnd_state rnd;
	int op, i;
	u64 when;

	prandom_seed_state(&rnd, seed);
	for (op = 0; op < 10000; op++) {
		u32 r = prandom_u32_state(&rnd);

		i = prandom_u32_state(&rnd) % WT_MAX;
		switch (r % 8) {
		case 0: case 1: case 2:
			if (!t->ent[i].in) {
				u32 bits = prandom_u32_state(&rnd) % add_bits;

				wt_add(t, i, t->now + 1 +
				       wt_rand_bits(&rnd, bits));
			}
			break;
		case 3:
			if (t->ent[i].in)
				wt_del(t, i);
			break;
		case 4: case 5:
			wt_advance(t, t->now + prandom_u32_state(&rnd) % 100);
			break;
		case 6:
			wt_advance(t, t->now + wt_rand_bits(&rnd, jump_bits));
			break;
		case 7:
			if (kmad_wheel_next(&t->w, &when))
				wt_advance(t, max(when, t->now));
			break;
		}
		if (test->status == KUNIT_FAILURE)
			return;
	}
	wt_run_out(t);
}

/* Over every level and beyond, with jumps within the wheel's span. */
static void wheel_random_against_model(struct kunit *test)
{
	wt_random(test->priv, 0x6b6d6164, 27, 22);
}

/* The same with jumps far beyond the span (2^24 ticks). */
static void wheel_random_huge_jumps_against_model(struct kunit *test)
{
	wt_random(test->priv, 0x6a756d70, 34, 36);
}

/*
 * An advance far beyond the wheel's span (2^24 ticks) costs one pass over
 * the entries, not one cascade per 2^24 ticks jumped: what expired comes
 * out in expiry order, everything else is placed again once, and still
 * comes out exactly on time, even 2^62 ticks ahead, and when the jump
 * lands on it.
 */
static void wheel_huge_jump(struct kunit *test)
{
	static const u64 deltas[] = {
		3, 100, 5000, 1 << 20, 1ULL << 30, 1ULL << 40, 1ULL << 41,
		1ULL << 62,
	};
	struct wt *t = test->priv;
	u64 base = t->now, moves = t->w.moves;
	int i;

	for (i = 0; i < ARRAY_SIZE(deltas); i++)
		wt_add(t, i, base + deltas[i]);
	/* 2^36 ticks: 2^12 turns of the top level. */
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 36)), 5);
	KUNIT_ASSERT_LE(test, t->w.moves - moves, 3ULL);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 41) - 1), 1);
	KUNIT_ASSERT_LE(test, t->w.moves - moves, 5ULL);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 41)), 1);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 62) - 1), 0);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 62)), 1);
	KUNIT_EXPECT_LE(test, t->w.moves - moves, 6ULL);
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);

	/* A jump that lands exactly on a deadline hands it out then. */
	base = t->now;
	wt_add(t, 0, base + (1ULL << 24) + 5);
	wt_add(t, 1, base + (1ULL << 24) + 6);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 24) + 5), 1);
	KUNIT_EXPECT_EQ(test, wt_advance(t, base + (1ULL << 24) + 6), 1);
	KUNIT_EXPECT_EQ(test, t->w.count, 0U);
}

static struct kunit_case wheel_cases[] = {
	KUNIT_CASE(wheel_boundaries_exact),
	KUNIT_CASE(wheel_next_never_late),
	KUNIT_CASE(wheel_order_and_late),
	KUNIT_CASE(wheel_del_everywhere),
	KUNIT_CASE(wheel_random_against_model),
	KUNIT_CASE(wheel_random_huge_jumps_against_model),
	KUNIT_CASE(wheel_huge_jump),
	{}
};

static struct kunit_suite wheel_suite = {
	.name = "kmad_wheel",
	.init = wt_init,
	.exit = wt_exit,
	.test_cases = wheel_cases,
};

kunit_test_suite(wheel_suite);

MODULE_DESCRIPTION("KUnit tests for kmad's timing wheel");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_LICENSE("GPL");
