// Modal dialogs of the desktop: one helper that shows a titled box over the
// desktop (it takes the focus; closed by ✕, Escape or a click outside), the About
// box, an app's own About panel and the question before an app is uninstalled. `appFacts` is the one table of how an app runs (GET /api/apps:
// `sandbox`, `sandbox_note`, `network`) that the start menu and windows show too.

import { api } from "./api.js";
import { asText, el } from "./dom.js";
import { appDescription, appName, language, tr } from "./i18n.js";
import { technicalDetails } from "./views.js";

/**
 * Show a modal with `body` nodes and `buttons` [{id, text, primary, onClick}]; returns
 * {node, close}. It takes the focus (the element with the id `focus`, else the box),
 * keeps Tab and Shift+Tab among its own controls while it is the top dialog, and gives
 * the focus back when closed.
 */
export function openModal({ id, title, body = [], buttons = [], focus = "" }) {
  document.getElementById(id)?.remove();
  const root = document.getElementById("modal_root");
  const before = document.activeElement;
  const close = () => {
    overlay.remove();
    document.removeEventListener("keydown", onKey);
    // back to where the focus was; a control of a menu that has closed meanwhile
    // hands it to the command bar
    const held = before instanceof HTMLElement && before !== document.body && before.isConnected && before.getClientRects().length;
    const back = held ? before : document.getElementById("command_input");
    back?.focus();
  };
  const onKey = (event) => {
    if (root.lastElementChild !== overlay) return; // a dialog above this one has the keys
    if (event.key === "Escape") close();
    else if (event.key === "Tab") keepTab(event, box);
  };
  const box = el(
    "div",
    {
      className: "modal",
      id,
      attrs: { role: "dialog", "aria-modal": "true", "aria-label": asText(title), tabindex: "-1" },
      dataset: { uiType: "dialog", uiLabel: asText(title) },
    },
    el(
      "header",
      { className: "modal-head" },
      el("span", { className: "modal-title", text: asText(title) }),
      el("button", { type: "button", className: "modal-x", text: "✕", attrs: { "aria-label": tr("关闭", "Close") }, on: { click: close } }),
    ),
    el("div", { className: "modal-body" }, body),
    buttons.length
      ? el(
          "footer",
          { className: "modal-foot" },
          buttons.map((b) =>
            el("button", {
              type: "button",
              className: b.primary ? "btn-primary" : "btn-plain",
              id: b.id,
              text: b.text,
              on: { click: () => b.onClick(close) },
            }),
          ),
        )
      : null,
  );
  const overlay = el("div", { className: "modal-overlay", on: { pointerdown: (e) => e.target === overlay && close() } }, box);
  root.append(overlay);
  document.addEventListener("keydown", onKey);
  ((focus && box.querySelector(`#${CSS.escape(focus)}`)) || box).focus();
  return { node: box, close };
}

const FOCUSABLE = "button, [href], input, select, textarea, summary, [tabindex]:not([tabindex='-1'])";

/** Tab from the last control of `box` goes to its first (Shift+Tab the other way round). */
function keepTab(event, box) {
  const controls = [...box.querySelectorAll(FOCUSABLE)].filter(
    (node) => !node.disabled && !node.closest("[hidden]") && node.getClientRects().length > 0,
  );
  if (controls.length === 0) {
    event.preventDefault();
    box.focus();
    return;
  }
  const first = controls[0];
  const last = controls[controls.length - 1];
  const inside = box.contains(document.activeElement) && document.activeElement !== box;
  if (event.shiftKey && (!inside || document.activeElement === first)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (!inside || document.activeElement === last)) {
    event.preventDefault();
    first.focus();
  }
}

/** How an app runs, by GET /api/apps' `sandbox`; `level` "warning" marks the unconfined. */
const RUNS = {
  bubblewrap: {
    mark: "🛡️",
    level: "ok",
    text: ["在沙箱中运行", "Runs in a sandbox"],
    note: [
      "系统只读，只能写自己的工作区；看不到你的主目录、设置和其他应用",
      "The system is read-only and it writes only its own workspace; it cannot see your home folder, your settings or other apps",
    ],
  },
  none: {
    mark: "⚠️",
    level: "warning",
    text: ["未隔离运行", "Runs unconfined"],
    note: [
      "它能读写你能读写的一切：只应运行你信任的应用",
      "It can read and write everything you can: run only apps you trust this way",
    ],
  },
};
const INTERNET = {
  mark: "🌐",
  level: "info",
  text: ["可访问互联网", "Can reach the internet"],
  note: ["它的清单声明它自己连接互联网", "Its manifest says it connects to the internet itself"],
};

