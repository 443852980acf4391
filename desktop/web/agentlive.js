// The agent loop of an app, live in its window (`agent_progress` events):
// the model's reasoning folded away (思考过程), its text as it streams, each tool call with its arguments and then its
// result, a pause waiting for the user's confirmation, retries and compaction (a retry
// that discards its attempt takes back what that attempt streamed). The
// panel lives until the app's reply is rendered (which replaces the window's
// content). Every string is set as text.

import { asObject, asText, el } from "./dom.js";
import { tr } from "./i18n.js";
import { appInfo } from "./state.js";

export class AgentLive {
  /** `windows`: the WindowManager. */
  constructor(windows) {
    this.windows = windows;
  }

  /** One `agent_progress` event: `data.kind` says what happened. */
  update(event) {
    const appId = event.app_id;
    if (!appId) return;
    const data = asObject(event.data);
    const kind = asText(data.kind);
    const panel = this.panel(appId, kind === "start");
    const sub = data.agent ? `[${asText(data.agent)}] ` : "";
    switch (kind) {
      case "start":
        panel.append(line("agent-live-start", `▶ ${asText(data.instruction)}`));
        break;
      case "turn":
        panel.dataset.turn = asText(data.turn);
        break;
      case "text":
        this.textBlock(panel, asText(data.turn)).textContent += asText(data.text);
        break;
      case "reasoning":
        this.reasoningBlock(panel, asText(data.turn)).textContent += asText(data.text);
        break;
      case "tool_call_delta": {
        const block = this.callBlock(panel, `delta-${asText(data.turn)}-${asText(data.index)}`, asText(data.name));
        block.querySelector(".agent-live-args").textContent += asText(data.arguments);
        break;
      }
      case "tool_call": {
        // the streamed pieces of this turn's calls give way to the checked calls
        for (const streamed of panel.querySelectorAll(`[data-call-key^="delta-${CSS.escape(panel.dataset.turn || "")}-"]`)) streamed.remove();
        const block = this.callBlock(panel, asText(data.id), `${sub}${asText(data.name)}`);
        block.querySelector(".agent-live-args").textContent = asText(data.arguments);
        break;
      }
      case "tool_result": {
        const block = this.callBlock(panel, asText(data.id), `${sub}${asText(data.name)}`);
        block.dataset.status = data.ok ? "ok" : "error";
        block.querySelector(".agent-live-result").textContent = `${data.ok ? "✓" : "✗"} ${asText(data.result)}`;
        break;
      }
      case "pause":
        panel.append(line("agent-live-pause", `⏸ ${tr("等待你的确认：", "Waiting for your confirmation: ")}${asArrayNames(data.calls)}`));
        break;
      case "awaiting_user_input":
        panel.append(line("agent-live-pause", `❓ ${tr("等待你的回答：", "Waiting for your answer: ")}${asText(data.question)}`));
        break;
      case "retry":
        if (data.discarded) this.retract(panel, asText(data.turn ?? panel.dataset.turn));
        panel.append(line("agent-live-note", `↻ ${tr("重试", "Retrying")} (${asText(data.reason)})`));
        break;
      case "compact":
        panel.append(line("agent-live-note", `⇣ ${tr("压缩上下文", "Context compacted")}`));
        break;
      case "stop_hook":
        panel.append(line("agent-live-note", `⚑ ${asText(data.problem)}`));
        break;
      case "done":
        panel.append(line("agent-live-done", data.status === "ok" ? `✓ ${tr("完成", "Done")}` : `■ ${asText(data.text)}`));
        break;
      default:
        return;
    }
    panel.scrollTop = panel.scrollHeight;
  }

  /** The window's live panel (a new one when `fresh`), opening the window if needed. */
  panel(appId, fresh) {
    const { win } = this.windows.ensure(appInfo(appId));
    let panel = win.content.querySelector(".agent-live");
    if (panel && fresh) {
      panel.remove();
      panel = null;
    }
    if (!panel) {
      panel = el("div", { className: "agent-live", attrs: { "aria-live": "polite" } });
      panel.id = `agent_live_${appId}`;
      win.content.prepend(panel);
    }
    return panel;
  }

  /** A discarded attempt of turn `turn`: its streamed text, reasoning and calls go. */
  retract(panel, turn) {
    const key = CSS.escape(turn);
    const selector = `.agent-live-text[data-turn="${key}"], .agent-reasoning[data-turn="${key}"], [data-call-key^="delta-${key}-"]`;
    for (const streamed of panel.querySelectorAll(selector)) streamed.remove();
  }

  /** The folded reasoning of one turn (its text element), before that turn's text. */
  reasoningBlock(panel, turn) {
    let fold = panel.querySelector(`.agent-reasoning[data-turn="${CSS.escape(turn)}"]`);
    if (!fold) {
      fold = reasoningFold("");
      fold.dataset.turn = turn;
      panel.append(fold);
    }
    return fold.querySelector(".agent-reasoning-text");
  }

  textBlock(panel, turn) {
    let block = panel.querySelector(`.agent-live-text[data-turn="${CSS.escape(turn)}"]`);
    if (!block) {
      block = el("div", { className: "agent-live-text", attrs: { "data-turn": turn } });
      panel.append(block);
    }
    return block;
  }

  callBlock(panel, key, name) {
    let block = panel.querySelector(`[data-call-key="${CSS.escape(key)}"]`);
    if (!block) {
      block = el(
        "div",
        { className: "agent-live-call", attrs: { "data-call-key": key } },
        el("span", { className: "agent-live-name", text: `🔧 ${name}` }),
        el("code", { className: "agent-live-args" }),
        el("div", { className: "agent-live-result" }),
      );
      panel.append(block);
    }
    return block;
  }
}

/** The model's reasoning, folded: "思考过程" / "Thinking", opened by a click. */
export function reasoningFold(text) {
  return el(
    "details",
    { className: "agent-reasoning" },
    el("summary", { text: tr("思考过程", "Thinking") }),
    el("div", { className: "agent-reasoning-text", text: asText(text) }),
  );
}

function line(className, text) {
  return el("div", { className, text });
}

function asArrayNames(calls) {
  return (Array.isArray(calls) ? calls : []).map((c) => asText(asObject(c).name)).join(", ");
}
