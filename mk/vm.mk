# The shipped arm64 binary on real arm64 kernels: Debian's arm64 kernels (vendor/VM-MANIFEST)
# booted under qemu-system-aarch64 -M virt (software emulation, no KVM), with an initramfs
# of busybox-static, build/aarch64/uprobestats exactly as shipped, arm64 builds of the e2e
# targets and of test/vm/vmtest (the e2e scenarios as one static C program: the VM has
# no python).  Results come back over the serial console.
#
#   make test-arm64       boot every kernel of VM-MANIFEST and run the scenarios in each;
#                         one "vm-<kernel>: N passed, N failed" line per kernel (a stage
#                         of `make test`).  An optional kernel the archive does not serve
#                         is skipped with a message; a required one failing is a failure.
#   make vm-initramfs     only build the initramfs (build/vm/initramfs.cpio.gz)
#   make vm-kernels       only fetch and unpack the kernels (build/vm/kernel-<name>/)
#
# Variables: VM_KERNELS (default: every kernel in VM-MANIFEST, e.g. VM_KERNELS=6.1),
# VM_FILTER (only the scenarios whose name contains it), VM_TIMEOUT (seconds per boot,
# default 900), VM_SMP / VM_MEM (qemu -smp / -m, default 2 / 1024).
# Downloads are cached under build/vendor/dl/vm/ and unpacked kernels under build/vm/,
# so a second run does not fetch.

VM_DIR        := $(BUILD)/vm
VM_BIN_DIR    := $(BUILD)/aarch64/vm
VM_FETCH      := $(TOP)/vendor/fetch-vm.sh
VM_MANIFEST   := $(TOP)/vendor/VM-MANIFEST
VM_INITRD     := $(VM_DIR)/initramfs.cpio.gz
VM_BUSYBOX    := $(VM_DIR)/busybox
VM_ARM64_BIN  := $(BUILD)/aarch64/uprobestats
VM_KERNELS    ?= $(shell awk '!/^[[:space:]]*\#/ && $$1 == "kernel" { print $$2 }' $(VM_MANIFEST))
VM_TIMEOUT    ?= 900
VM_SMP        ?= 2
VM_MEM        ?= 1024
VM_FILTER     ?=

