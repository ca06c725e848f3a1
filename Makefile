# sidescope build. Everything goes to $(BUILD); nothing into the source tree.
#   make                 build bpf objects, skeletons, the sidescope binary,
#                        the sample workload and the unit tests
#   make test            run every test layer with prove (TAP)
#   make test-local      unit and integration tests only (no containers)
#   make test-FEATURE    the integration tests of one folder: test-profile,
#                        test-uprobe, test-lttng... (tests/integration/*/)
#   make fuzz [FUZZ_SECONDS=N]  run every libFuzzer target N seconds
#   make demo            profile the bundled workload, leave a flame graph
#   make install PREFIX=DIR
#   make SANITIZE=1 ...  build with ASan+UBSan into build-san/
#   make vmlinux         regenerate bpf/vmlinux.h from the running kernel

VERSION   := $(shell cat VERSION)
SANITIZE  ?= 0
ifeq ($(SANITIZE),1)
BUILD     ?= build-san
CC        := clang
SANFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
else ifeq ($(FUZZ),1)
BUILD     ?= build-fuzz
CC        := clang
SANFLAGS  := -fsanitize=fuzzer-no-link,address,undefined
else
BUILD     ?= build
SANFLAGS  :=
endif
# gcc's guesses about snprintf truncation are noise: every call is bounded
WARN_CC   := $(if $(findstring clang,$(CC)),,-Wno-format-truncation)
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PROTOC_C  ?= protoc-c
PREFIX    ?= /usr/local
PROVE     ?= prove
# The published pprof profile.proto, as Debian's pprof source package ships it.
PROFILE_PROTO ?= /usr/share/gocode/src/github.com/google/pprof/proto/profile.proto

PKGS      := libbpf libdw libelf zlib libprotobuf-c babeltrace2 lttng-ust lttng-ctl capstone
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# liblttng-ctl, Capstone and libbabeltrace2 are loaded when
# first needed (tools/lib/core/dynlib.h), not linked: ~12 ms of every
# run's start-up
PKG_LIBS  := $(shell pkg-config --libs libbpf libdw libelf zlib libprotobuf-c 2>/dev/null)
# libbpf, elfutils, zlib and protobuf-c (with xz and bzip2 behind libdw)
# linked statically when all their archives are installed: ~1 ms less in
# the dynamic loader every run. STATIC_LIBS=0: shared ones.
STATIC_NAMES := bpf dw elf protobuf-c z lzma bz2
STATIC_LIBS ?= $(if $(strip $(foreach l,$(STATIC_NAMES),$(if $(findstring /,$(shell $(CC) -print-file-name=lib$(l).a)),,$(l)))),0,1)
ifeq ($(STATIC_LIBS),1)
PKG_LIBS  := -Wl,-Bstatic $(addprefix -l,$(STATIC_NAMES)) -Wl,-Bdynamic
endif

WARN      := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS    ?= -O2 -g
CFLAGS    += -MMD -MP -std=gnu11 $(WARN) $(WARN_CC) $(SANFLAGS) -fno-omit-frame-pointer -D_GNU_SOURCE \
             -DSIDESCOPE_VERSION='"$(VERSION)"' \
             -Itools/lib -Ibpf -I$(BUILD)/bpf -I$(BUILD)/gen $(PKG_CFLAGS)
LDFLAGS   += $(SANFLAGS)
# libiberty (the demangler: sym/demangle.c) exists as a static library only
LDLIBS    += $(PKG_LIBS) -liberty -lm

ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ibpf -I$(BUILD)/bpf

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.skel.h,$(BPF_SRCS))

