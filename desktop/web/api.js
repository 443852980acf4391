// The desktop's only door to the controller (docs/ARCHITECTURE.md, "Controller
// HTTP API"). The per-launch token comes from this page's own `?token=`; fetches
// send it as X-AIOS-Token, EventSource and media URLs carry it as `?token=`.

import { language, tr } from "./i18n.js";

const TOKEN = new URLSearchParams(window.location.search).get("token") || "";
// This page's id, sent with its instructions: `task_done` events carry it back, so
// the page renders from events only results of instructions sent elsewhere.
const CLIENT_ID = `page_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;

/**
 * An HTTP or protocol failure with the controller's error code. `message` is what the
 * user reads (the controller's `user_message`, in the page's language); `technical`
 * the controller's own English message, for a folded-away detail.
 */
export class ApiError extends Error {
  constructor(status, code, message, detail = null, technical = "") {
    super(message);
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.technical = technical && technical !== message ? technical : "";
  }
}

/** The controller's error body as an ApiError (`status`: the HTTP status). */
export function apiError(status, payload) {
  const err = payload && typeof payload === "object" ? payload.error || {} : {};
  const technical = err.message || `HTTP ${status}`;
  return new ApiError(status, err.code || `http_${status}`, err.user_message || technical, err.detail ?? null, technical);
}

const reachListeners = new Set();

/** `listener(reached)` after every request: false when the controller could not be reached at all. */
export function onReach(listener) {
  reachListeners.add(listener);
}

function tellReach(reached) {
  for (const listener of reachListeners) listener(reached);
}

/** Whether the controller answers GET /api/health within `timeoutMs` (listeners are not told). */
async function probe(timeoutMs = 4000) {
  try {
    const response = await fetch("/api/health", {
      headers: { "X-AIOS-Token": TOKEN },
      cache: "no-store",
      signal: AbortSignal.timeout(timeoutMs),
    });
    return response.ok;
  } catch {
    return false;
  }
}

async function request(method, path, body, { keepalive = false } = {}) {
  // the page's language, so the controller's error sentences are in it
  const headers = { "X-AIOS-Token": TOKEN, "Accept-Language": userLanguage() };
  const init = { method, headers, cache: "no-store", keepalive };
  if (body instanceof Blob) {
    headers["Content-Type"] = body.type || "application/octet-stream";
    init.body = body;
  } else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (exc) {
    tellReach(false);
    throw new ApiError(0, "network", tr("无法连接主控", "Controller not reachable"), null, exc.message);
  }
  tellReach(true);
  let payload = null;
  try {
    payload = await response.json();
  } catch {
    payload = null;
  }
  if (!response.ok) throw apiError(response.status, payload);
  return payload;
}

export const api = {
  token: TOKEN,
  clientId: CLIENT_ID,
  health: () => request("GET", "/api/health"),
  probe,
  version: () => request("GET", "/api/version"),
  /** Ask the controller to stop the task `taskId` of the session `sessionId` and the app `appId` (its remaining steps never run). */
  cancelTask: (taskId, sessionId, appId) =>
    request("POST", `/api/tasks/${encodeURIComponent(taskId)}/cancel`, { session_id: sessionId, app_id: appId }),
  /** Ask the controller to stop what the app `appId` is doing for this session (an open, an action). */
  cancelApp: (appId, sessionId) =>
    request("POST", `/api/apps/${encodeURIComponent(appId)}/cancel`, withSession({}, sessionId)),
  apps: () => request("GET", "/api/apps"),
  /** Install an app from a .zip chosen in the browser (a File), or from a path on this machine. */
  installZip: (file) =>
    request("POST", `/api/apps/install?name=${encodeURIComponent(file.name || "app.zip")}`, new Blob([file], { type: "application/zip" })),
  installPath: (path) => request("POST", "/api/apps/install", { path }),
  uninstall: (appId, keepWorkspace = true) =>
    request("POST", `/api/apps/${encodeURIComponent(appId)}/uninstall`, { keep_workspace: keepWorkspace }),
  tools: (appId) => request("GET", `/api/tools?app_id=${encodeURIComponent(appId || "")}`),
  instruction: (text, sessionId, source = "text") =>
    request(
      "POST",
      "/api/instruction",
      withSession({ text, source, client_id: CLIENT_ID, language: userLanguage() }, sessionId),
    ),
  open: (appId, sessionId) =>
    request("POST", `/api/apps/${encodeURIComponent(appId)}/open`, withSession({ language: userLanguage() }, sessionId)),
  action: (appId, body) =>
    request("POST", `/api/apps/${encodeURIComponent(appId)}/action`, { ...body, language: userLanguage() }),
  snapshot: (snapshot) => request("POST", "/api/ui/snapshot", snapshot),
  /** The desktop's layout as the controller keeps it for its user ({changed, history}). */
  layout: () => request("GET", "/api/layout"),
  /** Keep `layout` in place of the saved one; `keepalive`: it still goes when the page is left. */
  putLayout: (layout, keepalive = false) => request("PUT", "/api/layout", layout, { keepalive }),
  getSettings: () => request("GET", "/api/settings"),
  putSettings: (settings) => request("PUT", "/api/settings", settings),
  speechStatus: () => request("GET", "/api/speech/status"),
  setSpeechMute: (muted) => request("POST", "/api/speech/mute", { muted }),
  voiceStatus: () => request("GET", "/api/voice/status"),
  voiceListen: (lang) => request("POST", `/api/voice/listen?lang=${encodeURIComponent(lang)}`, {}),
  /** A recorded WAV as a voice instruction: the instruction answer plus `transcript`. */
  voiceInstruction: (wav, lang, sessionId) =>
    request(
      "POST",
      `/api/voice?lang=${encodeURIComponent(lang)}${sessionId ? `&session_id=${encodeURIComponent(sessionId)}` : ""}`,
      wav,
    ),
  /** A new EventSource on the controller's event stream. */
  events: () => new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`),
};

// The language the page shows, sent with what the user asks: apps answer in it.
export function userLanguage() {
  return language() === "en" ? "en-US" : "zh-CN";
}

function withSession(body, sessionId) {
  if (sessionId) body.session_id = sessionId;
  return body;
}

/**
 * A URL an app placed in `data` (media, image, card image) made safe to load:
 * http(s), data:image/audio/video and blob stay; a path under /api/ gets the token;
 * any other relative path is a file of that app's workspace. Anything else
 * (javascript:, file:, …) gives "" so nothing is loaded.
 */
export function resolveMediaUrl(raw, appId) {
  if (typeof raw !== "string" || !raw.trim()) return "";
  const url = raw.trim();
  if (/^https?:\/\//i.test(url) || /^blob:/i.test(url)) return url;
  if (/^data:(image|audio|video)\//i.test(url)) return url;
  if (/^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//")) return "";
  if (url.startsWith("/api/")) return addToken(url);
  if (!appId) return "";
  const path = url
    .replace(/^\.?\/+/, "")
    .replace(/^workspace\//, "")
    .split("/")
    .map(encodeURIComponent)
    .join("/");
  return addToken(`/api/apps/${encodeURIComponent(appId)}/files/${path}`);
}

function addToken(url) {
  return `${url}${url.includes("?") ? "&" : "?"}token=${encodeURIComponent(TOKEN)}`;
}
