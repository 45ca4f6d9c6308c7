# Unit tests: a host (glibc) build of every module with ASan+UBSan, plus
# test/unit/*.c, linked against the system's libbpf/libelf/zlib dev packages.
HOST_CC     ?= clang
UNIT_DIR    := $(BUILD)/host
UNIT_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
UNIT_CFLAGS := $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(TOP)/test/unit -I$(GEN_HOST_DIR) -g -O1 \
	$(UNIT_SAN) -DUPROBESTATS_UNIT_TEST
UNIT_TESTS  := $(sort $(wildcard $(TOP)/test/unit/*.c))
UNIT_LIBS   := -lbpf -lelf -lz
UNIT_BIN    := $(UNIT_DIR)/unit_tests

$(UNIT_BIN): $(SRCS) $(UNIT_TESTS) $(HDRS) $(TOP)/test/unit/ut.h $(UNIT_EXTRA_DEPS) | deps-host
	@mkdir -p $(UNIT_DIR)
	@echo "  CC      unit_tests (ASan+UBSan)"
	@$(HOST_CC) $(UNIT_CFLAGS) -o $@ $(SRCS) $(UNIT_TESTS) $(UNIT_LIBS)

.PHONY: unit deps-host
unit: $(UNIT_BIN)
	@UPROBESTATS_TESTDATA=$(TESTDATA) ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_BIN) $(UT_FILTER)

deps-host:
	@$(TOP)/vendor/deps.sh --quiet
