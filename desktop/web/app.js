// The desktop's entry point: builds the window manager, taskbar, tray, command
// bar and UI-command handler, loads the apps, follows the controller's event
// stream and keeps the UI snapshot up to date (S-20..S-24, S-34, S-80..S-82).

import { api } from "./api.js";
import { AppViews } from "./appview.js";
import { createCommandBar } from "./commandbar.js";
import { installConfirmations } from "./confirm.js";
import { openAbout } from "./dialogs.js";
import { asObject, asText } from "./dom.js";
import { connectEvents } from "./events.js";
import { openSettings } from "./settings.js";
import { watchLayout } from "./snapshot.js";
import { speech } from "./speech.js";
import { setApps, setAppStatus, state } from "./state.js";
import { createTaskbar } from "./taskbar.js";
import { toast } from "./toast.js";
import { createTray } from "./tray.js";
import { installUiCommands, postUiCommands, releaseFloating, syncFloating } from "./uicommands.js";
import { WindowManager } from "./windows.js";

let taskbar = null;

const windows = new WindowManager(document.getElementById("desktop"), (kind, win) => {
  if (kind === "close") releaseFloating(win.node.id);
  syncFloating();
  taskbar?.markWindows();
});
const views = new AppViews(windows, toast);

async function loadApps() {
  try {
    setApps(await api.apps());
    return true;
  } catch (exc) {
    if (exc.status === 403) {
      toast({ title: "令牌无效 (bad token)", body: "请用 aios start 打印的地址打开桌面", level: "error", timeout: 0 });
    }
    return false;
  }
}

async function loadVoiceSettings() {
  try {
    const settings = asObject(await api.getSettings());
    speech.configure({ rate: settings.voice_rate, lang: settings.default_voice });
  } catch {
    // defaults stay (zh-CN, 0.9)
  }
}

function refresh() {
  loadApps();
  tray.pollHealth();
  events.reconnect();
  toast({ title: "已刷新 (refreshed)", level: "info", timeout: 2000 });
}

taskbar = createTaskbar({
  windows,
  actions: {
    openApp: (appId) => views.open(appId),
    settings: () => openSettings(toast),
    refresh,
    about: openAbout,
  },
});
const tray = createTray();
const commandBar = createCommandBar({ views, toast });

installUiCommands({
  windows,
  openApp: (appId) => views.open(appId),
  warn: (text) => toast({ title: "界面命令 (UI command)", body: text, level: "warning" }),
});

const confirms = installConfirmations({ views, toast });

const events = connectEvents(
  {
    confirm_request: (e) => confirms.request(e),
    confirm_resolved: (e) => confirms.resolved(e),
    task_done: (e) => {
      // results of instructions sent elsewhere (the CLI, the server's microphone)
      const data = asObject(e.data);
      if (e.app_id && data.result && data.client_id !== api.clientId) views.show(e.app_id, data.result);
    },
    task_started: (e) => views.status(e.app_id, `处理中：${asText(e.data?.instruction ?? "")}`, "busy"),
    step_done: (e) =>
      views.status(e.app_id, `步骤 ${asText(e.data?.step ?? "")} ${asText(e.data?.tool ?? "")}：${asText(e.data?.status ?? "")}`, "busy"),
    notify: (e) => {
      const data = asObject(e.data);
      toast({ title: data.title ?? e.app_id ?? "通知", body: data.body ?? "", level: asText(data.level || "info") });
    },
    ui_commands: (e) => postUiCommands(asObject(e.data).commands),
    speak: (e) => speech.say(asText(asObject(e.data).text)),
    app_status: (e) => {
      const data = asObject(e.data);
      if (e.app_id && state.apps.has(e.app_id)) setAppStatus(e.app_id, data.status);
      else loadApps();
    },
  },
  (up) => tray.setStreamState(up),
);

watchLayout();
const speechReady = loadVoiceSettings().then(() => speech.init());
loadApps().then((ok) => {
  document.body.dataset.ready = ok ? "true" : "error";
  const status = document.getElementById("desktop_status");
  status.textContent = ok ? "就绪 (ready)" : "未连接主控 (controller not reachable)";
  if (ok) {
    toast({ title: "欢迎使用 Triton AIOS", body: "在下方输入指令，或从开始菜单打开应用", level: "success" });
    speechReady.then(() => speech.say("欢迎使用 Triton AIOS")); // S-34 (the server says it when it can)
  }
});
setInterval(loadApps, 10000);

// For tests and debugging: the live objects (no app data is evaluated through it).
window.aios = { windows, views, commandBar, state };
