"""The OpenAI-compatible conversation entry (`/v1`): what a chat client's request becomes
in Triton. `wire` holds OpenAI's request and response shapes, `turn` turns one request
into a routed instruction (or the answer to a pending confirmation) in the session of
that user and conversation, `markdown` writes an app's view as readable Markdown, and
`stream` sends a turn as `chat.completion.chunk` Server-Sent Events. The HTTP routes
are `openai_entry.api`.
"""
