// An app's window content: the rendered view, its action controls and a status
// line. Owns the open flow (create the window, ask the app for its initial
// view, render it), sending actions and showing task results.
// While an app works longer than a moment its window shows a loading state (a
// spinner, the elapsed seconds, its controls disabled) with a cancel button that
// asks the controller to stop the work; cancelled work is not a failure: the view
// it was started from stays, with its controls, and the status line says so
// quietly. A multi-line message is an answer: it is
// shown in the view, the status line keeps its first line. A reply's `notice`
// (an `ok` reply that is degraded, or an `info` one) shows its message as a banner
// above the view with the technical `detail` folded away (a degraded one's status
// line then says only that not all of it worked); controls with an
// `item_id` are drawn in their list item, table row or card. An informative notice
// the view itself says (a question, an answer that nothing was done) is said there only. A window that says its
// app could not be reached (restarting, starting, the controller out of reach) opens
// the app again by itself once the app runs again: its initial view, not what failed.

import { reasoningFold } from "./agentlive.js";
import { api } from "./api.js";
import { buildAction } from "./actions.js";
import { asArray, asObject, asText, clear, el } from "./dom.js";
import { tr } from "./i18n.js";
import { adoptSession, appInfo, onAppsChanged, state } from "./state.js";
import { postUiCommands, reapply } from "./uicommands.js";
import { dropPlayers, takePlayers } from "./player.js";
import { acceptDrops } from "./upload.js";
import { placeItemControls, renderView, technicalDetails } from "./views.js";

export class AppViews {
  /** `windows`: the WindowManager; `toast`: the toast function. */
  constructor(windows, toast) {
    this.windows = windows;
    this.toast = toast;
    this.working = new Map(); // app id → its running work (see busySoon)
    this.statuses = new Map(); // app id → its last status seen
    this.backAt = new Map(); // app id → when it last turned running again
    this.retriedAtOnce = new WeakSet(); // windows retried as their answer came
    onAppsChanged((apps) => this.followStatuses(apps));
  }

  /**
   * If the app's window is open, bring it to the front; otherwise create it,
   * send the app an empty instruction for its initial view and render that.
   */
  async open(appId) {
    const { win, created } = this.windows.ensure(appInfo(appId));
    if (!created) {
      win.restore();
      return win;
    }
    await this.load(win);
    return win;
  }

  /** Ask the app for its initial view and render it in `win` (loading meanwhile). */
  async load(win) {
    const appId = win.appId;
    // an idle app is started by this open: the first answer waits for its start
    const cold = ["idle", "starting", "stopped"].includes(appInfo(appId).status);
    const label = cold ? tr("正在启动…", "Starting…") : tr("正在打开…", "Opening…");
    this.render(win, { status: "ok", view_type: "loading", data: {}, message: label });
    let reply;
    const work = this.busySoon(appId, { label });
    try {
      reply = await api.open(appId, state.sessionId);
    } catch (exc) {
      reply = errorReply(exc);
    }
    this.idle(appId, work);
    if (this.windows.get(appId) === win) this.render(win, reply);
  }

  /**
   * Open the app's window again after a reload of the page, showing `kept` (the reply
   * it showed then, see `shownReply`). A view that offers to show itself again (a
   * `refresh` button naming the view it shows in a `view` parameter, as the system
   * app's figures do) is asked again at once, so what it measured is measured now; an error, or nothing kept, asks for the initial view.
   */
  reopen(appId, kept) {
    const { win, created } = this.windows.ensure(appInfo(appId));
    if (!created) return win;
    const reply = asObject(kept);
    if (!reply.view_type || reply.status === "error" || reply.view_type === "error") {
      this.load(win);
      return win;
    }
    this.render(win, reply);
    const again = asArray(reply.actions)
      .map(asObject)
      .find((a) => a.action_id === "refresh" && a.type === "button" && !a.item_id && asObject(a.params).view);
    if (again) this.sendAction(appId, { action_id: "refresh", type: "button", params: asObject(again.params) });
    return win;
  }

  /** Ask the app for its view again and put it in `win` in place: no loading view, no raise. */
  async refreshQuietly(win) {
    let reply;
    try {
      reply = await api.open(win.appId, state.sessionId);
    } catch {
      return; // the window keeps what it shows
    }
    if (this.windows.get(win.appId) === win) this.render(win, reply);
  }

  /** Apps that turned running again: their windows that could not reach them retry. */
  followStatuses(apps) {
    for (const [appId, app] of apps) {
      const before = this.statuses.get(appId);
      this.statuses.set(appId, app.status);
      if (app.status === "running" && before !== undefined && before !== "running") {
        this.backAt.set(appId, Date.now());
        this.retryUnreached(appId);
      }
    }
  }

