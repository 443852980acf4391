"""Voice in and out: recorded speech to an instruction, replies spoken.

Input: any WAV is converted for the recognisers, a speech-to-text engine (offline
with a grammar built from the apps, or an online endpoint) turns it into text, and
the text enters the instruction path. Output: a speaker that never blocks its
caller says replies and notices, and can render speech as a WAV for a page.
"""
