"""The tests' local S3 endpoints (conftest: ``local_s3``, ``lying_s3``) and how to reach them."""

from __future__ import annotations

import uuid
from typing import Any

from txcommit.testing.local_s3 import DUMMY_KEY, DUMMY_SECRET, LocalS3

#: The bucket of the shared honest endpoint, and of the endpoint that ignores If-None-Match.
TEST_BUCKET = "txcommit-tests"
LYING_BUCKET = "txcommit-liar"


def s3_options(s3: LocalS3, **extra: Any) -> dict[str, Any]:
    """Options of an S3 store (``open_store``, ``S3Store``) on the local endpoint ``s3``."""
    options: dict[str, Any] = {
        "endpoint": s3.endpoint,
        "region": "us-east-1",
        "access_key_id": DUMMY_KEY,
        "secret_access_key": DUMMY_SECRET,
        "max_retries": 1,
    }
    options.update(extra)
    return options


def fresh_s3_url(scheme: str = "s3", bucket: str = TEST_BUCKET) -> str:
    """A new, empty prefix in ``bucket``."""
    return f"{scheme}://{bucket}/adapters-py/t-{uuid.uuid4().hex[:12]}"
