#!/usr/bin/env bash
# Fails when git tracks a file that does not belong in source control: one larger than 1 MiB,
# a compiled program (ELF, Mach-O, PE, or a Go test binary), or an executable that is not a
# script (executable bit without a #! line). Built programs go to .gitignore'd paths; results
# files under benchmarks/ are text and stay small.
# Usage: scripts/check-tracked-files.sh [repository directory, default: the current one]
set -euo pipefail
cd "${1:-.}"

limit=$((1024 * 1024))
problems=0
report() {
	echo "tracked file $1: $2" >&2
	problems=$((problems + 1))
}

while IFS= read -r -d '' entry; do
	mode=${entry%% *}
	file=${entry#*$'\t'}
	[ -f "$file" ] || continue # deleted in the work tree: git status shows it
	size=$(stat -c %s -- "$file")
	if [ "$size" -gt "$limit" ]; then
		report "$file" "$size bytes, over the 1 MiB limit"
	fi
	magic=$(head -c 4 -- "$file" | od -An -tx1 | tr -d ' \n')
	case "$magic" in
	7f454c46 | cffaedfe | cefaedfe | feedfacf | feedface | 4d5a*)
		report "$file" "a compiled program (magic bytes $magic)"
		continue
		;;
	esac
	if [ "$mode" = 100755 ] && [ "$(head -c 2 -- "$file")" != '#!' ]; then
		report "$file" "executable but not a script (no #! line)"
	fi
done < <(git ls-files -s -z)

if [ "$problems" -gt 0 ]; then
	echo "$problems tracked file(s) do not belong in git: remove them (git rm --cached) and ignore where they are built" >&2
	exit 1
fi
echo "tracked files: none over 1 MiB, no compiled programs, every executable a script"
