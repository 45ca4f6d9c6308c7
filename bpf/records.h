/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* records.h — every record that crosses the kernel/user boundary, declared once
 * for both the BPF programs and user space.
 *
 * Each ring-buffer record is an envelope (who, when, which probe) followed by
 * the upstream UprobeStats payload, byte for byte as upstream lays it out
 * (uprobestats-upstream.md §3).  Upstream payloads carry no pid/tid/probe, which
 * a standalone tool needs to attribute events, hence the envelope.  Sizes are
 * asserted below; user space checks each record's length before decoding. */
#ifndef UPROBESTATS_BPF_RECORDS_H
#define UPROBESTATS_BPF_RECORDS_H

#ifdef __bpf__
#include <linux/types.h>
#else
#include <linux/types.h>
#endif

#define UPS_COMM_LEN 16
#define UPS_MAX_PROBES 4096

enum ups_record_kind {
	UPS_REC_CALL_DETAIL = 1,
	UPS_REC_CALL_TIMESTAMP = 2,
	UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE = 3,
	UPS_REC_UPDATE_DEVICE_IDLE = 4,        /* newest layout, with method_identifier */
	UPS_REC_UPDATE_DEVICE_IDLE_LEGACY = 5, /* older layout, no method_identifier */
	UPS_REC_PROCESS_CHANGE = 6,
	UPS_REC_BITMAP_CONSTRUCTOR_HEAP = 7,
	UPS_REC_BITMAP_EVENT = 8,
	UPS_REC_BIND_SERVICE_LOCKED = 9,
	UPS_REC_COMPONENT_ENABLED_SETTING = 10,
	UPS_REC_BINDER_TRANSACTION = 11,
	UPS_REC_ACCESSIBILITY_EVENT = 12,
	UPS_REC_ART_TEST_AOT = 13,             /* the update_device_idle layout, ArtTest atom */
	UPS_REC_START_ACTIVITY_AS_USER = 14,
	UPS_REC_MALWARE_SIGNAL = 15,           /* LMODroid/CalyxOS MalwareSignal (historical) */
	UPS_REC_BINDER_START_ACTIVITY = 16,    /* CalyxOS BinderExecTransactInternal */
	UPS_REC_CALL_RETURN = 100,   /* beyond upstream: kinds >= 100 are ours */
	UPS_REC_CALL_ARGS = 101,
	UPS_REC_STACK = 102,         /* a record of another kind plus its call stack */
	UPS_REC_CALL_UNWOUND = 103,  /* call_return's exit probes: calls left without an exit */
};

#define UPS_HIST_SLOTS 64        /* log2(ns) buckets per probe */

/* ---- in-kernel aggregation (Uprobestats aggregate, aggregate_return) ----
 * One hash map (agg_data) shared by every aggregating probe.  A hit adds 1
 * to the count and its value to the sum of the entry keyed by what the probe
 * aggregates by (fields it does not use are 0) with slot UPS_AGG_TOTAL, and
 * with a histogram 1 to the entry of the same key whose slot is the value's
 * log2 (so a key holds only the slots it uses).  gen is the generation the
 * hit was counted in (agg_gen[0] & 1): user space flips it at each interval
 * and drains the previous generation one tick later, when no program can
 * still be writing it (docs: README "Aggregation"). */
enum ups_agg_by {
	UPS_AGG_BY_PID = 1,
	UPS_AGG_BY_TID = 2,
	UPS_AGG_BY_UID = 4,
	UPS_AGG_BY_ARG = 8,
	UPS_AGG_BY_RET = 16,     /* aggregate_return only */
	UPS_AGG_BY_COMM = 32,    /* the calling thread's comm (bpf_get_current_comm) */
	UPS_AGG_BY_PROCESS = 64, /* keyed by pid here; user space prints the process's
	                          * name, the value's comm when it is gone */
};

enum ups_agg_val {
	UPS_AGG_VAL_NONE = 0,
	UPS_AGG_VAL_ARG = 1,
	UPS_AGG_VAL_RET = 2,     /* aggregate_return only */
	UPS_AGG_VAL_LATENCY = 3, /* aggregate_return only: entry to exit, ns */
};

#define UPS_AGG_TOTAL 0xffff     /* the slot of a key's count and sum entry */
#define UPS_AGG_NEGATIVE 0xfffe  /* the histogram slot of values below 0 (signed) */
#define UPS_AGG_NO_REG 0xff      /* agg_regs byte of an unused argument */

struct ups_agg_key {
	__u32 probe_id;
	__u16 gen;
	__u16 slot;              /* UPS_AGG_TOTAL, or a histogram slot (log2 of the value) */
	__u32 pid;               /* tgid */
	__u32 tid;
	__u32 uid;
	__u32 pad;
	__u64 arg;
	__u64 ret;
	char comm[16];           /* UPS_AGG_BY_COMM: the thread's comm, NUL-padded */
};

struct ups_agg_value {
	__u64 count;
	__u64 sum;               /* UPS_AGG_TOTAL entries; 0 in histogram slots */
	char comm[16];           /* UPS_AGG_BY_PROCESS: the comm of the thread whose hit
	                          * made the entry (names a process gone before the flush) */
};

