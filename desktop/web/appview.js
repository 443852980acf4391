// An app's window content: the rendered view, its action controls and a status
// line. Owns the S-23 open flow (create the window, ask the app for its initial
// view, render it), sending actions (S-53, S-55) and showing task results.

import { api } from "./api.js";
import { buildAction } from "./actions.js";
import { asArray, asObject, asText, clear, el } from "./dom.js";
import { adoptSession, appInfo, state } from "./state.js";
import { postUiCommands, reapply, releaseFloating } from "./uicommands.js";
import { renderView } from "./views.js";

export class AppViews {
  /** `windows`: the WindowManager; `toast`: the toast function. */
  constructor(windows, toast) {
    this.windows = windows;
    this.toast = toast;
  }

  /**
   * S-23: if the app's window is open, bring it to the front; otherwise create it,
   * send the app an empty instruction for its initial view and render that.
   */
  async open(appId) {
    const { win, created } = this.windows.ensure(appInfo(appId));
    if (!created) {
      win.restore();
      return win;
    }
    this.render(win, { status: "ok", view_type: "loading", data: {}, message: "正在打开… (opening)" });
    let reply;
    try {
      reply = await api.open(appId, state.sessionId);
    } catch (exc) {
      reply = errorReply(exc);
    }
    if (this.windows.get(appId) === win) this.render(win, reply);
    return win;
  }

  /** Show `reply` in the app's window, opening the window first when needed. */
  show(appId, reply) {
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
    win.node.classList.add("busy");
    this.status(appId, "处理中… (working)", "busy");
    let reply;
    try {
      reply = await api.action(appId, { ...payload, session_id: state.sessionId });
    } catch (exc) {
      reply = errorReply(exc);
    }
    win.node.classList.remove("busy");
    if (this.windows.get(appId) === win) this.render(win, reply);
  }

  /** Replace the window's content with the rendered `reply` (view, controls, status). */
  render(win, rawReply) {
    const reply = asObject(rawReply);
    adoptSession(reply);
    releaseFloating(win.node.id);
    clear(win.content);
    const view = renderView(reply.view_type, reply.data, { appId: win.appId, reply });
    const taken = new Set();
    const controls = asArray(reply.actions).map((action) =>
      buildAction(action, {
        id: uniqueControlId(asObject(action).action_id, taken),
        send: (payload) => this.sendAction(win.appId, payload),
        formRoot: () => view,
      }),
    );
    const failed = reply.status === "error" || reply.view_type === "error";
    const statusText = asText(reply.message ?? (failed ? "出错了 (error)" : ""));
    win.content.append(
      el(
        "div",
        { className: "win-main" },
        view,
        controls.length ? el("div", { className: "win-actions" }, controls) : null,
      ),
      el("div", {
        className: "win-status",
        text: statusText || "就绪 (ready)",
        dataset: { level: failed ? "error" : "info" },
        attrs: { "aria-live": "polite" },
      }),
    );
    win.node.dataset.viewType = asText(reply.view_type);
    reapply(win.node);
    if (Array.isArray(reply.ui_commands) && reply.ui_commands.length) postUiCommands(reply.ui_commands);
  }
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

/** A failed request as the standard error view (J2: the app's window says what broke). */
export function errorReply(exc) {
  const code = exc?.code || "error";
  const message = exc?.message || String(exc);
  return { status: "error", view_type: "error", data: { code, message }, actions: [], message };
}
