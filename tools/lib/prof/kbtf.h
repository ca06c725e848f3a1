/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's types a BPF object needs, apart from the kernel's BTF.
 *
 * libbpf relocates a CO-RE object against the running kernel's BTF: it
 * reads all of /sys/kernel/btf/vmlinux (some 5 MB, 4 KB a read) and looks
 * each type the object names up among its ~130,000 types, at every load.
 * kbtf__subset copies out only the structs, unions, enums and typedefs
 * the object names, with what they embed and every pointer made void *
 * (relocations match pointers as pointers, whatever they point to): a
 * few hundred types that give the same offsets, sizes and enum values.
 * Kept between captures (cficache blobs, keyed by kbtf__key) and handed
 * to libbpf as its btf_custom_path, a load needs neither the read nor the
 * look-ups. */
#ifndef SIDESCOPE_PROF_KBTF_H
#define SIDESCOPE_PROF_KBTF_H

#include <stddef.h>
#include <stdint.h>

struct btf;

/* The types of KERNEL named in LOCAL (an object's own BTF; "name___flavor"
 * counts as "name"), as a new BTF; NULL with errno. */
struct btf *kbtf__subset(const struct btf *kernel, const struct btf *local);

/* A key for the subset of the running kernel's BTF that the object OBJ
 * (its ELF bytes) needs: the boot, the size of the kernel's BTF and the
 * object. 0 when the kernel has no BTF to tell. */
uint64_t kbtf__key(const void *obj, size_t size);

/* The subset of the running kernel's BTF for LOCAL, as raw BTF bytes in
 * *BUF (free it) and *LEN: 0 or a negative errno. */
int kbtf__make(const struct btf *local, void **buf, size_t *len);

/* LEN bytes of raw BTF at BUF, checked to parse as BTF, in a memory file
 * for libbpf to open as /proc/self/fd/N: its descriptor, or -1 with
 * errno. */
int kbtf__memfd(const void *buf, size_t len);

/* At most this many bytes of BTF are read back */
#define KBTF_MAX_BYTES (4u << 20)

#endif
