"""The seccomp filter of the grading sandbox: a classic-BPF program built here, in Python.

:func:`program` returns the raw ``struct sock_filter`` array that ``bwrap --seccomp FD``
loads just before it starts the submission's code (after ``PR_SET_NO_NEW_PRIVS``). Every
system call the kernel knows is **decided** here by name, one of:

* :data:`ALLOWED` -- what a notebook's Python, numpy, sympy and IPython need, and harmless
  calls confined by the sandbox's own namespaces and limits;
* :data:`DENIED` (``EPERM``) -- the calls that reach the kernel's or another process's state:
  ``ptrace``, ``process_vm_readv/writev``, ``process_madvise``, ``mount`` and the new mount
  API, ``statmount``/``listmount``, ``pivot_root``, ``chroot``, ``unshare``, ``setns``, the
  key ring, ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*``, the old AIO calls,
  ``kexec_*``, modules, ``swapon/off``, ``reboot``, ``open_by_handle_at``, ``personality``,
  clocks, ``syslog``, ``acct``, ``quotactl``/``quotactl_fd``, ``kcmp``, ``pidfd_getfd``,
  ``fanotify_*``, ``memfd_secret``, ``modify_ldt``, ``sync``, ...; and every call that
  makes the kernel hold memory for the submission beyond a small bound (issue 41 point 2,
  below): ``splice``/``tee``/``vmsplice`` (pages moved or pinned into pipes),
  ``memfd_create`` (files outside the sized tmpfs), System V shared memory, semaphores and
  message queues (kept by the IPC namespace after the process lets go), POSIX message queues,
  and inotify (each watch holds about 1 KiB of the kernel's memory, bounded only by the
  per-user ``fs.inotify.max_user_watches``, which is shared with the grader's own user and
  can be a million);
* :data:`CHECKED` -- decided on an argument, or answered otherwise: ``socket`` and
  ``socketpair`` refused with ``EAFNOSUPPORT`` for **every** family, ``AF_UNIX`` included (no
  network of any kind -- ``AF_INET``, ``AF_INET6``, ``AF_VSOCK``, ``AF_NETLINK``,
  ``AF_PACKET``, ... -- and no socket buffers at all: an honest run opens no socket, as
  ``tests/test_seccomp_table.py`` measures by tracing one); ``fcntl`` without
  ``F_SETPIPE_SZ`` (a pipe keeps its default 64 KiB); ``pipe2`` without
  ``O_NOTIFICATION_PIPE``; ``clone`` without namespace flags; ``clone3`` answered ``ENOSYS``
  (its flags sit behind a pointer that BPF cannot read; the C library then falls back to
  ``clone``).

**Kernel memory without a control group.** Where no cgroup charges the kernel's buffers to
the submission (an ordinary user's grader), what it can make the kernel hold is bounded by
construction: no sockets, no SysV IPC, no memfd, no splice, no inotify; files only in the sized tmpfs
(``/tmp`` and the working folder 256 MiB each, ``/dev/shm`` 64 MiB); and pipes -- the one
buffer left -- each at most 16 pages (64 KiB: ``F_SETPIPE_SZ`` refused), each held by an
open descriptor (without sockets no descriptor can be parked in flight), so at most
``P × F × 64 KiB`` where ``F`` is RLIMIT_NOFILE (:data:`robodyn.grading.jail.OPEN_FILES`,
32) and ``P`` the processes the sandbox may have at once (``robodyn.grading.jail.MAX_PROCESSES``, 32: the group's ``pids.max``, a fresh uid's RLIMIT_NPROC, or for an
ordinary user's grader RLIMIT_NPROC set to the user's tasks at the start plus 32):
**32 × 32 × 64 KiB = 64 MiB** (:data:`robodyn.grading.jail.PIPE_BOUND`), plus the pipes'
own bookkeeping (under 1 KiB each). The other objects a descriptor stands for are bounded by
the same ``P × F``: an eventfd, a timerfd or a signalfd is one small object each, and an epoll
instance watches at most the ``F`` descriptors of its process (one ``epitem`` of under 200
bytes each), so at most ``P × F × F`` = 32,768 watches, a few MiB.
``tests/test_sandbox_isolation.py`` fills every pipe a
submission can open -- as many processes as it can fork, each opening pipes until its
descriptors run out, filling each and keeping one end -- and measures what they hold.

Every number that is not in the machine's table (:func:`numbers`: a gap, or a call added to
the kernel after this table) gets ``ENOSYS``, as a kernel without it would answer; every call
through another ABI than the machine's own (the 32-bit ``int 0x80`` entry on x86-64 with its
``socketcall``, and the x32 ABI, whose numbers carry bit 30) gets ``EPERM``. So a new call
such as ``quotactl_fd`` can never slip through: it is refused until someone decides it, and
``tests/test_seccomp_table.py`` fails when this machine's C headers name a call that is not
decided here, or give it another number.

The numbers are the kernel's (``arch/x86/entry/syscalls/syscall_64.tbl`` and the generic
table used by aarch64).
"""
import errno
import platform
import struct

