// The UI snapshot: every element marked with data-ui-type (windows,
// taskbar, command bar, start menu, action controls …) with its geometry, the row
// and the window it belongs to and the UI commands applied to it (a window also the
// type of the view it shows and how many rows that lists), posted with the
// viewport and the layout changes that can be taken back to POST /api/ui/snapshot whenever the layout changes (debounced, and
// only when it differs from the last one sent).

import { api } from "./api.js";
import { debounce } from "./dom.js";
import { changesOf, rowTitle, undoable } from "./uicommands.js";

let lastSent = "";

/** The snapshot of the page as it is now. */
export function takeSnapshot() {
  const elements = [];
  for (const node of document.querySelectorAll("[data-ui-type]")) {
    if (!node.id) continue;
    const rect = node.getBoundingClientRect();
    const element = {
      id: node.id,
      type: node.dataset.uiType,
      label: node.dataset.uiLabel || "",
      x: Math.round(rect.left),
      y: Math.round(rect.top),
      width: Math.round(rect.width),
      height: Math.round(rect.height),
      visible: isVisible(node, rect),
      row: rowTitle(node),
      window: node.parentElement?.closest(".window")?.id || "",
      changed: changesOf(node.id),
    };
    if (node.dataset.uiType === "window") {
      element.view = node.dataset.viewType || "";
      element.items = node.querySelectorAll(".v-list-item, .v-card, .v-table tbody tr").length;
    }
    elements.push(element);
  }
  return { viewport: { width: window.innerWidth, height: window.innerHeight }, elements, undo: undoable() };
}

function isVisible(node, rect) {
  if (rect.width === 0 || rect.height === 0) return false;
  if (node.closest("[hidden], .ui-hidden, .minimized")) return false;
  return getComputedStyle(node).visibility !== "hidden";
}

let sending = false;
let again = false;

/** Post the snapshot now (when it differs from the last one sent): after a change to
 * the layout, so that an undo asked for at once finds it in the history. One post at
 * a time, the latest last: two in flight could reach the controller out of order. */
export async function postSnapshot() {
  if (sending) {
    again = true; // the one in flight is older: send again once it is done
    return;
  }
  sending = true;
  try {
    do {
      again = false;
      await sendOnce();
    } while (again);
  } finally {
    sending = false;
  }
}

async function sendOnce() {
  const snapshot = takeSnapshot();
  const text = JSON.stringify(snapshot);
  if (text === lastSent) return;
  lastSent = text;
  try {
    await api.snapshot(snapshot);
  } catch {
    lastSent = ""; // try again at the next change
  }
}

/** Watch the page and post a snapshot after each burst of layout changes. */
export function watchLayout(delayMs = 300) {
  const schedule = debounce(postSnapshot, delayMs);
  new MutationObserver(schedule).observe(document.body, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["style", "class", "hidden", "id"],
  });
  window.addEventListener("resize", schedule);
  schedule();
  return schedule;
}
