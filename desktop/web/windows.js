// Window frames on the desktop: created per app with id
// `win_<app_id>`, dragged by the title bar, resized by edges and corners,
// minimised to the taskbar, maximised to fill the desktop above the taskbar,
// closed (the app process keeps running), raised on click, animated in. The title
// bar marks how the app runs (🛡️ in a sandbox, ⚠️ unconfined, 🌐 internet); the
// mark opens the app's About panel.

import { appFacts, openAppInfo } from "./dialogs.js";
import { clear, el } from "./dom.js";
import { appName, onLanguageChange, tr } from "./i18n.js";
import { appInfo, onAppsChanged } from "./state.js";

const MIN_WIDTH = 280;
const MIN_HEIGHT = 180;
const EDGES = ["n", "s", "e", "w", "ne", "nw", "se", "sw"];

/** One app window: its frame element and the slot its content goes into. */
export class AppWindow {
  constructor(manager, app) {
    this.manager = manager;
    this.appId = app.id;
    this.title = el("span", { className: "win-title", text: appName(app) });
    this.icon = el("span", { className: "win-icon", text: app.icon || "📦" });
    this.content = el("div", { className: "win-content" });
    this.facts = el("button", {
      type: "button",
      className: "win-facts",
      on: { click: (e) => { e.stopPropagation(); openAppInfo(appInfo(this.appId)); } },
    });
    this.labelled = []; // [button, Chinese, English]: relabelled on a language switch
    const button = (cls, label, text, handler) => {
      const node = el("button", {
        type: "button",
        className: `win-btn ${cls}`,
        text,
        on: { click: (e) => { e.stopPropagation(); handler(); } },
      });
      this.labelled.push([node, ...label]);
      return node;
    };
    this.titlebar = el(
      "header",
      // a part of the desktop a person can name ("把音乐窗口的标题栏换成红色")
      { className: "win-titlebar", id: `title_${app.id}`, dataset: { uiType: "titlebar", uiLabel: "标题栏" } },
      this.icon,
      this.title,
      this.facts,
      el(
        "div",
        { className: "win-buttons" },
        button("win-min", ["最小化", "Minimise"], "—", () => this.minimise()),
        button("win-max", ["最大化", "Maximise"], "☐", () => this.toggleMaximise()),
        button("win-close", ["关闭", "Close"], "✕", () => this.close()),
      ),
    );
    this.node = el(
      "section",
      {
        id: `win_${app.id}`,
        className: "window",
        dataset: { appId: app.id, uiType: "window", uiLabel: appName(app) },
        attrs: { role: "dialog", "aria-label": appName(app) },
      },
      this.titlebar,
      this.content,
      EDGES.map((edge) => el("div", { className: `win-edge win-edge-${edge}`, dataset: { edge } })),
    );
    // its height as a CSS variable, for content sized by the window (a code editor is half of it)
    new ResizeObserver(() => this.node.style.setProperty("--win-height", `${this.node.offsetHeight}px`)).observe(this.node);
    this.node.addEventListener("pointerdown", () => this.raise(), true);
    this.titlebar.addEventListener("pointerdown", (e) => this.startDrag(e));
    this.titlebar.addEventListener("dblclick", (e) => {
      if (!e.target.closest(".win-btn, .win-facts")) this.toggleMaximise();
    });
    for (const handle of this.node.querySelectorAll(".win-edge")) {
      handle.addEventListener("pointerdown", (e) => this.startResize(e, handle.dataset.edge));
    }
    this.describe(app);
  }

