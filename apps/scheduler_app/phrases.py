"""Words → a scheduling request, offline, in Chinese and English.

A small phrase table, not a time library: it recognises how people say *when*
("10分钟后", "明天早上8点", "每天早上8点", "每周一上午9点", "每隔半小时",
"in 5 minutes", "every day at 8am", "tomorrow at 7:30", "every monday at 9") and
*what* ("提醒我喝水", "播放音乐", "to stretch", or a command to run: "运行命令 date",
"run the command ls -l", kept as typed), and hands the time to the libraries:
`datetime.timedelta` / dateutil's `relativedelta` for relative moments, dateutil's
parser for absolute dates ("on 2030-06-01 08:00"), a five-field cron line for
repeats (the controller computes every fire time with APScheduler's triggers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from dateutil import parser as date_parser
from dateutil.relativedelta import relativedelta

__all__ = ["Request", "chinese_number", "understand"]

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_NUM = r"(\d+|[零〇一二两三四五六七八九十]+|半)"
_UNITS = {
    "秒": 1,
    "秒钟": 1,
    "分": 60,
    "分钟": 60,
    "小时": 3600,
    "个小时": 3600,
    "钟头": 3600,
    "个钟头": 3600,
    "天": 86400,
}
_EN_UNITS = {
    "second": 1,
    "sec": 1,
    "minute": 60,
    "min": 60,
    "hour": 3600,
    "hr": 3600,
    "day": 86400,
}
# 早上/上午 keep the hour, 下午/晚上 add 12 below 12, 中午 12 at 1-2, 凌晨 keeps it
_PM = ("下午", "晚上", "傍晚", "今晚")
_WEEKDAYS = {
    "一": "mon",
    "二": "tue",
    "三": "wed",
    "四": "thu",
    "五": "fri",
    "六": "sat",
    "日": "sun",
    "天": "sun",
}
_EN_WEEKDAYS = {
    "monday": "mon",
    "tuesday": "tue",
    "wednesday": "wed",
    "thursday": "thu",
    "friday": "fri",
    "saturday": "sat",
    "sunday": "sun",
}

_LIST = re.compile(
    r"(有哪些|哪些|所有|列出|查看|看看|显示).*(定时|提醒|任务|闹钟)|(定时任务|提醒)(列表|有哪些)"
    r"|\b(list|show)\b.*\b(schedules?|reminders?|scheduled|tasks?|timers?)\b"
    r"|what reminders"
)


def _naming(zh_verbs: str, en_verbs: str) -> re.Pattern[str]:
    """A verb, then words naming a job: the words are group `target` or `target_en`."""
    return re.compile(
        rf"^({zh_verbs})(?P<target>.+?)(的)?(提醒|定时任务|任务|闹钟)?$"
        rf"|^({en_verbs})\s+(the\s+|my\s+)?(?P<target_en>.+?)(\s+reminder|\s+job)?$",
        re.I,
    )


# every job at once: "取消所有定时任务", "把提醒全部删掉", "清空定时任务", "cancel all
# my reminders", "delete all scheduled tasks", "clear my reminders"
_ZH_JOBS = r"(定时任务|提醒|任务|闹钟)"
_ZH_REMOVE = r"(取消|删除|删掉|清空|清除|关掉)掉?"
_CANCEL_ALL = re.compile(
    rf"^(请|帮我)?({_ZH_REMOVE}(所有|全部)的?{_ZH_JOBS}"
    rf"|把?((所有|全部)的?{_ZH_JOBS}(都|全都|全部)?|{_ZH_JOBS}(都|全都|全部)){_ZH_REMOVE}"
    rf"|清空(所有的?|全部的?)?{_ZH_JOBS})(吧|了)?$"
    r"|^(please\s+)?(cancel|delete|remove|clear)\s+(all|everything|all\s+of)\s*"
    r"(the\s+|my\s+)?(scheduled\s+tasks?|reminders?|tasks?|jobs?|timers?|alarms?|schedules?)?"
    r"(\s+please)?$"
    r"|^(please\s+)?clear\s+(the\s+|my\s+)?(scheduled\s+tasks|reminders|timers|alarms)$",
    re.I,
)
_CANCEL = _naming("取消|删除|删掉|关掉|停止|不要", "cancel|delete|remove|stop")
_PAUSE = _naming("暂停|停用", "pause|disable")
_RESUME = _naming("恢复|启用|重新开启", "resume|enable")
# the words after the time that ask for a command, not an instruction
_COMMAND = re.compile(
    r"^(请|帮我)?(运行|执行|跑)(一下)?(命令|指令)\s*[:：]?\s*(?P<zh>\S.*)$"
    r"|^(please\s+)?(run|execute)\s+(the\s+)?(command|cmd)\s*:?\s*(?P<en>\S.*)$",
    re.I | re.S,
)
_QUOTES = ("``", "''", '""', "“”", "「」", "『』")


@dataclass
class Request:
    """What the words ask for: `kind` is create | list | cancel | cancel_all | pause |
    resume | remind_now | none."""

    kind: str
    name: str = ""
    what: str = ""  # the instruction to run (create), or the reminder's text
    schedule: dict[str, object] = field(
        default_factory=dict
    )  # ScheduleJob's schedule fields
    target: str = ""  # cancel, pause, resume: words naming the job
    command: str = ""  # create: the command line to run instead of an instruction


def chinese_number(text: str) -> float | None:
    """'10' → 10, '十五' → 15, '二十' → 20, '两' → 2, '半' → 0.5; None if not a number."""
    if text.isdigit():
        return float(text)
    if text == "半":
        return 0.5
    if not text or any(ch not in _CN_DIGITS and ch != "十" for ch in text):
        return None
    if "十" in text:
        tens, _, ones = text.partition("十")
        return float(
            (_CN_DIGITS.get(tens, 1) if tens else 1) * 10
            + (_CN_DIGITS[ones] if ones else 0)
        )
    value = 0
    for ch in text:
        value = value * 10 + _CN_DIGITS[ch]
    return float(value)


def _hour(period: str, hour: float) -> int:
    h = int(hour)
    if any(p in period for p in _PM) and h < 12:
        return h + 12
    if "中午" in period and h < 6:
        return h + 12
    return h


_CLOCK = (
    r"(早上|早晨|上午|中午|下午|傍晚|晚上|今晚|凌晨)?\s*"
    + _NUM
    + r"\s*[点:：时]\s*(半|一刻|三刻|(\d{1,2}|[零一二三四五六七八九十]+)分?)?"
)


def _clock(m: re.Match[str], offset: int) -> tuple[int, int] | None:
    period, hour_text, minute_text = (
        m.group(offset),
        m.group(offset + 1),
        m.group(offset + 2),
    )
    hour = chinese_number(hour_text)
    if hour is None or hour >= 24:
        return None
    minute = 0
    if minute_text == "半":
        minute = 30
    elif minute_text == "一刻":
        minute = 15
    elif minute_text == "三刻":
        minute = 45
    elif minute_text:
        value = chinese_number(minute_text.rstrip("分"))
        minute = int(value or 0)
    return _hour(period or "", hour), minute


def _what(rest: str) -> tuple[str, str]:
    """(job name, instruction) for the words after the time."""
    rest = rest.strip(" ，,。.!！")
    for lead in ("提醒我", "叫我", "提醒", "喊我"):
        if rest.startswith(lead):
            thing = rest[len(lead) :].strip() or "时间到了"
            return f"{thing}提醒", f"提醒我{thing}"
    return rest, rest


def _zh(text: str, now: datetime) -> Request | None:
    m = re.search(
        _NUM + r"\s*(个小时|个钟头|小时|钟头|分钟|分|秒钟|秒|天)\s*(以?后|之后)", text
    )
    if m:
        amount = chinese_number(m.group(1))
        if amount:
            run_at = now + timedelta(seconds=amount * _UNITS[m.group(2)])
            name, what = _what(text[m.end() :] or text[: m.start()])
            return Request(
                "create",
                name,
                what,
                {"schedule_type": "once", "run_at": run_at.isoformat()},
            )
    m = re.search(r"每隔?\s*" + _NUM + r"?\s*(个小时|个钟头|小时|钟头|分钟|秒钟|秒)", text)
    if m and not re.search(r"每(天|日|周|星期|礼拜)", text):
        amount = chinese_number(m.group(1)) if m.group(1) else 1.0
        if amount:
            name, what = _what(text[m.end() :])
            return Request(
                "create",
                name,
                what,
                {"schedule_type": "interval", "interval_s": amount * _UNITS[m.group(2)]},
            )
    m = re.search(r"每(天|日|个工作日|工作日)\s*" + _CLOCK, text)
    if m and (clock := _clock(m, 2)):
        weekdays = "mon-fri" if "工作日" in m.group(1) else "*"
        name, what = _what(text[m.end() :])
        return Request(
            "create",
            name,
            what,
            {"schedule_type": "cron", "cron": f"{clock[1]} {clock[0]} * * {weekdays}"},
        )
    m = re.search(r"每(周|星期|礼拜)([一二三四五六日天])\s*" + _CLOCK, text)
    if m and (clock := _clock(m, 3)):
        name, what = _what(text[m.end() :])
        cron = f"{clock[1]} {clock[0]} * * {_WEEKDAYS[m.group(2)]}"
        return Request("create", name, what, {"schedule_type": "cron", "cron": cron})
    # one weekday: "周五下午5点" is this week's Friday (next week's once it is past),
    # "下周五" next week's
    m = re.search(r"(下|这|本)?(?:周|星期|礼拜)([一二三四五六日天])\s*" + _CLOCK, text)
    if m and (clock := _clock(m, 3)):
        weekday = "一二三四五六日".index(m.group(2).replace("天", "日"))
        if m.group(1) == "下":
            days = 7 - now.weekday() + weekday
        else:
            days = (weekday - now.weekday()) % 7
        run_at = now + relativedelta(
            days=days, hour=clock[0], minute=clock[1], second=0, microsecond=0
        )
        if run_at <= now:
            run_at += relativedelta(days=7)
        name, what = _what(text[m.end() :])
        return Request(
            "create", name, what, {"schedule_type": "once", "run_at": run_at.isoformat()}
        )
    m = re.search(r"(今天|明天|后天|大后天)?\s*" + _CLOCK, text)
    if m and (m.group(1) or m.group(2) or "点" in m.group(0)) and (clock := _clock(m, 2)):
        days = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3}.get(m.group(1) or "今天", 0)
        run_at = now + relativedelta(
            days=days, hour=clock[0], minute=clock[1], second=0, microsecond=0
        )
        if run_at <= now and not m.group(1):
            run_at += relativedelta(days=1)
        name, what = _what(text[m.end() :])
        return Request(
            "create", name, what, {"schedule_type": "once", "run_at": run_at.isoformat()}
        )
    return None


_EN_CLOCK = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"


def _en_clock(hour: str, minute: str | None, half: str | None) -> tuple[int, int] | None:
    h, mm = int(hour), int(minute or 0)
    if half and half.startswith("p") and h < 12:
        h += 12
    if half and half.startswith("a") and h == 12:
        h = 0
    return (h, mm) if h < 24 and mm < 60 else None


def _en_what(rest: str, remind: bool) -> tuple[str, str]:
    rest = re.sub(r"\s+", " ", rest).strip(" ,.!")
    if rest.startswith("remind me"):
        remind, rest = True, rest.removeprefix("remind me").strip()
    elif re.fullmatch(r"(please )?wake me( up)?", rest):
        remind, rest = True, "wake up"  # 叫我起床: a wake-up reminder
    rest = rest.removeprefix("to ").strip()
    if remind:
        return f"{rest} reminder", f"remind me to {rest}"
    return rest, rest


def _en(text: str, now: datetime) -> Request | None:
    low = text.lower()
    if not re.search(r"\b(remind|every|in|at|tomorrow|schedule)\b", low):
        return None
    remind = bool(re.match(r"^(please\s+)?(remind me|set a reminder)", low))
    body = re.sub(r"^(please\s+)?(remind me|schedule|set a reminder)\s*", "", low).strip()
    m = re.search(
        r"\bin\s+(\d+|an?|half an)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?|days?)\b",
        body,
    )
    if m:
        amount = {"a": 1.0, "an": 1.0, "half an": 0.5}.get(m.group(1)) or float(m.group(1))
        unit = _EN_UNITS[m.group(2).rstrip("s")]
        run_at = now + timedelta(seconds=amount * unit)
        name, what = _en_what(body[: m.start()] + " " + body[m.end() :], remind)
        return Request(
            "create", name, what, {"schedule_type": "once", "run_at": run_at.isoformat()}
        )
    m = re.search(
        r"\bevery\s+(\d+|half an|an?)?\s*(seconds?|minutes?|mins?|hours?)\b", body
    )
    if m:
        amount = {"a": 1.0, "an": 1.0, "half an": 0.5}.get(m.group(1) or "a") or float(
            m.group(1)
        )
        name, what = _en_what(body[: m.start()] + " " + body[m.end() :], remind)
        return Request(
            "create",
            name,
            what,
            {
                "schedule_type": "interval",
                "interval_s": amount * _EN_UNITS[m.group(2).rstrip("s")],
            },
        )
    m = re.search(
        r"\bevery\s+(day|morning|weekday|monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday)\s+at\s+" + _EN_CLOCK,
        body,
    )
    if m and (clock := _en_clock(m.group(2), m.group(3), m.group(4))):
        days = {"day": "*", "morning": "*", "weekday": "mon-fri"}.get(
            m.group(1)
        ) or _EN_WEEKDAYS[m.group(1)]
        name, what = _en_what(body[: m.start()] + " " + body[m.end() :], remind)
        return Request(
            "create",
            name,
            what,
            {"schedule_type": "cron", "cron": f"{clock[1]} {clock[0]} * * {days}"},
        )
    m = re.search(r"\b(tomorrow\s+)?at\s+" + _EN_CLOCK + r"(\s+tomorrow)?", body)
    if m and (clock := _en_clock(m.group(2), m.group(3), m.group(4))):
        tomorrow = bool(m.group(1) or m.group(5))
        run_at = now + relativedelta(
            days=1 if tomorrow else 0,
            hour=clock[0],
            minute=clock[1],
            second=0,
            microsecond=0,
        )
        if run_at <= now:
            run_at += relativedelta(days=1)
        name, what = _en_what(body[: m.start()] + " " + body[m.end() :], remind)
        return Request(
            "create", name, what, {"schedule_type": "once", "run_at": run_at.isoformat()}
        )
    m = re.search(r"\bon\s+(\d{4}-\d{2}-\d{2}(?:[ t]\d{1,2}:\d{2})?)", body)
    if m:
        run_at = date_parser.parse(m.group(1)).replace(tzinfo=now.tzinfo)
        name, what = _en_what(body[: m.start()] + " " + body[m.end() :], remind)
        return Request(
            "create", name, what, {"schedule_type": "once", "run_at": run_at.isoformat()}
        )
    return None


def _as_typed(fragment: str, said: str) -> str:
    """`fragment` of `said` with its letters as typed (the English reading lower-cases)."""
    lowered = said.lower()
    at = lowered.find(fragment.lower())
    if at < 0 or len(lowered) != len(said):
        return fragment
    return said[at : at + len(fragment)]


def _command(what: str, said: str) -> str:
    """The command line `what` asks to run ("运行命令 date" → "date"), or ""."""
    m = _COMMAND.match(what.strip())
    if not m:
        return ""
    line = (m.group("zh") or m.group("en") or "").strip()
    for pair in _QUOTES:
        if len(line) > 2 and line[0] == pair[0] and line[-1] == pair[1]:
            line = line[1:-1].strip()
    return _as_typed(line, said)


def understand(text: str, now: datetime) -> Request:
    """What `text` asks the scheduler for, relative to `now` (aware, local)."""
    text = text.strip()
    if not text:
        return Request("list")
    if _CANCEL_ALL.match(text.strip(" 。.!！")):
        return Request("cancel_all")
    if _LIST.search(text):
        return Request("list")
    for kind, pattern in (("cancel", _CANCEL), ("pause", _PAUSE), ("resume", _RESUME)):
        m = pattern.match(text)
        if m:
            target = (m.group("target") or m.group("target_en") or "").strip()
            return Request(kind, target=target.removesuffix("的"))
    found = _zh(text, now) or _en(text, now)
    if found is not None:
        found.command = _command(found.what, text)
        if found.command:
            found.name = _as_typed(found.name, text)
        return found
    m = re.match(r"^(提醒我|叫我|提醒)(.+)$|^remind me (to )?(.+)$", text, re.I)
    if m:
        thing = (m.group(2) or m.group(4) or "").strip(" 。.!！")
        return Request("remind_now", name=thing, what=thing)
    return Request("none")
