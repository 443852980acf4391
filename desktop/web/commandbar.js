// The command bar: typed instructions go to POST /api/instruction; each task's
// result opens or updates its app's window, the reply's message shows in the
// window's status line and as a toast (not an informative answer its one window
// already shows whole: one sentence, once). The 🎤 button runs voice input (voice.js,
// voice input) and says plainly when that is not available. ↑/↓ recall history.

import { api } from "./api.js";
import { errorReply, isCancelled, replyLevel } from "./appview.js";
import { asArray, asObject, asText } from "./dom.js";
import { tr } from "./i18n.js";
import { adoptSession, state } from "./state.js";
import { SPINNER_AFTER_MS } from "./views.js";
import { captureVoice } from "./voice.js";

/** Open the start menu: every app with what it can do. */
function showApps() {
  const menu = document.getElementById("start_menu");
  if (menu.hidden) document.getElementById("start_button").click();
}

/** Whether the view of window `win` shows `message` whole. */
function saysIt(win, message) {
  const main = win?.content.querySelector(".win-main");
  return Boolean(message && main && main.textContent.includes(message));
}

/** Wire the command bar. `views`: AppViews; `toast`: the toast function. */
export function createCommandBar({ views, toast }) {
  const form = document.getElementById("command_bar");
  const input = document.getElementById("command_input");
  const mic = document.getElementById("mic_button");
  const history = [];
  let recall = 0;

  const run = async (text, source = "text") => {
    const instruction = text.trim();
    if (!instruction) return;
    history.push(instruction);
    recall = history.length;
    state.instructionsInFlight += 1;
    // the moving stripe only for an instruction that takes a while: a quick answer
    // would pay for a repaint of the bar on each frame of its few milliseconds
    const busy = setTimeout(() => form.classList.add("busy"), SPINNER_AFTER_MS);
    try {
      const response = await api.instruction(instruction, state.sessionId, source);
      showResponse(response);
    } catch (exc) {
      toast({ title: tr("指令失败", "Instruction failed"), body: exc.message, detail: exc.technical, level: "error" });
    } finally {
      clearTimeout(busy);
      state.instructionsInFlight -= 1;
      if (state.instructionsInFlight === 0) form.classList.remove("busy");
    }
  };

  const showResponse = (rawResponse) => {
    const response = asObject(rawResponse);
    adoptSession(response);
    const tasks = asArray(response.tasks);
    const shown = []; // the windows the tasks' replies went to
    for (const rawTask of tasks) {
      const task = asObject(rawTask);
      if (typeof task.app_id !== "string" || !task.app_id) continue;
      if (task.status === "skipped") continue; // not run: the failure it waited for says why
      const reply = task.result
        ? task.result
        : errorReply({ code: "no_result", message: tr(`任务 ${asText(task.task_id)} 没有结果（${asText(task.status)}）`, `Task ${asText(task.task_id)} has no result (${asText(task.status)})`) });
      shown.push(views.show(task.app_id, reply));
    }
    const message = asText(response.message || "");
    // the worst task decides the toast: a failed task or a degraded (notice) reply
    // is never shown as a success, a cancelled one is no failure
    const levels = tasks.map((t) => {
      const result = asObject(asObject(t).result);
      return asObject(t).status === "error" && !isCancelled(result) ? "error" : replyLevel(result);
    });
    const level = ["error", "warning", "info", "success"].find((l) => levels.includes(l)) ?? "info";
    const detail = tasks.map((t) => asText(asObject(asObject(t).result).detail ?? "")).filter(Boolean).join("\n");
    // an informative answer its one window shows in full is not said again in a toast
    const inWindow = tasks.length === 1 && level === "info" && shown.length === 1 && saysIt(shown[0], message);
    // one app that answered but did nothing of what was asked (its notice `error`)
    const notDone = tasks.length === 1 && asObject(asObject(tasks[0]).result).status === "ok";
    if ((message || tasks.length === 0) && !inWindow) {
      toast({
        title:
          level !== "error"
            ? "Triton AIOS"
            : tasks.length > 1
              ? tr("部分任务出错", "Some tasks failed")
              : notDone
                ? tr("没有完成", "Not done")
                : tr("出错了", "Something went wrong"),
        body: message || tr("没有应用能处理这条指令", "No app can handle this instruction"),
        detail,
        level: tasks.length ? level : "info",
        // no app took it: the way to see what the apps can do, kept until read
        ...(tasks.length === 0 ? { action: { text: tr("看看应用能做什么", "See what the apps can do"), run: showApps }, timeout: 12000 } : {}),
      });
    }
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value;
    input.value = "";
    run(text);
  });

  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowUp" && recall > 0) {
      recall -= 1;
      input.value = history[recall];
      event.preventDefault();
    } else if (event.key === "ArrowDown" && recall < history.length) {
      recall += 1;
      input.value = history[recall] ?? "";
      event.preventDefault();
    }
  });

  mic.addEventListener("click", async () => {
    let result;
    try {
      result = await captureVoice((phase) => {
        mic.dataset.phase = phase;
        mic.classList.add("listening");
        if (phase === "recording") {
          toast({ title: tr("🎤 正在录音", "🎤 Recording"), body: tr("说完后再点一次 🎤", "Click 🎤 again when done"), timeout: 3000 });
        }
      });
    } catch (exc) {
      toast({ title: tr("🎤 语音输入不可用", "🎤 Voice input not available"), body: exc.message, detail: exc.technical, level: "warning", timeout: 12000 });
      result = null;
    } finally {
      if (!result?.pending) {
        mic.classList.remove("listening");
        delete mic.dataset.phase;
      }
    }
    if (!result || result.pending) return;
    if (result.response) {
      const heard = asText(asObject(result.response).transcript);
      toast({ title: tr("🎤 听到", "🎤 Heard"), body: heard, timeout: 3000 });
      showResponse(result.response);
    } else if (result.text) {
      await run(result.text, "voice");
    } else {
      toast({ title: tr("🎤 没有听清", "🎤 Nothing heard"), level: "warning" });
    }
  });

  window.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
      event.preventDefault();
      input.focus();
    }
  });

  return { run, showResponse, get pending() { return pending; } };
}
