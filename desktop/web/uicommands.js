// UI commands: every command reaches the desktop as
// window.postMessage({aios: "ui_command", command}) and ONE handler performs it:
// move, resize, hide, show, change_color, change_text, rotate on an element id,
// and open_window / close_window / focus_window on an app id. The seven element
// operations are remembered per id and applied again whenever that element is
// rendered anew, so "move the play button" survives a re-render of its window.
// Every operation has a visible effect: a colour replaces gradient backgrounds,
// inline elements become inline-block so size and rotation apply. `resetLayout`
// (Ctrl+Alt+R, the start menu) undoes them all; hiding the taskbar keeps the
// command bar on screen so there is always a way to ask for it back.

import { asText } from "./dom.js";

const overrides = new Map(); // element id → {move, resize, hidden, color, text, rotate}
let hooks = { openApp: () => {}, windows: null, warn: () => {}, reveal: () => {}, hint: () => {} };

/**
 * Install the one message handler; `hooks`: {openApp(appId), windows, warn(text),
 * reveal(node), hint(node)} — `reveal` is told of every changed element so it can
 * stay in view, `hint` of a hidden element that held the command bar (say the way back).
 */
export function installUiCommands(options) {
  hooks = { ...hooks, ...options };
  window.addEventListener("message", (event) => {
    if (event.source !== window || event.origin !== window.location.origin) return;
    const message = event.data;
    if (message && message.aios === "ui_command") perform(message.command);
  });
}

/** Hand commands to the handler through postMessage. */
export function postUiCommands(commands) {
  for (const command of Array.isArray(commands) ? commands : []) {
    window.postMessage({ aios: "ui_command", command }, window.location.origin);
  }
}

const OPS = {
  move: (node, c) => remember(node, c.id, "move", { x: num(c.x), y: num(c.y) }),
  resize: (node, c) => remember(node, c.id, "resize", { width: num(c.width), height: num(c.height) }),
  hide: (node, c) => remember(node, c.id, "hidden", true),
  show: (node, c) => remember(node, c.id, "hidden", false),
  change_color: (node, c) => remember(node, c.id, "color", asText(c.color)),
  change_text: (node, c) => remember(node, c.id, "text", asText(c.text)),
  rotate: (node, c) => remember(node, c.id, "rotate", num(c.degrees)),
};

const WINDOW_OPS = {
  open_window: (appId) => hooks.openApp(appId),
  focus_window: (appId) => {
    const win = hooks.windows?.get(appId);
    if (win) win.restore();
    else hooks.openApp(appId);
  },
  close_window: (appId) => hooks.windows?.close(appId),
};

/** Perform one command; a bad or unknown command is reported, never thrown. */
export function perform(command) {
  if (!command || typeof command !== "object") return false;
  const op = asText(command.op);
  const id = asText(command.id);
  if (!id) return warn(`界面命令缺少 id (UI command without id): ${op}`);
  if (Object.hasOwn(WINDOW_OPS, op)) {
    WINDOW_OPS[op](id.replace(/^win_/, ""));
    return true;
  }
  if (!Object.hasOwn(OPS, op)) return warn(`未知界面命令 (unknown UI command): ${op}`);
  if (op === "change_color" && !CSS.supports("color", asText(command.color))) {
    return warn(`无效的颜色 (invalid colour): ${asText(command.color)}`);
  }
  const node = findElement(id);
  OPS[op](node, { ...command, id: node ? node.id : id });
  if (!node) warn(`找不到界面元素 (no such element): ${id}`);
  else if (op !== "hide") hooks.reveal(node);
  else if (node.querySelector("#command_bar")) hooks.hint(node);
  return Boolean(node);
}

function findElement(id) {
  return document.getElementById(id) || document.getElementById(`win_${id}`);
}

function remember(node, id, key, value) {
  const entry = overrides.get(id) || {};
  entry[key] = value;
  overrides.set(id, entry);
  if (node) apply(node, { [key]: value });
}

/** Apply remembered commands to every element under `root` that has some. */
export function reapply(root) {
  for (const [id, entry] of overrides) {
    const node = document.getElementById(id);
    if (node && (root === document || root.contains(node))) apply(node, entry);
  }
}

/** Remove floating (moved) elements that belong to the window with id `winId`. */
export function releaseFloating(winId) {
  for (const node of layer().querySelectorAll(`[data-owner-win]`)) {
    if (node.dataset.ownerWin === winId) node.remove();
  }
}

/** Hide moved elements whose window is closed or minimised; show them again after. */
export function syncFloating() {
  for (const node of layer().children) {
    const owner = node.dataset.ownerWin ? document.getElementById(node.dataset.ownerWin) : null;
    if (node.dataset.ownerWin && !owner) node.remove();
    else node.classList.toggle("owner-hidden", Boolean(owner?.classList.contains("minimized")));
  }
}

