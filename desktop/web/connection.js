// The desktop's link to the controller: up, or lost and retrying. A request that
// cannot reach the controller, or an event stream that drops, makes the desktop
// ask GET /api/health; when that gets no answer the link is lost (`lost()` is
// told) and the health check is asked again every few seconds. The first answer
// (of the health check or of any other request) brings it back: the event stream
// is opened again and `back()` is told. The page is never reloaded.

import { api, onReach } from "./api.js";

const RETRY_MS = 2000;

/**
 * Follow the link. `events`: the event stream (events.js, for `resume`); `lost()`
 * and `back()` are told when it is lost and when it is back. Returns
 * {streamState(up)} for the event stream's open / error notices.
 */
export function watchConnection({ events, lost, back, retryMs = RETRY_MS }) {
  let up = true;
  let checking = false;
  let timer = null;

  const recover = () => {
    clearTimeout(timer);
    timer = null;
    if (up) return;
    up = true;
    events.resume();
    back();
  };

  const retryLater = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      timer = null;
      if (up) return;
      if (await api.probe()) recover();
      else retryLater();
    }, retryMs);
  };

  /** Something failed: is the controller still there? */
  const check = async () => {
    if (!up || checking) return;
    checking = true;
    const answered = await api.probe();
    checking = false;
    if (!up) return;
    if (answered) {
      // a passing drop: the event stream reconnects by itself, unless it gave up
      if (events.closed()) setTimeout(() => events.resume(), retryMs);
      return;
    }
    up = false;
    lost();
    retryLater();
  };

  onReach((reached) => (reached ? recover() : check()));

  return {
    streamState(open) {
      if (open) recover();
      else check();
    },
  };
}
