"""The product's top-level packages, bottom first (what the whole-tree tests walk)."""

PRODUCT_PACKAGES = (
    "aios_protocol",
    "aios_runtime",
    "aios_sdk",
    "controller",
    "executor",
    "voice",
    "scheduler",
    "openai_entry",
    "mcp_server",
    "desktop",
    "bench",
    "aios",
)
