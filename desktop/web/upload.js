// Files for a `file` action: chosen with its button or dropped on the window. Each
// file goes to the app in pieces, in order, one action per piece: {action_id, type:
// "file", value: {name, size, offset, data}} with `data` the piece in base64. The app
// checks what arrives (size, content) and an error answer stops that file.

import { asText } from "./dom.js";

export const PIECE_BYTES = 1 << 20; // 1 MiB a piece: well under a request's limit

/** The base64 of a Blob's bytes. */
async function base64Of(blob) {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let text = "";
  for (let at = 0; at < bytes.length; at += 0x8000) {
    text += String.fromCharCode.apply(null, bytes.subarray(at, at + 0x8000));
  }
  return btoa(text);
}

/**
 * Send `files` for `action` through `send` (which answers the app's reply), one
 * file after another; a file the app refuses sends no more pieces, nor do the files
 * after it (its answer, which says why, stays shown).
 */
export async function sendFiles(action, files, send) {
  for (const file of Array.from(files)) {
    for (let offset = 0; offset === 0 || offset < file.size; offset += PIECE_BYTES) {
      const data = await base64Of(file.slice(offset, offset + PIECE_BYTES));
      const value = { name: file.name, size: file.size, offset, data };
      const reply = await send({ action_id: asText(action.action_id), type: "file", value });
      if (!reply || reply.status === "error") return;
    }
  }
}

/**
 * Let `win` take files dropped on it for `action` (a `file` action with `drop`), or
 * take none (`action` null). The listeners are set once; each view names its action.
 */
export function acceptDrops(win, action, send) {
  win.dropFiles = action ? { action, send } : null;
  win.node.classList.toggle("takes-files", Boolean(action));
  if (win.dropWired) return;
  win.dropWired = true;
  const carriesFiles = (event) => Array.from(event.dataTransfer?.types ?? []).includes("Files");
  const over = (event) => {
    if (!win.dropFiles || !carriesFiles(event)) return;
    event.preventDefault(); // this window takes the files
    event.dataTransfer.dropEffect = "copy";
    win.node.classList.add("drop-here");
  };
  win.node.addEventListener("dragenter", over);
  win.node.addEventListener("dragover", over);
  win.node.addEventListener("dragleave", (event) => {
    if (!win.node.contains(event.relatedTarget)) win.node.classList.remove("drop-here");
  });
  win.node.addEventListener("drop", (event) => {
    win.node.classList.remove("drop-here");
    if (!win.dropFiles || !carriesFiles(event)) return;
    event.preventDefault();
    const { action: target, send: post } = win.dropFiles;
    sendFiles(target, event.dataTransfer.files, post);
  });
}
