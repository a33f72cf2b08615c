// web/stream.js: a client of WS /v1/sessions/{id}/stream (docs/stream.md):
// authenticates with its first message, paints frame messages (JPEG
// rectangles) onto a canvas in order, reports the cursor, control changes,
// errors and round-trip times, and sends input (text to type and clipboard
// reads too). A socket that drops is opened again with a backoff, unless the
// gateway closed it for a reason another try cannot mend (a bad token, a
// broken rule) or the page did. No dependencies, no build.
'use strict';

// DOM KeyboardEvent.code values the gateway maps to QEMU keys
// (gateway/stream_msg.c); others are not sent (the gateway would close the
// socket on an unknown code).
const VITRINE_KEY_CODES = new Set([
  'Escape', 'Minus', 'Equal', 'Backspace', 'Tab', 'BracketLeft', 'BracketRight', 'Enter',
  'ControlLeft', 'ControlRight', 'Semicolon', 'Quote', 'Backquote', 'ShiftLeft', 'ShiftRight',
  'Backslash', 'IntlBackslash', 'Comma', 'Period', 'Slash', 'AltLeft', 'AltRight', 'Space',
  'CapsLock', 'NumLock', 'ScrollLock', 'PrintScreen', 'Pause', 'Insert', 'Delete', 'Home', 'End',
  'PageUp', 'PageDown', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'MetaLeft', 'MetaRight',
  'ContextMenu', 'NumpadDecimal', 'NumpadEnter', 'NumpadAdd', 'NumpadSubtract', 'NumpadMultiply',
  'NumpadDivide',
]);
for (let i = 0; i < 26; i++) VITRINE_KEY_CODES.add('Key' + String.fromCharCode(65 + i));
for (let i = 0; i < 10; i++) { VITRINE_KEY_CODES.add('Digit' + i); VITRINE_KEY_CODES.add('Numpad' + i); }
for (let i = 1; i <= 12; i++) VITRINE_KEY_CODES.add('F' + i);

// Close codes after which a new socket would fare no better: the page's
// own close, a binary or malformed message, a rule broken or a token no
// longer good (docs/stream.md "Close codes").
const VITRINE_FINAL_CLOSES = new Set([1000, 1003, 1007, 1008, 1009]);
const VITRINE_RECONNECT_MS = [500, 1000, 2000, 4000, 8000]; // then 8000 again
const VITRINE_RECONNECT_TRIES = 12; // in a row without a hello: about 80 s

