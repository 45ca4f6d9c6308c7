# Static, stripped musl builds of uprobestats for x86_64 and aarch64, with the BPF
# programs embedded xz-compressed (decoded at load) and libbpf/libelf/zlib built from Debian sources.
#
#   make / make static   build/<arch>/uprobestats for every arch in ARCHES, sizes printed
#   make static-<arch>   one arch (x86_64 or aarch64)
#   make skeletons       gen/<arch>/bpf_objects.z.h (every bpf/<name>.bpf.c's objects, one xz)
#   make vendor          fetch + build the third-party static libraries only
#   make check-binaries  static/stripped/size checks and `--version` (arm64 under qemu)
#   make test            every test stage in order, then one "N passed, N failed" line
#   make vendor-clean    forget the fetched sources, sysroots and built libraries
#
# Pipeline per arch (x86_64 | aarch64):
#   vendor/MANIFEST --fetch.sh sources--> vendor/src/{libbpf,elfutils,zlib}/ (arch-free)
#                   --fetch.sh sysroot--> build/sysroot/<arch>/ (musl-dev, linux-libc-dev)
#   vendor/build.sh <arch>             -> build/vendor/<arch>/{lib,include}/
#   bpf/<name>.bpf.c --clang -target bpf--> build/<arch>/bpf/<name>.bpf.o
#                    (llvm-strip $(BPF_STRIP_FLAGS))
#                    --mk/embed-bpf.sh (xz -9e, all in one)--> gen/<arch>/bpf_objects.z.h
#   main.c $(SRCS)  --clang --target=<arch>-linux-musl--> build/<arch>/obj/**.o
#                   --<arch>-linux-gnu-gcc + musl specs, -static, --gc-sections, -s-->
#                   build/<arch>/uprobestats
# Every step is a file target with a stamp, so a second `make` does nothing.
#
# Variables worth knowing (all have defaults):
#   ARCHES            x86_64 aarch64          which binaries `make` builds
#   STATIC_OPT        -Os                     optimisation of the tool's own code
#                                             (HOT_PATH -O2, COLD_PATH -Oz)
#   VENDOR_CFLAGS     -Os -f{function,data}-sections   for libbpf/libelf/zlib
#   MAX_BINARY_SIZE_<arch>  987136 / 999424   per-binary budget in check-binaries
#                     (MAX_BINARY_SIZE=N sets every arch's)
#   TEST_STAGES       static check-binaries unit fuzz-smoke test-stale-pins (+= more)
#   DEBIAN_MIRROR     (environment) the mirror fetch.sh uses instead of the machine's
# Set by this file for others: UNIT_EXTRA_DEPS (the x86_64 embedded objects), BINS (the
# binaries), SKELS_<arch>, CC_<arch>/LD_<arch>, VENDOR_STAMP_<arch>.

ARCHES        ?= x86_64 aarch64
VENDOR_SRC    := $(TOP)/vendor/src
SYSROOT_DIR   := $(BUILD)/sysroot
VENDOR_OUT    := $(BUILD)/vendor
FETCH_SH      := $(TOP)/vendor/fetch.sh
VENDOR_SH     := $(TOP)/vendor/build.sh
VENDOR_ENV    := BUILD=$(BUILD) VENDOR_SRC=$(VENDOR_SRC) VENDOR_MANIFEST=$(MANIFEST)
MANIFEST      := $(TOP)/vendor/MANIFEST
# Written once all source packages are unpacked; lives in vendor/src so that removing
# the trees also forgets that they were fetched.
SOURCES_STAMP := $(VENDOR_SRC)/.fetched
# <bpf/bpf_helpers.h> for BPF programs, straight from the fetched libbpf tree: BPF objects
# need only headers, so they do not wait for the static libraries.
BPF_HDR_DIR   := $(VENDOR_SRC)/bpf-include

# How the third-party libraries are compiled (vendor/build.sh).
VENDOR_CFLAGS ?= -Os -ffunction-sections -fdata-sections

