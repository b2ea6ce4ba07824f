"""The seccomp table of the grading sandbox does not drift (issue 41, point 7).

* every system call that this machine's C headers name is decided in
  :mod:`robodyn.grading.seccomp` (allowed, refused or decided on an argument), under the
  headers' number -- a call added to the kernel after the table (``quotactl_fd`` was one)
  makes this test fail until someone decides it;
* the compiled BPF program, run by an interpreter written here from the kernel's BPF
  semantics (not by the code that built it), does for every number what the table says, and
  answers ENOSYS to every number the table does not know;
* an honest run (the instructor notebook of set I, traced with strace) uses only calls the
  table allows.
"""
import errno
import os
import re
import shutil
import struct
import sys
from pathlib import Path

import nbformat
import pytest

from robodyn.grading import grader, seccomp

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "book" / "assignments" / "source" / "part1_rigid_motion.ipynb"
HEADERS = {"x86_64": "/usr/include/x86_64-linux-gnu/asm/unistd_64.h",
           "aarch64": "/usr/include/asm-generic/unistd.h"}
AUDIT = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7, "i386": 0x40000003}


def _header(machine):
    """``{name: number}`` as the C header of ``machine`` gives it (the generic header's
    ``__NR3264_`` names under their 64-bit spelling; its 32-bit-only ``*_time64`` calls
    are not aarch64's)."""
    path = Path(HEADERS[machine])
    if not path.exists():
        pytest.skip(f"no {path} on this machine (install linux-libc-dev)")
    text, out = path.read_text(), {}
    for m in re.finditer(r"#define\s+__NR3264_(\w+)\s+(\d+)\b", text):
        out[{"fstatat": "newfstatat"}.get(m.group(1), m.group(1))] = int(m.group(2))
    for m in re.finditer(r"#define\s+__NR_(\w+)\s+(\d+)\b", text):
        name = m.group(1)
        if name in ("syscalls", "arch_specific_syscall", "sync_file_range2") or \
                name.endswith("time64"):
            continue
        out.setdefault(name, int(m.group(2)))
    return out


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_every_call_of_the_headers_is_decided(machine):
    known = _header(machine)
    assert len(known) > 300, len(known)                 # the header was read
    table = seccomp.numbers(machine)
    missing = sorted(set(known) - set(table))
    assert not missing, f"calls of {HEADERS[machine]} not in the table: {missing}"
    assert {n: table[n] for n in known} == known
    decided = seccomp.ALLOWED | seccomp.DENIED | set(seccomp.CHECKED)
    assert not seccomp.ALLOWED & seccomp.DENIED
    assert sorted(set(table) - decided) == []
    assert "quotactl_fd" in seccomp.DENIED and table["quotactl_fd"] == 443


def run_bpf(prog, nr, arch, arg0=0, arg1=0):
    """Run the classic-BPF seccomp program ``prog`` (bytes) on ``struct seccomp_data`` with
    ``nr``, ``arch``, ``arg0`` and ``arg1``: returns the action (RET value). An independent
    reading of linux/filter.h: LD|W|ABS, JMP JA/JEQ/JGE/JSET with K, RET K."""
    data = struct.pack("=IIQ6Q", nr, arch, 0, arg0 % 2**64, arg1 % 2**64, 0, 0, 0, 0)
    ins = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    pc, acc, steps = 0, 0, 0
    while True:
        steps += 1
        assert steps < 10000 and 0 <= pc < len(ins)
        code, jt, jf, k = ins[pc]
        if code == 0x20:                                # BPF_LD | BPF_W | BPF_ABS
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == 0x05:                              # BPF_JMP | BPF_JA
            pc += 1 + k
        elif code in (0x15, 0x35, 0x45):                # JEQ, JGE, JSET (K)
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:                              # BPF_RET | BPF_K
            return k
        else:
            raise AssertionError(f"unexpected BPF instruction {code:#x}")


