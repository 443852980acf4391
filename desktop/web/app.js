// The desktop's entry point: builds the window manager, taskbar, tray, command
// bar and UI-command handler, loads the apps, follows the controller's event
// stream and keeps the UI snapshot up to date.
// Ctrl+Alt+R (or the start menu's ↺) restores the desktop layout that UI commands
// changed; an element a UI command changed is brought into view.
// An uninstalled app's window closes with a notice. While the controller cannot be
// reached the desktop says so (the status line, a notice, grey status dots) and
// retries by itself; once it answers, the desktop is ready again without a reload.
// A reload of the page keeps the open windows; the UI commands' changes are the user's,
// kept by the controller, and every page starts with them (persist.js).

import { api } from "./api.js";
import { AgentLive } from "./agentlive.js";
import { AppViews } from "./appview.js";
import { createCommandBar } from "./commandbar.js";
import { installConfirmations } from "./confirm.js";
import { watchConnection } from "./connection.js";
import { confirmUninstall, openAbout, openInstall } from "./dialogs.js";
import { asObject, asText } from "./dom.js";
import { connectEvents } from "./events.js";
import { appName, onLanguageChange, setLanguage, tr, translatePage } from "./i18n.js";
import { layoutBack, loadLayout, restoreWindows, saveLayout, saveSoon } from "./persist.js";
import { openSettings } from "./settings.js";
import { openTools } from "./tools.js";
import { warnDamagedState } from "./problems.js";
import { postSnapshot, watchLayout } from "./snapshot.js";
import { pickedVoice, speech } from "./speech.js";
import { appInfo, forgetAppStatuses, removeApp, setApps, setAppStatus, state } from "./state.js";
import { createTaskbar } from "./taskbar.js";
import { toast } from "./toast.js";
import { createTray } from "./tray.js";
import { installUiCommands, postUiCommands, resetLayout } from "./uicommands.js";
import { WindowManager } from "./windows.js";

let taskbar = null;
let uiEvents = 0; // ui_commands events received

const windows = new WindowManager(document.getElementById("desktop"), () => {
  taskbar?.markWindows();
  saveSoon(windows);
});
const views = new AppViews(windows, toast);
translatePage();
// a switched language: each open window asks its app for its view again, in the new
// one; a window holding what the user typed and did not send keeps it (nothing lost)
onLanguageChange(() => {
  for (const win of windows.windows.values()) if (!holdsTyping(win)) views.load(win);
  if (document.body.dataset.ready === "true" && !document.body.dataset.connection) showReady();
});

function holdsTyping(win) {
  if (win.node.dataset.typed === "true") return true; // an input in it since it last rendered
  // a form that holds text (the code being edited, kept after a refusal)
  return [...win.content.querySelectorAll("textarea, input[type=text]")].some((field) => field.value.trim() !== "");
}
document.addEventListener("input", (event) => {
  const win = event.target instanceof Element ? event.target.closest(".window") : null;
  if (win) win.dataset.typed = "true";
});

async function loadApps() {
  try {
    setApps(await api.apps());
    return true;
  } catch (exc) {
    if (exc.status === 403) {
      toast({
        title: tr("令牌无效", "Bad token"),
        body: tr("请用 aios start 打印的地址打开桌面", "Open the desktop with the address aios start printed"),
        level: "error",
        timeout: 0,
      });
    }
    return false;
  }
}

async function loadVoiceSettings() {
  try {
    const settings = asObject(await api.getSettings());
    speech.configure({ rate: settings.voice_rate, lang: pickedVoice(settings) });
    if (setLanguage(settings.ui_language)) taskbar?.renderIcons();
  } catch {
    // defaults stay (zh-CN, 0.9)
  }
}

// when each removal was last announced: the dialog and the event both tell of one
const announcedRemovals = new Map();

/** The app `appId` was uninstalled (here or elsewhere): its window closes with a notice. */
function appRemoved(appId) {
  const win = windows.get(appId);
  if (!state.apps.has(appId) && !win) return; // already done
  const said = announcedRemovals.get(appId);
  if (!win && said !== undefined && Date.now() - said < 10000) {
    removeApp(appId); // a list fetched meanwhile may still have named it
    return;
  }
  announcedRemovals.set(appId, Date.now());
  const name = asText(state.apps.has(appId) ? appName(state.apps.get(appId)) : win?.title.textContent || appId);
  views.idle(appId);
  if (win) windows.close(appId);
  removeApp(appId);
  toast({
    title: tr(`「${name}」已卸载`, `${name} was uninstalled`),
    body: win ? tr("它的窗口已关闭", "Its window was closed") : "",
    level: "info",
  });
  loadApps();
}

// A scheduled job's run (its session `sess_sched…`) happens while the user does other
// things: its result goes into its app's window only when that window is open, without
// raising it; the scheduler's own window, showing its list, is refreshed in place. A
// run that told the user itself (a reminder's notification) is not announced again by
// the scheduler's "ran" notice. The two arrive in either order (the notification is
// relayed from the executor, the notice comes from the controller itself), so a
// session-less info notice waits a moment for a notification of the same app.
const SCHEDULED_SESSION = "sess_sched";
const HOLD_MS = 2000; // how long a "ran" notice waits for the run's own notification
const toldBy = new Map(); // app id → when a scheduled run of it last showed a notification
const held = new Map(); // app id → timers of notices waiting for that notification

