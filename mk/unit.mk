# Unit tests: a host (glibc) build of every module with ASan+UBSan, plus
# test/unit/*.c, linked against the same libbpf as the shipped binaries (below) and
# the system's libelf/zlib dev packages.
HOST_CC     ?= clang

# The vendored libbpf (vendor/src/libbpf: vendor/MANIFEST's version, the one linked
# into build/<arch>/uprobestats), built once more for the host with its own Makefile:
# glibc, the system's libelf and zlib, no sanitizers (ASan checks the callers; an
# uninstrumented library also serves valgrind's memcheck build, mk/faults.mk, hence
# DWARF 4: valgrind 3.19 cannot read clang's default DWARF 5).  The
# unit tests, the fuzzers and that memcheck build compile against its headers and
# link it, never the system's libbpf-dev.
HOST_LIBBPF_DIR := $(BUILD)/host/libbpf
HOST_LIBBPF     := $(HOST_LIBBPF_DIR)/dest/lib/libbpf.a
HOST_LIBBPF_INC := -isystem $(HOST_LIBBPF_DIR)/dest/include
HOST_BPF_LIBS   := $(HOST_LIBBPF) -lelf -lz

$(HOST_LIBBPF): $(SOURCES_STAMP) | deps-host
	@rm -rf $(HOST_LIBBPF_DIR)
	@mkdir -p $(HOST_LIBBPF_DIR)/obj $(HOST_LIBBPF_DIR)/dest
	@echo "  LIBBPF  host libbpf.a (vendored sources)"
	@$(MAKE) --no-print-directory -s -C $(VENDOR_SRC)/libbpf/src BUILD_STATIC_ONLY=y \
		NO_PKG_CONFIG=1 CC="$(HOST_CC)" CFLAGS="-gdwarf-4 -O1 -std=gnu89 -Wall" \
		OBJDIR=$(HOST_LIBBPF_DIR)/obj DESTDIR=$(HOST_LIBBPF_DIR)/dest PREFIX= \
		LIBDIR=/lib INCLUDEDIR=/include install install_uapi_headers \
		> $(HOST_LIBBPF_DIR)/build.log 2>&1 || \
		{ tail -n 25 $(HOST_LIBBPF_DIR)/build.log >&2; exit 1; }
UNIT_DIR    := $(BUILD)/host
UNIT_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
UNIT_CFLAGS := $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(TOP)/test/unit -I$(GEN_HOST_DIR) -g -O1 \
	$(UNIT_SAN) -DUPROBESTATS_UNIT_TEST $(HOST_LIBBPF_INC)
UNIT_TESTS  := $(sort $(wildcard $(TOP)/test/unit/*.c))
UNIT_LIBS   := $(HOST_BPF_LIBS)
UNIT_BIN    := $(UNIT_DIR)/unit_tests

$(UNIT_BIN): $(SRCS) $(UNIT_TESTS) $(HDRS) $(TOP)/test/unit/ut.h $(UNIT_EXTRA_DEPS) \
		$(HOST_LIBBPF) | deps-host
	@mkdir -p $(UNIT_DIR)
	@echo "  CC      unit_tests (ASan+UBSan)"
	@$(HOST_CC) $(UNIT_CFLAGS) -o $@ $(SRCS) $(UNIT_TESTS) $(UNIT_LIBS)

.PHONY: unit deps-host
unit: $(UNIT_BIN)
	@UPROBESTATS_TESTDATA=$(TESTDATA) ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_BIN) $(UT_FILTER)

deps-host:
	@$(TOP)/vendor/deps.sh --quiet
