"""The error tree an app author meets (every `AiosError` and its code), from `aios_protocol.errors`,
and the sentence a person reads for an error, in their language (`user_message_of`)."""

from aios_protocol.errors import *  # noqa: F403
from aios_protocol.errors import __all__ as _errors
from aios_protocol.strings import user_message, user_message_of

__all__ = [*_errors, "user_message", "user_message_of"]
