"""Starts 技能 (the manifest's `entry`): `python main.py` in this folder."""

from aios_sdk import serve_package

if __name__ == "__main__":
    serve_package(__file__)
