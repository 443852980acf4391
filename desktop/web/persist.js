// What survives a reload of the page, and where it is kept.
// The open windows (where, how big, whether maximised or minimised, in which order
// they stack and what each showed: its last reply, see appview.js `reopen`) belong to
// this tab: its sessionStorage, written on every change and put back once the apps
// are known after a reload.
// The layout (what the UI commands changed, and the history of those changes that
// undo walks back through) belongs to the user: the controller keeps it in the state
// folder (GET / PUT /api/layout), so a new browser shows it too. It is read once at the
// start and written after every change, one write at a time, the latest last; no
// write goes before it was read, so a page that could not read it yet never replaces
// it with its own empty one.

import { api } from "./api.js";
import { shownReply } from "./appview.js";
import { layoutChanged, restoreSavedLayout, savedLayout } from "./uicommands.js";

const KEY = "aios.desktop.v1";
let restoring = false;
let pending = 0;

/** Remember the open windows now (soon: many changes in a row are one write). */
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
    sessionStorage.setItem(KEY, JSON.stringify({ windows: open }));
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

// ------------------------------------------------------------ the user's layout

const KEEPALIVE_BYTES = 60000; // a write this small still goes when the page is left
let layoutRead = false;
let reading = null;
let writing = false;
let writeAgain = false;
let unsaved = false;

/**
 * Read the layout the controller keeps and take it up (once; again after a failure,
 * when the controller answers). A page that changed its layout before it could read
 * it keeps its own, and writes it. True once read.
 */
export function loadLayout() {
  if (layoutRead) return Promise.resolve(true);
  reading ??= api
    .layout()
    .then((layout) => {
      if (layoutChanged()) unsaved = true;
      else restoreSavedLayout(layout);
      layoutRead = true;
      if (unsaved) saveLayout();
      return true;
    })
    .catch(() => false)
    .finally(() => {
      reading = null;
    });
  return reading;
}

/** Keep the layout as it is now (after each change), or soon, once it was read. */
export function saveLayout() {
  unsaved = true;
  if (!layoutRead) return;
  if (writing) {
    writeAgain = true; // the write in flight is older: write again once it is done
    return;
  }
  writeLayout();
}

async function writeLayout() {
  writing = true;
  try {
    do {
      writeAgain = false;
      unsaved = false;
      const layout = savedLayout();
      const small = new Blob([JSON.stringify(layout)]).size <= KEEPALIVE_BYTES;
      try {
        await api.putLayout(layout, small);
      } catch {
        unsaved = true; // written again at the next change, or when the controller is back
        return;
      }
    } while (writeAgain);
  } finally {
    writing = false;
  }
}

/** The controller answers again: read the layout if it was not, write it if a change
 * could not be written. */
export function layoutBack() {
  if (!layoutRead) return loadLayout();
  if (unsaved && !writing) writeLayout();
  return Promise.resolve(true);
}
