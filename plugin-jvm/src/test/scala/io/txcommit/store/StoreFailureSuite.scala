package io.txcommit.store

import java.io.{IOException, InterruptedIOException}

import org.scalatest.funsuite.AnyFunSuite

class StoreFailureSuite extends AnyFunSuite {
  test("a failure caused by an interrupt is an InterruptedIOException, any other a plain IOException") {
    val interrupted = StoreFailure("txcommit: GET k failed", new RuntimeException(new InterruptedException("stop")))
    assert(interrupted.isInstanceOf[InterruptedIOException])
    assert(interrupted.getMessage == "txcommit: GET k failed" && interrupted.getCause != null)
    val refused = StoreFailure("txcommit: GET k failed", new IOException("connection refused"))
    assert(!refused.isInstanceOf[InterruptedIOException])
    assert(StoreFailure("m", new IOException("x"), interrupted = true).isInstanceOf[InterruptedIOException])
  }
}
