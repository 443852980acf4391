#!/bin/bash
# 用法通过 --help 输出; it answers in the language of LANG (Chinese for zh_*).
# It counts a text given on the command line (-t) or a file of the workspace (-f).

case "$LANG" in
    zh*) zh=1 ;;
    *) zh="" ;;
esac

if [ "$1" = "--help" ]; then
    if [ -n "$zh" ]; then
        echo "文字统计 - 统计一段文字或一个文字文件的行数、词数和字符数"
        echo ""
        echo "用法: text_stats -t TEXT 或 text_stats -f FILE"
        echo ""
        echo "选项:"
        echo "  -t, --text TEXT    要统计的文字"
        echo "  -f FILE            要统计的文件 (工作区里的相对路径)"
        echo "  -h                 显示帮助"
        echo ""
        echo "每个汉字算一个词，其他文字按空格分词。"
        echo ""
        echo "示例:"
        echo "  text_stats -t \"今天天气很好\""
        echo "  text_stats -f notes.txt"
    else
        echo "Text statistics - count the lines, words and characters of a text or a text file"
        echo ""
        echo "Usage: text_stats -t TEXT or text_stats -f FILE"
        echo ""
        echo "Options:"
        echo "  -t, --text TEXT    the text to count"
        echo "  -f FILE            the file to count (a path in the workspace)"
        echo "  -h                 show this help"
        echo ""
        echo "A Chinese character counts as one word; other words are separated by spaces."
        echo ""
        echo "Examples:"
        echo "  text_stats -t \"the quick brown fox\""
        echo "  text_stats -f notes.txt"
    fi
    exit 0
fi

say() {  # say ZH EN: one of them, in the language of LANG
    if [ -n "$zh" ]; then echo "$1"; else echo "$2"; fi
}

text="" given="" file=""
while [ $# -gt 0 ]; do
    case "$1" in
        -t | --text)
            [ $# -ge 2 ] || { say "错误: -t 后面要有文字" "error: -t needs a text" >&2; exit 1; }
            text="$2" given=1
            shift 2
            ;;
        --text=*) text="${1#--text=}" given=1; shift ;;
        -f)
            [ $# -ge 2 ] || { say "错误: -f 后面要有文件名" "error: -f needs a file" >&2; exit 1; }
            file="$2"
            shift 2
            ;;
        -h) exec "$0" --help ;;
        *) say "错误: 未知选项 $1" "error: unknown option $1" >&2; exit 1 ;;
    esac
done

if [ -z "$given" ] && [ -z "$file" ]; then
    say "错误: 需要 -t TEXT 或 -f FILE" "error: -t TEXT or -f FILE is needed" >&2
    exit 1
fi
if [ -n "$file" ] && [ ! -f "$file" ]; then
    say "错误: 找不到文件 $file" "error: no file $file" >&2
    exit 2
fi

# --- 业务逻辑 ---
# counted in UTF-8 whatever LANG says (a zh_CN locale may not be installed)
export LC_ALL=C.UTF-8
content() {
    if [ -n "$file" ]; then cat -- "$file"; else printf '%s' "$text"; fi
}
lines=$(content | wc -l)
if [ -z "$file" ] && [ -n "$text" ] && [ "${text: -1}" != $'\n' ]; then
    lines=$((lines + 1))  # the last line of a text has no newline after it
fi
han=$(content | grep -oP '\p{Han}' | wc -l)
# a word of other letters: a run without spaces or Chinese characters holding a letter or digit
other='(?:(?!\p{Han})\S)'
others=$(content | grep -oP "$other*(?:(?!\p{Han})[\p{L}\p{N}])$other*" | wc -l)
chars=$(content | wc -m)
say "行数: $lines" "lines: $lines"
say "词数: $((han + others))" "words: $((han + others))"
say "字符数: $chars" "characters: $chars"