# BPF instruction classes and fields (linux/bpf_common.h), seccomp returns (linux/seccomp.h)
_LD_W_ABS, _JA, _JEQ, _JGE, _JSET, _RET = 0x20, 0x05, 0x15, 0x35, 0x45, 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW = 0, 4, 16, 24       # offsets in struct seccomp_data (LE)
X32_BIT = 0x40000000
F_SETPIPE_SZ = 1031
"""fcntl's command that grows a pipe's buffer (up to /proc/sys/fs/pipe-max-size, 1 MiB):
refused, so every pipe holds at most its default 64 KiB."""
O_NOTIFICATION_PIPE = 0x80
"""pipe2's flag for a watch-queue pipe, refused (O_EXCL's bit on x86-64 and aarch64)."""
CLONE_NS_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 |
                  0x20000000 | 0x40000000 | 0x00000080)
"""CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME."""

_COMMON = """
pidfd_send_signal 424, io_uring_setup 425, io_uring_enter 426, io_uring_register 427
open_tree 428, move_mount 429, fsopen 430, fsconfig 431, fsmount 432, fspick 433
pidfd_open 434, clone3 435, close_range 436, openat2 437, pidfd_getfd 438
faccessat2 439, process_madvise 440, epoll_pwait2 441, mount_setattr 442
quotactl_fd 443, landlock_create_ruleset 444, landlock_add_rule 445
landlock_restrict_self 446, memfd_secret 447, process_mrelease 448, futex_waitv 449
set_mempolicy_home_node 450, cachestat 451, fchmodat2 452, map_shadow_stack 453
futex_wake 454, futex_wait 455, futex_requeue 456, statmount 457, listmount 458
lsm_get_self_attr 459, lsm_set_self_attr 460, lsm_list_modules 461, mseal 462
setxattrat 463, getxattrat 464, listxattrat 465, removexattrat 466, open_tree_attr 467
file_getattr 468, file_setattr 469
"""
"""The numbers every architecture shares (from 424 on)."""
_TABLES = {"x86_64": """
read 0, write 1, open 2, close 3, stat 4, fstat 5, lstat 6, poll 7, lseek 8, mmap 9
mprotect 10, munmap 11, brk 12, rt_sigaction 13, rt_sigprocmask 14, rt_sigreturn 15
ioctl 16, pread64 17, pwrite64 18, readv 19, writev 20, access 21, pipe 22, select 23
sched_yield 24, mremap 25, msync 26, mincore 27, madvise 28, shmget 29, shmat 30
shmctl 31, dup 32, dup2 33, pause 34, nanosleep 35, getitimer 36, alarm 37
setitimer 38, getpid 39, sendfile 40, socket 41, connect 42, accept 43, sendto 44
recvfrom 45, sendmsg 46, recvmsg 47, shutdown 48, bind 49, listen 50, getsockname 51
getpeername 52, socketpair 53, setsockopt 54, getsockopt 55, clone 56, fork 57
vfork 58, execve 59, exit 60, wait4 61, kill 62, uname 63, semget 64, semop 65
semctl 66, shmdt 67, msgget 68, msgsnd 69, msgrcv 70, msgctl 71, fcntl 72, flock 73
fsync 74, fdatasync 75, truncate 76, ftruncate 77, getdents 78, getcwd 79, chdir 80
fchdir 81, rename 82, mkdir 83, rmdir 84, creat 85, link 86, unlink 87, symlink 88
readlink 89, chmod 90, fchmod 91, chown 92, fchown 93, lchown 94, umask 95
gettimeofday 96, getrlimit 97, getrusage 98, sysinfo 99, times 100, ptrace 101
getuid 102, syslog 103, getgid 104, setuid 105, setgid 106, geteuid 107, getegid 108
setpgid 109, getppid 110, getpgrp 111, setsid 112, setreuid 113, setregid 114
getgroups 115, setgroups 116, setresuid 117, getresuid 118, setresgid 119
getresgid 120, getpgid 121, setfsuid 122, setfsgid 123, getsid 124, capget 125
capset 126, rt_sigpending 127, rt_sigtimedwait 128, rt_sigqueueinfo 129
rt_sigsuspend 130, sigaltstack 131, utime 132, mknod 133, uselib 134, personality 135
ustat 136, statfs 137, fstatfs 138, sysfs 139, getpriority 140, setpriority 141
sched_setparam 142, sched_getparam 143, sched_setscheduler 144, sched_getscheduler 145
sched_get_priority_max 146, sched_get_priority_min 147, sched_rr_get_interval 148
mlock 149, munlock 150, mlockall 151, munlockall 152, vhangup 153, modify_ldt 154
pivot_root 155, _sysctl 156, prctl 157, arch_prctl 158, adjtimex 159, setrlimit 160
chroot 161, sync 162, acct 163, settimeofday 164, mount 165, umount2 166, swapon 167
swapoff 168, reboot 169, sethostname 170, setdomainname 171, iopl 172, ioperm 173
create_module 174, init_module 175, delete_module 176, get_kernel_syms 177
query_module 178, quotactl 179, nfsservctl 180, getpmsg 181, putpmsg 182
afs_syscall 183, tuxcall 184, security 185, gettid 186, readahead 187, setxattr 188
lsetxattr 189, fsetxattr 190, getxattr 191, lgetxattr 192, fgetxattr 193, listxattr 194
llistxattr 195, flistxattr 196, removexattr 197, lremovexattr 198, fremovexattr 199
tkill 200, time 201, futex 202, sched_setaffinity 203, sched_getaffinity 204
set_thread_area 205, io_setup 206, io_destroy 207, io_getevents 208, io_submit 209
io_cancel 210, get_thread_area 211, lookup_dcookie 212, epoll_create 213
epoll_ctl_old 214, epoll_wait_old 215, remap_file_pages 216, getdents64 217
set_tid_address 218, restart_syscall 219, semtimedop 220, fadvise64 221
timer_create 222, timer_settime 223, timer_gettime 224, timer_getoverrun 225
timer_delete 226, clock_settime 227, clock_gettime 228, clock_getres 229
clock_nanosleep 230, exit_group 231, epoll_wait 232, epoll_ctl 233, tgkill 234
utimes 235, vserver 236, mbind 237, set_mempolicy 238, get_mempolicy 239, mq_open 240
mq_unlink 241, mq_timedsend 242, mq_timedreceive 243, mq_notify 244, mq_getsetattr 245
kexec_load 246, waitid 247, add_key 248, request_key 249, keyctl 250, ioprio_set 251
ioprio_get 252, inotify_init 253, inotify_add_watch 254, inotify_rm_watch 255
migrate_pages 256, openat 257, mkdirat 258, mknodat 259, fchownat 260, futimesat 261
newfstatat 262, unlinkat 263, renameat 264, linkat 265, symlinkat 266, readlinkat 267
fchmodat 268, faccessat 269, pselect6 270, ppoll 271, unshare 272, set_robust_list 273
get_robust_list 274, splice 275, tee 276, sync_file_range 277, vmsplice 278
move_pages 279, utimensat 280, epoll_pwait 281, signalfd 282, timerfd_create 283
eventfd 284, fallocate 285, timerfd_settime 286, timerfd_gettime 287, accept4 288
signalfd4 289, eventfd2 290, epoll_create1 291, dup3 292, pipe2 293, inotify_init1 294
preadv 295, pwritev 296, rt_tgsigqueueinfo 297, perf_event_open 298, recvmmsg 299
fanotify_init 300, fanotify_mark 301, prlimit64 302, name_to_handle_at 303
open_by_handle_at 304, clock_adjtime 305, syncfs 306, sendmmsg 307, setns 308
getcpu 309, process_vm_readv 310, process_vm_writev 311, kcmp 312, finit_module 313
sched_setattr 314, sched_getattr 315, renameat2 316, seccomp 317, getrandom 318
memfd_create 319, kexec_file_load 320, bpf 321, execveat 322, userfaultfd 323
membarrier 324, mlock2 325, copy_file_range 326, preadv2 327, pwritev2 328
pkey_mprotect 329, pkey_alloc 330, pkey_free 331, statx 332, io_pgetevents 333
rseq 334, uretprobe 335
""", "aarch64": """
io_setup 0, io_destroy 1, io_submit 2, io_cancel 3, io_getevents 4, setxattr 5
lsetxattr 6, fsetxattr 7, getxattr 8, lgetxattr 9, fgetxattr 10, listxattr 11
llistxattr 12, flistxattr 13, removexattr 14, lremovexattr 15, fremovexattr 16
getcwd 17, lookup_dcookie 18, eventfd2 19, epoll_create1 20, epoll_ctl 21
epoll_pwait 22, dup 23, dup3 24, fcntl 25, inotify_init1 26, inotify_add_watch 27
inotify_rm_watch 28, ioctl 29, ioprio_set 30, ioprio_get 31, flock 32, mknodat 33
mkdirat 34, unlinkat 35, symlinkat 36, linkat 37, renameat 38, umount2 39, mount 40
pivot_root 41, nfsservctl 42, statfs 43, fstatfs 44, truncate 45, ftruncate 46
fallocate 47, faccessat 48, chdir 49, fchdir 50, chroot 51, fchmod 52, fchmodat 53
fchownat 54, fchown 55, openat 56, close 57, vhangup 58, pipe2 59, quotactl 60
getdents64 61, lseek 62, read 63, write 64, readv 65, writev 66, pread64 67
pwrite64 68, preadv 69, pwritev 70, sendfile 71, pselect6 72, ppoll 73, signalfd4 74
vmsplice 75, splice 76, tee 77, readlinkat 78, newfstatat 79, fstat 80, sync 81
fsync 82, fdatasync 83, sync_file_range 84, timerfd_create 85, timerfd_settime 86
timerfd_gettime 87, utimensat 88, acct 89, capget 90, capset 91, personality 92
exit 93, exit_group 94, waitid 95, set_tid_address 96, unshare 97, futex 98
set_robust_list 99, get_robust_list 100, nanosleep 101, getitimer 102, setitimer 103
kexec_load 104, init_module 105, delete_module 106, timer_create 107, timer_gettime 108
timer_getoverrun 109, timer_settime 110, timer_delete 111, clock_settime 112
clock_gettime 113, clock_getres 114, clock_nanosleep 115, syslog 116, ptrace 117
sched_setparam 118, sched_setscheduler 119, sched_getscheduler 120, sched_getparam 121
sched_setaffinity 122, sched_getaffinity 123, sched_yield 124
sched_get_priority_max 125, sched_get_priority_min 126, sched_rr_get_interval 127
restart_syscall 128, kill 129, tkill 130, tgkill 131, sigaltstack 132
rt_sigsuspend 133, rt_sigaction 134, rt_sigprocmask 135, rt_sigpending 136
rt_sigtimedwait 137, rt_sigqueueinfo 138, rt_sigreturn 139, setpriority 140
getpriority 141, reboot 142, setregid 143, setgid 144, setreuid 145, setuid 146
setresuid 147, getresuid 148, setresgid 149, getresgid 150, setfsuid 151, setfsgid 152
times 153, setpgid 154, getpgid 155, getsid 156, setsid 157, getgroups 158
setgroups 159, uname 160, sethostname 161, setdomainname 162, getrlimit 163
setrlimit 164, getrusage 165, umask 166, prctl 167, getcpu 168, gettimeofday 169
settimeofday 170, adjtimex 171, getpid 172, getppid 173, getuid 174, geteuid 175
getgid 176, getegid 177, gettid 178, sysinfo 179, mq_open 180, mq_unlink 181
mq_timedsend 182, mq_timedreceive 183, mq_notify 184, mq_getsetattr 185, msgget 186
msgctl 187, msgrcv 188, msgsnd 189, semget 190, semctl 191, semtimedop 192, semop 193
shmget 194, shmctl 195, shmat 196, shmdt 197, socket 198, socketpair 199, bind 200
listen 201, accept 202, connect 203, getsockname 204, getpeername 205, sendto 206
recvfrom 207, setsockopt 208, getsockopt 209, shutdown 210, sendmsg 211, recvmsg 212
readahead 213, brk 214, munmap 215, mremap 216, add_key 217, request_key 218
keyctl 219, clone 220, execve 221, mmap 222, fadvise64 223, swapon 224, swapoff 225
mprotect 226, msync 227, mlock 228, munlock 229, mlockall 230, munlockall 231
mincore 232, madvise 233, remap_file_pages 234, mbind 235, get_mempolicy 236
set_mempolicy 237, migrate_pages 238, move_pages 239, rt_tgsigqueueinfo 240
perf_event_open 241, accept4 242, recvmmsg 243, wait4 260, prlimit64 261
fanotify_init 262, fanotify_mark 263, name_to_handle_at 264, open_by_handle_at 265
clock_adjtime 266, syncfs 267, setns 268, sendmmsg 269, process_vm_readv 270
process_vm_writev 271, kcmp 272, finit_module 273, sched_setattr 274, sched_getattr 275
renameat2 276, seccomp 277, getrandom 278, memfd_create 279, bpf 280, execveat 281
userfaultfd 282, membarrier 283, mlock2 284, copy_file_range 285, preadv2 286
pwritev2 287, pkey_mprotect 288, pkey_alloc 289, pkey_free 290, statx 291
io_pgetevents 292, rseq 293, kexec_file_load 294
"""}


