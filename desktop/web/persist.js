// What survives a reload of the page: which windows are open, where, how big, whether
// maximised or minimised, in which order they stack and what each showed (its last
// reply, see appview.js `reopen`), what the UI commands
// changed and the history of those changes (for undo). It is kept in the tab's sessionStorage (this tab only, gone with it) on
// every change, and put back once the apps are known after a reload.

import { shownReply } from "./appview.js";
import { layoutEntries, layoutHistory, restoreLayoutEntries } from "./uicommands.js";

const KEY = "aios.desktop.v1";
let restoring = false;
let pending = 0;

/** Remember the desktop now (soon: many changes in a row are one write). */
export function saveSoon(windows) {
  if (restoring) return;
  clearTimeout(pending);
  pending = setTimeout(() => save(windows), 100);
  if (!watched) {
    watched = true; // a reload within the delay still finds the last change
    window.addEventListener("pagehide", () => {
      if (!restoring) save(windows);
    });
  }
}

let watched = false;

function save(windows) {
  const open = [...windows.windows.values()]
    .sort((a, b) => Number(a.node.style.zIndex) - Number(b.node.style.zIndex))
    .map((win) => ({
      appId: win.appId,
      rect: win.rect(),
      maximised: win.maximised,
      minimised: win.minimised,
      reply: shownReply(win),
    }));
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ windows: open, layout: layoutEntries(), history: layoutHistory() }));
  } catch {
    // storage full or refused: a reload then starts afresh
  }
}

function saved() {
  try {
    const value = JSON.parse(sessionStorage.getItem(KEY) || "null");
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

/** The UI commands' changes saved before the reload: applied again (call once, early). */
export function restoreLayout() {
  restoreLayoutEntries(saved()?.layout, saved()?.history);
}

/**
 * Open again the windows saved before the reload, in their stacking order, each where
 * it was; `open(appId, reply)` opens an app's window showing the reply it showed (null:
 * none kept), `known(appId)` says the app is installed.
 */
export function restoreWindows(windows, open, known) {
  const list = saved()?.windows;
  if (!Array.isArray(list)) return;
  restoring = true;
  try {
    for (const item of list) {
      const appId = typeof item?.appId === "string" ? item.appId : "";
      if (!appId || !known(appId)) continue;
      open(appId, item.reply && typeof item.reply === "object" ? item.reply : null);
      const win = windows.get(appId);
      if (!win) continue;
      const rect = item.rect && typeof item.rect === "object" ? item.rect : null;
      if (rect) win.setRect(rect);
      if (item.maximised && !win.maximised) win.toggleMaximise();
      if (item.minimised) win.minimise();
    }
  } finally {
    restoring = false;
  }
  saveSoon(windows);
}
