// Voice output for the desktop. The controller speaks every `speak`
// event itself when it has a sound player (GET /api/speech/status: `player`); the
// page then stays quiet. Without one, `say(text)` speaks through the browser's
// speechSynthesis (zh-CN, rate from settings). The tray's mute toggle silences
// both: it is also sent to POST /api/speech/mute. The voice's language is the
// desktop's (`localeCode`) unless the user picked one in Settings.

import { api } from "./api.js";
import { localeCode } from "./i18n.js";

// lang: the language the user picked; "" follows the desktop's
const prefs = { muted: false, rate: 0.9, lang: "", serverSpeaks: false };
const listeners = new Set();

/** The voice the user picked in `settings` (GET /api/settings), "" when it follows the desktop. */
export function pickedVoice(settings) {
  return settings?.voice_follows_desktop === false ? String(settings.default_voice || "") : "";
}

function showMuted(muted) {
  prefs.muted = Boolean(muted);
  if (prefs.muted) window.speechSynthesis?.cancel();
  for (const listener of listeners) listener(prefs.muted);
}

export const speech = {
  get muted() {
    return prefs.muted;
  },

  /** Whether the controller speaks the replies (so the page does not). */
  get serverSpeaks() {
    return prefs.serverSpeaks;
  },

  /** Ask the controller who speaks and whether sound is muted; never throws. */
  async init() {
    try {
      const status = await api.speechStatus();
      prefs.serverSpeaks = Boolean(status && status.player);
      if (status && typeof status.muted === "boolean") showMuted(status.muted);
    } catch {
      prefs.serverSpeaks = false; // no speech service: the page speaks itself
    }
  },

  setMuted(muted) {
    showMuted(muted);
    api.setSpeechMute(prefs.muted).catch(() => {});
  },

  onMuteChange(listener) {
    listeners.add(listener);
  },

  /** `lang`: the voice the user picked, or "" to follow the desktop's language. */
  configure({ rate, lang } = {}) {
    if (Number.isFinite(Number(rate)) && Number(rate) > 0) prefs.rate = Number(rate);
    if (typeof lang === "string") prefs.lang = lang;
  },

  /** The language speech is heard and spoken in now. */
  get lang() {
    return prefs.lang || localeCode();
  },

  /** Whether this browser can speak at all. */
  available() {
    return typeof window.speechSynthesis !== "undefined" && typeof window.SpeechSynthesisUtterance === "function";
  },

  /** Speak `text` in the page unless muted, spoken by the server, or impossible. */
  say(text) {
    if (prefs.muted || prefs.serverSpeaks || !text || !this.available()) return false;
    try {
      const utterance = new SpeechSynthesisUtterance(String(text));
      utterance.lang = this.lang;
      utterance.rate = prefs.rate;
      window.speechSynthesis.speak(utterance);
      return true;
    } catch {
      return false;
    }
  },
};
