# uprobestats — the one entry point.
#   make            static, stripped binaries for x86_64 and aarch64 (build/<arch>/uprobestats)
#   make test       everything: deps, build, unit (ASan+UBSan), fuzz smoke, e2e on this kernel
#   make demo       run the bundled demo config against the bundled demo program
#   make bench      side-by-side benchmarks (never part of test)
#   make fuzz       long libFuzzer runs
#   make deps       install the Debian toolchain packages that are missing
SHELL := /bin/bash
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:

TOP       := $(CURDIR)
BUILD     := $(TOP)/build
TESTDATA  ?= $(abspath $(TOP)/../shared/testdata)
VERSION   := $(shell cat $(TOP)/VERSION 2>/dev/null || echo 0.0.0)
# The git revision (and the version) reach only what includes gen/ups_version.h (the
# `--version` text in src/cli/cmd_misc.c), never every object's flags: a commit
# recompiles that one object and relinks (mk/static.mk writes the header).
GITREV    := $(shell git -C $(TOP) rev-parse --short HEAD 2>/dev/null || echo unknown)

WARN      := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
	     -Wmissing-prototypes
CSTD      := -std=gnu11
DEFS      := -D_GNU_SOURCE

# Every module under src/ is linked into the tool; main.c holds the CLI only.
SRCS      := $(sort $(wildcard $(TOP)/src/*/*.c))
HDRS      := $(sort $(wildcard $(TOP)/src/*/*.h) $(wildcard $(TOP)/bpf/*.h))
GEN_DIR   := $(TOP)/gen
INCS      := -I$(TOP)/src -I$(TOP)/bpf -I$(GEN_DIR)
GEN_HOST_DIR := $(GEN_DIR)/x86_64

# Every stage file is required (plain include: a missing one stops make).
# static.mk first: it sets UNIT_EXTRA_DEPS (the x86_64 skeletons), which the unit and
# fuzz rules name as prerequisites and so must be set before those rules are read.
# The order of the rest is the order of `make test`'s stages (each appends to
# TEST_STAGES); faults.mk before bench.mk, which uses its FAULTS_DIR; diff.mk after
# e2e.mk, whose test programs it reads.
include $(TOP)/mk/static.mk
include $(TOP)/mk/layers.mk
include $(TOP)/mk/growth.mk
include $(TOP)/mk/unit.mk
include $(TOP)/mk/fuzz.mk
include $(TOP)/mk/codecheck.mk
include $(TOP)/mk/e2e.mk
include $(TOP)/mk/diff.mk
include $(TOP)/mk/bionic.mk
include $(TOP)/mk/vm.mk
include $(TOP)/mk/faults.mk
include $(TOP)/mk/bench.mk

.PHONY: all deps clean distclean
deps:
	@$(TOP)/vendor/deps.sh

clean:
	rm -rf $(BUILD)/host $(BUILD)/x86_64 $(BUILD)/aarch64 $(BUILD)/fuzz $(TOP)/gen/*

distclean:
	rm -rf $(BUILD) $(TOP)/gen/*