def _parse(text):
    out = {}
    for item in text.replace("\n", ",").split(","):
        if item.strip():
            name, nr = item.split()
            out[name] = int(nr)
    return out


_NUMBERS = {m: {**_parse(t), **_parse(_COMMON)} for m, t in _TABLES.items()}

DENIED = frozenset("""
ptrace process_vm_readv process_vm_writev process_madvise process_mrelease kcmp pidfd_getfd
mount umount2 pivot_root chroot unshare setns open_tree open_tree_attr move_mount fsopen
fsconfig fsmount fspick mount_setattr statmount listmount name_to_handle_at open_by_handle_at
keyctl add_key request_key bpf perf_event_open userfaultfd lookup_dcookie uretprobe
io_uring_setup io_uring_enter io_uring_register
io_setup io_destroy io_getevents io_submit io_cancel io_pgetevents
kexec_load kexec_file_load init_module finit_module delete_module create_module
get_kernel_syms query_module swapon swapoff reboot sethostname setdomainname
personality acct settimeofday clock_settime clock_adjtime adjtimex syslog
quotactl quotactl_fd vhangup iopl ioperm modify_ldt uselib _sysctl nfsservctl sysfs ustat
fanotify_init fanotify_mark migrate_pages move_pages memfd_secret lsm_set_self_attr sync
getpmsg putpmsg afs_syscall tuxcall security vserver epoll_ctl_old epoll_wait_old
splice tee vmsplice memfd_create shmget shmat shmctl shmdt semget semop semctl semtimedop
msgget msgsnd msgrcv msgctl mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify
mq_getsetattr inotify_init inotify_init1 inotify_add_watch inotify_rm_watch
""".split())
"""System calls refused with ``EPERM``."""

