// Confirmation before risky steps (controller/permissions/policy.py): when an app plans a
// step that needs the user's yes (starting a program, overwriting a file, writing a
// database, a command outside the whitelist), the controller pauses that task and
// announces it (`confirm_request` event; `GET /api/confirmations` after a reload).
// This module shows one dialog at a time saying exactly what will run, with
// 允许一次 / 总是允许此应用 / 拒绝 (in the desktop's language); the answer goes to
// `POST /api/confirmations/<id>`
// and the task's final reply is rendered in the app's window. It also adds the
// `confirm` view type to the renderer (the window of the paused task shows the same
// question with the same three buttons). Every string is set as text (SECURITY.md Q2).

import { api, apiError, userLanguage } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { appName, tr } from "./i18n.js";
import { state } from "./state.js";
import { VIEWS } from "./views.js";

const DECISIONS = [
  { decision: "allow_once", text: () => tr("允许一次", "Allow once"), primary: true },
  { decision: "allow_always", text: () => tr("总是允许此应用", "Always allow this app") },
  { decision: "deny", text: () => tr("拒绝", "Deny") },
];

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "X-AIOS-Token": api.token, "Content-Type": "application/json", "Accept-Language": userLanguage() },
    body: JSON.stringify(body),
    cache: "no-store",
  });
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) {
    throw apiError(response.status, asObject(payload));
  }
  return payload;
}

async function getPending() {
  const response = await fetch("/api/confirmations", { headers: { "X-AIOS-Token": api.token }, cache: "no-store" });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return asArray(asObject(await response.json()).confirmations);
}

/** The asking app's name in the desktop's language (the controller's, for an app it no longer lists). */
function shownName(pending) {
  const app = state.apps.get(asText(pending.app_id));
  return asText(app ? appName(app) : pending.app_name || pending.app_id);
}

/**
 * The question as nodes: who asks, and one line per risky step saying what runs — the
 * controller's sentence, in the reader's words (controller/permissions/policy.py); what
 * a tool states of itself (its id, its developer's description) is the step's
 * technical `detail`, folded away.
 */
function question(pending) {
  const steps = asArray(pending.steps).map(asObject);
  const own = steps.filter((step) => step.detail).map((step) => el("p", { className: "confirm-tool-words", text: asText(step.detail) }));
  return [
    el("p", {
      className: "confirm-who",
      text:
        pending.kind === "schedule"
          ? tr(`${asText(pending.summary)}。允许后按计划运行：`, `${asText(pending.summary)}. Once allowed, it runs as planned:`)
          : tr(
              `应用「${shownName(pending)}」请求执行以下操作：`,
              `The app "${shownName(pending)}" asks to:`,
            ),
    }),
    el(
      "ol",
      { className: "confirm-steps" },
      steps.map((step) =>
        el(
          "li",
          { className: "confirm-step", dataset: { kind: asText(step.kind), tool: asText(step.tool) } },
          el("span", { text: asText(step.sentence) }),
        ),
      ),
    ),
    el(
      "details",
      { className: "confirm-plan" },
      el("summary", { text: tr("技术细节：完整计划", "Technical details: the exact plan") }),
      ...own,
      el("pre", { text: JSON.stringify(asArray(pending.plan), null, 2) }),
    ),
  ];
}

/**
 * Wire confirmations into the page. `views`: the AppViews (renders the final reply
 * in the app's window); `toast`: the toast function. Loads what is already pending.
 * Returns {request(event), resolved(event), loadPending()} for the event stream.
 */
export function installConfirmations({ views, toast }) {
  const queue = new Map(); // confirmation_id → pending, oldest first
  let shown = null; // {id, close}

  const showNext = () => {
    if (shown || queue.size === 0) return;
    const pending = queue.values().next().value;
    const id = asText(pending.confirmation_id);
    const dialog = openModal({
      id: "confirm_dialog",
      title: tr("需要你的确认", "Confirmation needed"),
      body: question(pending),
      buttons: DECISIONS.map((d) => ({
        text: d.text(),
        primary: Boolean(d.primary),
        id: `confirm_${d.decision}`,
        onClick: () => decide(pending, d.decision),
      })),
      focus: "confirm_deny", // the safe choice: Enter runs nothing
    });
    dialog.node.dataset.confirmationId = id;
    dialog.node.classList.add("confirm-dialog");
    shown = { id, close: dialog.close };
    // closed without an answer (✕, Escape): it stays pending; the window still asks
    const observer = new MutationObserver(() => {
      if (!dialog.node.isConnected) {
        observer.disconnect();
        if (shown?.id === id) shown = null;
      }
    });
    observer.observe(document.getElementById("modal_root"), { childList: true, subtree: true });
  };

  const forget = (id) => {
    queue.delete(id);
    if (shown?.id === id) {
      const close = shown.close;
      shown = null;
      close();
    }
    showNext();
  };

  async function decide(pending, decision) {
    const id = asText(pending.confirmation_id);
    const appId = asText(pending.app_id);
    let reply;
    try {
      reply = await post(`/api/confirmations/${encodeURIComponent(id)}`, { decision });
    } catch (exc) {
      if (exc.status === 404) {
        forget(id); // answered elsewhere (another window, the CLI)
        return;
      }
      toast({ title: tr("无法提交确认", "Decision not sent"), body: exc.message, detail: exc.technical, level: "error" });
      return;
    }
    forget(id);
    // a scheduled job's question has no paused task behind it: its answer is a toast
    if (pending.kind === "schedule") toast({ title: asText(asObject(reply).message), level: "info", timeout: 4000 });
    else views.show(appId, reply);
    if (decision === "deny") toast({ title: tr("已拒绝", "Denied"), body: asText(pending.summary), level: "info", timeout: 3000 });
  }

  const add = (raw) => {
    const pending = asObject(raw);
    const id = asText(pending.confirmation_id);
    if (!id || queue.has(id)) return;
    queue.set(id, pending);
    showNext();
  };

  VIEWS.confirm = (data) =>
    el(
      "div",
      { className: "v-confirm", dataset: { confirmationId: asText(data.confirmation_id) } },
      el("div", { className: "v-confirm-title", text: `⚠️ ${tr("需要你的确认", "Confirmation needed")}` }),
      question(data),
      el(
        "div",
        { className: "v-confirm-buttons" },
        DECISIONS.map((d) =>
          el("button", {
            type: "button",
            className: d.primary ? "btn-primary" : "btn-plain",
            text: d.text(),
            dataset: { decision: d.decision },
            on: { click: () => decide(data, d.decision) },
          }),
        ),
      ),
    );

  const loadPending = async () => {
    try {
      for (const pending of await getPending()) add(pending);
    } catch {
      // the controller may be starting; the event stream brings new questions
    }
  };
  loadPending();

  return {
    request: (event) => add(asObject(event).data),
    resolved: (event) => forget(asText(asObject(asObject(event).data).confirmation_id)),
    loadPending,
  };
}