/* aggregate_return: what its entry program keeps for the exit, keyed by
 * (thread, probe, sp at the entry), which the exit sees again. */
struct ups_agg_entry_key {
	__u32 tid;
	__u32 probe_id;
	__u64 sp;
};

struct ups_agg_entry {
	__u64 entry_ns;
	__u64 args[3];           /* the ARG key, sum and histogram arguments */
};

/* ---- traffic (Uprobestats traffic / traffic_exit) ----
 * Exit probes on libc's socket calls.  agg_entry keeps the arguments
 * (plan_traffic: the fd or domain, the buffer/sockaddr/type, sendto's and
 * recvfrom's address and addrlen; recvfrom's and accept's addrlen pointer,
 * whose length the kernel wrote bounds the address read); at the return, per traffic_op: socket()
 * and accept4() add the new fd to traffic_socks (connect() its peer), close()
 * removes it, and a call that moved bytes adds them to its socket's key in
 * traffic_data.  Only fds in traffic_socks (or with an address in the call)
 * count: a file read or a pipe write has none.  Each socket gets an id when
 * it enters traffic_socks, so a reused fd number is a new key. */
enum ups_traffic_op {
	UPS_TRAFFIC_NONE = 0,
	UPS_TRAFFIC_TX = 1,          /* send, write, writev, sendfile: fd, ret = bytes */
	UPS_TRAFFIC_TX_ADDR = 2,     /* sendto: fd, dest address (arg 4), its len (5) */
	UPS_TRAFFIC_RX = 3,          /* recv, read, readv */
	UPS_TRAFFIC_RX_ADDR = 4,     /* recvfrom: fd, source address (arg 4, filled; *arg 5 long) */
	UPS_TRAFFIC_SOCKET = 5,      /* socket(domain, type, …): ret = fd */
	UPS_TRAFFIC_CONNECT = 6,     /* connect(fd, addr, len) */
	UPS_TRAFFIC_ACCEPT = 7,      /* accept4/accept(fd, addr, &len): ret = fd, addr filled */
	UPS_TRAFFIC_CLOSE = 8,       /* close(fd) */
	/* getaddrinfo(node, service, hints, res) = 0: each address of the
	 * *res list -> node, in traffic_hosts.  struct addrinfo (64-bit):
	 * glibc/musl put ai_addr at +24 and ai_canonname at +32, bionic (BSD)
	 * the other way round; ai_next at +40 in both. */
	UPS_TRAFFIC_LOOKUP = 9,      /* glibc's getaddrinfo: res in arg 3 */
	UPS_TRAFFIC_LOOKUP_BSD = 10, /* bionic's android_getaddrinfofornet: res in arg 5 */
	/* splice(fd_in, off_in, fd_out, …) (kept: registers 0 and 2): tx on
	 * fd_out when it is a known socket, else rx on fd_in when that is one
	 * (one end of a splice is a pipe) */
	UPS_TRAFFIC_SPLICE = 11,
	/* sendmmsg/recvmmsg(fd, vec, vlen, …) = N messages: the bytes are the
	 * msg_len of vec[0..N-1] (struct mmsghdr, 64 bytes each on 64-bit, msg_len
	 * at +56), read at the return: every one of them (the kernel moves at
	 * most UPS_MMSG_VLEN_MAX) with the normal objects, the first
	 * UPS_TRAFFIC_MMSG_LEGACY with the legacy ones (4.14: no loop, 4,096
	 * instructions); one call whatever N.  Messages whose msg_len could
	 * not be read count in ups_traffic_value.uncounted_msgs, never lost in
	 * silence */
	UPS_TRAFFIC_TX_MMSG = 12,
	UPS_TRAFFIC_RX_MMSG = 13,
	/* socketpair(domain, type, protocol, sv) = 0 (kept: registers 0, 1 and
	 * 3): both fds of sv[2] are sockets of that family and type, peer
	 * unknown */
	UPS_TRAFFIC_SOCKETPAIR = 14,
	/* sendmsg/recvmsg(fd, msg, flags): the entry reads msg's msg_name and
	 * msg_namelen (struct msghdr: +0 and +8 on 64-bit) and keeps them as
	 * sendto's address and length (recvmsg: as recvfrom's, the length given
	 * bounding what the kernel copied), msg itself in args[1]; recvmsg's
	 * return reads the msg_namelen the kernel wrote back there */
	UPS_TRAFFIC_TX_MSG = 15,
	UPS_TRAFFIC_RX_MSG = 16,
};

#define UPS_MMSG_VLEN_MAX 1024      /* the kernel's cap on a sendmmsg/recvmmsg vlen (UIO_MAXIOV) */
#define UPS_TRAFFIC_MMSG_LEGACY 32  /* messages whose msg_len the legacy objects read
                                     * (about 17 instructions each, unrolled) */
#define UPS_MMSGHDR_SIZE 64         /* struct mmsghdr on 64-bit */
#define UPS_MMSGHDR_LEN_AT 56       /* its msg_len */
#define UPS_MSGHDR_NAMELEN_AT 8     /* struct msghdr's msg_namelen (msg_name at 0) */

#define UPS_TRAFFIC_HOST_LEN 64  /* a name's first 63 bytes */
#define UPS_TRAFFIC_LOOKUP_ADDRS 8  /* addresses kept per lookup */

