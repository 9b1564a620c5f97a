"""The tests' local S3 endpoints (the S3 test kit's ``local_s3`` and ``lying_s3``) and how to
reach them."""

from __future__ import annotations

from txcommit_store_s3.devkit.testkit import LYING_BUCKET, TEST_BUCKET, fresh_s3_url, s3_options

__all__ = ["LYING_BUCKET", "TEST_BUCKET", "fresh_s3_url", "s3_options"]
