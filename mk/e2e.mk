# End-to-end tests on this machine's kernel: the shipped x86_64 binary probes
# real processes (test/targets/), driven by test/e2e/run.py.
E2E_BIN        ?= $(BUILD)/x86_64/uprobestats
E2E_TARGET_DIR := $(BUILD)/x86_64/tests
E2E_TARGETS    := $(patsubst $(TOP)/test/targets/%.c,$(E2E_TARGET_DIR)/%,\
	$(wildcard $(TOP)/test/targets/*.c))
DEMO_APP       := $(BUILD)/x86_64/demo/demo_app

$(E2E_TARGET_DIR)/%: $(TOP)/test/targets/%.c $(wildcard $(TOP)/test/targets/*.h) | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -o $@ $< -lpthread

# C++ targets (exceptions thrown through probed functions).
E2E_CXX_TARGETS := $(patsubst $(TOP)/test/targets/%.cpp,$(E2E_TARGET_DIR)/%,\
	$(wildcard $(TOP)/test/targets/*.cpp))
E2E_TARGETS    += $(E2E_CXX_TARGETS)
$(E2E_TARGET_DIR)/%: $(TOP)/test/targets/%.cpp $(wildcard $(TOP)/test/targets/*.h) | deps-host
	@mkdir -p $(@D)
	g++ -O2 -g -Wall -Wextra -Werror -o $@ $< -lpthread

# target_stack's two libraries: one with frame pointers, one without (CFI only).
STACK_LIB_DIR := $(TOP)/test/targets/stack_libs
$(E2E_TARGET_DIR)/libstk_a.so: $(STACK_LIB_DIR)/libstk_a.c | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -fPIC -shared -fno-omit-frame-pointer -o $@ $<
$(E2E_TARGET_DIR)/libstk_b.so: $(STACK_LIB_DIR)/libstk_b.c | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -fPIC -shared -fomit-frame-pointer \
		-fasynchronous-unwind-tables -o $@ $<
$(E2E_TARGET_DIR)/target_stack: $(TOP)/test/targets/target_stack.c \
		$(E2E_TARGET_DIR)/libstk_a.so $(E2E_TARGET_DIR)/libstk_b.so | deps-host
	gcc -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -o $@ $< \
		-L$(E2E_TARGET_DIR) -lstk_a -lstk_b -Wl,-rpath,'$$ORIGIN'

# target_jit over the test libart.so (ART's debugger interface, JIT code and
# interpreters: test/targets/art_jit/); the arm64 build is mk/vm.mk's.
ART_JIT_DIR := $(TOP)/test/targets/art_jit
$(E2E_TARGET_DIR)/art_jit/libart.so: $(ART_JIT_DIR)/libart.c $(ART_JIT_DIR)/art_jit.h | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -fPIC -shared -fasynchronous-unwind-tables -o $@ $<
$(E2E_TARGET_DIR)/target_jit: $(TOP)/test/targets/target_jit.c \
		$(E2E_TARGET_DIR)/art_jit/libart.so | deps-host
	gcc -O2 -g -Wall -Wextra -Werror -I$(TOP)/test/targets -o $@ $< \
		-L$(E2E_TARGET_DIR)/art_jit -l:libart.so -Wl,-rpath,'$$ORIGIN/art_jit'

# An Android program (bionic): clang's Android target, linked against the x86_64
# Android 11 userland's own libc.so and libcutils.so, Android's linker as its
# interpreter; test_sections.py runs it in a chroot of a copy of that userland.
ANDROID_USERLAND := $(TESTDATA)/android-userland/x86_64-android11
ANDROID_TARGETS  := $(E2E_TARGET_DIR)/android/target_atrace
$(E2E_TARGET_DIR)/android/%: $(TOP)/test/targets/android/%.c | deps-host
	@mkdir -p $(@D)
	clang --target=x86_64-linux-android30 -ffreestanding -nostdlib -fPIE -pie \
		-fuse-ld=lld -O1 -Wall -Werror -Wl,--dynamic-linker=/system/bin/linker64 \
		-Wl,-z,noexecstack -o $@ $< -L$(ANDROID_USERLAND)/system/lib64 -lc -lcutils

$(DEMO_APP): $(TOP)/demo/demo_app.c | deps-host
	@mkdir -p $(@D)
	gcc -O2 -g -Wall -Wextra -Werror -o $@ $<

.PHONY: test-e2e demo
test-e2e: $(E2E_BIN) $(E2E_TARGETS) $(ANDROID_TARGETS)
	@$(TOP)/test/e2e/setup.sh
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TARGETS=$(E2E_TARGET_DIR) \
	UPROBESTATS_TESTDATA=$(TESTDATA) UPROBESTATS_BUILD=$(BUILD) \
		python3 $(TOP)/test/e2e/run.py $(E2E_FILTER)

# The same suite again with --target-kernel 4.14 on every run: the legacy objects, the
# perf buffer and tracefs must give the same counts, arguments, Strings and atoms.
.PHONY: test-e2e-legacy
test-e2e-legacy: $(E2E_BIN) $(E2E_TARGETS) $(ANDROID_TARGETS)
	@$(TOP)/test/e2e/setup.sh
	UPROBESTATS_BIN=$(E2E_BIN) UPROBESTATS_TARGETS=$(E2E_TARGET_DIR) \
	UPROBESTATS_TESTDATA=$(TESTDATA) UPROBESTATS_BUILD=$(BUILD) \
	UPROBESTATS_E2E_TARGET_KERNEL=4.14 python3 $(TOP)/test/e2e/run.py $(E2E_FILTER)

demo: $(E2E_BIN) $(DEMO_APP)
	@$(TOP)/demo/run.sh $(E2E_BIN) $(DEMO_APP) $(BUILD)/demo

# The adb helper against a fake adb; the trace viewer (speedscope in headless
# Chromium, installed on first use).
.PHONY: test-tools test-viewer
test-tools:
	@$(TOP)/test/tools/test_adb_run.sh

test-viewer: | deps-host
	@$(TOP)/test/viewer/run.sh

TEST_STAGES += test-e2e test-e2e-legacy test-tools test-viewer

# docs/uprobestats.1 from the option rows (`uprobestats __man`); test_help.c
# and test_readme.py fail when the committed page differs.
.PHONY: man
man: $(E2E_BIN)
	@$(E2E_BIN) __man > $(TOP)/docs/uprobestats.1
	@echo "  MAN     docs/uprobestats.1"
