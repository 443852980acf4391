"""音乐应用: search a public catalogue, play, download, and keep a local library.

`agent.MusicAgent` hands every call to `flows.MusicFlows`, which plans the steps
(`catalogue` builds the search requests and reads the answers, `download` saves a song
into the workspace)
and builds the views (`views`); `intent` reads what the user said and `wish` turns
a free-form wish into a search through the LLM. Settings (`config.json`
`app_settings.music_app`): `api_base` (an iTunes-Search-shaped catalogue, default
Apple's), `download_ext`, `country`, `search_limit`.
"""

from .agent import MusicAgent

__all__ = ["MusicAgent"]
