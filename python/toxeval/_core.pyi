"""Type stub for the native module ``toxeval._core`` (checked by ``mypy.stubtest``).

Private API: call the functions in ``toxeval.metrics`` instead. Arrays must already
be validated there (dtypes, shapes, finiteness).
"""

__version__: str

def resolve_threads(n_jobs: int | None = None) -> int: ...
