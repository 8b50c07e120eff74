/*
 * kernel.h
 *		The kernel's own memory for one process, which no /proc file
 *		attributes to it (no PostgreSQL headers).
 *
 * When a process exits the kernel frees, besides its pages and page tables,
 * its kernel stack, the top of its page table (the PGD, not in VmPTE) and
 * its slab objects: the task, the mm and the structures every process has,
 * a vm_area_struct per mapping with the anon_vma and its chains for each
 * mapping that holds anonymous pages, and a struct file per file it opened.
 * (It frees the mapping tree's maple nodes too, but the memory cgroup, the
 * measure overhead is held to, is not charged for them: not counted.) Each
 * is counted from this process's own counts, times the size of the object
 * in the running kernel where it can be read (/sys/kernel/slab is
 * root-only) or the documented fallback.
 */
#ifndef PROCMEM_KERNEL_H
#define PROCMEM_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

/* The slab caches a process draws on */
typedef enum kernel_cache
{
	KC_TASK = 0,				/* task_struct, one per thread */
	KC_PID,						/* pid, one per thread */
	KC_MM,						/* mm_struct */
	KC_SIGNAL,					/* signal_cache */
	KC_SIGHAND,					/* sighand_cache */
	KC_FILES,					/* files_cache: the fd table */
	KC_FS,						/* fs_cache */
	KC_CRED,					/* cred_jar */
	KC_VMA,						/* vm_area_struct, one per mapping */
	KC_ANON_VMA,				/* anon_vma, one per mapping with anonymous pages */
	KC_ANON_VMA_CHAIN,			/* anon_vma_chain, one per such mapping and ancestor */
	KC_FILP,					/* filp: struct file, one per file opened */
	KC_NCACHES
} kernel_cache;

/* What one object of each cache costs, and the per-thread and PGD sizes */
typedef struct kernel_sizes
{
	int64_t		thread_stack;	/* THREAD_SIZE */
	int64_t		pgd;			/* 4 kB, 8 kB with page-table isolation */
	int64_t		object[KC_NCACHES];	/* slab_size + the memcg's 8 bytes */
	unsigned	from_kernel;	/* bit per cache whose size was read */
	bool		stack_from_kernel;	/* thread_stack from KernelStack/threads */
} kernel_sizes;

/* One process's counts */
typedef struct kernel_counts
{
	int64_t		threads;		/* status Threads */
	int64_t		mappings;		/* every mapping */
	int64_t		anon_mappings;	/* mappings holding anonymous pages */
	int64_t		ancestors;		/* 1 for a child of the postmaster, 0 for it */
	int64_t		files;			/* open files not shared with the postmaster
								 * (a socket's inode and sock are not: telling
								 * sockets apart costs a readlink per file) */
} kernel_counts;

/*
 * The sizes in the running kernel, read once per process lifetime (they do
 * not change while the machine runs).
 */
extern const kernel_sizes *kernel_sizes_get(void);

/* Reads them now: the unit tests, and kernel_sizes_get() the first time. */
extern void kernel_sizes_read(kernel_sizes *ks);

/* The sizes of the fallback table alone, as an unprivileged server gets them. */
extern void kernel_sizes_fallback(kernel_sizes *ks);

/*
 * THREAD_SIZE from the host's KernelStack bytes and thread count: the power
 * of two nearest the mean (stacks of exiting threads and the idle tasks'
 * make the mean a little more). 0 when either is unknown, or the result
 * is no THREAD_SIZE Linux uses (8 to 64 kB): the 16 kB fallback then.
 */
extern int64_t kernel_thread_stack(int64_t kernel_stack, int64_t threads);

/* THREAD_SIZE where the host does not say: x86_64 and arm64 without KASAN */
#define KERNEL_FALLBACK_STACK INT64_C(16384)

/* Bytes of kernel memory a process with these counts holds; -1 if unknown. */
extern int64_t kernel_memory(const kernel_sizes *ks, const kernel_counts *c);

#endif							/* PROCMEM_KERNEL_H */
