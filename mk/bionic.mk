# Real Android processes on this machine's kernel: the x86_64 Android 11 userland
# (bionic's linker64 and libc.so, toybox) in a chroot, probed by the shipped binary
# (test/bionic/run.sh copies it to a temporary directory and cleans up).  Both rounds:
# as is, and with --target-kernel 4.14 (legacy objects, perf buffer, tracefs).
.PHONY: test-bionic test-bionic-legacy
test-bionic: $(E2E_BIN)
	@$(TOP)/test/e2e/setup.sh
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		$(TOP)/test/bionic/run.sh $(BIONIC_FILTER)

test-bionic-legacy: $(E2E_BIN)
	@$(TOP)/test/e2e/setup.sh
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
	UPROBESTATS_E2E_TARGET_KERNEL=4.14 $(TOP)/test/bionic/run.sh $(BIONIC_FILTER)

TEST_STAGES += test-bionic test-bionic-legacy