function scheduled(event) {
  return asText(event.session_id).startsWith(SCHEDULED_SESSION);
}

function scheduledResult(appId, reply) {
  const scheduler = [...state.apps.values()].find((app) => app.system_role === "scheduler");
  const own = windows.get(appId);
  if (own && appId !== scheduler?.id) views.render(own, reply);
  const list = scheduler ? windows.get(scheduler.id) : null;
  if (list && list.node.dataset.viewType === "list") views.refreshQuietly(list);
}

/** Show a `notify` event's toast with `show`, unless it is the scheduler's "ran" notice
 * of a run that told the user itself, before or just after this notice. */
function announce(event, level, show) {
  const appId = asText(event.app_id);
  if (scheduled(event)) {
    const waiting = held.get(appId) ?? [];
    if (waiting.length) clearTimeout(waiting.shift()); // its "ran" notice came first
    else toldBy.set(appId, Date.now()); // its "ran" notice is still to come
    show();
    return;
  }
  if (event.session_id || level !== "info") {
    show();
    return;
  }
  const told = toldBy.get(appId);
  if (told !== undefined && Date.now() - told < 15000) {
    toldBy.delete(appId);
    return;
  }
  const waiting = held.get(appId) ?? [];
  held.set(appId, waiting);
  const timer = setTimeout(() => {
    waiting.splice(waiting.indexOf(timer), 1);
    show();
  }, HOLD_MS);
  waiting.push(timer);
}

/** The desktop's ready line (on the wallpaper). */
function showStatus(text) {
  document.getElementById("desktop_status").textContent = text;
}

function showReady() {
  document.body.dataset.ready = "true";
  showStatus(tr("就绪", "Ready"));
}

let lostNotice = null;

/** The controller cannot be reached: say so, and that the desktop keeps trying. */
function connectionLost() {
  document.body.dataset.connection = "lost";
  showStatus(tr("无法连接主控，正在重试…", "Controller not reachable — retrying…"));
  forgetAppStatuses();
  tray.pollHealth();
  lostNotice?.remove();
  lostNotice = toast({
    title: tr("无法连接主控", "Controller not reachable"),
    body: tr("桌面会自动重新连接，不用刷新页面", "The desktop reconnects by itself; no need to reload the page"),
    level: "warning",
    timeout: 0,
  });
}

/** The controller answers again: everything it shows is fetched again. */
async function connectionBack() {
  delete document.body.dataset.connection;
  lostNotice?.remove();
  lostNotice = null;
  tray.pollHealth();
  layoutBack().then((read) => read && snapshotSoon());
  if (await loadApps()) {
    showReady();
    toast({ title: tr("已重新连接主控", "Controller reconnected"), level: "success", timeout: 3000 });
  } else {
    showStatus(tr("未连接主控", "Controller not reachable"));
  }
}

function refresh() {
  loadApps();
  tray.pollHealth();
  events.reconnect();
  toast({ title: tr("已刷新", "Refreshed"), level: "info", timeout: 2000 });
}

/** Undo every UI command (Ctrl+Alt+R, the start menu): the way back from any of them. */
function restoreLayout() {
  const undone = resetLayout();
  toast({
    title: tr("已还原桌面布局", "Desktop layout restored"),
    body: undone ? "" : tr("没有需要还原的改动", "Nothing was changed"),
    level: "info",
    timeout: 2500,
  });
}

/** Keep an element a UI command changed in view: raise the window holding it. */
function reveal(node) {
  const owner = node.closest(".window");
  const win = owner ? windows.get(owner.dataset.appId) : null;
  if (win) win.restore();
}

taskbar = createTaskbar({
  windows,
  actions: {
    openApp: (appId) => views.open(appId),
    uninstall: (appId) => confirmUninstall(appInfo(appId), appRemoved),
    settings: () => openSettings(toast),
    tools: () => openTools(toast),
    refresh,
    layout: restoreLayout,
    about: openAbout,
    install: () => openInstall(toast, loadApps),
  },
});
// a reply's link to one of the desktop's places (actions.js isPlace)
window.addEventListener("aios:place", (event) => {
  const place = asText(event.detail);
  if (place === "aios:settings") openSettings(toast);
  else if (place.startsWith(FILES_PLACE)) chooseFiles(place.slice(FILES_PLACE.length));
});

const FILES_PLACE = "aios:files#";

/** Open the file chooser of the `file` control `id` of a window (its window in front),
 * as a click on it would: the files chosen go to that control's app. Called within
 * the click on the link, so the browser lets the chooser open. */
