// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel types a BPF object needs: from the running kernel's BTF, the
 * structs, unions and enums the object names (flavours too), each as the
 * kernel has it (size, member offsets, enum values), with what it embeds,
 * pointers made void *, and nothing the object does not name; checked to
 * be BTF before libbpf is given them. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof/kbtf.h"
#include "tap.h"

/* The member NAME of composite type ID in BTF B, or NULL */
static const struct btf_member *member(const struct btf *b, int id, const char *name, int *idx)
{
	const struct btf_type *t = btf__type_by_id(b, (__u32)id);
	const struct btf_member *m = btf_members(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(b, m[i].name_off), name)) {
			*idx = i;
			return &m[i];
		}
	return NULL;
}

/* The enum value NAME of enum ID in B, in *V: 0, or -1 */
static int enum_value(const struct btf *b, int id, const char *name, long long *v)
{
	const struct btf_type *t = btf__type_by_id(b, (__u32)id);
	const struct btf_enum *e = btf_enum(t);
	int i;

	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(b, e[i].name_off), name)) {
			*v = e[i].val;
			return 0;
		}
	return -1;
}

int main(void)
{
	struct btf *k = btf__load_vmlinux_btf(), *local, *sub;
	const struct btf_member *km, *sm;
	int kt, st, ki, si, id, u32, fd;
	long long kv = -1, sv = -2;
	const void *raw;
	void *buf;
	size_t len;
	__u32 n, kn;

	ok(!libbpf_get_error(k), "the running kernel's BTF is read");
	if (libbpf_get_error(k))
		return done_testing();

	/* an object naming task_struct (and a flavour of it), pid_namespace,
	 * an enum, and a type of its own the kernel does not have */
	local = btf__new_empty();
	u32 = btf__add_int(local, "unsigned int", 4, 0);
	id = btf__add_struct(local, "task_struct", 8);
	btf__add_field(local, "pid", u32, 0, 0);
	id = btf__add_struct(local, "task_struct___old", 8);
	btf__add_field(local, "state", u32, 0, 0);
	btf__add_struct(local, "pid_namespace", 4);
	btf__add_enum(local, "bpf_func_id", 4);
	btf__add_enum_value(local, "BPF_FUNC_loop", 181);
	btf__add_struct(local, "sidescope_own_type", 4);
	ok(id > 0, "a local BTF made");

	sub = kbtf__subset(k, local);
	ok(sub != NULL, "the subset made");
	if (!sub)
		return done_testing();

	kt = btf__find_by_name_kind(k, "task_struct", BTF_KIND_STRUCT);
	st = btf__find_by_name_kind(sub, "task_struct", BTF_KIND_STRUCT);
	ok(kt > 0 && st > 0, "task_struct is in it");
	if (kt > 0 && st > 0) {
		is_int((int)btf__type_by_id(sub, (__u32)st)->size,
		       (int)btf__type_by_id(k, (__u32)kt)->size, "of the kernel's size");
		is_int(btf_vlen(btf__type_by_id(sub, (__u32)st)),
		       btf_vlen(btf__type_by_id(k, (__u32)kt)), "with all its members");
		km = member(k, kt, "pid", &ki);
		sm = member(sub, st, "pid", &si);
		ok(km && sm && btf_member_bit_offset(btf__type_by_id(k, (__u32)kt), (__u32)ki) ==
				       btf_member_bit_offset(btf__type_by_id(sub, (__u32)st), (__u32)si),
		   "pid at the kernel's offset");
		km = member(k, kt, "group_leader", &ki);
		sm = member(sub, st, "group_leader", &si);
		ok(km && sm && btf_is_ptr(btf__type_by_id(sub, sm->type)) &&
			   btf__type_by_id(sub, sm->type)->type == 0,
		   "a pointer member points to void");
		km = member(k, kt, "thread_pid", &ki);
		ok(km && member(sub, st, "thread_pid", &si), "thread_pid is there too");
	}
	ok(btf__find_by_name_kind(sub, "pid_namespace", BTF_KIND_STRUCT) > 0,
	   "a struct named only as a type is in it");
	id = btf__find_by_name_kind(sub, "bpf_func_id", BTF_KIND_ENUM);
	kt = btf__find_by_name_kind(k, "bpf_func_id", BTF_KIND_ENUM);
	if (id > 0 && kt > 0 && !enum_value(sub, id, "BPF_FUNC_loop", &sv))
		enum_value(k, kt, "BPF_FUNC_loop", &kv);
	ok(sv == kv, "the enum with the kernel's values (BPF_FUNC_loop %lld)", sv);
	ok(btf__find_by_name_kind(sub, "mm_struct", BTF_KIND_STRUCT) < 0,
	   "a struct only pointed to is not");
	ok(btf__find_by_name_kind(sub, "sidescope_own_type", BTF_KIND_STRUCT) < 0,
	   "nor the object's own types");
	raw = btf__raw_data(sub, &n);
	btf__raw_data(k, &kn);
	diag("%u bytes of the kernel's %u", n, kn);
	ok(raw && n > 0 && n * 20 < kn, "a twentieth of the kernel's BTF at most");

	fd = raw ? kbtf__memfd(raw, n) : -1;
	ok(fd >= 0, "put in a memory file");
	if (fd >= 0) {
		char path[32];
		struct btf *again;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		again = btf__parse(path, NULL);
		ok(!libbpf_get_error(again) && btf__type_cnt(again) == btf__type_cnt(sub),
		   "which libbpf reads back whole");
		btf__free(again);
		close(fd);
	}
	errno = 0;
	ok(kbtf__memfd("not BTF at all", 14) < 0 && errno == EINVAL, "bytes that are not BTF refused");

	ok(kbtf__make(local, &buf, &len) == 0 && len == n && !memcmp(buf, raw, n),
	   "kbtf__make gives the same bytes");
	free(buf);
	ok(kbtf__key("a", 1) != 0 && kbtf__key("a", 1) == kbtf__key("a", 1) &&
		   kbtf__key("a", 1) != kbtf__key("b", 1),
	   "the key stands for the object and the boot's kernel");
	btf__free(sub);
	btf__free(local);
	btf__free(k);
	return done_testing();
}
