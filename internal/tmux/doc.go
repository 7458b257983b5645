// Package tmux is tmcp's connection to one tmux server.
//
// Commands go through a control-mode client (tmux -C) kept open while a
// session exists to attach to, and otherwise run as separate, bounded tmux
// processes; every process starts through one Launcher. Each command has a
// deadline, arguments are quoted so any byte string arrives as exactly one
// argument, and every reply read from a control client is verified, so
// text inside a reply (a pane's captured lines) cannot forge its framing.
// Pane output reaches callers of Watch from %output notifications, on a
// client attached to the pane's session.
package tmux
