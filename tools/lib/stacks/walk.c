// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A thread's user stack walked in user space (stacks/walk.h). */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/appfile.h"
#include "core/proc.h"
#include "core/run.h"
#include "core/util.h"
#include "stacks/walk.h"
#include "sym/cficache.h"
#include "sym/cfitab.h"
#include "sym/elfsym.h"
#include "sym/xsegs.h"

/* one object's table and its executable segments */
struct wk_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec ctime;
	int vdso;
	int ok;
	struct cfi_table t;
	struct xsegs segs;
};

struct stk_walker {
	struct cficache *cache;
	struct wk_file **files;
	size_t nfiles, cap;
	uint64_t rows;
	/* the process */
	pid_t pid;
	int maps_fd;
	struct proc_maps *maps;
	struct wk_file **of_map;	/* per mapping: its file, or NULL */
	char *tried;			/* per mapping: looked at */
	uint64_t build_ns;
	struct wk_file *vdso;
	int vdso_tried;
};

struct stk_walker *stk_walker__new(struct cficache *cache)
{
	struct stk_walker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cache = cache;
	w->maps_fd = -1;
	return w;
}

static void drop_proc(struct stk_walker *w)
{
	proc_maps__free(w->maps);
	w->maps = NULL;
	free(w->of_map);
	w->of_map = NULL;
	free(w->tried);
	w->tried = NULL;
	if (w->maps_fd >= 0)
		close(w->maps_fd);
	w->maps_fd = -1;
}

void stk_walker__free(struct stk_walker *w)
{
	size_t i;

	if (!w)
		return;
	drop_proc(w);
	for (i = 0; i < w->nfiles; i++) {
		cfitab__free(&w->files[i]->t);
		free(w->files[i]);
	}
	free(w->files);
	if (w->vdso) {
		cfitab__free(&w->vdso->t);
		free(w->vdso);
	}
	free(w);
}

int stk_walker__set_proc(struct stk_walker *w, pid_t pid)
{
	uint64_t hash;

	drop_proc(w);
	w->pid = pid;
	w->build_ns = 0;
	w->maps_fd = proc_maps__open(pid);
	if (w->maps_fd < 0)
		return w->maps_fd;
	w->maps = proc_maps__load_changed_fd(w->maps_fd, 0, &hash);
	if (!w->maps || !w->maps->n) {
		drop_proc(w);
		return -ESRCH;
	}
	w->of_map = calloc(w->maps->n, sizeof(*w->of_map));
	w->tried = calloc(w->maps->n, 1);
	if (!w->of_map || !w->tried) {
		drop_proc(w);
		return -ENOMEM;
	}
	return 0;
}

int stk_walker__proc_same(struct stk_walker *w)
{
	struct proc_maps *m;
	uint64_t hash;
	int same;

	if (w->maps_fd < 0)
		return 0;
	/* the descriptor reads the memory it was opened on: nothing once the
	 * process has exec'd or exited */
	m = proc_maps__load_changed_fd(w->maps_fd, 0, &hash);
	same = m && m->n > 0;
	proc_maps__free(m);
	return same;
}

static struct wk_file *vdso_file(struct stk_walker *w, const struct proc_map *m)
{
	uintptr_t base;
	size_t len;
	Elf *elf = NULL;
	void *copy = NULL;
	struct wk_file *f;

	if (!w->vdso_tried) {
		w->vdso_tried = 1;
		if (proc__self_vdso(&base, &len) || len > (1u << 20) || !(f = calloc(1, sizeof(*f))))
			return NULL;
		f->vdso = 1;
		f->size = (off_t)len;
		copy = malloc(len);	/* libelf wants writable memory */
		if (copy && elf_version(EV_CURRENT) != EV_NONE) {
			memcpy(copy, (const void *)base, len);
			elf = elf_memory(copy, len);
		}
		f->ok = elf && elf_kind(elf) == ELF_K_ELF && !xsegs__read(elf, &f->segs) &&
			!cfitab__build_elf(elf, len, &f->t);
		if (elf)
			elf_end(elf);
		free(copy);
		w->vdso = f;
	}
	/* the target's vDSO is ours when the kernel is the same: same size */
	return w->vdso && w->vdso->ok && (off_t)(m->end - m->start) == w->vdso->size ? w->vdso : NULL;
}

static struct wk_file *known(struct stk_walker *w, const struct stat *st)
{
	size_t i;

	for (i = 0; i < w->nfiles; i++) {
		struct wk_file *f = w->files[i];

		if (f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
		    f->ctime.tv_sec == st->st_ctim.tv_sec && f->ctime.tv_nsec == st->st_ctim.tv_nsec)
			return f;
	}
	return NULL;
}

/* The table of the file open at FD (ST its fstat): from the cache or
 * built, within the process's time and the rows left. */
