// The controller's event stream (GET /api/events, SSE): each `data:` is an Event
// {type, seq, app_id, session_id, data}; handlers are looked up by type. The
// connection state feeds the tray's network indicator.

import { api } from "./api.js";

/**
 * Connect and dispatch. `handlers`: type → (event) => void. `onState(connected)`
 * is told when the stream opens or drops (EventSource reconnects by itself).
 */
export function connectEvents(handlers, onState = () => {}) {
  let source = null;
  const open = () => {
    source?.close();
    source = api.events();
    source.onopen = () => onState(true);
    source.onerror = () => onState(false);
    source.onmessage = (message) => {
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return;
      }
      if (!event || typeof event !== "object") return;
      const handler = handlers[event.type];
      if (!handler) return;
      try {
        handler(event);
      } catch (exc) {
        console.error("event handler failed", event.type, exc);
      }
    };
  };
  open();
  return {
    reconnect: open,
    /** Open it again unless it is open now (after the controller was out of reach). */
    resume: () => {
      if (source?.readyState !== EventSource.OPEN) open();
    },
    /** Whether it gave up (EventSource reconnects by itself only after a drop). */
    closed: () => source?.readyState === EventSource.CLOSED,
    close: () => source?.close(),
  };
}
