# Fails (exit 1) when a CREATE VIEW or CREATE FUNCTION of an install script
# spans more than 100 lines, naming it. A statement ends at a ';' that ends
# a line outside comments and dollar quotes, or at the END; of a BEGIN
# ATOMIC body. Run by make scripts-check.
{
	line = tolower($0)
	sub(/--.*/, "", line)
}
!start && line ~ /^[ \t]*create[ \t]+(or[ \t]+replace[ \t]+)?(view|function)[ \t]/ {
	name = $0
	sub(/^[ \t]*[A-Za-z]+[ \t]+([A-Za-z]+[ \t]+[A-Za-z]+[ \t]+)?[A-Za-z]+[ \t]+/, "", name)
	sub(/[ \t(].*/, "", name)
	start = FNR
	atomic = 0
	dollar = 0
}
start {
	if (line ~ /begin[ \t]+atomic/)
		atomic = 1
	if (gsub(/\$\$/, "&", line) % 2)
		dollar = !dollar
	if (!dollar && (atomic ? line ~ /^[ \t]*end[ \t]*;[ \t]*$/ : line ~ /;[ \t]*$/)) {
		if (FNR - start + 1 > 100) {
			print FILENAME ": " name " takes " FNR - start + 1 " lines (at most 100)"
			bad = 1
		}
		start = 0
	}
}
END { exit bad }
