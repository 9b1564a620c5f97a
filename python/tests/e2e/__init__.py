"""The end-to-end tests (real Connect servers). A package, so that its modules may share a name
with unit's."""
