// The unified view renderer: ONE table from `view_type` to a render
// function. Each function reads the app's `data` by the shape of its view type, as
// written once in aios_protocol/views.py (and built by aios_sdk.views), and only
// places its values into slots — as text, never as markup (SECURITY.md Q2). Missing
// keys are tolerated, other keys are the app's and not shown; an unknown view
// type is shown as readable JSON. A list item, table row or card with an `id` carries
// it as `data-item-id` and an empty `.v-item-actions` slot where `placeItemControls`
// puts the controls whose `item_id` names it.

import { resolveMediaUrl } from "./api.js";
import { barChart, chartPoints, lineChart, pieChart } from "./chart.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { tr } from "./i18n.js";
import { codeEditor } from "./editor.js";
import { keptPlayer, linkPlayer } from "./player.js";

/**
 * view_type → (data, ctx) => Node. ctx: {appId, reply, send, players} (`players`: the
 * window's players before this view, see player.js). Adding a type is one entry.
 */
export const VIEWS = {
  text: renderText,
  list: renderList,
  card: renderCards,
  table: renderTable,
  form: renderForm,
  media: renderMedia,
  image: renderImage,
  chart: renderChart,
  code: renderCode,
  dashboard: renderDashboard,
  metric: renderMetric,
  loading: renderLoading,
  error: renderError,
};

/** Render one view: the type's function, or the readable fallback; never throws. */
export function renderView(viewType, data, ctx = {}) {
  const type = typeof viewType === "string" ? viewType : "";
  const render = Object.hasOwn(VIEWS, type) ? VIEWS[type] : null;
  let node;
  try {
    node = render ? render(asObject(data), ctx) : renderUnknown(type, data);
  } catch (exc) {
    node = renderUnknown(type, data, exc);
  }
  node.classList.add("view", `view-${render ? type : "unknown"}`);
  node.dataset.viewType = type || "(none)";
  return node;
}

function heading(data) {
  return data.title !== undefined && data.title !== null && data.title !== ""
    ? el("h3", { className: "v-title", text: asText(data.title) })
    : null;
}

function renderText(data) {
  return el("div", {}, heading(data), el("div", { className: "v-text", text: asText(data.content) }));
}

function renderList(data) {
  const items = asArray(data.items);
  return el(
    "div",
    {},
    heading(data),
    items.length === 0
      ? el("p", { className: "v-empty", text: asText(data.empty ?? tr("（空）", "(empty)")) })
      : el(
          "ol",
          { className: "v-list" },
          items.map((raw, index) => {
            const item = asObject(raw);
            return el(
              "li",
              { className: "v-list-item", dataset: { index: String(index), ...itemId(item) } },
              item.icon ? el("span", { className: "v-list-icon", text: asText(item.icon) }) : null,
              el(
                "div",
                { className: "v-list-body" },
                el("div", { className: "v-list-title", text: asText(item.title) }),
                item.sub ? el("div", { className: "v-list-sub", text: asText(item.sub) }) : null,
              ),
              itemSlot(item),
            );
          }),
        ),
  );
}

function renderCards(data, ctx) {
  const cards = asArray(data.cards);
  return el(
    "div",
    {},
    heading(data),
    el(
      "div",
      { className: "v-cards" },
      cards.map((raw) => {
        const card = asObject(raw);
        const src = resolveMediaUrl(card.image, ctx.appId);
        return el(
          "article",
          { className: "v-card", dataset: itemId(card) },
          src ? el("img", { className: "v-card-img", src, alt: asText(card.title), loading: "lazy" }) : null,
          el("h4", { className: "v-card-title", text: asText(card.title) }),
          card.desc !== undefined ? el("p", { className: "v-card-desc", text: asText(card.desc) }) : null,
          itemSlot(card),
        );
      }),
    ),
  );
}

const LONG_CELL = 24; // characters: a cell longer than this may wrap