  /** Mark in the title bar how `app` runs: a quiet 🛡️ when confined, ⚠️ and the words when not. */
  describe(app) {
    for (const [node, zh, en] of this.labelled) {
      node.title = tr(zh, en);
      node.setAttribute("aria-label", tr(zh, en));
    }
    const name = appName(app);
    if (this.title.textContent !== name) {
      this.title.textContent = name;
      this.node.dataset.uiLabel = name;
      this.node.setAttribute("aria-label", name);
    }
    const facts = appFacts(app);
    const key = JSON.stringify([tr("zh", "en"), facts]);
    if (this.facts.dataset.key === key) return;
    this.facts.dataset.key = key;
    const warning = facts.find((f) => f.level === "warning");
    this.facts.dataset.level = warning ? "warning" : "ok";
    clear(this.facts);
    for (const fact of facts) {
      this.facts.append(el("span", { className: "app-fact-mark", dataset: { fact: fact.kind }, text: fact.mark }));
    }
    if (warning) this.facts.append(el("span", { className: "win-facts-text", text: warning.text }));
    if (facts.length === 0) this.facts.append(el("span", { className: "app-fact-mark", text: "ℹ️" }));
    const about = tr("关于此应用", "About this app");
    this.facts.title = [...facts.map((f) => `${f.mark} ${f.text}`), about].join("\n");
    this.facts.setAttribute("aria-label", [about, ...facts.map((f) => f.text)].join(tr("，", ", ")));
  }

  get minimised() {
    return this.node.classList.contains("minimized");
  }

  get maximised() {
    return this.node.classList.contains("maximized");
  }

  setRect({ left, top, width, height }) {
    const style = this.node.style;
    if (left !== undefined) style.left = `${Math.round(left)}px`;
    if (top !== undefined) style.top = `${Math.round(top)}px`;
    if (width !== undefined) style.width = `${Math.round(Math.max(MIN_WIDTH, width))}px`;
    if (height !== undefined) style.height = `${Math.round(Math.max(MIN_HEIGHT, height))}px`;
    this.manager.changed("geometry", this);
  }

  /** At least `height` tall where the desktop has room (moved up to make it); a maximised window stays. */
  atLeast(height) {
    if (this.maximised) return;
    const desk = this.manager.bounds();
    const rect = this.rect();
    const want = Math.min(height, desk.height);
    if (rect.height >= want) return;
    this.setRect({ top: Math.max(0, Math.min(rect.top, desk.height - want)), height: want });
  }

  rect() {
    return {
      left: this.node.offsetLeft,
      top: this.node.offsetTop,
      width: this.node.offsetWidth,
      height: this.node.offsetHeight,
    };
  }

  raise() {
    this.manager.raise(this);
  }

  minimise() {
    this.node.classList.add("minimized");
    this.node.classList.remove("focused");
    this.manager.changed("minimise", this);
  }

  restore() {
    this.node.classList.remove("minimized");
    this.raise();
  }

  toggleMaximise() {
    this.node.classList.toggle("maximized");
    this.manager.changed("maximise", this);
  }

  close() {
    this.manager.close(this.appId);
  }

  startDrag(event) {
    if (event.button !== 0 || event.target.closest(".win-btn, .win-facts")) return;
    event.preventDefault();
    const desk = this.manager.bounds();
    let start = { x: event.clientX, y: event.clientY, ...this.rect() };
    this.track(event, (e) => {
      if (this.maximised) {
        // A maximised window leaves its maximised state once it is really dragged,
        // under the pointer, keeping the grab point proportional.
        if (Math.hypot(e.clientX - start.x, e.clientY - start.y) < 4) return;
        const ratio = (start.x - desk.left) / desk.width;
        this.node.classList.remove("maximized");
        const width = this.node.offsetWidth;
        this.setRect({ left: start.x - desk.left - width * ratio, top: 0 });
        start = { ...start, ...this.rect() };
      }
      const left = start.left + e.clientX - start.x;
      const top = start.top + e.clientY - start.y;
      this.setRect({
        left: clamp(left, 60 - start.width, desk.width - 60),
        top: clamp(top, 0, desk.height - 36),
      });
    });
  }

