# Frame info and exit sites of every compiled method of the real oat files in
# $(TESTDATA), against Debian's python3-capstone (test/codecheck/).  Uses the
# system python, where the Debian package installs capstone.
CODECHECK_BIN ?= $(BUILD)/x86_64/uprobestats

.PHONY: test-codecheck
test-codecheck: $(CODECHECK_BIN) | deps-host
	@UPROBESTATS_BIN=$(CODECHECK_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/codecheck/check_exit_sites.py

TEST_STAGES += test-codecheck
