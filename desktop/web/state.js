// Desktop-wide state shared by the modules: the controller session, the known
// apps (from GET /api/apps and app_status events) and listeners on app changes.

// The session is kept in the tab's sessionStorage, so a reload talks on in the same
// session (an app's queue, a question it asked); a new tab starts a new one.
const SESSION_KEY = "aios.session.v1";

function keptSession() {
  try {
    return sessionStorage.getItem(SESSION_KEY) || null;
  } catch {
    return null; // storage refused (a private window's rules): a reload starts anew
  }
}

export const state = {
  /** The controller session this desktop talks in (set by the first reply, kept over a reload). */
  sessionId: keptSession(),
  /** app id → {id, name, icon, description, status, port, error} */
  apps: new Map(),
  listeners: new Set(),
  /** This desktop's instructions sent and not yet answered (the command bar's). */
  instructionsInFlight: 0,
};

/** Remember the session id a reply carries, if any. */
export function adoptSession(reply) {
  if (reply && typeof reply.session_id === "string" && reply.session_id) {
    state.sessionId = reply.session_id;
    try {
      sessionStorage.setItem(SESSION_KEY, reply.session_id);
    } catch {
      // not kept: a reload starts a new session
    }
  }
}

/** The app with `appId`, or a stand-in so a window can still be shown. */
export function appInfo(appId) {
  return state.apps.get(appId) || { id: appId, name: appId, icon: "📦", status: "running" };
}

export function setApps(list) {
  state.apps.clear();
  for (const app of Array.isArray(list) ? list : []) {
    if (app && typeof app.id === "string") state.apps.set(app.id, app);
  }
  notify();
}

export function setAppStatus(appId, status) {
  const app = state.apps.get(appId);
  if (!app || typeof status !== "string") return;
  app.status = status;
  notify();
}

/** The controller cannot be reached: no app's status is known. */
export function forgetAppStatuses() {
  for (const app of state.apps.values()) app.status = "unknown";
  notify();
}

/** The app `appId` was uninstalled: it leaves the list. */
export function removeApp(appId) {
  if (state.apps.delete(appId)) notify();
}

export function onAppsChanged(listener) {
  state.listeners.add(listener);
}

function notify() {
  for (const listener of state.listeners) listener(state.apps);
}