/** Rows are lists of cells in the order of `columns`; `row_ids[i]` names row i. */
function renderTable(data) {
  const rows = asArray(data.rows);
  const columns = asArray(data.columns).map(asText);
  const rowIds = asArray(data.row_ids);
  return el(
    "div",
    { className: "v-table-wrap" },
    heading(data),
    el(
      "table",
      { className: "v-table" },
      el("thead", {}, el("tr", {}, columns.map((c) => el("th", { text: c })))),
      el(
        "tbody",
        {},
        rows.map((row, index) => {
          const id = itemId({ id: rowIds[index] });
          return el(
            "tr",
            { dataset: id },
            // a short cell keeps to one line; a long one wraps at words, never a character a line
            asArray(row).map((cell) => el("td", { text: asText(cell), className: asText(cell).length > LONG_CELL ? "v-cell-long" : "" })),
            id.itemId !== undefined ? el("td", { className: "v-item-actions" }) : null,
          );
        }),
      ),
    ),
    rows.length === 0 && data.empty ? el("p", { className: "v-empty", text: asText(data.empty) }) : null,
  );
}

const INPUT_TYPES = new Set([
  "text", "number", "password", "email", "url", "tel", "date", "time",
  "datetime-local", "color", "range", "search", "month", "week",
]);

/** One labelled form field; the control carries `name` for `collectForm`. */
export function formField(raw) {
  const field = asObject(raw);
  const name = asText(field.name ?? "");
  const type = asText(field.type || "text").toLowerCase();
  const label = asText(field.label ?? name);
  let control;
  let shown = null; // what the label holds when it is not the control itself
  if (type === "code") {
    shown = codeEditor(asText(field.value ?? ""));
    control = shown.querySelector("textarea");
  } else if (type === "textarea") {
    control = el("textarea", { rows: 4, value: asText(field.value ?? "") });
  } else if (type === "select") {
    control = el(
      "select",
      {},
      asArray(field.options).map((o) => {
        const opt = normalizeOption(o);
        return el("option", { value: opt.key, text: opt.label });
      }),
    );
    if (field.value !== undefined) control.value = asText(field.value);
  } else if (type === "checkbox" || type === "bool" || type === "boolean") {
    control = el("input", { type: "checkbox", checked: Boolean(field.value) });
  } else {
    const inputType = type === "datetime" ? "datetime-local" : INPUT_TYPES.has(type) ? type : "text";
    control = el("input", { type: inputType });
    if (field.value !== undefined && field.value !== null) control.value = asText(field.value);
  }
  control.name = name;
  control.dataset.fieldType = type;
  if (field.placeholder) control.placeholder = asText(field.placeholder);
  if (field.required) control.required = true;
  return el("label", { className: `v-field v-field-${type}` }, el("span", { text: label }), shown ?? control);
}

/** The values of every named control under `root`: {name: value}. */
export function collectForm(root) {
  const values = {};
  for (const control of root.querySelectorAll("input[name], textarea[name], select[name]")) {
    if (!control.name) continue;
    if (control.type === "checkbox") values[control.name] = control.checked;
    else if (control.type === "number" || control.type === "range") {
      values[control.name] = control.value === "" ? null : Number(control.value);
    } else values[control.name] = control.value;
  }
  return values;
}

function renderForm(data) {
  return el(
    "form",
    { className: "v-form", on: { submit: (e) => e.preventDefault() } },
    heading(data),
    asArray(data.fields).map(formField),
  );
}

function renderMedia(data, ctx) {
  const kind = asText(data.type).toLowerCase() === "video" ? "video" : "audio";
  const src = resolveMediaUrl(data.url, ctx.appId);
  // the same song's player stays (its place with it); see player.js
  const kept = keptPlayer(ctx.players, src, kind);
  let player = kept;
  if (!player) {
    player = el(kind, { className: `v-${kind}`, controls: true, preload: "metadata" });
    if (src) player.src = src;
    if (data.autoplay) player.autoplay = true;
  }
  linkPlayer(player, data, ctx.send, { kept: Boolean(kept), appId: ctx.appId });
  return el(
    "div",
    { className: "v-media" },
    el("div", { className: "v-media-title", text: `${kind === "video" ? "🎬" : "🎵"} ${asText(data.title ?? "")}` }),
    data.artist ? el("div", { className: "v-media-sub", text: asText(data.artist) }) : null,
    src ? player : el("p", { className: "v-empty", text: tr("（没有可播放的地址）", "(no playable URL)") }),
  );
}