#define UPS_SOCK_STREAM 1
#define UPS_SOCK_DGRAM 2
#define UPS_SOCK_SEQPACKET 5

/* ups_traffic_sock.flags */
/* A connection (accepted, a connected stream or seqpacket socket, a
 * socketpair's): the kernel sends to its peer whatever address a sendto
 * names, so the address is not read. */
#define UPS_TRAFFIC_PEER_FIXED 1
/* recvfrom's or accept()'s address came back longer than the buffer given
 * (the kernel copies only the buffer's length, and writes back the whole
 * length): the peer is not known, shown as "truncated"; the buffer's tail
 * is never read as if the kernel had written it. */
#define UPS_TRAFFIC_PEER_CUT 2

struct ups_traffic_sock_key {
	__u32 pid;
	__u32 fd;
};

struct ups_traffic_sock {
	__u64 sock_id;           /* ns when it was seen first: unique per socket */
	__u16 family;            /* AF_INET, AF_INET6, AF_UNIX (0: unknown) */
	__u16 type;              /* UPS_SOCK_STREAM/DGRAM (0: unknown) */
	__u16 port;              /* peer port, host order */
	__u16 flags;             /* UPS_TRAFFIC_PEER_* */
	__u8 addr[16];           /* peer address (AF_UNIX: the path's first 16 bytes) */
};

struct ups_traffic_key {
	__u32 pid;
	__u32 uid;
	__u32 fd;
	__u16 gen;               /* as ups_agg_key.gen */
	__u16 pad;
	struct ups_traffic_sock sock;
};

/* traffic_hosts: an address a process's own lookup returned -> the name
 * it looked up (the last lookup wins). */
struct ups_traffic_host_key {
	__u32 pid;
	__u16 family;            /* AF_INET, AF_INET6 */
	__u16 pad;
	__u8 addr[16];
};

struct ups_traffic_host {
	char name[UPS_TRAFFIC_HOST_LEN];
};

struct ups_traffic_value {
	__u64 tx_bytes;
	__u64 rx_bytes;
	__u64 tx_calls;
	__u64 rx_calls;
	/* the thread that first counted on the key (in this interval): its
	 * name (bpf_get_current_comm) and id; comm_tid == pid: the process's
	 * main thread, whose name is the process's */
	char comm[UPS_COMM_LEN];
	__u32 comm_tid;
	/* sendmmsg/recvmmsg calls with messages whose msg_len or peer was not
	 * read (past UPS_TRAFFIC_MMSG_LEGACY with the legacy objects, not
	 * readable, or naming an address (msg_name) on a socket without a fixed
	 * peer), and those messages: their bytes are in no tx/rx_bytes */
	__u32 uncounted_calls;
	__u64 uncounted_msgs;
};

struct ups_envelope {
	__u64 ktime_ns;          /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 pid;               /* tgid */
	__u32 tid;
	__u32 probe_id;          /* index into the run's probe table */
	__u32 kind;              /* enum ups_record_kind */
	char comm[UPS_COMM_LEN]; /* thread name */
};

/* GenericInstrumentation CallResult: pc, then the first ten argument
 * registers (x0..x9 on arm64; rdi, rsi, rdx, rcx, r8, r9 then zeros on
 * x86_64, which is both the C and the ART managed argument order there). */
struct call_result {
	__u64 pc;
	__u64 regs[10];
};

/* GenericInstrumentation CallTimestamp: event id from the program's suffix
 * (0 for call_timestamp, N for call_timestamp_N), monotonic ns. */
struct call_timestamp {
	__u32 event;
	__u32 pad;
	__u64 timestamp_ns;
};

/* Uprobestats (beyond upstream) call_return: one record per completed call,
 * from a uretprobe paired with an entry uprobe on the same function, or from
 * exit probes (uprobes at the entry and at every return instruction).
 * entry_sp is the stack pointer at the function's first instruction (arm64:
 * sp; x86_64: rsp pointing at the return address), which tells the calls of
 * one thread that nest (a call made inside this one has a lower one) from
 * those after it (sink/call_seq.c). */
struct call_return {
	__u64 return_value;      /* x0 / rax at return */
	__u64 duration_ns;       /* entry -> return, same thread */
	__u64 entry_ns;          /* monotonic time of the entry */
	__u64 entry_sp;          /* stack pointer at the entry */
};

struct rec_call_return {
	struct ups_envelope env;
	struct call_return r;
};

/* Uprobestats call_args: call_detail's registers plus up to four
 * java.lang.String arguments as UTF-8 text.  string_pos[k] is the Java
 * argument position of strings[k] (0xff: unused); only arguments passed in
 * registers can be read. */
#define UPS_ARG_STRINGS 4
#define UPS_ARG_STRING_LEN 128
#define UPS_NO_STRING 0xff

struct call_args {
	struct call_result r;
	__u8 string_pos[UPS_ARG_STRINGS];
	__u32 pad;
	char strings[UPS_ARG_STRINGS][UPS_ARG_STRING_LEN];
};

struct rec_call_args {
	struct ups_envelope env;
	struct call_args a;
};

/* Entry timestamps of calls in flight, keyed by thread and probe. */
struct ups_entry_key {
	__u32 tid;
	__u32 probe_id;
};

