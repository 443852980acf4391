"""Requests whose subject, not their verb, says which app should act.

Searching, finding, downloading and opening are every app's verbs; what a request
is *for* says whose it is. Two kinds of subject outweigh the verb, and the router
scores such a request by its subject alone:

* knowledge about a topic — a verb that only asks for words ("总结", "介绍",
  "评价", "讲讲", "summarize", "tell me about"): what follows it is its topic
  ("帮我总结一下周杰伦的音乐风格" is a question, not a request to play music); or an
  aspect of a topic at the request's end ("周杰伦的音乐风格是什么", "搜索爵士乐的
  历史", "the history of jazz", "Jay Chou's style"): the topic, and the verb that
  looks it up, go, the aspect ("风格", "history") stays;
* a work named by its kind at the request's end — a book, a film, an article
  ("搜索《代码大全》这本书", "电影《三体》", "一本书", "search for the book 'Code
  Complete'"): the verb and the title go, the kind stays. A title alone stays the
  song's the verb's app expects ("搜索《七里香》"); a song, an album or a
  performance is no such kind ("这首歌", "播放京剧"). Writing one is the topic rule's
  ("写一篇关于X的文章"), not this one's.

What stays is scored against every app's manifest like any other words, so an app
whose keywords name the kind ("书", "history") takes the request; when none does,
the router gives it to the catch-all app (the assistant) as a request of its own.

`subject_spans` gives the spans of one part (its quotes already blanked) that are
content by these rules; `knowledge_topic` the topic of a knowledge verb when no
aspect or work rule reads the part as a question about something general, so the
router can ask whether an app shows or owns it ("说说现在的CPU占用", "介绍一下技能"
are the system's and the skills app's, `controller.routing.owned`).
"""

from __future__ import annotations

import re

__all__ = ["knowledge_topic", "subject_spans"]

# politeness, modal and manner words that may come before the verb
_LEAD = (
    r"(?:请你|请|帮我|帮忙|给我|为我|替我|跟我|和我|麻烦你|麻烦|你能不能|你可以|你能|能不能|能否"
    r"|可以|可不可以|我想|我要|想|简单地?|简要地?|大概|详细地?|具体地?)*"
)
# verbs that only ask for words about their object
_KNOWLEDGE_VERB = re.compile(
    rf"^\s*{_LEAD}\s*(?:总结|概括|归纳|介绍|评价|点评|讲讲|讲一讲|说说|说一说|谈谈|谈一谈"
    r"|聊聊|聊一聊|科普|解读)(?:一下|下)?"
    r"|^\s*(?:please\s+|(?:can|could)\s+you\s+)?(?:summari[sz]e|describe"
    r"|give\s+(?:me\s+|us\s+)?(?:an?\s+)?(?:summary|overview|introduction)\s+of"
    r"|tell\s+(?:me|us)\s+(?:more\s+)?about|talk\s+about|what\s+do\s+you\s+know\s+about)\b",
    re.IGNORECASE,
)

# a question's tail after the subject ("…是什么", "…like?")
_ZH_TAIL = r"\s*(?:是什么|是怎样的|是怎么样的|是啥|怎么样|如何|有哪些|有什么|吗|呢|[?？。!！])*\s*$"
_EN_TAIL = r"(?:\s+like)?\s*[?.!]*\s*$"

# an aspect of a topic: "X的(音乐)风格", "X的历史", "the history of X", "X's style";
# a background only with its kind ("创作背景": "桌面的背景" is the wallpaper)
_ASPECT = (
    r"(?:风格|历史|发展史|历程|起源|由来|来历|创作背景|时代背景|文化背景|历史背景|生平|经历"
    r"|特点|特色|特征|成就|影响|意义|地位|流派|含义|寓意|优缺点|区别|异同)"
)
_ASPECT_KIND = r"(?:音乐|演唱|创作|写作|艺术|表演|绘画|发展|成长|个人|人生|主要|时代|文化)?"
_ZH_ASPECT = re.compile(
    rf"(?<=[^，,、；;。：:\s])的{_ASPECT_KIND}(?P<aspect>{_ASPECT}){_ZH_TAIL}"
)
_EN_ASPECT_NOUN = (
    r"(?:history|origins?|biography|influence|significance|meaning"
    r"|evolution|characteristics|style)"
)
# a style "of" something may be a button's ("the style of the play button"); a
# style someone has is theirs ("Jay Chou's style")
_EN_ASPECT = re.compile(
    rf"\b(?P<aspect>(?!style){_EN_ASPECT_NOUN})\s+of\s+\S.*$"
    rf"|(?:'s|s')\s+(?:[a-z]+\s+)?(?P<owned>{_EN_ASPECT_NOUN}){_EN_TAIL}",
    re.IGNORECASE,
)
# a request to change something: an aspect after it is what to change it to
# ("把背景换成复古的风格", "change the style of the play button"), not a question
_CHANGE = re.compile(
    r"把|将|换成|改成|变成|设为|设置为|调成|弄成|\b(?:change|make|set|turn|switch|move)\b",
    re.IGNORECASE,
)

