"""The unit tests (no JVM). A package, so that its modules may share a name with e2e's."""