CHECKED = {"socket": "refused (EAFNOSUPPORT), every family", "socketpair": "refused "
           "(EAFNOSUPPORT), every family", "fcntl": "without F_SETPIPE_SZ",
           "pipe2": "without O_NOTIFICATION_PIPE",
           "clone": "without namespace flags", "clone3": "ENOSYS (the C library falls back)"}
"""System calls decided on an argument, or answered other than EPERM/ENOSYS."""

ALLOWED = frozenset("""
read write open close stat fstat lstat newfstatat statx poll ppoll select pselect6 lseek mmap
mprotect munmap mremap msync mincore madvise brk mlock mlock2 munlock mlockall munlockall
remap_file_pages mseal map_shadow_stack pkey_mprotect pkey_alloc pkey_free
mbind set_mempolicy get_mempolicy set_mempolicy_home_node membarrier rseq
rt_sigaction rt_sigprocmask rt_sigreturn rt_sigpending rt_sigtimedwait rt_sigqueueinfo
rt_sigsuspend rt_tgsigqueueinfo sigaltstack signalfd signalfd4 pause alarm getitimer setitimer
kill tkill tgkill pidfd_open pidfd_send_signal
ioctl pread64 pwrite64 readv writev preadv pwritev preadv2 pwritev2 access faccessat
faccessat2 pipe dup dup2 dup3 flock fsync fdatasync syncfs sync_file_range
truncate ftruncate fallocate readahead fadvise64 sendfile copy_file_range
cachestat getdents getdents64 getcwd chdir fchdir rename renameat renameat2 mkdir mkdirat
rmdir creat link linkat unlink unlinkat symlink symlinkat readlink readlinkat chmod fchmod
fchmodat fchmodat2 chown fchown lchown fchownat umask mknod mknodat utime utimes utimensat
futimesat openat openat2 close_range statfs fstatfs
setxattr lsetxattr fsetxattr getxattr lgetxattr fgetxattr listxattr llistxattr flistxattr
removexattr lremovexattr fremovexattr setxattrat getxattrat listxattrat removexattrat
file_getattr file_setattr
eventfd eventfd2 timerfd_create timerfd_settime timerfd_gettime
epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2
connect accept accept4 sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg shutdown bind listen
getsockname getpeername setsockopt getsockopt
fork vfork execve execveat exit exit_group wait4 waitid set_tid_address restart_syscall
futex futex_waitv futex_wake futex_wait futex_requeue set_robust_list get_robust_list
arch_prctl prctl set_thread_area get_thread_area seccomp landlock_create_ruleset
landlock_add_rule landlock_restrict_self lsm_get_self_attr lsm_list_modules
getpid getppid gettid getuid geteuid getgid getegid getresuid getresgid getgroups getpgid
getpgrp getsid setpgid setsid setuid setgid setreuid setregid setresuid setresgid setfsuid
setfsgid setgroups capget capset getrlimit setrlimit prlimit64 getrusage times getpriority
setpriority ioprio_get ioprio_set sched_yield sched_setparam sched_getparam
sched_setscheduler sched_getscheduler sched_get_priority_max sched_get_priority_min
sched_rr_get_interval sched_setaffinity sched_getaffinity sched_setattr sched_getattr getcpu
nanosleep clock_nanosleep clock_gettime clock_getres gettimeofday time uname sysinfo
getrandom timer_create timer_settime timer_gettime timer_getoverrun timer_delete


""".split())
"""System calls allowed as they are."""

