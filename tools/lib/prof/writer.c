// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The table of output formats (writer.h). */
#include <string.h>

#include "core/util.h"
#include "prof/writer.h"

static int write_folded(const struct prof *p, FILE *f, const struct prof_write_opts *o)
{
	return prof__write_folded(p, f);
}

static int write_pprof(const struct prof *p, FILE *f, const struct prof_write_opts *o)
{
	return prof__write_pprof(p, f);
}

static int write_svg(const struct prof *p, FILE *f, const struct prof_write_opts *o)
{
	return prof__write_svg(p, f, o->title);
}

static int write_top(const struct prof *p, FILE *f, const struct prof_write_opts *o)
{
	return prof__write_top(p, f, o->top_rows);
}

static int write_json(const struct prof *p, FILE *f, const struct prof_write_opts *o)
{
	return prof__write_json(p, f);
}

static const char *const folded_sfx[] = { ".folded", ".txt", NULL };
static const char *const pprof_sfx[] = { ".pb.gz", ".pprof", ".pb", NULL };
static const char *const svg_sfx[] = { ".svg", NULL };
static const char *const json_sfx[] = { ".json", NULL };

/* In the order the help and the messages list them. */
static const struct prof_writer prof_writers[] = {
	{ "folded", "txt", folded_sfx, false, write_folded },
	{ "pprof", NULL, pprof_sfx, true, write_pprof },
	{ "svg", NULL, svg_sfx, false, write_svg },
	{ "top", NULL, NULL, false, write_top },
	{ "json", NULL, json_sfx, false, write_json },
	{}
};

const struct prof_writer *prof__writer_by_name(const char *name)
{
	const struct prof_writer *w;

	for (w = prof_writers; w->name; w++)
		if (!strcmp(name, w->name) || (w->alias && !strcmp(name, w->alias)))
			return w;
	return NULL;
}

const struct prof_writer *prof__writer_by_path(const char *path)
{
	const struct prof_writer *w;
	const char *const *s;

	for (w = prof_writers; w->name; w++)
		for (s = w->suffixes; s && *s; s++)
			if (str_has_suffix(path, *s))
				return w;
	return NULL;
}

const char *prof__writer_list(char *buf, size_t size, bool suffixes)
{
	const struct prof_writer *w;
	const char *items[16];
	size_t n = 0, i, len = 0;

	for (w = prof_writers; w->name && n < 16; w++)
		if (!suffixes)
			items[n++] = w->name;
		else if (w->suffixes)
			items[n++] = w->suffixes[0];
	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					!i ? "" : suffixes && i == n - 1 ? " or " : ", ", items[i]);
	return buf;
}
