// The command bar: typed instructions go to POST /api/instruction; each task's
// result opens or updates its app's window, the reply's message shows in the
// window's status line and as a toast. The 🎤 button runs voice input (voice.js,
// S-90) and says plainly when that is not available. ↑/↓ recall history.

import { api } from "./api.js";
import { errorReply } from "./appview.js";
import { asArray, asObject, asText } from "./dom.js";
import { adoptSession, state } from "./state.js";
import { captureVoice } from "./voice.js";

/** Wire the command bar. `views`: AppViews; `toast`: the toast function. */
export function createCommandBar({ views, toast }) {
  const form = document.getElementById("command_bar");
  const input = document.getElementById("command_input");
  const mic = document.getElementById("mic_button");
  const history = [];
  let recall = 0;
  let pending = 0;

  const run = async (text, source = "text") => {
    const instruction = text.trim();
    if (!instruction) return;
    history.push(instruction);
    recall = history.length;
    pending += 1;
    form.classList.add("busy");
    try {
      const response = await api.instruction(instruction, state.sessionId, source);
      showResponse(response);
    } catch (exc) {
      toast({ title: "指令失败 (instruction failed)", body: exc.message, level: "error" });
    } finally {
      pending -= 1;
      if (pending === 0) form.classList.remove("busy");
    }
  };

  const showResponse = (rawResponse) => {
    const response = asObject(rawResponse);
    adoptSession(response);
    const tasks = asArray(response.tasks);
    for (const rawTask of tasks) {
      const task = asObject(rawTask);
      if (typeof task.app_id !== "string" || !task.app_id) continue;
      const reply = task.result
        ? task.result
        : errorReply({ code: "no_result", message: `任务 ${asText(task.task_id)} 没有结果 (${asText(task.status)})` });
      views.show(task.app_id, reply);
    }
    const message = asText(response.message || "");
    const failed = tasks.some((t) => asObject(t).status === "error" || asObject(asObject(t).result).status === "error");
    if (message || tasks.length === 0) {
      toast({
        title: failed ? "部分任务出错 (some tasks failed)" : "Triton AIOS",
        body: message || "没有应用能处理这条指令 (no app matched)",
        level: failed ? "warning" : tasks.length ? "success" : "info",
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
          toast({ title: "🎤 正在录音 (recording)", body: "说完后再点一次 🎤 (click again when done)", timeout: 3000 });
        }
      });
    } catch (exc) {
      toast({ title: "🎤 语音输入 (voice input)", body: exc.message, level: "warning" });
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
      toast({ title: "🎤 听到 (heard)", body: heard, timeout: 3000 });
      showResponse(result.response);
    } else if (result.text) {
      await run(result.text, "voice");
    } else {
      toast({ title: "🎤 没有听清 (nothing heard)", level: "warning" });
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
