# SPDX-License-Identifier: GPL-2.0-or-later
# smartio.ko: the portable core in a Linux kernel module (kmod/).
#
# make kmod builds kmod/build/smartio.ko against KDIR (default: the newest
# /usr/src/linux-headers-*-amd64, else the running kernel's build tree);
# make kmod KVER=<version> builds kmod/build-<version>/smartio.ko for that
# kernel, this machine's or Debian 13's (KVER=$$(cat kernels/debian13/kver)
# after make debian13-root, which fetches Debian 13's Linux 6.12 and the
# gcc-14 root that builds for it: contrib/kernels/debian13.sh).
# make check-kmod builds it again, warnings fatal, and runs it in a QEMU
# guest (tests/kmod/check_kmod.sh), where smartiofs serves /smartio over
# smartio.ko's generic netlink family and systemd-udevd runs udev/*.rules;
# it skips (77 -> SKIPPED) without qemu, busybox-static, udev, the kernel
# image or headers.
KMOD_FILES = kmod/Kbuild kmod/Makefile kmod/sio_kmod.h kmod/sio_main.c \
	kmod/sio_plat.c kmod/sio_debugfs.c kmod/sio_fabric.c kmod/sio_lender.c kmod/sio_shadow.c \
	kmod/sio_genl.c kmod/sio_vcfg.c kmod/sio_cdev.c kmod/sio_ntb.c kmod/dkms.conf kmod/README \
	kmod/sio_ntb_lend.c kmod/sio_shadow.h kmod/sio_shadow_ntb.c \
	kmod/sio_shadow_p2p.c kmod/sio_sriov.c kmod/sio_ntb_window.c \
	kmod/ntb/smartio_ntb.h kmod/sio_kcompat.h kmod/sio_kcompat.mk
KMOD_TESTS = tests/kmod/check_kmod.sh tests/kmod/guest-init.sh tests/kmod/guest-lib.sh \
	tests/kmod/guest-common.sh \
	tests/kmod/guest-udev.sh tests/kmod/sio_mmap.c tests/kmod/sio_genl.c \
	tests/kmod/guest-fuzz.sh tests/kmod/check_genl_fuzz.sh \
	tests/kmod/guest-caps.sh

EXTRA_DIST += $(KMOD_FILES) $(KMOD_TESTS) tests/kmod/kmod.mk \
	contrib/kernels/debian13.sh contrib/kernels/in-root.sh \
	contrib/kernels/kernel-lib.sh
EXTRA_DIST += contrib/kernels/lockdep.sh
dist_man_MANS += man/smartio.4

# udev rules for smartio.ko's devices (/dev/smartio names, shadow tags);
# configure with udevrulesdir=/lib/udev/rules.d for the system's udev.
# The example automation rule is installed with the examples (Makefile.am).
udevrulesdir = $(prefix)/lib/udev/rules.d
dist_udevrules_DATA = udev/60-smartio.rules

DEBIAN13_DIR = $(abs_top_builddir)/kernels/debian13
export DEBIAN13_DIR

debian13-root:
	$(SHELL) $(srcdir)/contrib/kernels/debian13.sh '$(DEBIAN13_DIR)'

# make lockdep-kernel: Debian's Linux 6.1 built with lockdep and the lock
# and sleep-in-atomic checks beside it (contrib/kernels/lockdep.sh), into
# LOCKDEP_DIR, which kernel_find searches; not in .ci/run (its build is
# long).  Then, with KVER=$$(cat kernels/lockdep/kver): make check-kmod
# KVER=..., make check-ntb KVER=...; a lock report fails the guest.
LOCKDEP_DIR = $(abs_top_builddir)/kernels/lockdep
export LOCKDEP_DIR

lockdep-kernel:
	$(SHELL) $(srcdir)/contrib/kernels/lockdep.sh '$(LOCKDEP_DIR)'

.PHONY: lockdep-kernel

kmod:
	@if [ -n '$(KVER)' ]; then \
		src='$(abs_top_srcdir)' build='$(abs_top_builddir)' \
		KVER='$(KVER)' $(SHELL) -c '. "$$src/contrib/kernels/kernel-lib.sh"; \
		kernel_find || { echo "no headers of $$KVER (make debian13-root?)"; exit 1; }; \
		kernel_run "$$src" "$$build" -- make -C "$$src/kmod" KDIR="$$kdir" \
			O_BUILD="$$build/kmod/build-$$KVER/smartio"'; \
		exit; \
	fi; \
	kdir='$(KDIR)'; \
	if [ -z "$$kdir" ]; then \
		kdir=$$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | \
			sort -V | tail -n 1); \
	fi; \
	[ -n "$$kdir" ] || kdir=/lib/modules/$$(uname -r)/build; \
	$(MAKE) -C $(srcdir)/kmod KDIR="$$kdir" \
		O_BUILD='$(abs_top_builddir)/kmod/build'

# The source tree DKMS builds from (kmod/dkms.conf): kmod's files and the
# core in core/, under $(prefix)/src/smartio-$(VERSION).
dkmsdir = $(prefix)/src/smartio-$(VERSION)
dkms-source:
	$(MKDIR_P) '$(DESTDIR)$(dkmsdir)/core'
	for f in $(KMOD_FILES); do \
		cp '$(srcdir)'/$$f '$(DESTDIR)$(dkmsdir)/' || exit 1; done
	cp '$(srcdir)'/lib/core/*.c '$(srcdir)'/lib/core/*.h \
		'$(DESTDIR)$(dkmsdir)/core/'
	sed 's/^PACKAGE_VERSION=.*/PACKAGE_VERSION="$(VERSION)"/' \
		'$(srcdir)/kmod/dkms.conf' >'$(DESTDIR)$(dkmsdir)/dkms.conf'

check-kmod: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		$(SHELL) $(srcdir)/tests/kmod/check_kmod.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "check-kmod: SKIPPED"; exit 0; fi; \
	exit $$st

# make fuzz-genl (in make check-stress): random generic netlink requests to
# smartio.ko in a QEMU guest, GENL_FUZZ_SECONDS as a user and as root.
GENL_FUZZ_SECONDS = 60
fuzz-genl: fs/smartiofs
	@st=0; SRCDIR='$(abs_top_srcdir)' BUILDDIR='$(abs_top_builddir)' \
		GENL_FUZZ_SECONDS='$(GENL_FUZZ_SECONDS)' \
		$(SHELL) $(srcdir)/tests/kmod/check_genl_fuzz.sh || st=$$?; \
	if [ $$st -eq 77 ]; then echo "fuzz-genl: SKIPPED"; exit 0; fi; \
	exit $$st

clean-local: clean-kmod
clean-kmod:
	rm -rf kmod/build kmod/build-* tests/kmod/build tests/kmod/build-fuzz tests/kmod/tools

.PHONY: kmod check-kmod clean-kmod dkms-source fuzz-genl debian13-root
