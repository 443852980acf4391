// UI commands: every command reaches the desktop as
// window.postMessage({aios: "ui_command", command}) and ONE handler performs it:
// move, resize, hide, show, change_color, change_text, rotate and restore on an
// element id, and open_window / close_window / focus_window (maximize_window,
// minimize_window) on an app id. The
// element operations are remembered per id and applied again whenever that element
// is rendered anew, so "move the play button" survives a re-render of its window.
// Every operation has a visible effect: a colour replaces gradient backgrounds,
// inline elements become inline-block so size and rotation apply.
// A moved control stays the control it was: a window's control stays in its window
// (fixed on screen, above its own window and under the ones in front of it), keeps
// its size and look, still acts on its row, shows the title of that row, and its row
// keeps an outlined place for it. `restore` takes back some or all commands of one
// element and `resetLayout` (Ctrl+Alt+R, the start menu) all of them: a moved control
// goes back into that place. Hiding the taskbar keeps the command bar on screen so
// there is always a way to ask for it back.
// The layout keeps its history: what each answer's commands changed (one batch) can be
// taken back with the `undo` command, the latest first, again and again, until the
// user resets the layout; the history is listed in the UI snapshot (`undoable`) and
// kept with the layout by the controller (`savedLayout`, persist.js).

import { asArray, asText, el } from "./dom.js";
import { tr } from "./i18n.js";

// element id → {move, resize, hide, change_color, change_text, rotate}: what is applied
const overrides = new Map();
const homes = new WeakMap(); // a moved node → the placeholder holding its place
// the layout's history, oldest first: {batch, before: the overrides before it as
// [id, entry] pairs, steps: [{op, id, frame?}]} (a window's frame before it moved)
const history = [];
const HISTORY_MAX = 100;
const undone = new Set(); // refs of undo commands done (each reaches the page twice)
let hooks = { openApp: () => {}, windows: null, warn: () => {}, reveal: () => {}, hint: () => {}, changed: () => {} };

/**
 * Install the one message handler; `hooks`: {openApp(appId), windows, warn(text),
 * reveal(node), hint(node), changed()} — `reveal` is told of every changed element so it can
 * stay in view, `hint` of a hidden element that held the command bar (say the way back),
 * `changed` of every change to what is remembered (`layoutEntries`).
 */
export function installUiCommands(options) {
  hooks = { ...hooks, ...options };
  window.addEventListener("message", (event) => {
    if (event.source !== window || event.origin !== window.location.origin) return;
    const message = event.data;
    if (message && message.aios === "ui_command") perform(message.command, asText(message.batch));
  });
}

/** Hand commands to the handler through postMessage; `batch` names the answer they
 * came with: what they change together is one step of the layout's history. */
export function postUiCommands(commands, batch = "") {
  for (const command of Array.isArray(commands) ? commands : []) {
    window.postMessage({ aios: "ui_command", command, batch }, window.location.origin);
  }
}

const OPS = {
  move: (node, c) => remember(node, c.id, "move", { x: num(c.x), y: num(c.y) }),
  resize: (node, c) => remember(node, c.id, "resize", { width: num(c.width), height: num(c.height) }),
  hide: (node, c) => remember(node, c.id, "hide", true),
  show: (node, c) => remember(node, c.id, "hide", false),
  change_color: (node, c) => remember(node, c.id, "change_color", asText(c.color)),
  change_text: (node, c) => remember(node, c.id, "change_text", asText(c.text)),
  rotate: (node, c) => remember(node, c.id, "rotate", num(c.degrees)),
  restore: (node, c) => takeBack(node, c.id, asArray(c.changes).map(asText)),
};

const WINDOW_OPS = {
  open_window: (appId) => hooks.openApp(appId),
  focus_window: (appId) => {
    const win = hooks.windows?.get(appId);
    if (win) win.restore();
    else hooks.openApp(appId);
  },
  close_window: (appId) => hooks.windows?.close(appId),
  // each twice the same as once (the reply and the event stream bring it)
  maximize_window: (appId) => {
    hooks.openApp(appId); // opened, or restored and raised
    const win = hooks.windows?.get(appId);
    if (win && !win.maximised) win.toggleMaximise();
  },
  minimize_window: (appId) => {
    const win = hooks.windows?.get(appId);
    if (win && !win.minimised) win.minimise();
  },
};