  /** Open the app again in its window if that window says the app was out of reach. */
  retryUnreached(appId) {
    const win = this.windows.get(appId);
    if (!win || !UNREACHED.has(win.node.dataset.errorCode) || this.isWorking(appId)) return;
    this.load(win);
  }

  /**
   * After `reply` was rendered in `win`: a window that could not reach its app says
   * it will reopen by itself; when the app came back just before this answer (its
   * status came first), it is retried at once, one time.
   */
  noteUnreached(win, reply) {
    const code = reply.status === "error" || reply.view_type === "error" ? asText(asObject(reply.data).code) : "";
    win.node.dataset.errorCode = code;
    if (!UNREACHED.has(code)) {
      this.retriedAtOnce.delete(win);
      return;
    }
    const line = win.content.querySelector(".win-status");
    if (line) {
      line.textContent = tr("应用恢复后，此窗口会自动重新打开", "This window reopens by itself once the app is back");
      line.dataset.level = "info";
    }
    const back = this.backAt.get(win.appId);
    if (back && Date.now() - back < JUST_BACK_MS && !this.retriedAtOnce.has(win)) {
      this.retriedAtOnce.add(win);
      setTimeout(() => this.retryUnreached(win.appId), 0);
    }
  }

  /** Show `reply` in the app's window, opening the window first when needed. */
  show(appId, reply) {
    this.idle(appId);
    const { win } = this.windows.ensure(appInfo(appId));
    win.restore();
    this.render(win, reply);
    return win;
  }

  /** Set the status line of an open window (no-op when it is closed). */
  status(appId, text, level = "info") {
    const win = this.windows.get(appId);
    const line = win?.node.querySelector(".win-status");
    if (!line) return;
    line.textContent = text;
    line.dataset.level = level;
  }

  /** POST the action payload with the session id; render the reply in the same window. */
  async sendAction(appId, payload) {
    const win = this.windows.get(appId);
    if (!win) return;
    const work = this.busySoon(appId, { label: tr("处理中…", "Working…") });
    let reply;
    try {
      reply = await api.action(appId, { ...payload, session_id: state.sessionId });
    } catch (exc) {
      reply = errorReply(exc);
    }
    this.idle(appId, work);
    if (this.windows.get(appId) === win) this.render(win, reply);
    return reply;
  }

  /**
   * The app `appId` has work running (`taskId` when it is an instruction's task of
   * the session `sessionId`): after `delayMs` without an answer its window shows the
   * loading state and its status line says `label`. A quick answer changes nothing
   * before it is shown: a status flashing for a few milliseconds would cost a frame
   * while the answer is being made. Returns the work's handle for `idle`.
   */
  busySoon(appId, { taskId = null, sessionId = null, label = "", delayMs = BUSY_DELAY_MS } = {}) {
    this.idle(appId);
    const work = { appId, taskId, sessionId, label, started: Date.now(), timer: null, ticker: null, overlay: null };
    this.working.set(appId, work);
    work.timer = setTimeout(() => this.showBusy(work), delayMs);
    return work;
  }

  /** Whether `appId` has work running (an open, an action, an instruction's task). */
  isWorking(appId) {
    return this.working.has(appId);
  }

  /** A step of the running work finished: say so in its loading state, once shown. */
  progress(appId, text) {
    const work = this.working.get(appId);
    if (!work) return;
    work.label = text;
    if (!work.overlay) return;
    work.overlay.querySelector(".win-busy-label").textContent = text;
    this.status(appId, text, "busy");
  }

  /** The work of `appId` ended (only `work`, when given): leave the loading state. */
  idle(appId, work = null) {
    const current = this.working.get(appId);
    if (!current || (work && current !== work)) return;
    this.working.delete(appId);
    clearTimeout(current.timer);
    clearInterval(current.ticker);
    current.overlay?.remove();
    const win = this.windows.get(appId);
    if (win) {
      win.node.classList.remove("busy");
      win.content.querySelector(".win-main")?.removeAttribute("inert");
    }
  }

