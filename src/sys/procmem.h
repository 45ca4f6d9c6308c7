/* procmem.h — reading another process's memory, read-only: process_vm_readv
 * only (never ptrace, never a write), for ART's debugger interface
 * (code/artdebug.h).  The process is not stopped: what is read may change
 * while it is read, which the caller's protocol (seqlocks) must handle. */
#ifndef UPROBESTATS_SYS_PROCMEM_H
#define UPROBESTATS_SYS_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* len bytes at addr of pid into buf: 0, or -errno (-EFAULT when not all of
 * them are mapped, -ESRCH when the process is gone, -EPERM). */
int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif
