// web/keyboard.js: what a person types in the live view, sent by its
// meaning rather than by the key's US position (docs/stream.md "Keys"), so
// that a person on AZERTY or QWERTZ types their own characters whatever
// layout the guest runs.
//
// - A printable key (KeyboardEvent.key is one character) with no Ctrl, Alt
//   or Meta held goes as {type:"text"}: the gateway types that character on
//   the guest's layout (or through the guest agent when no key has it).
//   Shift and AltGr are the person's own business there: they are not sent
//   for it (and let go in the guest first if they were).
// - Dead keys and input methods compose in a hidden text field that holds
//   the focus; what they compose (compositionend, or the input event a dead
//   key's character arrives by) goes as text too.
// - Any other key (arrows, F-keys, Enter, Backspace, Tab, Escape) and every
//   key pressed with Ctrl, Alt or Meta goes as {type:"key"} with its code
//   and, for a printable one, its character (the shortcut Ctrl+Z is the
//   guest's z wherever the person's keyboard has it); the modifiers held
//   for it are sent just before it.
'use strict';

const VITRINE_MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph', 'OS']);

class VitrineKeyboard {
  // canvas: the live view (focusing it focuses the text field); stream: a
  // VitrineStream; enabled(): whether this viewer holds control;
  // latching(): whether the key row holds a modifier down in the guest
  // (web/input.js), which makes the next key a shortcut too.
  constructor(canvas, stream, enabled, latching = () => false) {
    this.stream = stream;
    this.enabled = enabled;
    this.latching = latching;
    this.mods = new Map(); // modifier code -> sent to the guest (bool)
    this.down = new Map(); // code of a key sent down -> the key it was sent with
    this.composing = false;
    const f = document.createElement('textarea');
    f.className = 'vitrine-keys';
    f.setAttribute('aria-label', 'keyboard input for the guest');
    f.autocapitalize = 'off';
    f.spellcheck = false;
    // Invisible, over the canvas (an IME puts its window near it), never
    // in the way of the pointer (style.css).
    canvas.parentNode.appendChild(f);
    this.field = f;
    canvas.addEventListener('focus', () => f.focus());
    // Shift-click and Ctrl-click: the modifiers held go down before the button
    // (capture: before the viewer's own mousedown and wheel handlers send them).
    canvas.addEventListener('mousedown', () => this.pressModifiers(), true);
    canvas.addEventListener('wheel', () => this.pressModifiers(), true);
    f.addEventListener('keydown', (e) => this.keydown(e));
    f.addEventListener('keyup', (e) => this.keyup(e));
    f.addEventListener('compositionstart', () => { this.composing = true; });
    f.addEventListener('compositionend', (e) => {
      this.composing = false;
      this.text(e.data);
      f.value = '';
    });
    f.addEventListener('input', (e) => {
      // A dead key's character, or anything else the field got by itself.
      if (this.composing || e.isComposing || e.inputType === 'insertCompositionText') return;
      const t = f.value;
      f.value = '';
      if (e.inputType === 'insertText' || e.inputType === 'insertReplacementText') this.text(t);
    });
    f.addEventListener('blur', () => this.releaseAll());
  }

  text(t) {
    if (!t || !this.enabled()) return;
    this.liftModifiers();
    for (let i = 0; i < t.length; i += 256) this.stream.text(t.slice(i, i + 256));
  }

  // Shift or AltGr sent for an earlier key would change what text types.
  liftModifiers() {
    for (const [code, sent] of this.mods) {
      if (sent) { this.stream.keyEvent(code, undefined, false); this.mods.set(code, false); }
    }
  }

  keydown(e) {
    if (!this.enabled()) return;
    if (this.composing || e.isComposing || e.keyCode === 229 || e.key === 'Dead' || e.key === 'Process') return;
    e.preventDefault();
    if (VITRINE_MODIFIER_KEYS.has(e.key)) {
      if (!this.mods.has(e.code)) this.mods.set(e.code, false); // sent when a key needs it
      return;
    }
    const printable = [...e.key].length === 1;
    // AltGr is Ctrl+Alt to some systems (Windows): with AltGr held, only Meta makes a shortcut.
    const altGr = e.getModifierState && e.getModifierState('AltGraph');
    const chord = e.metaKey || (!altGr && (e.ctrlKey || e.altKey)) || this.latching();
    if (printable && !chord) { this.text(e.key); return; }
    this.pressModifiers();
    const key = printable ? e.key : undefined;
    this.down.set(e.code, key);
    this.stream.keyEvent(e.code, key, true);
  }

  // Sends the modifiers held and not sent yet. AltGr is the person's, to
  // make their characters: never the guest's Alt.
  pressModifiers() {
    if (!this.enabled()) return;
    for (const [code, sent] of this.mods) {
      if (!sent && code !== 'AltRight') { this.stream.keyEvent(code, undefined, true); this.mods.set(code, true); }
    }
  }

  keyup(e) {
    if (!this.enabled()) return;
    e.preventDefault();
    if (this.mods.has(e.code)) {
      if (this.mods.get(e.code)) this.stream.keyEvent(e.code, undefined, false);
      this.mods.delete(e.code);
      return;
    }
    if (this.down.has(e.code)) {
      this.stream.keyEvent(e.code, this.down.get(e.code), false);
      this.down.delete(e.code);
    }
  }

  releaseAll() {
    if (!this.enabled()) { this.down.clear(); this.mods.clear(); return; }
    for (const [code, key] of this.down) this.stream.keyEvent(code, key, false);
    this.down.clear();
    this.liftModifiers();
    this.mods.clear();
  }
}

window.VitrineKeyboard = VitrineKeyboard;