/** Perform one command (of the answer `batch`); a bad or unknown command is reported,
 * never thrown. */
export function perform(command, batch = "") {
  if (!command || typeof command !== "object") return false;
  const op = asText(command.op);
  const id = asText(command.id);
  if (op === "undo") return undoOnce(asText(command.ref));
  if (!id) return warn(tr(`界面命令缺少 id：${op}`, `UI command without an id: ${op}`));
  if (Object.hasOwn(WINDOW_OPS, op)) {
    WINDOW_OPS[op](id.replace(/^win_/, ""));
    return true;
  }
  if (!Object.hasOwn(OPS, op)) return warn(tr(`未知的界面命令：${op}`, `Unknown UI command: ${op}`));
  if (op === "change_color" && !isPaint(asText(command.color))) {
    return warn(tr(`无效的颜色：${asText(command.color)}`, `Not a colour: ${asText(command.color)}`));
  }
  const node = findElement(id);
  // the same command may come twice (the reply and the event stream): one hint
  const hiddenBefore = Boolean(node && overrides.get(node.id)?.hide);
  const before = canonical(overrides);
  // the label it had, to name it when it is no longer shown
  const step = { op, id: node ? node.id : id, label: node?.dataset.uiLabel || "" };
  if (node && isWindow(node) && (op === "move" || op === "resize")) step.frame = frameOf(node);
  OPS[op](node, { ...command, id: step.id });
  record(batch, before, step);
  if (!node) warn(tr(`找不到界面元素：${id}`, `No such element: ${id}`));
  else if (op !== "hide") hooks.reveal(node);
  else if (!hiddenBefore && node.querySelector("#command_bar")) hooks.hint(node);
  return Boolean(node);
}

/** The overrides as one comparable text (ids and ops in a fixed order). */
function canonical(map) {
  const ids = [...map.keys()].sort();
  return JSON.stringify(ids.map((id) => [id, Object.keys(map.get(id)).sort().map((key) => [key, map.get(id)[key]])]));
}

/** Add `step` to the history when it changed the layout: to the latest entry when it
 * belongs to the same answer, else as a new one holding the layout `before` it. */
function record(batch, before, step) {
  if (canonical(overrides) === before) return; // a command seen already, or no change
  const last = history[history.length - 1];
  if (batch && last?.batch === batch) last.steps.push(step);
  else history.push({ batch, before: JSON.parse(before), steps: [step] });
  if (history.length > HISTORY_MAX) history.shift();
  hooks.changed();
}

/** A window's place and size as its style sets them. */
function frameOf(node) {
  const { left, top, width, height } = node.style;
  return { left, top, width, height, maximized: node.classList.contains("maximized") };
}

/** The undo command `ref` (once, however often it comes): take back the latest step. */
function undoOnce(ref) {
  if (ref && undone.has(ref)) return true;
  if (ref) undone.add(ref);
  return undoLayout();
}

/** Take back the latest change in the history: every element it changed as it was
 * before; a moved window where it stood. False when there is nothing to take back. */
export function undoLayout() {
  const last = history.pop();
  if (!last) return false;
  const before = new Map(last.before.map(([id, pairs]) => [id, Object.fromEntries(pairs)]));
  for (const id of new Set([...overrides.keys(), ...before.keys()])) {
    const was = before.get(id);
    if (JSON.stringify(overrides.get(id) ?? null) === JSON.stringify(was ?? null)) continue;
    if (was) overrides.set(id, { ...was });
    else overrides.delete(id);
    const node = document.getElementById(id);
    if (!node) continue;
    asDrawn(node);
    if (was) apply(node, was);
  }
  for (const step of [...last.steps].reverse()) {
    const node = step.frame ? document.getElementById(step.id) : null;
    if (!node) continue;
    const { maximized, ...frame } = step.frame;
    Object.assign(node.style, frame);
    node.classList.toggle("maximized", Boolean(maximized));
  }
  hooks.changed();
  return true;
}