# The runner is held to the project's warnings; the targets to e2e.mk's flags (they
# define exported functions without prototypes, on purpose).
VM_RUNNER_SRCS  := $(sort $(wildcard $(TOP)/test/vm/*.c))
VM_RUNNER_HDRS  := $(sort $(wildcard $(TOP)/test/vm/*.h))
VM_RUNNER_FLAGS := $(CSTD) $(WARN) -D_GNU_SOURCE -O2 -g
VM_TARGET_FLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror
# target_stack (the host's chain across two libraries, e2e.mk) is not built: the VM's
# --stack scenarios use target_vmlibs (test/targets/vmlibs/: the same kind of chain, which
# records its own return addresses) and target_vmstack (one static program).
VM_TARGETS      := $(patsubst $(TOP)/test/targets/%.c,$(VM_BIN_DIR)/%,\
	$(filter-out $(TOP)/test/targets/target_stack.c $(TOP)/test/targets/target_jit.c,$(wildcard $(TOP)/test/targets/*.c)))
# target_vmlibs: dynamically linked against glibc (libc6-dev-arm64-cross, `make deps`) and
# its two libraries, rpath $ORIGIN; mkinitramfs.sh puts glibc's loader and libc.so.6 in
# the VM's /lib.  libvlib_a.so with frame pointers, libvlib_b.so without (CFI only).
VM_LIBS_SRC     := $(TOP)/test/targets/vmlibs
VM_LIBS_CC      := aarch64-linux-gnu-gcc
VM_LIBS_HDRS    := $(VM_LIBS_SRC)/vlib.h $(TOP)/test/targets/go_fifo.h
VM_LIBS         := $(VM_BIN_DIR)/target_vmlibs $(VM_BIN_DIR)/libvlib_a.so \
	$(VM_BIN_DIR)/libvlib_b.so
VM_GLIBC_DIR    := /usr/aarch64-linux-gnu/lib
# target_jit over the test libart.so (test/targets/art_jit/: ART's debugger interface, arm64
# JIT code and interpreters), dynamically linked against glibc like target_vmlibs (the
# reader finds libart by its file name), libart.so in art_jit/ beside it (rpath).
VM_JIT          := $(VM_BIN_DIR)/target_jit $(VM_BIN_DIR)/art_jit/libart.so
# test_jit.py's dex: the camera jar's classes.dex (jit_expect.py, at build time)
VM_JIT_JAR      := $(TESTDATA)/oat/android-10/arm64/google_coral_QD1A.190821.011.C4/com.google.android.camera.experimental2019.jar
VM_ART_SET      := android-13/arm64/realme_ice_ossi_TP1A.220905.001
VM_ART_DATA     := $(addprefix $(TESTDATA)/oat/$(VM_ART_SET)/com.android.location.provider.,\
	odex vdex jar) \
	$(TESTDATA)/oat-expected/$(VM_ART_SET)/com.android.location.provider.odex.jsonl \
	$(addprefix $(TESTDATA)/oat/$(VM_ART_SET)/org.apache.http.legacy.,odex vdex jar) \
	$(TESTDATA)/oat-expected/$(VM_ART_SET)/org.apache.http.legacy.odex.jsonl
# The arm64 Android 11 userland, copied into the initramfs at /android (vmtest_bionic.c)
VM_ANDROID_DATA := $(addprefix $(TESTDATA)/android-userland/arm64-android11/,\
	system/bin/toybox system/bin/linker64 system/lib64/libc.so system/lib64/libcutils.so)
# Android programs (bionic) for that userland, built as mk/e2e.mk builds the x86_64 ones:
# clang's Android target, linked against its own libc.so and libcutils.so
# (vmtest_traffic.c's sections scenario runs target_atrace in the chroot).
VM_ANDROID_USERLAND := $(TESTDATA)/android-userland/arm64-android11
VM_ANDROID_TARGETS  := $(VM_BIN_DIR)/android/target_atrace \
	$(VM_BIN_DIR)/android/target_traffic_calls
# The apk.* scenarios (vmtest_apk.c): test/bionic/apk_src/'s app and library built for
# arm64 bionic as test_bionic_apk.py builds them for x86_64, libdemo.so twice (linked for
# 4 KiB and for 16 KiB pages); mkinitramfs.sh stores each in an APK (test/vm/mkapk.py).
# -funwind-tables as the NDK's flags have it (clang 14's arm64 default is .debug_frame
# only, with -g): the library's .eh_frame is what --stack steps through.
VM_APK_SRC   := $(TOP)/test/bionic/apk_src
VM_APK_DIR   := $(VM_BIN_DIR)/android/apk
VM_APK_CC    := clang --target=aarch64-linux-android30 -ffreestanding -nostdlib -fuse-ld=lld \
	-O1 -g -funwind-tables -Wall -Werror -L$(VM_ANDROID_USERLAND)/system/lib64
VM_APK_BUILT := $(VM_APK_DIR)/apk_loader $(VM_APK_DIR)/libdemo-4096.so \
	$(VM_APK_DIR)/libdemo-16384.so
VM_APK_LIBS  := $(addprefix $(VM_ANDROID_USERLAND)/system/lib64/,libc.so libdl.so)

.PHONY: test-arm64 vm-initramfs vm-kernels

# Static arm64 musl programs, not stripped (the targets' symbols are the probe points).
# The runner is built like the tool: clang for musl's headers, gcc with musl's specs to
# link.
VM_RUNNER_OBJS  := $(patsubst $(TOP)/test/vm/%.c,$(VM_BIN_DIR)/obj/%.o,$(VM_RUNNER_SRCS))

$(VM_BIN_DIR)/obj/%.o: $(TOP)/test/vm/%.c $(VM_RUNNER_HDRS) $(SYSROOT_STAMP_aarch64)
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64)"
	@$(CC_aarch64) $(VM_RUNNER_FLAGS) -c -o $@ $<

$(VM_BIN_DIR)/vmtest: $(VM_RUNNER_OBJS)
	@echo "  LINK    $(@:$(TOP)/%=%) (arm64)"
	@$(LD_aarch64) -static -o $@ $^

# The targets with gcc, as e2e.mk builds them for the host (they use gcc's attributes),
# through musl's specs file.
$(VM_BIN_DIR)/target_%: $(TOP)/test/targets/target_%.c $(wildcard $(TOP)/test/targets/*.h) \
		$(SYSROOT_STAMP_aarch64)
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64)"
	@$(LD_aarch64) $(VM_TARGET_FLAGS) -static -o $@ $< -lpthread

$(VM_BIN_DIR)/libvlib_a.so: $(VM_LIBS_SRC)/libvlib_a.c $(VM_LIBS_HDRS) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, frame pointers)"
	@$(VM_LIBS_CC) $(VM_TARGET_FLAGS) -fPIC -shared -fno-omit-frame-pointer -o $@ $<

$(VM_BIN_DIR)/libvlib_b.so: $(VM_LIBS_SRC)/libvlib_b.c $(VM_LIBS_HDRS) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, no frame pointers)"
	@$(VM_LIBS_CC) $(VM_TARGET_FLAGS) -fPIC -shared -fomit-frame-pointer \
		-fasynchronous-unwind-tables -o $@ $<

# The libraries' undefined symbols are bound by the loader from the program's global
# scope: every call between the program and a library, or between the libraries, goes
# through a PLT.
$(VM_BIN_DIR)/target_vmlibs: $(VM_LIBS_SRC)/target_vmlibs.c $(VM_LIBS_HDRS) \
		$(VM_BIN_DIR)/libvlib_a.so $(VM_BIN_DIR)/libvlib_b.so | deps-host
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, glibc, two shared libraries)"
	@$(VM_LIBS_CC) $(VM_TARGET_FLAGS) -fPIE -pie -fno-omit-frame-pointer -o $@ $< \
		-L$(VM_BIN_DIR) -lvlib_a -lvlib_b -Wl,-rpath,'$$ORIGIN'

$(VM_BIN_DIR)/art_jit/libart.so: $(TOP)/test/targets/art_jit/libart.c \
		$(TOP)/test/targets/art_jit/art_jit.h | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, the test libart)"
	@$(VM_LIBS_CC) $(VM_TARGET_FLAGS) -fPIC -shared -fasynchronous-unwind-tables -o $@ $<

$(VM_BIN_DIR)/target_jit: $(TOP)/test/targets/target_jit.c $(VM_BIN_DIR)/art_jit/libart.so \
		$(TOP)/test/targets/go_fifo.h | deps-host
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, glibc, the test libart)"
	@$(VM_LIBS_CC) $(VM_TARGET_FLAGS) -I$(TOP)/test/targets -o $@ $< \
		-L$(VM_BIN_DIR)/art_jit -l:libart.so -Wl,-rpath,'$$ORIGIN/art_jit'

$(VM_BIN_DIR)/android/%: $(TOP)/test/targets/android/%.c $(VM_ANDROID_DATA) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, bionic)"
	@clang --target=aarch64-linux-android30 -ffreestanding -nostdlib -fPIE -pie \
		-fuse-ld=lld -O1 -Wall -Werror -Wl,--dynamic-linker=/system/bin/linker64 \
		-Wl,-z,noexecstack -o $@ $< -L$(VM_ANDROID_USERLAND)/system/lib64 -lc -lcutils

# test/targets/target_traffic_calls.c needs no libc headers: built for bionic too
# (vmtest_traffic.c runs it in the chroot).
$(VM_BIN_DIR)/android/target_traffic_calls: $(TOP)/test/targets/target_traffic_calls.c \
		$(VM_ANDROID_DATA) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, bionic)"
	@clang --target=aarch64-linux-android30 -ffreestanding -nostdlib -fPIE -pie \
		-fuse-ld=lld -O1 -Wall -Werror -Wl,--dynamic-linker=/system/bin/linker64 \
		-Wl,-z,noexecstack -o $@ $< -L$(VM_ANDROID_USERLAND)/system/lib64 -lc

$(VM_APK_DIR)/libdemo-%.so: $(VM_APK_SRC)/libdemo.c $(VM_APK_LIBS) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, bionic, $* byte pages)"
	@$(VM_APK_CC) -fPIC -shared -Wl,-z,max-page-size=$* -Wl,-soname,libdemo.so -o $@ $< -lc

$(VM_APK_DIR)/apk_loader: $(VM_APK_SRC)/apk_loader.c $(VM_APK_LIBS) | deps-host
	@mkdir -p $(@D)
	@echo "  CC      $(@:$(TOP)/%=%) (arm64, bionic)"
	@$(VM_APK_CC) -fPIE -pie -fno-omit-frame-pointer -Wl,--dynamic-linker=/system/bin/linker64 \
		-Wl,-z,noexecstack -o $@ $< -lc -ldl

$(VM_BUSYBOX): $(VM_MANIFEST) $(VM_FETCH) | deps-host
	@BUILD=$(BUILD) $(VM_FETCH) busybox $@

$(VM_INITRD): $(TOP)/test/vm/mkinitramfs.sh $(TOP)/test/vm/toybox_stack.py $(TOP)/test/vm/init \
		$(TOP)/test/vm/mkapk.py $(TOP)/test/e2e/apkzip.py $(VM_APK_BUILT) \
		$(TOP)/test/vm/jit_expect.py $(TOP)/test/e2e/test_jit.py \
		$(VM_BUSYBOX) $(VM_ARM64_BIN) $(VM_JIT) $(VM_JIT_JAR) \
		$(VM_BIN_DIR)/vmtest $(VM_TARGETS) $(VM_LIBS) $(VM_ART_DATA) $(VM_ANDROID_DATA) \
		$(VM_ANDROID_TARGETS) | deps-host
	@$(TOP)/test/vm/mkinitramfs.sh $@ $(VM_BUSYBOX) $(VM_ARM64_BIN) $(VM_BIN_DIR) $(TESTDATA) \
		$(VM_GLIBC_DIR)

vm-initramfs: $(VM_INITRD)

vm-kernels: | deps-host
	@for k in $(VM_KERNELS); do BUILD=$(BUILD) $(VM_FETCH) kernel $$k $(VM_DIR)/kernel-$$k || \
		[ $$? = 3 ]; done

ifeq ($(filter aarch64,$(ARCHES)),)
test-arm64:
	@echo "test-arm64: ARCHES ($(ARCHES)) has no aarch64: nothing to boot" >&2; exit 1
else
test-arm64: $(VM_INITRD) | deps-host
	@BUILD=$(BUILD) $(TOP)/test/vm/test-arm64.sh --initrd $(VM_INITRD) --dir $(VM_DIR) \
		--timeout $(VM_TIMEOUT) --smp $(VM_SMP) --mem $(VM_MEM) \
		$(if $(VM_FILTER),--filter '$(VM_FILTER)') $(VM_KERNELS)
endif

TEST_STAGES += test-arm64