/* Exit probes: the calls of one probe in flight on one thread, innermost
 * last.  sp is the stack pointer at the entry, which equals the one at the
 * matching exit (arm64: sp; x86_64: rsp pointing at the return address), so
 * an exit pairs with the entry of the same sp; the stack grows down, so an
 * entry below the current sp belongs to a frame already left. */
#ifdef UPS_LEGACY
/* Half in the legacy objects: a thread's first entry starts from a zeroed
 * stack copy (a map value as a map helper's value needs 4.18), which must
 * fit the 512-byte BPF stack. */
#define UPS_EXIT_DEPTH 16
#else
#define UPS_EXIT_DEPTH 32       /* a power of two (BPF masks indexes with it) */
#endif

struct ups_pending_call {
	__u64 sp;
	__u64 entry_ns;
};

struct ups_pending_stack {
	__u32 depth;
	__u32 pad;
	struct ups_pending_call calls[UPS_EXIT_DEPTH];
};

struct rec_call_detail {
	struct ups_envelope env;
	struct call_result r;
};

/* call_return's exit probes: the calls of one probe on one thread that a
 * later entry or exit of it found left without an exit (an exception or a
 * longjmp unwound them), written when they are dropped.  calls[] is a copy
 * of the pending stack (each call's entry sp and entry time, innermost
 * last); the dropped calls are the ones at [from, to).  at_ns is when the
 * drop was seen (the entry's own time when an entry revealed them: no later
 * than that entry's record; before the exit's record when an exit did).
 * Always UPS_UNWOUND_MAX slots, in the legacy objects too (which keep 16
 * pending calls; the rest zero): one layout. */
#define UPS_UNWOUND_MAX 32

struct call_unwound {
	__u64 at_ns;             /* monotonic time the drop was seen */
	__u32 from, to;          /* the dropped calls: calls[from..to) */
	struct ups_pending_call calls[UPS_UNWOUND_MAX];
};

struct rec_call_unwound {
	struct ups_envelope env;
	struct call_unwound u;
};

struct rec_call_timestamp {
	struct ups_envelope env;
	struct call_timestamp t;
};

/* ---- upstream payloads (uprobestats-upstream.md §3).  Java ints are __s32,
 * Java booleans one byte, upstream's `long` fields __s64/__u64; padding that
 * the LP64 compiler inserts upstream is spelled out so BPF, arm64 and x86_64
 * agree byte for byte. ---- */

#define UPS_STR_LEN 128          /* upstream MAX_STRING_LENGTH */
#define UPS_LONG_STR_LEN 256     /* reason, process_name */
#define UPS_BINDER_MAX_CODES 10

/* ProcessManagement SetUidTempAllowlistStateRecord: uid (a Java int,
 * zero-extended), onAllowlist. */
struct set_uid_temp_allowlist_state {
	__u64 uid;
	__u8 on_allowlist;
	__u8 pad[7];
};

/* ProcessManagement UpdateDeviceIdleTempAllowlistRecord, newest layout
 * (method_identifier first); also ArtTest's AOT record. */
struct update_device_idle {
	__u64 method_identifier;
	__s32 changing_uid;
	__u8 adding;
	__u8 pad0[3];
	__s64 duration_ms;
	__s32 type;
	__s32 reason_code;
	char reason[UPS_LONG_STR_LEN];
	__s32 calling_uid;
	__u32 pad1;
};

/* The same record before method_identifier was added. */
struct update_device_idle_legacy {
	__s32 changing_uid;
	__u8 adding;
	__u8 pad0[3];
	__s64 duration_ms;
	__s32 type;
	__s32 reason_code;
	char reason[UPS_LONG_STR_LEN];
	__s32 calling_uid;
	__u32 pad1;
};

/* ProcessManagement ProcessChange (set_pid, make_active, on_process_active). */
struct process_change {
	__s32 pid;
	__s32 uid;
	char process_name[UPS_LONG_STR_LEN];
};

/* BitmapAllocation bitmap_constructor_heap: the constant 123 ("it fired"). */
struct bitmap_constructor_heap {
	__u64 value;
};

enum bitmap_event_type {
	BITMAP_EVENT_ALLOCATION = 0,
	BITMAP_EVENT_DEALLOCATION = 1,
	BITMAP_EVENT_ACTIVITY_START = 2,
	BITMAP_EVENT_BITMAP_SCALED = 3,
};

/* BitmapAllocation BitmapEvent (the newest layout, with the scaled size). */
struct bitmap_event {
	__u32 type;
	__u32 width;
	__u32 height;
	__u32 scaled_width;
	__u32 scaled_height;
	__u32 pixel_storage_type;
	__u32 bitmap_size;
	__u32 uid;               /* upstream: padding; ours: the uid of the process
				  * that hit the probe (the bitmap atom's uid) */
	__u64 native_ptr;
	char activity_name[UPS_STR_LEN];
};

/* active_bitmaps key: upstream's {tgid, native_ptr}. */
struct bitmap_key {
	__u64 tgid;
	__u64 native_ptr;
};

