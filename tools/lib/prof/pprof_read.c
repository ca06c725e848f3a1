// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof reader over protobuf-c's generated code for profile.proto. Each
 * Location is resolved once into its frames (inlined callees first, as
 * the format orders them); samples then only reverse location lists. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "prof/pprof_read.h"
#include "core/util.h"

typedef Perftools__Profiles__Profile Profile;

bool pprof__is_gzip(const void *buf, size_t len)
{
	const unsigned char *b = buf;

	return len >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

int pprof__gunzip(const void *in, size_t len, char **out, size_t *out_len, size_t max)
{
	z_stream zs = { 0 };
	size_t cap = len * 4 + 4096, n = 0;
	char *buf = NULL, *b;
	int err = 0, zr;

	if (!max)
		max = (size_t)1 << 30;
	if (!pprof__is_gzip(in, len))
		return -EINVAL;
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return -ENOMEM;
	zs.next_in = (Bytef *)in;
	zs.avail_in = len;
	for (;;) {
		if (n + 1 >= cap || !buf) {
			if (buf)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			if (n + 1 >= cap) {
				err = -EFBIG;
				goto cleanup;
			}
			b = realloc(buf, cap);
			if (!b) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = b;
		}
		zs.next_out = (Bytef *)buf + n;
		zs.avail_out = cap - 1 - n;
		zr = inflate(&zs, Z_NO_FLUSH);
		n = cap - 1 - zs.avail_out;
		if (zr == Z_STREAM_END) {
			/* concatenated members, as gzip allows */
			if (zs.avail_in && pprof__is_gzip(zs.next_in, zs.avail_in)) {
				inflateReset(&zs);
				continue;
			}
			break;
		}
		if (zr == Z_BUF_ERROR && zs.avail_out)
			zr = Z_DATA_ERROR;	/* input ended early */
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			err = zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			goto cleanup;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*out_len = n;
	buf = NULL;
cleanup:
	inflateEnd(&zs);
	free(buf);
	return err;
}

enum frame_kind pprof__mapping_kind(const char *fn)
{
	const char *base;
	size_t len;

	if (!fn)
		return FRAME_UNKNOWN;
	if (str_has_prefix(fn, "[kernel"))
		return FRAME_KERNEL;
	if (strcmp(fn, "[jit]") == 0)
		return FRAME_JIT;
	base = strrchr(fn, '/');
	base = base ? base + 1 : fn;
	if (str_has_prefix(base, "perf-") && str_has_suffix(base, ".map")) {
		const char *p = base + 5;

		while (*p >= '0' && *p <= '9')
			p++;
		if (p > base + 5 && strcmp(p, ".map") == 0)
			return FRAME_JIT;
	}
	len = strlen(base);
	if (len > 4 && (strcasecmp(base + len - 4, ".dll") == 0 ||
			strcasecmp(base + len - 4, ".exe") == 0))
		return FRAME_R2R;
	return FRAME_NATIVE;
}

struct loc {
	uint64_t id;
	uint32_t first, n;	/* slice of the frame arrays */
};

struct ctx {
	const Profile *p;
	struct loc *locs;
	size_t n_locs;
	const char **names;	/* per location frame, leaf-most first */
	enum frame_kind *kinds;
	char **owned;		/* names made up here ("lib.so+0x10") */
	size_t n_frames, n_owned;
	struct byid *maps, *funcs;
};

static const char *str_at(const Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table && p->string_table[i] ?
		p->string_table[i] : "";
}

static int cmp_loc(const void *a, const void *b)
{
	uint64_t x = ((const struct loc *)a)->id, y = ((const struct loc *)b)->id;

	return x < y ? -1 : x > y;
}

struct byid {
	uint64_t id;
	const void *p;
};

static int cmp_byid(const void *a, const void *b)
{
	uint64_t x = ((const struct byid *)a)->id, y = ((const struct byid *)b)->id;

	return x < y ? -1 : x > y;
}

/* An index by id of n messages whose uint64 id is at id_off. */
static struct byid *index_by_id(void *const *v, size_t n, size_t id_off)
{
	struct byid *ix = malloc((n ? n : 1) * sizeof(*ix));
	size_t i;

	if (!ix)
		return NULL;
	for (i = 0; i < n; i++)
		ix[i] = (struct byid){ *(const uint64_t *)((const char *)v[i] + id_off), v[i] };
	qsort(ix, n, sizeof(*ix), cmp_byid);
	return ix;
}

static const void *lookup_id(const struct byid *ix, size_t n, uint64_t id)
{
	struct byid key = { .id = id };
	const struct byid *r = bsearch(&key, ix, n, sizeof(*ix), cmp_byid);

	return r ? r->p : NULL;
}

static int resolve_locations(struct ctx *c)
{
	const Profile *p = c->p;
	size_t i, j, total = 0;

	c->maps = index_by_id((void *const *)p->mapping, p->n_mapping,
			      offsetof(Perftools__Profiles__Mapping, id));
	c->funcs = index_by_id((void *const *)p->function, p->n_function,
			       offsetof(Perftools__Profiles__Function, id));
	if (!c->maps || !c->funcs)
		return -ENOMEM;
	for (i = 0; i < p->n_location; i++)
		total += p->location[i]->n_line ? p->location[i]->n_line : 1;
	c->locs = calloc(p->n_location ? p->n_location : 1, sizeof(*c->locs));
	c->names = calloc(total ? total : 1, sizeof(*c->names));
	c->kinds = calloc(total ? total : 1, sizeof(*c->kinds));
	c->owned = calloc(p->n_location ? p->n_location : 1, sizeof(*c->owned));
	if (!c->locs || !c->names || !c->kinds || !c->owned)
		return -ENOMEM;
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const Perftools__Profiles__Mapping *m = NULL;
		enum frame_kind kind = FRAME_UNKNOWN;
		const char *mfile = NULL;

		if (l->mapping_id) {
			m = lookup_id(c->maps, p->n_mapping, l->mapping_id);
			if (m) {
				mfile = str_at(p, m->filename);
				kind = pprof__mapping_kind(mfile);
			}
		}
		c->locs[i] = (struct loc){ .id = l->id, .first = c->n_frames };
		for (j = 0; j < l->n_line; j++) {
			const Perftools__Profiles__Function *fn;

			fn = lookup_id(c->funcs, p->n_function, l->line[j]->function_id);
			c->names[c->n_frames] = fn && *str_at(p, fn->name) ? str_at(p, fn->name) :
						"[unknown]";
			c->kinds[c->n_frames++] = kind;
		}
		if (!l->n_line) {
			/* unsymbolized: "module+0xOFFSET", or [unknown] without a mapping */
			const char *base = mfile && *mfile ? strrchr(mfile, '/') : NULL;
			char *s = NULL;

			base = base ? base + 1 : mfile;
			if (m && base && *base &&
			    asprintf(&s, "%s+0x%" PRIx64, base,
				     l->address - m->memory_start + m->file_offset) < 0)
				return -ENOMEM;
			if (s)
				c->owned[c->n_owned++] = s;
			c->names[c->n_frames] = s ? s : "[unknown]";
			c->kinds[c->n_frames++] = FRAME_UNKNOWN;
		}
		c->locs[i].n = c->n_frames - c->locs[i].first;
	}
	c->n_locs = p->n_location;
	qsort(c->locs, c->n_locs, sizeof(*c->locs), cmp_loc);
	return 0;
}

static int pick_value(const Profile *p, const char *want, struct pprof_read_stats *st)
{
	size_t i;
	int idx = -1;

	for (i = 0; i < p->n_sample_type; i++) {
		const char *t = str_at(p, p->sample_type[i]->type);

		if (want ? strcmp(t, want) == 0 : strcmp(t, "samples") == 0) {
			idx = i;
			break;
		}
	}
	if (idx < 0 && want)
		return -EINVAL;
	if (idx < 0 && p->default_sample_type) {
		for (i = 0; i < p->n_sample_type; i++)
			if (p->sample_type[i]->type == p->default_sample_type)
				idx = i;
	}
	if (idx < 0 && p->n_sample_type)
		idx = p->n_sample_type - 1;
	if (idx < 0)
		idx = 0;	/* no sample types: take the first value */
	if (st && (size_t)idx < p->n_sample_type) {
		snprintf(st->value_type, sizeof(st->value_type), "%s",
			 str_at(p, p->sample_type[idx]->type));
		snprintf(st->value_unit, sizeof(st->value_unit), "%s",
			 str_at(p, p->sample_type[idx]->unit));
	} else if (st) {
		snprintf(st->value_type, sizeof(st->value_type), "samples");
	}
	return idx;
}

/* The stack handed to the callback, root first. */
struct stackbuf {
	const char **names;
	enum frame_kind *kinds;
	size_t cap;
};

/* Room for NEED frames in SB, growing it to NCAP when short. */
static int stackbuf_room(struct stackbuf *sb, size_t need, size_t ncap)
{
	const char **nn;
	enum frame_kind *nk;

	if (need <= sb->cap)
		return 0;
	nn = realloc(sb->names, ncap * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	sb->names = nn;
	nk = realloc(sb->kinds, ncap * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	sb->kinds = nk;
	sb->cap = ncap;
	return 0;
}

/* The label of S that names its root frame, as folded stacks carry it:
 * the thread's name where the sample has one, else the process's; S's
 * n_label when none. COMM and THREAD are the keys' string ids (0: none). */
static size_t root_label(const Perftools__Profiles__Sample *s, int64_t comm, int64_t thread)
{
	size_t t = s->n_label, j;

	if (comm <= 0 && thread <= 0)
		return s->n_label;
	for (j = 0; j < s->n_label; j++) {
		if (thread > 0 && s->label[j]->key == thread && s->label[j]->str > 0)
			break;
		if (comm > 0 && s->label[j]->key == comm && s->label[j]->str > 0 &&
		    t == s->n_label)
			t = j;
	}
	return j == s->n_label ? t : j;
}

/* The frames of sample S into SB, root first: *DEPTH of them. 0, 1 when a
 * location is missing (a bad sample), or -ENOMEM. */
static int sample_frames(const struct ctx *c, const Perftools__Profiles__Sample *s,
			 int64_t comm, int64_t thread, struct stackbuf *sb, size_t *depth)
{
	size_t j = root_label(s, comm, thread), k;

	*depth = 0;
	if (j < s->n_label) {
		if (!sb->cap && stackbuf_room(sb, 1, 64))
			return -ENOMEM;
		sb->names[0] = str_at(c->p, s->label[j]->str);
		sb->kinds[0] = FRAME_NATIVE;
		*depth = 1;
	}
	/* location_id is leaf first; the callback wants the root first */
	for (j = s->n_location_id; j-- > 0;) {
		struct loc key = { .id = s->location_id[j] }, *l;

		l = bsearch(&key, c->locs, c->n_locs, sizeof(*c->locs), cmp_loc);
		if (!l)
			return 1;
		if (stackbuf_room(sb, *depth + l->n, (*depth + l->n) * 2 + 64))
			return -ENOMEM;
		/* the last line of a location is the caller */
		for (k = l->n; k-- > 0;) {
			sb->names[*depth] = c->names[l->first + k];
			sb->kinds[(*depth)++] = c->kinds[l->first + k];
		}
	}
	return 0;
}

/* Every sample of C's profile with value VI to CB, counted into ST. */
static int read_samples(const struct ctx *c, int vi, folded_cb cb, void *ctx_,
			struct pprof_read_stats *st)
{
	const Profile *p = c->p;
	struct stackbuf sb = { 0 };
	int64_t comm = 0, thread = 0;
	size_t i, depth;
	int err = 0;

	for (i = 1; i < p->n_string_table; i++) {
		if (p->string_table[i] && strcmp(p->string_table[i], "comm") == 0 && !comm)
			comm = i;
		if (p->string_table[i] && strcmp(p->string_table[i], "thread") == 0 && !thread)
			thread = i;
	}
	for (i = 0; i < p->n_sample && !err; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		int64_t v;

		st->samples++;
		if ((size_t)vi >= s->n_value || s->value[vi] < 0) {
			st->bad++;
			continue;
		}
		v = s->value[vi];
		err = sample_frames(c, s, comm, thread, &sb, &depth);
		if (err == 1) {
			st->bad++;
			err = 0;
			continue;
		}
		if (err)
			break;
		st->total += (uint64_t)v;
		if (v)
			err = cb(ctx_, sb.names, sb.kinds, depth, (uint64_t)v, 0);
	}
	free(sb.names);
	free(sb.kinds);
	return err;
}

int pprof__read(const void *buf, size_t len, const char *value_type, folded_cb cb,
		void *ctx_, struct pprof_read_stats *st)
{
	struct pprof_read_stats dummy;
	struct ctx c = { 0 };
	Profile *p = NULL;
	char *raw = NULL;
	size_t raw_len, i;
	int err = 0, vi;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (pprof__is_gzip(buf, len)) {
		err = pprof__gunzip(buf, len, &raw, &raw_len, 0);
		if (err)
			return err;
		buf = raw;
		len = raw_len;
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!p) {
		err = -EINVAL;
		goto cleanup;
	}
	c.p = p;
	vi = pick_value(p, value_type, st);
	if (vi < 0) {
		err = vi;
		goto cleanup;
	}
	err = resolve_locations(&c);
	if (!err)
		err = read_samples(&c, vi, cb, ctx_, st);
cleanup:
	for (i = 0; i < c.n_owned; i++)
		free(c.owned[i]);
	free(c.owned);
	free(c.locs);
	free(c.maps);
	free(c.funcs);
	free(c.names);
	free(c.kinds);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	return err;
}
