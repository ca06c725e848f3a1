// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's types a BPF object needs; see kbtf.h. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"
#include "prof/kbtf.h"

/* Embedded types nest this deep at most (a struct in a struct ...) */
#define MAX_NEST 64

struct subset {
	const struct btf *k;
	struct btf *out;
	int *ids;		/* kernel type id -> its copy's (0: not copied) */
	int voidp;		/* the copy's void *, made once */
	int err;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* NAME without its CO-RE flavour ("task_struct___old": "task_struct"), in
 * BUF; NULL when too long. */
static const char *essential(const char *name, char *buf, size_t len)
{
	size_t n = strlen(name), i;

	for (i = n >= 4 ? n - 4 : 0; i > 0; i--)
		if (!strncmp(name + i, "___", 3) && name[i + 3] != '_')
			break;
	if (i == 0)
		i = n;
	if (i >= len)
		return NULL;
	memcpy(buf, name, i);
	buf[i] = '\0';
	return buf;
}

static bool copied_kind(const struct btf_type *t)
{
	return btf_is_composite(t) || btf_is_any_enum(t) || btf_is_typedef(t);
}

static int copy(struct subset *s, int id, int depth);

static int copy_members(struct subset *s, const struct btf_type *t, int depth, int *types)
{
	const struct btf_member *m = btf_members(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++) {
		types[i] = copy(s, (int)m[i].type, depth + 1);
		if (types[i] < 0)
			return types[i];
	}
	return 0;
}

static int add_composite(struct subset *s, const struct btf_type *t, const char *name, int depth)
{
	const struct btf_member *m = btf_members(t);
	int *types, id, i, err;

	types = calloc((size_t)btf_vlen(t) + 1, sizeof(*types));
	if (!types)
		return -ENOMEM;
	err = copy_members(s, t, depth, types);
	if (err) {
		free(types);
		return err;
	}
	id = btf_is_struct(t) ? btf__add_struct(s->out, name, t->size) :
				btf__add_union(s->out, name, t->size);
	for (i = 0; id > 0 && i < btf_vlen(t); i++) {
		err = btf__add_field(s->out, btf__name_by_offset(s->k, m[i].name_off), types[i],
				     btf_member_bit_offset(t, (__u32)i),
				     btf_member_bitfield_size(t, (__u32)i));
		if (err)
			id = err;
	}
	free(types);
	return id;
}

static int add_enum(struct subset *s, const struct btf_type *t, const char *name)
{
	bool sign = btf_kflag(t);
	int id, i, err = 0;

	if (btf_is_enum(t)) {
		const struct btf_enum *e = btf_enum(t);

		id = btf__add_enum(s->out, name, t->size);
		for (i = 0; id > 0 && !err && i < btf_vlen(t); i++)
			err = btf__add_enum_value(s->out, btf__name_by_offset(s->k, e[i].name_off),
						  sign ? (__s64)(__s32)e[i].val :
							 (__s64)(__u32)e[i].val);
	} else {
		const struct btf_enum64 *e = btf_enum64(t);

		id = btf__add_enum64(s->out, name, t->size, sign);
		for (i = 0; id > 0 && !err && i < btf_vlen(t); i++)
			err = btf__add_enum64_value(s->out,
						    btf__name_by_offset(s->k, e[i].name_off),
						    btf_enum64_value(&e[i]));
	}
	return err ? err : id;
}

/* The copy of kernel type ID (made now if need be), or a negative errno */
static int copy(struct subset *s, int id, int depth)
{
	const struct btf_type *t;
	const char *name;
	int r;

	if (id == 0)
		return 0;
	if (id < 0 || (unsigned int)id >= btf__type_cnt(s->k) || depth > MAX_NEST)
		return -EINVAL;
	if (s->ids[id])
		return s->ids[id];
	t = btf__type_by_id(s->k, (__u32)id);
	if (!t)
		return -EINVAL;
	name = btf__name_by_offset(s->k, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		r = btf__add_int(s->out, name, (size_t)t->size, btf_int_encoding(t));
		break;
	case BTF_KIND_FLOAT:
		r = btf__add_float(s->out, name, (size_t)t->size);
		break;
	case BTF_KIND_PTR:
		if (!s->voidp)
			s->voidp = btf__add_ptr(s->out, 0);
		r = s->voidp;
		break;
	case BTF_KIND_ARRAY: {
		const struct btf_array *a = btf_array(t);
		int elem = copy(s, (int)a->type, depth + 1), index;

		if (elem < 0)
			return elem;
		index = copy(s, (int)a->index_type, depth + 1);
		if (index < 0)
			return index;
		r = btf__add_array(s->out, index, elem, a->nelems);
		break;
	}
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		r = add_composite(s, t, name, depth);
		break;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		r = add_enum(s, t, name);
		break;
	case BTF_KIND_FWD:
		r = btf__add_fwd(s->out, name, btf_kflag(t) ? BTF_FWD_UNION : BTF_FWD_STRUCT);
		break;
	case BTF_KIND_TYPEDEF:
		r = copy(s, (int)t->type, depth + 1);
		if (r >= 0)
			r = btf__add_typedef(s->out, name, r);
		break;
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
		/* what relocations look through: the type itself */
		r = copy(s, (int)t->type, depth + 1);
		break;
	default:
		/* functions, variables, sections: not a member's type */
		return -EINVAL;
	}
	if (r > 0)
		s->ids[id] = r;
	return r;
}

struct btf *kbtf__subset(const struct btf *kernel, const struct btf *local)
{
	struct subset s = { .k = kernel };
	const char **names;
	char buf[256];
	size_t nnames = 0, i;
	__u32 nk = btf__type_cnt(kernel), nl = btf__type_cnt(local), id;
	int err = 0;

