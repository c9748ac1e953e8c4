#!/usr/bin/env bash
# Install whatever build/test dependency is missing, checked per command or
# header. Runs apt-get (through sudo -n when not root); fails clearly if it can't.
set -u
missing=()
need_header() { [ -e "/usr/include/$1" ] || missing+=("$2"); }
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_header archive.h libarchive-dev
need_header zstd.h libzstd-dev
need_header xxhash.h libxxhash-dev
need_header catch2/catch.hpp catch2
need_header nlohmann/json.hpp nlohmann-json3-dev
need_header seccomp.h libseccomp-dev
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing+=(python3-pytest)
/usr/bin/python3 -c 'import pexpect' >/dev/null 2>&1 || missing+=(python3-pexpect)
need_cmd g++ g++
need_cmd make make
need_cmd zstd zstd
need_cmd bsdtar libarchive-tools
need_cmd getfattr attr
need_cmd setfacl acl
need_cmd setpriv util-linux
need_cmd unshare util-linux
need_cmd git git
need_cmd strace strace  # tests/integration/test_upper_flush.py counts syncfs calls
need_cmd clang-format clang-format
# `make fuzz` (tests/deps.sh fuzz): clang and its libFuzzer/sanitizer runtimes.
if [ "${1:-}" = fuzz ]; then
    need_cmd clang++ clang
    ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
        ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 || missing+=(libclang-rt-dev)
fi
# For tests/integration/test_real_tools.py, only when the command is missing
# (node and npm may come from elsewhere, and Debian's npm can conflict).
need_cmd cc gcc
need_cmd node nodejs
need_cmd npm npm
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
# The install suite: pip install ./python offline, the .deb, the man page.
/usr/bin/python3 -c 'import pip' >/dev/null 2>&1 || missing+=(python3-pip)
/usr/bin/python3 -c 'import setuptools, wheel' >/dev/null 2>&1 || missing+=(python3-setuptools python3-wheel)
need_cmd dpkg-deb dpkg
need_cmd man man-db
need_cmd mandoc mandoc
need_cmd bash bash
# tests/install/test_docs_tools.py: the zsh completion run in zsh, the AppArmor profile parsed.
need_cmd zsh zsh
[ -x /usr/sbin/apparmor_parser ] || [ -x /sbin/apparmor_parser ] || missing+=(apparmor)
[ ${#missing[@]} -eq 0 ] && exit 0
pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
echo "layover: installing missing build dependencies: $pkgs" >&2
if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    echo "layover: missing packages ($pkgs) and no root or passwordless sudo; fix: sudo apt-get install $pkgs" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -q >/dev/null ||
    { echo "layover: apt-get update failed; fix: check your network/apt sources, then: sudo apt-get install $pkgs" >&2; exit 1; }
# shellcheck disable=SC2086
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 install -y -q --no-install-recommends $pkgs >/dev/null ||
    { echo "layover: apt-get install failed; fix: sudo apt-get install $pkgs" >&2; exit 1; }
