// The settings dialog: edits config.json through GET/PUT /api/settings. The
// controller validates with the settings model and answers a bad value with
// `detail.fields` (field path → reason); the form shows each reason under its
// field. API keys are never shown: their fields start empty and a new key is sent
// only when one is typed; a saved key has a Remove button (removed on Save). Turning the command whitelist off needs an explicit
// confirmation, because any program may then run.

import { api } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { setLanguage, tr } from "./i18n.js";
import { pickedVoice, speech } from "./speech.js";
import { technicalDetails } from "./views.js";
import { engineList } from "./voiceengines.js";

const VOICES = ["zh-CN", "zh-TW", "en-US", "en-GB", "ja-JP"];
// the speech-to-text engines of voice/input.py (`voice_engine`)
const ENGINES = [
  ["auto", "自动（英文离线识别；中文经你允许后用 Google）", "Automatic (English offline; Chinese through Google once you allow it)"],
  ["openai", "在线：OpenAI 兼容的转写接口", "Online: OpenAI-compatible transcription"],
  ["google", "在线：Google 网页识别", "Online: Google web speech"],
  ["pocketsphinx", "离线：pocketsphinx（仅英文）", "Offline: pocketsphinx (English only)"],
  ["browser", "浏览器自带的语音识别", "The browser's own speech recognition"],
];
const LANGUAGES = [
  ["", "跟随浏览器", "Follow the browser"],
  ["zh-CN", "中文", "Chinese"],
  ["en-US", "English", "English"],
];

