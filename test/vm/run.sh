#!/bin/sh
# The tests inside the guest (scripts/vm boots it; its init runs this from
# the payload disk): pg_procmem as built on the host installed into the
# guest's PostgreSQL 15 (its root disk is a throwaway snapshot), a cluster
# on the scratch disk started in a memory cgroup of its own, then a named
# pgTAP subset and test/vm/guest.py. TAP on the console; exit status 0 only
# if every part passed.
P=/payload
export PG_BIN=/usr/lib/postgresql/15/bin CLUSTER_DIR=/scratch PGHOST=/run/postgresql PGUSER=postgres \
	PGDATABASE=postgres PAGER=cat PSQL=psql
export PATH=$PG_BIN:$PATH
export VM_CGROUP=/sys/fs/cgroup/postgres
export SERVER_OPTS="-c listen_addresses= -c unix_socket_directories=/run/postgresql"
cp -a $P/root/. / || exit 1
echo "# guest: Linux $(uname -r), /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)," \
	"$(nproc) CPUs, $(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MB," \
	"$(postgres --version)"

# the server's own cgroup, as a container or a systemd slice gives it, with
# a limit (1.5 GB of the guest's 2): guest.py moves it, and takes it away
echo "+memory" >/sys/fs/cgroup/cgroup.subtree_control && mkdir -p $VM_CGROUP &&
	echo $((1536 << 20)) >$VM_CGROUP/memory.max || exit 1
mkdir -p /run/postgresql && chown postgres: /run/postgresql /scratch /scratch/data || exit 1
cat >>/scratch/data/postgresql.conf <<CONF
shared_preload_libraries = 'pg_procmem'
log_line_prefix = '%m [%p] '
autovacuum = off
fsync = off
max_connections = 100
CONF
# the interval where the history's tests set it (ALTER SYSTEM): a command line would hide it
echo "pg_procmem.sample_interval = '1s'" >>/scratch/data/postgresql.auto.conf
sh -c "echo \$\$ >$VM_CGROUP/cgroup.procs && exec runuser -u postgres -- $PG_BIN/pg_ctl -D /scratch/data \
	-l /scratch/server.log -w -t 300 -o '$SERVER_OPTS' start" >/dev/null ||
	{ echo "vm: guest: the server did not start:"; tail -20 /scratch/server.log; exit 1; }
rc=0
cd $P/test/pgtap && pg_prove -v figures.sql accounting_cgroup.sql system.sql meminfo.sql breakdown.sql dsm.sql || rc=1
cd $P && python3 test/vm/guest.py || rc=1
[ $rc = 0 ] || { echo "# the server's log, its last lines:"; tail -30 /scratch/server.log | sed 's/^/# /'; }
runuser -u postgres -- $PG_BIN/pg_ctl -D /scratch/data -m fast -w stop >/dev/null 2>&1
exit $rc
