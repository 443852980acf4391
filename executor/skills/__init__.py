"""Skills (Aibox's format): finding, reading and installing them; the provider is `executor.providers.skills`."""