  showBusy(work) {
    if (this.working.get(work.appId) !== work) return;
    const { win } = this.windows.ensure(appInfo(work.appId));
    win.node.classList.add("busy");
    win.content.querySelector(".win-main")?.setAttribute("inert", ""); // controls disabled
    this.status(work.appId, work.label || tr("处理中…", "Working…"), "busy");
    const elapsed = el("span", { className: "win-busy-elapsed" });
    const cancel = el("button", {
      type: "button",
      className: "btn-plain win-busy-cancel",
      text: tr("取消", "Cancel"),
      on: { click: () => this.cancel(work, cancel) },
    });
    const tick = () => {
      elapsed.textContent = tr(`已等待 ${Math.round((Date.now() - work.started) / 1000)} 秒`, `${Math.round((Date.now() - work.started) / 1000)} s`);
    };
    tick();
    work.ticker = setInterval(tick, 1000);
    work.overlay = el(
      "div",
      { className: "win-busy", attrs: { role: "status", "aria-live": "polite" } },
      el("div", { className: "win-busy-spinner", attrs: { "aria-hidden": "true" } }),
      el("div", { className: "win-busy-label", text: work.label || tr("处理中…", "Working…") }),
      elapsed,
      cancel,
    );
    win.content.append(work.overlay);
  }

  /** Ask the controller to stop the work; its answer (cancelled) ends the loading state. */
  async cancel(work, button) {
    button.disabled = true;
    button.textContent = tr("正在取消…", "Cancelling…");
    try {
      const answer = asObject(
        work.taskId && work.sessionId
          ? await api.cancelTask(work.taskId, work.sessionId, work.appId)
          : await api.cancelApp(work.appId, state.sessionId),
      );
      if (!answer.cancelled) {
        button.textContent = tr("已经结束", "Already finished");
      }
    } catch (exc) {
      button.disabled = false;
      button.textContent = tr("取消", "Cancel");
      this.toast({ title: tr("无法取消", "Cannot cancel"), body: exc.message, detail: exc.technical, level: "error" });
    }
  }

  /** Replace the window's content with the rendered `reply` (view, controls, status). */
  render(win, rawReply) {
    let reply = asObject(rawReply);
    if (isCancelled(reply)) {
      if (keepView(win, reply)) return;
      reply = cancelledView(reply); // nothing shown before it (an open): say it quietly
    }
    adoptSession(reply);
    const players = takePlayers(win.content); // a new view of the same song keeps its player
    clear(win.content);
    const send = (payload) => {
      if (this.windows.get(win.appId) === win) this.sendAction(win.appId, payload);
    };
    const view = renderView(reply.view_type, reply.data, { appId: win.appId, reply, send, players });
    dropPlayers(players);
    const taken = new Set();
    const controls = asArray(reply.actions).map((action) =>
      buildAction(action, {
        id: uniqueControlId(asObject(action).action_id, taken),
        send: (payload) => this.sendAction(win.appId, payload),
        formRoot: () => view,
      }),
    );
    const bar = placeItemControls(view, asArray(reply.actions), controls);
    const dropped = asArray(reply.actions).find((a) => asObject(a).type === "file" && asObject(a).drop);
    acceptDrops(win, dropped ?? null, (payload) => this.sendAction(win.appId, payload));
    const failed = reply.status === "error" || reply.view_type === "error";
    const level = replyLevel(reply);
    const statusText = asText(reply.message ?? (failed ? tr("出错了", "Error") : "")).trim();
    // one sentence, once: an informative notice the view itself says (a question, an
    // answer that nothing was done) is neither a banner nor the status line; a warning
    // keeps its banner, which holds its technical detail
    const said = !failed && level === "info" && statusText !== "" && view.textContent.includes(statusText);
    const noticed = !failed && level !== "success" && statusText && !said;
    const answer =
      !noticed && isAnswer(statusText) && !view.textContent.includes(statusText) ? statusText : "";
    win.content.append(
      el(
        "div",
        { className: "win-main" },
        noticed ? noticeBanner(level, statusText, reply.detail) : null,
        answer ? el("pre", { className: "win-answer", text: answer }) : null,
        reply.reasoning ? reasoningFold(reply.reasoning) : null,
        view,
        bar.length ? el("div", { className: "win-actions" }, bar) : null,
      ),
      el("div", {
        className: "win-status",
        text: said ? tr("就绪", "Ready") : statusLine(level, noticed, answer, statusText),
        title: statusText,
        dataset: { level },
        attrs: { "aria-live": "polite" },
      }),
    );
    if (this.working.get(win.appId)?.overlay) {
      win.content.querySelector(".win-main").setAttribute("inert", "");
      win.content.append(this.working.get(win.appId).overlay); // still working: keep it on top
    }
    win.node.dataset.viewType = asText(reply.view_type);
    if (reply.view_type !== "loading") shown.set(win, reply);
    // an editor the view opened is where the user types next, in a window tall enough
    // for it and the buttons under it
    const editor = view.querySelector(".v-editor textarea");
    if (editor) {
      win.atLeast(EDITOR_WINDOW_HEIGHT);
      editor.focus({ preventScroll: true });
    }
    delete win.node.dataset.typed; // what was typed went with the view it was typed in
    this.noteUnreached(win, reply);
    reapply(win.node);
    if (Array.isArray(reply.ui_commands) && reply.ui_commands.length) {
      answers += 1; // what one answer changes is one step of the layout's history
      postUiCommands(reply.ui_commands, `reply:${answers}`);
    }
  }
}

