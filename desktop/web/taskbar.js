// The taskbar: start button and start menu listing every app,
// one icon per app showing its status (starting / running / restarting / failed)
// and whether its window is open, and the right-click system menu (settings,
// refresh, about). Each start-menu entry says how its app runs (in a sandbox or
// unconfined, reaching the internet: dialogs.js `appFacts`). The command bar and the tray live in their own modules.
// Clicking the icon of the focused window minimises it; menus open above the
// taskbar; Escape closes them. A start-menu entry offers to uninstall its app,
// except for apps the system relies on (a manifest `system_role`: the assistant
// that takes what no other app claims, the skills runner, the scheduler's window).

import { appFacts, factChip, factNote } from "./dialogs.js";
import { asText, clear, el } from "./dom.js";
import { appDescription, appName, onLanguageChange, tr } from "./i18n.js";
import { onAppsChanged, state } from "./state.js";

const STATUS_TEXT = {
  idle: ["未启动（用时启动）", "idle (starts on first use)"],
  starting: ["启动中", "starting"],
  running: ["运行中", "running"],
  restarting: ["重启中", "restarting"],
  failed: ["启动失败", "failed"],
  stopped: ["已停止", "stopped"],
  unknown: ["状态未知", "status unknown"], // the controller cannot be reached
};

export function statusText(status) {
  const known = STATUS_TEXT[status];
  return known ? tr(...known) : `${tr("未知", "unknown")} ${asText(status)}`.trim();
}

/**
 * Build the taskbar's left part and menus. `actions`: {openApp(id), uninstall(id),
 * settings(), refresh(), about()}; `windows`: the WindowManager (for open/focused marks).
 */
export function createTaskbar({ actions, windows }) {
  const taskbar = document.getElementById("taskbar");
  const icons = document.getElementById("taskbar_apps");
  const startButton = document.getElementById("start_button");
  const startMenu = document.getElementById("start_menu");
  const startList = document.getElementById("start_menu_apps");
  const systemMenu = document.getElementById("system_menu");

  const closeMenus = () => {
    startMenu.hidden = true;
    systemMenu.hidden = true;
    startButton.classList.remove("active");
  };

  startButton.addEventListener("click", (event) => {
    event.stopPropagation();
    const show = startMenu.hidden;
    closeMenus();
    startMenu.hidden = !show;
    startButton.classList.toggle("active", show);
  });

  let shownIds = "";

  /** Rebuild the icons when the set of apps changes; otherwise update them in place. */
  const renderIcons = () => {
    const apps = [...state.apps.values()];
    const ids = apps.map((a) => a.id).join("\n");
    if (ids !== shownIds) {
      shownIds = ids;
      clear(icons);
      clear(startList);
      if (apps.length === 0) {
        startList.append(el("li", { className: "start-empty", text: tr("（没有已安装的应用）", "(no apps installed)") }));
      }
      for (const app of apps) {
        icons.append(buildIcon(app, actions, windows));
        startList.append(buildStartItem(app, actions, closeMenus));
      }
    }
    for (const app of apps) updateStatus(app);
    markWindows();
  };

  const markWindows = () => {
    const focused = windows.focused();
    for (const icon of icons.children) {
      const win = windows.get(icon.dataset.appId);
      icon.classList.toggle("open", Boolean(win));
      icon.classList.toggle("minimized", Boolean(win?.minimised));
      icon.classList.toggle("active", Boolean(win && win === focused));
    }
  };

  const openSystemMenu = (x, y) => {
    closeMenus();
    systemMenu.hidden = false;
    const rect = systemMenu.getBoundingClientRect();
    const bar = taskbar.classList.contains("ui-hidden") ? null : taskbar.getBoundingClientRect();
    const floor = (bar && bar.height ? bar.top : window.innerHeight) - 4; // never over the taskbar
    systemMenu.style.left = `${Math.max(4, Math.min(x, window.innerWidth - rect.width - 4))}px`;
    systemMenu.style.top = `${Math.max(4, Math.min(y, floor - rect.height))}px`;
  };

  const onContextMenu = (event) => {
    if (event.target.closest(".window, input, textarea, #start_menu")) return;
    event.preventDefault();
    openSystemMenu(event.clientX, event.clientY);
  };
  taskbar.addEventListener("contextmenu", onContextMenu);
  document.getElementById("desktop").addEventListener("contextmenu", onContextMenu);

  for (const item of document.querySelectorAll("[data-system-action]")) {
    item.addEventListener("click", () => {
      closeMenus();
      actions[item.dataset.systemAction]?.();
    });
  }

  document.addEventListener("pointerdown", (event) => {
    if (!event.target.closest("#start_menu, #start_button, #system_menu")) closeMenus();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeMenus();
  });

  onAppsChanged(renderIcons);
  onLanguageChange(() => {
    shownIds = ""; // every label is drawn again in the new language
    renderIcons();
  });
  renderIcons();
  return { markWindows, renderIcons, closeMenus, openSystemMenu };
}

