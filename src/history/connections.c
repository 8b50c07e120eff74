/*
 * connections.c
 *		Client connections since this shared memory was initialized
 *		(shared_preload_libraries mode): one counter, raised by each
 *		connection that authenticated.
 */
#include "server/compat.h"

#include "port/atomics.h"
#include "storage/shmem.h"

#include "history/connections.h"
#include "server/shmem.h"

/*
 * libpq/auth.h's hook, declared here: that header pulls in libpq-be.h,
 * which needs the GSSAPI headers where the server was built with them.
 */
struct Port;
typedef void (*ClientAuthentication_hook_type) (struct Port *, int);
extern PGDLLIMPORT ClientAuthentication_hook_type ClientAuthentication_hook;

static pg_atomic_uint64 *counter = NULL;
static ClientAuthentication_hook_type prev_client_auth_hook = NULL;

static Size
counter_size(void)
{
	return sizeof(pg_atomic_uint64);
}

static void
counter_init(void *part)
{
	pg_atomic_init_u64(part, 0);
}

static void
counter_attached(void *part, bool found)
{
	counter = part;
}

static const procmem_shmem_part counter_part = {
	"pg_procmem connections", counter_size, 0, counter_init, counter_attached
};

static void
count_connection(struct Port *port, int status)
{
	if (prev_client_auth_hook)
		prev_client_auth_hook(port, status);
	if (status == STATUS_OK && counter != NULL)
		pg_atomic_fetch_add_u64(counter, 1);
}

void
procmem_connections_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	procmem_shmem_register(&counter_part);
	prev_client_auth_hook = ClientAuthentication_hook;
	ClientAuthentication_hook = count_connection;
}

int64
procmem_connections(void)
{
	return counter ? (int64) pg_atomic_read_u64(counter) : -1;
}
