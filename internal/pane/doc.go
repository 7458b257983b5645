// Package pane holds the output of tmux panes as byte streams with absolute
// offsets, and turns those bytes into the text lines a reader of the
// terminal would see.
//
// A [Stream] keeps the most recent output of one pane in a [Ring] and wakes
// any number of waiters when something changes. A [Cursor] names a position
// in a stream so that a later call can read only what is new. A [Decoder]
// strips escape sequences from the bytes, applies carriage returns and
// backspaces, and reports completed lines, OSC markers and switches to and
// from the alternate screen, each with the stream offset at which it ended.
package pane
