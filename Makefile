# layover: see README.md. `make test` and `make demo` install missing build
# dependencies themselves (apt-get, through sudo -n when not root).
CXX      ?= g++
PREFIX   ?= /usr/local
BUILD    ?= build
WERROR   := $(if $(filter true 1,$(CI)),-Werror,)
# -g1: function names and line tables (backtraces, sanitizer reports) without
# local variables: a clean build took ~20% less CPU than with -g. Use
# OPT="-O2 -g" for a debugging session.
OPT      ?= -O2 -g1
CXXFLAGS ?=
ALLFLAGS := $(OPT) -std=c++20 -Wall -Wextra -Wshadow -Wformat=2 $(WERROR) -I. -MMD -MP $(CXXFLAGS)
LDFLAGS  ?=
# Static libstdc++/libgcc: resolving libstdc++'s symbols at every start cost
# ~2 ms of `run`'s start-up (measured with perf). Not with sanitizers, whose
# runtimes need the shared ones.
STATIC_CXX := $(if $(SAN),,-static-libstdc++ -static-libgcc)
# `layover` itself is a static PIE (ASLR kept): no ld.so loading and
# relocating libc at every start, ~0.15-0.2 ms of CPU on `run`'s critical
# path (docs/performance.md, "Start-up, ninth pass"). -static-pie implies
# a static libstdc++ and libgcc (with -static-libgcc as well, this gcc made a
# binary that needs libc.so but has no interpreter). Nothing in it may call
# NSS (getpwuid and friends): a static glibc loads those modules at run time,
# and crashed on a uid missing from /etc/passwd; helper/base/passwd.h reads
# the file instead. --fatal-warnings turns the linker's "Using 'getpwuid' in
# statically linked applications requires ..." into a failed build.
LAYOVER_STATIC := $(if $(SAN),,-static-pie -Wl,--fatal-warnings)
XXHASH     := $(if $(SAN),-lxxhash,-l:libxxhash.a)
SECCOMP    := $(if $(SAN),-lseccomp,-l:libseccomp.a)
SAN      :=
NPROC    := $(shell nproc 2>/dev/null || echo 2)
# The version is written once, in python/layover/_version.py.
VERSION  := $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' python/layover/_version.py)
ALLFLAGS += -DLAYOVER_VERSION='"$(VERSION)"'
# Install (helper/dist/install.sh; docs/design.md "Install layout").
PYTHON      ?= /usr/bin/python3
PYTHONDIR   ?=
APPARMORDIR ?= /etc/apparmor.d
APPARMOR    ?= auto

