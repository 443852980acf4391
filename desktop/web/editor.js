// The code editor of a form field of type `code`: a monospace textarea beside a gutter
// of line numbers kept in step with it (its lines and its scroll). Tab indents (the
// caret's line, or every selected line) by four spaces and Shift+Tab takes them back;
// Esc then Tab leaves the editor, so the keyboard is never trapped in it.

import { el } from "./dom.js";

const INDENT = "    ";

/** A `.v-editor`: the gutter and the textarea (the named control of the form). */
export function codeEditor(value) {
  const gutter = el("div", { className: "v-editor-lines", attrs: { "aria-hidden": "true" } });
  const text = el("textarea", {
    className: "v-editor-text",
    value,
    spellcheck: false,
    wrap: "off",
    attrs: { autocapitalize: "off", autocomplete: "off" },
  });
  const number = () => {
    const count = text.value.split("\n").length;
    if (gutter.childElementCount === count) return;
    gutter.replaceChildren(...Array.from({ length: count }, (_, i) => el("div", { text: String(i + 1) })));
  };
  number();
  let leaving = false; // Esc was pressed: the next Tab moves the focus on
  text.addEventListener("input", number);
  text.addEventListener("scroll", () => {
    gutter.scrollTop = text.scrollTop;
  });
  text.addEventListener("blur", () => {
    leaving = false;
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      leaving = true;
      return;
    }
    if (event.key !== "Tab" || event.ctrlKey || event.altKey || event.metaKey || leaving) {
      leaving = false;
      return;
    }
    event.preventDefault();
    if (event.shiftKey) outdent(text);
    else indent(text);
    number();
  });
  return el("div", { className: "v-editor" }, gutter, text);
}

/** The start of the line holding `index` in `value`. */
function lineStart(value, index) {
  return value.lastIndexOf("\n", index - 1) + 1;
}

/** Replace [from, to) with `text` as typing would (the browser's undo keeps it). */
function replace(area, from, to, text) {
  area.setSelectionRange(from, to);
  if (!document.execCommand("insertText", false, text)) area.setRangeText(text, from, to, "end");
}

function indent(area) {
  const { selectionStart: start, selectionEnd: end, value } = area;
  if (!value.slice(start, end).includes("\n")) {
    replace(area, start, end, INDENT);
    return;
  }
  const from = lineStart(value, start);
  const block = value.slice(from, end);
  const indented = block.replace(/^/gm, INDENT);
  replace(area, from, end, indented);
  area.setSelectionRange(start + INDENT.length, from + indented.length);
}

function outdent(area) {
  const { selectionStart: start, selectionEnd: end, value } = area;
  const from = lineStart(value, start);
  const to = Math.max(end, from);
  const block = value.slice(from, to);
  const outdented = block.replace(/^( {1,4}|\t)/gm, "");
  if (outdented === block) return;
  const first = block.length - block.replace(/^( {1,4}|\t)/, "").length;
  replace(area, from, to, outdented);
  const caret = Math.max(from, start - first);
  area.setSelectionRange(caret, start === end ? caret : from + outdented.length);
}
