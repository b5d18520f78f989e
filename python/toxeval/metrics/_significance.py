"""The result and warning types of the SciPy drop-ins: ``SignificanceResult`` (SciPy's
2-tuple ``(statistic, pvalue)`` with attribute access) and ``SmallSampleWarning``.

When SciPy is already loaded, ``SmallSampleWarning`` is emitted as a class bridged to
SciPy's (``pytest.warns`` and warning filters keep working); SciPy is never imported
here.
"""

from __future__ import annotations

from typing import Any, ClassVar

__all__ = ["SignificanceResult", "SmallSampleWarning", "pack_result"]


class SmallSampleWarning(RuntimeWarning):
    """A sample is too small for the statistic (SciPy's class of the same name)."""


class SignificanceResult(tuple):  # type: ignore[type-arg]
    """Result of a test: a 2-tuple ``(statistic, pvalue)`` with attribute access.

    Behaves like SciPy's ``SignificanceResult``: unpackable, indexable, with
    ``.statistic`` and ``.pvalue`` properties; extra attributes (``.correlation``
    for ``kendalltau``) live outside the tuple and are not part of ``repr``.
    """

    _fields = ("statistic", "pvalue")
    _extra_fields: tuple[str, ...] = ()
    _field_defaults: ClassVar[dict[str, Any]] = {}
    _replace = None
    # Set by kendalltau (an attribute outside the tuple, as in SciPy).
    correlation: Any

    def __new__(cls, statistic: Any, pvalue: Any, **extra_fields: Any) -> SignificanceResult:
        return tuple.__new__(cls, (statistic, pvalue))

    def __init__(self, statistic: Any, pvalue: Any, **extra_fields: Any) -> None:
        for key, val in extra_fields.items():
            if key not in self._extra_fields:
                raise TypeError(f"unexpected keyword argument '{key}'")
            self.__dict__[key] = val

    def __setattr__(self, key: str, val: Any) -> None:
        if key in self._fields:
            raise AttributeError(
                f"can't set attribute {key!r} of class {self.__class__.__name__!r}"
            )
        self.__dict__[key] = val

    @property
    def statistic(self) -> Any:
        return self[0]

    @property
    def pvalue(self) -> Any:
        return self[1]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(statistic={self[0]!r}, pvalue={self[1]!r})"

    def _asdict(self) -> dict[str, Any]:
        out = dict(zip(self._fields, self, strict=True))
        out.update(self.__dict__)
        return out

    def __getnewargs_ex__(self) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tuple(self), self.__dict__


def pack_result(statistic: Any, pvalue: Any, correlation: Any) -> SignificanceResult:
    res = SignificanceResult(statistic, pvalue)
    res.correlation = correlation
    return res
