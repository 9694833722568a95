"""Gunicorn worker class shared by the benchmark peers.

It is `uvicorn_worker.UvicornWorker` from the `uvicorn-worker` package (the replacement for the
deprecated `uvicorn.workers.UvicornWorker`), with uvicorn's per-request access log switched off
outright rather than only left without a handler. loop/http stay "auto", so uvloop and httptools
are used (both are pinned in the requirements files).
"""

from uvicorn_worker import UvicornWorker


class BenchUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {"loop": "auto", "http": "auto", "access_log": False}