# a work named by its kind: after its title ("《X》这本书"), before it ("电影《X》"),
# counted ("这本书", "一部好看的电影") or owned ("周杰伦的电影"); a lone 书 or 剧 needs
# its measure word or its owner ("情书" and "京剧" are songs' and operas' names)
_WORK = r"(?:书籍|图书|小说|传记|电影|影片|电视剧|连续剧|纪录片|动画片|文章|论文|杂志|漫画)"
_ZH_WORK = re.compile(
    rf"》\s*(?:这|那|一)?(?:本|部|篇|份|套)?(?P<after>{_WORK}|书){_ZH_TAIL}"
    rf"|(?P<before>{_WORK})\s*《[^》]*》{_ZH_TAIL}"
    rf"|(?:这|那|一)(?:本|部|篇|份|套)[^，,、；;。：:]{{0,8}}?(?P<counted>{_WORK}|书|剧){_ZH_TAIL}"
    rf"|(?<=[^，,、；;。：:\s])的(?P<owned>{_WORK}|书){_ZH_TAIL}"
)
_EN_WORK = re.compile(
    r"\b(?P<kind>books?|e-?books?|novels?|films?|movies?|articles?|biograph(?:y|ies)"
    r"|documentar(?:y|ies)|magazines?|tv\s+(?:shows?|series))\b"
    # what may follow the kind: its quoted title (blanked), a Title In Capitals, or
    # whose or what it is ("by Stephen King", "called X", "about X")
    r"(?:\s*[\"'“‘]?\x00+[\"'”’]?|(?:\s+[A-Z0-9][\w'’:-]*)+"
    r"|\s+(?:by|called|titled|named|entitled|about)\s+.+)?"
    rf"{_EN_TAIL}"
)
# a kind after a preposition qualifies another object ("the soundtrack of the movie",
# "songs from the film"), it is not the object
_QUALIFIER = re.compile(
    r"\b(?:of|from|in|on|into|to)\s+(?:(?:the|a|an|this|that|my|your|his|her|their)\s+)?"
    r"(?:[\w'-]+\s+)?$",
    re.IGNORECASE,
)
_WRITING = re.compile(r"写|编写|创作|起草|撰写|\b(?:write|compose|draft)\b", re.IGNORECASE)
_COLON = re.compile("[:：]")
# where a knowledge verb's topic ends: at a connective that joins another request
# ("介绍一下爵士乐并播放一首"), not at one that lists topics ("和", "、", "and":
# "summarize jazz and rock")
_JOINED = re.compile(r"(?<![合吞兼归])并且?(?![不非没发行列排购存])|同时|顺便|还要")
# where the clause that holds a subject starts: after the last comma or connective
_CLAUSE = re.compile(r"[，,、；;]|并|然后|\band\b|\bthen\b", re.IGNORECASE)


def _clause_start(visible: str, end: int) -> int:
    starts = [match.end() for match in _CLAUSE.finditer(visible, 0, end)]
    return starts[-1] if starts else 0


def _leading_words(visible: str, start: int) -> str:
    return visible[_clause_start(visible, start) : start]


def _verb_topic(visible: str) -> tuple[int, int] | None:
    """The span of a knowledge verb's topic: from the verb to where another request
    joins, or None (no such verb, or it works on the text after a colon)."""
    verb = _KNOWLEDGE_VERB.match(visible)
    if verb is None:
        return None
    topic = visible[verb.end() :]
    # "总结以下内容：…" works on the text it is given (the material after a colon)
    if not topic.strip() or _COLON.search(topic):
        return None
    joined = _JOINED.search(topic)
    return verb.end(), verb.end() + (joined.start() if joined else len(topic))


def knowledge_topic(visible: str) -> str | None:
    """The topic of `visible`'s knowledge verb ("说说[现在的CPU占用]"), or None: no
    such verb, or the topic is asked about for an aspect or as a work ("介绍一下CPU的
    历史", "介绍一下《X》这本书"), which is knowledge about something general."""
    span = _verb_topic(visible)
    if span is None:
        return None
    topic = visible[span[0] : span[1]]
    return None if subject_spans(topic) else topic


def subject_spans(visible: str) -> list[tuple[int, int]]:
    """The spans of `visible` (one part of an instruction, its quotes blanked) that are
    content because of the request's subject: a knowledge verb's topic, or what leads
    up to (and, in English, follows) an aspect or a work's kind."""
    spans: list[tuple[int, int]] = []
    after = 0  # where the rules below may look: after a knowledge verb's topic
    topic = _verb_topic(visible)
    if topic is not None:
        after = topic[1]
        spans.append(topic)
    aspect = _ZH_ASPECT.search(visible, after)
    if aspect is not None:
        start = aspect.start("aspect")
        if not _CHANGE.search(_leading_words(visible, start)):
            spans.append((_clause_start(visible, start), start))
    aspect = _EN_ASPECT.search(visible, after)
    if aspect is not None:
        group = "aspect" if aspect.group("aspect") else "owned"
        start, end = aspect.span(group)
        if not _CHANGE.search(_leading_words(visible, start)):
            spans.append((_clause_start(visible, start), start))
            if group == "aspect":  # "the history [of jazz]"
                spans.append((end, len(visible)))
    for pattern in (_ZH_WORK, _EN_WORK):
        work = pattern.search(visible, after)
        if work is None:
            continue
        group = next(name for name, value in work.groupdict().items() if value)
        start, end = work.span(group)
        leading = _leading_words(visible, start)
        qualified = pattern is _EN_WORK and _QUALIFIER.search(leading)
        if not _WRITING.search(leading) and not qualified:
            spans.append((_clause_start(visible, start), start))
            if pattern is _EN_WORK and end < len(visible):  # its title
                spans.append((end, len(visible)))
    return [(a, b) for a, b in spans if b > a]
