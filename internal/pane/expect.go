package pane

// ShellStart is a shell tmcp started in a pane with its integration
// already loaded: its process, its name and the nonce tmcp handed it.
type ShellStart struct {
	PID         int
	Name, Nonce string
}

// maxExpected bounds the shell starts a hub remembers: one per pane tmcp
// made, kept until the pane's id is reused or the bound is reached.
const maxExpected = 4096

// ExpectShell notes that tmcp started sh in a pane: the pane's stream
// believes the marks that carry its nonce from its first byte. The shell
// names itself in the pane's option too once its integration runs, but a
// stream, or a run, may come first.
func (h *Hub) ExpectShell(paneID string, sh ShellStart) {
	h.mu.Lock()
	if h.expected == nil || len(h.expected) >= maxExpected {
		h.expected = map[string]ShellStart{}
	}
	h.expected[paneID] = sh
	w := h.panes[paneID]
	h.mu.Unlock()
	if w != nil && w.pid == sh.PID {
		w.stream.SetShellNonce(sh.Nonce)
	}
}

// ExpectedShell returns the shell tmcp started in a pane, if it noted
// one (see ExpectShell). The pane may run another process by now: compare
// the process id.
func (h *Hub) ExpectedShell(paneID string) (ShellStart, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sh, ok := h.expected[paneID]
	return sh, ok
}
