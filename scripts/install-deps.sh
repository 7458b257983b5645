#!/usr/bin/env bash
# Installs what tmcp needs beyond Go, as Debian packages: tmux, and the shells
# the end-to-end tests drive (zsh, fish, mksh; bash and dash are already there);
# and, when npm is there, the official TypeScript MCP client the HTTP test
# drives tmcp with, into that test's own directory; and OpenSSH (client and
# server), which the remote-host tests run a private sshd with; asciinema,
# whose `asciinema cat` the recording test replays a recording with; and
# Chromium, the headless browser the live view test drives.
# Safe to run again: it installs only what is missing, with at most one
# apt-get update, and prints nothing when all is there.
set -euo pipefail

# command:package pairs; the command name is what the tests look for on PATH.
wanted="tmux:tmux zsh:zsh fish:fish mksh:mksh ssh:openssh-client /usr/sbin/sshd:openssh-server ssh-keygen:openssh-client asciinema:asciinema chromium:chromium"

missing=()
for pair in $wanted; do
  if ! command -v "${pair%%:*}" >/dev/null 2>&1; then
    case " ${missing[*]:-} " in
      *" ${pair#*:} "*) ;;
      *) missing+=("${pair#*:}") ;;
    esac
  fi
done
tsclient="$(cd "$(dirname "$0")/.." && pwd)/cmd/tmcp/testdata/tsclient"
install_tsclient() {
  if command -v npm >/dev/null 2>&1 && [ ! -d "$tsclient/node_modules/@modelcontextprotocol/sdk" ]; then
    echo "installing the TypeScript MCP client (npm ci) in $tsclient" >&2
    npm ci --prefix "$tsclient" --no-audit --no-fund --silent
  fi
}

if [ "${#missing[@]}" -eq 0 ]; then
  install_tsclient
  exit 0
fi

echo "installing the Debian packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "cannot install without root: run 'apt-get install ${missing[*]}' as root" >&2
  exit 1
fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
tmux -V
install_tsclient
