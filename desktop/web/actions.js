// Actions become controls: ONE table from action `type` to a control
// builder. A link to one of the desktop's own places (`isPlace`: "aios:settings", or
// "aios:files#<element id>", the file chooser of a window's `file` control) is a button
// that opens it (an `aios:place` event app.js answers). Triggering a control sends exactly the spec's payload for its type —
// {action_id, type} plus one key: params | form_values | selected | checked |
// value | href | on — through `ctx.send`. Labels are set as text (SECURITY.md Q2).

import { asArray, asObject, asText, el } from "./dom.js";
import { tr } from "./i18n.js";
import { sendFiles } from "./upload.js";
import { collectForm, formField, normalizeOption } from "./views.js";

/**
 * type → (action, ctx) => Node. ctx: {id, send(payload), formRoot()}.
 * `id` goes on the outermost element; `send` posts the payload and re-renders.
 */
export const ACTIONS = {
  button: buildButton,
  submit_form: buildSubmitForm,
  select: buildSelect,
  checkbox: buildCheckbox,
  radio: buildRadio,
  input: buildInput,
  link: buildLink,
  toggle: buildToggle,
  slider: buildSlider,
  datetime: buildDatetime,
  file: buildFile,
};

/** Build the control of one action, or a disabled stand-in for an unknown type. */
export function buildAction(rawAction, ctx) {
  const action = asObject(rawAction);
  const type = asText(action.type);
  const builder = Object.hasOwn(ACTIONS, type) ? ACTIONS[type] : null;
  const node = builder
    ? builder(action, ctx)
    : el("span", {
        className: "act act-unknown",
        text: tr(
          `${asText(action.label || action.action_id)}（不支持的操作 ${type || "?"}）`,
          `${asText(action.label || action.action_id)} (an action this desktop does not support: ${type || "?"})`,
        ),
      });
  node.id = ctx.id;
  node.classList.add("act");
  node.dataset.uiType = builder ? type : "unknown";
  node.dataset.uiLabel = asText(action.label ?? action.action_id ?? "");
  node.dataset.actionId = asText(action.action_id ?? "");
  return node;
}

function payload(action, key, value) {
  return { action_id: asText(action.action_id), type: asText(action.type), [key]: value };
}

function labelOf(action) {
  return asText(action.label ?? action.action_id ?? "");
}

function buildButton(action, ctx) {
  const params = asObject(action.params);
  return el("button", {
    type: "button",
    className: "act-button",
    text: labelOf(action),
    on: { click: () => ctx.send(payload(action, "params", params)) },
  });
}

/** With fields of its own: a small form. Without: a button submitting the window's form view. */
function buildSubmitForm(action, ctx) {
  const fields = asArray(action.fields);
  const text = labelOf(action) || tr("提交", "Submit");
  if (fields.length === 0) {
    return el("button", {
      type: "button",
      className: "act-submit",
      text,
      on: { click: () => ctx.send(payload(action, "form_values", collectForm(ctx.formRoot()))) },
    });
  }
  const form = el(
    "form",
    { className: "act-form" },
    fields.map(formField),
    el("button", { type: "submit", className: "act-submit", text }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.send(payload(action, "form_values", collectForm(form)));
  });
  return form;
}

function labelled(action, ...controls) {
  return el("div", { className: "act-group" }, el("span", { className: "act-label", text: labelOf(action) }), controls);
}

function buildSelect(action, ctx) {
  const options = asArray(action.options).map(normalizeOption);
  const select = el(
    "select",
    { attrs: { "aria-label": labelOf(action) } },
    el("option", { value: "", text: tr("— 请选择 —", "— Choose —"), disabled: true }),
    options.map((o) => el("option", { value: o.key, text: o.label })),
  );
  const current = options.find((o) => action.value !== undefined && o.key === asText(action.value));
  select.value = current ? current.key : "";
  select.addEventListener("change", () => {
    const chosen = options.find((o) => o.key === select.value);
    if (chosen) ctx.send(payload(action, "selected", chosen.value));
  });
  return labelled(action, select);
}

function buildCheckbox(action, ctx) {
  const options = asArray(action.options).map(normalizeOption);
  const initially = new Set(asArray(action.checked).map(asText));
  const boxes = options.map((o) => {
    const box = el("input", { type: "checkbox", value: o.key, checked: initially.has(o.key) });
    return { option: o, box, node: el("label", { className: "act-choice" }, box, el("span", { text: o.label })) };
  });
  for (const { box } of boxes) {
    box.addEventListener("change", () => {
      const checked = boxes.filter((b) => b.box.checked).map((b) => b.option.value);
      ctx.send(payload(action, "checked", checked));
    });
  }
  return labelled(action, boxes.map((b) => b.node));
}