/* DisruptiveApp BindServiceLocked. */
struct bind_service_locked {
	char intent_action[UPS_STR_LEN];
	char intent_package[UPS_STR_LEN];
	char intent_component_name_package[UPS_STR_LEN];
	char intent_component_name_class[UPS_STR_LEN];
	__s64 bind_flags;
	char calling_package[UPS_STR_LEN];
};

/* DisruptiveApp ComponentEnabledSetting (4-byte aligned: 388 bytes). */
struct component_enabled_setting {
	char package_name[UPS_STR_LEN];
	char class_name[UPS_STR_LEN];
	__s32 new_state;
	char calling_package_name[UPS_STR_LEN];
};

/* Binder BinderTransaction. */
struct binder_transaction {
	char interface_descriptor[UPS_STR_LEN];
	__u64 code;
	__s32 calling_uid;
	__u32 pad;
	__u64 timestamp_ns;
};

/* Binder filter map: key = descriptor (NUL-padded), value = up to ten codes,
 * the list ending at the first 0. */
struct binder_interface_key {
	char interface_descriptor[UPS_STR_LEN];
};

struct binder_codes {
	__u64 codes[UPS_BINDER_MAX_CODES];
};

enum accessibility_variant {
	A11Y_VARIANT_PERMISSION_GRANT = 1,
	A11Y_VARIANT_SERVICE_CONNECTION = 2,
};

/* Accessibility AccessibilityEvent. */
struct accessibility_event {
	__u64 timestamp_ns;
	__s32 variant;
	char package_name[UPS_STR_LEN];
	char permission_name[UPS_STR_LEN];
	__s32 uid;
	__s32 code;
	__u32 pad;
};

/* ArtTest StartActivityAsUser (JIT). */
struct start_activity_as_user {
	__u64 method_identifier;
	char calling_package[UPS_STR_LEN];
	__s32 request_code;
	__s32 start_flags;
	__s32 user_id;
	__s32 validate_incoming_user;
	__u64 x0;
};

/* MalwareSignal (LMODroid/CalyxOS, before DisruptiveApp; §3.8): one record type
 * for two programs, packed to 1-byte alignment as upstream declares it, with
 * 64-byte strings.  Exactly one of the two halves has initialized = 1. */
#define UPS_MALWARE_STR_LEN 64

struct wm_bound_uid {
	__u64 client_uid;
	char client_package_name[UPS_MALWARE_STR_LEN];
	__u64 bind_flags;
	__u8 initialized;
} __attribute__((packed));

struct malware_component_enabled_setting {
	char package_name[UPS_MALWARE_STR_LEN];
	char class_name[UPS_MALWARE_STR_LEN];
	__s32 new_state;
	char calling_package_name[UPS_MALWARE_STR_LEN];
	__u8 initialized;
} __attribute__((packed));

struct malware_signal {
	struct wm_bound_uid wm_bound_uid;
	struct malware_component_enabled_setting component_enabled_setting;
} __attribute__((packed));

/* BinderExecTransactInternal (CalyxOS, before Binder; §3.5): the calling uid of
 * each IActivityTaskManager.startActivity transaction (code 1). */
struct binder_start_activity {
	__s32 calling_uid;
};

/* Full records: envelope + payload (+ tail padding to 8 where the payload is
 * 4-byte aligned). */
#define UPS_RECORD(name, payload_type) \
	struct rec_##name {                \
		struct ups_envelope env;   \
		struct payload_type p;     \
	}

UPS_RECORD(set_uid_temp_allowlist_state, set_uid_temp_allowlist_state);
UPS_RECORD(update_device_idle, update_device_idle);
UPS_RECORD(update_device_idle_legacy, update_device_idle_legacy);
UPS_RECORD(process_change, process_change);
UPS_RECORD(bitmap_constructor_heap, bitmap_constructor_heap);
UPS_RECORD(bitmap_event, bitmap_event);
UPS_RECORD(bind_service_locked, bind_service_locked);
UPS_RECORD(component_enabled_setting, component_enabled_setting);
UPS_RECORD(binder_transaction, binder_transaction);
UPS_RECORD(accessibility_event, accessibility_event);
UPS_RECORD(start_activity_as_user, start_activity_as_user);
UPS_RECORD(malware_signal, malware_signal);
UPS_RECORD(binder_start_activity, binder_start_activity);

/* Per-probe counters (a per-CPU array indexed by probe_id). */
struct ups_probe_counters {
	__u64 hits;              /* program invocations that passed the filters */
	__u64 drops;             /* ring-buffer reservations that failed */
	/* Exit probes (call_return/call_latency at exit sites): */
	__u64 unwound;           /* entries whose frame was left without an exit
				  * (exception, longjmp): found below the stack
				  * pointer of a later entry or exit */
	__u64 untracked;         /* entries not kept: the thread's pending stack
				  * was full (their exits give no duration) */
	/* The uretprobe path (call_return/call_latency without exit probes): */
	__u64 unpaired;          /* returns whose entry time was gone (a recursive
				  * call overwrote it, the LRU map evicted it, or
				  * the call began before attach): no record */
	/* Aggregation (aggregate, aggregate_return): */
	__u64 agg_full;          /* hits whose key (or histogram slot) found the map full:
				  * counted here, never in any key */
};

/* The only read-only global of every program object, set per probe before
 * load.  Kept as one struct at offset 0 of .rodata so user space can fill it
 * without BTF. */
