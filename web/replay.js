// web/replay.js: a session's recording played back (#r=SESSION[&t=TOKEN]):
// the timeline from GET .../recording, its frames (JPEG, fetched as they are
// needed and kept) drawn on a canvas, a scrubber over the whole duration,
// play/pause at 1x, 2x or 4x, and the actions, commands, events and control
// changes listed beside the picture; a click on one goes to its moment (an
// action's: when its answer's screenshot was taken). docs/api.md
// "Recordings" is the timeline's format.
'use strict';

class VitrineReplay {
  constructor(session, token, els) {
    this.session = session;
    this.token = token;
    this.els = els; // {canvas, scrub, time, play, speed, entries, status}
    this.timeline = null;
    this.t = 0; // ms from the recording's start
    this.frame = -1; // index of the frame on the canvas
    this.bitmaps = new Map(); // frame index -> ImageBitmap (or a promise of one)
    this.playing = false;
    this.ready = false;
    this.want = -1; // the frame the latest seek asked for
  }

  url(rest) {
    return '/v1/sessions/' + encodeURIComponent(this.session) + '/recording' + rest;
  }

  async get(rest) {
    const r = await fetch(this.url(rest), { headers: { Authorization: 'Bearer ' + this.token } });
    if (!r.ok) {
      const j = await r.json().catch(() => ({}));
      throw new Error((j.error && j.error.code + ': ' + j.error.message) || 'HTTP ' + r.status);
    }
    return r;
  }

  async load() {
    try {
      this.timeline = await (await this.get('')).json();
    } catch (err) {
      this.els.status.textContent = 'Cannot load the recording: ' + err.message;
      return;
    }
    const tl = this.timeline;
    this.els.scrub.max = String(tl.duration_ms);
    this.els.scrub.disabled = false;
    this.els.play.disabled = tl.frames.length === 0;
    this.listEntries();
    this.els.status.textContent = tl.frames.length + ' frames, ' + tl.entries.length + ' entries, ' +
      (tl.duration_ms / 1000).toFixed(1) + ' s' + (tl.recording ? ' (still recording: reload for more)' : '');
    await this.seek(0);
    this.ready = true;
  }

  // The index of the frame on screen at t: the last one with t_ms <= t.
  frameAt(t) {
    const f = this.timeline.frames;
    let lo = 0, hi = f.length - 1, best = f.length ? 0 : -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (f[mid].t_ms <= t) { best = mid; lo = mid + 1; } else hi = mid - 1;
    }
    return best;
  }

  bitmap(i) {
    if (!this.bitmaps.has(i)) {
      const p = this.get('/frames/' + i).then((r) => r.blob()).then((b) => createImageBitmap(b));
      this.bitmaps.set(i, p);
      p.catch(() => this.bitmaps.delete(i));
    }
    return this.bitmaps.get(i);
  }

  async seek(t) {
    const tl = this.timeline;
    this.t = Math.max(0, Math.min(t, tl.duration_ms));
    this.els.scrub.value = String(this.t);
    this.els.time.textContent = (this.t / 1000).toFixed(2) + ' / ' + (tl.duration_ms / 1000).toFixed(2) + ' s';
    this.markEntries();
    const i = this.frameAt(this.t);
    this.want = i;
    if (i < 0 || i === this.frame) return;
    let bmp;
    try {
      bmp = await this.bitmap(i);
    } catch (err) {
      this.els.status.textContent = 'Cannot load frame ' + i + ': ' + err.message;
      return;
    }
    if (this.want !== i) return; // a later seek won
    const c = this.els.canvas;
    if (c.width !== bmp.width || c.height !== bmp.height) {
      c.width = bmp.width;
      c.height = bmp.height;
    }
    c.getContext('2d').drawImage(bmp, 0, 0);
    this.frame = i;
    // The next frame, ahead of need.
    if (i + 1 < tl.frames.length) this.bitmap(i + 1).catch(() => {});
  }

  describe(e) {
    switch (e.kind) {
      case 'action': {
        const a = typeof e.action === 'string' ? e.action : JSON.stringify(e.action);
        return 'action ' + a + ' -> ' + e.status + ' (' + e.ms + ' ms' + (e.via ? ', ' + e.via : '') + ')';
      }
      case 'command':
        return 'command ' + (e.cmd || (e.argv || []).join(' ')) + ' -> exit ' + e.exit_code;
      case 'control':
        return 'control ' + e.change + ' by ' + (e.name || 'viewer ' + e.viewer);
      default:
        return (e.kind || 'event') + ' ' + (e.type || '');
    }
  }

  // An action's moment is when its screenshot was taken: t_ms + ms.
  momentOf(e) {
    return e.kind === 'action' || e.kind === 'command' ? e.t_ms + (e.ms || 0) : e.t_ms;
  }

  listEntries() {
    const ol = this.els.entries;
    ol.textContent = '';
    this.timeline.entries.forEach((e, k) => {
      const li = document.createElement('li');
      li.dataset.k = String(k);
      li.dataset.kind = e.kind;
      const at = document.createElement('span');
      at.className = 'at';
      at.textContent = (e.t_ms / 1000).toFixed(2) + ' s ';
      li.append(at, this.describe(e));
      li.onclick = () => { this.pause(); this.seek(this.momentOf(e)); };
      ol.appendChild(li);
    });
  }

  // The entries up to now are "past"; the latest of them is "current".
  markEntries() {
    let cur = -1;
    this.timeline.entries.forEach((e, k) => {
      const li = this.els.entries.children[k];
      const past = e.t_ms <= this.t;
      li.classList.toggle('past', past);
      if (past) cur = k;
    });
    for (const li of this.els.entries.querySelectorAll('.current')) li.classList.remove('current');
    if (cur >= 0) this.els.entries.children[cur].classList.add('current');
  }

  play() {
    if (this.playing || !this.timeline) return;
    if (this.t >= this.timeline.duration_ms) this.seek(0);
    this.playing = true;
    this.els.play.textContent = 'Pause';
    let last = performance.now();
    const step = (now) => {
      if (!this.playing) return;
      const speed = +this.els.speed.value || 1;
      const t = this.t + (now - last) * speed;
      last = now;
      this.seek(t);
      if (t >= this.timeline.duration_ms) { this.pause(); return; }
      requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  pause() {
    this.playing = false;
    this.els.play.textContent = 'Play';
  }
}

function showReplay(session, token) {
  $('list-view').hidden = true;
  $('live-view').hidden = true;
  $('replay-view').hidden = false;
  $('replay-title').textContent = 'recording of ' + session;
  const rp = new VitrineReplay(session, token || apiKey(), {
    canvas: $('replay-screen'), scrub: $('replay-scrub'), time: $('replay-time'), play: $('replay-play'),
    speed: $('replay-speed'), entries: $('replay-entries'), status: $('replay-status'),
  });
  window.vitrineReplay = rp;
  $('replay-play').onclick = () => (rp.playing ? rp.pause() : rp.play());
  $('replay-scrub').oninput = () => { rp.pause(); rp.seek(+$('replay-scrub').value); };
  rp.load();
}
