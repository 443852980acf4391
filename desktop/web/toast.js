// Toasts: short notices in the corner, styled by level (info, success, warning,
// error). `notify` events and reply messages end up here; title and body are text,
// a technical `detail` is folded away under the body (a details disclosure); an
// `action` {text, run} is one button under the body that runs and closes the toast.
// A toast speaks the language it was shown in: a switch of the desktop's language
// puts away the toasts shown before it (what they said is not said again).

import { asText, el } from "./dom.js";
import { language, onLanguageChange, tr } from "./i18n.js";

const LEVELS = new Set(["info", "success", "warning", "error"]);
const ICONS = { info: "ℹ️", success: "✅", warning: "⚠️", error: "⛔" };
const MAX_SHOWN = 5;

/** Show a toast; returns its element. `timeout` 0 keeps it until closed. */
export function toast({ title = "", body = "", detail = "", level = "info", timeout = 5000, action = null } = {}) {
  const box = document.getElementById("toasts");
  const kind = LEVELS.has(level) ? level : "info";
  const node = el(
    "div",
    {
      className: `toast toast-${kind}`,
      attrs: { role: kind === "error" ? "alert" : "status" },
      dataset: { lang: language() },
    },
    el("span", { className: "toast-icon", text: ICONS[kind] }),
    el(
      "div",
      { className: "toast-text" },
      title ? el("div", { className: "toast-title", text: asText(title) }) : null,
      body ? el("div", { className: "toast-body", text: asText(body) }) : null,
      detail
        ? el(
            "details",
            { className: "toast-details" },
            el("summary", { text: tr("技术细节", "Technical details") }),
            el("pre", { text: asText(detail) }),
          )
        : null,
      action
        ? el("button", {
            type: "button",
            className: "toast-action",
            text: asText(action.text),
            on: {
              click: () => {
                node.remove();
                action.run();
              },
            },
          })
        : null,
    ),
    el("button", {
      type: "button",
      className: "toast-close",
      text: "✕",
      attrs: { "aria-label": tr("关闭", "Close") },
      on: { click: () => node.remove() },
    }),
  );
  box.append(node);
  while (box.children.length > MAX_SHOWN) box.firstElementChild.remove();
  if (timeout > 0) setTimeout(() => node.remove(), timeout);
  return node;
}

onLanguageChange((now) => {
  for (const node of document.querySelectorAll("#toasts .toast")) {
    if (node.dataset.lang !== now) node.remove();
  }
});
