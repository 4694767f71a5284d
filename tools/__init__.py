"""Maintenance scripts of the course repository (not part of the installed labutil package)."""
