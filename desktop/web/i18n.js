// The desktop's one language: Chinese or English, never both side by side. It is
// the settings' `ui_language` when the user chose one, else the browser's
// `navigator.language`. `tr(zh, en)` picks the text; static labels of index.html
// carry their English in `data-en` (text), `data-en-title`, `data-en-placeholder`,
// `data-en-label` (the aria-label).
// An app's name and description are its manifest's `names` / `descriptions` entry
// for the language (`appName`, `appDescription`), else its `name` / `description`.
// Switching the language relabels the page in place: `onLanguageChange` listeners
// (the taskbar, window titles, …) redraw what they built.

let current = pick(navigator.language);

function pick(value) {
  return typeof value === "string" && /^en\b/i.test(value) ? "en" : "zh";
}

/** "zh" or "en". */
export function language() {
  return current;
}

/** Follow the settings' `ui_language` ("" or missing: the browser's language). */
export function setLanguage(value) {
  const next = typeof value === "string" && value ? pick(value) : pick(navigator.language);
  const changed = next !== current;
  current = next;
  translatePage();
  if (changed) for (const listener of listeners) listener(current);
  return changed;
}

const listeners = [];

/** Call `listener(language)` after each switch of the desktop's language. */
export function onLanguageChange(listener) {
  listeners.push(listener);
}

/** The desktop's language as a locale code: "zh-CN" or "en-US". */
export function localeCode() {
  return current === "en" ? "en-US" : "zh-CN";
}

/** `app`'s name in the desktop's language (an `AppInfo` of GET /api/apps). */
export function appName(app) {
  const own = app?.names?.[localeCode()];
  return String((typeof own === "string" && own) || app?.name || app?.id || "");
}

/** `app`'s description in the desktop's language. */
export function appDescription(app) {
  const own = app?.descriptions?.[localeCode()];
  return String((typeof own === "string" && own) || app?.description || "");
}

/** The text for the desktop's language. */
export function tr(zh, en) {
  return current === "en" ? en : zh;
}

const ORIGINAL = new WeakMap(); // node → its Chinese {text, title, placeholder}

/** Set the static labels of the page (index.html) in the desktop's language. */
export function translatePage(root = document) {
  document.documentElement.lang = current === "en" ? "en" : "zh-CN";
  for (const node of root.querySelectorAll("[data-en], [data-en-title], [data-en-placeholder], [data-en-label]")) {
    if (!ORIGINAL.has(node)) {
      ORIGINAL.set(node, { text: node.textContent, title: node.title, placeholder: node.placeholder, label: node.getAttribute("aria-label") });
    }
    const zh = ORIGINAL.get(node);
    if (node.dataset.en !== undefined) node.textContent = tr(zh.text, node.dataset.en);
    if (node.dataset.enTitle !== undefined) node.title = tr(zh.title, node.dataset.enTitle);
    if (node.dataset.enPlaceholder !== undefined) {
      node.placeholder = tr(zh.placeholder, node.dataset.enPlaceholder);
    }
    if (node.dataset.enLabel !== undefined) node.setAttribute("aria-label", tr(zh.label, node.dataset.enLabel));
  }
}
