#!/usr/bin/env python3
"""
Temperature conversion skill: Celsius to Fahrenheit and back (written from Aibox's
Python skill template). It answers in the language of `LANG`: Chinese for zh_*,
English otherwise.
"""

import argparse
import os
import sys

TEXTS = {
    "zh": {
        "description": "温度转换 - 摄氏度与华氏度互转",
        "epilog": """
参数说明:
  -v, --value    要转换的温度数值
  -t, --to       目标单位: f 转成华氏 (默认), c 转成摄氏

使用示例:
  temp_convert -v 30            # 30 摄氏度是多少华氏度
  temp_convert -v 98.6 -t c     # 98.6 华氏度是多少摄氏度
""",
        "value": "温度数值",
        "to": "目标单位 f 或 c (默认 f)",
        "below_zero": "错误: 低于绝对零度",
    },
    "en": {
        "description": "Temperature converter - Celsius to Fahrenheit and back",
        "epilog": """
Options:
  -v, --value    the number of degrees to convert
  -t, --to       the unit to convert to: f for Fahrenheit (default), c for Celsius

Examples:
  temp_convert -v 30            # 30 degrees Celsius in Fahrenheit
  temp_convert -v 98.6 -t c     # 98.6 degrees Fahrenheit in Celsius
""",
        "value": "the number of degrees",
        "to": "the unit to convert to, f or c (default f)",
        "below_zero": "error: below absolute zero",
    },
}


def texts():
    return TEXTS["zh" if os.environ.get("LANG", "").startswith("zh") else "en"]


def main():
    said = texts()
    parser = argparse.ArgumentParser(
        prog="temp_convert",
        description=said["description"],
        epilog=said["epilog"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--value", type=float, required=True, help=said["value"])
    parser.add_argument("-t", "--to", choices=["f", "c"], default="f", help=said["to"])
    args = parser.parse_args()

    if args.to == "f":
        if args.value < -273.15:
            print(said["below_zero"], file=sys.stderr)
            sys.exit(1)
        result = args.value * 9 / 5 + 32
        print(f"{args.value:g} °C = {result:.1f} °F")
    else:
        if args.value < -459.67:
            print(said["below_zero"], file=sys.stderr)
            sys.exit(1)
        result = (args.value - 32) * 5 / 9
        print(f"{args.value:g} °F = {result:.1f} °C")


if __name__ == "__main__":
    main()
