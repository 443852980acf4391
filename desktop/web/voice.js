// Voice input: the 🎤 button's single-shot recognition. When the language needs
// Google's speech service and the person has not agreed yet, they are asked first
// (nothing is recorded before the yes, nor after a no). The path is then
// chosen from GET /api/voice/status: the server's microphone when it has one; else
// a recording made in the page (a WAV sent to POST /api/voice, which runs the
// instruction) when the server can recognise the language; else the browser's own
// speech recognition; else a readable reason why voice input is not available.
// Every failure says what happened in plain words, adds the server's own message
// about its engines, and points to Settings → speech recognition engine.

import { api } from "./api.js";
import { asArray, asObject, asText } from "./dom.js";
import { tr } from "./i18n.js";
import { speech } from "./speech.js";
import { state } from "./state.js";
import { askGoogleConsent, languageName } from "./voiceengines.js";

const MAX_RECORD_MS = 8000;
let recording = null; // {stop()} while the page records

/**
 * One utterance. Resolves to {text} (to send as a voice instruction) or {response}
 * (the instruction answer, already run by the server); rejects with the reason.
 * While a page recording runs, a second call stops it.
 */
export async function captureVoice(onState = () => {}) {
  if (recording) {
    recording.stop();
    return { pending: true };
  }
  const lang = speech.lang || "zh-CN";
  let status;
  try {
    status = asObject(await api.voiceStatus());
  } catch {
    throw new Error(tr("主控没有回答语音状态：语音输入暂时不可用。", "The controller did not answer about voice: voice input is not available."));
  }
  let server = asArray(status.languages).find((l) => asObject(l).lang === lang);
  if (server?.needs_consent) {
    const english = asObject(asArray(status.languages).find((l) => asObject(l).lang === "en-US"));
    const englishOffline = asArray(english.engines).includes("pocketsphinx");
    if (!(await askGoogleConsent(lang, { englishOffline }))) {
      throw new Error(
        tr(
          `没有录音，也没有发送任何声音。要用${languageName(lang)}说命令，可以再按一次 🎤 并同意，或在 设置 → 语音 中允许使用 Google 语音识别。`,
          `Nothing was recorded or sent. To speak ${languageName(lang)} commands, press 🎤 again and agree, or allow Google's speech recognition in Settings → Voice.`,
        ),
      );
    }
    status = asObject(await api.voiceStatus());
    server = asArray(status.languages).find((l) => asObject(l).lang === lang);
  }
  const serverSays = asText(server?.message);
  if (asObject(status.microphone).available) {
    onState("listening");
    const heard = asObject(await api.voiceListen(lang));
    return { text: asText(heard.transcript) };
  }
  if (server?.available && navigator.mediaDevices?.getUserMedia) {
    onState("starting");
    let wav;
    try {
      wav = await recordWav(() => onState("recording"));
    } catch (exc) {
      throw microphoneFailed(exc, serverSays);
    }
    if (!wav) return {}; // stopped before the microphone gave any sound: nothing heard
    onState("recognising");
    return { response: await api.voiceInstruction(wav, lang, state.sessionId) };
  }
  const Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  if (Recognition && status.browser_speech !== false) {
    onState("listening");
    try {
      return { text: await browserRecognition(Recognition, lang) };
    } catch (exc) {
      throw new Error(explain(exc.message, serverSays));
    }
  }
  const reasons = [serverSays, asText(asObject(status.microphone).reason)].filter(Boolean);
  throw new Error(
    [
      tr(`这台电脑上没有能识别 ${lang} 的语音引擎，浏览器也没有语音识别。`, `No speech engine here can recognise ${lang}, and this browser has no speech recognition.`),
      ...reasons,
      SETTINGS_HINT(),
    ].join("\n"),
  );
}

const SETTINGS_HINT = () =>
  tr("可在 设置 → 语音识别引擎 中填写在线识别接口（地址和密钥）。", "Set an online engine (URL and key) in Settings → Speech recognition engine.");