class VitrineStream {
  // url: ws(s)://.../v1/sessions/ID/stream; canvas: where frames are painted;
  // on: {hello, frame, cursor, shape, control, error, pong, typed, clipboard,
  // reconnecting(attempt, delayMs, code), close(code, reason)} callbacks;
  // close comes once, when no new socket will be tried.
  constructor(url, token, canvas, opts, on) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.on = on || {};
    this.url = url;
    this.token = token;
    this.opts = { ...opts };
    this.chain = Promise.resolve();
    this.pending = 0;
    this.frames = 0;
    this.bytes = 0;
    this.lastSeq = 0;
    this.lastFrameTimeUs = 0;
    this.tries = 0; // sockets opened since the last hello
    this.connects = 0; // hellos so far
    this.closed = false;
    this.retry = null;
    this._connect();
  }

  _connect() {
    const ws = new WebSocket(this.url);
    this.ws = ws;
    this.tries++;
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => {
      const auth = { type: 'auth', token: this.token };
      if (this.opts.name) auth.name = this.opts.name;
      if (this.opts.quality) auth.quality = this.opts.quality;
      if (this.opts.maxFps) auth.max_fps = this.opts.maxFps;
      ws.send(JSON.stringify(auth));
    };
    ws.onmessage = (e) => { if (ws === this.ws) this._message(e.data); };
    ws.onclose = (e) => { if (ws === this.ws) this._closed(e.code, e.reason); };
  }

  _closed(code, reason) {
    if (this.closed || VITRINE_FINAL_CLOSES.has(code) || this.tries >= VITRINE_RECONNECT_TRIES) {
      this.closed = true;
      if (this.on.close) this.on.close(code, reason);
      return;
    }
    const delay = VITRINE_RECONNECT_MS[Math.min(this.tries - 1, VITRINE_RECONNECT_MS.length - 1)];
    if (this.on.reconnecting) this.on.reconnecting(this.tries, delay, code);
    this.retry = setTimeout(() => { this.retry = null; if (!this.closed) this._connect(); }, delay);
  }

  // Whether the socket is open and authenticated.
  get live() { return !!this.ws && this.ws.readyState === WebSocket.OPEN && this.tries === 0; }

  _message(data) {
    if (typeof data === 'string') {
      let m;
      try { m = JSON.parse(data); } catch (err) { return; }
      if (m.type === 'pong' && typeof m.t === 'number') m.rtt = performance.now() - m.t;
      if (m.type === 'hello') { this.tries = 0; m.reconnected = this.connects++ > 0; }
      const cb = this.on[m.type];
      if (cb) cb(m);
      return;
    }
    const dv = new DataView(data);
    if (dv.byteLength >= 12 && dv.getUint8(0) === 3) {
      const w = dv.getUint16(6, true), h = dv.getUint16(8, true);
      if (this.on.shape && dv.byteLength === 12 + w * h * 4)
        this.on.shape({ w, h, hotX: dv.getUint16(2, true), hotY: dv.getUint16(4, true),
          rgba: new Uint8ClampedArray(data, 12, w * h * 4) });
      return;
    }
    if (dv.byteLength >= 8 && dv.getUint8(0) === 2) {
      if (this.on.cursor) this.on.cursor(dv.getUint16(4, true), dv.getUint16(6, true), (dv.getUint8(1) & 1) === 1);
      return;
    }
    this.bytes += data.byteLength;
    this.pending++;
    this.chain = this.chain.then(() => this._paint(data)).catch((err) => {
      if (this.on.error) this.on.error({ code: 'decode', message: String(err) });
    }).finally(() => { this.pending--; });
  }

  // Parses a frame message (see display/stream_wire.h) and paints its rects.
  async _paint(data) {
    const dv = new DataView(data);
    if (dv.byteLength < 24 || dv.getUint8(0) !== 1) throw new Error('not a frame message');
    const key = (dv.getUint8(1) & 1) === 1, n = dv.getUint16(2, true), seq = dv.getUint32(4, true);
    const timeUs = dv.getUint32(8, true) + dv.getUint32(12, true) * 4294967296;
    const w = dv.getUint16(16, true), h = dv.getUint16(18, true);
    const rects = [];
    let off = 24;
    for (let i = 0; i < n; i++) {
      const x = dv.getUint16(off, true), y = dv.getUint16(off + 2, true);
      const len = dv.getUint32(off + 8, true);
      off += 16;
      rects.push({ x, y, blob: new Blob([new Uint8Array(data, off, len)], { type: 'image/jpeg' }) });
      off += len;
    }
    const bitmaps = await Promise.all(rects.map((r) => createImageBitmap(r.blob)));
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    bitmaps.forEach((b, i) => { this.ctx.drawImage(b, rects[i].x, rects[i].y); b.close(); });
    this.frames++;
    this.lastSeq = seq;
    this.lastFrameTimeUs = timeUs;
    if (this.on.frame) this.on.frame({ seq, key, rects: n, width: w, height: h, timeUs });
  }

  send(obj) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(obj));
  }

  take() { this.send({ type: 'take' }); }
  release() { this.send({ type: 'release' }); }
  settings(quality, maxFps) {
    this.opts.quality = quality; // a new socket asks for them too
    this.opts.maxFps = maxFps;
    this.send({ type: 'settings', quality, max_fps: maxFps });
  }
  ping() { this.send({ type: 'ping', t: performance.now() }); }
  pointer(x, y, buttons) { this.send({ type: 'pointer', x, y, buttons }); }
  wheel(x, y, dx, dy) { this.send({ type: 'wheel', x, y, dx, dy }); }
  key(code, down) { if (VITRINE_KEY_CODES.has(code)) this.send({ type: 'key', code, down }); }
  // A key by code and, for a printable one, the character it made (web/keyboard.js).
  keyEvent(code, key, down) {
    const m = { type: 'key', down };
    if (VITRINE_KEY_CODES.has(code)) m.code = code;
    if (key !== undefined) m.key = key;
    if (m.code || m.key) this.send(m);
  }
  text(text) { this.send({ type: 'text', text }); }
  // Text typed exactly in the guest (answered with typed or an error);
  // at most about 4000 bytes of JSON a message: see vitrineTextChunks.
  type(text) { this.send({ type: 'type', text }); }
  clipboard() { this.send({ type: 'clipboard' }); } // answered with clipboard or an error
  close() {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.ws.close(1000);
  }
}

// text cut into pieces whose type messages fit the gateway's 4096 bytes
// (whole code points; line ends as \n, each an Enter; NULs, which no
// message may carry, left out).
function vitrineTextChunks(text, maxBytes = 3000) {
  const enc = new TextEncoder(), out = [];
  let cur = '', n = 0;
  for (const ch of text.replace(/\r\n?/g, '\n').replace(/\0/g, '')) {
    const b = enc.encode(JSON.stringify(ch)).length - 2;
    if (cur && n + b > maxBytes) { out.push(cur); cur = ''; n = 0; }
    cur += ch;
    n += b;
  }
  if (cur) out.push(cur);
  return out;
}

window.VitrineStream = VitrineStream;
window.vitrineTextChunks = vitrineTextChunks;