function renderImage(data, ctx) {
  const src = resolveMediaUrl(data.url, ctx.appId);
  return el(
    "figure",
    { className: "v-image" },
    src ? el("img", { src, alt: asText(data.caption ?? "") }) : el("p", { className: "v-empty", text: tr("（无图片）", "(no image)") }),
    data.caption !== undefined ? el("figcaption", { text: asText(data.caption) }) : null,
  );
}

function renderChart(data) {
  const points = chartPoints(data);
  const kind = asText(data.type ?? "bar").toLowerCase();
  const draw = kind === "line" ? lineChart : kind === "pie" ? pieChart : barChart;
  return el(
    "div",
    { className: "v-chart", dataset: { chartType: kind } },
    heading(data),
    points.length ? draw(points, { max: data.max }) : el("p", { className: "v-empty", text: tr("（无数据）", "(no data)") }),
  );
}

function renderCode(data) {
  const language = asText(data.language || "text");
  const code = asText(data.code ?? "");
  const copy = el("button", {
    className: "v-code-copy",
    type: "button",
    text: tr("复制", "Copy"),
    on: { click: () => navigator.clipboard?.writeText(code).catch(() => {}) },
  });
  return el(
    "div",
    { className: "v-code" },
    heading(data),
    el("div", { className: "v-code-bar" }, el("span", { className: "v-code-lang", text: language }), copy),
    el("pre", {}, el("code", { text: code })),
    data.output !== undefined && data.output !== null ? codeOutput(data) : null,
  );
}

/** What running the code printed, whole and scrollable; a cut is marked with the full size. */
function codeOutput(data) {
  const output = asText(data.output);
  let cut = null;
  if (data.output_truncated) {
    const shown = byteSize(new TextEncoder().encode(output).length);
    const full = Number.isFinite(Number(data.output_size)) ? byteSize(Number(data.output_size)) : "";
    cut = el("div", {
      className: "v-code-cut",
      attrs: { role: "note" },
      text: full
        ? tr(`✂️ 输出太长，已截断：这里是前 ${shown}，共 ${full}`, `✂️ Output too long, cut: showing the first ${shown} of ${full}`)
        : tr(`✂️ 输出太长，已截断：这里是前 ${shown}`, `✂️ Output too long, cut: showing the first ${shown}`),
    });
  }
  return el(
    "section",
    { className: "v-code-output" },
    el("div", { className: "v-code-bar" }, el("span", { className: "v-code-output-label", text: tr("输出", "Output") })),
    cut,
    el("pre", { className: "v-code-output-text", text: output || tr("（没有输出）", "(no output)") }),
  );
}

