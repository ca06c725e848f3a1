// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The capture loop's clock (prof/caploop.h). */
#include "prof/caploop.h"

void caploop__init(struct caploop *l, uint64_t t0, uint64_t secs, uint64_t drain_ns,
		   uint64_t look_ns, bool every_100ms)
{
	l->t0 = t0;
	l->end = secs ? t0 + secs * 1000000000ull : 0;
	l->drain_every = drain_ns;
	l->last_drain = t0;
	l->look_every = look_ns;
	l->last_look = t0;
	l->every_100ms = every_100ms;
}

unsigned int caploop__due(struct caploop *l, uint64_t now)
{
	unsigned int due = 0;

	if (l->end && now >= l->end)
		return CAPLOOP_END;
	if (now - l->last_drain >= l->drain_every) {
		l->last_drain = now;
		due |= CAPLOOP_DRAIN;
	}
	if (l->look_every && now - l->last_look >= l->look_every) {
		l->last_look = now;
		due |= CAPLOOP_LOOK;
	}
	return due;
}

int caploop__wait_ms(const struct caploop *l, uint64_t now)
{
	uint64_t next = l->last_drain + l->drain_every, ms;

	if (l->end && l->end < next)
		next = l->end;
	if (l->look_every && l->last_look + l->look_every < next)
		next = l->last_look + l->look_every;
	if (l->every_100ms && now + 100000000ull < next)
		next = now + 100000000ull;
	ms = next > now ? (next - now + 999999) / 1000000 : 1;
	return ms < 1 ? 1 : ms > 1000 ? 1000 : (int)ms;
}