# Size budget of each binary, checked by check-binaries: today's size plus a few KiB, so
# that growth is seen and weighed (issue 25: no bigger than at 2b6c2a1, 911,672 / 919,800
# bytes).  Raised on 2026-12-02 from 972,800 / 987,136 (to 979,192 / 991,384 plus
# ~8 KiB) for the ninth wave: Perfetto's per-track packet sequences, unwound and
# running calls as marked slices, entry sp in call records (method-trace depth),
# traffic's truncated peers and every mmsg message, the stale-group and stop-signal
# fixes.  Earlier from 952,320 / 966,656 (+20 KiB each) for the eighth wave: the Perfetto writer encoding inline (speed, issue 34) and its interned call
# stacks, traffic's sendfile/splice/mmsg/socketpair and comm, --by comm/process,
# call_unwound records, the DWARF expression evaluator (mterp's CFA), the tombstone
# APK spelling.  MAX_BINARY_SIZE=N sets both.
MAX_BINARY_SIZE_x86_64  ?= $(or $(MAX_BINARY_SIZE),987136)
MAX_BINARY_SIZE_aarch64 ?= $(or $(MAX_BINARY_SIZE),999424)

# Per-arch settings: gcc triplet, the kernel's name for the arch in __TARGET_ARCH_*.
TRIPLET_x86_64   := x86_64-linux-gnu
TRIPLET_aarch64  := aarch64-linux-gnu
BPF_ARCH_x86_64  := x86
BPF_ARCH_aarch64 := arm64
# How check-binaries runs each arch's binary on this machine.
RUN_x86_64       :=
RUN_aarch64      := qemu-aarch64-static

# The tool is compiled by clang, like the unit tests and fuzzers, so code that builds
# warning-free there builds here (gcc's -Os warnings differ), against musl's headers from
# the sysroot (-nostdlibinc keeps only clang's own stddef.h & co.).  gcc with musl's specs
# file only links: it knows where crt*.o, libc.a and libgcc.a are.
STATIC_CC      ?= clang
# Compiler flags for the tool; the same warnings, standard and defines as everything else.
# -Os is about 15% smaller than -O2 here (measured: 299 vs 347 KiB on x86_64, 323 vs 387
# KiB on arm64, libraries included) and nothing in the tool is hot enough to
# notice; --gc-sections drops what libbpf/libelf/zlib/musl carry that we never call.
# No unwind tables (.eh_frame) for the tool's own code: nothing unwinds the tool (no C++,
# no backtrace(), no unwinding crash handler), and they were 56 KiB of the x86_64 binary
# and 34 KiB of the arm64 one.  (The tool reads the .eh_frame of the programs it traces,
# never its own.)
STATIC_OPT     ?= -Os
STATIC_CFLAGS  := $(CSTD) $(WARN) $(DEFS) $(STATIC_OPT) -ffunction-sections -fdata-sections \
		  -fno-asynchronous-unwind-tables -fno-unwind-tables
# The per-event path (record intake and decoding, atoms, sinks and their writers) is
# built -O2: it is small, and -Os made JSON output cost ~7 us of CPU per event.  The
# loop's epoll/timer/signal machine runs per batch, not per event: -Os.
HOT_PATH       := src/sink/% src/vocab/% src/probe/intake src/catalog/record_kinds \
		  src/catalog/fields src/probe/atoms
# Code that runs once per invocation, before anything is attached or after everything is
# detached (the command table, option rows, help, config parsing and validation, doctor,
# device properties; the method-trace writers, which write their files at exit): -Oz,
# clang's smallest (~4 KiB less per binary than -Os).  Resolution,
# the code cache, unwinding, the session and the plan's pattern matching stay -Os: their
# speed is in `make bench` (startup, resolve, exit).  ART's debugger interface
# (code/artdebug) is read at attach and on a JIT or dex miss only: -Oz too.
COLD_PATH      := main src/cli/% src/config/% src/sys/doctor src/sys/privilege \
		  src/sys/properties src/sys/propfile src/code/artdebug src/sys/procmem \
		  src/plan/method_key src/sink/art_trace_out src/sink/speedscope_out
# -z norelro: no PT_GNU_RELRO, whose end GNU ld aligns to a page by padding the file before
# the data segment (up to 16 KiB on arm64, ~11 KiB of it here).  Only a dynamic loader (or
# glibc's static start-up) makes that range read-only; musl's static start-up never does
# (its libc.a calls mprotect only from malloc and pthread_create), so the header protected
# nothing here.
STATIC_LDFLAGS := -static -Wl,--gc-sections -Wl,-O1 -Wl,-z,norelro -s
# arm64: segments aligned for 16 KiB pages (what Android's 4 and 16 KiB page kernels
# need, as the NDK links), not GNU ld's 64 KiB default, whose padding alone can cost
# up to 60 KiB of file.
LDFLAGS_aarch64 := -Wl,-z,max-page-size=16384

