"""The ``s3`` and ``s3-multipart`` stores of txcommit (Amazon S3 and S3-compatible stores), as
their folder ``adapters/s3/`` ships them in the txcommit distribution: their descriptors
(:mod:`txcommit_store_s3.plugin`) and their Python mirror (:mod:`txcommit_store_s3.store`).
"""