ALLOW, ERRNO = 0x7FFF0000, 0x00050000


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_the_program_does_what_the_table_says(machine):
    prog, arch = seccomp.program(machine), AUDIT[machine]
    assert len(prog) // 8 < 4096
    by_nr = {nr: name for name, nr in seccomp.numbers(machine).items()}
    for nr in range(0, 1100):
        name = by_nr.get(nr)
        got = run_bpf(prog, nr, arch)
        if name is None or name == "clone3":
            want = ERRNO | errno.ENOSYS                  # unknown: as an older kernel answers
        elif name in seccomp.DENIED:
            want = ERRNO | errno.EPERM
        elif name in ("socket", "socketpair"):
            want = ERRNO | errno.EAFNOSUPPORT            # every family: refused
        else:
            assert name in seccomp.ALLOWED or name in ("clone", "fcntl", "pipe2"), name
            want = ALLOW                                 # (fcntl and pipe2: argument 0)
        assert got == want, (machine, nr, name, hex(got))
    n = seccomp.numbers(machine)
    for family in (0, 1, 2, 10, 16, 17, 31, 40, 44, 45, 0x100000002, 2**32 + 1, 2**32 - 1):
        for call in ("socket", "socketpair"):   # UNIX, INET, INET6, NETLINK, PACKET, VSOCK...
            assert run_bpf(prog, n[call], arch, family) == ERRNO | errno.EAFNOSUPPORT
    for cmd in (0, 1, 2, 3, 4, 1024, 1030, 1032, 2**32 + 1032):   # F_GETPIPE_SZ: 1032
        assert run_bpf(prog, n["fcntl"], arch, 3, cmd) == ALLOW, cmd
    for cmd in (1031, 2**32 + 1031):                  # F_SETPIPE_SZ (the kernel reads an int)
        assert run_bpf(prog, n["fcntl"], arch, 3, cmd) == ERRNO | errno.EPERM, cmd
    for flags in (0, 0o2000000, 0o4000, 0o40000):     # O_CLOEXEC, O_NONBLOCK, O_DIRECT
        assert run_bpf(prog, n["pipe2"], arch, 4096, flags) == ALLOW, flags
    for flags in (0x80, 0x80 | 0o2000000):            # O_NOTIFICATION_PIPE
        assert run_bpf(prog, n["pipe2"], arch, 4096, flags) == ERRNO | errno.EPERM, flags
    assert run_bpf(prog, n["clone"], arch, 17) == ALLOW           # SIGCHLD: fork
    assert run_bpf(prog, n["clone"], arch, 0x10000000 | 17) == ERRNO | errno.EPERM
    for nr in (0, 1, 102, 359):                       # another ABI: i386 (socketcall = 102)
        assert run_bpf(prog, nr, AUDIT["i386"]) == ERRNO | errno.EPERM
    if machine == "x86_64":                           # x32: bit 30 set (socket, getpid, ...)
        for nr in (0, 39, 41, 101, 443, 0x3FFFFFFF, 0xBFFFFFFF):
            assert run_bpf(prog, 0x40000000 | nr, arch, 1) == ERRNO | errno.EPERM, nr


def test_a_broken_table_is_caught():
    """The check above fails on a program that lets one refused call through (the test
    can fail)."""
    prog = seccomp.program("x86_64")
    ins = [prog[i:i + 8] for i in range(0, len(prog), 8)]
    eperm = struct.pack("=HBBI", 0x06, 0, 0, ERRNO | errno.EPERM)
    k = ins.index(eperm)
    broken = b"".join(ins[:k] + [struct.pack("=HBBI", 0x06, 0, 0, ALLOW)] + ins[k + 1:])
    assert run_bpf(broken, 443, AUDIT["x86_64"]) == ALLOW       # quotactl_fd let through
    assert run_bpf(prog, 443, AUDIT["x86_64"]) == ERRNO | errno.EPERM


@pytest.mark.slow
def test_an_honest_run_needs_only_allowed_calls(tmp_path, monkeypatch):
    """The instructor notebook of set I run (outside the sandbox) under strace: every call it
    makes is allowed by the table (clone3 is answered ENOSYS and the C library falls back
    to clone, which is allowed)."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (apt-get install strace)")
    trace = tmp_path / "trace.txt"
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {strace} -f -qq -o {trace} {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    ref = grader.reference(nbformat.read(SOURCE, as_version=4))
    assert len(ref.problems) >= 5
    calls = re.findall(r"^\d+\s+([a-z0-9_]+)\((.{0,40})", trace.read_text(), re.M)
    names = {c for c, _ in calls}
    assert len(calls) > 1000 and "execve" in names, len(calls)
    allowed = seccomp.ALLOWED | {"clone", "clone3", "fcntl", "pipe2"}
    assert sorted(names - allowed) == []            # no socket at all, no splice, no memfd
    for c, args in calls:
        assert not (c == "fcntl" and "F_SETPIPE_SZ" in args), args
        assert not (c == "pipe2" and "O_NOTIFICATION_PIPE" in args), args
    print(f"an honest run: {len(calls)} calls of {len(names)} kinds, all allowed: "
          f"{' '.join(sorted(names))}")
