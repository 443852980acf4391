// Damaged state files that the system set aside at this launch (GET /api/health
// `problems`): said once per file on this desktop, as a warning whose folded
// detail names each file and where its copy was kept.

import { api } from "./api.js";
import { tr } from "./i18n.js";

const SEEN_KEY = "aios.problems.seen";
const SEEN_MAX = 100;

function seenBefore() {
  try {
    const seen = JSON.parse(localStorage.getItem(SEEN_KEY) || "[]");
    return Array.isArray(seen) ? seen.map(String) : [];
  } catch {
    return [];
  }
}

/** Warn about every damaged state file not yet shown here. */
export async function warnDamagedState(toast) {
  let problems = [];
  try {
    const health = await api.health();
    problems = Array.isArray(health?.problems) ? health.problems.map(String) : [];
  } catch {
    return; // the connection watcher says the controller is out of reach
  } finally {
    document.body.dataset.problemsChecked = "true";
  }
  const seen = seenBefore();
  const fresh = problems.filter((note) => !seen.includes(note));
  if (!fresh.length) return;
  localStorage.setItem(SEEN_KEY, JSON.stringify([...seen, ...fresh].slice(-SEEN_MAX)));
  const count = fresh.length;
  toast({
    title: tr("有保存的数据无法读取", "Some saved data could not be read"),
    body: tr(
      `${count} 个文件已损坏：已原样另存一份，系统用能读到的数据继续运行。`,
      count === 1
        ? "A damaged file was kept aside as it was; the system goes on with what it could read."
        : `${count} damaged files were kept aside as they were; the system goes on with what it could read.`,
    ),
    detail: fresh.join("\n\n"),
    level: "warning",
    timeout: 0,
  });
}
