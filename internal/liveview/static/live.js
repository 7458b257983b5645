// The live view's script: it asks for the token, keeps it in memory only
// and sends it in an Authorization header, lists the panes, and follows
// one pane's server-sent events with fetch (EventSource cannot send a
// header). It reads; it never sends anything to a pane.
'use strict';
(() => {
  const maxLines = 2000;   // lines kept on the page, as the server bounds an event
  const maxCalls = 200;    // calls listed
  const retryMs = 1000;    // wait before following a pane again after a drop
  const $ = (id) => document.getElementById(id);

  let token = '';          // never stored, never put in a URL
  let following = null;    // {id, abort} of the pane followed
  let lines = [];
  let partial = '';
  let renderDue = false;

  const setStatus = (text) => { $('status').textContent = text; };

  class Refused extends Error {}

  async function get(path, signal) {
    const res = await fetch(path, { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', signal });
    if (res.status === 401) throw new Refused('the token was refused');
    if (!res.ok) throw new Error(path + ': ' + res.status + ' ' + (await res.text()).trim());
    return res;
  }

  function askToken(message) {
    token = '';
    stopFollowing();
    $('view').hidden = true;
    $('forget').hidden = true;
    $('login').hidden = false;
    $('login-error').textContent = message || '';
    setStatus('not connected');
    $('token').focus();
  }

  async function connect() {
    token = $('token').value.trim();
    $('token').value = '';
    if (!token) return;
    try {
      await loadPanes();
    } catch (e) {
      askToken(e.message);
      return;
    }
    $('login').hidden = true;
    $('view').hidden = false;
    $('forget').hidden = false;
    setStatus('connected');
  }

  async function loadPanes() {
    const { panes } = await (await get('/live/api/panes')).json();
    const list = $('panes');
    list.replaceChildren();
    let session = null;
    for (const p of panes) {
      if (p.session !== session) {
        session = p.session;
        const h = document.createElement('h3');
        h.textContent = session;
        list.append(h);
      }
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.pane = p.id;
      b.textContent = `${p.windowIndex}.${p.index} ${p.id} ${p.command}${p.dead ? ' (dead)' : ''}`;
      b.title = `${p.windowName} ${p.width}x${p.height} ${p.title}`;
      if (following && following.id === p.id) b.setAttribute('aria-current', 'true');
      b.addEventListener('click', () => follow(p.id));
      list.append(b);
    }
  }

  function stopFollowing() {
    if (following) following.abort.abort();
    following = null;
  }

  function follow(id) {
    stopFollowing();
    const f = { id, abort: new AbortController() };
    following = f;
    for (const b of $('panes').querySelectorAll('button')) {
      if (b.dataset.pane === id) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
    $('pane-title').textContent = 'Pane ' + id;
    $('calls').replaceChildren();
    lines = [];
    partial = '';
    render();
    run(f);
  }

  // run follows f's pane until it is no longer the one followed, coming
  // back after a dropped connection.
  async function run(f) {
    while (following === f) {
      try {
        setStatus('following ' + f.id);
        const res = await get('/live/api/events?pane=' + encodeURIComponent(f.id), f.abort.signal);
        const ended = await readEvents(res.body, f);
        if (ended) return;
      } catch (e) {
        if (following !== f) return;
        if (e instanceof Refused) { askToken(e.message); return; }
        setStatus(f.id + ': ' + e.message + '; trying again');
      }
      await new Promise((r) => setTimeout(r, retryMs));
    }
  }

  // readEvents reads a server-sent event stream; it returns true when the
  // pane's stream ended for good.
  async function readEvents(body, f) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done || following !== f) return false;
      buf += value;
      let end;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let name = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) name = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5);
        }
        if (data && handle(name, JSON.parse(data), f)) return true;
      }
    }
  }

  // handle applies one event; it returns true for the stream's end.
  function handle(name, ev, f) {
    switch (name) {
      case 'screen':
        lines = ev.lines || [];
        partial = ev.partial || '';
        $('screen').classList.toggle('alt', ev.alt);
        $('pane-title').textContent = `Pane ${f.id} (${ev.width}x${ev.height}${ev.alt ? ', full-screen program' : ''})`;
        break;
      case 'text':
        if (ev.lines) lines.push(...ev.lines);
        if (lines.length > maxLines) lines.splice(0, lines.length - maxLines);
        partial = ev.partial || '';
        break;
      case 'calls':
        for (const c of ev) addCall(c);
        return false;
      case 'ended':
        setStatus(f.id + ' ended: ' + (ev.reason || 'the stream ended'));
        return true;
      default:
        return false;
    }
    scheduleRender();
    return false;
  }

  function scheduleRender() {
    if (renderDue) return;
    renderDue = true;
    setTimeout(render, 20);
  }

  function render() {
    renderDue = false;
    const pre = $('screen');
    const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    pre.textContent = lines.length ? lines.join('\n') + '\n' + partial : partial;
    if (atBottom) pre.scrollTop = pre.scrollHeight;
  }

  function addCall(c) {
    const li = document.createElement('li');
    const when = document.createElement('div');
    when.className = 'when';
    when.textContent = `${(c.time || '').replace('T', ' ').slice(0, 23)} · ${c.durationMs} ms${c.session ? ' · session ' + c.session.slice(0, 8) : ''}`;
    const what = document.createElement('div');
    const tool = document.createElement('span');
    tool.className = 'tool';
    tool.textContent = c.tool;
    const outcome = document.createElement('span');
    outcome.textContent = ' → ' + c.outcome;
    if (c.outcome === 'error') outcome.className = 'error';
    what.append(tool, outcome);
    li.append(what, when);
    if (c.arguments) {
      const args = document.createElement('div');
      args.className = 'args';
      args.textContent = JSON.stringify(c.arguments);
      li.append(args);
    }
    if (c.error) {
      const err = document.createElement('div');
      err.className = 'error';
      err.textContent = c.error;
      li.append(err);
    }
    const list = $('calls');
    list.prepend(li);
    while (list.children.length > maxCalls) list.lastChild.remove();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('connect').addEventListener('click', connect);
    $('token').addEventListener('keydown', (e) => { if (e.key === 'Enter') connect(); });
    $('forget').addEventListener('click', () => askToken(''));
    $('refresh').addEventListener('click', () => loadPanes().catch((e) => {
      if (e instanceof Refused) askToken(e.message); else setStatus(e.message);
    }));
    $('token').focus();
  });
})();
