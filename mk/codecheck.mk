# Frame info and exit sites of every compiled method of the real oat files in
# $(TESTDATA), against Debian's python3-capstone (test/codecheck/); then the exit
# sites of every function of the two Android userlands (android-userland/, against
# capstone, LLVM's disassembler where capstone 4 cannot decode) and C++ symbol
# patterns over their libbinder.so and libc++.so (against c++filt).  Uses the
# system python, where the Debian package installs capstone.
#   make native-exit-sweep-doc   regenerates docs/native-exit-sweep.md
CODECHECK_BIN ?= $(BUILD)/x86_64/uprobestats

.PHONY: test-codecheck
test-codecheck: $(CODECHECK_BIN) | deps-host
	@UPROBESTATS_BIN=$(CODECHECK_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/codecheck/check_exit_sites.py
	@UPROBESTATS_BIN=$(CODECHECK_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/codecheck/check_native_exits.py
	@UPROBESTATS_BIN=$(CODECHECK_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/codecheck/check_cxx_patterns.py

.PHONY: native-exit-sweep-doc
native-exit-sweep-doc: $(CODECHECK_BIN) | deps-host
	@UPROBESTATS_BIN=$(CODECHECK_BIN) UPROBESTATS_TESTDATA=$(TESTDATA) \
		/usr/bin/python3 $(TOP)/test/codecheck/check_native_exits.py \
		--markdown $(TOP)/docs/native-exit-sweep.md

TEST_STAGES += test-codecheck
