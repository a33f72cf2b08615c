// web/app.js: the viewer page: the session list (with the operator key;
// state, age, usage and a thumbnail of each session, refreshed live) and
// sharing links, or one session live: fit to the window, take/release
// control, mouse and keyboard capture while in control (paste, copy, touch,
// fullscreen and the key row: input.js), a status line, and after a dropped
// socket a visible "reconnecting" and control taken again if nobody else
// took it meanwhile.
'use strict';

const $ = (id) => document.getElementById(id);
const KEY_STORE = 'vitrine-api-key';

function fragment() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { session: p.get('s'), replay: p.get('r'), token: p.get('t') };
}

function apiKey() { return sessionStorage.getItem(KEY_STORE) || ''; }

async function api(method, path, body) {
  const r = await fetch(path, {
    method,
    headers: { Authorization: 'Bearer ' + apiKey(), 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error((j.error && j.error.code + ': ' + j.error.message) || 'HTTP ' + r.status);
  return j;
}

// ---- the session list -------------------------------------------------
// Refreshed every LIST_REFRESH_MS in place (rows keyed by session id, so a
// row's buttons and thumbnail survive a refresh); a running session's
// thumbnail comes from GET .../thumbnail, which is not the agent's use of
// the session (no usage, no idle-timeout reset), at most one in flight each.
const LIST_REFRESH_MS = 2000;
const THUMB_REFRESH_MS = 4000;
let listTimer = null;
const rows = new Map(); // id -> {tr, cells, img, thumbAt, thumbBusy, url}

function ago(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
}

// What the status cell says: the state, and why it is not simply ready.
function statusText(s) {
  let t = s.status;
  if (s.paused) t += ' (' + s.paused + ')';
  if (s.busy) t += ', ' + s.busy;
  // A start under way says its phase (once over, boot keeps the finished ones).
  if (s.boot && s.boot.phase && s.boot.phase !== 'ready' && s.boot.phase !== 'failed') t += ': ' + s.boot.phase;
  if (s.error) t += ': ' + s.error;
  return t;
}

function usageText(u) {
  if (!u) return '';
  return ago(u.seconds_running * 1000) + ' running, ' + u.vcpu_seconds.toFixed(0) + ' vCPU-s, ' +
    u.memory_gib_seconds.toFixed(0) + ' GiB-s, ' + u.actions + ' actions, ' + u.screenshots +
    ' screenshots, ' + u.commands + ' commands';
}

function newRow(s) {
  const tr = document.createElement('tr');
  tr.dataset.id = s.id;
  const cells = {};
  for (const k of ['thumb', 'id', 'status', 'image', 'screen', 'age', 'usage', 'do']) {
    cells[k] = document.createElement('td');
    cells[k].className = k;
    tr.appendChild(cells[k]);
  }
  const img = document.createElement('img');
  img.className = 'thumb';
  img.alt = '';
  cells.thumb.appendChild(img);
  cells.id.textContent = s.id;
  const watch = document.createElement('a');
  watch.href = '#s=' + encodeURIComponent(s.id);
  watch.textContent = 'watch';
  cells.do.appendChild(watch);
  for (const scope of ['view', 'control']) {
    const b = document.createElement('button');
    b.textContent = 'share ' + scope + ' link';
    b.onclick = () => share(s.id, scope);
    cells.do.append(' ', b);
  }
  return { tr, cells, img, thumbAt: 0, thumbBusy: false, url: null };
}

async function refreshThumb(id, row) {
  row.thumbBusy = true;
  row.thumbAt = Date.now();
  try {
    const r = await fetch('/v1/sessions/' + encodeURIComponent(id) + '/thumbnail',
      { headers: { Authorization: 'Bearer ' + apiKey() } });
    if (r.ok) {
      const url = URL.createObjectURL(await r.blob());
      if (row.url) URL.revokeObjectURL(row.url);
      row.url = url;
      row.img.src = url;
      row.img.dataset.updated = String(Date.now());
    }
  } catch (err) {
    // The next refresh tries again; the old picture stays meanwhile.
  }
  row.thumbBusy = false;
}

async function refreshList() {
  const tbody = $('sessions').querySelector('tbody');
  try {
    const { sessions } = await api('GET', '/v1/sessions');
    $('list-msg').textContent = sessions.length ? '' : 'No sessions.';
    const seen = new Set();
    for (const s of sessions) {
      seen.add(s.id);
      let row = rows.get(s.id);
      if (!row) {
        row = newRow(s);
        rows.set(s.id, row);
        tbody.appendChild(row.tr);
      }
      row.cells.status.textContent = statusText(s);
      row.cells.image.textContent = s.template ? s.image + ' (' + s.template + ')' : s.image;
      row.cells.screen.textContent = s.width + 'x' + s.height;
      row.cells.age.textContent = ago(s.age_ms);
      row.cells.usage.textContent = usageText(s.usage);
      row.tr.dataset.status = s.status;
      if (s.recording && !row.replay) {
        row.replay = document.createElement('a');
        row.replay.href = '#r=' + encodeURIComponent(s.id);
        row.replay.textContent = 'recording';
        row.replay.className = 'replay';
        row.cells.do.append(' ', row.replay);
      }
      // A paused-in-memory guest still has a screen; on disk it has none.
      const shows = s.status === 'ready' || (s.status === 'paused' && s.paused === 'memory');
      if (shows && !row.thumbBusy && Date.now() - row.thumbAt >= THUMB_REFRESH_MS) refreshThumb(s.id, row);
    }
    for (const [id, row] of rows) {
      if (seen.has(id)) continue;
      if (row.url) URL.revokeObjectURL(row.url);
      row.tr.remove();
      rows.delete(id);
    }
  } catch (err) {
    $('list-msg').textContent = 'Cannot list sessions: ' + err.message;
  }
}

function showList() {
  $('list-view').hidden = false;
  $('live-view').hidden = true;
  if (!apiKey()) { $('list-msg').textContent = 'Enter the operator API key to list sessions.'; return; }
  refreshList();
  if (!listTimer) listTimer = setInterval(refreshList, LIST_REFRESH_MS);
}

async function share(id, scope) {
  try {
    const r = await api('POST', '/v1/sessions/' + encodeURIComponent(id) + '/share', { scope, ttl_s: 3600 });
    $('share-out').hidden = false;
    $('share-ttl').textContent = r.expires_in_s;
    $('share-url').value = r.url;
    $('share-url').select();
  } catch (err) {
    $('list-msg').textContent = 'Cannot share: ' + err.message;
  }
}

$('key-form').onsubmit = (e) => {
  e.preventDefault();
  sessionStorage.setItem(KEY_STORE, $('key').value.trim());
  $('key').value = '';
  showList();
};

// ---- one session live -------------------------------------------------
let live = null;

function showLive(session, token) {
  $('list-view').hidden = true;
  $('live-view').hidden = false;
  $('title').textContent = session;
  const canvas = $('screen'), cursor = $('cursor');
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const url = proto + '//' + location.host + '/v1/sessions/' + encodeURIComponent(session) + '/stream';
  const st = { scope: '', controller: null, you: false, fps: 0, rtt: null, age: null, closed: '', cursor: null,
    hot: [0, 0] };
  // Until the guest defines a pointer shape (the tiny guest never does): a plain arrow.
  {
    const g = cursor.getContext('2d');
    g.fillStyle = '#fff'; g.strokeStyle = '#000';
    g.beginPath(); g.moveTo(0.5, 0.5); g.lineTo(0.5, 15); g.lineTo(4.5, 11); g.lineTo(10, 11); g.closePath();
    g.fill(); g.stroke();
  }
  let framesAtTick = 0, buttons = 0;
  let input = null; // input.js's part, made once the stream exists

  const stream = new VitrineStream(url, token || apiKey(), canvas, {
    quality: +$('quality').value, maxFps: +$('fps').value, name: 'web viewer',
  }, {
    hello: (m) => {
      st.scope = m.scope;
      st.controller = m.controller;
      st.link = '';
      $('take').disabled = m.scope === 'view';
      // Back after a drop: the lease went with the old socket; take it
      // again unless someone holds it. That may be the old socket still,
      // until the gateway notices it is gone: then the next control
      // message says whether it came free.
      if (m.reconnected && st.wantControl && !m.controller) {
        stream.take();
        st.wantControl = false;
      } else if (st.wantControl) {
        st.notice = 'control held by ' + m.controller.name + ': taken again if it comes free';
      }
      render();
    },
    control: (m) => {
      if (st.wantControl && !m.controller) stream.take();
      st.wantControl = false;
      if (st.you !== m.you) input.reset();
      st.controller = m.controller;
      st.you = m.you;
      render();
      placeCursor();
    },
    error: (m) => { st.error = m.code + ': ' + m.message; input.error(m); render(); },
    typed: (m) => input.typed(m),
    clipboard: (m) => input.clipboard(m),
    reconnecting: (attempt, delayMs) => {
      if (st.you) st.wantControl = true;
      if (st.you) input.reset();
      st.you = false;
      st.controller = null;
      st.link = 'reconnecting (try ' + attempt + ', in ' + (delayMs / 1000) + ' s)';
      render();
    },
    // The session's events: pauses, resumes, expiry warnings.
    event: (m) => {
      const e = m.event || {};
      if (e.type === 'state') st.session = e.status + (e.paused ? ' (' + e.paused + ')' : '');
      else if (e.type === 'busy') st.session = e.busy;
      else if (e.type === 'expiring') st.notice = 'expires in ' + Math.round(e.in_ms / 1000) + ' s (' + e.action + ')';
      render();
    },
    pong: (m) => { st.rtt = m.rtt; },
    frame: (f) => { st.age = Date.now() - f.timeUs / 1000; placeCursor(); },
    cursor: (x, y) => { st.cursor = { x, y }; placeCursor(); },
    shape: (s) => {
      cursor.width = s.w;
      cursor.height = s.h;
      cursor.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(s.rgba), s.w, s.h), 0, 0);
      st.hot = [s.hotX, s.hotY];
      placeCursor();
    },
    close: (code, reason) => { st.closed = 'closed ' + code + (reason ? ' (' + reason + ')' : ''); render(); },
  });
  live = stream;
  // at (below) is a function declaration: hoisted.
  input = vitrineInput({ canvas, stream, st, at, render });
  window.vitrineLive = { stream, state: st };

  function render() {
    const who = st.controller ? (st.you ? 'you' : st.controller.name) : 'nobody (agent may act)';
    $('take').hidden = st.you;
    $('release').hidden = !st.you;
    $('paste').disabled = !st.you;
    $('copy').disabled = !st.scope || st.scope === 'view' || !!st.link;
    $('keyrow').hidden = !st.you;
    $('link').hidden = !st.link || !!st.closed;
    $('link').textContent = st.link || '';
    canvas.classList.toggle('controlling', st.you);
    $('status').textContent = [
      st.closed || st.link || (st.session && st.session !== 'ready' ? 'session ' + st.session : 'live'),
      st.notice || '',
      'scope ' + (st.scope || '?'),
      'fps ' + st.fps,
      'rtt ' + (st.rtt == null ? '?' : st.rtt.toFixed(0) + ' ms'),
      'frame age ' + (st.age == null ? '?' : Math.max(0, st.age).toFixed(0) + ' ms'),
      'control: ' + who,
      'seq ' + stream.lastSeq,
      st.error ? 'last error ' + st.error : '',
    ].filter(Boolean).join(' | ');
  }

  function placeCursor() {
    if (!st.cursor || !canvas.width) return;
    const r = canvas.getBoundingClientRect(), s = $('stage').getBoundingClientRect();
    const k = r.width / canvas.width; // the picture's display scale
    // While you control, your own mouse pointer shows where you are.
    cursor.style.display = st.you ? 'none' : 'block';
    cursor.style.width = cursor.width * k + 'px';
    cursor.style.height = cursor.height * k + 'px';
    cursor.style.left = (r.left - s.left + (st.cursor.x - st.hot[0]) * k) + 'px';
    cursor.style.top = (r.top - s.top + (st.cursor.y - st.hot[1]) * k) + 'px';
  }

  const tick = setInterval(() => {
    st.fps = stream.frames - framesAtTick;
    framesAtTick = stream.frames;
    stream.ping();
    render();
  }, 1000);

  // Screen pixel under a mouse event, clamped to the screen.
  function at(e) {
    const r = canvas.getBoundingClientRect();
    const x = Math.floor((e.clientX - r.left) * canvas.width / r.width);
    const y = Math.floor((e.clientY - r.top) * canvas.height / r.height);
    return [Math.min(Math.max(x, 0), canvas.width - 1), Math.min(Math.max(y, 0), canvas.height - 1)];
  }
  // DOM buttons (1 left, 2 right, 4 middle, 8 back, 16 forward) -> stream bits.
  const mapButtons = (b) => (b & 1) | (b & 2 ? 4 : 0) | (b & 4 ? 2 : 0) | (b & 24);
  function mouse(e) {
    if (!st.you) return;
    e.preventDefault();
    if (e.type === 'mousedown') canvas.focus();
    buttons = mapButtons(e.buttons);
    const [x, y] = at(e);
    stream.pointer(x, y, buttons);
  }
  canvas.addEventListener('mousemove', mouse);
  canvas.addEventListener('mousedown', mouse);
  canvas.addEventListener('mouseup', mouse);
  canvas.addEventListener('contextmenu', (e) => { if (st.you) e.preventDefault(); });
  canvas.addEventListener('wheel', (e) => {
    if (!st.you) return;
    e.preventDefault();
    const [x, y] = at(e);
    const notch = (d) => Math.sign(d) * Math.min(5, Math.max(1, Math.round(Math.abs(d) / 100)));
    stream.wheel(x, y, e.deltaX ? notch(e.deltaX) : 0, e.deltaY ? notch(e.deltaY) : 0);
  }, { passive: false });
  // Keys go by what the person typed (web/keyboard.js).
  window.vitrineLive.keyboard = new VitrineKeyboard(canvas, stream, () => st.you, input.latching);
  window.addEventListener('resize', placeCursor);

  $('take').onclick = () => { stream.take(); canvas.focus(); };
  $('release').onclick = () => stream.release();
  $('quality').onchange = $('fps').onchange = () => stream.settings(+$('quality').value, +$('fps').value);
  $('back').onclick = () => { clearInterval(tick); stream.close(); live = null; };
  render();
}

function route() {
  if (live) { live.close(); live = null; }
  const f = fragment();
  if (f.replay) showReplay(f.replay, f.token);
  else if (f.session) showLive(f.session, f.token);
  else showList();
}
window.addEventListener('hashchange', () => location.reload());
route();
