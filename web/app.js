// web/app.js: the viewer page: the session list (with the operator key) and
// sharing links, or one session live: fit to the window, take/release
// control, mouse and keyboard capture while in control, a status line.
'use strict';

const $ = (id) => document.getElementById(id);
const KEY_STORE = 'vitrine-api-key';

function fragment() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { session: p.get('s'), token: p.get('t') };
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
async function showList() {
  $('list-view').hidden = false;
  $('live-view').hidden = true;
  const tbody = $('sessions').querySelector('tbody');
  tbody.textContent = '';
  if (!apiKey()) { $('list-msg').textContent = 'Enter the operator API key to list sessions.'; return; }
  try {
    const { sessions } = await api('GET', '/v1/sessions');
    $('list-msg').textContent = sessions.length ? '' : 'No sessions.';
    for (const s of sessions) {
      const tr = document.createElement('tr');
      for (const v of [s.id, s.status, s.image, s.width + 'x' + s.height]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.appendChild(td);
      }
      const td = document.createElement('td');
      const watch = document.createElement('a');
      watch.href = '#s=' + encodeURIComponent(s.id);
      watch.textContent = 'watch';
      td.appendChild(watch);
      for (const scope of ['view', 'control']) {
        const b = document.createElement('button');
        b.textContent = 'share ' + scope + ' link';
        b.onclick = () => share(s.id, scope);
        td.append(' ', b);
      }
      tr.appendChild(td);
      tbody.appendChild(tr);
    }
  } catch (err) {
    $('list-msg').textContent = 'Cannot list sessions: ' + err.message;
  }
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
  const held = new Set();

  const stream = new VitrineStream(url, token || apiKey(), canvas, {
    quality: +$('quality').value, maxFps: +$('fps').value, name: 'web viewer',
  }, {
    hello: (m) => { st.scope = m.scope; st.controller = m.controller; $('take').disabled = m.scope === 'view'; render(); },
    control: (m) => { st.controller = m.controller; st.you = m.you; render(); placeCursor(); },
    error: (m) => { st.error = m.code + ': ' + m.message; render(); },
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
  window.vitrineLive = { stream, state: st };

  function render() {
    const who = st.controller ? (st.you ? 'you' : st.controller.name) : 'nobody (agent may act)';
    $('take').hidden = st.you;
    $('release').hidden = !st.you;
    canvas.classList.toggle('controlling', st.you);
    $('status').textContent = [
      st.closed || (st.session && st.session !== 'ready' ? 'session ' + st.session : 'live'),
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
  function keyEvent(e) {
    if (!st.you) return;
    e.preventDefault();
    const down = e.type === 'keydown';
    if (down) held.add(e.code); else held.delete(e.code);
    stream.key(e.code, down);
  }
  canvas.addEventListener('keydown', keyEvent);
  canvas.addEventListener('keyup', keyEvent);
  canvas.addEventListener('blur', () => { for (const c of held) stream.key(c, false); held.clear(); });
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
  if (f.session) showLive(f.session, f.token);
  else showList();
}
window.addEventListener('hashchange', () => location.reload());
route();