let radioGroups = 0;

function buildRadio(action, ctx) {
  const options = asArray(action.options).map(normalizeOption);
  radioGroups += 1;
  const group = `radio_${radioGroups}`;
  const nodes = options.map((o) => {
    const radio = el("input", {
      type: "radio",
      name: group,
      value: o.key,
      checked: action.value !== undefined && asText(action.value) === o.key,
    });
    radio.addEventListener("change", () => {
      if (radio.checked) ctx.send(payload(action, "selected", o.value));
    });
    return el("label", { className: "act-choice" }, radio, el("span", { text: o.label }));
  });
  return labelled(action, nodes);
}

function buildInput(action, ctx) {
  const input = el("input", {
    type: "text",
    placeholder: asText(action.placeholder ?? action.label ?? ""),
    value: asText(action.value ?? ""),
    attrs: { "aria-label": labelOf(action) },
  });
  const go = el("button", { type: "submit", className: "act-go", text: tr("确定", "OK") });
  const form = el("form", { className: "act-group act-input-form" }, el("span", { className: "act-label", text: labelOf(action) }), input, go);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    ctx.send(payload(action, "value", input.value));
  });
  return form;
}

/** The app decides what a link does; the desktop never navigates away. */
// the desktop's own places a link may name: opened here, never sent to the app
const PLACES = /^aios:(settings|files#[\w-]{1,200})$/;

/** Whether `href` names one of the desktop's own places. */
export function isPlace(href) {
  return PLACES.test(href);
}

function buildLink(action, ctx) {
  const href = asText(action.href ?? "");
  if (isPlace(href)) {
    return el("button", {
      type: "button",
      className: "act-button",
      text: labelOf(action),
      on: { click: () => window.dispatchEvent(new CustomEvent("aios:place", { detail: href })) },
    });
  }
  return el("a", {
    className: "act-link",
    href: "#",
    title: href,
    text: `🔗 ${labelOf(action) || href}`,
    on: {
      click: (event) => {
        event.preventDefault();
        ctx.send(payload(action, "href", href));
      },
    },
  });
}

function buildToggle(action, ctx) {
  const box = el("input", { type: "checkbox", className: "toggle-input", checked: Boolean(action.on) });
  box.setAttribute("role", "switch");
  box.addEventListener("change", () => ctx.send(payload(action, "on", box.checked)));
  return el(
    "label",
    { className: "act-toggle" },
    box,
    el("span", { className: "toggle-track" }, el("span", { className: "toggle-thumb" })),
    el("span", { className: "act-label", text: labelOf(action) }),
  );
}

function buildSlider(action, ctx) {
  const min = finite(action.min, 0);
  const max = finite(action.max, 100);
  const step = finite(action.step, 1);
  const range = el("input", { type: "range", min, max, step });
  range.value = String(finite(action.value, min));
  const shown = el("output", { className: "act-slider-value", text: range.value });
  range.addEventListener("input", () => {
    shown.textContent = range.value;
  });
  range.addEventListener("change", () => ctx.send(payload(action, "value", Number(range.value))));
  return labelled(action, range, shown);
}

function buildDatetime(action, ctx) {
  const input = el("input", { type: "datetime-local", attrs: { "aria-label": labelOf(action) } });
  if (typeof action.value === "string") input.value = action.value.slice(0, 16);
  input.addEventListener("change", () => {
    if (input.value) ctx.send(payload(action, "value", input.value));
  });
  return labelled(action, input);
}

/** A button opening the file chooser; the chosen files go to the app in pieces. */
function buildFile(action, ctx) {
  const chooser = el("input", { type: "file", className: "act-file-input", multiple: action.multiple !== false, hidden: true });
  if (action.accept) chooser.accept = asText(action.accept);
  chooser.addEventListener("change", () => {
    const files = Array.from(chooser.files ?? []);
    chooser.value = "";
    if (files.length) sendFiles(action, files, ctx.send);
  });
  const button = el("button", {
    type: "button",
    className: "act-button act-file",
    text: labelOf(action),
    on: { click: () => chooser.click() },
  });
  return el("span", { className: "act-file-wrap" }, button, chooser);
}

function finite(value, fallback) {
  const number = Number(value);
  return value !== null && value !== undefined && value !== "" && Number.isFinite(number) ? number : fallback;
}
