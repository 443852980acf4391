"""The ten atomic tools, one module per tool family, their catalog, and the
call back into an app for its own `@tool` methods (`app_tools`): each tool takes the
calling app's `ToolContext` and its arguments, already checked against the schema
`catalog` lists, and returns a result or raises an `AiosError` with a stable code.
"""