  startResize(event, edge) {
    if (event.button !== 0) return;
    event.preventDefault();
    event.stopPropagation();
    this.node.classList.remove("maximized");
    const start = { x: event.clientX, y: event.clientY, ...this.rect() };
    this.track(event, (e) => {
      const dx = e.clientX - start.x;
      const dy = e.clientY - start.y;
      const next = { ...start };
      if (edge.includes("e")) next.width = Math.max(MIN_WIDTH, start.width + dx);
      if (edge.includes("s")) next.height = Math.max(MIN_HEIGHT, start.height + dy);
      if (edge.includes("w")) {
        next.width = Math.max(MIN_WIDTH, start.width - dx);
        next.left = start.left + start.width - next.width;
      }
      if (edge.includes("n")) {
        next.height = Math.max(MIN_HEIGHT, start.height - dy);
        next.top = Math.max(0, start.top + start.height - next.height);
      }
      this.setRect({ left: next.left, top: next.top, width: next.width, height: next.height });
    });
  }

  /** Follow the pointer until release; `move` gets each pointermove. */
  track(event, move) {
    const target = event.currentTarget;
    target.setPointerCapture?.(event.pointerId);
    this.node.classList.add("dragging");
    const onMove = (e) => move(e);
    const onUp = () => {
      target.removeEventListener("pointermove", onMove);
      target.removeEventListener("pointerup", onUp);
      target.removeEventListener("pointercancel", onUp);
      this.node.classList.remove("dragging");
      this.manager.changed("geometry", this);
    };
    target.addEventListener("pointermove", onMove);
    target.addEventListener("pointerup", onUp);
    target.addEventListener("pointercancel", onUp);
  }
}

/** All open windows, their stacking order and the desktop area they live in. */
export class WindowManager {
  /** `onChange(kind, win)` is told of open, close, focus, minimise, maximise, geometry. */
  constructor(desktop, onChange = () => {}) {
    this.desktop = desktop;
    this.onChange = onChange;
    this.windows = new Map();
    this.topZ = 10;
    this.opened = 0;
    onAppsChanged((apps) => {
      for (const win of this.windows.values()) {
        const app = apps.get(win.appId);
        if (app) win.describe(app);
      }
    });
    onLanguageChange(() => {
      for (const win of this.windows.values()) win.describe(appInfo(win.appId));
    });
  }

  get(appId) {
    return this.windows.get(appId) || null;
  }

  bounds() {
    const r = this.desktop.getBoundingClientRect();
    return { left: r.left, top: r.top, width: r.width, height: r.height };
  }

  /** The window of `app`, created (cascaded, animated) if it is not open yet. */
  ensure(app) {
    let win = this.windows.get(app.id);
    if (win) return { win, created: false };
    win = new AppWindow(this, app);
    const desk = this.bounds();
    const width = Math.min(620, Math.max(MIN_WIDTH, desk.width - 40));
    const height = Math.min(480, Math.max(MIN_HEIGHT, desk.height - 40));
    const slot = this.opened % 8;
    this.opened += 1;
    this.windows.set(app.id, win);
    this.desktop.append(win.node);
    win.setRect({
      left: clamp(120 + slot * 36, 0, Math.max(0, desk.width - width)),
      top: clamp(30 + slot * 30, 0, Math.max(0, desk.height - height)),
      width,
      height,
    });
    this.raise(win);
    this.changed("open", win);
    return { win, created: true };
  }

  raise(win) {
    if (win.minimised) win.node.classList.remove("minimized");
    const already = win.node.classList.contains("focused") && Number(win.node.style.zIndex) === this.topZ;
    if (already) return;
    this.topZ += 1;
    win.node.style.zIndex = String(this.topZ);
    for (const other of this.windows.values()) other.node.classList.toggle("focused", other === win);
    this.changed("focus", win);
  }

  close(appId) {
    const win = this.windows.get(appId);
    if (!win) return;
    this.windows.delete(appId);
    win.node.remove();
    this.changed("close", win);
  }

  /** The focused window that is not minimised, or null. */
  focused() {
    for (const win of this.windows.values()) {
      if (win.node.classList.contains("focused") && !win.minimised) return win;
    }
    return null;
  }

  changed(kind, win) {
    this.onChange(kind, win);
  }
}

function clamp(value, low, high) {
  return Math.min(Math.max(value, low), Math.max(low, high));
}
