/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* /proc and PID-namespace helpers. The parsers take buffers so that unit
 * tests and fuzzers can feed them saved or hostile input. */
#ifndef SIDESCOPE_PROC_H
#define SIDESCOPE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/err.h"

/* Root of the proc filesystem, "/proc" unless a test points it elsewhere. */
void proc__set_root(const char *root);
const char *proc__root(void);

struct proc_status {
	pid_t pid;	/* as seen in the reader's PID namespace */
	pid_t tgid;
	pid_t ppid;
	pid_t nspid;	/* in the process's own (innermost) PID namespace */
	pid_t nstgid;
	int ns_depth;	/* number of PID namespaces the process is in */
	uid_t uid;
	int threads;	/* Threads: (0 when not said) */
	char name[64];
};

int proc__parse_status(const char *buf, struct proc_status *st);
int proc__read_status(pid_t pid, struct proc_status *st);

/* Start time (clock ticks since boot, field 22 of /proc/PID/stat): with the
 * PID it identifies a process across PID reuse. */
int proc__parse_stat_starttime(const char *buf, uint64_t *start);
int proc__start_time(pid_t pid, uint64_t *start);
/* Whether PID is still the process that started at START (0: any process
 * with that PID), and not a zombie: a PID reused by another process is not
 * alive. */
bool proc__alive(pid_t pid, uint64_t start);

/* Fields 9 (flags) of /proc/PID/stat; a kernel thread has PF_KTHREAD. */
int proc__parse_stat_flags(const char *buf, unsigned long *flags);
bool proc__is_kernel_thread(pid_t pid);

/* What PID is to a command that wants a process to trace: the one rule,
 * which proc__check_target words and 'sidescope plumbing target' answers
 * for the scripts. */
enum proc_target {
	PROC_TARGET_OK,		/* a live user-space process */
	PROC_TARGET_NONE,	/* no such process in this PID namespace */
	PROC_TARGET_THREAD,	/* a thread of process ST->tgid */
	PROC_TARGET_KTHREAD,	/* a kernel thread: no user space */
	PROC_TARGET_EXITED,	/* exited, not reaped yet (a zombie) */
};
/* The kind of PID; ST is filled unless PROC_TARGET_NONE. */
enum proc_target proc__target_kind(pid_t pid, struct proc_status *st);

/* Whether PID names a live user-space process, one that can be a target:
 * 0, or a negative errno with E saying what it is instead (no such
 * process, a thread of process P, a kernel thread, exited), names escaped. */
int proc__check_target(pid_t pid, struct err *e);

/* Command line with NULs turned into spaces; "[name]" for kernel threads. */
int proc__cmdline(pid_t pid, char *buf, size_t size);
/* The process's cgroup path (the v2 entry, else the first v1 entry). */
int proc__parse_cgroup(const char *buf, char *out, size_t size);
int proc__cgroup(pid_t pid, char *buf, size_t size);
/* The directory of cgroup (v2) CG into BUF: CG itself when absolute, else
 * under the v2 hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified in a
 * hybrid layout). */
void proc__cgroup_dir(const char *cg, char *buf, size_t size);
/* A short container hint from a cgroup path: the container id (12 chars)
 * when the path names one, else the last path component. */
void proc__container_hint(const char *cgroup, char *buf, size_t size);

/* Sorted list of PIDs (thread-group leaders) visible in proc__root().
 * Return the count and a malloc'd array, or a negative errno. */
int proc__list(pid_t **pids);

/* Device and inode of the PID namespace of PID (0: this process). */
int proc__pidns(pid_t pid, uint64_t *dev, uint64_t *ino);

/* Executable's path as the process sees it (readlink of /proc/PID/exe). */
int proc__exe(pid_t pid, char *buf, size_t size);

/* Whether the object at PATH, mapped by a process whose executable is EXE
 * (proc__exe; "" when unknown), is at the bottom of almost all its stacks:
 * the executable itself and the C library (main, a thread's start). Their
 * unwind tables and symbols are read as soon as the process is seen; a
 * server's other libraries are mostly mapped and never run in a capture,
 * and wait for a sample to need them. A matter of cost alone: a name that
 * lies only moves the wait. */
bool proc__core_object(const char *path, const char *exe);

