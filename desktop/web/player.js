// A window's audio or video player and its app. What the user does with the player's
// own controls reaches the app as the view asked (`on_pause`, `on_play`, `on_end`,
// each sent as that button's click would be), so the app's buttons and words follow
// the player. A new view of the same source in the same window keeps the player
// itself: pausing keeps the place, and going on continues from it. The view's
// `autoplay` then says which the app wants: present, play on; absent, pause.
// A reload of the page keeps each player's place: as the page goes, where every
// player is (its app, source, time, whether it plays) is noted in the tab's
// sessionStorage; the first player of the same app and source shown after the reload
// (its window's view put back, see persist.js) starts there, and plays on if it
// played — or, where the browser lets no page play by itself, stays paused there and
// tells its app as a pause of the user's would.

import { asObject, asText } from "./dom.js";

const PLACES_KEY = "aios.media.v1";
const HAVE_METADATA = 1; // a player's readyState once it knows its length
const places = takePlaces(); // "appId source" → {time, playing}, from before the reload
window.addEventListener("pagehide", savePlaces);

/** Which player a place is of: its app and source (without the desktop's token). */
function placeKey(appId, src) {
  let source = src;
  try {
    const url = new URL(src, window.location.href);
    url.searchParams.delete("token");
    source = `${url.pathname}${url.search}`;
  } catch {
    // not a URL: the source as it is
  }
  return `${appId} ${source}`;
}

/** The places noted before this page loaded (each taken once), forgotten in the storage. */
function takePlaces() {
  const found = new Map();
  try {
    const list = JSON.parse(sessionStorage.getItem(PLACES_KEY) || "[]");
    sessionStorage.removeItem(PLACES_KEY);
    for (const item of Array.isArray(list) ? list : []) {
      const time = Number(item?.time);
      if (typeof item?.key !== "string" || !(time >= 0)) continue;
      found.set(item.key, { time, playing: item.playing === true });
    }
  } catch {
    // nothing readable kept: the players start as their views say
  }
  return found;
}

/** Note where each player of the page is, for the page after a reload. */
function savePlaces() {
  const list = [];
  for (const player of document.querySelectorAll("audio, video")) {
    const link = player.mediaLink;
    const src = player.getAttribute("src");
    if (!link?.appId || !src || player.ended) continue;
    const time = link.resumeAt ?? player.currentTime; // not yet there: where it goes
    list.push({ key: placeKey(link.appId, src), time, playing: !link.wantsPaused });
  }
  try {
    sessionStorage.setItem(PLACES_KEY, JSON.stringify(list));
  } catch {
    // storage full or refused: after the reload the players start afresh
  }
}

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
 * Tie `player` to the view `data` it shows now, to its app `appId` and to `send` (the
 * window's way to post a click). A kept player then does what the view wants: it
 * pauses or plays on. A new one where a player of the same app and source was before
 * a reload of the page goes on from that player's place.
 */
export function linkPlayer(player, data, send, { kept = false, appId = "" } = {}) {
  const first = player.mediaLink === undefined;
  player.mediaLink = {
    appId: asText(appId),
    wantsPaused: !data.autoplay,
    onEnd: clickOf(data.on_end),
    onPause: clickOf(data.on_pause),
    onPlay: clickOf(data.on_play),
    send: typeof send === "function" ? send : null,
    endSent: false,
    resumeAt: player.mediaLink?.resumeAt ?? null, // a place after a reload, not yet reached
  };
  if (first) listen(player);
  const key = placeKey(asText(appId), player.getAttribute("src") || "");
  if (first && !kept && places.has(key)) {
    const place = places.get(key);
    places.delete(key);
    goOnFrom(player, place);
    return;
  }
  if (!kept) return;
  if (player.mediaLink.wantsPaused && !player.paused) player.pause();
  else if (!player.mediaLink.wantsPaused && player.paused) player.play().catch(() => {});
}

/**
 * The player shown again after a reload: to the time it had reached, then on (if it
 * played and the view wants it to) — or, refused by the browser, paused there, which
 * its app is told of as a pause.
 */
function goOnFrom(player, place) {
  player.mediaLink.resumeAt = place.time;
  player.autoplay = false; // not from 0:00: from its place, below
  const go = () => {
    const link = player.mediaLink; // a later view of it may have taken it meanwhile
    if (!link || link.resumeAt === null) return;
    player.currentTime = link.resumeAt;
    link.resumeAt = null;
    if (!place.playing || link.wantsPaused) return;
    player.play().catch(() => {
      if (player.mediaLink !== link || !player.paused || link.wantsPaused) return;
      link.wantsPaused = true;
      tell(link, link.onPause);
    });
  };
  if (player.readyState >= HAVE_METADATA) go();
  else player.addEventListener("loadedmetadata", go, { once: true });
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