struct ups_prog_config {
	__u32 probe_id;
	__u32 wakeup_bytes;      /* force a consumer wakeup once this much is pending */
	__u32 filter_pids;       /* 1: only tgids present in the target_pids map */
	__u32 use_perfbuf;       /* 1: perf event array instead of ring buffer */
	/* call_args: the register of each String argument (0xff: none) and its
	 * Java argument position, as the record reports it. */
	__u8 string_reg[UPS_ARG_STRINGS];
	__u8 string_pos[UPS_ARG_STRINGS];
	/* --stack: UPS_STACK_OFF, or how the program records the call stack
	 * beside each record (ups_stack.h); stack_bytes is the user-stack slice
	 * of UPS_STACK_COPY, stack_frames the return PCs of UPS_STACK_KERNEL. */
	__u32 stack_mode;
	__u32 stack_bytes;
	__u32 stack_frames;
	/* call_args: bit k set: slot k's register is a native char *, read as a
	 * C string (the same 127 bytes), not a java.lang.String. */
	__u32 string_native;
	__u32 stack_search_bits; /* UPS_STACK_KERNEL: log2 of ups_kwalk_code's size */
	__u32 stack_after_ret;   /* 1: the records are made at a uretprobe (pc, sp: the caller's) */
	__u32 probe_from_cookie; /* 1: the probe id is each offset's attach cookie (ups_probe_id) */
	/* Aggregation: what keys a hit (enum ups_agg_by bits), what is summed
	 * and what goes into the histogram (enum ups_agg_val), and the argument
	 * registers of an ARG key, sum and histogram (bytes 0, 1, 2). */
	__u32 agg_by;
	__u32 agg_sum;
	__u32 agg_hist;
	__u32 agg_regs;
	__u32 traffic_op;        /* enum ups_traffic_op */
	/* 1: the exit program stands alone on a lone `ret` (code whose first
	 * instruction returns: entry and exit are one instruction).  It takes
	 * the hit and the arguments there and reports the call with duration 0;
	 * no entry program runs. */
	__u32 lone_ret;
};

/* ---- call stacks (--stack) ----
 * A probe with a stack wraps each of its records in one UPS_REC_STACK record:
 *   struct ups_stack_hdr, then the wrapped record (inner_len bytes, padded to
 *   8), then n_pcs __u64 PCs walked in the program (UPS_STACK_KERNEL), then
 *   stack_len bytes of the user stack from stack_addr upwards.
 * UPS_STACK_COPY: no PCs; the slice starts at regs' sp.
 * UPS_STACK_KERNEL: when the probe PC is outside known Java code (F_NATIVE),
 *   no PCs and the slice from regs' sp, exactly as in copy mode; when the
 *   walk ends at a PC outside known Java code after stepping (F_WALK_END),
 *   the PCs and a slice from UPS_KWALK_LEAD bytes below the walk-end sp (not
 *   below regs' sp), which holds the last Java frame's callee-save spill
 *   slots: user space restores those and unwinds on from the last PC; else
 *   the PCs only.
 * User space checks that the length is exactly that sum, each part bounded,
 * and decodes the wrapped record as if it had come alone. */
enum ups_stack_mode {
	UPS_STACK_OFF = 0,
	UPS_STACK_COPY = 1,      /* registers + a slice of the user stack, unwound in user space */
	UPS_STACK_KERNEL = 2,    /* compiled Java frames walked in the program (frame sizes map) */
};

#define UPS_STACK_DEFAULT_BYTES 2048
#define UPS_STACK_MAX_BYTES 16384
#define UPS_STACK_MAX_FRAMES 64
#define UPS_STACK_DEFAULT_FRAMES 32
#define UPS_STACK_MAX_INNER 1024 /* UPS_MAX_RECORD */
/* Registers in DWARF numbering: x86_64 rax 0 … r15 15, rip 16 (rsp 7, rbp 6);
 * arm64 x0 … x30 0..30, sp 31, pc 32. */
#define UPS_STACK_NREGS 33

/* flags */
#define UPS_STACK_F_SHORT 1       /* the slice was cut at the end of sp's page (read fault) */
#define UPS_STACK_F_READ_FAILED 2 /* no stack bytes could be read */
#define UPS_STACK_F_WALK_END 4    /* kernel walk: stopped at a PC outside known Java code */
#define UPS_STACK_F_WALK_LIMIT 8  /* kernel walk: stopped at stack_frames */
#define UPS_STACK_F_WALK_BAD 16   /* kernel walk: a method without a frame to step */
#define UPS_STACK_F_AFTER_RET 32  /* kernel walk: at a uretprobe, pcs[0] is a return PC */
#define UPS_STACK_F_NATIVE 64     /* kernel walk: the probe PC is outside known Java code;
				   * registers and slice as in copy mode */

/* Kernel walk: the slice starts this far below the walk-end sp, so it holds
 * the callee saves the last Java frame spilled just below its caller's sp
 * (x86_64: at most rbx, rbp, r12-r15 and the return address, 56 bytes;
 * arm64: x19-x30, 96 bytes; art-frames.md 1.2). */
#define UPS_KWALK_LEAD 128

