// Package wait holds the waiting tools' machinery: running a command in a
// pane's shell and collecting exactly its output and exit status, waiting
// for a pattern in a pane's output, reading only what is new since a
// cursor, and waiting on tmux channels. Every wait reads the pane's byte
// stream (package pane), never a polled screen, and is bounded by a
// deadline.
package wait