ARCHES = {"x86_64": (0xC000003E, True), "aarch64": (0xC00000B7, False)}
"""machine -> (AUDIT_ARCH_*, whether it has the x32 ABI to refuse)."""


def _ins(code, k, jt=0, jf=0):
    return [code, jt, jf, k]


def _machine(machine, fname):
    machine = machine or platform.machine()
    if not isinstance(machine, str) or machine not in ARCHES:
        raise ValueError(f"{fname}: machine: expected one of {sorted(ARCHES)}, got {machine!r}")
    return machine


def decision(name):
    """What the filter does with the system call ``name``: ``'allow'``, ``'eperm'``,
    ``'socket'`` (refused with ``EAFNOSUPPORT``, every family), ``'clone'`` (no namespace
    flags), ``'fcntl'`` (no ``F_SETPIPE_SZ``), ``'pipe2'`` (no ``O_NOTIFICATION_PIPE``),
    ``'enosys'``; a name it has not decided: ``'enosys'``.

    >>> decision("quotactl_fd"), decision("socket"), decision("read"), decision("fcntl")
    ('eperm', 'socket', 'allow', 'fcntl')
    """
    if name in ("socket", "socketpair"):
        return "socket"
    if name in ("clone", "clone3", "fcntl", "pipe2"):
        return name.replace("clone3", "enosys")
    if name in DENIED:
        return "eperm"
    return "allow" if name in ALLOWED else "enosys"


