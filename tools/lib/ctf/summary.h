/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a trace holds, counted as its messages go by: events per event class
 * (and so per name), per thread and process (from the vpid, vtid and
 * procname contexts), the values of one field (--by), and the discarded
 * events and packets. Then the terminal table or the JSON object of
 * 'sidescope ctf summary'. The Chrome writer reads the same counts. */
#ifndef SIDESCOPE_CTF_SUMMARY_H
#define SIDESCOPE_CTF_SUMMARY_H

#include "ctf/bt2.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctf/trace.h"

/* Where a named field lives in an event. */
enum ctf_scope { CTF_SCOPE_NONE, CTF_SCOPE_PAYLOAD, CTF_SCOPE_SPEC_CTX, CTF_SCOPE_COMMON_CTX };

struct ctf_field_ref {
	enum ctf_scope scope;
	uint64_t index;
};

/* One per event class (several classes can share a name: one per trace). */
struct ctf_class {
	const bt_event_class *cls;	/* NULL: a free slot */
	char *name;		/* a copy: the classes die with the graph */
	char *base;		/* begin/end pairs: the name without its suffix */
	int kind;		/* enum ctfpair_kind */
	uint64_t count, first, last;
	int64_t ctx_vpid, ctx_vtid, ctx_procname;	/* common context index or -1 */
	struct ctf_field_ref by;
};

struct ctf_thread {
	int64_t vpid, vtid;
	uint64_t count;
	char procname[32];
	bool used;		/* false: a free slot */
	uint32_t seq;		/* threads are numbered in the order of their
				 * first events */
};

struct ctf_value {
	char *value;
	uint64_t count;
	bool used;
};

/* The counts. Zero it, then set the fields above the line; free it with
 * ctf_summary__free. The tables are open-addressed hash tables until
 * ctf_summary__print sorts them. */
struct ctf_summary {
	const char *by;		/* --by FIELD, or NULL */
	bool all_threads;	/* every event has a thread: one 0/0 when it has
				 * no vpid/vtid context (else only events with
				 * a vtid context have one, -1 for a missing vpid) */
	size_t max_threads;	/* threads told apart; 0: no limit. Past it, the
				 * events of a new thread are counted on 'other' */
	uint64_t seed;		/* mixed into the thread table's hash: a secret
				 * one keeps the vpid and vtid a trace chose from
				 * piling up in one run of slots */
	size_t max_values;	/* --by values told apart; 0: no limit. Past it,
				 * the events of a new value are counted in
				 * values_left_out */
	const char *cut;	/* why the read ended early ("signal",
				 * "killed": only the totals are known), said
				 * in the report; NULL: it did not */
	/* ---- */
	struct ctf_class *ev;	/* open addressing on the class pointer */
	size_t ev_cap, ev_n;
	const bt_event_class *last_cls;
	struct ctf_class *last_ev;
	struct ctf_thread *th;	/* open addressing on (vpid, vtid) */
	size_t th_cap, th_n;
	struct ctf_thread other;	/* past max_threads: vpid and vtid -1 */
	struct ctf_value *val;	/* the --by values */
	size_t val_cap, val_n;
	uint64_t by_missing;
	uint64_t values_left_out;	/* events whose value was past max_values */
	uint64_t events, first, last;	/* first and last: ctf_summary__finish */
	uint64_t discarded_events, discarded_events_msgs;
	uint64_t discarded_packets, discarded_packets_msgs;
	bool no_clock;		/* some stream has no clock: timestamps 0 */
};

/* One event as counted: pointers into the tables, valid until the next
 * message. */
struct ctf_event {
	const bt_event *ev;
	struct ctf_class *cls;
	struct ctf_thread *thread;	/* NULL: no thread (see all_threads) */
	bool new_thread;		/* the thread's first event */
	uint64_t ts;			/* ns from the clock's origin, 0 without */
};

/* Count MSG. Return 1 for an event (described in *OUT), 0 for any other
 * message, -ENOMEM. */
int ctf_summary__message(struct ctf_summary *s, const bt_message *msg, struct ctf_event *out);

/* After the last message: the time of the first and the last event. */
void ctf_summary__finish(struct ctf_summary *s);

/* Print the summary of the traces T found under DIR to O: the table (the
 * TOP most frequent threads and --by values) or one JSON object; what the
 * budgets left out (max_threads, max_values) and a cut read are said, in
 * the table and in the object, only when they are. Sorts the thread and
 * value tables (no more messages after it). Return 0 or -ENOMEM; write
 * errors are O's. */
int ctf_summary__print(struct ctf_summary *s, FILE *o, const char *dir,
		       const struct ctf_traces *t, bool json, size_t top);

void ctf_summary__free(struct ctf_summary *s);

#endif