/** Undo every remembered command: each changed element goes back to its own look. */
export function resetLayout() {
  const ids = [...overrides.keys()];
  overrides.clear();
  for (const id of ids) {
    const node = document.getElementById(id);
    if (!node) continue;
    node.classList.remove("ui-hidden", "ui-hidden-keep-command", "ui-moved", "owner-hidden");
    if (isWindow(node)) node.style.transform = ""; // a window keeps its place and size
    else node.removeAttribute("style");
    for (const part of node.querySelectorAll("[data-ui-styled]")) {
      part.removeAttribute("style");
      delete part.dataset.uiStyled;
    }
    if (node.dataset.uiTextBefore !== undefined) {
      changeText(node, node.dataset.uiTextBefore);
      delete node.dataset.uiTextBefore;
    }
    const home = node.dataset.ownerWin ? document.getElementById(node.dataset.ownerWin) : null;
    if (node.parentElement === layer()) {
      // a moved control goes back into its window's action bar (or disappears with it)
      const bar = home?.querySelector(".win-actions");
      if (bar) bar.prepend(node);
      else node.remove();
    }
    delete node.dataset.ownerWin;
  }
  return ids.length;
}

function apply(node, entry) {
  if (entry.move) move(node, entry.move);
  if (entry.resize) resize(node, entry.resize);
  if (entry.hidden !== undefined) setHidden(node, entry.hidden);
  if (entry.color) color(node, entry.color);
  if (entry.text !== undefined) changeText(node, entry.text);
  if (entry.rotate !== undefined) {
    boxable(node);
    node.style.transform = `rotate(${entry.rotate}deg)`;
  }
}

/** Inline elements ignore width, height and transforms: make them boxes. */
function boxable(node) {
  if (getComputedStyle(node).display === "inline") node.style.display = "inline-block";
}

function layer() {
  return document.getElementById("ui_layer");
}

function isWindow(node) {
  return node.classList.contains("window");
}

/** Windows move inside the desktop; top-level parts are fixed; anything else floats. */
function move(node, { x, y }) {
  if (isWindow(node)) {
    node.classList.remove("maximized");
    node.style.left = `${x}px`;
    node.style.top = `${y}px`;
    return;
  }
  const rect = node.getBoundingClientRect();
  if (node.parentElement !== document.body && node.parentElement !== layer()) {
    const owner = node.closest(".window");
    if (owner) node.dataset.ownerWin = owner.id;
    layer().append(node);
  }
  node.classList.add("ui-moved");
  Object.assign(node.style, {
    position: "fixed",
    left: `${x}px`,
    top: `${y}px`,
    right: "auto",
    bottom: "auto",
    margin: "0",
  });
  if (!node.style.width && rect.width) node.style.width = `${rect.width}px`;
  if (!node.style.height && rect.height) node.style.height = `${rect.height}px`;
}

function resize(node, { width, height }) {
  if (isWindow(node)) node.classList.remove("maximized");
  boxable(node);
  node.style.boxSizing = "border-box";
  node.style.flex = "none"; // a flex parent must not shrink it back
  if (width > 0) node.style.maxWidth = "none";
  if (height > 0) node.style.maxHeight = "none";
  if (width > 0) node.style.width = `${width}px`;
  if (height > 0) node.style.height = `${height}px`;
}

function setHidden(node, hidden) {
  // the command bar is the way back: hiding what holds it hides everything else
  const keepsCommand = node.id !== "command_bar" && node.querySelector("#command_bar");
  node.classList.toggle(keepsCommand ? "ui-hidden-keep-command" : "ui-hidden", hidden);
  if (!hidden) node.classList.remove("ui-hidden", "ui-hidden-keep-command");
  if (!hidden && isWindow(node) && node.classList.contains("minimized")) {
    hooks.windows?.get(node.dataset.appId)?.restore();
  }
}

function color(node, value) {
  const target = isWindow(node) ? node.querySelector(".win-titlebar") || node : node;
  if (target !== node) target.dataset.uiStyled = "true";
  target.style.backgroundImage = "none"; // a gradient would paint over the colour
  target.style.backgroundColor = value;
  target.style.borderColor = value;
  target.style.color = readableOn(value);
}

/** Black or white, whichever reads better on `value`. */
function readableOn(value) {
  const probe = document.createElement("span");
  probe.style.color = value;
  document.body.append(probe);
  const rgb = getComputedStyle(probe).color.match(/[\d.]+/g) || ["0", "0", "0"];
  probe.remove();
  const [r, g, b] = rgb.slice(0, 3).map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b > 160 ? "#111" : "#fff";
}

function changeText(node, text) {
  let slot;
  if (isWindow(node)) slot = node.querySelector(".win-title");
  else if (node.children.length === 0) slot = node;
  else slot = node.querySelector(".act-label, .ui-text");
  if (slot && node.dataset.uiTextBefore === undefined) node.dataset.uiTextBefore = slot.textContent;
  if (slot) slot.textContent = text;
  else warn(`无法修改该元素的文字 (cannot change text of): ${node.id}`);
  node.dataset.uiLabel = text;
}

function num(value) {
  const number = Number(value);
  return Number.isFinite(number) ? number : 0;
}

function warn(text) {
  hooks.warn(text);
  return false;
}