/**
 * What the desktop says about how `app` runs: [{kind, mark, level, text, note, detail}], its
 * confinement (known once it was started) and whether it reaches the internet.
 */
export function appFacts(app) {
  const facts = [];
  const runs = RUNS[app?.sandbox];
  if (runs) {
    facts.push({
      kind: "sandbox",
      mark: runs.mark,
      level: runs.level,
      text: tr(...runs.text),
      note: tr(...runs.note),
      // the controller's reason, in its technical words, which are English: shown to an
      // English reader only (the plain note says it in Chinese)
      detail: language() === "en" ? asText(app.sandbox_note) : "",
    });
  }
  if (app?.network === true) {
    facts.push({ kind: "network", mark: INTERNET.mark, level: INTERNET.level, text: tr(...INTERNET.text), note: tr(...INTERNET.note) });
  }
  return facts;
}

/** A fact's plain note, then its technical detail, one per line. */
export function factNote(fact) {
  return [fact.note, fact.detail].filter(Boolean).join("\n");
}

/** One fact as a small chip (its mark and text; the note and detail as its tooltip). */
export function factChip(fact) {
  return el(
    "span",
    { className: "app-fact", title: factNote(fact) || fact.text, dataset: { fact: fact.kind, level: fact.level } },
    el("span", { className: "app-fact-mark", text: fact.mark, attrs: { "aria-hidden": "true" } }),
    fact.text,
  );
}

/** An app's About panel: its name, description and how it runs, each fact with its note. */
export function openAppInfo(app) {
  const name = asText(appName(app));
  const facts = appFacts(app);
  const rows = facts.map((fact) =>
    el(
      "li",
      { className: "app-info-fact", dataset: { fact: fact.kind, level: fact.level } },
      el("span", { className: "app-fact-mark", text: fact.mark, attrs: { "aria-hidden": "true" } }),
      el(
        "div",
        {},
        el("strong", { className: "app-info-text", text: fact.text }),
        fact.note ? el("p", { className: "app-info-note", text: fact.note }) : null,
        fact.detail
          ? el("p", { className: "app-info-detail", text: `${tr("技术细节：", "Details: ")}${fact.detail}` })
          : null,
      ),
    ),
  );
  openModal({
    id: "app_info_dialog",
    title: tr(`关于“${name}”`, `About ${name}`),
    body: [
      el(
        "div",
        { className: "app-info-head" },
        el("span", { className: "app-info-icon", text: asText(app.icon || "📦") }),
        el(
          "div",
          {},
          el("p", { className: "app-info-name", text: name }),
          el("p", { className: "app-info-desc", text: asText(appDescription(app)) }),
        ),
      ),
      el(
        "ul",
        { className: "app-info-facts" },
        rows.length
          ? rows
          : el("li", { className: "app-info-fact", text: tr("尚未启动：启动后这里显示它如何运行", "Not started yet: how it runs shows here once it starts") }),
      ),
    ],
    buttons: [{ text: tr("好的", "OK"), primary: true, onClick: (close) => close() }],
  });
}

/** The About box: what Triton AIOS is, its version (GET /api/version) and the shortcuts. */
export function openAbout() {
  const version = el("p", { className: "about-version", id: "about_version", text: tr("版本 …", "Version …") });
  openModal({
    id: "about_dialog",
    title: tr("关于 Triton AIOS", "About Triton AIOS"),
    body: [
      el("div", { className: "about-logo", text: "🔱" }),
      el("p", { className: "about-name", text: "Triton AIOS" }),
      version,
      el("p", {
        text: tr(
          "一个用说话来操作的桌面：说出或输入你想做的事，比如放音乐、写一段程序、设个提醒，合适的应用就会去做，结果显示在它的窗口里。应用在沙箱里运行，碰不到你的其他文件；做有风险的事（比如覆盖或删除文件）之前会先问你。",
          "A desktop you run by saying what you want: type or say it, such as playing music, writing a small program or setting a reminder, and the right app does it and shows the result in its window. Apps run in a sandbox, away from your other files, and ask you first before anything risky, such as overwriting or deleting a file.",
        ),
      }),
      el("p", {
        className: "about-keys",
        text: tr(
          "快捷键：Ctrl+K 聚焦指令栏 · Ctrl+Alt+R 还原桌面布局 · Esc 关闭菜单 · 右键任务栏打开系统菜单",
          "Shortcuts: Ctrl+K focuses the command bar · Ctrl+Alt+R restores the desktop layout · Esc closes menus · right-click the taskbar for the system menu",
        ),
      }),
    ],
    buttons: [{ text: tr("好的", "OK"), primary: true, onClick: (close) => close() }],
  });
  api
    .version()
    .then((info) => {
      version.textContent = `${tr("版本", "Version")} ${asText(info?.version) || "?"}`;
    })
    .catch(() => {
      version.textContent = tr("版本未知（主控未回答）", "Version unknown (the controller did not answer)");
    });
}

