"""Intent routing: which app handles which part of an instruction.

The deterministic router splits a compound instruction into parts, normalises
their text into match units and scores each part against every app's manifest,
without a model; the LLM router is consulted behind it only when that plan is not
confident. Both answer a `RoutePlan` of tasks with dependencies.
"""
