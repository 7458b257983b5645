package tmux

import "time"

// parserState is where the reply parser stands in the control-mode stream.
type parserState int

const (
	stateIdle       parserState = iota // between replies: notifications
	stateReply                         // inside the reply to pending[0]
	stateAwaitCheck                    // reply closed; its sentinel is due
	stateCheck                         // inside the sentinel's reply
	stateForeign                       // inside a block that is not ours
	stateHunt                          // forged framing seen: find the sentinel
	stateHuntEnd                       // sentinel found: its guard line follows
)

// replyParser splits a control client's output into verified replies and
// notifications. Notifications that arrive while a reply awaits its
// sentinel are held: until the sentinel confirms the reply, they may be
// the reply's own text that followed a forged %end.
type replyParser struct {
	c       *controlClient
	state   parserState
	open    guard    // the guard of the block being read
	body    []string // lines of the block being read
	failed  bool     // the reply ended in %error
	held    []notification
	current *request
	// foreignThen is where a block that is not ours returns to: idle, or
	// awaiting the sentinel when a hook's block (an after-command hook
	// answers with flags 0) came between a reply and its sentinel.
	foreignThen parserState
	// out holds the decoded data of the last output event, reused for the
	// next: the event's receiver copies what it keeps.
	out []byte
	// panes interns pane ids, so that an output line costs no allocation.
	panes map[string]string
}

const (
	// maxInterned bounds the pane ids a parser remembers.
	maxInterned = 1024
	// maxKeptOut bounds the decoding memory a parser keeps between lines.
	maxKeptOut = 64 << 10
)

// paneID returns b as a string, the same string each time for one pane.
func (p *replyParser) paneID(b []byte) string {
	if id, ok := p.panes[string(b)]; ok {
		return id
	}
	if p.panes == nil || len(p.panes) >= maxInterned {
		p.panes = map[string]string{}
	}
	id := string(b)
	p.panes[id] = id
	return id
}

// line consumes one line of output.
func (p *replyParser) line(line []byte) {
	switch p.state {
	case stateReply, stateCheck, stateForeign:
		if p.state == stateForeign && p.foreignThen == stateAwaitCheck && string(line) == p.current.sentinel {
			// The sentinel ran inside what looked like a foreign block:
			// that block was forged by the reply's text.
			p.state = stateHuntEnd
			return
		}
		n := parseNotification(line)
		isEnd := n.kind == lineEnd || n.kind == lineError
		if isEnd && n.guard == p.open {
			p.closeBlock(n.kind == lineError)
			return
		}
		if isEnd && p.state == stateCheck && len(p.body) > 0 && p.body[len(p.body)-1] == p.current.sentinel {
			// Only the real sentinel prints the nonce, and its guard follows:
			// the block that seemed open began with a forged %begin.
			p.finish(errTainted)
			return
		}
		if p.state != stateForeign {
			p.body = append(p.body, string(line))
		}
	case stateHunt:
		if string(line) == p.current.sentinel {
			p.state = stateHuntEnd
		}
	case stateHuntEnd:
		p.finish(errTainted)
	default:
		p.outside(line)
	}
}

// outside handles a line read between blocks.
func (p *replyParser) outside(line []byte) {
	n := parseNotification(line)
	awaiting := p.state == stateAwaitCheck
	switch {
	case n.kind == lineBegin && n.guard.flags != "1":
		p.open, p.state, p.foreignThen = n.guard, stateForeign, stateIdle
		if awaiting {
			p.foreignThen = stateAwaitCheck
		}
	case n.kind == lineBegin && awaiting:
		p.open, p.body, p.state = n.guard, nil, stateCheck
	case n.kind == lineBegin:
		p.c.mu.Lock()
		if len(p.c.pending) > 0 {
			p.current = p.c.pending[0]
			p.current.started = true
		}
		p.c.mu.Unlock()
		if p.current == nil {
			p.open, p.state, p.foreignThen = n.guard, stateForeign, stateIdle
			return
		}
		p.open, p.body, p.failed, p.state = n.guard, nil, false, stateReply
	case awaiting && (n.kind == lineEnd || n.kind == lineError || len(line) == 0 || line[0] != '%'):
		// Only the reply's own text can put a guard or a bare line here.
		p.held = nil
		p.state = stateHunt
	case awaiting:
		// Kept past this line, whose memory the reader reuses.
		p.held = append(p.held, n.clone())
	default:
		p.dispatch(n)
	}
}

