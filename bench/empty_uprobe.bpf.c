// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* empty_uprobe — programs that do nothing: the cost of a uprobe (and of a
 * uretprobe) hit with a BPF program attached is the kernel's alone. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("uprobe")
int empty_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int empty_return(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