struct ups_stack_hdr {
	struct ups_envelope env; /* kind UPS_REC_STACK; the rest as the wrapped record's */
	__u32 inner_len;
	__u32 stack_len;
	__u32 n_pcs;
	__u32 flags;
	__u64 regs[UPS_STACK_NREGS];
	__u64 stack_addr;        /* the user address of the slice's first byte */
};

/* UPS_STACK_KERNEL: the compiled Java methods of the traced processes, one
 * entry per method, sorted by (tgid, start); the unused tail is tgid
 * UPS_KWALK_NONE.  The program finds a PC's method by a binary search of at
 * most UPS_KWALK_MAX_BITS steps. */
#define UPS_KWALK_MAP "ups_kwalk_code"
#define UPS_KWALK_MAX_BITS 20
#define UPS_KWALK_NONE 0xffffffffu

struct ups_kwalk_ent {
	__u32 tgid;
	__u32 frame_size;        /* CodeInfo frame size (0: frameless leaf) */
	__u64 start;             /* code address in the process */
	__u64 end;               /* start + code size */
};

/* header, wrapped record, PCs (n_pcs masked to 127 for the verifier), slice */
#define UPS_STACK_SCRATCH \
	(sizeof(struct ups_stack_hdr) + UPS_STACK_MAX_INNER + 128 * 8 + UPS_STACK_MAX_BYTES)

/* The legacy objects (built with -DUPS_LEGACY for kernels before 5.5) have no
 * global data: each config value is a 64-bit immediate load whose upper half
 * is UPS_IMM_MAGIC and whose lower half names the value (enum ups_imm_field).
 * User space rewrites every such load into a load of the probe's value before
 * the program is loaded, so the verifier sees a constant, as with .rodata. */
#define UPS_IMM_MAGIC 0x55505349u   /* "UPSI" */

enum ups_imm_field {
	UPS_IMM_PROBE_ID = 1,
	UPS_IMM_FILTER_PIDS = 2,
	UPS_IMM_STRING_NATIVE = 3,  /* trace's char * positions (a bit mask) */
	UPS_IMM_AGG_BY = 4,
	UPS_IMM_AGG_SUM = 5,
	UPS_IMM_AGG_HIST = 6,
	UPS_IMM_AGG_REGS = 7,
	UPS_IMM_TRAFFIC_OP = 8,
	UPS_IMM_LONE_RET = 9,
	UPS_IMM_STRING_REG = 0x10,   /* + k, k < UPS_ARG_STRINGS */
	UPS_IMM_STRING_POS = 0x20,   /* + k */
};

/* A Java UTF-16 String as a legacy object delivers it (it cannot convert it in
 * BPF without a loop): byte 0 is UPS_RAW_UTF16_TAG (never valid in UTF-8),
 * byte 1 the number of UTF-16LE code units that follow from byte 4, bytes 2-3
 * the size of the field (little-endian).  User space converts it to the
 * UTF-8 the normal objects deliver, in place, before decoding
 * (probe/legacy_str.h). */
#define UPS_RAW_UTF16_TAG 0xFF
#define UPS_RAW_UTF16_HDR 4

#define UPS_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "unexpected size of " #type)