/**
 * The Install dialog: a .zip chosen here, or a folder / .zip path on this machine,
 * sent to POST /api/apps/install. A refused install shows the controller's message
 * (e.g. the manifest's error) in the dialog; a good one closes it and reloads the apps.
 */
export function openInstall(toast, reloadApps) {
  const file = el("input", { id: "install_file", type: "file", attrs: { accept: ".zip,application/zip" } });
  const path = el("input", {
    id: "install_path",
    type: "text",
    attrs: { placeholder: tr("例如 /home/me/my_app 或 /home/me/my_app.zip", "e.g. /home/me/my_app or /home/me/my_app.zip") },
  });
  const result = el("p", { id: "install_result", className: "install-result", attrs: { role: "status" } });
  const install = async (close) => {
    const chosen = file.files && file.files[0];
    const typed = path.value.trim();
    if (!chosen && !typed) {
      result.dataset.level = "error";
      result.textContent = tr("请选择 .zip 文件或输入路径", "Choose a .zip file or type a path");
      return;
    }
    result.dataset.level = "info";
    result.textContent = tr("正在安装…", "Installing…");
    try {
      const answer = chosen ? await api.installZip(chosen) : await api.installPath(typed);
      close();
      toast({ title: tr("已安装", "Installed"), body: asText(answer?.app ? appName(answer.app) : answer?.installed), level: "success" });
      reloadApps();
    } catch (exc) {
      sayRefused(result, tr("未安装：", "Not installed: "), exc);
    }
  };
  const dialog = openModal({
    id: "install_dialog",
    title: tr("安装应用", "Install an app"),
    body: [
      el("p", { className: "modal-note", text: tr("选择一个应用的 .zip（含 manifest.json），或输入本机路径。", "Choose an app's .zip (holding manifest.json), or type a path on this machine.") }),
      el("label", { className: "settings-row" }, el("span", { text: tr("应用压缩包", "App .zip") }), file),
      el("label", { className: "settings-row" }, el("span", { text: tr("或本机路径", "Or a path on this machine") }), path),
      result,
    ],
    buttons: [
      { text: tr("取消", "Cancel"), onClick: (close) => close() },
      { id: "install_submit", text: tr("安装", "Install"), primary: true, onClick: install },
    ],
    focus: "install_path",
  });
  // Enter in the path submits, as in any form
  path.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      install(dialog.close);
    }
  });
}

/** Say in a dialog's result line why the controller refused (its technical words folded). */
function sayRefused(result, prefix, exc) {
  result.dataset.level = "error";
  result.textContent = `${prefix}${asText(exc.message)}`;
  if (exc.technical) result.append(technicalDetails(exc.technical));
}

/**
 * Ask before uninstalling `app` (POST /api/apps/<id>/uninstall, its workspace kept
 * aside). The safe choice, 取消 / Cancel, has the focus: Enter and Escape keep the app;
 * only the Uninstall button uninstalls.
 * Once uninstalled `removed(appId)` is told; a refusal is said in the dialog.
 */
export function confirmUninstall(app, removed) {
  const name = asText(appName(app));
  const result = el("p", { id: "uninstall_result", className: "modal-result", attrs: { role: "status" } });
  let busy = false;
  const uninstall = async (close) => {
    if (busy) return;
    busy = true;
    result.dataset.level = "info";
    result.textContent = tr("正在卸载…", "Uninstalling…");
    try {
      await api.uninstall(app.id, true);
      close();
      removed(app.id);
    } catch (exc) {
      busy = false;
      sayRefused(result, tr("未卸载：", "Not uninstalled: "), exc);
    }
  };
  openModal({
    id: "uninstall_dialog",
    title: tr("卸载应用", "Uninstall an app"),
    body: [
      el("p", { text: tr(`卸载「${name}」？`, `Uninstall ${name}?`) }),
      el("p", {
        className: "modal-note",
        text: tr(
          "它会停止运行并离开桌面，它的窗口随之关闭。它的工作区文件会移到一边保留，不会删除。",
          "It stops and leaves the desktop, and its window closes. Its workspace files are moved aside and kept, not deleted.",
        ),
      }),
      result,
    ],
    buttons: [
      { id: "uninstall_cancel", text: tr("取消", "Cancel"), onClick: (close) => close() },
      { id: "uninstall_confirm", text: tr("卸载", "Uninstall"), primary: true, onClick: uninstall },
    ],
    focus: "uninstall_cancel",
  });
}