/** What can be taken back, oldest first: the {op, id} of each change's commands. */
export function undoable() {
  return history.map((entry) => entry.steps.map(({ op, id, label }) => ({ op, id, label: label || "" })));
}

/** The operations applied to element `id` and not taken back (op names). */
export function changesOf(id) {
  return Object.keys(overrides.get(id) || {});
}

/** The title of the list item, table row or card that `node` belongs to, or "". */
export function rowTitle(node) {
  const item = node.closest("[data-item-id]");
  if (!item) return "";
  const title = item.querySelector(".v-list-title, .v-card-title") || item.querySelector("td");
  return (title?.textContent || item.dataset.itemId || "").trim();
}

function findElement(id) {
  return document.getElementById(id) || document.getElementById(`win_${id}`);
}

function remember(node, id, key, value) {
  const entry = overrides.get(id) || {};
  entry[key] = value;
  overrides.set(id, entry);
  if (node) apply(node, { [key]: value });
  hooks.changed();
}

/** The layout as the controller keeps it: what the UI commands changed, as
 * `changed` [id, {op: value}] pairs, and the `history` of those changes. */
export function savedLayout() {
  return {
    changed: [...overrides].map(([id, entry]) => [id, { ...entry }]),
    history: history.map(({ before, steps }) => ({ before, steps })),
  };
}

/** Whether the UI commands changed anything, or can take anything back. */
export function layoutChanged() {
  return overrides.size > 0 || history.length > 0;
}

/** Take up a `savedLayout()` (read at the start): each element as it was changed, and
 * the way back through the changes. Answers from before it never merge with a later
 * answer's change. */
export function restoreSavedLayout(saved) {
  const { changed, history: steps } = saved && typeof saved === "object" ? saved : {};
  for (const pair of Array.isArray(changed) ? changed : []) {
    if (!Array.isArray(pair) || typeof pair[0] !== "string" || !pair[1] || typeof pair[1] !== "object") continue;
    overrides.set(pair[0], { ...pair[1] });
    const node = document.getElementById(pair[0]);
    if (node) apply(node, overrides.get(pair[0]));
  }
  for (const entry of Array.isArray(steps) ? steps : []) {
    if (entry && Array.isArray(entry.before) && Array.isArray(entry.steps)) {
      history.push({ batch: "", before: entry.before, steps: entry.steps });
    }
  }
  history.splice(0, Math.max(0, history.length - HISTORY_MAX));
}

/** Forget the `changes` (all when empty) of element `id` and draw it without them. */
function takeBack(node, id, changes) {
  const entry = overrides.get(id);
  if (!entry) return;
  const keys = changes.length ? changes.map((c) => (c === "show" ? "hide" : c)) : Object.keys(entry);
  for (const key of keys) delete entry[key];
  if (Object.keys(entry).length === 0) overrides.delete(id);
  hooks.changed();
  if (!node) return;
  asDrawn(node);
  apply(node, entry);
}

/** Apply remembered commands to every element under `root` that has some. */
export function reapply(root) {
  for (const [id, entry] of overrides) {
    const node = document.getElementById(id);
    if (node && (root === document || root.contains(node))) apply(node, entry);
  }
}

/** Undo every remembered command: each changed element goes back to its own look and place. */
export function resetLayout() {
  const ids = [...overrides.keys()];
  overrides.clear();
  history.length = 0; // a reset ends the history: there is nothing before it to go back to
  hooks.changed();
  for (const id of ids) {
    const node = document.getElementById(id);
    if (node) asDrawn(node);
  }
  return ids.length;
}

/** `node` as the page drew it: back in its place, its own style, text and label. */
function asDrawn(node) {
  node.classList.remove("ui-hidden", "ui-hidden-keep-command", "ui-moved", "ui-row-start");
  if (isWindow(node)) {
    node.style.transform = ""; // a window keeps its place and size
  } else if (node.dataset.uiStyleBefore !== undefined) {
    if (node.dataset.uiStyleBefore) node.setAttribute("style", node.dataset.uiStyleBefore);
    else node.removeAttribute("style");
    delete node.dataset.uiStyleBefore;
  }
  for (const part of node.querySelectorAll("[data-ui-styled]")) {
    part.removeAttribute("style");
    delete part.dataset.uiStyled;
  }
  if (node.dataset.uiTextBefore !== undefined) {
    changeText(node, node.dataset.uiTextBefore);
    node.dataset.uiLabel = node.dataset.uiLabelBefore ?? node.dataset.uiTextBefore;
    delete node.dataset.uiTextBefore;
    delete node.dataset.uiLabelBefore;
  }
  delete node.dataset.uiRow;
  const home = homes.get(node);
  homes.delete(node);
  if (home?.isConnected) home.replaceWith(node);
  else home?.remove();
}

