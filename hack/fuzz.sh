#!/usr/bin/env bash
# Fuzzes every Go fuzz target (func FuzzXxx in a _test.go file) for FUZZTIME each, one after
# the other (a 2-core machine gains nothing from more). `go test` already runs each target's
# seeds and testdata/fuzz/<target>/ on every `make test`; a crasher found here is written
# there by the fuzzer: fix what it found and commit the file, and it stays a seed.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-30s}"
GO="${GO:-go}"

failed=()
count=0
while IFS=: read -r file name; do
	dir="./$(dirname "$file")"
	count=$((count + 1))
	echo "== ${dir} ${name} (${FUZZTIME})"
	out=$(mktemp)
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$dir" 2>&1 | tee "$out"; then
		# Go's fuzz coordinator can miss its own deadline on a loaded machine ("context
		# deadline exceeded", no input written): that is no crasher.
		if grep -q 'context deadline exceeded' "$out" && ! grep -q 'Failing input written to' "$out"; then
			echo "note: ${name} overran its fuzz time (machine busy); no crasher"
		else
			failed+=("${dir} ${name}")
		fi
	fi
	rm -f "$out"
done < <(grep -rHoE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' apis cmd internal test | sed 's/:func /:/' | sort -u)

echo "fuzzed ${count} targets for ${FUZZTIME} each"
if ((${#failed[@]} > 0)); then
	printf 'crasher found (kept under testdata/fuzz/, commit it once fixed): %s\n' "${failed[@]}"
	exit 1
fi
