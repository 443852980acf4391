// The Tools window: what GET /api/tools?app_id=X lists for one app (the executor's
// one listing), written for the person using the desktop. Tools are grouped by where
// they come from (the built-in atomic tools, the scheduler's, the app's own, skills, an
// MCP server; a source that failed says why), each group with its count; each says in the desktop's language what it does (the built-in tools from
// the table below, the others in their own words), what its risk means and whether it
// asks first. Its argument schema, for developers, stays folded away.

import { api } from "./api.js";
import { openModal } from "./dialogs.js";
import { asArray, asObject, asText, el } from "./dom.js";
import { appName, tr } from "./i18n.js";
import { state } from "./state.js";

// what each built-in tool does, for a person
const BUILT_IN = {
  http_request: ["访问一个公网网址，读取它的回答，或把文件下载到工作区", "Fetches a public web address, reads its answer or downloads a file into the workspace"],
  file_read: ["读取工作区里的一个文件", "Reads a file of the workspace"],
  file_write: ["在工作区里写入或追加一个文件", "Writes or appends to a file of the workspace"],
  file_list: ["列出工作区里一个文件夹的内容", "Lists a folder of the workspace"],
  shell_exec: ["在工作区里运行一个白名单中的程序，并读取它的输出", "Runs a program of the whitelist in the workspace and reads its output"],
  process_start: ["在工作区里启动一个白名单中的程序，可以让它在后台运行", "Starts a program of the whitelist in the workspace, in the background if asked"],
  db_query: ["在工作区的 SQLite 数据库里执行一条语句", "Runs one statement on an SQLite database of the workspace"],
  cache_get: ["读取一条缓存的数据", "Reads a cached value"],
  cache_set: ["缓存一条数据，可设定有效期", "Caches a value, for a while if asked"],
  notify: ["在桌面上显示一条通知", "Shows a notification on the desktop"],
  system_info: ["查看电脑的 CPU、内存、磁盘和进程（只读）", "Looks at the computer's CPU, memory, disks and processes (read only)"],
  file_import: ["把你指定的文件夹里的音频文件复制进工作区，先问你", "Copies the audio files of a folder you name into the workspace, asking you first"],
  schedule: ["添加、列出或取消定时任务", "Adds, lists or cancels scheduled tasks"],
  // the skills' tools
  search_skills: ["按关键词查找已安装的技能", "Finds installed skills by a keyword"],
  skill: ["按名字使用一个已安装的技能，照它的步骤去做", "Uses an installed skill by its name and follows its steps"],
  run_command: ["运行一个已安装的可执行技能", "Runs an installed executable skill"],
  install_skill: ["从工作区安装一个技能", "Installs a skill from the workspace"],
  reload_skills: ["重新读取已安装的技能", "Reads the installed skills again"],
};
const SYSTEM_SOURCES = new Set(["atomic", "skills"]); // whose tools the table above describes
// the atomic provider lists the scheduler's tool beside the atomic tools: it is shown
// as a group of its own, so the built-in group counts the atomic tools alone
const SCHEDULER_TOOLS = new Set(["schedule"]);

/** The group a tool is shown in: its source, the scheduler's tools apart from the atomic ones. */
function groupOf(tool) {
  const provider = asText(tool.provider) || "?";
  return provider === "atomic" && SCHEDULER_TOOLS.has(asText(tool.name)) ? "scheduler" : provider;
}

// what a risk level means, for a person
const RISKS = {
  read: ["只读取", "Only reads", "只读取数据，不改动任何东西", "Reads data and changes nothing"],
  write: ["会写入", "Writes", "会改动工作区里的文件或数据", "Changes files or data in the workspace"],
  execute: ["会运行程序", "Runs programs", "会在你的电脑上运行程序", "Runs programs on your computer"],
  network: ["会联网", "Uses the internet", "会把请求发到互联网上", "Sends requests over the internet"],
  system: ["会操作桌面", "Acts on the desktop", "会改动桌面或系统的状态", "Changes the desktop or the system"],
};

/** How the desktop names a tool source (`atomic`, `app:<id>`, `skills`, `mcp:<server>`). */
function sourceName(provider) {
  if (provider === "atomic") return tr("内置工具", "Built-in tools");
  if (provider === "scheduler") return tr("定时任务", "Scheduled tasks");
  if (provider === "skills") return tr("技能", "Skills");
  if (provider.startsWith("app:")) {
    const id = provider.slice(4);
    const name = state.apps.has(id) ? appName(state.apps.get(id)) : id;
    return tr(`「${name}」自己的工具`, `${name}’s own tools`);
  }
  if (provider.startsWith("mcp:")) return tr(`MCP 服务 ${provider.slice(4)}`, `MCP server ${provider.slice(4)}`);
  return provider;
}

