# libFuzzer targets: test/fuzz/fuzz_<name>.c each define LLVMFuzzerTestOneInput;
# seeds live in test/fuzz/corpus/<name>/ (committed).  `make fuzz-smoke` runs
# each briefly (part of `make test`), `make fuzz` runs each for FUZZ_SECONDS.
#
# The modules are compiled once, instrumented (fuzzer-no-link + ASan + UBSan),
# into one archive every target links; only the target files differ.
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_OBJ_DIR := $(FUZZ_DIR)/obj
FUZZ_SRCS    := $(sort $(wildcard $(TOP)/test/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(patsubst $(TOP)/test/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_BASE    := $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(GEN_HOST_DIR) -g -O1 $(FUZZ_SAN) \
	-DUPROBESTATS_FUZZ $(HOST_LIBBPF_INC)
FUZZ_OBJS    := $(patsubst $(TOP)/src/%.c,$(FUZZ_OBJ_DIR)/%.o,$(SRCS))
FUZZ_LIB     := $(FUZZ_DIR)/libuprobestats-fuzz.a
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_RUNS ?= 20000

$(FUZZ_OBJ_DIR)/%.o: $(TOP)/src/%.c $(HDRS) $(UNIT_EXTRA_DEPS) $(HOST_LIBBPF) | deps-host
	@mkdir -p $(@D)
	@clang $(FUZZ_BASE) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(TOP)/test/fuzz/fuzz_%.c $(FUZZ_LIB)
	@echo "  FUZZ    $(@F)"
	@clang $(FUZZ_BASE) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(HOST_BPF_LIBS)

.PHONY: fuzz fuzz-smoke fuzz-build
fuzz-build: $(FUZZ_BINS)

# Each target runs over its committed seeds plus FUZZ_SMOKE_RUNS mutations.
fuzz-smoke: $(FUZZ_BINS)
	@$(TOP)/test/fuzz/run.sh smoke $(FUZZ_DIR) $(TOP)/test/fuzz/corpus $(FUZZ_SMOKE_RUNS) \
		$(FUZZ_NAMES)

fuzz: $(FUZZ_BINS)
	@$(TOP)/test/fuzz/run.sh long $(FUZZ_DIR) $(TOP)/test/fuzz/corpus $(FUZZ_SECONDS) \
		$(FUZZ_NAMES)
