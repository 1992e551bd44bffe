"""The exceptions capdoctor raises on purpose. The CLI maps them to one stderr line and an exit code."""

from __future__ import annotations


class CapdoctorError(Exception):
    """Base of capdoctor's own errors; the message is a complete, user-facing sentence."""


class UsageError(CapdoctorError):
    """Bad input from the user: arguments, config files, paths, log files. Exit code 2."""


class ConfigError(UsageError):
    """A malformed configuration file; the message names the file (and line where known)."""