function riskChip(level) {
  const known = RISKS[level];
  if (!known) return el("span", { className: "tool-risk", text: level });
  return el("span", {
    className: "tool-risk",
    dataset: { risk: level },
    title: tr(known[2], known[3]),
    text: tr(known[0], known[1]),
  });
}

function toolCard(tool) {
  const t = asObject(tool);
  const name = asText(t.name);
  const own = BUILT_IN[name] && SYSTEM_SOURCES.has(asText(t.provider)) ? tr(...BUILT_IN[name]) : asText(t.description);
  const risk = RISKS[asText(t.risk_level)];
  const notes = [
    risk ? tr(risk[2], risk[3]) : "",
    t.requires_confirmation ? tr("运行前会先问你", "it asks you before it runs") : "",
  ].filter(Boolean);
  return el(
    "li",
    { className: t.available === false ? "tool-card unavailable" : "tool-card", dataset: { tool: name } },
    el(
      "div",
      { className: "tool-head" },
      el("span", { className: "tool-does", text: own }),
      riskChip(asText(t.risk_level)),
      t.requires_confirmation ? el("span", { className: "tool-asks", text: tr("先问你", "Asks first") }) : null,
    ),
    el("p", { className: "tool-notes", text: notes.join(tr("；", "; ")) }),
    t.available === false
      ? el("p", { className: "tool-unavailable", text: `${tr("现在不可用：", "Not available now: ")}${asText(t.unavailable_reason)}` })
      : null,
    el(
      "details",
      { className: "tool-schema" },
      el("summary", { text: `${tr("技术细节", "Technical details")} · ${name}` }),
      asText(t.description) && own !== asText(t.description) ? el("p", { text: asText(t.description) }) : null,
      el("pre", { text: JSON.stringify(asObject(t.input_schema), null, 2) }),
    ),
  );
}

/** The tools of one source under its heading, with the source's state when not running. */
function sourceGroup(provider, tools, status) {
  const st = asObject(status);
  const failed = st.state && st.state !== "running";
  return el(
    "section",
    { className: "tool-group", dataset: { provider } },
    el("h4", { className: "tool-group-title", text: `${sourceName(provider)} · ${tools.length}` }),
    failed
      ? el("p", {
          className: "tool-group-problem",
          text: `${tr("这个来源不可用", "This source is not available")}${st.error ? tr("：", ": ") + asText(st.error) : ""}`,
        })
      : null,
    el("ul", { className: "tool-cards" }, tools.map(toolCard)),
  );
}

/** Open the window for `appId` (the first known app when none is given). */
export async function openTools(toast, appId = null) {
  const ids = [...state.apps.keys()];
  let current = appId || ids[0] || "";
  const groups = el("div", { id: "tools_groups", className: "tool-groups" });
  const select = el(
    "select",
    { id: "tools_app", on: { change: () => load(select.value) } },
    ids.map((id) => el("option", { value: id, text: asText(state.apps.has(id) ? appName(state.apps.get(id)) : id), attrs: id === current ? { selected: "" } : {} })),
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
    const byProvider = new Map();
    for (const tool of asArray(listing.tools)) {
      const provider = groupOf(asObject(tool));
      if (!byProvider.has(provider)) byProvider.set(provider, []);
      byProvider.get(provider).push(tool);
    }
    const providers = asObject(listing.providers);
    for (const provider of Object.keys(providers)) if (!byProvider.has(provider)) byProvider.set(provider, []);
    groups.replaceChildren(...[...byProvider].map(([provider, tools]) => sourceGroup(provider, tools, providers[provider])));
  }
  openModal({
    id: "tools_dialog",
    title: tr("工具", "Tools"),
    body: [
      el("p", {
        className: "modal-note",
        text: tr("应用完成你的指令时用到的工具。会改动东西的工具，在运行前按规则先问你。", "The tools an app uses to carry out your instructions. A tool that changes things asks you first when the rules say so."),
      }),
      el("label", { className: "settings-row" }, el("span", { text: tr("应用", "App") }), select),
      groups,
    ],
  });
  await load(current);
}
