#!/usr/bin/env bash
# Installs what tmcp needs beyond Go: tmux (Debian package "tmux").
# Safe to run again: it does nothing when tmux is already there.
set -euo pipefail

if command -v tmux >/dev/null 2>&1; then
  exit 0
fi
echo "tmux is missing: installing the Debian package tmux" >&2
if [ "$(id -u)" -eq 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
elif command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null
else
  echo "cannot install tmux without root: run 'apt-get install tmux' as root" >&2
  exit 1
fi
tmux -V
