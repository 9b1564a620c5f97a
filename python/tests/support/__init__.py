"""Helpers of the test suites (not tests): local S3 settings, Connect servers, the standalone
cluster, and tables as the tests write and inspect them. Imported as ``support.<module>``."""