// the Web Speech API's error codes, in plain words
const BROWSER_ERRORS = {
  "not-allowed": ["浏览器不允许本页使用麦克风（权限被拒绝，或没有麦克风）。", "The browser does not let this page use the microphone (permission denied, or no microphone)."],
  "service-not-allowed": ["浏览器的语音识别服务不可用（它需要联网的识别服务）。", "The browser's speech service is not allowed here (it needs an online recognition service)."],
  "audio-capture": ["找不到麦克风。", "No microphone was found."],
  network: ["浏览器的语音识别要把声音发到在线服务，但连不上网。", "The browser's speech recognition sends audio to an online service, which cannot be reached."],
  "no-speech": ["没有听到说话声。", "No speech was heard."],
  aborted: ["语音识别被中断了。", "Speech recognition was interrupted."],
  "language-not-supported": ["浏览器的语音识别不支持这种语言。", "The browser's speech recognition does not support this language."],
};

// getUserMedia's failures (DOMException names) as the Web Speech API's codes above
const MEDIA_ERRORS = {
  NotFoundError: "audio-capture",
  OverconstrainedError: "audio-capture",
  NotAllowedError: "not-allowed",
  SecurityError: "not-allowed",
};

/** A microphone that could not be opened, in plain words; the browser's own words
 * folded away as the technical detail. */
function microphoneFailed(exc, serverSays) {
  const code = MEDIA_ERRORS[exc?.name];
  const what = code
    ? tr(...BROWSER_ERRORS[code])
    : tr("麦克风打不开（可能正被别的程序占用）。", "The microphone could not be opened (another program may be using it).");
  const error = new Error([what, serverSays].filter(Boolean).join("\n"));
  error.technical = `${asText(exc?.name)}: ${asText(exc?.message)}`;
  return error;
}

/** The browser's failure code explained, the server's message and where to fix it. */
function explain(code, serverSays) {
  const known = BROWSER_ERRORS[code];
  const what = known ? tr(...known) : tr(`语音识别失败（${code}）。`, `Speech recognition failed (${code}).`);
  return [what, serverSays, SETTINGS_HINT()].filter(Boolean).join("\n");
}

function browserRecognition(Recognition, lang) {
  return new Promise((resolve, reject) => {
    const recognizer = new Recognition();
    recognizer.lang = lang;
    recognizer.interimResults = false;
    recognizer.maxAlternatives = 1;
    let done = false;
    recognizer.onresult = (event) => {
      done = true;
      resolve(asText(event.results?.[0]?.[0]?.transcript).trim());
    };
    recognizer.onerror = (event) => {
      done = true;
      reject(new Error(asText(event.error || "error")));
    };
    recognizer.onend = () => {
      if (!done) reject(new Error("no-speech"));
    };
    recognizer.start();
  });
}

/**
 * Record the microphone until `recording.stop()` or MAX_RECORD_MS; a mono 16-bit WAV,
 * or null when it stopped before any sound came. `onSound` runs once, when the first
 * samples arrive: only then is the person told to speak.
 */
async function recordWav(onSound) {
  let stopped = false;
  let wake = () => {};
  recording = {
    stop: () => {
      stopped = true;
      wake();
    },
  };
  const chunks = [];
  let stream;
  let context;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    if (stopped) return null;
    context = new AudioContext();
    const source = context.createMediaStreamSource(stream);
    const processor = context.createScriptProcessor(4096, 1, 1);
    processor.onaudioprocess = (event) => {
      if (stopped) return;
      chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
      if (chunks.length === 1) onSound();
    };
    source.connect(processor);
    processor.connect(context.destination);
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, MAX_RECORD_MS);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
      if (stopped) wake();
    });
    processor.disconnect();
    source.disconnect();
  } finally {
    recording = null;
    for (const track of stream?.getTracks() ?? []) track.stop();
    await context?.close();
  }
  return chunks.length ? encodeWav(chunks, context.sampleRate) : null;
}

/** Float samples (-1..1) in chunks → a 16-bit mono PCM WAV blob. */
export function encodeWav(chunks, sampleRate) {
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const buffer = new ArrayBuffer(44 + length * 2);
  const view = new DataView(buffer);
  const text = (offset, s) => [...s].forEach((ch, i) => view.setUint8(offset + i, ch.charCodeAt(0)));
  text(0, "RIFF");
  view.setUint32(4, 36 + length * 2, true);
  text(8, "WAVE");
  text(12, "fmt ");
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  text(36, "data");
  view.setUint32(40, length * 2, true);
  let offset = 44;
  for (const chunk of chunks) {
    for (const sample of chunk) {
      const clipped = Math.max(-1, Math.min(1, sample));
      view.setInt16(offset, clipped < 0 ? clipped * 0x8000 : clipped * 0x7fff, true);
      offset += 2;
    }
  }
  return new Blob([buffer], { type: "audio/wav" });
}
