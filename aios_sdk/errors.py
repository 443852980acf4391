"""The error tree an app author meets (every `AiosError` and its code), from `aios_protocol.errors`."""

from aios_protocol.errors import *  # noqa: F403
from aios_protocol.errors import __all__ as __all__
