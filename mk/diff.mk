# Differential tests (test/diff/): the ELF reader (formats/elf, minidebug, cfi) against
# libelf, xz and readelf over every ELF file in $(TESTDATA) (oat/odex files, both
# Android userlands), the test programs and both shipped binaries (and the arm64 VM's
# programs when test-arm64 has built them), then damaged copies
# of three of those files; the config encoder/decoder against protoc over every config
# in $(TESTDATA)/configs and the binary seeds of test/fuzz/corpus/protobuf.  The ELF
# side is a host program built with ASan+UBSan over only the modules it tests.
DIFF_DIR      := $(BUILD)/host/diff
DIFF_ELF_BIN  := $(DIFF_DIR)/elf_diff
DIFF_ELF_SRCS := $(sort $(wildcard $(TOP)/test/diff/elf_*.c)) \
	$(addprefix $(TOP)/src/,formats/elf.c formats/minidebug.c formats/xz.c formats/cfi.c \
		common/err.c common/mapfile.c common/grow.c)
DIFF_ODEX_DIR := oat/android-13/arm/realme_ice_ossi_TP1A.220905.001
DIFF_HOSTILE  := android-userland/x86_64-android11/system/lib64/liblog.so \
	android-userland/arm64-android11/system/lib64/libdl.so \
	$(DIFF_ODEX_DIR)/apex@com.android.permission@javalib@service-permission.jar@classes.odex

$(DIFF_ELF_BIN): $(DIFF_ELF_SRCS) $(wildcard $(TOP)/test/diff/*.h) $(HDRS) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      elf_diff (ASan+UBSan)"
	@$(HOST_CC) $(CSTD) $(WARN) $(DEFS) $(INCS) -I$(TOP)/test/diff -g -O1 $(UNIT_SAN) \
		-o $@ $(DIFF_ELF_SRCS) -lelf

.PHONY: test-diff
test-diff: $(DIFF_ELF_BIN) $(BINS) $(E2E_TARGETS) $(ANDROID_TARGETS) | deps-host
	@rc=0; tmp=$$(mktemp -d); \
	$(DIFF_ELF_BIN) --self-test $(TESTDATA)/$(firstword $(DIFF_HOSTILE)) || rc=1; \
	$(DIFF_ELF_BIN) $(TESTDATA) $(E2E_TARGET_DIR) $(BINS) \
		$(wildcard $(BUILD)/aarch64/vm) || rc=1; \
	$(DIFF_ELF_BIN) --hostile $$tmp $(addprefix $(TESTDATA)/,$(DIFF_HOSTILE)) || rc=1; \
	rm -rf $$tmp; \
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/diff/config_diff.py $(DIFF_FILTER) || rc=1; \
	exit $$rc

TEST_STAGES += test-diff
