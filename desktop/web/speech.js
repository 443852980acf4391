// Speech for the desktop (S-07, S-91): `say(text)` speaks through the browser's
// speechSynthesis when there is one (zh-CN, rate from settings), silent while
// muted from the tray. `listen()` is where voice input plugs in; until it is
// wired it rejects with a readable reason.

const prefs = { muted: false, rate: 0.9, lang: "zh-CN" };
const listeners = new Set();

export const speech = {
  get muted() {
    return prefs.muted;
  },

  setMuted(muted) {
    prefs.muted = Boolean(muted);
    if (prefs.muted) window.speechSynthesis?.cancel();
    for (const listener of listeners) listener(prefs.muted);
  },

  onMuteChange(listener) {
    listeners.add(listener);
  },

  configure({ rate, lang } = {}) {
    if (Number.isFinite(Number(rate)) && Number(rate) > 0) prefs.rate = Number(rate);
    if (typeof lang === "string" && lang) prefs.lang = lang;
  },

  /** Whether this browser can speak at all. */
  available() {
    return typeof window.speechSynthesis !== "undefined" && typeof window.SpeechSynthesisUtterance === "function";
  },

  /** Speak `text` unless muted or unavailable; never throws. Returns whether it was queued. */
  say(text) {
    if (prefs.muted || !text || !this.available()) return false;
    try {
      const utterance = new SpeechSynthesisUtterance(String(text));
      utterance.lang = prefs.lang;
      utterance.rate = prefs.rate;
      window.speechSynthesis.speak(utterance);
      return true;
    } catch {
      return false;
    }
  },

  /** Single-shot voice input (S-90). Not wired yet: rejects with the reason. */
  async listen() {
    throw new Error("语音输入尚未接入 (voice input is not available yet)");
  },
};