let answers = 0; // replies with UI commands rendered so far
const shown = new WeakMap(); // window → the reply it shows (kept across a reload)
const KEPT_MAX = 200_000; // a reply larger than this (as JSON) is asked for again instead

/**
 * What `win` shows, to be shown again after a reload: its last reply without its
 * session (the reloaded page gets its own) and without the UI commands it carried
 * (the layout keeps their effect); null when there is none or it is too large.
 */
export function shownReply(win) {
  const reply = shown.get(win);
  if (!reply) return null;
  const { session_id: _session, ui_commands: _commands, ...kept } = reply;
  try {
    return JSON.stringify(kept).length <= KEPT_MAX ? kept : null;
  } catch {
    return null;
  }
}
const BUSY_DELAY_MS = 400;
const EDITOR_WINDOW_HEIGHT = 640; // px: an editor of half of it and a form's buttons fit
// error codes of a window whose app could not be reached: it retries when the app runs
const UNREACHED = new Set(["app_unavailable", "network"]);
const JUST_BACK_MS = 3000;

/** The status line under a view: a warning's banner says it all, so the line only
 * points to it (a warning may be a part not done, or none of it: the line claims
 * neither); an answer shown in the view keeps its first line. */
function statusLine(level, noticed, answer, statusText) {
  if (noticed && level === "warning") return tr("⚠️ 请看上方的提示", "⚠️ See the note above");
  return (answer ? `${answer.split("\n")[0]} …` : statusText) || tr("就绪", "Ready");
}

/** How a reply went: "error" (failed), "warning" / "info" (its notice, or cancelled), or "success". */
export function replyLevel(rawReply) {
  const reply = asObject(rawReply);
  if (isCancelled(reply)) return "info";
  if (reply.status === "error" || reply.view_type === "error") return "error";
  return ["info", "warning", "error"].includes(reply.notice) ? reply.notice : "success";
}

/** The answer to work the user cancelled (the controller's error reply `cancelled`). */
export function isCancelled(rawReply) {
  const reply = asObject(rawReply);
  return reply.status === "error" && asObject(reply.data).code === "cancelled";
}

/**
 * A cancelled reply leaves the window as it was (its view, its controls, what was
 * typed); only the status line says it was cancelled. False when the window shows no
 * view of the app yet (only the opening placeholder).
 */
function keepView(win, reply) {
  const main = win.content.querySelector(".win-main");
  const line = win.content.querySelector(".win-status");
  if (!main || !line || win.node.dataset.viewType === "loading") return false;
  adoptSession(reply);
  main.removeAttribute("inert");
  const text = asText(reply.message || tr("已取消", "Cancelled")).trim();
  line.textContent = text;
  line.title = text;
  line.dataset.level = "info";
  return true;
}

/** A cancelled reply as a quiet text view, for a window that had nothing to keep. */
function cancelledView(reply) {
  const text = asText(reply.message || tr("已取消", "Cancelled")).trim();
  return { status: "ok", view_type: "text", data: { content: text }, actions: [], message: text, session_id: reply.session_id };
}

/** A degraded or informative reply's plain message above the view, its technical detail folded. */
function noticeBanner(level, message, detail) {
  return el(
    "div",
    { className: "win-notice", dataset: { level }, attrs: { role: level === "error" ? "alert" : "status" } },
    el("div", { className: "win-notice-text", text: `${level === "info" ? "ℹ️" : "⚠️"} ${message}` }),
    detail ? technicalDetails(asText(detail)) : null,
  );
}

/** A message with several lines, or too long for the status line, is an answer. */
function isAnswer(text) {
  return text.includes("\n") || text.length > 120;
}

/**
 * `btn_<action_id>` for the first control of an action id, then `btn_<id>_2`, …;
 * unique in the whole page (other windows included) and in this render.
 */
export function uniqueControlId(actionId, taken) {
  const base = `btn_${asText(actionId ?? "").replace(/\s+/g, "_") || "action"}`;
  let id = base;
  for (let n = 2; taken.has(id) || document.getElementById(id); n += 1) id = `${base}_${n}`;
  taken.add(id);
  return id;
}

/** A failed request as the standard error view (the app's window says what broke). */
export function errorReply(exc) {
  const code = exc?.code || "error";
  const message = exc?.message || String(exc);
  const reply = { status: "error", view_type: "error", data: { code, message }, actions: [], message };
  if (exc?.technical) reply.detail = exc.technical;
  return reply;
}
