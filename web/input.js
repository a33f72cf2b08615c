// web/input.js: what a person in control has besides mouse and keyboard
// (those are app.js's): paste from their clipboard into the guest (the Paste
// button, Ctrl/Cmd+V in the view) and copy the guest's clipboard out (the
// Copy button; Ctrl+C in the view copies in the guest, then brings it out),
// touch as a pointer (tap: left click; one finger: drag; two fingers: scroll
// notches; a long press: right click), a fullscreen button, and a row of
// keys a browser keeps for itself (Esc, Tab, Ctrl/Alt/Super latched for the
// next key or click, Ctrl+Alt+Del). Text goes to the guest exactly through
// the stream's type message; the clipboard through its clipboard message
// (docs/stream.md). Plain script, no build.
'use strict';

const TOUCH_DRAG_PX = 8; // a finger that moves less than this taps
const TOUCH_LONG_MS = 600; // a finger held this long without moving: right click
const TOUCH_NOTCH_PX = 30; // two fingers moved this far: one scroll notch
const COPY_AFTER_CTRL_C_MS = 400; // the guest's clipboard is set once its app had the keys

// ctx: {canvas, stream, st (the live state: st.you, st.scope, st.notice),
// at(clientXY) -> [x, y] guest pixel, render()}. Returns {reset()}: forget
// latches and gestures (control changed hands).
function vitrineInput(ctx) {
  const { canvas, stream, st, at, render } = ctx;
  const $ = (id) => document.getElementById(id);
  const paste = { chunks: [], bytes: 0, busy: false };
  let copyWanted = false;

  // ---- paste and copy ---------------------------------------------------
  function nextChunk() {
    const c = paste.chunks.shift();
    if (c === undefined) {
      paste.busy = false;
      st.notice = 'pasted ' + paste.bytes + ' bytes';
      render();
      return;
    }
    stream.type(c);
  }

  function pasteText(text) {
    if (!st.you || paste.busy) return;
    const chunks = vitrineTextChunks(text);
    if (!chunks.length) { st.notice = 'the clipboard holds no text'; render(); return; }
    paste.chunks = chunks;
    paste.bytes = 0;
    paste.busy = true;
    st.notice = 'pasting…';
    render();
    nextChunk();
  }

  async function pasteFromClipboard() {
    try {
      pasteText(await navigator.clipboard.readText()); // the browser asks the person first
    } catch (err) {
      st.notice = 'cannot read your clipboard: ' + err.message;
      render();
    }
  }

  function copyOut() {
    if (st.scope === 'view' || copyWanted) return;
    copyWanted = true;
    stream.clipboard();
  }

  // Answers from the gateway (app.js passes them on).
  function typed(m) {
    if (!paste.busy) return;
    paste.bytes += m.bytes;
    nextChunk();
  }
  async function clipboard(m) {
    if (!copyWanted) return;
    copyWanted = false;
    if (!m.text) { st.notice = "the guest's clipboard is empty"; render(); return; }
    try {
      await navigator.clipboard.writeText(m.text);
      st.notice = 'copied ' + m.text.length + ' characters';
    } catch (err) {
      st.notice = 'cannot write your clipboard: ' + err.message;
    }
    render();
  }
  // An error ends a paste or copy under way (the gateway answers in order).
  function error(m) {
    if (paste.busy) {
      paste.busy = false;
      paste.chunks = [];
      st.notice = 'paste stopped after ' + paste.bytes + ' bytes: ' + m.code;
    }
    copyWanted = false;
  }

  $('paste').onclick = pasteFromClipboard;
  $('copy').onclick = copyOut;
  // The view keeps the keyboard focus: a key typed next goes to the guest.
  $('paste').onmousedown = $('copy').onmousedown = (e) => e.preventDefault();
  // Ahead of keyboard.js's handlers: keys go to its field beside the canvas,
  // so catch them on the way down from the view's element (capture).
  canvas.parentNode.addEventListener('keydown', (e) => {
    if (!st.you) return;
    const mod = e.ctrlKey || e.metaKey;
    // By the key's meaning: where V and C are on the person's layout.
    const k = (e.key || '').toLowerCase();
    if (mod && !e.altKey && k === 'v') {
      // Not sent: the gateway lets go of the Ctrl held, then types the text.
      e.preventDefault();
      e.stopImmediatePropagation();
      pasteFromClipboard();
    } else if (paste.busy && e.repeat) {
      e.preventDefault(); // a held Ctrl repeating must not come down mid-paste
      e.stopImmediatePropagation();
    } else if (mod && !e.altKey && k === 'c') {
      setTimeout(copyOut, COPY_AFTER_CTRL_C_MS); // the keys still go: the guest copies first
    }
  }, true);

  // ---- the key row ------------------------------------------------------
  const latched = new Set(); // codes held down in the guest by the row
  function releaseLatched() {
    for (const c of latched) stream.key(c, false);
    latched.clear();
    for (const b of document.querySelectorAll('#keyrow button[data-mod]')) b.classList.remove('held');
  }
  for (const b of document.querySelectorAll('#keyrow button')) {
    b.onmousedown = (e) => e.preventDefault(); // the view keeps the keyboard focus
    b.onclick = () => {
      if (!st.you) return;
      if (b.dataset.mod) {
        const c = b.dataset.mod;
        if (latched.has(c)) { latched.delete(c); stream.key(c, false); b.classList.remove('held'); } else {
          latched.add(c);
          stream.key(c, true);
          b.classList.add('held');
        }
      } else {
        const codes = (b.dataset.combo || b.dataset.key).split(' ');
        for (const c of codes) stream.key(c, true);
        for (const c of codes.slice().reverse()) stream.key(c, false);
        releaseLatched();
      }
      canvas.focus();
    };
  }
  // A key typed on the keyboard, or a click, uses the latches up.
  const MODS = /^(Control|Alt|Meta|Shift)/;
  // (After keyboard.js has sent the key's own release: this listens on the
  // way back up.)
  canvas.parentNode.addEventListener('keyup', (e) => {
    if (latched.size && !MODS.test(e.code)) setTimeout(releaseLatched, 0);
  });
  canvas.addEventListener('mouseup', () => { if (latched.size) releaseLatched(); });

  // ---- fullscreen --------------------------------------------------------
  $('fullscreen').onclick = () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else $('live-view').requestFullscreen().catch((err) => { st.notice = 'fullscreen: ' + err.message; render(); });
  };
  document.addEventListener('fullscreenchange', () => {
    $('fullscreen').textContent = document.fullscreenElement ? 'Exit fullscreen' : 'Fullscreen';
  });

  // ---- touch --------------------------------------------------------------
  // One gesture at a time, from its first finger down to its last up.
  let g = null; // {kind: 'tap'|'drag'|'long'|'scroll', x0, y0, last: [x, y], timer, cx, cy, accX, accY}
  const pointAt = (t) => at(t); // a Touch has clientX/clientY like a mouse event
  function centre(ts) {
    return { clientX: (ts[0].clientX + ts[1].clientX) / 2, clientY: (ts[0].clientY + ts[1].clientY) / 2 };
  }
  function endGesture() {
    if (!g) return;
    clearTimeout(g.timer);
    if (g.kind === 'drag') stream.pointer(g.last[0], g.last[1], 0);
    g = null;
  }
  canvas.addEventListener('touchstart', (e) => {
    if (!st.you) return;
    e.preventDefault(); // no mouse events made up from the touches
    canvas.focus();
    if (e.touches.length >= 2) {
      endGesture();
      const c = centre(e.touches);
      g = { kind: 'scroll', cx: c.clientX, cy: c.clientY, accX: 0, accY: 0 };
      return;
    }
    if (g) return;
    const t = e.touches[0];
    g = { kind: 'tap', x0: t.clientX, y0: t.clientY, last: pointAt(t) };
    g.timer = setTimeout(() => {
      if (!g || g.kind !== 'tap') return;
      const [x, y] = g.last;
      stream.pointer(x, y, 0);
      stream.pointer(x, y, 4);
      stream.pointer(x, y, 0);
      g.kind = 'long';
      releaseLatched();
    }, TOUCH_LONG_MS);
  }, { passive: false });
  canvas.addEventListener('touchmove', (e) => {
    if (!st.you || !g) return;
    e.preventDefault();
    if (g.kind === 'scroll' && e.touches.length >= 2) {
      const c = centre(e.touches);
      // Content follows the fingers: fingers up scroll down.
      g.accX += g.cx - c.clientX;
      g.accY += g.cy - c.clientY;
      g.cx = c.clientX;
      g.cy = c.clientY;
      const nx = Math.trunc(g.accX / TOUCH_NOTCH_PX), ny = Math.trunc(g.accY / TOUCH_NOTCH_PX);
      if (nx || ny) {
        g.accX -= nx * TOUCH_NOTCH_PX;
        g.accY -= ny * TOUCH_NOTCH_PX;
        const [x, y] = at(c);
        stream.wheel(x, y, Math.max(-10, Math.min(10, nx)), Math.max(-10, Math.min(10, ny)));
      }
      return;
    }
    const t = e.touches[0];
    if (g.kind === 'tap' && Math.hypot(t.clientX - g.x0, t.clientY - g.y0) >= TOUCH_DRAG_PX) {
      clearTimeout(g.timer);
      g.kind = 'drag';
      stream.pointer(g.last[0], g.last[1], 0);
      stream.pointer(g.last[0], g.last[1], 1); // pressed where the finger came down
    }
    if (g.kind === 'drag') {
      g.last = pointAt(t);
      stream.pointer(g.last[0], g.last[1], 1);
    }
  }, { passive: false });
  function touchEnd(e) {
    if (!st.you || !g) return;
    e.preventDefault();
    if (e.touches.length) return; // the gesture goes on while a finger stays
    if (g.kind === 'tap') {
      const [x, y] = g.last;
      stream.pointer(x, y, 0);
      stream.pointer(x, y, 1);
      stream.pointer(x, y, 0);
      releaseLatched();
    }
    endGesture();
  }
  canvas.addEventListener('touchend', touchEnd, { passive: false });
  canvas.addEventListener('touchcancel', touchEnd, { passive: false });

  return {
    typed, clipboard, error,
    // Whether the key row holds a modifier down in the guest: the next key
    // typed goes as a key then, not as text (web/keyboard.js).
    latching: () => latched.size > 0,
    reset() {
      latched.clear();
      for (const b of document.querySelectorAll('#keyrow button[data-mod]')) b.classList.remove('held');
      if (g) clearTimeout(g.timer);
      g = null;
      paste.busy = false;
      paste.chunks = [];
      copyWanted = false;
    },
  };
}

window.vitrineInput = vitrineInput;