/** `850 字节` / `850 bytes`, `19.5 KB`, `1.2 MB`. */
function byteSize(bytes) {
  if (bytes < 1024) return tr(`${bytes} 字节`, `${bytes} bytes`);
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Each widget {type, title, data} is rendered by the same table as the view it is;
 * a `folded` one is a disclosure showing its title until it is opened.
 */
function renderDashboard(data, ctx) {
  return el(
    "div",
    {},
    heading(data),
    el(
      "div",
      { className: "v-dashboard" },
      asArray(data.widgets).map((raw) => {
        const widget = asObject(raw);
        const type = asText(widget.type);
        const inner = asObject(widget.data);
        const view = type === "dashboard" ? renderUnknown(type, inner) : renderView(type, inner, ctx);
        const titled = widget.title !== undefined && widget.title !== null;
        if (widget.folded) {
          const title = titled ? asText(widget.title) : tr("详情", "Details");
          return el(
            "details",
            { className: "v-widget v-widget-folded", dataset: { widgetType: type } },
            el("summary", { className: "v-widget-title", text: title }),
            view,
          );
        }
        return el(
          "section",
          { className: "v-widget", dataset: { widgetType: type } },
          titled ? el("h4", { className: "v-widget-title", text: asText(widget.title) }) : null,
          view,
        );
      }),
    ),
  );
}

function renderMetric(data) {
  return el(
    "div",
    { className: "v-metric" },
    el("div", { className: "v-metric-value", text: `${asText(data.value ?? "–")}${data.unit ? ` ${asText(data.unit)}` : ""}` }),
    data.label !== undefined ? el("div", { className: "v-metric-label", text: asText(data.label) }) : null,
  );
}

// a wait shorter than this shows its words only: a spinner that would flash for a
// tenth of a second costs the page a frame per tick while the app is starting
export const SPINNER_AFTER_MS = 300;

function renderLoading(data, ctx) {
  const text = data.text ?? ctx.reply?.message ?? tr("正在处理…", "Working…");
  const spinner = el("div", { className: "spinner", hidden: true });
  setTimeout(() => { spinner.hidden = false; }, SPINNER_AFTER_MS);
  return el("div", { className: "v-loading" }, spinner, el("span", { text: asText(text) }));
}

function renderError(data, ctx) {
  const message = data.message ?? ctx.reply?.message ?? tr("出错了", "Something went wrong");
  const detail = data.detail ?? ctx.reply?.detail;
  const code = data.code ? `code: ${asText(data.code)}` : "";
  const folded = [code, detail !== undefined && detail !== null ? asText(detail) : ""].filter(Boolean).join("\n");
  return el(
    "div",
    { className: "v-error", attrs: { role: "alert" } },
    el("div", { className: "v-error-title", text: `⚠️ ${tr("出错了", "Something went wrong")}` }),
    el("div", { className: "v-error-message", text: asText(message) }),
    folded ? technicalDetails(folded) : null,
  );
}

/** The technical text behind a plain message, folded away (a details disclosure). */
export function technicalDetails(text) {
  return el(
    "details",
    { className: "v-details" },
    el("summary", { text: tr("技术细节", "Technical details") }),
    el("pre", { className: "v-details-text", text: asText(text) }),
  );
}

/** `{itemId}` for the dataset of an item with an `id`, else `{}`. */
function itemId(item) {
  const id = asObject(item).id;
  return id === undefined || id === null || id === "" ? {} : { itemId: asText(id) };
}

/** The empty place for the controls of an item with an `id`. */
function itemSlot(item) {
  return itemId(item).itemId !== undefined ? el("div", { className: "v-item-actions" }) : null;
}

/**
 * Put each control whose action names an `item_id` into that item's slot in `view`
 * (only ids are matched; `data` stays opaque); the controls left over belong to the
 * action bar. `actions[i]` is the action of `controls[i]`.
 */
export function placeItemControls(view, actions, controls) {
  const slots = new Map();
  for (const node of view.querySelectorAll("[data-item-id]")) {
    const slot = node.querySelector(":scope > .v-item-actions");
    if (slot && !slots.has(node.dataset.itemId)) slots.set(node.dataset.itemId, slot);
  }
  const bar = [];
  controls.forEach((control, index) => {
    const id = asObject(actions[index]).item_id;
    const slot = id === undefined || id === null ? null : slots.get(asText(id));
    if (slot) slot.append(control);
    else bar.push(control);
  });
  for (const table of view.querySelectorAll("table.v-table")) {
    const head = table.querySelector("thead tr");
    if (head && table.querySelector("tbody .v-item-actions") && !head.querySelector(".v-item-actions-head")) {
      head.append(el("th", { className: "v-item-actions-head" }));
    }
  }
  return bar;
}

function renderUnknown(type, data, exc) {
  let json;
  try {
    json = JSON.stringify(data, null, 2);
  } catch {
    json = String(data);
  }
  return el(
    "div",
    { className: "v-unknown" },
    el("div", {
      className: "v-unknown-title",
      text: exc
        ? tr(`无法显示“${type}”视图：${exc.message}`, `This "${type}" view cannot be shown: ${exc.message}`)
        : tr(`未知的视图类型“${type || "（无）"}”`, `Unknown view type "${type || "(none)"}"`),
    }),
    el("pre", { text: json ?? "" }),
  );
}

/** An option of select / radio / checkbox / form select: a string or {label, value}. */
export function normalizeOption(raw) {
  if (raw !== null && typeof raw === "object") {
    const value = raw.value !== undefined ? raw.value : raw.label;
    return { label: asText(raw.label ?? raw.value ?? ""), value, key: asText(value) };
  }
  return { label: asText(raw), value: raw, key: asText(raw) };
}