function chooseFiles(id) {
  const control = document.getElementById(id);
  const owner = control?.closest(".window");
  const button = control?.dataset.uiType === "file" ? control.querySelector("button") : null;
  if (!owner || !button) {
    toast({
      title: tr("找不到添加文件的按钮", "No button to add files"),
      body: tr("它所在的窗口可能已经关闭或换了内容", "Its window may have closed or shows something else now"),
      level: "warning",
    });
    return;
  }
  windows.get(owner.dataset.appId)?.restore();
  button.click();
}
const tray = createTray();
const commandBar = createCommandBar({ views, toast });

installUiCommands({
  windows,
  openApp: (appId) => views.open(appId),
  warn: (text) => toast({ title: tr("界面命令", "UI command"), body: text, level: "warning" }),
  reveal,
  changed: () => {
    saveSoon(windows);
    saveLayout();
    postSnapshot(); // what the system app reads to undo it, at once
  },
  hint: () =>
    toast({
      title: tr("任务栏已隐藏", "Taskbar hidden"),
      body: tr("按 Ctrl+Alt+R 还原桌面布局，或在指令栏说“显示任务栏”", "Press Ctrl+Alt+R to restore the layout, or ask for the taskbar in the command bar"),
      level: "info",
      timeout: 8000,
    }),
});

window.addEventListener("keydown", (event) => {
  if (event.ctrlKey && event.altKey && event.key.toLowerCase() === "r") {
    event.preventDefault();
    restoreLayout();
  }
});

const confirms = installConfirmations({ views, toast });
const agentLive = new AgentLive(windows);

const events = connectEvents(
  {
    agent_progress: (e) => agentLive.update(e),
    confirm_request: (e) => confirms.request(e),
    confirm_resolved: (e) => confirms.resolved(e),
    task_done: (e) => {
      // results of instructions sent elsewhere (the CLI, the server's microphone)
      const data = asObject(e.data);
      if (e.app_id) views.idle(e.app_id);
      if (!e.app_id || !data.result || data.client_id === api.clientId) return;
      if (scheduled(e)) scheduledResult(e.app_id, data.result);
      else views.show(e.app_id, data.result);
    },
    task_started: (e) => {
      // the event stream can lag behind the answer: a start of this desktop's own
      // instruction that comes when none is waiting belongs to one already shown
      if (e.data?.client_id === api.clientId && state.instructionsInFlight === 0) return;
      const label = `${tr("处理中：", "Working on: ")}${asText(e.data?.instruction ?? "")}`;
      if (e.app_id) {
        views.busySoon(e.app_id, { taskId: asText(e.data?.task_id) || null, sessionId: asText(e.session_id) || null, label });
      }
    },
    step_done: (e) => {
      if (!views.isWorking(e.app_id)) return; // its work has ended (a late event)
      const text = `${tr("步骤", "Step")} ${asText(e.data?.step ?? "")} ${asText(e.data?.tool ?? "")}: ${asText(e.data?.status ?? "")}`;
      views.progress(e.app_id, text);
    },
    notify: (e) => {
      const data = asObject(e.data);
      const level = asText(data.level || "info");
      announce(e, level, () =>
        toast({ title: data.title ?? e.app_id ?? tr("通知", "Notice"), body: data.body ?? "", level }),
      );
    },
    ui_commands: (e) => {
      uiEvents += 1; // each event is one answer's commands: one step of the layout's history
      postUiCommands(asObject(e.data).commands, `event:${uiEvents}`);
    },
    speak: (e) => speech.say(asText(asObject(e.data).text)),
    app_status: (e) => {
      const data = asObject(e.data);
      // "removed": uninstalled or its folder deleted
      if (data.status === "removed") appRemoved(asText(e.app_id || data.id));
      else if (e.app_id && state.apps.has(e.app_id)) setAppStatus(e.app_id, data.status);
      else loadApps();
    },
  },
  (up) => {
    tray.setStreamState(up);
    connection.streamState(up);
  },
);
const connection = watchConnection({ events, lost: connectionLost, back: connectionBack });

const snapshotSoon = watchLayout();
// what UI commands changed, here or in another browser; the system app sees it in the
// snapshot posted once the page has settled
loadLayout().then((read) => read && snapshotSoon());
// the settings' language before the first toasts: a switch puts away what was said before it
const settingsRead = loadVoiceSettings();
const speechReady = settingsRead.then(() => speech.init());
loadApps().then(async (ok) => {
  if (!ok && document.body.dataset.connection !== "lost") {
    document.body.dataset.ready = "error";
    showStatus(tr("未连接主控", "Controller not reachable"));
  }
  if (ok) {
    showReady();
    restoreWindows(windows, (appId, reply) => views.reopen(appId, reply), (appId) => state.apps.has(appId));
    await settingsRead;
    toast({
      title: tr("欢迎使用 Triton AIOS", "Welcome to Triton AIOS"),
      body: tr("在下方输入指令，或从开始菜单打开应用", "Type an instruction below, or open an app from the start menu"),
      level: "success",
    });
    speechReady.then(() => speech.say(tr("欢迎使用 Triton AIOS", "Welcome to Triton AIOS"))); // the server says it when it can
    warnDamagedState(toast);
  }
});
setInterval(loadApps, 10000);

// For tests and debugging: the live objects (no app data is evaluated through it).
window.aios = { windows, views, commandBar, state };
