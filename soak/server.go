package main

import (
	"context"
	"time"

	"github.com/tmcp/tmcp/internal/tmuxserver"
)

const (
	// sessionName, serverWidth and serverHeight describe the private
	// server's one session; its windows take that size.
	sessionName  = "soak"
	serverWidth  = 200
	serverHeight = 50
	// prompt is the pane shells' PS1: distinctive, so a prompt glued to a
	// line of output can be told from the output.
	prompt = "soak$ "
	// setupTimeout bounds each tmux command the soak runs itself.
	setupTimeout = 10 * time.Second
)

// startServer starts the soak's private tmux server (see tmuxserver) in a new
// temporary directory, its pane shells reading no ENV file and prompting
// with prompt. Unless it fails, the caller must call Close.
func startServer(ctx context.Context) (*tmuxserver.Server, error) {
	return tmuxserver.Open(ctx, tmuxserver.Options{Session: sessionName, Width: serverWidth, Height: serverHeight,
		Timeout: setupTimeout, Env: []string{"PS1=" + prompt}, Unset: []string{"ENV"}})
}
