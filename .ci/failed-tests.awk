# Prints, for each test that failed in a `go test -v` log (subtests included), the last lines
# of its own output: -v interleaves parallel tests under "=== NAME" headers, and a failure's
# message may sit thousands of lines above the end. LINES: how many per test (default 40); TESTS:
# how many failed tests at most (default 10).
BEGIN { if (LINES == "") LINES = 40; if (TESTS == "") TESTS = 10 }
{ lines[NR] = $0 }
/^=== (RUN|NAME|CONT|PAUSE)[[:space:]]/ { current = $3; next }
/^[[:space:]]*--- (PASS|FAIL|SKIP): / {
	if ($2 == "FAIL:") { failed[$3] = 1; order[++nfailed] = $3 }
	current = ""
	next
}
current != "" { owner[NR] = current }
END {
	for (i = 1; i <= nfailed && shown < TESTS; i++) {
		name = order[i]; n = 0
		for (l = 1; l <= NR; l++) if (owner[l] == name) own[++n] = l
		if (n == 0) continue
		shown++
		printf "---- %s: the last %d of its %d lines\n", name, (n < LINES ? n : LINES), n
		for (k = (n > LINES ? n - LINES + 1 : 1); k <= n; k++) print lines[own[k]]
	}
}