PROTO_GEN := $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
# tools/lib/DOMAIN/*.c: one directory per capability (docs/architecture.md)
LIB_SRCS  := $(wildcard tools/lib/*/*.c)
LIB_OBJS  := $(patsubst tools/lib/%.c,$(BUILD)/lib/%.o,$(LIB_SRCS)) $(BUILD)/gen/profile.pb-c.o
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_OBJS := $(patsubst tools/%.c,$(BUILD)/obj/%.o,$(TOOL_SRCS))
LIBSS     := $(BUILD)/libsidescope.a

UNIT_SRCS := $(wildcard tests/unit/*/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%.t,$(UNIT_SRCS))
# programs the integration tests run as targets
TESTPROG_SRCS := $(wildcard tests/progs/*.c)
TESTPROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(TESTPROG_SRCS))

# the .NET sample (examples/dotnet), built when the .NET SDK is installed
DOTNET    ?= $(shell command -v dotnet 2>/dev/null)
DOTNET_SRCS := $(wildcard examples/dotnet/src/*.cs examples/dotnet/src/*.csproj)
DOTNET_SAMPLE := $(if $(DOTNET),$(BUILD)/dotnet/app/SampleApp.dll $(BUILD)/dotnet/app/libsampleapp-tp.so)

# wrapper scripts that go into the image's PATH (install-deps and demo do not)
# Fuzz targets: libFuzzer binaries under 'make fuzz'; plain replay drivers
# (corpus + crash regressions) in every build, run by the tests.
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/fuzz/%.c,$(BUILD)/tests/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60

SCRIPTS   := $(wildcard $(addprefix scripts/,cpu-profile uprobe-trace lttng-capture capture-loop doctor timeline-capture))

.PHONY: all test test-local unit-test demo install clean vmlinux image bench fuzz
.DELETE_ON_ERROR:
# keep the BPF objects and skeletons: they are outputs, not scratch files
.SECONDARY: $(BPF_OBJS) $(BPF_SKELS)

ifeq ($(FUZZ),1)
all: $(patsubst tests/fuzz/%.c,$(BUILD)/%,$(FUZZ_SRCS))
else
all: $(BUILD)/sidescope $(BUILD)/workload $(UNIT_BINS) $(TESTPROGS) $(FUZZ_REPLAY) $(DOTNET_SAMPLE)
endif

$(BUILD)/bpf $(BUILD)/lib $(BUILD)/obj $(BUILD)/gen $(BUILD)/tests/unit $(BUILD)/tests/progs $(BUILD)/tests/fuzz:
	@mkdir -p $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) | $(BUILD)/bpf
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# the skeleton embeds the object without its DWARF (bpftool's linker drops
# it; BTF and line info stay): 755 KB less for every run to page in, and
# to hash for the kernel types kept between captures
$(BUILD)/bpf/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen object $(@:.skel.h=.lean.o) $<
	$(BPFTOOL) gen skeleton $(@:.skel.h=.lean.o) name $(subst -,_,$*)_bpf > $@

$(PROTO_GEN) &: $(PROFILE_PROTO) | $(BUILD)/gen
	cp $(PROFILE_PROTO) $(BUILD)/gen/profile.proto
	cd $(BUILD)/gen && $(PROTOC_C) --c_out=. profile.proto

$(BUILD)/gen/profile.pb-c.o: $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/profile.pb-c.h
	$(CC) $(filter-out -Werror,$(CFLAGS)) -c $< -o $@

# Header dependencies come from the compiler (-MMD -MP: $(BUILD)/**/*.d);
# the generated headers are order-only prerequisites so the first build
# makes them before anything includes them.
$(BUILD)/lib/%.o: tools/lib/%.c | $(BPF_SKELS) $(PROTO_GEN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: tools/%.c | $(BPF_SKELS) $(PROTO_GEN) $(BUILD)/obj
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBSS): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/sidescope: $(TOOL_OBJS) $(LIBSS)
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJS) $(LIBSS) $(LDLIBS)

