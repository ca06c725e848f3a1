/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Types shared by bpf/uprobe.bpf.c and tools/lib/uprobe/: the per-probe fetch
 * recipe that user space compiles from a probe spec and the generic BPF
 * program runs, and the event records it sends through the ring buffer. */
#ifndef SIDESCOPE_UPROBE_H
#define SIDESCOPE_UPROBE_H

#define UP_MAX_PROBES	64	/* probes in one session */
#define UP_MAX_SLOTS	8	/* values fetched per hit (args + filter operands) */
#define UP_MAX_STEPS	4	/* dereferences in one expression */
#define UP_MAX_FOPS	32	/* filter program length (a power of 2) */
#define UP_FSTACK	8	/* filter evaluation stack depth */
#define UP_STR_MAX	4096	/* bytes copied for one string at most */
#define UP_DATA_MAX	8192	/* string bytes in one event at most */
#define UP_MAX_UNITS	2047	/* --max-str ceiling: UTF-16 units (2 bytes each + 1 more) */
#define UP_HIST_SLOTS	64	/* log2 buckets (latency, --hist) */
#define UP_BY_BYTES	128	/* --by: bytes of a string value in a key */
#define UP_NO_SLOT	0xff	/* recipe.by_slot/hist_slot: none */

/* Cookie bits: the low 16 bits are the probe index. */
#define UP_COOKIE_LAT_ENTRY	(1u << 16)	/* companion entry hook: latency start only */
#define UP_COOKIE_LAT_RET	(1u << 17)	/* companion return hook: latency end only */

/* Where an expression starts. */
enum up_base {
	UP_BASE_CONST = 0,
	UP_BASE_ARG1 = 1,	/* .. UP_BASE_ARG6 = 6: x86-64 SysV integer registers */
	UP_BASE_RET = 7,
	/* reg(NAME), x86-64: ax bx cx dx si di bp sp r8..r15 ip; Go's
	 * ABIInternal passes integer arguments in ax, bx, cx, di, si, r8.. */
	UP_BASE_AX = 8, UP_BASE_BX, UP_BASE_CX, UP_BASE_DX,
	UP_BASE_SI, UP_BASE_DI, UP_BASE_BP, UP_BASE_SP,
	UP_BASE_R8, UP_BASE_R9, UP_BASE_R10, UP_BASE_R11,
	UP_BASE_R12, UP_BASE_R13, UP_BASE_R14, UP_BASE_R15,
	UP_BASE_IP,
	UP_NBASES,		/* at most UP_MAX_BASES */
};
#define UP_MAX_BASES	32	/* registers the BPF program reads (a power of 2) */

/* One dereference: value += add, then value = *(size, sign)value. */
struct up_step {
	__s64 add;
	__u8 size;		/* 1, 2, 4, 8 */
	__u8 sign;		/* sign-extend the loaded value */
	__u8 pad[6];
};

/* base (+ steps) + final_add. A constant has base UP_BASE_CONST and value
 * final_add. */
struct up_expr {
	__u8 base;
	__u8 nsteps;
	__u8 pad[6];
	__s64 final_add;
	struct up_step steps[UP_MAX_STEPS];
};

/* The argument kinds, in one list: UP_ARG_KINDS(X) calls
 * X(ID, NAME, UNIT, SECOND, FLAGS) for each, in the order of their values.
 * ID makes UP_KIND_ID; NAME is the spec's function and the JSON "type";
 * the other columns (tools/lib/uprobe/argkind.h) say how user space parses,
 * sizes and decodes it. The BPF program uses the enum only; what it fetches
 * for each kind is its switch in fetch_string(). */
#define UP_ARG_KINDS(X)								\
	/* the expression's value */						\
	X(INT,    "int",           0, AK_NONE,       0)				\
	/* NUL-terminated bytes at the value */					\
	X(STR,    "str",           1, AK_MAX,        AK_CALL)			\
	/* NUL-terminated UTF-16LE at the value */				\
	X(STR16Z, "str16",         2, AK_MAX_OR_LEN, AK_CALL | AK_UTF16 | AK_NUL)	\
	/* UTF-16LE of len code units at the value */				\
	X(STR16N, "str16n",        2, AK_LEN,        AK_CALL | AK_UTF16 | AK_COUNTED)	\
	/* .NET string: s32 length at +8, chars at +12 */			\
	X(DOTNET, "dotnet_string", 2, AK_MAX,        AK_CALL | AK_UTF16 | AK_COUNTED)	\
	/* Go string: len bytes at the value (no NUL); gostr(HDR) reads	\
	 * the header {ptr, len} at HDR */					\
	X(GOSTR,  "gostr",         1, AK_GO,         AK_CALL | AK_COUNTED)

