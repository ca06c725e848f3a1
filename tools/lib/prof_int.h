/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Internals of the profile model, shared by prof.c and its writers only. */
#ifndef SIDESCOPE_PROF_INT_H
#define SIDESCOPE_PROF_INT_H

#include "prof.h"

struct prof_func {
	const char *name;
	enum frame_kind kind;
	uint32_t map;	/* mapping id, 0: none */
};

struct prof_map {
	const char *module;
	const char *build_id;
};

struct prof_stack {
	uint32_t pid;
	const char *comm;
	uint32_t *fids;	/* outermost first */
	size_t n;
	uint64_t count;
};

struct prof {
	char **strs;
	size_t strs_cap, strs_n;
	struct prof_func *funcs;
	size_t nfuncs, funcs_cap;
	uint32_t *func_ht;
	size_t func_ht_cap;
	struct prof_map *maps;
	size_t nmaps, maps_cap;
	struct prof_stack *stacks;
	size_t nstacks, stacks_cap;
	uint32_t *stack_ht;
	size_t stack_ht_cap;
	uint64_t total;
	struct prof_meta meta;
};

const char *prof__intern(struct prof *p, const char *s);
/* Stack indices in output order (malloc'd). */
uint32_t *prof__sorted(const struct prof *p);

#endif