# The bundled workload: frame pointers and no inlining, so every frame is real.
# Built with clang: gcc 12 ignores -mno-omit-leaf-frame-pointer, and a leaf
# without a frame hides its caller from frame-pointer unwinding.
TARGET_CC ?= $(CLANG)
$(BUILD)/workload: examples/workload/workload.c | $(BUILD)/obj
	$(TARGET_CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		-Wall -Wextra -Werror $(SANFLAGS) -o $@ $<

$(BUILD)/tests/unit/%.t: tests/unit/%.c $(LIBSS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/lib $(LDFLAGS) -o $@ $< $(LIBSS) $(LDLIBS)

$(BUILD)/tests/progs/%: tests/progs/%.c | $(BUILD)/tests/progs
	$(TARGET_CC) -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline -fno-optimize-sibling-calls \
		-Wall -Wextra -Werror -D_GNU_SOURCE $(shell sed -n 's|^// CFLAGS: ||p' $<) \
		-o $@ $< $(shell sed -n 's|^// LDLIBS: ||p' $<)

# The ReadyToRun fixture of test_r2r: a small class library compiled by
# crossgen2 (dotnet publish -p:PublishReadyToRun=true). dotnet runs only when
# its sources change; after the first restore it needs no network. Without a
# .NET SDK the test skips (and fails under SIDESCOPE_REQUIRE_ALL=1).
DOTNET    ?= $(shell command -v dotnet 2>/dev/null)
R2R_SAMPLE_DIR := tests/data/r2r/R2RSample
R2R_SAMPLE := $(BUILD)/r2r/publish/R2RSample.dll
ifneq ($(DOTNET),)
ifneq ($(FUZZ),1)
all: $(R2R_SAMPLE)
endif
endif

$(R2R_SAMPLE): $(wildcard $(R2R_SAMPLE_DIR)/*.cs $(R2R_SAMPLE_DIR)/*.csproj)
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
		$(DOTNET) publish $(R2R_SAMPLE_DIR)/R2RSample.csproj -c Release --nologo -v q \
		-o $(abspath $(BUILD))/r2r/publish \
		-p:BaseIntermediateOutputPath=$(abspath $(BUILD))/r2r/obj/ \
		-p:BaseOutputPath=$(abspath $(BUILD))/r2r/bin/
	cp $(BUILD)/r2r/bin/Release/net10.0/linux-x64/R2RSample.dll $(BUILD)/r2r/R2RSample.il.dll
	touch $@

# A plain .NET console program for the profiler's tests (tests/progs/
# HotApp): built like the ReadyToRun fixture, when the SDK is installed.
HOTAPP_DIR := tests/progs/HotApp
HOTAPP := $(BUILD)/hotapp/HotApp.dll
ifneq ($(DOTNET),)
ifneq ($(FUZZ),1)
all: $(HOTAPP)
endif
endif

$(HOTAPP): $(wildcard $(HOTAPP_DIR)/*.cs $(HOTAPP_DIR)/*.csproj)
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
		$(DOTNET) build $(HOTAPP_DIR)/HotApp.csproj -c Release --nologo -v q \
		-o $(abspath $(BUILD))/hotapp \
		-p:BaseIntermediateOutputPath=$(abspath $(BUILD))/hotapp-obj/ \
		-p:BaseOutputPath=$(abspath $(BUILD))/hotapp-bin/
	touch $@

$(BUILD)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/driver.c $(LIBSS) | $(BUILD)/tests/fuzz
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< tests/fuzz/driver.c $(LIBSS) $(LDLIBS)

# libFuzzer builds (make FUZZ=1 is implied by 'make fuzz')
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(LIBSS)
	$(CC) $(CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $< $(LIBSS) $(LDLIBS)

# The .NET sample (examples/dotnet), published ReadyToRun into
# $(BUILD)/dotnet/app with its LTTng tracepoint provider. Built when the .NET
# SDK is installed; dotnet publish runs only when the sources change.

.PHONY: dotnet-sample
dotnet-sample: $(BUILD)/dotnet/app/SampleApp.dll $(BUILD)/dotnet/app/libsampleapp-tp.so

$(BUILD)/dotnet/app/SampleApp.dll: $(DOTNET_SRCS)
	DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 \
		$(DOTNET) publish examples/dotnet/src/SampleApp.csproj -c Release --nologo -v quiet \
		--artifacts-path $(BUILD)/dotnet/artifacts -o $(BUILD)/dotnet/app
	touch $@

$(BUILD)/dotnet/app/libsampleapp-tp.so: examples/dotnet/native/sampleapp_tp.c examples/dotnet/native/sampleapp_tp.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
		-Iexamples/dotnet/native -o $@ $< -llttng-ust -ldl

# Test layers: unit (no root), integration (root, real kernel), pod (podman).
# SIDESCOPE_REQUIRE_ALL=1 turns every skip into a failure (CI sets it).
TEST_ENV  := SIDESCOPE_BUILD=$(abspath $(BUILD)) SIDESCOPE=$(abspath $(BUILD))/sidescope \
             SIDESCOPE_SRC=$(CURDIR) SANITIZE=$(SANITIZE)
# tests/integration/FEATURE/NAME.t, a folder a feature (docs/architecture.md)
INTEGRATION_TESTS := $(sort $(wildcard tests/integration/*/*.t))
FEATURES  := $(patsubst tests/integration/%/,%,$(sort $(dir $(INTEGRATION_TESTS))))
LOCAL_TESTS := $(UNIT_BINS) $(INTEGRATION_TESTS)
TESTS     ?= $(LOCAL_TESTS) $(sort $(wildcard tests/pod/*.t))
# before prove: every test named exists and is executable (prove stops the
# whole run at one it cannot execute), every integration test in a folder
CHECK_TESTS := sh tests/lib/check-tests.sh

test: all
	@$(CHECK_TESTS) $(TESTS)
	$(TEST_ENV) $(PROVE) --exec '' --timer $(PROVE_FLAGS) $(TESTS)

# Unit and integration tests only (no containers); CI runs these once more
# with SANITIZE=1.
test-local: all
	@$(CHECK_TESTS) $(LOCAL_TESTS)
	$(TEST_ENV) $(PROVE) --exec '' --timer $(PROVE_FLAGS) $(LOCAL_TESTS)

unit-test: all
	@$(CHECK_TESTS) $(UNIT_BINS)
	$(TEST_ENV) $(PROVE) --exec '' $(PROVE_FLAGS) $(UNIT_BINS)

# make test-FEATURE: the integration tests of tests/integration/FEATURE
.PHONY: $(addprefix test-,$(FEATURES))
$(addprefix test-,$(FEATURES)): test-%: all
	@$(CHECK_TESTS) $(filter tests/integration/$*/%,$(INTEGRATION_TESTS))
	$(TEST_ENV) $(PROVE) --exec '' --timer $(PROVE_FLAGS) $(filter tests/integration/$*/%,$(INTEGRATION_TESTS))

demo: all
	SIDESCOPE_BUILD=$(abspath $(BUILD)) sh scripts/demo

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/sidescope $(DESTDIR)$(PREFIX)/bin/sidescope
	for s in $(SCRIPTS); do install -m 0755 $$s $(DESTDIR)$(PREFIX)/bin/; done
	if [ -d scripts/lib ]; then install -d $(DESTDIR)$(PREFIX)/lib/sidescope && \
		install -m 0644 scripts/lib/* $(DESTDIR)$(PREFIX)/lib/sidescope/; fi

image:
	podman --runtime runc build --pull=never -t localhost/sidescope:latest .

# Fuzz every target for FUZZ_SECONDS each, from its seed corpus; a crash
# stops the run and leaves its input in build-fuzz/ (make it a regression
# under tests/fuzz/regressions/TARGET/).
fuzz:
	$(MAKE) FUZZ=1 all
	set -e; for src in $(FUZZ_SRCS); do \
		t=$$(basename $$src .c); n=$${t#fuzz_}; \
		mkdir -p build-fuzz/corpus/$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
		build-fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			$$(test -f tests/fuzz/$$n.dict && echo -dict=tests/fuzz/$$n.dict) \
			-artifact_prefix=build-fuzz/$$n- -print_final_stats=1 \
			build-fuzz/corpus/$$n tests/fuzz/corpus/$$n 2>&1 | \
			grep -E '^(stat::number_of_executed_units|==.*ERROR|SUMMARY)' || true; \
		test -z "$$(ls build-fuzz/$$n-crash-* build-fuzz/$$n-leak-* build-fuzz/$$n-timeout-* build-fuzz/$$n-oom-* 2>/dev/null)"; \
	done

bench: all
	sh bench/run

# Regenerate the pinned CO-RE header. Any kernel with BTF will do: CO-RE
# relocates field offsets at load time on whatever kernel runs the program.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > bpf/vmlinux.h

clean:
	rm -rf $(BUILD)

# the compiler's record of which headers each object, test and fuzz target read
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
