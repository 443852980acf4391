#!/bin/bash
# 用法通过 --help 输出

if [ "$1" = "--help" ]; then
    echo "文本统计 - 统计文件的行数、词数和字符数 (text statistics: count lines, words and characters of a file)"
    echo ""
    echo "用法: text_stats -f FILE"
    echo ""
    echo "选项:"
    echo "  -f FILE    要统计的文件 (工作区里的相对路径)"
    echo "  -h         显示帮助"
    echo ""
    echo "示例:"
    echo "  text_stats -f notes.txt"
    exit 0
fi

file=""
while getopts "f:h" opt; do
    case "$opt" in
        f) file="$OPTARG" ;;
        h) exec "$0" --help ;;
        *) echo "错误: 未知选项" >&2; exit 1 ;;
    esac
done

if [ -z "$file" ]; then
    echo "错误: 需要 -f FILE" >&2
    exit 1
fi
if [ ! -f "$file" ]; then
    echo "错误: 找不到文件 $file" >&2
    exit 2
fi

# --- 业务逻辑 ---
# shellcheck disable=SC2046
set -- $(wc -l -w -m < "$file")
echo "lines: $1"
echo "words: $2"
echo "characters: $3"