enum up_kind {
#define UP_KIND_ENUM(id, name, unit, second, flags) UP_KIND_##id,
	UP_ARG_KINDS(UP_KIND_ENUM)
#undef UP_KIND_ENUM
	UP_NKINDS
};

struct up_slot {
	__u8 kind;
	__u8 pad;
	__u16 max_units;	/* string limit in code units (bytes for STR) */
	__u32 pad2;
	struct up_expr val;
	struct up_expr len;	/* UP_KIND_STR16N and UP_KIND_GOSTR only */
};

enum up_fop_code {
	UP_FOP_END = 0,
	UP_FOP_SLOT,		/* push slots[slot].value (as s64) */
	UP_FOP_IMM,		/* push imm */
	UP_FOP_EQ, UP_FOP_NE, UP_FOP_LT, UP_FOP_LE, UP_FOP_GT, UP_FOP_GE,
	UP_FOP_AND, UP_FOP_OR, UP_FOP_NOT,
};

struct up_fop {
	__u8 op;
	__u8 slot;
	__u8 pad[6];
	__s64 imm;
};

/* The recipe for one probe, in the "recipes" array map at its index. */
struct up_recipe {
	__u32 nslots;
	__u32 nfops;		/* 0: no filter */
	__u8 is_ret;		/* attached as a uretprobe */
	__u8 latency;		/* pair entry and return for --latency */
	__u8 no_events;		/* count and time only: no event to user space */
	__u8 by_slot;		/* --by: count hits per value of this slot */
	__u8 hist_slot;		/* --hist: log2 histogram of this slot's value */
	__u8 stacks;		/* --stacks: count hits per user stack */
	__u8 pad[2];
	struct up_slot slots[UP_MAX_SLOTS];
	struct up_fop fops[UP_MAX_FOPS];
};

/* Per-slot result flags. */
#define UP_VF_FAULT	0x1	/* a read failed: value or string unavailable */
#define UP_VF_NULL	0x2	/* string pointer was NULL */
#define UP_VF_BADLEN	0x4	/* length negative (count holds it) */
#define UP_VF_PARTIAL	0x8	/* the copy stopped at an unreadable page */
#define UP_VF_CUT	0x10	/* more characters than max_units */

struct up_val {
	__u64 value;		/* INT: the value; strings: the address */
	__u32 off;		/* string bytes at data[off] */
	__u32 len;		/* bytes copied */
	__s64 count;		/* STR16N/DOTNET/GOSTR: length as the program had it */
	__u32 flags;
	__u32 pad;
};

struct up_event_hdr {
	__u64 ts;		/* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u32 pid;		/* as seen in the sidecar's PID namespace */
	__u32 tid;
	__u32 probe;
	__u32 size;		/* header + data bytes */
	__u32 nslots;
	__u32 cpu;
	char comm[16];
	struct up_val vals[UP_MAX_SLOTS];
};

struct up_event {
	struct up_event_hdr hdr;
	/* twice UP_DATA_MAX: room for the last string, and a power of 2 the
	 * verifier can bound the output size with */
	__u8 data[2 * UP_DATA_MAX];
};

/* --by: one distinct value of one probe's expression, the key of the
 * "by" map (zeroed first: every byte counts in the hash). A string's bytes
 * are its first UP_BY_BYTES; flags has UP_VF_CUT when it went on. */
struct up_bykey {
	__u32 probe;
	__u32 flags;		/* UP_VF_* */
	__u32 len;		/* bytes in data */
	__u32 pad;
	__s64 count;		/* STR16N/DOTNET: the length the program had */
	__u64 value;		/* INT: the value; strings: 0 */
	__u8 data[UP_BY_BYTES];
};

/* --by of an integer (or of a value that could not be read): a small key
 * of its own map, "by_int", which hashes faster than struct up_bykey. */
struct up_byint {
	__u32 probe;
	__u32 flags;		/* UP_VF_FAULT */
	__u64 value;
};

/* Per-CPU counters, at index probe * UP_NSTATS + which. */
enum up_stat {
	UP_STAT_HITS = 0,	/* the probe fired in the traced process(es) */
	UP_STAT_FILTERED,	/* the filter said no */
	UP_STAT_LOST,		/* ring buffer full: event dropped */
	UP_STAT_OUTSIDE,	/* fired outside the sidecar's PID namespace */
	UP_STAT_BY_FULL,	/* --by: the map of values was full: hit not counted */
	UP_STAT_NEGATIVE,	/* --hist: a negative value (not in the buckets) */
	UP_STAT_UNREAD,		/* --by/--hist: the value could not be read */
	UP_NSTATS,
};

#endif