struct proc_map {
	uint64_t start, end, offset;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char perms[5];
	char *path;	/* "" for anonymous mappings */
};

struct proc_maps {
	struct proc_map *maps;	/* sorted by start */
	size_t n;
	size_t bad_lines;	/* lines that could not be parsed, skipped */
	bool truncated;		/* the file was longer than we read (64 MiB) */
};

/* Parse the text of /proc/PID/maps. Return 0 or a negative errno. */
int proc_maps__parse(const char *buf, size_t len, struct proc_maps **out);
/* Read /proc/PID/maps. NULL with errno set on failure. */
struct proc_maps *proc_maps__load(pid_t pid);
/* /proc/PID/maps opened to be read again and again: the descriptor, or a
 * negative errno. It reads that process's mappings, and nothing once it
 * has exited (not those of a later process with its PID). */
int proc_maps__open(pid_t pid);
/* The mappings FD (from proc_maps__open) reads, unless the text hashes to
 * LAST (an earlier *HASH): then NULL with errno 0. *HASH: the text's hash.
 * NULL with errno ESRCH when the process has exited. For watching a
 * process for new mappings, at the cost of the read alone when there are
 * none (no open, no path walk in /proc). */
struct proc_maps *proc_maps__load_changed_fd(int fd, uint64_t last, uint64_t *hash);
const struct proc_map *proc_maps__find(const struct proc_maps *m, uint64_t addr);
/* Whether a mapped file's base name starts with prefix. */
bool proc_maps__has_lib(const struct proc_maps *m, const char *prefix);
void proc_maps__free(struct proc_maps *m);

enum proc_runtime {
	RUNTIME_NATIVE,
	RUNTIME_DOTNET,
	RUNTIME_NODE,
	RUNTIME_JVM,
	RUNTIME_GO,		/* never from proc__detect_runtime: ps reads the ELF file */
	RUNTIME_PYTHON,
	RUNTIME_RUBY,
	RUNTIME_PHP,
	RUNTIME_PERL,
	RUNTIME_BEAM,		/* the Erlang VM: Erlang, Elixir, Gleam */
};

/* The runtime of a process from its mappings M (may be NULL) and its
 * executable's path EXE: what the libraries and names show. Go programs are
 * static native executables; telling them apart takes their ELF file
 * (sym/gobin.h). */
enum proc_runtime proc__detect_runtime(const struct proc_maps *m, const char *exe);
const char *proc__runtime_name(enum proc_runtime rt);

/* Open the perf map of PID whose PID in its own namespace is NSTGID: the
 * process's own /tmp (resolved inside its root), then the shared /tmp (no
 * link followed), with appfile__open. Return the descriptor with the path in
 * BUF and its fstat in ST (if not NULL), or a negative errno (BUF ""). */
struct stat;
int proc__perfmap_open(pid_t pid, pid_t nstgid, char *buf, size_t size, struct stat *st);
/* The same, for a listing: 0 with the path in BUF, or -ENOENT. */
int proc__perfmap_path(pid_t pid, pid_t nstgid, char *buf, size_t size);

/* Whether the process matches NAME: its comm, or the base name of its
 * executable or of its first two arguments (".dll" optional, for dotnet). */
bool proc__matches_name(pid_t pid, const char *comm, const char *name);

/* Resolve "-n NAME" to PIDs (sorted, malloc'd). Return the count (0 when
 * nothing matches) or a negative errno. Skips the calling process. */
int proc__find_by_name(const char *name, pid_t **pids);

/* Now on the BPF programs' clock (bpf_ktime_get_ns): CLOCK_MONOTONIC
 * outside any time namespace; /proc/self/timens_offsets shifts ours. */
uint64_t proc__bpf_clock_ns(void);

/* The boot-time offset of our time namespace in clock ticks of
 * NS_PER_TICK: /proc shows start times shifted by it, BPF sees them
 * unshifted. 0 outside a time namespace. */
uint64_t proc__timens_boot_ticks(uint64_t ns_per_tick);

/* This process's own vDSO (the kernel's, the same in every process of its
 * ABI): its address (AT_SYSINFO_EHDR) into *BASE, the length of its
 * mapping in /proc/self/maps into *LEN. 0, or -1 when there is none. */
int proc__self_vdso(uintptr_t *base, size_t *len);

#endif
