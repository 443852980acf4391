// The Tools window: what GET /api/tools?app_id=X lists for one app (the executor's
// one listing): each tool's name, provider, risk and description, whether it asks
// the user first, and the state of every provider behind it (a failed one says why).

import { api } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { tr } from "./i18n.js";
import { state } from "./state.js";

function providerLines(providers) {
  return Object.entries(asObject(providers)).map(([name, status]) => {
    const st = asObject(status);
    const text = st.error ? `${name}: ${asText(st.state)} — ${asText(st.error)}` : `${name}: ${asText(st.state)}`;
    return el("li", { className: st.state === "failed" ? "tool-provider failed" : "tool-provider", text });
  });
}

function toolRow(tool) {
  const t = asObject(tool);
  const flags = [t.requires_confirmation ? tr("需确认", "asks first") : "", t.concurrency_safe ? tr("可并行", "parallel") : ""].filter(Boolean).join(" · ");
  const why = t.available === false ? `${tr("不可用", "unavailable")}: ${asText(t.unavailable_reason)}` : "";
  return el(
    "tr",
    { className: t.available === false ? "tool-row unavailable" : "tool-row", dataset: { tool: asText(t.name) } },
    el("td", { text: asText(t.name) }),
    el("td", { text: asText(t.provider) }),
    el("td", { text: asText(t.risk_level) }),
    el("td", { text: [asText(t.description), flags, why].filter(Boolean).join(" — ") }),
  );
}

/** Open the window for `appId` (the first known app when none is given). */
export async function openTools(toast, appId = null) {
  const ids = [...state.apps.keys()];
  let current = appId || ids[0] || "";
  const table = el("tbody", { id: "tools_rows" });
  const providers = el("ul", { id: "tools_providers", className: "tool-providers" });
  const select = el(
    "select",
    { id: "tools_app", on: { change: () => load(select.value) } },
    ids.map((id) => el("option", { value: id, text: asText(state.apps.get(id)?.name || id), attrs: id === current ? { selected: "" } : {} })),
  );
  async function load(id) {
    current = id;
    let listing;
    try {
      listing = asObject(await api.tools(id));
    } catch (exc) {
      toast({ title: tr("无法读取工具列表", "Cannot list tools"), body: exc.message, detail: exc.technical, level: "error" });
      return;
    }
    table.replaceChildren(...asArray(listing.tools).map(toolRow));
    providers.replaceChildren(...providerLines(listing.providers));
  }
  openModal({
    id: "tools_dialog",
    title: tr("工具", "Tools"),
    body: [
      el("label", { text: tr("应用 ", "App ") }, select),
      providers,
      el(
        "table",
        { className: "tools-table" },
        el("thead", {}, el("tr", {}, [tr("名称", "Name"), tr("来源", "Provider"), tr("风险", "Risk"), tr("说明", "Description")].map((h) => el("th", { text: h })))),
        table,
      ),
    ],
  });
  await load(current);
}