def _ranges(table):
    """``[(first number, action)]`` in increasing order, merged where neighbours agree; the
    numbers between the table's calls and above them: ``enosys``."""
    by_nr = {nr: decision(name) for name, nr in table.items()}
    out = []
    for nr in range(max(by_nr) + 2):
        act = by_nr.get(nr, "enosys")
        if not out or out[-1][1] != act:
            out.append((nr, act))
    return out


def _search(ranges):
    """A binary search over ``ranges`` (``[(first number, action)]``): each node tests
    ``nr >= first`` of its right half and jumps over its left half (``BPF_JA``, a 32-bit
    offset: no 8-bit limit); each leaf jumps to its action's block."""
    if len(ranges) == 1:
        return [("ja", ranges[0][1])]
    mid = len(ranges) // 2
    left, right = _search(ranges[:mid]), _search(ranges[mid:])
    return [[_JGE, 0, 1, ranges[mid][0]], ("skip", len(left))] + left + right


def program(machine=None):
    """The filter for ``machine`` (``platform.machine()`` by default) as bytes: ``struct
    sock_filter`` entries (u16 code, u8 jt, u8 jf, u32 k), native byte order.

    Raises ValueError for a machine it has no table for.

    >>> len(program("x86_64")) % 8
    0
    """
    machine = _machine(machine, "program")
    audit_arch, x32 = ARCHES[machine]
    head = [_ins(_LD_W_ABS, _ARCH), _ins(_JEQ, audit_arch, 1, 0), ("ja", "eperm"),
            _ins(_LD_W_ABS, _NR)]
    if x32:
        head += [_ins(_JGE, X32_BIT, 0, 1), ("ja", "eperm")]
    body = _search(_ranges(_NUMBERS[machine]))
    tail = {"socket": [_ins(_RET, RET_ERRNO | errno.EAFNOSUPPORT)],
            "clone": [_ins(_LD_W_ABS, _ARG0_LOW), ("jset", CLONE_NS_FLAGS, "eperm", "allow")],
            "fcntl": [_ins(_LD_W_ABS, _ARG1_LOW), ("jeq", F_SETPIPE_SZ, "eperm", "allow")],
            "pipe2": [_ins(_LD_W_ABS, _ARG1_LOW),
                      ("jset", O_NOTIFICATION_PIPE, "eperm", "allow")],
            "allow": [_ins(_RET, RET_ALLOW)],
            "eperm": [_ins(_RET, RET_ERRNO | errno.EPERM)],
            "enosys": [_ins(_RET, RET_ERRNO | errno.ENOSYS)]}
    prog = head + body
    where = {}
    for name, block in tail.items():
        where[name] = len(prog)
        prog += block
    out = []
    for i, ins in enumerate(prog):
        if isinstance(ins, tuple) and ins[0] in ("ja", "skip"):     # unconditional, 32-bit
            k = where[ins[1]] - i - 1 if ins[0] == "ja" else ins[1]
            ins = [_JA, 0, 0, k]
        elif isinstance(ins, tuple):                # a conditional jump to a named block
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
    """``{name: number}`` of every system call of ``machine`` this table knows.

    >>> numbers("x86_64")["ptrace"], numbers("x86_64")["quotactl_fd"]
    (101, 443)
    """
    return dict(_NUMBERS[_machine(machine, "numbers")])

from .._boundary import seal as _seal  # noqa: E402 -- the one boundary (issue 28): last, over the finished module
_seal(globals(), {"*": {"text": "all"}})