static void build(struct stk_walker *w, struct wk_file *f, int fd, const struct stat *st)
{
	uint64_t t0 = now_ns(), budget = STK_BUILD_MS * 1000000ull;
	struct cfitab_limits lim = { .stop = &run__stop };
	uint64_t fsize;
	Elf *elf;
	int err;

	elf = elfsym__begin(fd, &fsize);
	if (!elf)
		return;
	err = xsegs__read(elf, &f->segs);
	elf_end(elf);
	if (err || w->build_ns >= budget || w->rows >= STK_MAX_ROWS)
		return;
	lim.deadline_ns = t0 + budget - w->build_ns;
	lim.max_rows = STK_MAX_ROWS - w->rows;
	if (w->cache && !cficache__get(w->cache, st, &f->t)) {
		err = 0;
	} else {
		err = cfitab__build_fd_within(fd, &lim, &f->t);
		if (!err && w->cache)
			cficache__put(w->cache, st, &f->t);
	}
	w->build_ns += now_ns() - t0;
	if (!err) {
		f->ok = 1;
		w->rows += f->t.n;
	}
}

static struct wk_file *file_of(struct stk_walker *w, size_t idx)
{
	const struct proc_map *m = &w->maps->maps[idx];
	char clean[PATH_MAX], path[PATH_MAX + 64];
	struct wk_file *f;
	struct stat st;
	int fd;

	if (w->tried[idx])
		return w->of_map[idx];
	w->tried[idx] = 1;
	if (!strcmp(m->path, "[vdso]"))
		return w->of_map[idx] = vdso_file(w, m);
	if (m->path[0] != '/' || !m->inode)
		return NULL;	/* anonymous: JIT code, walked by frame pointer */
	fd = appfile__open_mapping(w->pid, m, clean, sizeof(clean), path, sizeof(path), &st);
	if (fd < 0)
		return NULL;
	f = known(w, &st);
	if (!f && !array__room(&w->files, &w->cap, w->nfiles + 1, sizeof(*w->files), 16) &&
	    (f = calloc(1, sizeof(*f)))) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->size = st.st_size;
		f->ctime = st.st_ctim;
		w->files[w->nfiles++] = f;
		build(w, f, fd, &st);
	}
	close(fd);
	return w->of_map[idx] = f;
}

struct mem {
	uint64_t base;
	const uint8_t *b;
	size_t len;
};

static int read_stack(uint64_t addr, uint64_t *out, void *ctx)
{
	const struct mem *m = ctx;

	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < 8)
		return -1;
	memcpy(out, m->b + (addr - m->base), 8);
	return 0;
}

int stk_walker__walk(struct stk_walker *w, const struct stacks_rec *r, uint64_t ubase,
		     const uint8_t *us, uint64_t *ips, int max, const char **why)
{
	struct mem mem = { .base = ubase, .b = us, .len = us ? r->ulen : 0 };
	struct cfi_regs regs = { .ip = r->ip, .sp = r->sp, .bp = r->bp, .bp_known = 1,
				 .di = r->args[0], .di_known = !!(r->flags & STACKS_F_ARGS) };
	int n = 0;

	*why = NULL;
	if (!(r->flags & STACKS_F_USER)) {
		*why = "no user registers";
		return 0;
	}
	if (!us)
		*why = "no stack memory";
	while (n < max) {
		const struct proc_map *m;
		const struct cfi_row *row = NULL;
		struct wk_file *f;
		uint64_t look = n ? regs.ip - 1 : regs.ip, vaddr;
		int st;

		ips[n++] = regs.ip;
		if (!us)
			return n;
		m = w->maps ? proc_maps__find(w->maps, look) : NULL;
		if (!m || !strchr(m->perms, 'x')) {
			*why = "an address in no executable mapping";
			return n;
		}
		f = file_of(w, (size_t)(m - w->maps->maps));
		if (f && f->ok) {
			uint64_t off = m->offset + (look - m->start);

			if (f->vdso)
				vaddr = look - m->start;
			else if (!xsegs__vaddr(&f->segs, off, &vaddr))
				vaddr = 0;
			if (vaddr)
				row = cfitab__find(&f->t, vaddr);
			if (!row || row->cfa == CFI_CFA_NONE) {
				/* code of an object with tables but no row: not
				 * a frame pointer's either */
				*why = "no unwind rule for an address";
				return n;
			}
		}
		st = cfitab__step(row, &regs, read_stack, &mem);
		if (st == 1)
			return n;
		if (st < 0) {
			*why = regs.sp >= ubase + mem.len ? "the end of the stack copy (see --stack-kb)" :
			       !row ? "code without unwind tables or frame pointers (JIT code?)" :
			       "an unwind rule it cannot follow";
			return n;
		}
		if (!regs.ip)
			return n;
	}
	*why = "too many frames";
	return n;
}
