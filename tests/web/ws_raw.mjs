// tests/web/ws_raw.mjs: a minimal WebSocket client for the tests, because
// node's own cannot send an Authorization header on the upgrade. Frames
// out (masked), whole messages in; no extensions.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export function wsConnect(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({
      host: u.hostname, port: u.port, path: u.pathname + u.search,
      headers: {
        Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'), ...headers,
      },
    });
    req.on('upgrade', (res, socket, head) => resolve(new Client(socket, head)));
    req.on('response', (res) => reject(Object.assign(new Error('upgrade refused: ' + res.statusCode), { status: res.statusCode })));
    req.on('error', reject);
    req.end();
  });
}

class Client {
  constructor(socket, head) {
    this.s = socket;
    this.buf = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
    this.msgs = [];
    this.waiters = [];
    this.frag = [];
    this.closeInfo = null;
    this.closeWaiters = [];
    socket.on('data', (d) => { this.buf = Buffer.concat([this.buf, d]); this.parse(); });
    socket.on('close', () => this.finish({ code: 1006, reason: '' }));
    socket.on('error', () => {});
    this.parse();
  }
  finish(info) {
    if (!this.closeInfo) this.closeInfo = info;
    for (const w of this.closeWaiters) w(this.closeInfo);
    this.closeWaiters = [];
    for (const w of this.waiters) w.reject(new Error('closed ' + this.closeInfo.code));
    this.waiters = [];
  }
  parse() {
    for (;;) {
      const b = this.buf;
      if (b.length < 2) return;
      let len = b[1] & 0x7f, h = 2;
      if (len === 126) { if (b.length < 4) return; len = b.readUInt16BE(2); h = 4; }
      else if (len === 127) { if (b.length < 10) return; len = Number(b.readBigUInt64BE(2)); h = 10; }
      if (b.length < h + len) return;
      const op = b[0] & 0x0f, fin = (b[0] & 0x80) !== 0, data = b.subarray(h, h + len);
      this.buf = b.subarray(h + len);
      if (op === 8) {
        this.finish({ code: data.length >= 2 ? data.readUInt16BE(0) : 1005, reason: data.subarray(2).toString() });
        this.s.end();
        return;
      }
      if (op === 9) { this.frame(0xa, data); continue; }
      if (op === 0xa) continue;
      if (op !== 0) this.fragOp = op;
      this.frag.push(data);
      if (!fin) continue;
      const m = { binary: this.fragOp === 2, data: Buffer.concat(this.frag) };
      this.frag = [];
      const w = this.waiters.shift();
      if (w) w.resolve(m); else this.msgs.push(m);
    }
  }
  frame(op, payload) {
    const mask = randomBytes(4), n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | op, 0x80 | n])
      : n < 65536 ? Buffer.from([0x80 | op, 0x80 | 126, n >> 8, n & 255])
        : Buffer.concat([Buffer.from([0x80 | op, 0x80 | 127]), (() => { const x = Buffer.alloc(8); x.writeBigUInt64BE(BigInt(n)); return x; })()]);
    const body = Buffer.from(payload);
    for (let i = 0; i < n; i++) body[i] ^= mask[i % 4];
    this.s.write(Buffer.concat([head, mask, body]));
  }
  sendText(t) { this.frame(1, Buffer.from(t)); }
  sendBinary(b) { this.frame(2, b); }
  next() {
    if (this.msgs.length) return Promise.resolve(this.msgs.shift());
    if (this.closeInfo) return Promise.reject(new Error('closed ' + this.closeInfo.code));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }
  async nextText() {
    const m = await this.next();
    if (m.binary) throw new Error('expected a text message');
    return m.data.toString();
  }
  closed() {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    return new Promise((r) => this.closeWaiters.push(r));
  }
  close() { this.frame(8, Buffer.from([0x03, 0xe8])); }
}
