/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internals of the profile model, shared by prof.c and its writers only.
 *
 * Objects (module, build id) own functions (name, kind); mappings (an
 * object at an address range of a process) own locations (an address, its
 * function and source lines); stacks are locations, outermost first, of
 * one thread. Every string is interned, so pointers compare as strings. */
#ifndef SIDESCOPE_PROF_INT_H
#define SIDESCOPE_PROF_INT_H

#include "prof/prof.h"

struct prof_func {
	const char *name;
	enum frame_kind kind;
	uint32_t obj;		/* object id, 0: none */
};

struct prof_obj {
	const char *module;
	const char *build_id;
};

struct prof_map {
	uint32_t obj;		/* object id (never 0) */
	uint64_t start, limit, offset;
};

struct prof_loc {
	uint32_t fid;		/* function */
	uint32_t map;		/* mapping id, 0: none */
	uint64_t addr;
	struct frame_line *lines;	/* NULL when none; strings interned */
	uint32_t nlines;
	struct frame_lines_ref ref;	/* lines looked up at writing (pprof) */
	bool unresolved;
};

struct prof_stack {
	uint32_t pid, tid;
	const char *comm, *thread;
	uint32_t *locs;		/* location indices, outermost first */
	size_t n;
	uint64_t count;
};

struct prof_table {		/* open addressing over ids + 1 (0: empty) */
	uint32_t *slots;
	size_t cap;
};

struct prof {
	char **strs;
	size_t strs_cap, strs_n;
	struct prof_func *funcs;
	size_t nfuncs, funcs_cap;
	struct prof_table func_ht;
	struct prof_obj *objs;
	size_t nobjs, objs_cap;
	struct prof_map *maps;
	size_t nmaps, maps_cap;
	struct prof_table map_ht;
	struct prof_loc *locs;
	size_t nlocs, locs_cap;
	struct prof_table loc_ht;
	struct prof_stack *stacks;
	size_t nstacks, stacks_cap;
	struct prof_table stack_ht;
	uint64_t total;
	unsigned int split;	/* PROF_SPLIT_* */
	struct prof_meta meta;
};

const char *prof__intern(struct prof *p, const char *s);

/* The end of a writer: flushed, 0 or the write error as a negative errno. */
int prof__finish(FILE *f);

/* What makes two stacks one entry of a writer: PROF_SPLIT_PID and
 * PROF_SPLIT_TID as in prof.h, PROF_KEY_FUNCS compares functions (else
 * names and kinds as a folded line prints them), PROF_KEY_COMM the
 * processes' names. */
#define PROF_KEY_FUNCS 0x100u
#define PROF_KEY_COMM 0x200u

/* Stack indices in output order for KEYS (malloc'd); stacks that are one
 * entry under KEYS are adjacent. */
uint32_t *prof__sorted(const struct prof *p, unsigned int keys);
/* Whether stacks A and B are one entry under KEYS. */
bool prof__same(const struct prof *p, uint32_t a, uint32_t b, unsigned int keys);
/* The function of the I-th frame of stack S. */
static inline const struct prof_func *prof__frame_func(const struct prof *p,
							const struct prof_stack *s, size_t i)
{
	return &p->funcs[p->locs[s->locs[i]].fid];
}
#define PROF_ROOT_MAX 1100
/* The root frame of stack S under SPLIT ("thread", "thread-PID",
 * "thread-PID/TID") into BUF; returns BUF, or the thread name itself. */
const char *prof__root(const struct prof_stack *s, unsigned int split, char *buf, size_t size);

#endif
