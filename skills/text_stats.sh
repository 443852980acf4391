#!/bin/bash
# 用法通过 --help 输出; it answers in the language of LANG (Chinese for zh_*).

case "$LANG" in
    zh*) zh=1 ;;
    *) zh="" ;;
esac

if [ "$1" = "--help" ]; then
    if [ -n "$zh" ]; then
        echo "文字统计 - 统计文字文件的行数、词数和字符数"
        echo ""
        echo "用法: text_stats -f FILE"
        echo ""
        echo "选项:"
        echo "  -f FILE    要统计的文件 (工作区里的相对路径)"
        echo "  -h         显示帮助"
        echo ""
        echo "示例:"
        echo "  text_stats -f notes.txt"
    else
        echo "Text statistics - count the lines, words and characters of a text file"
        echo ""
        echo "Usage: text_stats -f FILE"
        echo ""
        echo "Options:"
        echo "  -f FILE    the file to count (a path in the workspace)"
        echo "  -h         show this help"
        echo ""
        echo "Example:"
        echo "  text_stats -f notes.txt"
    fi
    exit 0
fi

say() {  # say ZH EN: one of them, in the language of LANG
    if [ -n "$zh" ]; then echo "$1"; else echo "$2"; fi
}

file=""
while getopts "f:h" opt; do
    case "$opt" in
        f) file="$OPTARG" ;;
        h) exec "$0" --help ;;
        *) say "错误: 未知选项" "error: unknown option" >&2; exit 1 ;;
    esac
done

if [ -z "$file" ]; then
    say "错误: 需要 -f FILE" "error: -f FILE is needed" >&2
    exit 1
fi
if [ ! -f "$file" ]; then
    say "错误: 找不到文件 $file" "error: no file $file" >&2
    exit 2
fi

# --- 业务逻辑 ---
# shellcheck disable=SC2046
set -- $(wc -l -w -m < "$file")
say "行数: $1" "lines: $1"
say "词数: $2" "words: $2"
say "字符数: $3" "characters: $3"
