#!/usr/bin/env bash
# Shows tmcp at work: a scripted agent session against a private tmux
# server, each call printed with its reply and latency.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
exec go run ./cmd/tmcp -demo
