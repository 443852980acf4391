"""The wire protocol an app author meets (replies, views, actions, steps), from `aios_protocol.messages`."""

from aios_protocol.messages import *  # noqa: F403
from aios_protocol.messages import __all__ as __all__
