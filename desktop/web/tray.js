// The tray and clock: network (browser online + event stream
// connected), volume/mute (silences speech and media), LLM API status from
// GET /api/health (`llm`: not_configured | ok | failing; anything else shown as
// unknown), and a clock that opens a month calendar (closed by Escape or a click
// elsewhere).

import { api } from "./api.js";
import { clear, el } from "./dom.js";
import { language, onLanguageChange, tr } from "./i18n.js";
import { speech } from "./speech.js";

const LLM_STATES = {
  ok: { icon: "🧠", cls: "ok", text: ["大模型 API 正常", "LLM API ok"] },
  failing: { icon: "🧠", cls: "bad", text: ["大模型 API 连接失败", "LLM API failing"] },
  not_configured: { icon: "🧠", cls: "off", text: ["未配置大模型 API 密钥", "LLM API key not set"] },
};
const UNKNOWN_LLM = { icon: "🧠", cls: "unknown", text: ["大模型 API 状态未知", "LLM status unknown"] };
const WEEKDAYS = { zh: ["日", "一", "二", "三", "四", "五", "六"], en: ["Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"] };

export function createTray() {
  const network = document.getElementById("tray_network");
  const volume = document.getElementById("tray_volume");
  const llm = document.getElementById("tray_llm");
  const clock = document.getElementById("clock");
  const calendar = document.getElementById("calendar");
  let streamUp = false;
  let controllerUp = true;

  const showNetwork = () => {
    const online = navigator.onLine !== false;
    const ok = streamUp && controllerUp;
    network.textContent = ok ? (online ? "🌐" : "🏠") : "⚠️";
    network.dataset.state = ok ? (online ? "ok" : "local") : "bad";
    network.title = ok
      ? online
        ? tr("已连接主控，网络在线", "Controller connected, online")
        : tr("已连接主控，网络离线", "Controller connected, offline")
      : tr("与主控的连接中断", "Controller connection lost");
  };
  window.addEventListener("online", showNetwork);
  window.addEventListener("offline", showNetwork);

  const showVolume = (muted) => {
    volume.textContent = muted ? "🔇" : "🔊";
    volume.dataset.state = muted ? "muted" : "on";
    volume.title = muted ? tr("已静音，点击取消", "Muted: click for sound") : tr("声音开启，点击静音", "Sound on: click to mute");
    for (const media of document.querySelectorAll("audio, video")) media.muted = muted;
  };
  volume.addEventListener("click", () => speech.setMuted(!speech.muted));
  speech.onMuteChange(showVolume);
  // Media created later inherit the mute state.
  new MutationObserver(() => {
    if (speech.muted) for (const media of document.querySelectorAll("audio, video")) media.muted = true;
  }).observe(document.getElementById("desktop"), { childList: true, subtree: true });

  const showLlm = (value) => {
    const info = LLM_STATES[value] || UNKNOWN_LLM;
    llm.textContent = info.icon;
    llm.dataset.state = info.cls;
    llm.title = tr(...info.text);
  };

  const pollHealth = async () => {
    try {
      const health = await api.health();
      controllerUp = true;
      showLlm(health && typeof health === "object" ? health.llm : undefined);
    } catch {
      controllerUp = false;
      showLlm(undefined);
    }
    showNetwork();
  };

  const tick = () => {
    const now = new Date();
    const pad = (n) => String(n).padStart(2, "0");
    clock.querySelector(".clock-time").textContent = `${pad(now.getHours())}:${pad(now.getMinutes())}`;
    clock.querySelector(".clock-date").textContent = `${now.getFullYear()}/${pad(now.getMonth() + 1)}/${pad(now.getDate())}`;
    clock.title = now.toLocaleString(tr("zh-CN", "en-US"), { dateStyle: "full", timeStyle: "medium" });
  };
  tick();
  setInterval(tick, 1000);

  let shownMonth = null;
  const renderCalendar = () => {
    clear(calendar);
    const today = new Date();
    const first = new Date(shownMonth.getFullYear(), shownMonth.getMonth(), 1);
    const days = new Date(first.getFullYear(), first.getMonth() + 1, 0).getDate();
    const step = (delta) => () => {
      shownMonth = new Date(shownMonth.getFullYear(), shownMonth.getMonth() + delta, 1);
      renderCalendar();
    };
    const grid = el("div", { className: "cal-grid" }, WEEKDAYS[language()].map((d) => el("span", { className: "cal-head", text: d })));
    for (let i = 0; i < first.getDay(); i += 1) grid.append(el("span", { className: "cal-blank" }));
    for (let day = 1; day <= days; day += 1) {
      const isToday =
        day === today.getDate() &&
        first.getMonth() === today.getMonth() &&
        first.getFullYear() === today.getFullYear();
      grid.append(el("span", { className: isToday ? "cal-day cal-today" : "cal-day", text: String(day) }));
    }
    calendar.append(
      el(
        "div",
        { className: "cal-nav" },
        el("button", { type: "button", text: "‹", title: tr("上个月", "Previous month"), on: { click: step(-1) } }),
        el("span", {
          className: "cal-month",
          text: tr(`${first.getFullYear()}年${first.getMonth() + 1}月`, `${first.getFullYear()}-${String(first.getMonth() + 1).padStart(2, "0")}`),
        }),
        el("button", { type: "button", text: "›", title: tr("下个月", "Next month"), on: { click: step(1) } }),
      ),
      grid,
    );
  };
  clock.addEventListener("click", (event) => {
    event.stopPropagation();
    calendar.hidden = !calendar.hidden;
    if (!calendar.hidden) {
      const now = new Date();
      shownMonth = new Date(now.getFullYear(), now.getMonth(), 1);
      renderCalendar();
    }
  });
  document.addEventListener("pointerdown", (event) => {
    if (!event.target.closest("#calendar, #clock")) calendar.hidden = true;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") calendar.hidden = true;
  });

  showVolume(speech.muted);
  showLlm(undefined);
  showNetwork();
  pollHealth();
  setInterval(pollHealth, 15000);
  onLanguageChange(() => {
    // every tooltip again, in the new language
    showVolume(speech.muted);
    showNetwork();
    pollHealth();
  });

  return {
    setStreamState(up) {
      streamUp = up;
      showNetwork();
    },
    pollHealth,
  };
}
