#!/usr/bin/env python3
"""
温度转换技能：摄氏度与华氏度互转（Aibox 的 Python 技能模板写成）。
"""

import argparse
import sys


def main():
    parser = argparse.ArgumentParser(
        prog="temp_convert",
        description="温度转换工具 - 摄氏度与华氏度互转 (temperature converter: Celsius to Fahrenheit and back)",
        epilog="""
参数说明:
  -v, --value    要转换的温度数值
  -t, --to       目标单位: f 转成华氏/Fahrenheit (默认), c 转成摄氏/Celsius

使用示例:
  temp_convert -v 30            # 30 摄氏度是多少华氏度
  temp_convert -v 98.6 -t c     # 98.6 华氏度是多少摄氏度
""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-v", "--value", type=float, required=True, help="温度数值")
    parser.add_argument(
        "-t", "--to", choices=["f", "c"], default="f", help="目标单位 f 或 c (默认 f)"
    )
    args = parser.parse_args()

    if args.to == "f":
        if args.value < -273.15:
            print("错误: 低于绝对零度", file=sys.stderr)
            sys.exit(1)
        result = args.value * 9 / 5 + 32
        print(f"{args.value:g} °C = {result:.1f} °F")
    else:
        if args.value < -459.67:
            print("错误: 低于绝对零度", file=sys.stderr)
            sys.exit(1)
        result = (args.value - 32) * 5 / 9
        print(f"{args.value:g} °F = {result:.1f} °C")


if __name__ == "__main__":
    main()
