// The settings dialog: edits config.json through GET/PUT /api/settings (the
// controller validates and saves atomically). The API key is never shown: the
// field starts empty and a new key is sent only when one is typed.

import { api } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { speech } from "./speech.js";

const VOICES = ["zh-CN", "zh-TW", "en-US", "en-GB", "ja-JP"];

/** Open the dialog; `toast` reports the outcome. */
export async function openSettings(toast) {
  let current;
  try {
    current = asObject(await api.getSettings());
  } catch (exc) {
    toast({ title: "无法读取设置 (cannot load settings)", body: exc.message, level: "error" });
    return;
  }
  const sandbox = asObject(current.tool_sandbox);
  const keyShown = asText(current.deepseek_api_key || "");
  const key = el("input", {
    type: "password",
    id: "settings_api_key",
    autocomplete: "off",
    placeholder: keyShown ? `已设置 ${keyShown}（留空不变 leave empty to keep）` : "未设置 (not set)",
  });
  const baseUrl = el("input", { type: "text", id: "settings_llm_base_url", value: asText(current.llm_base_url ?? "") });
  const model = el("input", { type: "text", id: "settings_llm_model", value: asText(current.llm_model ?? "") });
  const voiceNow = asText(current.default_voice || "zh-CN");
  const voice = el(
    "select",
    { id: "settings_voice" },
    [...new Set([voiceNow, ...VOICES])].map((v) => el("option", { value: v, text: v })),
  );
  voice.value = voiceNow;
  const rate = el("input", { type: "range", id: "settings_rate", min: 0.5, max: 2, step: 0.05 });
  rate.value = String(Number(current.voice_rate) || 0.9);
  const rateShown = el("output", { text: rate.value });
  rate.addEventListener("input", () => {
    rateShown.textContent = rate.value;
  });
  const shellOn = el("input", { type: "checkbox", id: "settings_shell_on", checked: sandbox.enable_shell_whitelist !== false });
  const shellList = el("textarea", { id: "settings_shell_whitelist", rows: 3, value: asArray(sandbox.shell_whitelist).map(asText).join("\n") });
  const domains = el("textarea", {
    id: "settings_http_whitelist",
    rows: 3,
    placeholder: "留空表示不限制 (empty = any public domain)",
    value: asArray(sandbox.http_domain_whitelist).map(asText).join("\n"),
  });
  const problem = el("div", { className: "settings-error", attrs: { role: "alert" }, hidden: true });
  const row = (label, ...controls) => el("label", { className: "settings-row" }, el("span", { text: label }), controls);

  openModal({
    id: "settings_dialog",
    title: "设置 (Settings)",
    body: [
      el("h4", { text: "大模型 LLM" }),
      row("DeepSeek API 密钥 (key)", key),
      row("API 地址 (base URL)", baseUrl),
      row("模型 (model)", model),
      el("h4", { text: "语音 Voice" }),
      row("默认语音 (voice)", voice),
      row("语速 (rate)", rate, rateShown),
      el("h4", { text: "工具沙箱 Tool sandbox" }),
      el("label", { className: "settings-check" }, shellOn, el("span", { text: "启用命令白名单 (shell whitelist on)" })),
      row("允许的命令，每行一个 (allowed commands)", shellList),
      row("允许的域名，每行一个 (allowed domains)", domains),
      problem,
    ],
    buttons: [
      { text: "取消 Cancel", onClick: (close) => close() },
      {
        text: "保存 Save",
        primary: true,
        id: "settings_save",
        onClick: async (close) => {
          const next = structuredClone(current);
          if (key.value.trim()) next.deepseek_api_key = key.value.trim();
          next.llm_base_url = baseUrl.value.trim();
          next.llm_model = model.value.trim();
          next.default_voice = voice.value;
          next.voice_rate = Number(rate.value);
          next.tool_sandbox = {
            ...sandbox,
            enable_shell_whitelist: shellOn.checked,
            shell_whitelist: lines(shellList.value),
            http_domain_whitelist: lines(domains.value),
          };
          if (current.llm_base_url === undefined && !next.llm_base_url) delete next.llm_base_url;
          if (current.llm_model === undefined && !next.llm_model) delete next.llm_model;
          let saved;
          try {
            saved = asObject(await api.putSettings(next));
          } catch (exc) {
            problem.hidden = false;
            problem.textContent = `保存失败 (not saved): ${exc.message}`;
            return;
          }
          speech.configure({ rate: next.voice_rate, lang: next.default_voice });
          toast({
            title: "设置已保存 (settings saved)",
            body: saved.restart_needed ? "部分设置在重启后生效 (some changes apply after a restart)" : "",
            level: "success",
          });
          close();
        },
      },
    ],
  });
}

function lines(text) {
  return text
    .split(/[\n,，]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}
