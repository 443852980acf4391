"""The controller's use of an OpenAI-compatible model.

One client (timeouts, retries, JSON mode, errors translated into the `LLMError`
family), app planning through tool calling, and the session's `history_summary`.
The key lives only here: apps reach the model through the controller's API.
"""
