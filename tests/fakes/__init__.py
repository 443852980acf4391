"""Fakes of what lies outside this machine (model servers, web APIs)."""
