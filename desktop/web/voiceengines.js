// Where speech is recognised, in the reader's words: which engine serves each
// language (the Settings panel), and the one-time yes before a recording goes to
// Google's speech service over the internet (asked when the 🎤 is first pressed in
// a language only Google serves here, e.g. Chinese; remembered in the settings'
// `voice_google_consent`, withdrawn in Settings). Built from GET /api/voice/status.

import { api } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { tr } from "./i18n.js";

const LANGUAGE_NAMES = { "zh-CN": ["中文", "Chinese"], "en-US": ["英文", "English"] };
const ENGINE_NAMES = {
  google: ["Google 在线语音识别：录音经互联网发送到 Google", "Google's online speech recognition: the recording goes to Google over the internet"],
  pocketsphinx: ["本机离线识别 pocketsphinx，只听得懂应用的英文命令", "Offline on this computer with pocketsphinx, the apps' English commands only"],
  openai: ["你设置的在线转写接口", "The online transcription service you set"],
};

/** The language's name for the reader ("中文" / "Chinese"); its code when unknown. */
export function languageName(lang) {
  const names = LANGUAGE_NAMES[lang];
  return names ? tr(...names) : asText(lang);
}

/**
 * [{lang, text}] for zh-CN and en-US: the engine that recognises it, in the reader's
 * language. `consented` is the yes as the form shows it now (the status says how
 * it was when fetched).
 */
export function engineLines(status, consented) {
  const rows = asArray(asObject(status).languages).map(asObject);
  return ["zh-CN", "en-US"].map((lang) => {
    const row = rows.find((r) => r.lang === lang) || {};
    const engines = asArray(row.engines).map(asText);
    let text;
    if (row.needs_consent || engines.includes("google")) {
      text = consented
        ? tr(...ENGINE_NAMES.google)
        : tr("Google 在线语音识别，需要你在下面允许；允许之前不发送任何声音", "Google's online speech recognition, once you allow it below; nothing is sent before that");
    } else if (engines.length) {
      text = engines.map((name) => (ENGINE_NAMES[name] ? tr(...ENGINE_NAMES[name]) : name)).join(tr("；不行时用", "; else "));
    } else {
      text = status?.browser_speech
        ? tr("这台电脑上没有识别引擎，改用浏览器自带的语音识别", "No engine on this computer: the browser's own speech recognition is used")
        : tr("这台电脑上没有识别引擎", "No recognition engine on this computer");
    }
    return { lang, text };
  });
}

/** The Settings panel's list of engines per language, kept in step with `consent`. */
export function engineList(consent) {
  const list = el("ul", { className: "settings-engines", id: "settings_voice_engines" });
  let status = null;
  const draw = () => {
    list.replaceChildren(
      ...engineLines(status, consent.checked).map(({ lang, text }) =>
        el("li", { dataset: { lang } }, el("strong", { text: `${languageName(lang)}${tr("：", ": ")}` }), el("span", { text })),
      ),
    );
  };
  consent.addEventListener("change", draw);
  api
    .voiceStatus()
    .then((answer) => {
      status = asObject(answer);
      draw();
    })
    .catch(() => {
      list.replaceChildren(el("li", { text: tr("主控没有回答语音状态。", "The controller did not answer about voice.") }));
    });
  return list;
}

/**
 * Ask once whether recordings in `lang` may go to Google's speech service
 * (`englishOffline`: English stays on this computer either way). Resolves
 * true after the yes was saved in the settings, false when the person said no (or
 * closed the dialog); nothing is recorded before it resolves.
 */
export function askGoogleConsent(lang, { englishOffline = true } = {}) {
  return new Promise((resolve) => {
    let answered = false;
    const answer = (close, yes) => {
      answered = true;
      close();
      resolve(yes);
    };
    const failure = el("p", { className: "settings-error", attrs: { role: "alert" }, hidden: true });
    const dialog = openModal({
      id: "voice_consent_dialog",
      title: tr("使用 Google 语音识别？", "Use Google's speech recognition?"),
      focus: "voice_consent_no",
      body: [
        el("p", {
          text: tr(
            `这台电脑不能离线识别${languageName(lang)}。识别时，你按 🎤 后说的话会录下来，经互联网发送到 Google 的语音识别服务，由它转成文字。`,
            `This computer cannot recognise ${languageName(lang)} offline. To recognise it, what you say after pressing 🎤 is recorded and sent over the internet to Google's speech recognition service, which turns it into text.`,
          ),
        }),
        el("p", {
          text: tr(
            "只有你同意后才会发送。这个选择会保存在设置里，随时可以在 设置 → 语音 中收回。",
            "Nothing is sent unless you agree. Your choice is kept in the settings, and you can withdraw it at any time in Settings → Voice.",
          ),
        }),
        englishOffline
          ? el("p", { text: tr("英文命令仍在本机离线识别，不会发送。", "English commands are still recognised offline on this computer and are not sent.") })
          : null,
        failure,
      ],
      buttons: [
        { id: "voice_consent_no", text: tr("不发送", "Don't send"), onClick: (close) => answer(close, false) },
        {
          id: "voice_consent_yes",
          text: tr("同意，发送到 Google", "Agree: send to Google"),
          primary: true,
          onClick: async (close) => {
            try {
              await api.putSettings({ voice_google_consent: true });
            } catch (exc) {
              failure.hidden = false;
              failure.textContent = `${tr("没有保存", "Not saved")}: ${exc.message}`;
              return;
            }
            answer(close, true);
          },
        },
      ],
    });
    // closed by ✕, Escape or a click outside: a no
    new MutationObserver((_, observer) => {
      if (dialog.node.isConnected) return;
      observer.disconnect();
      if (!answered) resolve(false);
    }).observe(document.getElementById("modal_root"), { childList: true, subtree: true });
  });
}
