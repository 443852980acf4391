// A window's audio or video player and its app. What the user does with the player's
// own controls reaches the app as the view asked (`on_pause`, `on_play`, `on_end`,
// each sent as that button's click would be), so the app's buttons and words follow
// the player. A new view of the same source in the same window keeps the player
// itself: pausing keeps the place, and going on continues from it. The view's
// `autoplay` then says which the app wants: present, play on; absent, pause.

import { asObject, asText } from "./dom.js";

/** The players under `root` by source, to be kept by the next view rendered there. */
export function takePlayers(root) {
  const players = new Map();
  for (const player of root.querySelectorAll("audio, video")) {
    const src = player.getAttribute("src");
    if (src && !players.has(src)) players.set(src, player);
  }
  return players;
}

/** The player of `src` kept from the view before (removed from `players`), or null. */
export function keptPlayer(players, src, kind) {
  const player = players instanceof Map && src ? players.get(src) : null;
  if (!player || player.localName !== kind) return null;
  players.delete(src);
  return player;
}

/** The players no new view kept: they tell their app nothing more (they stop). */
export function dropPlayers(players) {
  if (!(players instanceof Map)) return;
  for (const player of players.values()) {
    player.mediaLink = null;
    player.pause();
  }
}

function clickOf(raw) {
  const spec = asObject(raw);
  return spec.action_id ? { action_id: asText(spec.action_id), type: "button", params: asObject(spec.params) } : null;
}

/**
 * Tie `player` to the view `data` it shows now and to `send` (the window's way to
 * post a click). A kept player then does what the view wants: it pauses or plays on.
 */
export function linkPlayer(player, data, send, { kept = false } = {}) {
  const first = player.mediaLink === undefined;
  player.mediaLink = {
    wantsPaused: !data.autoplay,
    onEnd: clickOf(data.on_end),
    onPause: clickOf(data.on_pause),
    onPlay: clickOf(data.on_play),
    send: typeof send === "function" ? send : null,
    endSent: false,
  };
  if (first) listen(player);
  if (!kept) return;
  if (player.mediaLink.wantsPaused && !player.paused) player.pause();
  else if (!player.mediaLink.wantsPaused && player.paused) player.play().catch(() => {});
}

function tell(link, click) {
  if (link?.send && click) link.send(click);
}

function listen(player) {
  // the end goes to the app once: it answers what comes next
  player.addEventListener("ended", () => {
    const link = player.mediaLink;
    if (!link || link.endSent) return;
    link.endSent = true;
    tell(link, link.onEnd);
  });
  // a pause that is the end, or the player leaving the page, is not the user's
  player.addEventListener("pause", () => {
    const link = player.mediaLink;
    if (!link || link.wantsPaused || player.ended || !player.isConnected) return;
    link.wantsPaused = true;
    tell(link, link.onPause);
  });
  player.addEventListener("play", () => {
    const link = player.mediaLink;
    if (!link || !link.wantsPaused) return;
    link.wantsPaused = false;
    tell(link, link.onPlay);
  });
}
