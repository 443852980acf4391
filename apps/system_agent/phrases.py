"""What a desktop-control instruction asks for, read from Chinese or English text.

`parse_request("把播放按钮移到左上角")` → `UiRequest(op="move", target="播放按钮",
position="top-left")`. The request says *what* to do and names the element the way
the user did; `targets` then finds that element in the desktop's UI snapshot and
turns the request into UI commands. Recognised: move (corners, edges, centre,
coordinates, relative moves), resize (bigger/smaller, ×N, W×H), colour, rotate,
show/hide, change text, window open/close/focus/maximise/minimise, undo, and system-status questions.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "COLOR_NAMES",
    "POSITIONS",
    "UiRequest",
    "has_cjk",
    "parse_request",
    "plain",
]

_CJK = re.compile(r"[\u3400-\u9fff]")


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text or ""))


@dataclass
class UiRequest:
    op: str  # move resize change_color rotate hide show change_text window status undo unknown
    target: str = ""  # the element (or app) as the user named it
    english: bool = False
    position: str | None = None  # key of POSITIONS
    position_words: str = ""  # as the user said it ("左上角")
    point: tuple[float, float] | None = None  # explicit coordinates
    delta: tuple[float, float] | None = None  # relative move
    scale: float | None = None
    size: tuple[float | None, float | None] | None = None  # explicit width/height
    size_words: str = ""
    color: str | None = None  # a CSS colour or linear gradient; None: not said yet
    color_words: str = ""
    degrees: float | None = None
    text: str | None = None
    window_op: str | None = None  # open/close/focus/maximize/minimize_window
    status_view: str = "dashboard"  # dashboard table chart
    status_topic: str = ""  # cpu memory disk process ""
    notes: list[str] = field(default_factory=list)
    every: bool = False  # the user said all of them ("所有播放按钮", "all play buttons")


# position key → (Chinese words, English words); corners before edges
POSITIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "top-left": (
        ("左上角", "左上方", "左上"),
        (
            "top-left corner",
            "top left corner",
            "upper left corner",
            "top-left",
            "top left",
            "upper left",
            "upper-left",
        ),
    ),
    "top-right": (
        ("右上角", "右上方", "右上"),
        (
            "top-right corner",
            "top right corner",
            "upper right corner",
            "top-right",
            "top right",
            "upper right",
            "upper-right",
        ),
    ),
    "bottom-left": (
        ("左下角", "左下方", "左下"),
        (
            "bottom-left corner",
            "bottom left corner",
            "lower left corner",
            "bottom-left",
            "bottom left",
            "lower left",
            "lower-left",
        ),
    ),
    "bottom-right": (
        ("右下角", "右下方", "右下"),
        (
            "bottom-right corner",
            "bottom right corner",
            "lower right corner",
            "bottom-right",
            "bottom right",
            "lower right",
            "lower-right",
        ),
    ),
    "center": (
        ("正中间", "正中央", "中间", "中央", "正中", "居中", "中心"),
        ("center", "centre", "middle"),
    ),
    "top": (("最上面", "最上方", "顶部", "顶端", "上面", "上方", "顶上"), ("top",)),
    "bottom": (("最下面", "最下方", "底部", "底端", "下面", "下方", "底下"), ("bottom",)),
    "left": (
        ("最左边", "最左侧", "左边", "左侧", "左面"),
        ("left side", "left edge", "left"),
    ),
    "right": (
        ("最右边", "最右侧", "右边", "右侧", "右面"),
        ("right side", "right edge", "right"),
    ),
}

# Chinese colour words → CSS colours (longest first when matching)
_ZH_COLORS: dict[str, str] = {
    "深蓝": "navy",
    "天蓝": "skyblue",
    "浅蓝": "lightblue",
    "深绿": "darkgreen",
    "浅绿": "lightgreen",
    "深红": "darkred",
    "粉红": "pink",
    "橘黄": "orange",
    "红": "red",
    "绿": "green",
    "蓝": "blue",
    "黄": "yellow",
    "紫": "purple",
    "橙": "orange",
    "橘": "orange",
    "黑": "black",
    "白": "white",
    "灰": "gray",
    "粉": "pink",
    "青": "cyan",
    "棕": "brown",
    "褐": "brown",
    "咖啡": "brown",
    "金": "gold",
    "银": "silver",
    "透明": "transparent",
}
_EN_COLORS = [
    "red",
    "green",
    "blue",
    "yellow",
    "purple",
    "orange",
    "black",
    "white",
    "gray",
    "grey",
    "pink",
    "cyan",
    "brown",
    "gold",
    "silver",
    "navy",
    "teal",
    "magenta",
    "violet",
    "lime",
    "maroon",
    "olive",
    "skyblue",
    "lightblue",
    "darkblue",
    "darkgreen",
    "darkred",
    "lightgreen",
    "transparent",
]
COLOR_NAMES = {**_ZH_COLORS, **{c: c for c in _EN_COLORS}}

_ZH_COLOR_RE = re.compile(
    "(?P<word>(" + "|".join(sorted(_ZH_COLORS, key=len, reverse=True)) + ")(色|颜色)?)"
)
_EN_COLOR_RE = re.compile(r"\b(?P<word>" + "|".join(_EN_COLORS) + r")\b")
_HEX_RE = re.compile(r"(?P<word>#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|rgba?\([\d\s.,%]+\))")

_STATUS_ZH = re.compile(
    r"(系统状态|系统总览|系统信息|系统资源|资源占用|运行状态|CPU|cpu|处理器|内存|磁盘|硬盘|进程|负载|占用率|占用多少)"
)
_STATUS_EN = re.compile(
    r"\b(system status|system overview|overview|system info|system information|status|cpu|memory|ram|disk|"
    r"processes|process|usage|load)\b"
)

_WINDOW_VERBS_ZH = [
    ("maximize_window", re.compile(r"(最大化|全屏|铺满屏幕|铺满桌面)")),
    ("minimize_window", re.compile(r"(最小化|缩到任务栏|收到任务栏)")),
    ("close_window", re.compile(r"(关闭|关掉|关上|退出|关了)")),
    (
        "focus_window",
        re.compile(r"(切换到|切到|聚焦|置顶|放到最前|调到最前|放到前面|到最前|前台|激活)"),
    ),
    ("open_window", re.compile(r"(打开|开启|启动|运行)")),
]
_WINDOW_VERBS_EN = [
    ("maximize_window", re.compile(r"\b(maximi[sz]e|full ?screen)\b")),
    ("minimize_window", re.compile(r"\b(minimi[sz]e)\b")),
    ("close_window", re.compile(r"\b(close|quit|exit)\b")),
    (
        "focus_window",
        re.compile(r"\b(focus|switch to|bring .*?to (the )?front|activate|raise)\b"),
    ),
    ("open_window", re.compile(r"\b(open|launch|start)\b")),
]
_APP_WORDS = re.compile(r"(窗口|应用|程序|软件|\bapp\b|\bapplication\b|\bwindow\b)", re.I)

_ROTATE_ZH = re.compile(r"(逆时针|顺时针)?(旋转|转)(?P<deg>-?\d+(\.\d+)?)\s*(度|°)")
_ROTATE_EN = re.compile(
    r"\b(rotate|turn|spin)\b.*?(?P<deg>-?\d+(\.\d+)?)\s*(degrees|degree|deg|°)?"
    r"(?P<ccw>\s*(counter-?clockwise|anti-?clockwise))?"
)

_BIGGER_ZH = re.compile(
    r"(变大一点|大一点|大一些|大些|变大|放大一点|放大|加大|调大|增大|大点)"
)
_SMALLER_ZH = re.compile(r"(变小一点|小一点|小一些|小些|变小|缩小一点|缩小|减小|调小|小点)")
_BIGGER_EN = re.compile(r"\b(bigger|larger|enlarge|grow|increase the size|scale up)\b")
_SMALLER_EN = re.compile(r"\b(smaller|shrink|reduce the size|scale down|tinier)\b")
_TIMES = re.compile(r"(?P<n>\d+(\.\d+)?)\s*(倍|x\b|times\b)")
_HALF = re.compile(r"(一半|\bhalf\b)")
_DOUBLE = re.compile(r"(两倍|二倍|翻倍|\bdouble\b|\btwice\b)")
_WH = re.compile(r"(?P<w>\d{1,5})\s*[x×*]\s*(?P<h>\d{1,5})")
_WIDTH = re.compile(r"(宽度?|width)\s*(为|设为|改成|to|=|:)?\s*(?P<n>\d{1,5})")
_HEIGHT = re.compile(r"(高度?|height)\s*(为|设为|改成|to|=|:)?\s*(?P<n>\d{1,5})")

_HIDE = re.compile(r"(隐藏|藏起来|不显示|不要显示|去掉|\bhide\b|\bconceal\b)")
_SHOW = re.compile(r"(取消隐藏|显示出来|显示|露出来|\bunhide\b|\bshow\b|\breveal\b)")

_MOVE_VERB_ZH = re.compile(
    r"(移动到|移到|移至|挪到|放到|放在|拖到|摆到|移去|移动|挪动|移|挪)"
)
_MOVE_VERB_EN = re.compile(r"\b(move|put|place|drag|position)\b")
_POINT = re.compile(r"[(（]?\s*(?P<x>-?\d{1,5})\s*[,，]\s*(?P<y>-?\d{1,5})\s*[)）]?")
_DELTA_ZH = re.compile(
    r"(向|往)(?P<dir>左|右|上|下)(移动|移|挪动|挪)?\s*(?P<n>\d{1,5})?\s*(像素|px)?"
)
_DELTA_EN = re.compile(
    r"\b(?P<dir>left|right|up|down)\s*(by\s*)?(?P<n>\d{1,5})\s*(px|pixels?)?"
)

_TEXT_ZH = re.compile(
    r"(的)?(文字|文本|标签|名字|名称|标题|显示的字)(改成|改为|换成|变成|设为|设置为|写成)(?P<text>.+)$"
    r"|(改名为|改名成|重命名为|命名为|改名叫)(?P<text2>.+)$"
)
_TEXT_EN = re.compile(
    r"\b(change|set)\s+the\s+(text|label|title|caption)\s+of\s+(?P<target>.+?)\s+to\s+(?P<text>.+)$"
    r"|\brename\s+(?P<target2>.+?)\s+to\s+(?P<text2>.+)$"
    r"|\b(change|set)\s+(?P<target3>.+?)(?:'s)?\s+(text|label|title)\s+to\s+(?P<text3>.+)$"
)

_FILLERS_ZH = re.compile(
    r"(请你|请|帮我|帮忙|麻烦|给我|一下|一点|一些|把|将|让|吧|了|呢|啊|呀|"
    r"改成|改为|换成|变成|设为|设置为|弄成|调成|染成|涂成|变|改|换|调|设置|设|"
    r"的颜色|颜色|的大小|大小|尺寸|位置)"
)
_FILLERS_EN = re.compile(
    r"\b(please|can you|could you|make|turn|change|set|paint|color|colour|the|a|an|to|of|"
    r"into|by|it|at|in|on|towards|size|position|color of|colour of)\b"
)
_PUNCT = " \t\r\n。.!！?？,，;；:：~～、"
_QUOTES = "“”\"'「」『』《》【】"


def _strip_quotes(text: str) -> str:
    return text.strip().strip(_QUOTES).strip()


def _color(text: str, english: bool) -> tuple[str | None, str]:
    match = _HEX_RE.search(text)
    if match:
        return match["word"].lower(), match["word"]
    if has_cjk(text):
        match = _ZH_COLOR_RE.search(text)
        if match:
            base = match.group(2)
            return _ZH_COLORS[base], match["word"]
    match = _EN_COLOR_RE.search(text.lower())
    if match:
        word = match["word"]
        return ("gray" if word == "grey" else word), word
    return None, ""


_GRADIENT = re.compile(r"(渐变色|渐变|\bgradient\b)", re.I)
# the second colour of a gradient the user named one colour of: the default wallpaper's
GRADIENT_END = "#0b1e4a"


def _colors(text: str) -> list[tuple[str, str]]:
    """Every colour named in `text`, in order: (CSS colour, the user's words)."""
    found: list[tuple[int, str, str]] = []
    for match in _HEX_RE.finditer(text):
        found.append((match.start(), match["word"].lower(), match["word"]))
    if has_cjk(text):
        for match in _ZH_COLOR_RE.finditer(text):
            found.append((match.start(), _ZH_COLORS[match.group(2)], match["word"]))
    else:
        for match in _EN_COLOR_RE.finditer(text.lower()):
            word = match["word"]
            found.append((match.start(), "gray" if word == "grey" else word, word))
    return [(css, words) for _, css, words in sorted(found)]


def _gradient(raw: str, english: bool) -> UiRequest | None:
    """ "把背景换成蓝紫渐变", "make the background a blue to purple gradient": a CSS
    linear gradient of the colours named (one colour fades into the default's dark)."""
    word = _GRADIENT.search(raw)
    if not word:
        return None
    named = _colors(raw)[:3]
    stops = [css for css, _ in named] or ["#1e3a8a", "#7c3aed"]
    if len(stops) == 1:
        stops.append(GRADIENT_END)
    cut = [words for _, words in named] + [word.group(0), "从", "到", "和", "与", "的"]
    if english:
        cut += ["from", "and"]
    start = min([raw.find(w) for _, w in named if raw.find(w) >= 0] + [word.start()])
    return UiRequest(
        "change_color",
        _remainder(raw, cut, english),
        english,
        color=f"linear-gradient(135deg, {', '.join(stops)})",
        color_words=raw[start : word.end()].strip(),
    )


def _position(text: str) -> tuple[str | None, str]:
    lower = text.lower()
    for key, (zh_words, en_words) in POSITIONS.items():
        for word in zh_words:
            if word in text:
                return key, word
        for word in en_words:
            if re.search(rf"\b{re.escape(word)}\b", lower):
                return key, word
    return None, ""


def _remainder(text: str, cut: list[str], english: bool) -> str:
    """What is left of `text` once the op's words and the fillers are removed."""
    for part in sorted((c for c in cut if c), key=len, reverse=True):
        text = re.sub(re.escape(part), " ", text, flags=re.I)
    if english:
        text = _FILLERS_EN.sub(" ", text.lower())
        text = re.sub(r"\b(button|btn)\b", " button", text)
    else:
        text = _FILLERS_ZH.sub(" ", text)
    text = re.sub(r"\s+", " ", text).strip(_PUNCT + "的 ")
    return _strip_quotes(text)


def plain(text: str) -> str:
    """`text` as an element's name is compared: lower case, without the filler words
    `parse_request` drops from a target ("Evening Rain" and "the play button of
    evening rain" share "evening rain")."""
    text = _FILLERS_ZH.sub(" ", (text or "").lower())
    text = _FILLERS_EN.sub(" ", text)
    return re.sub(r"[\s_]+", " ", text).strip(_PUNCT + "的 ")


_EVERY_ZH = re.compile(r"(所有的|所有|全部的|全部|每一个|每个|都)")
_EVERY_EN = re.compile(r"\b(all of the|all the|all|every|each|both)\b", re.I)


def parse_request(instruction: str | None) -> UiRequest:
    """Read one instruction; `op="unknown"` when nothing desktop-related is asked.
    "All" / "所有" before the name asks for every element of that name (`every`)."""
    raw = (instruction or "").strip().strip(_PUNCT)
    every_re = _EVERY_EN if not has_cjk(raw) else _EVERY_ZH
    if every_re.search(raw):
        request = _parse(every_re.sub(" ", raw).strip())
        request.every = request.op not in ("window", "status", "unknown")
        if request.every and not has_cjk(raw):  # "all play buttons": each "play button"
            request.target = _singular(request.target)
        return request
    return _parse(raw)


def _singular(words: str) -> str:
    """The last word of an English name in the singular ("play buttons" → "play button")."""
    match = re.search(r"(?:(?<=x)|(?<=s)|(?<=sh)|(?<=ch))es$|(?<!s)s$", words)
    return words[: match.start()] if match else words


_UNDO_ZH = re.compile(
    r"^(请|帮我)?(撤销|撤回|撤消)(一下)?(上一步|上一次|刚才|上次)?的?(操作|改动|修改)?$"
)
_UNDO_EN = re.compile(
    r"^(please )?undo( that| it| the last (change|step|move))?( please)?$"
)


def _parse(raw: str) -> UiRequest:
    english = not has_cjk(raw)
    lower = raw.lower()
    if not raw:
        return UiRequest("status", english=english)
    if (_UNDO_EN if english else _UNDO_ZH).match(lower if english else raw):
        return UiRequest("undo", english=english)
    # in this order: change text first, as the new text may itself contain colour or
    # position words; what names none of these is a move
    for reader in (_text, _status, _rotate, _window, _colouring, _size, _visibility):
        request = reader(raw, lower, english)
        if request is not None:
            return request
    return _move(raw, lower, english)


def _text(raw: str, lower: str, english: bool) -> UiRequest | None:
    match = (_TEXT_EN if english else _TEXT_ZH).search(raw)
    if not match:
        return None
    groups = match.groupdict()
    new_text = next(groups[k] for k in ("text", "text2", "text3") if groups.get(k))
    target_words = next(
        (groups[k] for k in ("target", "target2", "target3") if groups.get(k)), None
    )
    if target_words is not None:
        target = _remainder(target_words, [], english)
    else:
        target = _remainder(raw[: match.start()], [], english)
    return UiRequest("change_text", target, english, text=_strip_quotes(new_text))


def _status(raw: str, lower: str, english: bool) -> UiRequest | None:
    if not (_STATUS_EN if english else _STATUS_ZH).search(raw if not english else lower):
        return None
    topic = _status_topic(lower)
    view = "table" if topic == "process" else "dashboard"
    if re.search(r"(图表|柱状图|chart|graph)", lower):
        view = "chart"
    if re.search(r"(表格|列表|table)", lower):
        view = "table"
    return UiRequest("status", english=english, status_view=view, status_topic=topic)


def _rotate(raw: str, lower: str, english: bool) -> UiRequest | None:
    match = (_ROTATE_EN if english else _ROTATE_ZH).search(lower if english else raw)
    if match:
        degrees = float(match["deg"])
        counter = (match.group(1) == "逆时针") if not english else bool(match["ccw"])
        if counter:
            degrees = -degrees
        cut = (
            [match.group(0)]
            if not english
            else [match.group(1), match.group(0)[match.start("deg") - match.start() :]]
        )
        target = _remainder(raw, cut, english)
        return UiRequest("rotate", target, english, degrees=degrees)
    for words, degrees in (
        (r"(倒过来|上下颠倒|upside down)", 180.0),
        (r"(转回来|复原|恢复原样|reset (the )?rotation|unrotate)", 0.0),
        (r"(旋转|\brotate\b)", 90.0),
    ):
        found = re.search(words, lower)
        if found:
            return UiRequest(
                "rotate",
                _remainder(raw, [found.group(0)], english),
                english,
                degrees=degrees,
            )
    return None


def _window(raw: str, lower: str, english: bool) -> UiRequest | None:
    """A window operation (an app is named) — decided later against the app list too."""
    verbs = _WINDOW_VERBS_EN if english else _WINDOW_VERBS_ZH
    for window_op, pattern in verbs:
        found = pattern.search(lower)
        if found:
            target = _remainder(raw, [found.group(0)], english)
            return UiRequest("window", target, english, window_op=window_op)
    return None


def _colouring(raw: str, lower: str, english: bool) -> UiRequest | None:
    """A gradient of colours, or one colour."""
    gradient = _gradient(raw, english)
    if gradient is not None:
        return gradient
    color, color_words = _color(raw, english)
    if not color:
        return None
    target = _remainder(raw, [color_words, "的颜色", "颜色"], english)
    return UiRequest("change_color", target, english, color=color, color_words=color_words)


def _visibility(raw: str, lower: str, english: bool) -> UiRequest | None:
    """Hide or show."""
    found = _HIDE.search(lower)
    if found:
        return UiRequest("hide", _remainder(raw, [found.group(0)], english), english)
    found = _SHOW.search(lower)
    if found and not _MOVE_VERB_ZH.search(raw):
        return UiRequest("show", _remainder(raw, [found.group(0)], english), english)
    return None


def _status_topic(lower: str) -> str:
    if re.search(r"(进程|process)", lower):
        return "process"
    if re.search(r"(cpu|处理器|负载|load)", lower):
        return "cpu"
    if re.search(r"(内存|memory|ram)", lower):
        return "memory"
    if re.search(r"(磁盘|硬盘|disk)", lower):
        return "disk"
    return ""


def _size(raw: str, lower: str, english: bool) -> UiRequest | None:
    match = _WH.search(lower)
    if match and re.search(r"(大小|尺寸|size|resize|改成|设为|调成|宽|高)", lower):
        target = _remainder(raw, [match.group(0), "resize", "调整", "调成"], english)
        size: tuple[float | None, float | None] = (float(match["w"]), float(match["h"]))
        return UiRequest("resize", target, english, size=size, size_words=match.group(0))
    width = _WIDTH.search(lower)
    height = _HEIGHT.search(lower)
    if width or height:
        cut = [m.group(0) for m in (width, height) if m] + ["resize", "调整", "调成"]
        target = _remainder(raw, cut, english)
        size = (
            float(width["n"]) if width else None,
            float(height["n"]) if height else None,
        )
        words = " ".join(m.group(0) for m in (width, height) if m)
        return UiRequest("resize", target, english, size=size, size_words=words)
    for pattern, scale in (
        (_TIMES, None),
        (_DOUBLE, 2.0),
        (_HALF, 0.5),
        (_BIGGER_EN if english else _BIGGER_ZH, 1.25),
        (_SMALLER_EN if english else _SMALLER_ZH, 0.8),
    ):
        found = pattern.search(lower)
        if not found:
            continue
        if scale is None:
            if not re.search(r"(大|小|放|缩|big|small|larg|scale|size)", lower):
                continue
            scale = float(found["n"])
            if re.search(r"(缩小|smaller|shrink)", lower) and scale > 1:
                scale = 1 / scale
        extra = ["resize", "调整", "放大", "缩小", "变大", "变小", "大小"]
        target = _remainder(raw, [found.group(0), *extra], english)
        return UiRequest("resize", target, english, scale=scale, size_words=found.group(0))
    if re.search(r"\bresize\b", lower):
        return UiRequest(
            "resize", _remainder(raw, ["resize"], english), english, scale=1.25
        )
    return None


def _move(raw: str, lower: str, english: bool) -> UiRequest:
    verb = (_MOVE_VERB_EN if english else _MOVE_VERB_ZH).search(lower if english else raw)
    position, position_words = _position(raw)
    delta_match = (_DELTA_EN if english else _DELTA_ZH).search(lower if english else raw)
    cut = [verb.group(0)] if verb else []
    if delta_match and not delta_match["n"] and english:
        delta_match = None  # "move it left": an edge, not a step
    if position and not delta_match:
        cut.append(position_words)
        target = _remainder(raw, cut, english)
        return UiRequest(
            "move", target, english, position=position, position_words=position_words
        )
    point = _POINT.search(raw)
    if verb and point:
        target = _remainder(raw, [*cut, point.group(0)], english)
        return UiRequest(
            "move", target, english, point=(float(point["x"]), float(point["y"]))
        )
    if delta_match and (verb or not english):
        step = float(delta_match["n"] or 50)
        dx, dy = {
            "左": (-step, 0),
            "left": (-step, 0),
            "右": (step, 0),
            "right": (step, 0),
            "上": (0, -step),
            "up": (0, -step),
            "下": (0, step),
            "down": (0, step),
        }[delta_match["dir"]]
        target = _remainder(raw, [*cut, delta_match.group(0)], english)
        return UiRequest("move", target, english, delta=(dx, dy))
    if verb:
        return UiRequest("move", _remainder(raw, cut, english), english)
    change = _CHANGE.search(lower if english else raw)
    if change and _PAINTED.search(lower):
        # "换一下壁纸", "change the wallpaper": a colour change, no colour said yet
        target = _remainder(raw, [change.group(0)], english)
        return UiRequest("change_color", target, english)
    return UiRequest("unknown", _remainder(raw, [], english), english)


_CHANGE = re.compile(r"(换一下|换个|换掉|更换|换|\bchange\b)")
# what a bare "change" is about when it is about a colour: a part of the desktop
_PAINTED = re.compile(
    r"(背景|壁纸|任务栏|标题栏|颜色|wallpaper|background|taskbar|title ?bar|colou?r)"
)
