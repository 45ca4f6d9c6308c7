# libFuzzer targets: test/fuzz/fuzz_<name>.c each define LLVMFuzzerTestOneInput;
# seeds live in test/fuzz/corpus/<name>/ (committed).  `make fuzz-smoke` runs
# each briefly (part of `make test`), `make fuzz` runs each for FUZZ_SECONDS.
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SRCS    := $(sort $(wildcard $(TOP)/test/fuzz/fuzz_*.c))
FUZZ_NAMES   := $(patsubst $(TOP)/test/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS    := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))
FUZZ_CFLAGS  := $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(GEN_HOST_DIR) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -DUPROBESTATS_FUZZ
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_RUNS ?= 20000

$(FUZZ_DIR)/fuzz_%: $(TOP)/test/fuzz/fuzz_%.c $(SRCS) $(HDRS) $(UNIT_EXTRA_DEPS) | deps-host
	@mkdir -p $(FUZZ_DIR)
	clang $(FUZZ_CFLAGS) -o $@ $< $(SRCS) -lbpf -lelf -lz

.PHONY: fuzz fuzz-smoke fuzz-build
fuzz-build: $(FUZZ_BINS)

# Each target runs over its committed seeds plus FUZZ_SMOKE_RUNS mutations.
fuzz-smoke: $(FUZZ_BINS)
	@$(TOP)/test/fuzz/run.sh smoke $(FUZZ_DIR) $(TOP)/test/fuzz/corpus $(FUZZ_SMOKE_RUNS) $(FUZZ_NAMES)

fuzz: $(FUZZ_BINS)
	@$(TOP)/test/fuzz/run.sh long $(FUZZ_DIR) $(TOP)/test/fuzz/corpus $(FUZZ_SECONDS) $(FUZZ_NAMES)