BPF_CLANG      ?= clang
BPF_STRIP      ?= llvm-strip
# -nostdlibinc: a BPF object must not pick up the build machine's glibc or asm/ headers;
# clang's own stddef.h/stdint.h/stdbool.h stay available.  libbpf's include/uapi comes
# first (the bpf.h the loader was written against), then the target arch's kernel
# headers (asm/ptrace.h for the PT_REGS_* macros), then libbpf's bpf_helpers.h & co.
BPF_CFLAGS     ?= -O2 -g -Wall -Werror
# What llvm-strip takes from every object: DWARF, and what only a static BPF linker reads
# (bpftool gen object), never libbpf's loader: the relocations of .BTF and .BTF.ext
# (libbpf skips relocation sections of non-code sections and takes func/line info and
# CO-RE offsets from .BTF.ext as they are) and the LBB* basic-block labels those
# relocations name.  .BTF, .BTF.ext, the symbols of programs, maps and sections stay.
# ~28 KiB less per binary after xz (the labels are most of the symbol table).
BPF_STRIP_FLAGS := -g --remove-section=.rel.BTF --remove-section=.rel.BTF.ext \
		   --wildcard --strip-symbol='LBB*'
BPF_SRCS       := $(sort $(wildcard $(TOP)/bpf/*.bpf.c))
BPF_NAMES      := $(patsubst $(TOP)/bpf/%.bpf.c,%,$(BPF_SRCS))

# The tool's sources: main.c plus every module (SRCS, from the top-level Makefile).
STATIC_SRCS    := $(TOP)/main.c $(SRCS)

# Host unit tests and fuzzers include the x86_64 embedded objects (mk/unit.mk, mk/fuzz.mk).
UNIT_EXTRA_DEPS := $(GEN_DIR)/x86_64/bpf_objects.z.h

BINS := $(foreach a,$(ARCHES),$(BUILD)/$(a)/uprobestats)

.PHONY: static skeletons vendor vendor-sources vendor-clean check-binaries test \
	$(addprefix static-,$(ARCHES))

all: static

static: $(BINS)
	@for b in $(BINS); do \
		printf '%-28s %8d bytes (%d KiB)\n' "$${b#$(TOP)/}" "$$(stat -c %s $$b)" \
			"$$(( ($$(stat -c %s $$b) + 1023) / 1024 ))"; \
	done

vendor-sources: $(SOURCES_STAMP)

$(SOURCES_STAMP): $(MANIFEST) $(FETCH_SH) | deps-host
	@$(VENDOR_ENV) $(FETCH_SH) sources
	@mkdir -p $(BPF_HDR_DIR)
	@ln -sfn ../libbpf/src $(BPF_HDR_DIR)/bpf
	@touch $@

vendor-clean:
	rm -rf $(VENDOR_SRC) $(VENDOR_OUT) $(SYSROOT_DIR)

distclean: vendor-clean

# $(call record-if-changed,FILE,TEXT): while make reads the makefiles, write TEXT to
# FILE unless FILE already holds exactly that.  FILE's mtime then changes only with TEXT,
# which makes it a prerequisite standing for "these flags".
# (Two strings are equal when each contains the other.  Both sides are $(strip)ped:
# make 4.3's $(file <) sometimes keeps the final newline, depending on the file's size.)
str-eq = $(and $(findstring x$(1),x$(2)),$(findstring x$(2),x$(1)))
define record-if-changed
$(if $(call str-eq,$(strip $(file <$(1))),$(strip $(2))),,\
	$(shell mkdir -p $(dir $(1)))$(file >$(1),$(2)))
endef

# The version and git revision, as the one header that holds them (gen/ups_version.h,
# included by src/cli/cmd_misc.c only), rewritten only when they change: a commit
# recompiles that one object (its -MMD dependency file names the header) and relinks,
# instead of every object of every build.  Written while make reads the makefiles, so a
# fresh clone has it before the first compile, for the unit, fuzz and memcheck builds too.
# (No commas in the text: it is an argument of $(call).)
define UPS_VERSION_H
/* Generated by mk/static.mk from VERSION and `git rev-parse --short HEAD`. */
#define UPROBESTATS_VERSION "$(VERSION)"
#define UPROBESTATS_GITREV "$(GITREV)"
endef
$(call record-if-changed,$(GEN_DIR)/ups_version.h,$(UPS_VERSION_H))
# (Remade should a `make clean` in the same invocation have removed it.)
$(GEN_DIR)/ups_version.h:
	@$(file >$@,$(UPS_VERSION_H))

# --- per arch --------------------------------------------------------------------------
# $(1) = arch.  Escaped $$ survive the eval as make/shell variables.
define STATIC_ARCH_RULES
SYSROOT_STAMP_$(1) := $(SYSROOT_DIR)/$(1)/.fetched
VENDOR_STAMP_$(1)  := $(VENDOR_OUT)/$(1)/.built
VENDOR_LIBS_$(1)   := $(addprefix $(VENDOR_OUT)/$(1)/lib/,libbpf.a libelf.a libz.a)
CC_$(1)            := $(STATIC_CC) --target=$(1)-linux-musl -nostdlibinc \
	-isystem $(SYSROOT_DIR)/$(1)/usr/include/$(1)-linux-musl
LD_$(1)            := $(TRIPLET_$(1))-gcc -specs=$(SYSROOT_DIR)/$(1)/musl-gcc.specs
KHDRS_$(1)         := $(SYSROOT_DIR)/$(1)/usr/include \
	$(SYSROOT_DIR)/$(1)/usr/include/$(TRIPLET_$(1))
SKELS_$(1)         := $(GEN_DIR)/$(1)/bpf_objects.z.h
NORMAL_OBJS_$(1)   := $(patsubst %,$(BUILD)/$(1)/bpf/%.bpf.o,$(BPF_NAMES))
LEGACY_OBJS_$(1)   := $(patsubst %,$(BUILD)/$(1)/bpf/legacy/%.bpf.o,$(BPF_NAMES))
OBJS_$(1)          := $(patsubst $(TOP)/%.c,$(BUILD)/$(1)/obj/%.o,$(STATIC_SRCS))
INCS_$(1)          := $(INCS) -I$(GEN_DIR)/$(1) -isystem $(VENDOR_OUT)/$(1)/include \
	$$(addprefix -idirafter ,$$(KHDRS_$(1)))

$$(SYSROOT_STAMP_$(1)): $(MANIFEST) $(FETCH_SH) | deps-host
	@$(VENDOR_ENV) $(FETCH_SH) sysroot $(1)
	@touch $$@

$$(call record-if-changed,$(VENDOR_OUT)/$(1)/cflags,$(VENDOR_CFLAGS))
$$(VENDOR_STAMP_$(1)): $(SOURCES_STAMP) $$(SYSROOT_STAMP_$(1)) $(VENDOR_SH) \
		$(VENDOR_OUT)/$(1)/cflags
	+@$(VENDOR_ENV) VENDOR_CFLAGS="$(VENDOR_CFLAGS)" $(VENDOR_SH) $(1)
	@touch $$@

# BPF objects: one per program and arch; BTF stays (libbpf needs it), DWARF and what only
# a linker reads go (BPF_STRIP_FLAGS).
$$(call record-if-changed,$(BUILD)/$(1)/bpf/cflags,$(BPF_CLANG) $(BPF_ARCH_$(1)) $(BPF_CFLAGS) \
	$(BPF_STRIP_FLAGS))
$(BUILD)/$(1)/bpf/%.bpf.o: $(TOP)/bpf/%.bpf.c $(SOURCES_STAMP) $$(SYSROOT_STAMP_$(1)) \
		$(BUILD)/$(1)/bpf/cflags | deps-host
	@mkdir -p $$(@D)
	@echo "  BPF     $$(@:$(TOP)/%=%)"
	@$(BPF_CLANG) -target bpf -D__TARGET_ARCH_$(BPF_ARCH_$(1)) $(BPF_CFLAGS) \
		-nostdlibinc \
		-I$(VENDOR_SRC)/libbpf/include/uapi $$(addprefix -I,$$(KHDRS_$(1))) \
		-I$(BPF_HDR_DIR) -I$(TOP)/bpf \
		-MMD -MP -MF $$@.d -c $$< -o $$@
	@$(BPF_STRIP) $(BPF_STRIP_FLAGS) $$@

# The legacy variant of each object (kernels before 5.5, down to OLDEST_KERNEL): the
# same source built with -DUPS_LEGACY (bpf/ups_bpf.h), no global data, 4.14's helpers,
# perf event array output.  .BTF stays (libbpf reads the map definitions from it; a
# kernel without BTF is not given it), .BTF.ext goes: no CO-RE, no line info needed.
$(BUILD)/$(1)/bpf/legacy/%.bpf.o: $(TOP)/bpf/%.bpf.c $(SOURCES_STAMP) $$(SYSROOT_STAMP_$(1)) \
		$(BUILD)/$(1)/bpf/cflags | deps-host
	@mkdir -p $$(@D)
	@echo "  BPF     $$(@:$(TOP)/%=%)"
	@$(BPF_CLANG) -target bpf -D__TARGET_ARCH_$(BPF_ARCH_$(1)) -DUPS_LEGACY $(BPF_CFLAGS) \
		-nostdlibinc \
		-I$(VENDOR_SRC)/libbpf/include/uapi $$(addprefix -I,$$(KHDRS_$(1))) \
		-I$(BPF_HDR_DIR) -I$(TOP)/bpf \
		-MMD -MP -MF $$@.d -c $$< -o $$@
	@$(BPF_STRIP) $(BPF_STRIP_FLAGS) --remove-section=.BTF.ext $$@

# Every object of the arch, normal and legacy, embedded as one xz stream
# (mk/embed-bpf.sh): bpf_objects_z[], and <name>_bpf_off/_size,
# <name>_legacy_bpf_off/_size, which src/catalog/catalog.c includes and decodes at load.
# A new bpf/<name>.bpf.c is in it by the wildcard in BPF_NAMES.
$(GEN_DIR)/$(1)/bpf_objects.z.h: $$(NORMAL_OBJS_$(1)) $$(LEGACY_OBJS_$(1)) \
		$(TOP)/mk/embed-bpf.sh | deps-host
	@mkdir -p $$(@D)
	@echo "  EMBED   $$(@:$(TOP)/%=%)"
	@$(TOP)/mk/embed-bpf.sh $(foreach n,$(BPF_NAMES),$(n)=$(BUILD)/$(1)/bpf/$(n).bpf.o) \
		$(foreach n,$(BPF_NAMES),$(n)_legacy=$(BUILD)/$(1)/bpf/legacy/$(n).bpf.o) > $$@.tmp
	@mv $$@.tmp $$@

# The compile command, kept in a file rewritten only when it changes (new flags, never the
# git revision: see ups_version.h), so that objects rebuild when their flags do.
CFLAGS_FILE_$(1)   := $(BUILD)/$(1)/cflags
$$(call record-if-changed,$$(CFLAGS_FILE_$(1)),$$(CC_$(1)) $(STATIC_CFLAGS) $$(INCS_$(1)))

# The first compile needs every skeleton in place (order-only); after that the -MMD
# dependency files say which of our headers and skeletons each object uses.  -MMD leaves
# out the -isystem headers (musl, libbpf/libelf/zlib), so a rebuilt vendor tree
# (its stamp) rebuilds every object.
$(BUILD)/$(1)/obj/%.o: $(TOP)/%.c $$(VENDOR_STAMP_$(1)) $$(CFLAGS_FILE_$(1)) | $$(SKELS_$(1))
	@mkdir -p $$(@D)
	@echo "  CC      $$(@:$(TOP)/%=%)"
	@$$(CC_$(1)) $(STATIC_CFLAGS) $$(if $$(filter $(HOT_PATH),$$*),-O2) \
		$$(if $$(filter $(COLD_PATH),$$*),-Oz) $$(INCS_$(1)) \
		-MMD -MP -c $$< -o $$@

# The link command likewise, so that new link flags relink.
LDFLAGS_FILE_$(1)  := $(BUILD)/$(1)/ldflags
$$(call record-if-changed,$$(LDFLAGS_FILE_$(1)),$$(LD_$(1)) $(STATIC_LDFLAGS) $(LDFLAGS_$(1)))

$(BUILD)/$(1)/uprobestats: $$(OBJS_$(1)) $$(VENDOR_STAMP_$(1)) $$(LDFLAGS_FILE_$(1))
	@echo "  LINK    $$(@:$(TOP)/%=%)"
	@$$(LD_$(1)) $(STATIC_LDFLAGS) $(LDFLAGS_$(1)) -o $$@ $$(OBJS_$(1)) $$(VENDOR_LIBS_$(1))

static-$(1): $(BUILD)/$(1)/uprobestats

-include $$(OBJS_$(1):.o=.d) $$(patsubst %,$(BUILD)/$(1)/bpf/%.bpf.o.d,$(BPF_NAMES)) \
	$$(LEGACY_OBJS_$(1):=.d)
endef
$(foreach a,$(ARCHES),$(eval $(call STATIC_ARCH_RULES,$(a))))

vendor: $(foreach a,$(ARCHES),$(VENDOR_STAMP_$(a)))
skeletons: $(foreach a,$(ARCHES),$(SKELS_$(a)))

# --- tests -----------------------------------------------------------------------------
# `--version` must name the tree's revision as git says it now (not as make read it), so
# a stale gen/ups_version.h or object fails here.
check-binaries: $(BINS)
	@$(TOP)/test/build/check-binaries.sh --version-string \
		"uprobestats $(VERSION) ($$(git -C $(TOP) rev-parse --short HEAD 2>/dev/null || \
			echo unknown))" \
		$(foreach a,$(ARCHES),--max-size $(a)=$(MAX_BINARY_SIZE_$(a))) \
		$(foreach a,$(ARCHES),$(a)=$(BUILD)/$(a)/uprobestats$(if $(RUN_$(a)),=$(RUN_$(a))))

# The legacy objects each binary embeds, checked against the oldest supported kernel
# (KF_OLDEST_KERNEL in src/sys/kfeatures.h) by the binary itself; and a fixture that
# breaks every rule, so the check is seen to fail.
LEGACY_FIXTURE := $(BUILD)/x86_64/bpf/fixtures/bad_legacy.bpf.o
$(LEGACY_FIXTURE): $(TOP)/test/fixtures/bpf/bad_legacy.bpf.c $(SOURCES_STAMP) \
		$(SYSROOT_STAMP_x86_64) | deps-host
	@mkdir -p $(@D)
	@$(BPF_CLANG) -target bpf -D__TARGET_ARCH_x86 $(BPF_CFLAGS) -nostdlibinc \
		-I$(VENDOR_SRC)/libbpf/include/uapi $(addprefix -I,$(KHDRS_x86_64)) \
		-I$(BPF_HDR_DIR) -c $< -o $@

.PHONY: check-objects
check-objects: $(BINS) $(LEGACY_FIXTURE)
	@$(TOP)/test/build/check-objects.sh --bad $(LEGACY_FIXTURE) \
		$(foreach a,$(ARCHES),$(a)=$(BUILD)/$(a)/uprobestats$(if $(RUN_$(a)),=$(RUN_$(a))))

# Every pin of vendor/MANIFEST made stale at once: the fetch falls back to what the suite
# carries and the x86_64 build still succeeds (test/build/stale-pins.sh).
.PHONY: test-stale-pins
test-stale-pins: | deps-host
	@if $(TOP)/test/build/stale-pins.sh $(BUILD); then \
		echo "stale-pins: 1 passed, 0 failed"; \
	else echo "stale-pins: 0 passed, 1 failed"; exit 1; fi

# `make test` runs each stage below in order as `$(MAKE) <stage>`, keeps going after a
# failure, and collects every "<name>: N passed, N failed" line the stages print into
# $(TEST_RESULTS); the last line is the sum.  A stage that fails without printing such a
# line counts as one failure.  To add a stage: define a target that prints its own line
# and append it, e.g. in mk/e2e.mk:   TEST_STAGES += test-e2e
# A `test-e2e:` rule in any mk/*.mk is picked up even without that line.
# (`make -C DIR test` makes make itself print "Leaving directory" after the sum; add
# --no-print-directory, as .ci/run does, when the sum must be the very last line.)
TEST_RESULTS := $(BUILD)/test-results.txt
TEST_STAGES  += static check-binaries check-objects unit fuzz-smoke test-stale-pins
TEST_E2E     ?= test-e2e
TEST_E2E_DEFINED := $(shell grep -qsE '^$(TEST_E2E)[[:space:]]*:' $(TOP)/mk/*.mk && echo y)
TEST_ALL_STAGES   = $(TEST_STAGES) \
	$(if $(filter $(TEST_E2E),$(TEST_STAGES)),,$(if $(TEST_E2E_DEFINED),$(TEST_E2E)))

test: deps
	@mkdir -p $(BUILD) && : > $(TEST_RESULTS)
	+@for stage in $(TEST_ALL_STAGES); do \
		$(TOP)/test/build/stage.sh $(TEST_RESULTS) $$stage \
			$(MAKE) --no-print-directory $$stage || true; \
	done
	@$(TOP)/test/build/summarize.sh $(TEST_RESULTS)