// closeBlock handles the guard that ends the current block.
func (p *replyParser) closeBlock(failed bool) {
	switch p.state {
	case stateForeign:
		p.state = p.foreignThen
	case stateReply:
		p.current.body, p.current.failed = p.body, failed
		if len(p.current.args) > 0 && p.current.args[0] == "refresh-client" {
			p.current.body = p.flowNotices(p.body)
		}
		p.body, p.state = nil, stateAwaitCheck
	case stateCheck:
		ok := !failed && len(p.body) == 1 && p.body[0] == p.current.sentinel
		switch {
		case ok:
			held := p.held
			p.finish(nil)
			for _, n := range held {
				p.dispatch(n)
			}
		case len(p.body) > 0 && p.body[len(p.body)-1] == p.current.sentinel:
			// The real sentinel ended this block: back in step.
			p.finish(errTainted)
		default:
			p.state = stateHunt
		}
	}
}

// flowNotices takes out of a refresh-client reply's body the %pause and
// %continue lines tmux wrote as the command paused or continued a pane of
// the client that runs it, to be dispatched in their place, once the
// reply is verified (held); it returns the rest. Such a reply holds no
// other text, so none can pass for them.
func (p *replyParser) flowNotices(body []string) []string {
	rest := body[:0:0]
	for _, line := range body {
		if n := parseNotification([]byte(line)); n.kind == linePause || n.kind == lineContinue {
			p.held = append(p.held, n)
			continue
		}
		rest = append(rest, line)
	}
	return rest
}

// finish completes the current request and returns to idle.
func (p *replyParser) finish(err error) {
	r := p.current
	p.c.mu.Lock()
	if len(p.c.pending) > 0 && p.c.pending[0] == r {
		p.c.pending = p.c.pending[1:]
	}
	p.c.mu.Unlock()
	if err != nil {
		r.body, r.failed, r.err = nil, false, &CommandError{Args: r.args, Message: err.Error(), Err: err}
	}
	close(r.done)
	p.current, p.body, p.held, p.state = nil, nil, nil, stateIdle
}

// dispatch acts on a notification.
func (p *replyParser) dispatch(n notification) {
	c := p.c
	switch n.kind {
	case lineOutput:
		if c.onEvent != nil {
			p.out = appendUnescaped(p.out[:0], n.data)
			c.onEvent(OutputEvent{Pane: p.paneID(n.pane), Data: p.out, Age: time.Duration(n.age) * time.Millisecond})
			if cap(p.out) > maxKeptOut {
				p.out = nil // a huge line's memory is not kept for the next
			}
		}
	case linePause:
		if c.onEvent != nil {
			c.onEvent(OutputEvent{Pane: p.paneID(n.pane), Paused: true})
		}
	case lineContinue:
		if c.onEvent != nil {
			c.onEvent(OutputEvent{Pane: p.paneID(n.pane), Continued: true})
		}
	case lineSessionChanged:
		c.mu.Lock()
		if len(n.fields) > 0 {
			c.session = n.fields[0]
		}
		c.mu.Unlock()
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
	case lineLayout:
		if c.onEvent != nil {
			c.onEvent(OutputEvent{Layout: true})
		}
	case lineExit:
		c.mu.Lock()
		c.exitNote = string(n.data)
		c.exited = true
		c.mu.Unlock()
	}
}
