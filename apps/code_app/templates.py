"""Ready-made Python programs the code app offers when no LLM is configured.

`match_template("写一个计算斐波那契数列的程序")` → the `fibonacci` template. Each
template is a small, self-contained script that runs without input and prints its
result, so "运行" shows something at once. `title` names it in Chinese, `title_en` in
English. `code` is the program once, with `$name` holes for what it says (its
docstring, what it prints); `words` fills each hole in Chinese and in English, so a
user reads the program in their language only (`code_in`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from string import Template as Holes

__all__ = ["TEMPLATES", "Template", "match_template"]


@dataclass(frozen=True)
class Template:
    key: str
    title: str
    title_en: str
    filename: str
    keywords: tuple[str, ...]
    code: str
    words: Mapping[str, tuple[str, str]]  # hole → (Chinese, English)

    def code_in(self, language: str) -> str:
        """The program in the user's language (`"zh-CN"` or `"en-US"`)."""
        which = 1 if language == "en-US" else 0
        return Holes(self.code).substitute({k: v[which] for k, v in self.words.items()})


TEMPLATES: tuple[Template, ...] = (
    Template(
        "fibonacci",
        "斐波那契数列",
        "Fibonacci numbers",
        "fibonacci.py",
        ("斐波那契", "斐波拉契", "fibonacci", "fib"),
        '''"""$doc"""


def fibonacci(n: int) -> list[int]:
    numbers = []
    a, b = 0, 1
    for _ in range(n):
        numbers.append(a)
        a, b = b, a + b
    return numbers


if __name__ == "__main__":
    print(fibonacci(15))
''',
        {"doc": ("打印斐波那契数列的前 n 项。", "Print the first n Fibonacci numbers.")},
    ),
    Template(
        "sort",
        "排序（冒泡排序与内置排序）",
        "Sorting (bubble sort and sorted())",
        "sort_list.py",
        ("排序", "冒泡", "sort", "bubble"),
        '''"""$doc"""


def bubble_sort(items: list[int]) -> list[int]:
    items = list(items)
    for end in range(len(items) - 1, 0, -1):
        for i in range(end):
            if items[i] > items[i + 1]:
                items[i], items[i + 1] = items[i + 1], items[i]
    return items


if __name__ == "__main__":
    data = [5, 3, 8, 1, 9, 2, 7]
    print("$says:", bubble_sort(data))
    print("$says2:", sorted(data))
''',
        {
            "doc": (
                "冒泡排序，并与内置 sorted() 对照。",
                "Bubble sort, checked against the built-in sorted().",
            ),
            "says": ("冒泡排序", "Bubble sort"),
            "says2": ("内置排序", "sorted()"),
        },
    ),
    Template(
        "primes",
        "质数（埃拉托斯特尼筛法）",
        "Prime numbers (sieve of Eratosthenes)",
        "primes.py",
        ("质数", "素数", "prime"),
        '''"""$doc"""


def primes_up_to(n: int) -> list[int]:
    sieve = [True] * (n + 1)
    sieve[:2] = [False, False]
    for i in range(2, int(n**0.5) + 1):
        if sieve[i]:
            sieve[i * i :: i] = [False] * len(sieve[i * i :: i])
    return [i for i, is_prime in enumerate(sieve) if is_prime]


if __name__ == "__main__":
    print(primes_up_to(100))
''',
        {
            "doc": (
                "用筛法找出 n 以内的质数。",
                "Find the prime numbers up to n with a sieve.",
            )
        },
    ),
    Template(
        "factorial",
        "阶乘",
        "Factorials",
        "factorial.py",
        ("阶乘", "factorial"),
        '''"""$doc"""


def factorial(n: int) -> int:
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result


if __name__ == "__main__":
    for n in range(1, 11):
        print(f"{n}! = {factorial(n)}")
''',
        {"doc": ("计算 1 到 10 的阶乘。", "Compute the factorials of 1 to 10.")},
    ),
    Template(
        "multiplication",
        "九九乘法表",
        "Multiplication table",
        "multiplication_table.py",
        ("乘法表", "九九", "multiplication"),
        '''"""$doc"""

for i in range(1, 10):
    print("  ".join(f"{j}x{i}={i * j:<2}" for j in range(1, i + 1)))
''',
        {"doc": ("打印九九乘法表。", "Print the multiplication table up to 9 × 9.")},
    ),
    Template(
        "word_count",
        "词频统计",
        "Word count",
        "word_count.py",
        ("词频", "统计单词", "单词统计", "word count", "count words", "统计"),
        '''"""$doc"""

from collections import Counter

TEXT = "the quick brown fox jumps over the lazy dog the fox"

if __name__ == "__main__":
    for word, count in Counter(TEXT.split()).most_common():
        print(f"{word}: {count}")
''',
        {
            "doc": (
                "统计一段文字里每个单词出现的次数。",
                "Count how often each word appears in a text.",
            )
        },
    ),
    Template(
        "temperature",
        "温度换算",
        "Temperature conversion",
        "temperature.py",
        ("温度", "摄氏", "华氏", "temperature", "celsius", "fahrenheit"),
        '''"""$doc"""


def c_to_f(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def f_to_c(fahrenheit: float) -> float:
    return (fahrenheit - 32) * 5 / 9


if __name__ == "__main__":
    for c in (-10, 0, 25, 37, 100):
        print(f"{c}°C = {c_to_f(c):.1f}°F")
''',
        {"doc": ("摄氏度与华氏度互相换算。", "Convert between Celsius and Fahrenheit.")},
    ),
    Template(
        "hello",
        "Hello World",
        "Hello World",
        "hello.py",
        ("hello", "你好", "问候", "入门"),
        '''"""$doc"""

if __name__ == "__main__":
    print("Hello, World!$says")
''',
        {
            "doc": ("最简单的 Python 程序。", "The simplest Python program."),
            "says": (" 你好，世界！", ""),
        },
    ),
)


def match_template(description: str) -> Template | None:
    """The template whose keywords appear in `description`, or None."""
    text = (description or "").lower()
    for template in TEMPLATES:
        if any(word in text for word in template.keywords):
            return template
    return None
