-- Helpers the pgTAP files share (\ir from each, inside its transaction).

-- A libpq connection string to this server, for dblink.
CREATE FUNCTION pg_temp.connstr() RETURNS text LANGUAGE sql AS $$
	SELECT format('host=%s port=%s dbname=%s user=%s',
		split_part(current_setting('unix_socket_directories'), ',', 1),
		current_setting('port'), current_database(), current_user) $$;

-- a within tolerance of b: a fraction of b plus a floor in bytes.
CREATE FUNCTION pg_temp.near(a bigint, b bigint, frac float8, floor_bytes bigint)
RETURNS boolean LANGUAGE sql AS $$ SELECT abs(a - b) <= frac * b + floor_bytes $$;

-- A /proc/meminfo field, read independently: bytes for "kB" fields, else the count.
CREATE FUNCTION pg_temp.meminfo(k text) RETURNS bigint LANGUAGE sql AS $$
	SELECT m[1]::bigint * CASE WHEN m[2] IS NULL THEN 1 ELSE 1024 END
	FROM regexp_match(pg_read_file('/proc/meminfo'), '(?:^|\n)' || k || ':\s+(\d+)( kB)?') AS m $$;