# Layers (docs/design.md): helper/base <- helper/store <- capture <- review,
# helper/base <- overlay <- helper/sandbox; helper/cli on top of all.
# tests/check_layers.sh enforces the includes.
tree = $(wildcard $(1)/*.cc) $(wildcard $(1)/*/*.cc) $(wildcard $(1)/*/*/*.cc)
BASE_SRCS  := $(call tree,helper/base) $(call tree,helper/store)
CORE_SRCS  := $(call tree,helper/sandbox) $(wildcard overlay/*.cc)
PATCH_SRCS := $(call tree,capture) $(call tree,review)
CLI_SRCS   := $(filter-out helper/cli/main.cc helper/cli/patch_main.cc,$(call tree,helper/cli))
UNIT_SRCS  := $(wildcard tests/unit/*.cc) $(wildcard tests/fuzz/t_*.cc)

obj = $(patsubst %.cc,$(BUILD)/obj/%.o,$(1))
BASE_LIB  := $(BUILD)/libbase.a
CORE_LIB  := $(BUILD)/libcore.a
PATCH_LIB := $(BUILD)/libpatch.a
CLI_LIB   := $(BUILD)/libcli.a
# run's start-up path links no libarchive/libzstd: the verbs that need them
# live in layover-patch, which `layover` execs (see docs/design.md).
PATCH_LIBS := -larchive -lzstd -lxxhash -lpthread

# The files the PCH rule compiled twice (see below), named after a build.
pch_twice = t=$$(find $(BUILD)/obj -name '*.o.twice' -exec cat {} + 2>/dev/null | sort | paste -sd' ' -); \
	[ -z "$$t" ] || echo "note: compiled twice (PCH diagnostics, see the Makefile's PCH rule): $$t" >&2

.PHONY: all man deps test uninstall deb test-stress demo asan bench clean install check-cases check-layers format format-check fuzz fuzz-bins

all: $(BUILD)/layover $(BUILD)/layover-patch

man: $(BUILD)/layover.1

# The man page is made from docs/cli.md, so the two cannot disagree.
$(BUILD)/layover.1: docs/cli.md helper/dist/man.py python/layover/_version.py
	@mkdir -p $(dir $@)
	$(PYTHON) helper/dist/man.py docs/cli.md $(VERSION) > $@.tmp && mv $@.tmp $@

# The standard headers most sources include (helper/base/std_pch.h) are
# precompiled once per build dir with the same flags and included first
# (-include): parsing them was about a third of a clean build's CPU
# (docs/design.md, "How `make test` runs"). The files that include json.hpp,
# directly or through the two headers that do, get json_pch.h (the same
# plus json.hpp) instead: a file listed wrongly only costs time, the headers
# are the same text. g++ 12 drops libstdc++'s `#pragma GCC diagnostic` lines
# from a PCH (GCC PR 64117, fixed in 13), so code inlined from libstdc++ can
# raise warnings it silences (-Warray-bounds in std::string at -O2): a
# compile with the PCH that prints anything is redone without it, and that
# compile's output and status are the verdict. PCH= (empty) turns it off.
# Each such file costs a whole second compile, so it leaves OBJ.twice
# behind and `make test` lists them after the build (pch_twice): build the
# message with base::cat (helper/base/cat.h) or resize+append instead.
PCH      ?= 1
JSON_USERS := $(shell grep -lE '^\#include (<nlohmann/json.hpp>|"capture/patch/manifest.h"|"helper/base/json/bytes.h")' \
                $(BASE_SRCS) $(CORE_SRCS) $(PATCH_SRCS) $(CLI_SRCS) helper/cli/main.cc helper/cli/patch_main.cc \
                $(wildcard tests/fuzz/t_*.cc))
pch_of = $(BUILD)/pch/$(if $(filter $(1),$(JSON_USERS)),json,std)_pch.h
$(BUILD)/pch/std_pch.h.gch $(BUILD)/pch/json_pch.h.gch: $(BUILD)/pch/%.gch: helper/base/% helper/base/std_pch.h \
                                                      python/layover/_version.py
	@mkdir -p $(dir $@)
	cp $< $(basename $@)
	$(CXX) $(ALLFLAGS) $(SAN) -x c++-header $(basename $@) -o $@
ifneq ($(PCH),)
.SECONDEXPANSION:
$(BUILD)/obj/%.o: %.cc python/layover/_version.py $$(call pch_of,%.cc).gch
	@mkdir -p $(dir $@)
	$(info $(CXX) $(ALLFLAGS) $(SAN) -include $(call pch_of,$<) -Winvalid-pch -c $< -o $@)
	@$(CXX) $(ALLFLAGS) $(SAN) -include $(call pch_of,$<) -Winvalid-pch -c $< -o $@ 2>$@.log && ! [ -s $@.log ] && \
	  rm -f $@.twice || \
	  { l=$$(grep -oE '^$<:[0-9]+' $@.log | cut -d: -f2 | sort -nu | paste -sd, -); \
	    echo "$<: diagnostics with the PCH$${l:+ (line $$l)}, compiled again without it" >&2; \
	    echo "$<" >$@.twice; $(CXX) $(ALLFLAGS) $(SAN) -c $< -o $@; }; s=$$?; rm -f $@.log; exit $$s
else
$(BUILD)/obj/%.o: %.cc python/layover/_version.py
	@mkdir -p $(dir $@)
	@rm -f $@.twice
	$(CXX) $(ALLFLAGS) $(SAN) -c $< -o $@
endif

# Unit tests are mostly Catch2's macros: -O2 -g made them 4-5x slower to
# compile (20 s for the largest file; -O0 halves -O1 -g1 again) for no use:
# they test the libraries, which keep $(OPT), and Catch2 names the file and
# line of each failure itself. This keeps a clean `make test` within its time
# budget.
UNIT_OPT ?= -O0
# Catch2's single header is most of each unit test's compile time: it is
# precompiled once with the same flags (2.5 s -> 1.1 s a file) and included
# first. main.cc defines CATCH_CONFIG_MAIN before it, so it goes without.
UNIT_PCH := $(BUILD)/pch/catch_pch.h
$(UNIT_PCH).gch: tests/unit/catch_pch.h
	@mkdir -p $(dir $@)
	cp tests/unit/catch_pch.h $(UNIT_PCH)
	$(CXX) $(ALLFLAGS) $(UNIT_OPT) $(SAN) -x c++-header $(UNIT_PCH) -o $@
$(BUILD)/obj/tests/unit/main.o: tests/unit/main.cc python/layover/_version.py
	@mkdir -p $(dir $@)
	$(CXX) $(ALLFLAGS) $(UNIT_OPT) $(SAN) -c $< -o $@
$(BUILD)/obj/tests/unit/%.o: tests/unit/%.cc python/layover/_version.py $(UNIT_PCH).gch
	@mkdir -p $(dir $@)
	$(CXX) $(ALLFLAGS) $(UNIT_OPT) $(SAN) -include $(UNIT_PCH) -c $< -o $@

$(BASE_LIB): $(call obj,$(BASE_SRCS))
	@rm -f $@; ar rcs $@ $^
$(CORE_LIB): $(call obj,$(CORE_SRCS))
	@rm -f $@; ar rcs $@ $^
$(PATCH_LIB): $(call obj,$(PATCH_SRCS))
	@rm -f $@; ar rcs $@ $^
$(CLI_LIB): $(call obj,$(CLI_SRCS))
	@rm -f $@; ar rcs $@ $^

# layover links the patch library too, for `status`, but only -lxxhash: if
# anything it uses needed libarchive or libzstd, this link would fail.
# --as-needed: g++ adds -lm for libstdc++, which is linked statically here, and
# nothing of ours calls libm (helper/base/log2.h): one shared object fewer for
# ld.so to load at every start (docs/performance.md, issue 20).
$(BUILD)/layover: $(call obj,helper/cli/main.cc) $(CLI_LIB) $(PATCH_LIB) $(CORE_LIB) $(BASE_LIB)
	$(CXX) $(SAN) $(LAYOVER_STATIC) -Wl,--as-needed $(LDFLAGS) -o $@ $^ $(XXHASH) $(SECCOMP)
$(BUILD)/layover-patch: $(call obj,helper/cli/patch_main.cc) $(CLI_LIB) $(PATCH_LIB) $(CORE_LIB) $(BASE_LIB)
	$(CXX) $(SAN) $(STATIC_CXX) $(LDFLAGS) -o $@ $^ $(PATCH_LIBS) $(SECCOMP)
$(BUILD)/unit-tests: $(call obj,$(UNIT_SRCS)) $(CLI_LIB) $(PATCH_LIB) $(CORE_LIB) $(BASE_LIB)
	$(CXX) $(SAN) $(LDFLAGS) -o $@ $^ $(PATCH_LIBS) $(SECCOMP)

# Fuzzing (docs/security.md "Fuzzing"): libFuzzer binaries built with clang,
# ASan and UBSan in build-fuzz/, then each target run for FUZZ_SECONDS, one
# at a time (nice). `make test` replays the committed corpora with g++.
FUZZ_TARGETS := patch zframe json glob udiff ipc layer_index
FUZZ_SECONDS ?= 600
FUZZ_SAN := -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer
$(BUILD)/obj/tests/fuzz/main_%.o: tests/fuzz/libfuzzer_main.cc tests/fuzz/targets.h
	@mkdir -p $(dir $@)
	$(CXX) $(ALLFLAGS) $(SAN) -DFUZZ_TARGET=fuzz::$* -c $< -o $@
$(BUILD)/fuzz-%: $(BUILD)/obj/tests/fuzz/main_%.o $(call obj,$(wildcard tests/fuzz/t_*.cc) helper/sandbox/rename/rename_call.cc helper/sandbox/ipc/control_msg.cc) \
                 $(PATCH_LIB) $(BASE_LIB)
	$(CXX) $(SAN) -fsanitize=fuzzer $(LDFLAGS) -o $@ $^ $(PATCH_LIBS)
fuzz-bins: $(addprefix $(BUILD)/fuzz-,$(FUZZ_TARGETS))

fuzz:
	@tests/deps.sh fuzz
	@$(MAKE) --no-print-directory -j$(NPROC) CXX=clang++ PCH= BUILD=build-fuzz OPT="-O1 -g" SAN="$(FUZZ_SAN)" fuzz-bins
	@tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

deps:
	@tests/deps.sh

# Catch2's main.o (no PCH) is the longest compile of the build: named first,
# it starts at once, beside the first PCH, and is never the build's tail.
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BUILD)/obj/tests/unit/main.o all $(BUILD)/unit-tests
	@$(pch_twice)
	@$(MAKE) --no-print-directory check-cases check-layers format-check
	@tests/run_all.sh $(BUILD)

test-stress: deps all
	@LAYOVER_STRESS=1 tests/run_all.sh $(BUILD) stress

asan: deps
	@$(MAKE) --no-print-directory -j$(NPROC) BUILD=build-asan SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -Wno-maybe-uninitialized" OPT="-O1 -g" all build-asan/unit-tests
	@LAYOVER_SANITIZED=1 ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 tests/run_all.sh build-asan

check-cases:
	@tests/check_cases.sh

check-layers:
	@tests/check_layers.sh

format-check:
	@tests/format_check.sh

format:
	@tests/format_check.sh --fix

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all
	@tests/demo.sh $(BUILD)

bench: deps all
	@QUICK=$(QUICK) tests/bench.sh $(BUILD)

# DESTDIR stages; the manifest (PREFIX/lib/layover/install-manifest) lists
# every file and directory made, so `make uninstall` removes exactly those.
INSTALL_ENV = BUILD=$(BUILD) PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) PYTHON=$(PYTHON) PYTHONDIR=$(PYTHONDIR) \
	APPARMORDIR=$(APPARMORDIR) APPARMOR=$(APPARMOR)

install: all man
	@$(INSTALL_ENV) helper/dist/install.sh

uninstall:
	@$(INSTALL_ENV) helper/dist/uninstall.sh

deb: all man
	@BUILD=$(BUILD) VERSION=$(VERSION) PYTHON=$(PYTHON) helper/dist/deb.sh

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
