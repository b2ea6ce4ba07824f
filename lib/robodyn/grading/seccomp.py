"""The seccomp filter of the grading sandbox: a classic-BPF program built here, in Python.

:func:`program` returns the raw ``struct sock_filter`` array that ``bwrap --seccomp FD``
loads just before it starts the submission's code (after ``PR_SET_NO_NEW_PRIVS``). It

* refuses every system call made through another ABI than the machine's own (the 32-bit
  ``int 0x80`` entry on x86-64, and the x32 ABI, whose numbers carry bit 30): ``EPERM``;
* refuses the calls that reach the kernel's or another process's state (:data:`DENIED`):
  ``ptrace``, ``process_vm_readv/writev``, ``mount`` and the new mount API, ``umount2``,
  ``pivot_root``, ``chroot``, ``unshare``, ``setns``, the key ring (``keyctl``, ``add_key``,
  ``request_key``), ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_setup``,
  ``kexec_*``, modules, ``swapon/off``, ``reboot``, ``open_by_handle_at``, ``personality``,
  clocks, ``syslog``, ``acct``, ``quotactl``, ``kcmp``, ``pidfd_getfd``, ``fanotify_init``,
  ``migrate_pages``/``move_pages``, ...: ``EPERM``;
* answers ``clone3`` with ``ENOSYS`` (its flags sit behind a pointer that BPF cannot read; the
  C library then falls back to ``clone``), and refuses ``clone`` with any namespace flag;
* allows the rest.

The system-call numbers are the kernel's (``arch/x86/entry/syscalls/syscall_64.tbl`` and the
generic table used by aarch64); ``tests/test_sandbox.py`` checks them against the C headers
of this machine.
"""
import errno
import platform
import struct

# BPF instruction classes and fields (linux/bpf_common.h), seccomp returns (linux/seccomp.h)
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0_LOW = 0, 4, 16                     # offsets in struct seccomp_data (LE)
X32_BIT = 0x40000000
CLONE_NS_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 |
                  0x20000000 | 0x40000000 | 0x00000080)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME."""

_COMMON = {                       # numbers shared by every architecture (>= 424)
    "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "mount_setattr": 442,
    "open_tree_attr": 467,
}
_X86_64 = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "mount": 165,
    "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272, "setns": 308,
    "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "swapon": 167, "swapoff": 168, "reboot": 169,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "personality": 135, "acct": 163,
    "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
    "syslog": 103, "quotactl": 179, "vhangup": 153, "iopl": 172, "ioperm": 173,
    "lookup_dcookie": 212, "kcmp": 312, "fanotify_init": 300, "migrate_pages": 256,
    "move_pages": 279, "uselib": 134, "_sysctl": 156, "nfsservctl": 180,
    "clone": 56, "clone3": 435,
}
_AARCH64 = {
    "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "mount": 40,
    "umount2": 39, "pivot_root": 41, "chroot": 51, "unshare": 97, "setns": 268,
    "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
    "userfaultfd": 282, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105,
    "finit_module": 273, "delete_module": 106, "swapon": 224, "swapoff": 225, "reboot": 142,
    "open_by_handle_at": 265, "name_to_handle_at": 264, "personality": 92, "acct": 89,
    "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171,
    "syslog": 116, "quotactl": 60, "vhangup": 58, "lookup_dcookie": 18, "kcmp": 272,
    "fanotify_init": 262, "migrate_pages": 238, "move_pages": 239,
    "clone": 220, "clone3": 435,
}
ARCHES = {"x86_64": (0xC000003E, _X86_64, True), "aarch64": (0xC00000B7, _AARCH64, False)}
"""machine -> (AUDIT_ARCH_*, its numbers, whether it has the x32 ABI to refuse)."""
DENIED = sorted({*(k for k in _X86_64 if k not in ("clone", "clone3")),
                 *(k for k, v in _COMMON.items() if v is not None)})
"""The system calls refused with EPERM (where the architecture has them)."""


def _ins(code, k, jt=0, jf=0):
    return [code, jt, jf, k]


def program(machine=None):
    """The filter for ``machine`` (``platform.machine()`` by default) as bytes: ``struct
    sock_filter`` entries (u16 code, u8 jt, u8 jf, u32 k), native byte order.

    Raises ValueError for a machine it has no table for.

    >>> len(program("x86_64")) % 8
    0
    """
    machine = machine or platform.machine()
    if not isinstance(machine, str) or machine not in ARCHES:
        raise ValueError(f"program: machine: expected one of {sorted(ARCHES)}, got {machine!r}")
    audit_arch, table, x32 = ARCHES[machine]
    numbers = {**table, **{k: v for k, v in _COMMON.items() if v is not None}}
    denied = sorted({numbers[n] for n in DENIED if n in numbers})
    head = [_ins(_LD_W_ABS, _ARCH), ("jeq", audit_arch, None, "eperm"), _ins(_LD_W_ABS, _NR)]
    if x32:
        head.append(("jge", X32_BIT, "eperm", None))
    body = [("jeq", nr, "eperm", None) for nr in denied]
    body += [("jeq", numbers["clone3"], "enosys", None), ("jeq", numbers["clone"], "clone", None),
             _ins(_RET, RET_ALLOW)]
    tail = {"clone": [_ins(_LD_W_ABS, _ARG0_LOW), ("jset", CLONE_NS_FLAGS, "eperm", None),
                      _ins(_RET, RET_ALLOW)],
            "eperm": [_ins(_RET, RET_ERRNO | errno.EPERM)],
            "enosys": [_ins(_RET, RET_ERRNO | errno.ENOSYS)]}
    prog = head + body
    where = {}
    for name, block in tail.items():
        where[name] = len(prog)
        prog += block
    out = []
    for i, ins in enumerate(prog):
        if isinstance(ins, tuple):                  # a conditional jump to a named block
            op, k, jt, jf = ins
            code = {"jeq": _JEQ, "jge": _JGE, "jset": _JSET}[op]
            t = where[jt] - i - 1 if jt else 0
            f = where[jf] - i - 1 if jf else 0
            if not (0 <= t < 256 and 0 <= f < 256):
                raise ValueError("program: a jump is out of BPF's 8-bit range")
            ins = [code, t, f, k]
        out.append(struct.pack("=HBBI", *ins))
    return b"".join(out)


def numbers(machine=None):
    """``{name: number}`` of the refused calls (and clone, clone3) on ``machine``.

    >>> numbers("x86_64")["ptrace"]
    101
    """
    machine = machine or platform.machine()
    if not isinstance(machine, str) or machine not in ARCHES:
        raise ValueError(f"numbers: machine: expected one of {sorted(ARCHES)}, got {machine!r}")
    _, table, _ = ARCHES[machine]
    return {**table, **{k: v for k, v in _COMMON.items() if v is not None}}

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