/** Open the dialog; `toast` reports the outcome. */
export async function openSettings(toast) {
  let current;
  try {
    current = asObject(await api.getSettings());
  } catch (exc) {
    toast({ title: tr("无法读取设置", "Cannot load settings"), body: exc.message, detail: exc.technical, level: "error" });
    return;
  }
  const sandbox = asObject(current.tool_sandbox);
  const llm = asObject(current.llm);
  const input = (id, value, extra = {}) => el("input", { type: "text", id, value: asText(value ?? ""), ...extra });
  const secret = (id, shown) =>
    el("input", {
      type: "password",
      id,
      autocomplete: "off",
      placeholder: shown ? tr(`已设置 ${shown}（留空不变）`, `Set: ${shown} (leave empty to keep)`) : tr("未设置", "Not set"),
    });
  // a saved key's Remove button: the key is sent as "" on Save (typing a new one wins)
  const remover = (field, shown) => {
    if (!shown) return null;
    const button = el("button", {
      type: "button",
      className: "btn-plain settings-remove",
      id: `${field.id}_remove`,
      text: tr("删除密钥", "Remove key"),
      on: {
        click: () => {
          field.dataset.remove = "true";
          field.value = "";
          field.placeholder = tr("保存后删除", "Removed when you save");
          button.disabled = true;
          button.textContent = tr("将删除", "Will be removed");
        },
      },
    });
    return button;
  };
  const keyValue = (field) => {
    const typed = field.value.trim();
    if (typed) return typed;
    return field.dataset.remove === "true" ? "" : null; // null: keep the saved one
  };
  const choice = (id, options, value) => {
    const select = el(
      "select",
      { id },
      options.map(([key, zh, en]) => el("option", { value: key, text: tr(zh, en) })),
    );
    select.value = value;
    return select;
  };

  const key = secret("settings_api_key", asText(llm.api_key || ""));
  const baseUrl = input("settings_llm_base_url", llm.base_url);
  const model = input("settings_llm_model", llm.model);
  const uiLanguage = choice("settings_ui_language", LANGUAGES, asText(current.ui_language || ""));
  // "" follows the desktop's language; a code is the voice the user picked
  const voiceNow = pickedVoice(current);
  const voices = [...new Set([voiceNow, ...VOICES].filter(Boolean))].map((v) => [v, v, v]);
  const voice = choice("settings_voice", [["", "跟随界面语言", "Same as the desktop"], ...voices], voiceNow);
  const googleConsent = el("input", { type: "checkbox", id: "settings_voice_google_consent", checked: current.voice_google_consent === true });
  const rate = el("input", { type: "range", id: "settings_rate", min: 0.5, max: 2, step: 0.05 });
  rate.value = String(Number(current.voice_rate) || 0.9);
  const rateShown = el("output", { text: rate.value });
  rate.addEventListener("input", () => {
    rateShown.textContent = rate.value;
  });
  const engine = choice("settings_voice_engine", ENGINES, asText(current.voice_engine || "auto"));
  const engineUrl = input("settings_voice_api_base_url", current.voice_api_base_url, {
    placeholder: "https://api.openai.com/v1",
  });
  const engineKey = secret("settings_voice_api_key", asText(current.voice_api_key || ""));
  const engineModel = input("settings_voice_api_model", current.voice_api_model, { placeholder: "whisper-1" });
  const wasOn = sandbox.enable_shell_whitelist !== false;
  const shellOn = el("input", { type: "checkbox", id: "settings_shell_on", checked: wasOn });
  const shellList = el("textarea", { id: "settings_shell_whitelist", rows: 3, value: asArray(sandbox.shell_whitelist).map(asText).join("\n") });
  const domains = el("textarea", {
    id: "settings_http_whitelist",
    rows: 3,
    placeholder: tr("留空表示不限制公网域名；每行一个，例如 example.com", "Empty: any public domain; one per line, e.g. example.com"),
    value: asArray(sandbox.http_domain_whitelist).map(asText).join("\n"),
  });
  const offConfirm = el("input", { type: "checkbox", id: "settings_shell_off_confirm" });
  const offWarning = el(
    "div",
    { className: "settings-warning", id: "settings_shell_warning", attrs: { role: "alert" }, hidden: true },
    el("p", {
      text: tr(
        "⚠️ 关闭命令白名单后，应用可以运行任何程序（包括删除文件的命令）。只在你完全信任所有应用时这样做。",
        "⚠️ Without the command whitelist, apps may run any program (file-deleting ones included). Only do this if you trust every app.",
      ),
    }),
    el("label", { className: "settings-check" }, offConfirm, el("span", { text: tr("我明白风险，仍要关闭", "I understand; turn it off anyway") })),
  );
  shellOn.addEventListener("change", () => {
    offWarning.hidden = shellOn.checked || !wasOn;
    offConfirm.checked = false;
  });
  const problem = el("div", { className: "settings-error", attrs: { role: "alert" }, hidden: true });

  // field path prefix (as the server names it) → the reason line under that field
  const reasons = new Map();
  const row = (path, label, ...controls) => {
    const reason = el("span", { className: "settings-field-error", dataset: { field: path }, hidden: true });
    reasons.set(path, { reason, control: controls[0] });
    return el("label", { className: "settings-row" }, el("span", { text: label }), controls, reason);
  };
  const showReasons = (fields) => {
    let placed = 0;
    for (const { reason, control } of reasons.values()) {
      reason.hidden = true;
      reason.textContent = "";
      control.removeAttribute("aria-invalid");
    }
    for (const [path, message] of Object.entries(asObject(fields))) {
      const target = [...reasons.keys()].find((p) => path === p || path.startsWith(`${p}.`));
      if (!target) continue;
      const { reason, control } = reasons.get(target);
      const line = lineOf(path, control);
      const where = line ? tr(`第${line}行：`, `line ${line}: `) : "";
      reason.textContent = [reason.textContent, `${where}${cleanReason(message)}`]
        .filter(Boolean)
        .join("\n");
      reason.hidden = false;
      control.setAttribute("aria-invalid", "true");
      placed += 1;
    }
    return placed;
  };

  openModal({
    id: "settings_dialog",
    title: tr("设置", "Settings"),
    body: [
      el("h4", { text: tr("大模型", "LLM") }),
      row("llm.api_key", tr("API 密钥", "API key"), key, remover(key, asText(llm.api_key || ""))),
      row("llm.base_url", tr("API 地址", "API base URL"), baseUrl),
      row("llm.model", tr("模型", "Model"), model),
      el("h4", { text: tr("界面", "Desktop") }),
      row("ui_language", tr("界面语言", "Language"), uiLanguage),
      el("h4", { text: tr("语音", "Voice") }),
      row("default_voice", tr("默认语音", "Voice"), voice),
      row("voice_rate", tr("语速", "Rate"), rate, rateShown),
      row("voice_engine", tr("语音识别引擎（🎤）", "Speech recognition engine (🎤)"), engine),
      el("label", { className: "settings-check" }, googleConsent, el("span", { text: tr("允许把语音经互联网发送到 Google 语音识别服务（用于本机不能识别的语言，如中文）", "Allow sending speech over the internet to Google's speech recognition (for languages this computer cannot recognise, such as Chinese)") })),
      el("div", { className: "settings-note" }, el("span", { text: tr("现在由谁识别：", "Recognised by:") }), engineList(googleConsent)),
      row("voice_api_base_url", tr("识别接口地址", "Recognition endpoint URL"), engineUrl),
      row("voice_api_key", tr("识别接口密钥", "Recognition API key"), engineKey, remover(engineKey, asText(current.voice_api_key || ""))),
      row("voice_api_model", tr("识别模型", "Recognition model"), engineModel),
      el("h4", { text: tr("工具沙箱", "Tool sandbox") }),
      el("label", { className: "settings-check" }, shellOn, el("span", { text: tr("启用命令白名单", "Command whitelist on") })),
      offWarning,
      row("tool_sandbox.shell_whitelist", tr("允许的命令，每行一个程序名", "Allowed programs, one per line"), shellList),
      row("tool_sandbox.http_domain_whitelist", tr("允许的域名，每行一个", "Allowed domains, one per line"), domains),
      problem,
    ],
    buttons: [
      { text: tr("取消", "Cancel"), onClick: (close) => close() },
      {
        text: tr("保存", "Save"),
        primary: true,
        id: "settings_save",
        onClick: async (close) => {
          problem.hidden = true;
          showReasons({});
          if (wasOn && !shellOn.checked && !offConfirm.checked) {
            offWarning.hidden = false;
            problem.hidden = false;
            problem.textContent = tr(
              "请先确认关闭命令白名单的风险，或重新勾选“启用命令白名单”。",
              "Confirm the risk of turning the command whitelist off, or tick it again.",
            );
            return;
          }
          const next = structuredClone(current);
          next.llm = { ...llm, base_url: baseUrl.value.trim(), model: model.value.trim() };
          if (keyValue(key) !== null) next.llm.api_key = keyValue(key);
          if (keyValue(engineKey) !== null) next.voice_api_key = keyValue(engineKey);
          next.ui_language = uiLanguage.value;
          next.voice_follows_desktop = voice.value === "";
          if (voice.value) next.default_voice = voice.value;
          next.voice_google_consent = googleConsent.checked;
          next.voice_rate = Number(rate.value);
          next.voice_engine = engine.value;
          for (const [name, field] of [["voice_api_base_url", engineUrl], ["voice_api_model", engineModel]]) {
            if (field.value.trim()) next[name] = field.value.trim();
            else delete next[name];
          }
          next.tool_sandbox = {
            ...sandbox,
            enable_shell_whitelist: shellOn.checked,
            shell_whitelist: lines(shellList.value),
            http_domain_whitelist: lines(domains.value),
          };
          let saved;
          try {
            saved = asObject(await api.putSettings(next));
          } catch (exc) {
            const placed = showReasons(asObject(exc.detail).fields);
            problem.hidden = false;
            problem.textContent = placed
              ? tr("没有保存：请修改标红的项目。", "Not saved: please correct the fields marked in red.")
              : `${tr("没有保存", "Not saved")}: ${exc.message}`;
            if (!placed && exc.technical) problem.append(technicalDetails(exc.technical));
            return;
          }
          speech.configure({ rate: next.voice_rate, lang: voice.value });
          close();
          setLanguage(next.ui_language); // the whole desktop relabels itself
          toast({
            title: tr("设置已保存", "Settings saved"),
            body: saved.restart_needed ? tr("部分设置在重启后生效", "Some changes apply after a restart") : "",
            level: "success",
          });
        },
      },
    ],
  });
}

/** The 1-based line of a list field the server named (`….shell_whitelist.2` → 3). */
function lineOf(path, control) {
  const index = /\.(\d+)$/.exec(path);
  return index && control.tagName === "TEXTAREA" ? Number(index[1]) + 1 : 0;
}

/** Pydantic's "Value error, …" prefix says nothing to a user. */
function cleanReason(message) {
  return asText(message).replace(/^Value error, /, "");
}

function lines(text) {
  return text
    .split(/[\n,，]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
