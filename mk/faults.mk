# The fault suite: bad input, damaged files, runtime faults, signals, privileges and
# memcheck, driven by test/faults/run.py against the shipped x86_64 binary.
#
#   make test-faults    every case; a `make test` stage
#
# Variables: FAULTS_FILTER (a substring of the case names to run).
# Set here for others: FAULTS_DIR (target_many, which the benchmarks use too).
FAULTS_DIR     := $(BUILD)/faults
FAULTS_FILTER  ?=
# The host (glibc) build of the tool that memcheck runs: the static musl binary's
# malloc cannot be replaced by valgrind.  DWARF 4: valgrind 3.19 cannot read clang's 5.
VALGRIND_BIN   := $(BUILD)/valgrind/uprobestats
VALGRIND_CFLAGS := $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(GEN_HOST_DIR) -gdwarf-4 -O1 \
	$(HOST_LIBBPF_INC)

.PHONY: test-faults faults-deps

# valgrind, setpriv and prlimit: the benchmarks' installer covers them.
faults-deps:
	@$(TOP)/bench/deps.sh

$(FAULTS_DIR)/target_many: $(TOP)/test/faults/target_many.c | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -o $@ $<

$(VALGRIND_BIN): $(TOP)/main.c $(SRCS) $(HDRS) $(UNIT_EXTRA_DEPS) $(HOST_LIBBPF) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      valgrind/uprobestats (host glibc build for memcheck)"
	@$(HOST_CC) $(VALGRIND_CFLAGS) -o $@ $(TOP)/main.c $(SRCS) $(HOST_BPF_LIBS)

test-faults: $(E2E_BIN) $(E2E_TARGETS) $(FAULTS_DIR)/target_many $(VALGRIND_BIN) | faults-deps
	@$(TOP)/test/e2e/setup.sh
	@UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TARGETS=$(E2E_TARGET_DIR) \
	UPROBESTATS_TARGET_MANY=$(FAULTS_DIR)/target_many UPROBESTATS_TESTDATA=$(TESTDATA) \
	UPROBESTATS_VALGRIND_BIN=$(VALGRIND_BIN) \
		python3 $(TOP)/test/faults/run.py $(FAULTS_FILTER)

TEST_STAGES += test-faults