function apply(node, entry) {
  if (!isWindow(node) && node.dataset.uiStyleBefore === undefined) {
    node.dataset.uiStyleBefore = node.getAttribute("style") ?? "";
  }
  if (entry.move) move(node, entry.move);
  if (entry.resize) resize(node, entry.resize);
  if (entry.hide !== undefined) setHidden(node, entry.hide);
  if (entry.change_color) color(node, entry.change_color);
  if (entry.change_text !== undefined) changeText(node, entry.change_text);
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

/**
 * Windows move inside the desktop. Any other element is fixed on screen at (x, y):
 * a window's control stays in its window's page (so it keeps its look, its click
 * and its layer), a part of the taskbar goes to the top layer; either way an
 * outlined placeholder of its size keeps its place until it goes back.
 */
function move(node, { x, y }) {
  if (isWindow(node)) {
    node.classList.remove("maximized");
    node.style.left = `${x}px`;
    node.style.top = `${y}px`;
    return;
  }
  const rect = node.getBoundingClientRect();
  if (!homes.has(node) && node.parentElement && node.parentElement !== document.body && node.parentElement !== layer()) {
    const home = el("span", { className: "ui-home", attrs: { "aria-hidden": "true" } });
    home.style.width = `${rect.width}px`;
    home.style.height = `${rect.height}px`;
    node.before(home);
    homes.set(node, home);
    if (!node.closest(".window")) {
      keepLook(node);
      layer().append(node);
    }
  }
  const row = homes.has(node) ? rowTitle(homes.get(node)) : "";
  if (row) node.dataset.uiRow = row;
  node.classList.add("ui-moved");
  // the row's title goes on the side with more room: in the right half, on its left
  node.classList.toggle("ui-row-start", x + rect.width / 2 > window.innerWidth / 2);
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

/** What its old surroundings gave a node's text, kept when it leaves them. */
function keepLook(node) {
  const style = getComputedStyle(node);
  for (const key of ["fontSize", "lineHeight", "padding", "color"]) node.style[key] = style[key];
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

/** A colour, or a linear gradient of colours ("linear-gradient(135deg, blue, purple)"). */
function isPaint(value) {
  if (CSS.supports("color", value)) return true;
  return /^linear-gradient\(/.test(value) && CSS.supports("background-image", value);
}

function color(node, value) {
  const target = isWindow(node) ? node.querySelector(".win-titlebar") || node : node;
  if (target !== node) target.dataset.uiStyled = "true";
  const gradient = !CSS.supports("color", value);
  // a gradient paints the background's image; a colour replaces any image
  target.style.backgroundImage = gradient ? value : "none";
  target.style.backgroundColor = gradient ? "" : value;
  if (target.id === "desktop") return; // the wallpaper: its windows keep their own ink
  if (!gradient) target.style.borderColor = value;
  target.style.color = readableOn(gradient ? firstColour(value) : value);
}

/** The first colour of a gradient, for the ink that reads on it. */
function firstColour(gradient) {
  const stops = gradient.replace(/^linear-gradient\(|\)$/g, "").split(",").map((part) => part.trim());
  return stops.find((part) => CSS.supports("color", part)) || "black";
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
  if (slot && node.dataset.uiTextBefore === undefined) {
    node.dataset.uiTextBefore = slot.textContent;
    node.dataset.uiLabelBefore = node.dataset.uiLabel ?? "";
  }
  if (slot) slot.textContent = text;
  else warn(tr(`无法修改该元素的文字：${node.id}`, `Cannot change the text of: ${node.id}`));
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