	names = calloc(nl, sizeof(*names));
	s.ids = calloc(nk, sizeof(*s.ids));
	s.out = btf__new_empty();
	if (!names || !s.ids || !s.out) {
		err = -ENOMEM;
		goto out;
	}
	for (id = 1; id < nl; id++) {
		const struct btf_type *t = btf__type_by_id(local, id);
		const char *n = t ? btf__name_by_offset(local, t->name_off) : NULL;

		if (!t || !n || !*n || !copied_kind(t) || !essential(n, buf, sizeof(buf)))
			continue;
		names[nnames] = strdup(buf);
		if (!names[nnames]) {
			err = -ENOMEM;
			goto out;
		}
		nnames++;
	}
	qsort(names, nnames, sizeof(*names), cmp_str);
	for (id = 1; id < nk && !err; id++) {
		const struct btf_type *t = btf__type_by_id(kernel, id);
		const char *n = btf__name_by_offset(kernel, t->name_off);
		int r;

		if (!n || !*n || !copied_kind(t) ||
		    !bsearch(&n, names, nnames, sizeof(*names), cmp_str))
			continue;
		r = copy(&s, (int)id, 0);
		if (r < 0)
			err = r;
	}
out:
	for (i = 0; i < nnames; i++)
		free((void *)names[i]);
	free(names);
	free(s.ids);
	if (err) {
		btf__free(s.out);
		errno = -err;
		return NULL;
	}
	return s.out;
}

uint64_t kbtf__key(const void *obj, size_t size)
{
	struct {
		char boot[40];
		uint64_t btf_size, obj;
	} k;
	struct stat st;
	ssize_t n;
	int fd;

	memset(&k, 0, sizeof(k));
	if (stat("/sys/kernel/btf/vmlinux", &st) || st.st_size <= 0)
		return 0;
	k.btf_size = (uint64_t)st.st_size;
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, k.boot, sizeof(k.boot) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	k.obj = hash__words(obj, size);
	return hash__bytes(&k, sizeof(k)) | 1;
}

int kbtf__make(const struct btf *local, void **buf, size_t *len)
{
	struct btf *k = btf__load_vmlinux_btf(), *sub;
	const void *raw;
	__u32 n = 0;
	int err = 0;

	*buf = NULL;
	*len = 0;
	if (libbpf_get_error(k))
		return -ENOENT;
	sub = kbtf__subset(k, local);
	btf__free(k);
	if (!sub)
		return -errno;
	raw = btf__raw_data(sub, &n);
	if (!raw || n == 0 || n > KBTF_MAX_BYTES)
		err = raw ? -EFBIG : -ENOMEM;
	else if (!(*buf = malloc(n)))
		err = -ENOMEM;
	else {
		memcpy(*buf, raw, n);
		*len = n;
	}
	btf__free(sub);
	return err;
}

int kbtf__memfd(const void *buf, size_t len)
{
	struct btf *b = btf__new(buf, (__u32)len);
	const char *p = buf;
	int fd, err;

	if (len > KBTF_MAX_BYTES || libbpf_get_error(b)) {
		errno = EINVAL;
		return -1;
	}
	btf__free(b);
	fd = memfd_create("sidescope-kernel-types", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? errno : EIO;
			close(fd);
			errno = err;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return fd;
}
