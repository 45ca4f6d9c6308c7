# Benchmarks side by side with bpftrace and the bare kernel (the fault suite, whose
# target_many they share, is mk/faults.mk).
#
#   make bench          every benchmark (bench/bench.py); appends to bench/RESULTS.md
#   make bench BENCH=perhit   one of: perhit nested accuracy throughput startup resolve
#                             footprint many exit burst traffic trace tracefiles
#   make fuzz-campaign  every fuzzer to FUZZ_RUNS executions or FUZZ_CAP seconds each
#
# Variables: BENCH_CALLS (1000000 calls per per-hit run), BENCH_NESTED_CALLS (outer calls
# per nested run, default BENCH_CALLS / 10), BENCH_REPEATS (3 interleaved repeats),
# BENCH_SECONDS (10, the throughput run), BENCH_EXIT_SIZES (100,1000,10000: exit after
# Ctrl-C), BENCH_EXIT_PATHS (uprobe_multi,uprobe PMU,tracefs: the attach paths it runs),
# BENCH_BURST_SIZES (buffer sizes of the burst section), BENCH_MIX_EVENTS (60000 events per
# trace mix), BENCH_TRAFFIC_MMSG (64,1024: messages per sendmmsg of the traffic section),
# BENCH_TRACEFILE_CALLS (20000 outer calls, tracefiles), FUZZ_RUNS (10000000), FUZZ_CAP (2400 s).
BENCH_DIR      := $(BUILD)/bench
BENCH_CALLS    ?= 1000000
BENCH_NESTED_CALLS ?=
BENCH_REPEATS  ?= 3
BENCH_SECONDS  ?= 10
BENCH          ?= all
BENCH_EXIT_SIZES  ?= 100,1000,10000
BENCH_EXIT_PATHS  ?= uprobe_multi,uprobe PMU,tracefs
BENCH_BURST_SIZES ?= 65536,262144,1048576,4194304
FUZZ_RUNS      ?= 10000000
FUZZ_CAP       ?= 2400
BENCH_CFLAGS   := -std=gnu11 -O2 -g -Wall -Wextra -Werror

.PHONY: bench bench-deps fuzz-campaign

bench-deps:
	@$(TOP)/bench/deps.sh

# The floor: an empty BPF program on the same uprobe, loaded by a tiny libbpf loader
# built against the system's libbpf-dev.
$(BENCH_DIR)/empty_uprobe.bpf.o: $(TOP)/bench/empty_uprobe.bpf.c | bench-deps
	@mkdir -p $(@D)
	clang -target bpf -D__TARGET_ARCH_x86 -O2 -g -Wall -Werror \
		-idirafter /usr/include/x86_64-linux-gnu -c $< -o $@

$(BENCH_DIR)/empty_loader: $(TOP)/bench/empty_loader.c | bench-deps
	@mkdir -p $(@D)
	clang $(BENCH_CFLAGS) -o $@ $< -lbpf -lelf -lz

$(BENCH_DIR)/statsd_sink: $(TOP)/bench/statsd_sink.c | bench-deps
	@mkdir -p $(@D)
	clang $(BENCH_CFLAGS) -o $@ $<

BENCH_TOOLS := $(BENCH_DIR)/empty_uprobe.bpf.o $(BENCH_DIR)/empty_loader \
	$(BENCH_DIR)/statsd_sink $(FAULTS_DIR)/target_many

bench: $(BINS) $(E2E_TARGETS) $(BENCH_TOOLS) | bench-deps
	@$(TOP)/test/e2e/setup.sh
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TARGETS=$(E2E_TARGET_DIR) \
	UPROBESTATS_TARGET_MANY=$(FAULTS_DIR)/target_many UPROBESTATS_TESTDATA=$(TESTDATA) \
	BENCH_TOOLS_DIR=$(BENCH_DIR) BENCH_CALLS=$(BENCH_CALLS) BENCH_REPEATS=$(BENCH_REPEATS) \
	BENCH_SECONDS=$(BENCH_SECONDS) BENCH_NESTED_CALLS=$(BENCH_NESTED_CALLS) \
	BENCH_EXIT_SIZES=$(BENCH_EXIT_SIZES) BENCH_EXIT_PATHS="$(BENCH_EXIT_PATHS)" \
	BENCH_BURST_SIZES=$(BENCH_BURST_SIZES) \
		python3 $(TOP)/bench/bench.py $(BENCH) --results $(TOP)/bench/RESULTS.md \
		$(foreach a,$(ARCHES),--binary $(a)=$(BUILD)/$(a)/uprobestats)

# Long fuzzing toward a fixed number of executions per target (make fuzz runs each for
# a fixed time instead); the counts go into bench/RESULTS.md by hand.
fuzz-campaign: $(FUZZ_BINS)
	@$(TOP)/bench/fuzz-campaign.sh $(FUZZ_DIR) $(TOP)/test/fuzz/corpus $(FUZZ_RUNS) \
		$(FUZZ_CAP) $(FUZZ_NAMES)
