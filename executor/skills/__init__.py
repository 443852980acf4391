"""Skills (a folder with a SKILL.md and its scripts): finding, reading and installing them; the provider is `executor.providers.skills`."""
