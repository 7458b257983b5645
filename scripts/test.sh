#!/usr/bin/env bash
# Runs every check a change must pass: formatting, go vet, and the whole
# test suite with the race detector, against real tmux.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
go test -race -count=1 -timeout 10m ./...
# Tests that time events to the millisecond, run without the race
# detector's slowdown (they skip themselves in the run above), one package
# at a time so that they do not load the machine for each other.
go test -count=1 -p 1 -timeout 5m -run 'NeverMisses' ./cmd/tmcp ./internal/wait
# The soak again, where its process's resident memory is tmcp's own.
go test -count=1 -timeout 5m ./soak
