/*
 * pagemap_abi.h
 *		The kernel's pagemap and maps ioctls (no PostgreSQL headers).
 */
#ifndef PROCMEM_PAGEMAP_ABI_H
#define PROCMEM_PAGEMAP_ABI_H

#include <stdint.h>
#include <sys/ioctl.h>

/*
 * Kernel ABI (include/uapi/linux/fs.h), spelled out here because the build
 * machine's headers may predate the kernel the server runs on.
 */
struct pm_page_region
{
	uint64_t	start;
	uint64_t	end;
	uint64_t	categories;
};

struct pm_scan_arg_abi
{
	uint64_t	size;
	uint64_t	flags;
	uint64_t	start;
	uint64_t	end;
	uint64_t	walk_end;
	uint64_t	vec;
	uint64_t	vec_len;
	uint64_t	max_pages;
	uint64_t	category_inverted;
	uint64_t	category_mask;
	uint64_t	category_anyof_mask;
	uint64_t	return_mask;
};

#define PM_IOCTL_PAGEMAP_SCAN	_IOWR('f', 16, struct pm_scan_arg_abi)
#define PM_PAGE_IS_FILE			(1 << 2)
#define PM_PAGE_IS_PRESENT		(1 << 3)
#define PM_PAGE_IS_SWAPPED		(1 << 4)
#define PM_PAGE_IS_PFNZERO		(1 << 5)
#define PM_PAGE_IS_HUGE			(1 << 6)	/* a PMD-mapped THP, or hugetlb */

struct procmap_query_abi
{
	uint64_t	size;
	uint64_t	query_flags;
	uint64_t	query_addr;
	uint64_t	vma_start;
	uint64_t	vma_end;
	uint64_t	vma_flags;
	uint64_t	vma_page_size;
	uint64_t	vma_offset;
	uint64_t	inode;
	uint32_t	dev_major;
	uint32_t	dev_minor;
	uint32_t	vma_name_size;
	uint32_t	build_id_size;
	uint64_t	vma_name_addr;
	uint64_t	build_id_addr;
};

#define PM_IOCTL_PROCMAP_QUERY	_IOWR('f', 17, struct procmap_query_abi)
#define PM_QUERY_VMA_READABLE	0x01
#define PM_QUERY_VMA_WRITABLE	0x02
#define PM_QUERY_VMA_EXECUTABLE	0x04
#define PM_QUERY_VMA_SHARED		0x08
#define PM_QUERY_COVERING_OR_NEXT_VMA 0x10
#define PM_QUERY_FILE_BACKED_VMA	0x20

#endif							/* PROCMEM_PAGEMAP_ABI_H */