/** The app's taskbar icon: opens or raises its window; on the focused window, minimises it. */
function buildIcon(app, actions, windows) {
  const label = asText(appName(app));
  const click = () => {
    const win = windows.get(app.id);
    if (win && win === windows.focused()) win.minimise();
    else actions.openApp(app.id);
  };
  return el(
    "button",
    {
      type: "button",
      id: `task_${app.id}`,
      className: "task-icon",
      dataset: { appId: app.id, uiType: "taskbar_icon", uiLabel: label },
      on: { click },
    },
    el("span", { className: "task-emoji", text: asText(app.icon || "📦") }),
    el("span", { className: "task-status-dot" }),
  );
}

/** The start menu's uninstall control of `app`, or null for an app the system relies on. */
function buildUninstall(app, actions, closeMenus) {
  if (app.system_role || !actions.uninstall) return null;
  const name = asText(appName(app));
  const label = tr(`卸载「${name}」`, `Uninstall ${name}`);
  return el("button", {
    type: "button",
    className: "start-item-uninstall",
    text: "🗑",
    title: label,
    attrs: { "aria-label": label },
    on: {
      click: () => {
        closeMenus();
        actions.uninstall(app.id);
      },
    },
  });
}

function buildStartItem(app, actions, closeMenus) {
  return el(
    "li",
    { className: "start-entry" },
    el(
      "button",
      {
        type: "button",
        className: "start-item",
        dataset: { appId: app.id },
        on: {
          click: () => {
            closeMenus();
            actions.openApp(app.id);
          },
        },
      },
      el("span", { className: "start-item-icon", text: asText(app.icon || "📦") }),
      el(
        "span",
        { className: "start-item-text" },
        el("span", { className: "start-item-name", text: asText(appName(app)) }),
        el("span", { className: "start-item-desc", text: asText(appDescription(app)) }),
        el("span", { className: "start-item-facts" }),
      ),
      el("span", { className: "start-item-status" }),
    ),
    buildUninstall(app, actions, closeMenus),
  );
}

/** Show `app.status` and how it runs on its taskbar icon and start-menu entry. */
function updateStatus(app) {
  const status = asText(app.status || "unknown");
  const label = asText(appName(app));
  const facts = appFacts(app);
  const factLines = facts.map((f) => (f.level === "warning" && f.note ? `${f.mark} ${f.text}: ${factNote(f)}` : `${f.mark} ${f.text}`));
  const icon = document.getElementById(`task_${app.id}`);
  if (icon) {
    icon.className = icon.className.replace(/\bstatus-\S+/g, "").trim();
    icon.classList.add(`status-${status}`);
    icon.dataset.status = status;
    icon.title = [label, statusText(status), appDescription(app), ...factLines, app.error].filter(Boolean).join("\n");
    icon.setAttribute("aria-label", tr(`${label}（${statusText(status)}）`, `${label} (${statusText(status)})`));
  }
  for (const item of document.querySelectorAll("#start_menu_apps .start-item")) {
    if (item.dataset.appId !== app.id) continue;
    item.dataset.status = status;
    const badge = item.querySelector(".start-item-status");
    badge.className = `start-item-status status-${status}`;
    badge.textContent = statusText(status);
    const shown = item.querySelector(".start-item-facts");
    const key = JSON.stringify(facts);
    if (shown.dataset.key !== key) {
      shown.dataset.key = key;
      clear(shown);
      shown.append(...facts.map(factChip));
    }
  }
}
