-- scripts/demo-wrap.sql - pg_temp.wrap(t, width): t with as many of its
-- spaces turned into line breaks as keep each line within width characters
-- (60: with the label of psql's expanded mode, 80 columns). It breaks at a
-- space only, never inside a word or a number; a word longer than width
-- stands alone on its line. Replacing each line break by a space gives t
-- back (a t with line breaks of its own keeps them; widths are counted in
-- characters, not terminal columns). For scripts/demo (test/demo checks
-- it); lives for the session.
CREATE FUNCTION pg_temp.wrap(t text, width int DEFAULT 60) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
	word text;
	line text;
	wrapped text := '';
BEGIN
	IF t IS NULL THEN
		RETURN NULL;
	END IF;
	FOREACH word IN ARRAY string_to_array(t, ' ') LOOP
		IF line IS NULL THEN
			line := word;
		ELSIF length(line) + 1 + length(word) <= width THEN
			line := line || ' ' || word;
		ELSE
			wrapped := wrapped || line || E'\n';
			line := word;
		END IF;
	END LOOP;
	RETURN wrapped || coalesce(line, '');
END
$$;
