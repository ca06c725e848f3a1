/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The output formats of a profile, one table: each names itself, the file
 * endings that choose it and its writer. A new format is one entry of
 * prof_writers (writer.c) and its writer function. */
#ifndef SIDESCOPE_PROF_WRITER_H
#define SIDESCOPE_PROF_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "prof/prof.h"

/* What some writers take besides the profile. */
struct prof_write_opts {
	const char *title;	/* the flame graph's title, or NULL */
	size_t top_rows;	/* rows of the top table */
};

struct prof_writer {
	const char *name;		/* --format NAME */
	const char *alias;		/* another NAME, or NULL */
	const char *const *suffixes;	/* file endings that choose it, the one
					 * suggested first; NULL: none */
	bool binary;			/* never written to a terminal */
	/* Write P to F: 0 or a negative errno (write errors included). */
	int (*write)(const struct prof *p, FILE *f, const struct prof_write_opts *o);
};

/* The writer --format NAME names, or NULL. */
const struct prof_writer *prof__writer_by_name(const char *name);
/* The writer the ending of PATH chooses, or NULL. */
const struct prof_writer *prof__writer_by_path(const char *path);
/* The names, "folded, pprof, ..." (SUFFIXES false), or the endings
 * suggested, ".folded, .pb.gz, ... or .json" (true), into BUF; returns
 * BUF. */
const char *prof__writer_list(char *buf, size_t size, bool suffixes);

#endif