/* Upstream byte offsets (§3) of the fields whose place padding decides. */
#define UPS_ASSERT_OFFSET(type, member, off) \
	_Static_assert(__builtin_offsetof(type, member) == (off), "offset of " #type "." #member)

UPS_ASSERT_OFFSET(struct update_device_idle, changing_uid, 8);
UPS_ASSERT_OFFSET(struct update_device_idle, duration_ms, 16);
UPS_ASSERT_OFFSET(struct update_device_idle, reason, 32);
UPS_ASSERT_OFFSET(struct update_device_idle, calling_uid, 288);
UPS_ASSERT_OFFSET(struct update_device_idle_legacy, duration_ms, 8);
UPS_ASSERT_OFFSET(struct update_device_idle_legacy, reason, 24);
UPS_ASSERT_OFFSET(struct update_device_idle_legacy, calling_uid, 280);
UPS_ASSERT_OFFSET(struct bitmap_event, uid, 28);
UPS_ASSERT_OFFSET(struct bitmap_event, native_ptr, 32);
UPS_ASSERT_OFFSET(struct bitmap_event, activity_name, 40);
UPS_ASSERT_OFFSET(struct bind_service_locked, bind_flags, 512);
UPS_ASSERT_OFFSET(struct bind_service_locked, calling_package, 520);
UPS_ASSERT_OFFSET(struct component_enabled_setting, new_state, 256);
UPS_ASSERT_OFFSET(struct component_enabled_setting, calling_package_name, 260);
UPS_ASSERT_OFFSET(struct binder_transaction, code, 128);
UPS_ASSERT_OFFSET(struct binder_transaction, calling_uid, 136);
UPS_ASSERT_OFFSET(struct binder_transaction, timestamp_ns, 144);
UPS_ASSERT_OFFSET(struct accessibility_event, package_name, 12);
UPS_ASSERT_OFFSET(struct accessibility_event, permission_name, 140);
UPS_ASSERT_OFFSET(struct accessibility_event, uid, 268);
UPS_ASSERT_OFFSET(struct accessibility_event, code, 272);
UPS_ASSERT_OFFSET(struct start_activity_as_user, request_code, 136);
UPS_ASSERT_OFFSET(struct start_activity_as_user, validate_incoming_user, 148);
UPS_ASSERT_OFFSET(struct start_activity_as_user, x0, 152);

UPS_ASSERT_OFFSET(struct malware_signal, wm_bound_uid.bind_flags, 72);
UPS_ASSERT_OFFSET(struct malware_signal, component_enabled_setting, 81);
UPS_ASSERT_OFFSET(struct malware_signal, component_enabled_setting.new_state, 209);
UPS_ASSERT_OFFSET(struct malware_signal, component_enabled_setting.initialized, 277);

UPS_ASSERT_SIZE(struct ups_envelope, 40);
UPS_ASSERT_SIZE(struct ups_stack_hdr, 328);
UPS_ASSERT_SIZE(struct ups_kwalk_ent, 24);
UPS_ASSERT_SIZE(struct malware_signal, 278);
UPS_ASSERT_SIZE(struct rec_malware_signal, 320);
UPS_ASSERT_SIZE(struct rec_binder_start_activity, 48);
UPS_ASSERT_SIZE(struct call_result, 88);
UPS_ASSERT_SIZE(struct call_timestamp, 16);
UPS_ASSERT_SIZE(struct rec_call_detail, 128);
UPS_ASSERT_SIZE(struct rec_call_timestamp, 56);
UPS_ASSERT_SIZE(struct set_uid_temp_allowlist_state, 16);
UPS_ASSERT_SIZE(struct update_device_idle, 296);
UPS_ASSERT_SIZE(struct update_device_idle_legacy, 288);
UPS_ASSERT_SIZE(struct process_change, 264);
UPS_ASSERT_SIZE(struct bitmap_constructor_heap, 8);
UPS_ASSERT_SIZE(struct bitmap_event, 168);
UPS_ASSERT_SIZE(struct bitmap_key, 16);
UPS_ASSERT_SIZE(struct bind_service_locked, 648);
UPS_ASSERT_SIZE(struct component_enabled_setting, 388);
UPS_ASSERT_SIZE(struct binder_transaction, 152);
UPS_ASSERT_SIZE(struct binder_interface_key, 128);
UPS_ASSERT_SIZE(struct binder_codes, 80);
UPS_ASSERT_SIZE(struct accessibility_event, 280);
UPS_ASSERT_SIZE(struct start_activity_as_user, 160);
UPS_ASSERT_SIZE(struct rec_set_uid_temp_allowlist_state, 56);
UPS_ASSERT_SIZE(struct rec_update_device_idle, 336);
UPS_ASSERT_SIZE(struct rec_update_device_idle_legacy, 328);
UPS_ASSERT_SIZE(struct rec_process_change, 304);
UPS_ASSERT_SIZE(struct rec_bitmap_constructor_heap, 48);
UPS_ASSERT_SIZE(struct rec_bitmap_event, 208);
UPS_ASSERT_SIZE(struct rec_bind_service_locked, 688);
UPS_ASSERT_SIZE(struct rec_component_enabled_setting, 432);
UPS_ASSERT_SIZE(struct rec_binder_transaction, 192);
UPS_ASSERT_SIZE(struct rec_accessibility_event, 320);
UPS_ASSERT_SIZE(struct rec_start_activity_as_user, 200);
UPS_ASSERT_SIZE(struct ups_probe_counters, 48);
UPS_ASSERT_SIZE(struct ups_agg_key, 56);
UPS_ASSERT_SIZE(struct ups_agg_value, 32);
UPS_ASSERT_SIZE(struct ups_agg_entry_key, 16);
UPS_ASSERT_SIZE(struct ups_agg_entry, 32);
UPS_ASSERT_SIZE(struct ups_pending_stack, 8 + 16 * UPS_EXIT_DEPTH);
_Static_assert((UPS_EXIT_DEPTH & (UPS_EXIT_DEPTH - 1)) == 0, "UPS_EXIT_DEPTH: a power of two");
UPS_ASSERT_SIZE(struct ups_pending_call, 16);
UPS_ASSERT_SIZE(struct call_return, 32);
UPS_ASSERT_SIZE(struct rec_call_return, 72);
UPS_ASSERT_SIZE(struct call_unwound, 16 + 16 * UPS_UNWOUND_MAX);
UPS_ASSERT_SIZE(struct rec_call_unwound, 56 + 16 * UPS_UNWOUND_MAX);
_Static_assert(UPS_EXIT_DEPTH <= UPS_UNWOUND_MAX, "an unwound record holds a whole pending stack");
UPS_ASSERT_SIZE(struct ups_entry_key, 8);
UPS_ASSERT_SIZE(struct ups_prog_config, 76);
UPS_ASSERT_SIZE(struct ups_traffic_sock, 32);
UPS_ASSERT_SIZE(struct ups_traffic_key, 48);
UPS_ASSERT_SIZE(struct ups_traffic_value, 64);
UPS_ASSERT_SIZE(struct ups_traffic_host_key, 24);
UPS_ASSERT_SIZE(struct ups_traffic_host, UPS_TRAFFIC_HOST_LEN);
UPS_ASSERT_SIZE(struct call_args, 608);
UPS_ASSERT_SIZE(struct rec_call_args, 648);

#endif
